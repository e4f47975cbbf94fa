//! The live view of a session's tab (docs/protocol.md §18): while someone watches, the tab's
//! screencast (`Page.startScreencast`), each frame handed on, and, during a handoff, a
//! person's clicks, wheel and keys passed to the tab.
//!
//! Frames are JPEG at most [`MAX_WIDTH`] x [`MAX_HEIGHT`] pixels, and at most one per
//! [`FRAME_EVERY`]: a frame is acknowledged only when the next may come, and the browser sends
//! none before that, nor while nothing on the page changes. A capture of the page as it is
//! starts the view and ends each burst of frames (see `stream`). Nobody watching, nothing
//! runs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType,
    MouseButton,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, EventScreencastFrame, GetLayoutMetricsParams,
    ScreencastFrameAckParams, StartScreencastFormat, StartScreencastParams, StopScreencastParams, Viewport,
};
use tether_protocol::actions::TabId;
use tether_protocol::person::{HandoffInput, LiveFrame, PersonButton, PersonInput, Press};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::browser::handoffs::Handoffs;
use crate::cdp::{typed, BrowserEvent, CdpError, Transport};

/// How long a person's input waits for the handoff it names to begin here: the relay shows
/// the handoff (and passes input) once it sent the action, a moment before the host waits.
const HANDOFF_BEGINS_WITHIN: Duration = Duration::from_secs(5);

/// Eight frames a second at most.
pub const FRAME_EVERY: Duration = Duration::from_millis(125);
pub const MAX_WIDTH: u32 = 960;
pub const MAX_HEIGHT: u32 = 720;
const QUALITY: u32 = 60;
/// The browser captures one paint in this many: a page animating at 60 frames a second is
/// captured 15 times, of which 8 are sent (every paint: Chromium spent 5.5 s of CPU more per
/// 10 s watched, docs/performance.md). The capture once a burst settles shows the last paint.
const EVERY_NTH_PAINT: u32 = 4;
/// How soon a watched page that went still is looked at again, then twice as late each time
/// it has not changed, up to `STILL_LOOK_AT_MOST`: a change the screencast did not send shows
/// within a second after the page was busy, within 8 s on a page long still, and a still page
/// costs a capture every 8 s (tests/handoff.rs
/// `a_watched_page_that_changes_once_is_shown_as_it_changed` failed 2 runs in 6, then 5 in 6, without it).
const STILL_LOOK: Duration = Duration::from_secs(1);
const STILL_LOOK_AT_MOST: Duration = Duration::from_secs(8);

/// Where a watched tab's frames go (the link to the relay); false once nothing takes them.
pub type FrameSink = Arc<dyn Fn(LiveFrame) -> bool + Send + Sync>;

struct Watched {
    tab: TabId,
    task: JoinHandle<()>,
}

/// The live views running, by session, and the person's input on its way to the tabs.
#[derive(Default)]
pub struct LiveViews {
    running: Mutex<HashMap<String, Watched>>,
    /// One queue, passed on by one task: a press, the keys and the release arrive in the
    /// order the person made them.
    inputs: OnceLock<mpsc::UnboundedSender<HandoffInput>>,
}

impl LiveViews {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Watched>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Passes a person's input to the tab of the handoff it names, after the input before it;
    /// input for a handoff that is not waiting goes nowhere.
    pub fn pass(&self, transport: &Arc<dyn Transport>, handoffs: &Arc<Handoffs>, input: HandoffInput) {
        let queue = self.inputs.get_or_init(|| {
            let (queue, mut inputs) = mpsc::unbounded_channel::<HandoffInput>();
            let (transport, handoffs) = (transport.clone(), handoffs.clone());
            tokio::spawn(async move {
                while let Some(input) = inputs.recv().await {
                    let waiting = handoffs.tab_of(&input.session_id, &input.action_id, HANDOFF_BEGINS_WITHIN);
                    let Some(tab) = waiting.await else {
                        tracing::info!(input.session_id, "a person's input outside a handoff");
                        continue;
                    };
                    if let Err(e) = pass_input(&transport, tab, &input.input).await {
                        tracing::warn!(tab, "cannot pass a person's input to the tab: {e}");
                    }
                }
            });
            queue
        });
        let _ = queue.send(input);
    }

    /// Streams the session's tab `tab` to `sink` until [`LiveViews::stop`] (one view a
    /// session: a new one replaces it).
    pub fn start(&self, transport: &Arc<dyn Transport>, session_id: &str, tab: TabId, sink: FrameSink) {
        let task = tokio::spawn(stream(transport.clone(), session_id.to_owned(), tab, sink));
        let before = self.lock().insert(session_id.to_owned(), Watched { tab, task });
        if let Some(before) = before {
            before.task.abort();
            if before.tab != tab {
                stop_screencast(transport, before.tab);
            }
        }
    }

    /// Stops the session's live view, if it has one.
    pub fn stop(&self, transport: &Arc<dyn Transport>, session_id: &str) {
        if let Some(watched) = self.lock().remove(session_id) {
            watched.task.abort();
            stop_screencast(transport, watched.tab);
        }
    }
}

