//! A table keyed by session id, cut into parts that each have a lock of its own. An action
//! takes its session's entries several times; with one lock for all sessions, the runtime's
//! threads queued on it under load (docs/performance.md, "The relay").

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// How many parts.
const PARTS: usize = 16;

pub type Part<V> = HashMap<String, V>;

pub struct BySession<V> {
    parts: [Mutex<Part<V>>; PARTS],
}

impl<V> Default for BySession<V> {
    fn default() -> Self {
        Self {
            parts: std::array::from_fn(|_| Mutex::default()),
        }
    }
}

fn lock<V>(part: &Mutex<Part<V>>) -> MutexGuard<'_, Part<V>> {
    part.lock().unwrap_or_else(|p| p.into_inner())
}

impl<V> BySession<V> {
    /// The part that holds `session_id`, locked. Chosen by FNV-1a of the id's bytes: session
    /// ids are the orchestrators', but at worst they all land in one part, one lock as before.
    pub fn part(&self, session_id: &str) -> MutexGuard<'_, Part<V>> {
        let hash = session_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        lock(&self.parts[(hash % PARTS as u64) as usize])
    }

    /// Every part in turn, each locked while `visit` runs.
    pub fn each(&self, mut visit: impl FnMut(&mut Part<V>)) {
        for part in &self.parts {
            visit(&mut lock(part));
        }
    }

    /// Every part locked at once, for a look at the whole table.
    pub fn all(&self) -> Vec<MutexGuard<'_, Part<V>>> {
        self.parts.iter().map(lock).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_always_finds_its_part_and_ids_spread_over_parts() {
        let table = BySession::<u32>::default();
        for n in 0..1000 {
            table.part(&format!("load-{n}")).insert(format!("load-{n}"), n);
        }
        for n in 0..1000 {
            assert_eq!(
                table.part(&format!("load-{n}")).get(&format!("load-{n}")),
                Some(&n)
            );
        }
        let sizes: Vec<usize> = table.all().iter().map(|part| part.len()).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 1000);
        assert!(sizes.iter().all(|&n| n > 20), "{sizes:?}");
    }
}
