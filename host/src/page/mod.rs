//! One tab as an action sees it: CDP calls, script evaluation, typed calls into the in-page
//! library, events and artifact storage, with every failure already in the wire's error
//! vocabulary.
//!
//! This folder is the page floor: the page (this file), the frames an action enters
//! (`framed`, `frames`), the in-page library (`library`, over `js/`), the Live Screen
//! (`live_screen`), and what a tab keeps between actions (`tab_state`: its `console`,
//! `network`, `dialogs`, `downloads`, `loading`, each a `numbered` log). Uses `cdp` and `parts`;
//! no page knows the browser's tables, the actions or the engine above it.

pub mod console;
pub mod dialogs;
pub mod downloads;
pub mod framed;
pub mod frames;
pub mod library;
pub mod live_screen;
pub mod loading;
pub mod network;
pub mod numbered;
pub mod tab_state;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchDragEventParams, DispatchKeyEventParams, DispatchMouseEventParams, DispatchMouseEventType,
    InsertTextParams, MouseButton as CdpButton,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CreateIsolatedWorldParams, FrameId, GetFrameTreeParams, GetLayoutMetricsParams,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    CallArgument, CallFunctionOnParams, EvaluateParams, ExecutionContextId, ReleaseObjectParams,
    RemoteObjectId,
};
use chromiumoxide::types::Command;
use serde_json::{json, Value};
use tether_protocol::actions::browser_click::MouseButton;
use tether_protocol::actions::{ArtifactRef, TabId};
use tether_protocol::{ActionError, ErrorCode};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::cdp::{typed, BrowserEvent, Transport};
use crate::page::library::{Installed, LibraryCall, RefsHanded, SOURCE as LIB_JS};
use crate::page::tab_state::TabState;
use crate::parts::artifacts::ArtifactStore;

/// The name of Tether's isolated world in each document (`Page.createIsolatedWorld`).
const WORLD: &str = "tether";

/// Puts the library in the document's Tether world (once: it is kept under a key named by this
/// build, so a page never runs another build's copy), with the names of the channel to the
/// page's hooks, and evaluates to it, for `Runtime.callFunctionOn`.
static INSTALL: LazyLock<String> = LazyLock::new(|| {
    let key = format!("tether.lib.{}.{}", env!("CARGO_PKG_VERSION"), LIB_JS.len());
    let (ask, answer) = library::channel();
    format!(
        "(() => {{ globalThis[Symbol.for('tether.channel')] = {{ ask: {ask:?}, answer: {answer:?} }}; \
         const key = Symbol.for({key:?}); \
         if (!globalThis[key]) Object.defineProperty(globalThis, key, {{ value: ({LIB_JS}), configurable: true }}); \
         return globalThis[key]; }})()"
    )
});

/// Called on the library with the function's name and arguments (awaiting what a waiting
/// function returns): a fresh instance per call, and one JSON string back, which crosses CDP far faster than a deep object returned by value
/// (a 6,000-element scan: ~120 ms saved).
const CALL: &str = "async function (name, args) { return JSON.stringify(await this()[name](args)); }";

/// As [`CALL`], for a function that answers with an element: the element comes back as a
/// handle (a remote object), anything else as JSON.
const CALL_FOR_NODE: &str =
    "async function (name, args) { const r = await this()[name](args); return r instanceof Node ? r : JSON.stringify(r); }";

/// How the library's `{ error }` answers begin (`JSON.stringify` keeps key order, and no
/// successful reply starts with an `error` key).
const ERROR_REPLY: &str = "{\"error\":";

/// One tab, and only what acting on it takes: the browser, the artifact store, and what the
/// host keeps for the tab; or one cross-origin frame of it ([`FrameScope`]).
pub struct Page<'a> {
    transport: &'a Arc<dyn Transport>,
    artifacts: &'a dyn ArtifactStore,
    state: Arc<TabState>,
    pub tab: TabId,
    frame: Option<FrameScope>,
    /// The highest ref number the tab's session handed out in any of its tabs: a tab's refs
    /// start above it, so a ref names one element in the whole session (an agent holding a
    /// ref of another tab gets "not from this page", never another element).
    session_refs: Option<Arc<AtomicU64>>,
    /// Where the frame's viewport sits in the tab's, read at the first pointer event (after
    /// the element is in view: scrolling inside a frame can scroll the page around it).
    corner: tokio::sync::OnceCell<(f64, f64)>,
}