fn stop_screencast(transport: &Arc<dyn Transport>, tab: TabId) {
    let transport = transport.clone();
    tokio::spawn(async move {
        // A tab that closed meanwhile has nothing to stop.
        let _ = typed::command(transport.as_ref(), tab, StopScreencastParams {}).await;
    });
}

/// What a watcher was shown, and when the page as it is is looked at next. The browser sends a
/// frame when the page paints anew, but for one paint in `EVERY_NTH_PAINT` only, and drops
/// those it paints while two wait for their ack: a still page would show nothing, the last
/// change of a burst could be missed, and a change of a paint or two after the page went still
/// might never be sent. So the view starts with the page as it is, the page as it is is sent
/// once more when a burst of frames has settled, and while none come the page is looked at
/// again (`STILL_LOOK`), sent only if it changed.
struct Shown {
    /// The last frame the watcher has (JPEG, base64).
    data: String,
    look_at: tokio::time::Instant,
    /// How long after a look that found nothing new the next one comes.
    still_look: Duration,
    /// The viewport's CSS size, as the last capture measured it: a screencast frame's metadata
    /// gives the frame's own size there (960 for a 1280 px page), not where input lands.
    viewport: (f64, f64),
}

impl Shown {
    fn new() -> Self {
        Self {
            data: String::new(),
            look_at: tokio::time::Instant::now(),
            still_look: STILL_LOOK,
            viewport: (0.0, 0.0),
        }
    }

    /// A burst of frames goes on at `at` (a frame acked, or the screencast started again): the
    /// page as it is is looked at once it settles.
    fn burst_goes_on(&mut self, at: tokio::time::Instant) {
        self.look_at = at + 2 * FRAME_EVERY;
        self.still_look = STILL_LOOK;
    }

    /// Takes a capture of the page as it is: the frame to send, when it is news to the
    /// watcher; the next look comes twice as late while the page stays the same.
    fn look(&mut self, captured: Result<(String, f64, f64), CdpError>) -> Option<(String, f64, f64)> {
        let news = match captured {
            Ok(now) => {
                self.viewport = (now.1, now.2);
                (now.0 != self.data).then_some(now)
            }
            Err(e) => {
                tracing::debug!("cannot capture a tab for its live view: {e}");
                None
            }
        };
        self.still_look = match news {
            Some(_) => STILL_LOOK,
            None => (self.still_look * 2).min(STILL_LOOK_AT_MOST),
        };
        self.look_at = tokio::time::Instant::now() + self.still_look;
        if let Some(now) = &news {
            self.data.clone_from(&now.0);
        }
        news
    }
}

async fn stream(transport: Arc<dyn Transport>, session_id: String, tab: TabId, sink: FrameSink) {
    let mut events = transport.events();
    let start = StartScreencastParams {
        format: Some(StartScreencastFormat::Jpeg),
        quality: Some(QUALITY.into()),
        max_width: Some(MAX_WIDTH.into()),
        max_height: Some(MAX_HEIGHT.into()),
        every_nth_frame: Some(EVERY_NTH_PAINT.into()),
    };
    if let Err(e) = typed::command(transport.as_ref(), tab, start.clone()).await {
        return tracing::warn!(session_id, tab, "cannot show the tab live: {e}");
    }
    let frame = |(data, width, height): (String, f64, f64)| LiveFrame {
        session_id: session_id.clone(),
        tab_id: tab,
        data,
        width,
        height,
    };
    let mut shown = Shown::new();
    let mut next = tokio::time::Instant::now();
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            () = tokio::time::sleep_until(shown.look_at) => {
                if let Some(now) = shown.look(capture(&transport, tab).await) {
                    if !sink(frame(now)) {
                        return stop_screencast(&transport, tab);
                    }
                }
                continue;
            }
        };
        let params = match event {
            Ok(BrowserEvent::Cdp {
                tab: from,
                method,
                params,
            }) if from == tab && method == EventScreencastFrame::IDENTIFIER => params,
            Ok(_) => continue,
            Err(RecvError::Lagged(_)) => {
                // A frame may be among the events missed: the browser would wait for its ack
                // and send no other, and the view would stay as it was. Started again, the
                // screencast waits for none; the page as it is comes once the frames settle.
                let _ = typed::command(transport.as_ref(), tab, StopScreencastParams {}).await;
                if let Err(e) = typed::command(transport.as_ref(), tab, start.clone()).await {
                    return tracing::warn!(session_id, tab, "cannot show the tab live again: {e}");
                }
                shown.burst_goes_on(tokio::time::Instant::now());
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        let data = params["data"].as_str().unwrap_or_default().to_owned();
        let shows = &params["metadata"];
        let (width, height) = match shown.viewport {
            (0.0, _) => (
                shows["deviceWidth"].as_f64().unwrap_or_default(),
                shows["deviceHeight"].as_f64().unwrap_or_default(),
            ),
            measured => measured,
        };
        shown.data.clone_from(&data);
        if !sink(frame((data, width, height))) {
            // The link that asked for it is gone: so is every watcher.
            return stop_screencast(&transport, tab);
        }
        // The frame rate's bound: the browser sends the next frame once this one is acked.
        next += FRAME_EVERY;
        tokio::time::sleep_until(next).await;
        next = tokio::time::Instant::now();
        shown.burst_goes_on(next);
        let ack = ScreencastFrameAckParams::new(params["sessionId"].as_i64().unwrap_or_default());
        if typed::command(transport.as_ref(), tab, ack).await.is_err() {
            return;
        }
    }
}

