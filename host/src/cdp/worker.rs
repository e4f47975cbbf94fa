//! Worker mode's [`Transport`]: a Chromium reached over its CDP WebSocket.
//!
//! CDP names tabs by string target ids; the catalog (like `chrome.tabs`) uses integers, so the
//! worker numbers page targets as it discovers them. Target discovery keeps the table fresh and
//! doubles as the tab events the twin is built from.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chromiumoxide::cdp::browser_protocol::browser::{
    CancelDownloadParams, GetWindowForTargetParams, SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::cdp::browser_protocol::storage::GetCookiesParams;
use chromiumoxide::cdp::browser_protocol::target::{
    AttachToTargetParams, CloseTargetParams, CreateBrowserContextParams, CreateTargetParams,
    DetachFromTargetParams, DisposeBrowserContextParams, EventAttachedToTarget, EventDetachedFromTarget,
    EventTargetCrashed, EventTargetCreated, EventTargetDestroyed, EventTargetInfoChanged, GetTargetsParams,
    SetDiscoverTargetsParams,
};
use serde_json::{json, Value};
use tether_protocol::actions::session_start::Proxy;
use tether_protocol::actions::TabId;
use tokio::sync::broadcast;

use super::connection::{CdpConnection, RawEvent};
use super::ours::SetContextCookies;
use super::proxy_auth::{Credentials, ProxyAuth};
use super::{typed, BrowserEvent, CdpError, Downloaded, TabInfo, Transport};

const EVENT_BUFFER: usize = 4096;

#[derive(Default)]
struct Targets {
    next_tab: TabId,
    by_target: HashMap<String, TabId>,
    by_session: HashMap<String, TabId>,
    /// The sessions of the tabs' cross-origin frames (attached by the tabs' auto-attach).
    frame_sessions: HashMap<String, TabId>,
    tabs: HashMap<TabId, Target>,
}

struct Target {
    target_id: String,
    session_id: Option<String>,
    opener_target: Option<String>,
    window_id: Option<i64>,
    url: String,
    title: String,
    context: Option<String>,
}

impl Targets {
    /// Records a page target from a `TargetInfo`, numbering it on first sight.
    fn upsert(&mut self, info: &Value) -> Option<TabId> {
        let target_id = info.get("targetId")?.as_str()?.to_owned();
        let tab = match self.by_target.get(&target_id) {
            Some(tab) => *tab,
            None => {
                self.next_tab += 1;
                self.by_target.insert(target_id.clone(), self.next_tab);
                self.tabs.insert(
                    self.next_tab,
                    Target {
                        target_id: target_id.clone(),
                        session_id: None,
                        opener_target: None,
                        window_id: None,
                        url: String::new(),
                        title: String::new(),
                        context: None,
                    },
                );
                self.next_tab
            }
        };
        let entry = self.tabs.get_mut(&tab)?;
        let text = |key: &str| info.get(key).and_then(Value::as_str).map(str::to_owned);
        entry.url = text("url").unwrap_or_default();
        entry.title = text("title").unwrap_or_default();
        if let Some(opener) = text("openerId") {
            entry.opener_target = Some(opener);
        }
        if let Some(context) = text("browserContextId") {
            entry.context = Some(context);
        }
        Some(tab)
    }

    /// Forgets a tab; whether it was known.
    fn remove(&mut self, tab: TabId) -> bool {
        let Some(t) = self.tabs.remove(&tab) else {
            return false;
        };
        self.by_target.remove(&t.target_id);
        if let Some(s) = t.session_id {
            self.by_session.remove(&s);
        }
        self.frame_sessions.retain(|_, of| *of != tab);
        true
    }

    fn info(&self, tab: TabId) -> Option<TabInfo> {
        let t = self.tabs.get(&tab)?;
        Some(TabInfo {
            tab_id: tab,
            window_id: t.window_id,
            group_id: None,
            opener_tab_id: t
                .opener_target
                .as_ref()
                .and_then(|o| self.by_target.get(o).copied()),
            url: t.url.clone(),
            title: t.title.clone(),
            context: t.context.clone(),
        })
    }