/// Answers where a frame's element's viewport (inside its border and padding) has its
/// top-left corner in the tab's viewport, through the same-origin frames around it.
const VIEWPORT_CORNER: &str = "function () {
  let x = 0, y = 0;
  for (let win = this.ownerDocument.defaultView; win && win.frameElement; win = win.parent) {
    const r = win.frameElement.getBoundingClientRect();
    x += r.left + win.frameElement.clientLeft;
    y += r.top + win.frameElement.clientTop;
  }
  const r = this.getBoundingClientRect();
  const style = getComputedStyle(this);
  return [x + r.left + this.clientLeft + parseFloat(style.paddingLeft), y + r.top + this.clientTop + parseFloat(style.paddingTop)];
}";

/// A cross-origin frame a page acts inside (`framed.rs`). Its scripts and keys go through the
/// frame's own session; pointer events go to the tab (the browser routes them to the frame
/// under the pointer), at points of the frame's viewport moved by where that viewport sits in
/// the tab's.
#[derive(Debug, Clone)]
pub struct FrameScope {
    pub id: String,
    pub session: String,
    /// The handle on the frame's element in the tab's page.
    pub owner: String,
    /// The frame's document's URL.
    pub url: String,
}

impl<'a> Page<'a> {
    pub fn new(
        transport: &'a Arc<dyn Transport>,
        artifacts: &'a dyn ArtifactStore,
        state: Arc<TabState>,
        tab: TabId,
    ) -> Self {
        Self {
            transport,
            artifacts,
            state,
            tab,
            frame: None,
            session_refs: None,
            corner: tokio::sync::OnceCell::new(),
        }
    }

    /// The page, its refs numbered across its session's tabs.
    pub fn numbering_with(mut self, session_refs: Arc<AtomicU64>) -> Self {
        self.session_refs = Some(session_refs);
        self
    }

