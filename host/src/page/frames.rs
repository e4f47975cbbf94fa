//! The table of a tab's cross-origin frames (out-of-process iframes, docs/protocol.md §16).
//! Such a frame is a CDP target of its own: the tab's preparation asks the browser to attach
//! each as it comes ([`auto_attach`]), and the tab's watcher keeps here the session each was
//! attached with, what the host learnt of it (the handle on its element in the page around
//! it, the in-page library's handle in its document) and which refs its document handed out.
//! What crosses into a frame is `framed.rs`.

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

use chromiumoxide::cdp::browser_protocol::target::{
    EventAttachedToTarget, EventDetachedFromTarget, FilterEntry, SetAutoAttachParams, TargetFilter,
};

/// `Target.setAutoAttach` for a tab: its iframes' targets only (not its workers), each held
/// before its document runs until the host has prepared it (`tabs.rs`), each reached through a
/// session on the tab's connection.
pub fn auto_attach() -> SetAutoAttachParams {
    let iframes = FilterEntry {
        r#type: Some("iframe".into()),
        exclude: Some(false),
    };
    let mut params = SetAutoAttachParams::new(true, true);
    params.flatten = Some(true);
    params.filter = Some(TargetFilter::new(vec![iframes]));
    params
}

/// How many ref ranges the table remembers: a frame's refs older than the last this many
/// snapshots and scans of framed pages are taken for the page's own (and found stale there).
const KEPT_RANGES: usize = 256;

#[derive(Default)]
pub struct Frames {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// By frame id (which is the frame's target id).
    frames: HashMap<String, Frame>,
    /// The refs each frame's document handed out, oldest first.
    refs: VecDeque<(Range<u64>, String)>,
    /// How many frames were ever attached: a change says a frame came.
    attached: u64,
}

#[derive(Debug, Clone, Default)]
struct Frame {
    session: String,
    /// The handle (a `Runtime` object id) on the frame's element in the tab's page, once the
    /// element is marked (`framed.rs`).
    owner: Option<String>,
    /// The in-page library in the frame's document.
    library: Option<crate::page::library::Installed>,
}

impl Frames {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a target the tab's session attached: an iframe's is a frame of the tab.
    pub fn attach(&self, attached: &EventAttachedToTarget) {
        if attached.target_info.r#type != "iframe" {
            return;
        }
        let frame = Frame {
            session: attached.session_id.as_ref().to_owned(),
            ..Frame::default()
        };
        let mut inner = self.lock();
        inner
            .frames
            .insert(attached.target_info.target_id.as_ref().to_owned(), frame);
        inner.attached += 1;
    }

    /// Takes a session of the tab's that ended: its frame is gone.
    pub fn detach(&self, detached: &EventDetachedFromTarget) {
        let session: &str = detached.session_id.as_ref();
        self.lock().frames.retain(|_, f| f.session != session);
    }

    /// How many frames were ever attached to the tab.
    pub fn attached(&self) -> u64 {
        self.lock().attached
    }

    /// Whether the page has any cross-origin frame.
    pub fn any(&self) -> bool {
        !self.lock().frames.is_empty()
    }

    /// The ids of the tab's cross-origin frames.
    pub fn ids(&self) -> Vec<String> {
        self.lock().frames.keys().cloned().collect()
    }

    /// The frames whose elements are not yet marked.
    pub fn unmarked(&self) -> Vec<String> {
        let inner = self.lock();
        inner
            .frames
            .iter()
            .filter(|(_, f)| f.owner.is_none())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The session frame `id` is reached through.
    pub fn session(&self, id: &str) -> Option<String> {
        self.lock().frames.get(id).map(|f| f.session.clone())
    }

    /// The handle on frame `id`'s element in the tab's page.
    pub fn owner(&self, id: &str) -> Option<String> {
        self.lock().frames.get(id).and_then(|f| f.owner.clone())
    }

    pub fn set_owner(&self, id: &str, owner: String) {
        if let Some(frame) = self.lock().frames.get_mut(id) {
            frame.owner = Some(owner);
        }
    }

    pub fn library(&self, id: &str) -> Option<crate::page::library::Installed> {
        self.lock().frames.get(id).and_then(|f| f.library.clone())
    }

    pub fn set_library(&self, id: &str, library: Option<crate::page::library::Installed>) {
        if let Some(frame) = self.lock().frames.get_mut(id) {
            frame.library = library;
        }
    }

    /// Frame `id`'s document handed out the ref numbers `refs`.
    pub fn handed(&self, id: &str, refs: Range<u64>) {
        if refs.is_empty() {
            return;
        }
        let mut inner = self.lock();
        if inner.refs.len() == KEPT_RANGES {
            inner.refs.pop_front();
        }
        inner.refs.push_back((refs, id.to_owned()));
    }

    /// The frame whose document handed out ref number `n`, if a frame's did.
    pub fn holding(&self, n: u64) -> Option<String> {
        let inner = self.lock();
        inner
            .refs
            .iter()
            .rev()
            .find(|(refs, _)| refs.contains(&n))
            .map(|(_, id)| id.clone())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cdp::typed;

    /// `Target.attachedToTarget` as Chromium sends it.
    fn attached(id: &str, session: &str, kind: &str) -> EventAttachedToTarget {
        let info = json!({ "targetId": id, "type": kind, "title": "", "url": "http://b/", "attached": true, "canAccessOpener": false });
        let params = json!({ "sessionId": session, "targetInfo": info, "waitingForDebugger": true });
        typed::event(EventAttachedToTarget::IDENTIFIER, &params).expect("Chromium's shape")
    }

    #[test]
    fn frames_come_and_go_with_their_sessions() {
        let frames = Frames::default();
        frames.attach(&attached("F1", "S1", "iframe"));
        frames.attach(&attached("W1", "S2", "worker"));
        assert_eq!(frames.session("F1").as_deref(), Some("S1"));
        assert_eq!(frames.session("W1"), None, "a worker is not a frame");
        assert_eq!(frames.unmarked(), vec!["F1".to_owned()]);
        frames.set_owner("F1", "owner".into());
        assert!(frames.unmarked().is_empty());
        let detached = json!({ "sessionId": "S1", "targetId": "F1" });
        frames
            .detach(&typed::event(EventDetachedFromTarget::IDENTIFIER, &detached).expect("Chromium's shape"));
        assert!(!frames.any());
    }

    #[test]
    fn a_ref_is_found_in_the_frame_that_handed_it_out() {
        let frames = Frames::default();
        frames.handed("F1", 10..14);
        frames.handed("F2", 20..21);
        frames.handed("F3", 30..30);
        assert_eq!(frames.holding(13).as_deref(), Some("F1"));
        assert_eq!(frames.holding(20).as_deref(), Some("F2"));
        assert_eq!(frames.holding(14), None, "the page's own");
        assert_eq!(frames.holding(30), None, "an empty range holds nothing");
        for n in 0..KEPT_RANGES as u64 {
            frames.handed("F4", 100 + n..101 + n);
        }
        assert_eq!(frames.holding(10), None, "the oldest ranges are let go");
        assert_eq!(frames.holding(100).as_deref(), Some("F4"));
    }
}