    fn target_id(&self, tab: TabId) -> Result<String, CdpError> {
        self.tabs
            .get(&tab)
            .map(|t| t.target_id.clone())
            .ok_or(CdpError::TabGone(tab))
    }
}

fn is_page(info: &Value) -> bool {
    info.get("type").and_then(Value::as_str) == Some("page")
}

pub struct WorkerTransport {
    cdp: CdpConnection,
    targets: Arc<Mutex<Targets>>,
    events: broadcast::Sender<BrowserEvent>,
    attach_lock: tokio::sync::Mutex<()>,
    /// The host's own folder the browser saves downloads in, each named by its guid; `None`
    /// where the browser would not save them there.
    downloads: Option<tempfile::TempDir>,
    /// Answers the credentials of the contexts whose proxy names them.
    proxy_auth: ProxyAuth,
}

impl WorkerTransport {
    /// Connects to a browser endpoint and starts tracking its tabs.
    pub async fn connect(ws_url: &str) -> Result<Self, CdpError> {
        Self::new(CdpConnection::connect(ws_url).await?).await
    }

    /// A transport on a browser connection already made (a launched browser's pipe).
    pub async fn new(cdp: CdpConnection) -> Result<Self, CdpError> {
        let targets = Arc::new(Mutex::new(Targets::default()));
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        tokio::spawn(pump(cdp.subscribe(), targets.clone(), events.clone()));
        // Announces the existing targets too, through the pump.
        cdp.command(None, SetDiscoverTargetsParams::new(true)).await?;
        let downloads = save_downloads(&cdp).await;
        let transport = Self {
            proxy_auth: ProxyAuth::start(&cdp),
            cdp,
            targets,
            events,
            attach_lock: Default::default(),
            downloads,
        };
        transport.tabs().await?;
        Ok(transport)
    }

    /// The underlying connection, for browser-level calls and for benchmarks.
    pub fn connection(&self) -> &CdpConnection {
        &self.cdp
    }

