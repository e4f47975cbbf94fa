//! Opening a session's tab on a loaded page, against what a raw CDP client needs for the same:
//! `session_start` then `browser_wait_for_loaded` (on the host's engine, and through the relay
//! as an orchestrator calls them), and raw CDP's `Target.createTarget` in a window of its own,
//! attach, `Page.enable`, `Page.navigate` and its load event. Each run opens a fresh tab and
//! closes it after the timing; the three alternate, so the machine's drift falls on all alike.
//!
//!     cargo bench -p tether-tests --bench session_start
//!
//! Figures go to docs/performance.md.

use tether_tests::bench::{ms, open_loaded_tab, stats, tether_open, RUNS};
use tether_tests::Harness;

const WARMUP: usize = 3;

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        let relay = tether_tests::bench::relayed_worker(&h).await;
        let url = h.url("/fixtures/article.html");
        let (mut raw, mut direct, mut relayed) = (Vec::new(), Vec::new(), Vec::new());
        for run in 0..WARMUP + RUNS {
            let r = open_loaded_tab(h.worker().transport.connection(), &url).await;
            let d = tether_open(|action, params| h.ok("direct", action, params), &url).await;
            let t = tether_open(|action, params| relay.ok("relayed", action, params), &url).await;
            if run >= WARMUP {
                raw.push(r);
                direct.push(d);
                relayed.push(t);
            }
        }
        let (raw, direct, relayed) = (stats(raw), stats(direct), stats(relayed));
        println!(
            "{:<44} {:>9} {:>9} {:>8}",
            "open a tab on a loaded page (ms)", "p50", "p90", "/ raw"
        );
        for (name, s) in [
            ("raw CDP: createTarget + navigate + load", raw),
            ("session_start + wait_for_loaded, on the host", direct),
            ("the same through the relay", relayed),
        ] {
            println!(
                "{name:<44} {:>9.2} {:>9.2} {:>7.2}x",
                ms(s.median),
                ms(s.p90),
                ms(s.median) / ms(raw.median)
            );
        }
    });
}