    /// The same tab, acting inside one of its cross-origin frames.
    pub fn in_frame(&self, frame: FrameScope) -> Page<'a> {
        Page {
            transport: self.transport,
            artifacts: self.artifacts,
            state: self.state.clone(),
            tab: self.tab,
            frame: Some(frame),
            session_refs: self.session_refs.clone(),
            corner: tokio::sync::OnceCell::new(),
        }
    }

    /// The frame this page acts inside, if it is one.
    pub fn frame(&self) -> Option<&FrameScope> {
        self.frame.as_ref()
    }

    /// Where this page's viewport sits in the tab's: (0, 0) but for a frame.
    pub async fn offset(&self) -> Result<(f64, f64), ActionError> {
        let Some(frame) = &self.frame else {
            return Ok((0.0, 0.0));
        };
        let corner = self.corner.get_or_try_init(|| async {
            let mut asked = CallFunctionOnParams::new(VIEWPORT_CORNER);
            asked.object_id = Some(RemoteObjectId::new(frame.owner.clone()));
            asked.return_by_value = Some(true);
            let reply = typed::command_json(self.transport.as_ref(), self.tab, asked).await?;
            let corner = remote_object_of(reply)?;
            match (corner["value"][0].as_f64(), corner["value"][1].as_f64()) {
                (Some(x), Some(y)) => Ok((x, y)),
                _ => Err(ActionError::internal(format!(
                    "a frame's corner came back as {corner}"
                ))),
            }
        });
        corner.await.copied()
    }

    /// The browser, for what is not one tab's (the tab list).
    pub fn transport(&self) -> &'a Arc<dyn Transport> {
        self.transport
    }

    /// One CDP command: to the frame's session for its scripts, its nodes and its keys
    /// (`Runtime`, `DOM`, text and key events: sent to the tab, keys would go to the frame the
    /// browser last heard had focus, and a focus the frame's script just gave travels to the
    /// browser on its own); to the tab for everything else, a pointer event's point moved into
    /// the tab's viewport (a person's press is the page's to hit-test: an overlay takes it).
    pub async fn cdp(&self, method: &str, mut params: Value) -> Result<Value, ActionError> {
        if let Some(frame) = &self.frame {
            let keys = [InsertTextParams::IDENTIFIER, DispatchKeyEventParams::IDENTIFIER].contains(&method);
            // The frame's own document: its scripts, its nodes, and the world Tether's library
            // runs in there.
            let world = [
                GetFrameTreeParams::IDENTIFIER,
                CreateIsolatedWorldParams::IDENTIFIER,
            ]
            .contains(&method);
            let domain = method.split('.').next();
            if keys || world || matches!(domain, Some("Runtime" | "DOM")) {
                return Ok(self
                    .transport
                    .send_in(self.tab, &frame.session, method, params)
                    .await?);
            }
            if [
                DispatchMouseEventParams::IDENTIFIER,
                DispatchDragEventParams::IDENTIFIER,
            ]
            .contains(&method)
            {
                let (ox, oy) = self.offset().await?;
                for (key, by) in [("x", ox), ("y", oy)] {
                    if let Some(at) = params[key].as_f64() {
                        params[key] = json!(at + by);
                    }
                }
            }
        }
        Ok(self.transport.send(self.tab, method, params).await?)
    }

    /// One typed CDP command (chromiumoxide_cdp's), routed as [`Page::cdp`] routes its
    /// method; its typed answer.
    pub async fn command<C: Command>(&self, command: C) -> Result<C::Response, ActionError> {
        let (method, params) = typed::wire(&command)?;
        let reply = self.cdp(&method, params).await?;
        Ok(typed::answer::<C>(&method, reply)?)
    }

    /// One typed CDP command, its answer as JSON (`cdp/typed.rs` says where).
    pub async fn command_json<C: Command>(&self, command: C) -> Result<Value, ActionError> {
        let (method, params) = typed::wire(&command)?;
        self.cdp(&method, params).await
    }

    /// Evaluates a fixed expression in the page's main world, awaiting a returned promise.
    pub async fn evaluate(&self, expression: &str) -> Result<Value, ActionError> {
        value_of(self.command_json(typed::evaluation(expression)).await?)
    }

    /// Calls a function of the in-page library; its `{ error }` answers become action errors.
    pub async fn call<C: LibraryCall>(&self, call: &C) -> Result<C::Reply, ActionError> {
        match self.invoke(CALL, call).await? {
            Value::String(text) => parse_reply::<C>(&text),
            other => Err(ActionError::internal(format!(
                "the page library returned {other}"
            ))),
        }
    }

    /// Calls a library function that hands out refs, from the tab's floor up (see
    /// [`RefsHanded`]), and keeps the page's next number as the new floor.
    pub async fn call_handing_refs<C, T>(&self, call: impl FnOnce(u64) -> C) -> Result<T, ActionError>
    where
        C: LibraryCall<Reply = RefsHanded<T>>,
    {
        let session_floor = self
            .session_refs
            .as_ref()
            .map_or(0, |r| r.load(Ordering::Relaxed));
        let floor = self.state.ref_floor().max(session_floor);
        let handed = self.call(&call(floor)).await?;
        self.state.raise_ref_floor(handed.next_ref);
        if let Some(session_refs) = &self.session_refs {
            session_refs.fetch_max(handed.next_ref, Ordering::Relaxed);
        }
        if let Some(frame) = &self.frame {
            self.state.frames.handed(&frame.id, floor..handed.next_ref);
        }
        Ok(handed.reply)
    }

    /// Resolves once what the host keeps for the tab (its console, its requests) has every
    /// event the browser sent before now: a CDP answer comes after the events sent before it,
    /// then the tab's watcher takes what it has received.
    pub async fn caught_up(&self) -> Result<(), ActionError> {
        typed::command_json(self.transport.as_ref(), self.tab, EvaluateParams::new("0")).await?;
        self.state.caught_up().await;
        Ok(())
    }

    /// What the host keeps for the tab.
    pub fn state(&self) -> &TabState {
        &self.state
    }

    /// Calls a library function that answers with an element (a handle on it: release it with
    /// [`Page::release`]) or with its reply.
    pub async fn call_for_node<C: LibraryCall>(&self, call: &C) -> Result<NodeOr<C::Reply>, ActionError> {
        let answer = self.invoke(CALL_FOR_NODE, call).await?;
        match (
            answer.get("objectId").and_then(Value::as_str),
            answer.get("value"),
        ) {
            (Some(node), _) if answer["subtype"] == "node" => Ok(NodeOr::Node(node.to_owned())),
            (_, Some(Value::String(text))) => parse_reply::<C>(text).map(NodeOr::Reply),
            _ => Err(ActionError::internal(format!(
                "the page library's {} returned {answer}",
                C::FUNCTION
            ))),
        }
    }

    /// Lets the page forget a handle [`Page::call_for_node`] gave.
    pub async fn release(&self, node: &str) {
        if let Err(e) = self
            .command(ReleaseObjectParams::new(RemoteObjectId::new(node)))
            .await
        {
            tracing::debug!(tab = self.tab, "cannot release a node handle: {e}");
        }
    }

    /// `Runtime.callFunctionOn` of `declaration` on the library with the call's function and
    /// arguments: the returned remote object.
    async fn invoke<C: LibraryCall>(&self, declaration: &str, call: &C) -> Result<Value, ActionError> {
        let args = serde_json::to_value(call)
            .map_err(|e| ActionError::internal(format!("cannot encode {}'s arguments: {e}", C::FUNCTION)))?;
        // Handles come back by reference; everything else as the JSON string the call made.
        let by_value = declaration != CALL_FOR_NODE;
        // The library's handle dies with its document: a failed call on a kept handle is
        // tried once more on a fresh one.
        match self.kept_library() {
            Some(library) => match self
                .call_on(&library.object_id, declaration, by_value, C::FUNCTION, &args)
                .await
            {
                Ok(answer) => Ok(answer),
                Err(_) => {
                    self.keep_library(None);
                    let library = self.install().await?;
                    self.call_on(&library.object_id, declaration, by_value, C::FUNCTION, &args)
                        .await
                }
            },
            None => {
                let library = self.install().await?;
                self.call_on(&library.object_id, declaration, by_value, C::FUNCTION, &args)
                    .await
            }
        }
    }

    /// Makes Tether's isolated world in the page's document and installs the library there.
    async fn install(&self) -> Result<Installed, ActionError> {
        // The document's frame as its own session names it (a cross-origin frame's session
        // names it otherwise than the tab's does).
        // Read as JSON: a frame's description holds enums Chromium extends.
        let tree = self.command_json(GetFrameTreeParams {}).await?;
        let frame_id = tree
            .pointer("/frameTree/frame/id")
            .and_then(Value::as_str)
            .ok_or_else(|| ActionError::internal(format!("the page has no frame: {tree}")))?;
        let mut world = CreateIsolatedWorldParams::new(FrameId::new(frame_id));
        world.world_name = Some(WORLD.to_owned());
        let context = *self.command(world).await?.execution_context_id.inner();
        let mut evaluate = EvaluateParams::new(&*INSTALL);
        evaluate.context_id = Some(ExecutionContextId::new(context));
        evaluate.return_by_value = Some(false);
        let reply = self.command_json(evaluate).await?;
        let object_id = reply
            .pointer("/result/objectId")
            .and_then(Value::as_str)
            .ok_or_else(|| ActionError::internal(format!("the page library did not install: {reply}")))?
            .to_owned();
        let installed = Installed { object_id, context };
        self.keep_library(Some(installed.clone()));
        Ok(installed)
    }

    /// The execution context of Tether's world in the page's document, the library installed
    /// there (handles for the library's use are resolved in it).
    pub async fn world(&self) -> Result<i64, ActionError> {
        match self.kept_library() {
            Some(installed) => Ok(installed.context),
            None => Ok(self.install().await?.context),
        }
    }

    /// The in-page library in this page's document, if the host has one.
    fn kept_library(&self) -> Option<Installed> {
        match &self.frame {
            Some(frame) => self.state.frames.library(&frame.id),
            None => self.state.library(),
        }
    }

    fn keep_library(&self, library: Option<Installed>) {
        match &self.frame {
            Some(frame) => self.state.frames.set_library(&frame.id, library),
            None => self.state.set_library(library),
        }
    }

    async fn call_on(
        &self,
        library: &str,
        declaration: &str,
        by_value: bool,
        function: &str,
        args: &Value,
    ) -> Result<Value, ActionError> {
        let mut call = CallFunctionOnParams::new(declaration);
        call.object_id = Some(RemoteObjectId::new(library));
        call.arguments = Some(vec![argument(json!(function)), argument(args.clone())]);
        (call.return_by_value, call.await_promise) = (Some(by_value), Some(true));
        // Read as JSON: a remote object's type and subtype are enums Chromium extends.
        let reply = self.command_json(call).await?;
        if by_value {
            return value_of(reply);
        }
        remote_object_of(reply)
    }

    /// A person's click at a point of the viewport: the pointer moves there, then presses
    /// ([`Page::press_at`]).
    pub async fn click_at(
        &self,
        (x, y): (f64, f64),
        button: MouseButton,
        count: u8,
        modifiers: u32,
    ) -> Result<(), ActionError> {
        let mut moved = DispatchMouseEventParams::new(DispatchMouseEventType::MouseMoved, x, y);
        (moved.buttons, moved.modifiers) = (Some(0), Some(modifiers.into()));
        self.command(moved).await?;
        self.press_at((x, y), button, count, modifiers).await
    }

    /// The button goes down and up `count` times where the pointer rests (the second press of
    /// a double click counting 2, as a mouse reports it), with `modifiers` (CDP's bit field)
    /// held.
    pub async fn press_at(
        &self,
        (x, y): (f64, f64),
        button: MouseButton,
        count: u8,
        modifiers: u32,
    ) -> Result<(), ActionError> {
        for count in 1..=count {
            let presses = [
                (DispatchMouseEventType::MousePressed, button.bit()),
                (DispatchMouseEventType::MouseReleased, 0),
            ];
            for (kind, buttons) in presses {
                let mut event = mouse_event(kind, (x, y), Some(button), buttons);
                (event.click_count, event.modifiers) = (Some(count.into()), Some(modifiers.into()));
                self.command(event).await?;
            }
        }
        Ok(())
    }

    /// One mouse event at a point of the viewport, as CDP's `Input.dispatchMouseEvent` takes
    /// it: `kind`, the button it is about (none for a plain move), the buttons held once it
    /// happened (their bits).
    pub async fn mouse(
        &self,
        kind: DispatchMouseEventType,
        at: (f64, f64),
        button: Option<MouseButton>,
        buttons: u32,
    ) -> Result<(), ActionError> {
        let click_count = i64::from(kind != DispatchMouseEventType::MouseMoved);
        let mut event = mouse_event(kind, at, button, buttons);
        event.click_count = Some(click_count);
        self.command(event).await.map(drop)
    }

    /// A point of the tab's viewport given as x and y, once it is inside the viewport (a press
    /// outside it would reach no element, or the browser's frame), as a point of this page's.
    pub async fn inside_viewport(&self, x: f64, y: f64) -> Result<(f64, f64), ActionError> {
        let metrics = self.command_json(GetLayoutMetricsParams {}).await?;
        let viewport = &metrics["cssLayoutViewport"];
        let width = viewport["clientWidth"].as_f64().unwrap_or(f64::INFINITY);
        let height = viewport["clientHeight"].as_f64().unwrap_or(f64::INFINITY);
        if x < 0.0 || y < 0.0 || x >= width || y >= height {
            return Err(ActionError::invalid_params(format!(
                "({x}, {y}) is outside the viewport, which is {width} x {height} CSS pixels; scroll first, or name an element by xpath or ref"
            )));
        }
        let (ox, oy) = self.offset().await?;
        Ok((x - ox, y - oy))
    }

    /// Events of this tab from now on.
    pub fn events(&self) -> TabEvents {
        TabEvents {
            tab: self.tab,
            rx: self.transport.events(),
            frames: false,
        }
    }

    /// Events of this tab and of its cross-origin frames from now on.
    pub fn events_with_frames(&self) -> TabEvents {
        TabEvents {
            frames: true,
            ..self.events()
        }
    }

    pub async fn store(&self, bytes: Vec<u8>, content_type: &str) -> Result<ArtifactRef, ActionError> {
        self.artifacts.put(bytes, content_type).await
    }
}