/// The tab as it shows now, as a screencast frame would carry it: a JPEG within the frame
/// bounds, and the viewport's CSS size.
async fn capture(transport: &Arc<dyn Transport>, tab: TabId) -> Result<(String, f64, f64), CdpError> {
    // Read as JSON, as `browser_screenshot` reads it.
    let metrics = typed::command_json(transport.as_ref(), tab, GetLayoutMetricsParams {}).await?;
    let viewport = &metrics["cssVisualViewport"];
    let (width, height) = (
        viewport["clientWidth"].as_f64().unwrap_or(1.0).max(1.0),
        viewport["clientHeight"].as_f64().unwrap_or(1.0).max(1.0),
    );
    let scale = (f64::from(MAX_WIDTH) / width)
        .min(f64::from(MAX_HEIGHT) / height)
        .min(1.0);
    let shot = CaptureScreenshotParams {
        format: Some(CaptureScreenshotFormat::Jpeg),
        quality: Some(QUALITY.into()),
        clip: Some(Viewport {
            x: viewport["pageX"].as_f64().unwrap_or_default(),
            y: viewport["pageY"].as_f64().unwrap_or_default(),
            width,
            height,
            scale,
        }),
        ..CaptureScreenshotParams::default()
    };
    let shot = typed::command(transport.as_ref(), tab, shot).await?;
    let data: &str = shot.data.as_ref();
    Ok((data.to_owned(), width, height))
}

/// Passes a person's input to the tab, as the browser's own input events.
async fn pass_input(transport: &Arc<dyn Transport>, tab: TabId, input: &PersonInput) -> Result<(), CdpError> {
    let transport = transport.as_ref();
    match input {
        PersonInput::Mouse { action, x, y, button } => {
            let kind = match action {
                Press::Down => DispatchMouseEventType::MousePressed,
                Press::Up => DispatchMouseEventType::MouseReleased,
                Press::Move => DispatchMouseEventType::MouseMoved,
            };
            let (name, held) = match button {
                PersonButton::Left => (MouseButton::Left, 1),
                PersonButton::Right => (MouseButton::Right, 2),
                PersonButton::Middle => (MouseButton::Middle, 4),
            };
            // `buttons` is what is held once the event happened.
            let (button, buttons) = match action {
                Press::Down => (name, held),
                Press::Up => (name, 0),
                Press::Move => (MouseButton::None, 0),
            };
            let mut event = DispatchMouseEventParams::new(kind, *x, *y);
            event.button = Some(button);
            event.buttons = Some(buttons);
            event.click_count = Some(i64::from(*action != Press::Move));
            typed::command(transport, tab, event).await.map(drop)
        }
        PersonInput::Wheel {
            x,
            y,
            delta_x,
            delta_y,
        } => {
            let mut event = DispatchMouseEventParams::new(DispatchMouseEventType::MouseWheel, *x, *y);
            (event.delta_x, event.delta_y) = (Some(*delta_x), Some(*delta_y));
            typed::command(transport, tab, event).await.map(drop)
        }
        PersonInput::Key { action, key, code } => {
            typed::command(transport, tab, key_event(*action, key, code))
                .await
                .map(drop)
        }
    }
}

/// A person's key as the browser's key event: a key that types a character carries it as
/// text; others (arrows) are raw; Enter types a return.
fn key_event(action: Press, key: &str, code: &str) -> DispatchKeyEventParams {
    let text = (key.chars().count() == 1).then_some(key);
    let kind = match (action, text) {
        (Press::Up, _) => DispatchKeyEventType::KeyUp,
        (_, Some(_)) => DispatchKeyEventType::KeyDown,
        (_, None) => DispatchKeyEventType::RawKeyDown,
    };
    let mut event = DispatchKeyEventParams::new(kind.clone());
    event.key = Some(key.to_owned());
    event.code = Some(code.to_owned());
    event.windows_virtual_key_code = text
        .and_then(|t| t.chars().next())
        .filter(char::is_ascii_alphanumeric)
        .map(|c| i64::from(u32::from(c.to_ascii_uppercase())));
    if kind == DispatchKeyEventType::KeyDown {
        event.text = text.map(str::to_owned);
    }
    if key == "Enter" && kind == DispatchKeyEventType::RawKeyDown {
        event.r#type = DispatchKeyEventType::KeyDown;
        event.text = Some("\r".to_owned());
        event.windows_virtual_key_code = Some(13);
    }
    event
}