    /// The CDP target behind a tab, for tools that attach sessions of their own (benchmarks).
    pub fn target_id(&self, tab: TabId) -> Option<String> {
        self.lock().target_id(tab).ok()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Targets> {
        self.targets
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Navigates a blank tab to `url` once it is readied for its proxy's credentials.
    async fn navigate_readied(&self, target_id: &str, url: &str) -> Result<(), CdpError> {
        let session = self.proxy_auth.ready(target_id).await?;
        if url != "about:blank" {
            self.cdp
                .command_json(Some(&session), NavigateParams::new(url))
                .await?;
        }
        Ok(())
    }

    async fn window_of(&self, target_id: &str) -> Option<i64> {
        let asked = GetWindowForTargetParams {
            target_id: Some(target_id.to_owned().into()),
        };
        // As JSON: the answer's bounds hold a window state, an enum Chromium may extend.
        let window = self.cdp.command_json(None, asked).await.ok()?;
        window.get("windowId").and_then(Value::as_i64)
    }
}

#[async_trait]
impl Transport for WorkerTransport {
    async fn open_tab(
        &self,
        url: &str,
        _group_title: Option<&str>,
        context: Option<&str>,
    ) -> Result<TabInfo, CdpError> {
        // `background` keeps the user's focused tab and window where they are. CDP has no tab
        // groups, and a tab hidden behind another renders no frames (screenshots stall for
        // seconds, full-page ones for good), so each session tab gets a window of its own.
        // A tab whose proxy asks for credentials opens blank and is navigated once readied
        // for them (`proxy_auth.rs`).
        let readied = context.is_some_and(|c| self.proxy_auth.asks(c));
        let first = if readied { "about:blank" } else { url };
        let mut create = CreateTargetParams::new(first);
        (create.background, create.new_window) = (Some(true), Some(true));
        create.browser_context_id = context.map(|c| c.to_owned().into());
        let target_id: String = self.cdp.command(None, create).await?.target_id.into();
        if readied {
            if let Err(e) = self.navigate_readied(&target_id, url).await {
                let close = CloseTargetParams::new(target_id.clone());
                let _ = self.cdp.command(None, close).await;
                return Err(e);
            }
        }
        let window_id = self.window_of(&target_id).await;
        let mut targets = self.lock();
        let tab = targets
            .upsert(&json!({ "targetId": target_id, "url": url, "browserContextId": context }))
            .ok_or_else(|| CdpError::Other("cannot record the new tab".into()))?;
        if let Some(t) = targets.tabs.get_mut(&tab) {
            t.window_id = window_id;
        }
        targets.info(tab).ok_or(CdpError::TabGone(tab))
    }

    fn has_contexts(&self) -> bool {
        true
    }

    async fn create_context(&self, proxy: Option<&Proxy>) -> Result<String, CdpError> {
        // Gone with the host's connection, whatever happens to the host.
        let create = CreateBrowserContextParams {
            dispose_on_detach: Some(true),
            proxy_server: proxy.map(|p| p.server.clone()),
            proxy_bypass_list: proxy.and_then(|p| p.bypass.clone()),
            ..Default::default()
        };
        let context: String = self.cdp.command(None, create).await?.browser_context_id.into();
        if let Some(folder) = &self.downloads {
            save_downloads_in(&self.cdp, folder.path(), Some(&context)).await?;
        }
        if let Some(Proxy {
            username: Some(username),
            password,
            ..
        }) = proxy
        {
            let credentials = Credentials {
                username: username.clone(),
                password: password.clone().unwrap_or_default(),
            };
            let vouched = self.proxy_auth.vouch(&context, credentials).await;
            if let Err(e) = vouched {
                let _ = self.dispose_context(&context).await;
                return Err(e);
            }
        }
        Ok(context)
    }

    async fn dispose_context(&self, context: &str) -> Result<(), CdpError> {
        self.proxy_auth.forget(context).await;
        let dispose = DisposeBrowserContextParams::new(context.to_owned());
        self.cdp.command(None, dispose).await.map(|_| ())
    }

    async fn context_cookies(&self, context: &str) -> Result<Vec<Value>, CdpError> {
        let asked = GetCookiesParams {
            browser_context_id: Some(context.to_owned().into()),
        };
        // As JSON: a cookie's same-site, priority and source scheme are enums Chromium extends.
        let got = self.cdp.command_json(None, asked).await?;
        Ok(got
            .get("cookies")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default())
    }

    async fn set_context_cookies(&self, context: &str, cookies: Vec<Value>) -> Result<(), CdpError> {
        let set = SetContextCookies {
            cookies,
            browser_context_id: context.to_owned(),
        };
        self.cdp.command(None, set).await.map(|_| ())
    }

    async fn close_tab(&self, tab: TabId) -> Result<(), CdpError> {
        let target_id = self.lock().target_id(tab)?;
        self.cdp.command(None, CloseTargetParams::new(target_id)).await?;
        // Said here: the browser's own `targetDestroyed` will find the tab gone from the table
        // (and the twin, and the tab's watcher, would never hear of it).
        if self.lock().remove(tab) {
            let _ = self.events.send(BrowserEvent::TabRemoved { tab });
        }
        Ok(())
    }

    async fn tab(&self, tab: TabId) -> Result<Option<TabInfo>, CdpError> {
        // Target discovery keeps the table current, so no round trip per action: only the
        // window, which no event names, is asked for once.
        let missing_window = match self.lock().tabs.get(&tab) {
            None => return Ok(None),
            Some(t) => t.window_id.is_none().then(|| t.target_id.clone()),
        };
        if let Some(target_id) = missing_window {
            let window_id = self.window_of(&target_id).await;
            if let (Some(w), Some(t)) = (window_id, self.lock().tabs.get_mut(&tab)) {
                t.window_id = Some(w);
            }
        }
        Ok(self.lock().info(tab))
    }

    async fn tabs(&self) -> Result<Vec<TabInfo>, CdpError> {
        // As JSON, as the target events are read (`Targets::upsert`).
        let listed = self.cdp.command_json(None, GetTargetsParams::default()).await?;
        let infos = listed
            .get("targetInfos")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut targets = self.lock();
        let live: Vec<TabId> = infos
            .iter()
            .filter(|i| is_page(i))
            .filter_map(|i| targets.upsert(i))
            .collect();
        let gone: Vec<TabId> = targets
            .tabs
            .keys()
            .filter(|t| !live.contains(t))
            .copied()
            .collect();
        for tab in gone {
            targets.remove(tab);
            let _ = self.events.send(BrowserEvent::TabRemoved { tab });
        }
        Ok(live.iter().filter_map(|t| targets.info(*t)).collect())
    }

    async fn attach(&self, tab: TabId) -> Result<(), CdpError> {
        let _one_at_a_time = self.attach_lock.lock().await;
        if self.is_attached(tab) {
            return Ok(());
        }
        let target_id = self.lock().target_id(tab)?;
        let mut attach = AttachToTargetParams::new(target_id);
        attach.flatten = Some(true);
        let attached = self.cdp.command(None, attach).await.map_err(|e| match e {
            CdpError::Protocol { .. } => CdpError::TabGone(tab),
            other => other,
        })?;
        let session: String = attached.session_id.into();
        let mut targets = self.lock();
        targets.by_session.insert(session.clone(), tab);
        match targets.tabs.get_mut(&tab) {
            Some(t) => t.session_id = Some(session),
            None => return Err(CdpError::TabGone(tab)),
        }
        Ok(())
    }

    async fn detach(&self, tab: TabId) -> Result<(), CdpError> {
        let session = {
            let mut targets = self.lock();
            let Some(session) = targets.tabs.get_mut(&tab).and_then(|t| t.session_id.take()) else {
                return Ok(());
            };
            targets.by_session.remove(&session);
            session
        };
        // Removing the session first means the browser's own detach event finds no tab; say it here.
        let _ = self.events.send(BrowserEvent::Detached {
            tab,
            reason: "detached by Tether".into(),
        });
        let detach = DetachFromTargetParams {
            session_id: Some(session.into()),
        };
        match self.cdp.command(None, detach).await {
            Ok(_) | Err(CdpError::Protocol { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn is_attached(&self, tab: TabId) -> bool {
        self.lock().tabs.get(&tab).is_some_and(|t| t.session_id.is_some())
    }

    async fn send(&self, tab: TabId, method: &str, params: Value) -> Result<Value, CdpError> {
        let session = {
            let targets = self.lock();
            let target = targets.tabs.get(&tab).ok_or(CdpError::TabGone(tab))?;
            target.session_id.clone().ok_or(CdpError::NotAttached(tab))?
        };
        self.cdp.call(Some(&session), method, params).await
    }

    async fn send_in(
        &self,
        tab: TabId,
        session: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        if !self.is_attached(tab) {
            return Err(CdpError::NotAttached(tab));
        }
        self.cdp.call(Some(session), method, params).await
    }

    fn events(&self) -> broadcast::Receiver<BrowserEvent> {
        self.events.subscribe()
    }

    async fn downloaded(&self, guid: &str, _url: &str) -> Result<Downloaded, CdpError> {
        let folder = self.downloads.as_ref().ok_or_else(|| {
            CdpError::Other("this browser would not save downloads in the host's folder".into())
        })?;
        Ok(Downloaded {
            path: folder.path().join(guid),
            mime_type: None,
            staged: true,
        })
    }

    async fn cancel_download(&self, guid: &str) -> Result<(), CdpError> {
        let cancel = CancelDownloadParams::new(guid);
        self.cdp.command(None, cancel).await.map(|_| ())
    }
}

/// Has the browser save every download in a folder of the host's own, named by its guid (read
/// into an artifact and removed there once finished: `downloads.rs`); the folder goes with the
/// transport.
async fn save_downloads(cdp: &CdpConnection) -> Option<tempfile::TempDir> {
    let folder = tempfile::Builder::new()
        .prefix("tether-downloads-")
        .tempdir()
        .map_err(|e| tracing::warn!("no folder for downloads: {e}"))
        .ok()?;
    match save_downloads_in(cdp, folder.path(), None).await {
        Ok(()) => Some(folder),
        Err(e) => {
            tracing::warn!("the browser will not save downloads for the host: {e}");
            None
        }
    }
}

/// Has the browser save the downloads of `context` (`None`: its default context) in `folder`,
/// each named by its guid.
async fn save_downloads_in(
    cdp: &CdpConnection,
    folder: &std::path::Path,
    context: Option<&str>,
) -> Result<(), CdpError> {
    let behavior = SetDownloadBehaviorParams {
        behavior: SetDownloadBehaviorBehavior::AllowAndName,
        browser_context_id: context.map(|c| c.to_owned().into()),
        download_path: Some(folder.to_string_lossy().into_owned()),
        events_enabled: Some(false),
    };
    cdp.command(None, behavior).await.map(|_| ())
}

/// Turns raw CDP events into tab-addressed [`BrowserEvent`]s and keeps the target table fresh.
async fn pump(
    mut raw: broadcast::Receiver<RawEvent>,
    targets: Arc<Mutex<Targets>>,
    events: broadcast::Sender<BrowserEvent>,
) {
    loop {
        let event = match raw.recv().await {
            Ok(event) => event,
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!("worker transport fell {n} CDP events behind");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => break,
        };
        let mut table = targets.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let out = translate(&mut table, event);
        drop(table);
        if let Some(out) = out {
            let _ = events.send(out);
        }
    }
}

fn translate(targets: &mut Targets, event: RawEvent) -> Option<BrowserEvent> {
    if let Some(session) = &event.session_id {
        let Some(&tab) = targets.by_session.get(session) else {
            let tab = *targets.frame_sessions.get(session)?;
            return Some(BrowserEvent::FrameCdp {
                tab,
                method: event.method,
                params: event.params,
            });
        };
        let (method, params) = (event.method.as_str(), &event.params);
        match method {
            EventAttachedToTarget::IDENTIFIER => {
                if let Some(child) = typed::event::<EventAttachedToTarget>(method, params) {
                    targets.frame_sessions.insert(child.session_id.into(), tab);
                }
            }
            EventDetachedFromTarget::IDENTIFIER => {
                if let Some(child) = typed::event::<EventDetachedFromTarget>(method, params) {
                    targets.frame_sessions.remove(child.session_id.as_ref());
                }
            }
            _ => {}
        }
        return Some(BrowserEvent::Cdp {
            tab,
            method: event.method,
            params: event.params,
        });
    }
    let target_id = || {
        event
            .params
            .get("targetId")
            .or_else(|| event.params.pointer("/targetInfo/targetId"))
            .and_then(Value::as_str)
    };
    match event.method.as_str() {
        EventTargetCreated::IDENTIFIER | EventTargetInfoChanged::IDENTIFIER => {
            let info = event.params.get("targetInfo").filter(|i| is_page(i))?;
            let known = target_id().is_some_and(|t| targets.by_target.contains_key(t));
            let tab = targets.upsert(info)?;
            let info = targets.info(tab)?;
            Some(if known {
                BrowserEvent::TabUpdated(info)
            } else {
                BrowserEvent::TabCreated(info)
            })
        }
        EventTargetDestroyed::IDENTIFIER => {
            let tab = *targets.by_target.get(target_id()?)?;
            targets.remove(tab);
            Some(BrowserEvent::TabRemoved { tab })
        }
        EventDetachedFromTarget::IDENTIFIER => {
            let detached = typed::event::<EventDetachedFromTarget>(&event.method, &event.params)?;
            let tab = targets.by_session.remove(detached.session_id.as_ref())?;
            if let Some(t) = targets.tabs.get_mut(&tab) {
                t.session_id = None;
            }
            targets.frame_sessions.retain(|_, of| *of != tab);
            Some(BrowserEvent::Detached {
                tab,
                reason: "the tab's debugging session ended".into(),
            })
        }
        EventTargetCrashed::IDENTIFIER => {
            let tab = *targets.by_target.get(target_id()?)?;
            Some(BrowserEvent::Detached {
                tab,
                reason: "the tab crashed".into(),
            })
        }
        _ => None,
    }
}