/// What a library function that may answer with an element answered.
pub enum NodeOr<R> {
    /// A handle on the element (a CDP `objectId`).
    Node(String),
    Reply(R),
}

#[derive(serde::Deserialize)]
struct LibraryError {
    error: ActionError,
}

/// A library function's JSON answer: its reply, or its `{ error }` as an action error.
fn parse_reply<C: LibraryCall>(text: &str) -> Result<C::Reply, ActionError> {
    let parsed = if text.starts_with(ERROR_REPLY) {
        serde_json::from_str::<LibraryError>(text).map(|e| Err(e.error))
    } else {
        serde_json::from_str::<C::Reply>(text).map(Ok)
    };
    parsed.map_err(|e| {
        ActionError::internal(format!(
            "the page library's {} answered in an unknown shape: {e}",
            C::FUNCTION
        ))
    })?
}

/// The value a `Runtime.evaluate` or `callFunctionOn` reply carries; a thrown exception is a
/// `CDP_ERROR` with its text.
fn value_of(reply: Value) -> Result<Value, ActionError> {
    Ok(remote_object_of(reply)?
        .get("value")
        .cloned()
        .unwrap_or(Value::Null))
}

/// The remote object (`result`) a `Runtime.evaluate` or `callFunctionOn` reply carries.
pub(crate) fn remote_object_of(mut reply: Value) -> Result<Value, ActionError> {
    if let Some(exception) = reply.get("exceptionDetails") {
        let text = exception
            .pointer("/exception/description")
            .or_else(|| exception.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("unknown exception");
        return Err(ActionError::new(
            ErrorCode::CdpError,
            format!("a script in the page failed: {text}"),
        ));
    }
    Ok(reply.get_mut("result").map(Value::take).unwrap_or(Value::Null))
}

/// A tab's CDP events, ending when the tab goes away.
pub struct TabEvents {
    tab: TabId,
    rx: broadcast::Receiver<BrowserEvent>,
    /// Whether its frames' events are its too.
    frames: bool,
}

impl TabEvents {
    /// The next CDP event of the tab already received, if any: never waits.
    pub fn ready(&mut self) -> Option<(String, Value)> {
        loop {
            match self.rx.try_recv() {
                Ok(BrowserEvent::Cdp { tab, method, params }) if tab == self.tab => {
                    return Some((method, params))
                }
                Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(_) => return None,
            }
        }
    }

    /// The next CDP event of the tab before `deadline`: `Ok(None)` when the deadline passed.
    pub async fn next_until(&mut self, deadline: Instant) -> Result<Option<(String, Value)>, ActionError> {
        loop {
            let event = match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Err(_) => return Ok(None),
                Ok(Ok(event)) => event,
                Ok(Err(broadcast::error::RecvError::Lagged(n))) => {
                    tracing::warn!(tab = self.tab, "missed {n} browser events");
                    continue;
                }
                Ok(Err(broadcast::error::RecvError::Closed)) => {
                    return Err(ActionError::new(
                        ErrorCode::CdpError,
                        "the browser connection closed",
                    ))
                }
            };
            match event {
                BrowserEvent::Cdp { tab, method, params } if tab == self.tab => return Ok(Some((method, params))),
                BrowserEvent::FrameCdp { tab, method, params } if self.frames && tab == self.tab => {
                    return Ok(Some((method, params)))
                }
                BrowserEvent::TabRemoved { tab } if tab == self.tab => {
                    return Err(ActionError::new(ErrorCode::TabNotFound, format!("tab {tab} was closed during the action")))
                }
                BrowserEvent::Detached { tab, reason } if tab == self.tab => {
                    return Err(ActionError::new(
                        ErrorCode::CdpError,
                        format!("the debugger left tab {tab} during the action ({reason}); call browser_debugger_attach to reattach"),
                    ))
                }
                _ => {}
            }
        }
    }
}

/// A deadline `timeout_ms` from now, or `default` when absent.
pub fn deadline(timeout_ms: Option<u64>, default: Duration) -> Instant {
    Instant::now() + timeout_ms.map(Duration::from_millis).unwrap_or(default)
}

/// A mouse event at a point: the button it is about (none for a move) and the buttons held.
fn mouse_event(
    kind: DispatchMouseEventType,
    (x, y): (f64, f64),
    button: Option<MouseButton>,
    buttons: u32,
) -> DispatchMouseEventParams {
    let mut event = DispatchMouseEventParams::new(kind, x, y);
    event.button = Some(match button {
        None => CdpButton::None,
        Some(MouseButton::Left) => CdpButton::Left,
        Some(MouseButton::Right) => CdpButton::Right,
        Some(MouseButton::Middle) => CdpButton::Middle,
    });
    event.buttons = Some(buttons.into());
    event
}

/// A value passed to a function the page runs.
pub fn argument(value: Value) -> CallArgument {
    CallArgument {
        value: Some(value),
        ..CallArgument::default()
    }
}
