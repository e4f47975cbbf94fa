//! What the host keeps for one prepared tab until the debugger leaves it: the dialogs it
//! showed, whether its document loaded, the in-page library's handle, its console, requests,
//! downloads and frames, and what its snapshots handed out. A page reads it; `tabs.rs` makes
//! it when it prepares the tab and keeps it from the tab's events.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use tokio::sync::{mpsc, oneshot};

use crate::page::console::ConsoleLog;
use crate::page::dialogs::DialogLog;
use crate::page::downloads::DownloadLog;
use crate::page::frames::Frames;
use crate::page::live_screen::Previous;
use crate::page::loading::Loading;
use crate::page::network::NetworkLog;

/// What the host keeps for one prepared tab.
#[derive(Default)]
pub struct TabState {
    /// Whether its console and requests are not kept (`--no-page-log`).
    no_page_log: bool,
    pub dialogs: DialogLog,
    pub loading: Loading,
    /// The in-page library in the tab's current document.
    library: Mutex<Option<crate::page::library::Installed>>,
    screens: Mutex<Screens>,
    /// Whether a plain capture of the tab's viewport once showed more than the page's content
    /// (a scrollbar strip, a pinch zoom): its viewport shots are clipped from then on.
    clip_viewport: std::sync::atomic::AtomicBool,
    /// The mouse buttons `browser_mouse` left held (their bits), so its moves carry them.
    held_buttons: std::sync::atomic::AtomicU32,
    /// The device metrics `browser_resize` set on the tab (CDP's
    /// `Emulation.setDeviceMetricsOverride` params), for what overrides them for a moment (a
    /// full-page screenshot) to put back.
    device_metrics: Mutex<Option<SetDeviceMetricsOverrideParams>>,
    /// What the page wrote to its console, and the browser's messages about it.
    pub console: ConsoleLog,
    /// The requests the page made.
    pub network: NetworkLog,
    /// The files the page downloaded.
    pub downloads: Arc<DownloadLog>,
    /// The page's cross-origin frames.
    pub frames: Frames,
    /// How many times the page's main frame navigated since the tab was prepared, and to where
    /// last.
    navigations: Mutex<(u64, String)>,
    /// Asks the tab's watcher to take every event already received before answering.
    catch_up: std::sync::OnceLock<mpsc::UnboundedSender<oneshot::Sender<()>>>,
}

/// What the host remembers of a tab's snapshots and refs.
#[derive(Default)]
struct Screens {
    /// The lowest ref number the tab's page may still hand out.
    ref_floor: u64,
    /// How many snapshots the tab has had.
    version: u64,
    /// Each session's previous snapshot of the tab (for `recent`), shared with the snapshot
    /// that compares against it rather than copied.
    previous: HashMap<String, Arc<Previous>>,
}

impl TabState {
    /// A tab's state, and where its watcher takes the asks of [`TabState::caught_up`].
    pub fn new(page_log: bool) -> (Arc<Self>, mpsc::UnboundedReceiver<oneshot::Sender<()>>) {
        let state = Arc::new(Self {
            no_page_log: !page_log,
            ..Self::default()
        });
        let (ask, catch_ups) = mpsc::unbounded_channel();
        let _ = state.catch_up.set(ask);
        (state, catch_ups)
    }

    /// Whether its console and requests are kept (not `--no-page-log`).
    pub fn keeps_page_log(&self) -> bool {
        !self.no_page_log
    }

    pub fn library(&self) -> Option<crate::page::library::Installed> {
        self.library.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn set_library(&self, installed: Option<crate::page::library::Installed>) {
        *self.library.lock().unwrap_or_else(|p| p.into_inner()) = installed;
    }

    pub fn clips_viewport(&self) -> bool {
        self.clip_viewport.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn clip_viewport_from_now_on(&self) {
        self.clip_viewport
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Resolves once the tab's watcher has taken every event the browser sent before now, so
    /// what the tab keeps (its console) is as the page left it. A CDP answer comes after the
    /// events sent before it: ask one first, then this.
    pub async fn caught_up(&self) {
        let (done, taken) = oneshot::channel();
        if self.catch_up.get().is_some_and(|ask| ask.send(done).is_ok()) {
            // A watcher that has ended (the tab left) takes nothing more: nothing to wait for.
            let _ = taken.await;
        }
    }

    pub fn navigations(&self) -> (u64, String) {
        self.navigations.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn navigated(&self, url: &str) {
        let mut navigations = self.navigations.lock().unwrap_or_else(|p| p.into_inner());
        *navigations = (navigations.0 + 1, url.to_owned());
    }

    pub fn device_metrics(&self) -> Option<SetDeviceMetricsOverrideParams> {
        self.device_metrics
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set_device_metrics(&self, metrics: Option<SetDeviceMetricsOverrideParams>) {
        *self.device_metrics.lock().unwrap_or_else(|p| p.into_inner()) = metrics;
    }

    pub fn held_buttons(&self) -> u32 {
        self.held_buttons.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn set_held_buttons(&self, buttons: u32) {
        self.held_buttons
            .store(buttons, std::sync::atomic::Ordering::Relaxed);
    }

    fn screens(&self) -> MutexGuard<'_, Screens> {
        self.screens.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn ref_floor(&self) -> u64 {
        self.screens().ref_floor
    }

    /// Keeps the page's next ref number, when it is past the floor.
    pub fn raise_ref_floor(&self, next: u64) {
        let mut screens = self.screens();
        screens.ref_floor = screens.ref_floor.max(next);
    }

    /// Counts one more snapshot of the tab: its version.
    pub fn next_version(&self) -> u64 {
        let mut screens = self.screens();
        screens.version += 1;
        screens.version
    }

    /// The session's previous snapshot of the tab.
    pub fn previous_snapshot(&self, session: &str) -> Option<Arc<Previous>> {
        self.screens().previous.get(session).cloned()
    }

    /// Keeps `page` as the session's previous snapshot of the tab.
    pub fn keep_snapshot(&self, session: &str, page: Previous) {
        self.screens().previous.insert(session.to_owned(), page.into());
    }
}
