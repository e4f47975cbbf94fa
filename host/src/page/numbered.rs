//! What a tab keeps of its page's output between actions (docs/protocol.md §17): the latest
//! 1000 entries, each numbered from 1 (`seq`) so a listing goes on where the last one ended,
//! losing and repeating nothing the log still held. The console (`console.rs`) and the
//! requests (`network.rs`) are two of these. What a page writes into them is clipped
//! ([`clipped`]): a page that logs megabytes a line grows them by a bounded amount.

use std::collections::VecDeque;

/// How many entries a log keeps: the latest.
pub const KEPT: usize = 1000;

/// An entry that carries its number.
pub trait Numbered {
    fn seq(&self) -> u64;
    fn number(&mut self, seq: u64);
}

pub struct Log<T> {
    entries: VecDeque<T>,
    /// The seq of the last entry written (0: none yet).
    last: u64,
}

impl<T> Default for Log<T> {
    fn default() -> Self {
        Self {
            entries: VecDeque::new(),
            last: 0,
        }
    }
}

/// A listing's walk: what it listed, the seq to go on from, and how many entries after its
/// `since` the log had already let go.
pub struct Walk<'a, T> {
    pub listed: Vec<&'a T>,
    pub next: u64,
    pub dropped: u64,
}

impl<T: Numbered> Log<T> {
    /// Keeps an entry under the next number, letting the oldest go past [`KEPT`].
    pub fn push(&mut self, mut entry: T) {
        self.last += 1;
        entry.number(self.last);
        self.entries.push_back(entry);
        if self.entries.len() > KEPT {
            self.entries.pop_front();
        }
    }

    /// The seq of the last entry written (0: none yet).
    pub fn last(&self) -> u64 {
        self.last
    }

    /// The entries after `seq`, oldest first.
    pub fn after(&self, seq: u64) -> impl Iterator<Item = &T> {
        self.entries.iter().filter(move |e| e.seq() > seq)
    }

    /// The latest entry `is` picks, to change.
    pub fn latest_mut(&mut self, is: impl Fn(&T) -> bool) -> Option<&mut T> {
        self.entries.iter_mut().rev().find(|e| is(e))
    }

    /// The entries after `since` that `wanted` keeps, oldest first, at most `limit`; `next` is
    /// the last seq looked at, so a walk past entries nobody wanted moves on.
    pub fn walk(&self, since: Option<u64>, limit: usize, wanted: impl Fn(&T) -> bool) -> Walk<'_, T> {
        let since = since.unwrap_or(0);
        let first_kept = self.entries.front().map_or(self.last + 1, Numbered::seq);
        let mut walk = Walk {
            listed: Vec::new(),
            next: since,
            dropped: first_kept.saturating_sub(since.saturating_add(1)),
        };
        for entry in self.after(since) {
            if walk.listed.len() == limit {
                break;
            }
            walk.next = entry.seq();
            if wanted(entry) {
                walk.listed.push(entry);
            }
        }
        walk
    }
}

/// `text` cut to at most `max` bytes, at a character's edge, saying so when it was cut.
pub fn clipped(text: &str, max: usize) -> String {
    match cut(text, max) {
        kept if kept.len() == text.len() => kept.to_owned(),
        kept => format!("{kept}… ({} bytes in all)", text.len()),
    }
}

/// The first `max` bytes of `text` at most, ending at a character's edge.
pub fn cut(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Line(u64);

    impl Numbered for Line {
        fn seq(&self) -> u64 {
            self.0
        }
        fn number(&mut self, seq: u64) {
            self.0 = seq;
        }
    }

    #[test]
    fn a_walk_goes_on_where_it_ended_and_counts_what_was_let_go() {
        let mut log = Log::default();
        for _ in 0..(KEPT + 5) {
            log.push(Line(0));
        }
        let first = log.walk(None, 2, |_| true);
        assert_eq!(first.dropped, 5, "the five oldest were let go");
        assert_eq!(first.listed.iter().map(|l| l.0).collect::<Vec<_>>(), [6, 7]);
        let next = log.walk(Some(first.next), 2, |_| true);
        assert_eq!((next.dropped, next.listed[0].0), (0, 8));
        assert_eq!(
            log.walk(None, 10, |_| false).next,
            (KEPT + 5) as u64,
            "a walk past nothing wanted moves on"
        );
    }

    #[test]
    fn text_is_clipped_at_a_characters_edge() {
        assert_eq!(clipped("short", 10), "short");
        assert_eq!(clipped("ééé", 3), "é… (6 bytes in all)");
    }
}
