//! What every benchmark measures with: a timed piece of work, and the median of samples.

use std::future::Future;
use std::time::{Duration, Instant};

/// How long `work` takes.
pub async fn timed<F: Future>(work: F) -> Duration {
    let start = Instant::now();
    work.await;
    start.elapsed()
}

/// The median of `samples`, in milliseconds.
pub fn median_ms(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1000.0
}
