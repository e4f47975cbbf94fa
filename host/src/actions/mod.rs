//! The browser-action catalog, one module per action, named as on the wire: each is
//! `run(cx, params) -> Output` over the types its `tether_protocol::actions::<name>` twin
//! defines. The dispatch below is generated from the protocol's one table (`with_catalog!`),
//! so an action the table lists and this folder lacks does not compile.
//!
//! An action sees a narrow [`Context`]: the browser (`Transport`), the artifact store, what
//! the policy answers (`Rules`), and a handle on its own session's tabs; never the engine.
//! The floor uses `cdp`, `parts`, `page` and `browser`; the engine above runs it.

pub mod browser_click;
pub mod browser_console;
pub mod browser_debugger_attach;
pub mod browser_downloads;
pub mod browser_drag;
pub mod browser_evaluate;
pub mod browser_fill_form;
pub mod browser_get_html;
pub mod browser_go_back;
pub mod browser_go_forward;
pub mod browser_handoff;
pub mod browser_hover;
pub mod browser_mouse;
pub mod browser_navigate;
pub mod browser_network;
pub mod browser_pdf;
pub mod browser_press_key;
pub mod browser_readability_extract;
pub mod browser_reload;
pub mod browser_resize;
pub mod browser_screenshot;
pub mod browser_scroll;
pub mod browser_secrets;
pub mod browser_select_option;
pub mod browser_snapshot;
pub mod browser_storage_state;
pub mod browser_tabs;
pub mod browser_type;
pub mod browser_upload_file;
pub mod browser_wait_for;
pub mod browser_wait_for_loaded;
pub mod browser_xpath_scan;
pub mod session_start;
pub mod session_stop;

use std::sync::Arc;

use tether_protocol::actions::{Element, TabId};
use tether_protocol::result::Output;
use tether_protocol::{ActionCall, ActionError, ActionOutcome};

use crate::browser::tabs::Tabs;
use crate::cdp::Transport;
use crate::page::tab_state::TabState;
use crate::page::Page;
use crate::parts::artifacts::ArtifactStore;
use crate::parts::rules::Rules;

/// What an action runs with.
pub struct Context<'a> {
    pub transport: &'a Arc<dyn Transport>,
    pub artifacts: &'a dyn ArtifactStore,
    /// What it may do and where (never the switches that change it).
    pub rules: &'a dyn Rules,
    pub session: Session<'a>,
    /// The handoffs waiting for a person (`browser_handoff`).
    pub handoffs: &'a crate::browser::handoffs::Handoffs,
    /// Which browser context each session's tabs open in.
    pub contexts: &'a crate::browser::contexts::Contexts,
}

impl<'a> Context<'a> {
    /// Refuses a read of the pages' console or requests on a host that keeps none.
    pub fn page_log(&self) -> Result<(), ActionError> {
        if self.rules.keeps_page_log() {
            return Ok(());
        }
        Err(ActionError::new(
            tether_protocol::ErrorCode::Forbidden,
            "this host keeps no console messages or requests of its pages (its operator started it with --no-page-log)",
        ))
    }

    /// Opens a background tab of the session (not yet joined to it), in its tab group and its
    /// browser context.
    pub async fn open_tab(&self, url: &str) -> Result<crate::cdp::TabInfo, ActionError> {
        let title = self.session.group_title();
        let context = self.contexts.of_session(self.session.id);
        Ok(self
            .transport
            .open_tab(url, title.as_deref(), context.as_deref())
            .await?)
    }

    /// A tab of the session, as actions act on it.
    pub fn page(&self, tab: TabId) -> Page<'a> {
        let page = Page::new(self.transport, self.artifacts, self.session.tab_state(tab), tab);
        match self.session.refs() {
            Some(refs) => page.numbering_with(refs),
            None => page,
        }
    }

    /// The tab, or the cross-origin frame of it the element is in (`framed.rs`), and the
    /// element as that page names it.
    pub async fn reach<'p>(
        &self,
        tab: TabId,
        at: Element<'p>,
    ) -> Result<(Page<'a>, Element<'p>), ActionError> {
        crate::page::framed::reach(self.page(tab), self.rules, at).await
    }

    /// As [`Context::reach`], for an action whose element is optional: the tab without one.
    pub async fn reach_any<'p>(
        &self,
        tab: TabId,
        at: Option<Element<'p>>,
    ) -> Result<(Page<'a>, Option<Element<'p>>), ActionError> {
        match at {
            Some(at) => {
                let (page, at) = self.reach(tab, at).await?;
                Ok((page, Some(at)))
            }
            None => Ok((self.page(tab), None)),
        }
    }
}

/// The session an action runs for, and the tabs it owns.
pub struct Session<'a> {
    pub id: &'a str,
    /// The action running for it (empty for a call made outside the relay's flow).
    pub action_id: &'a str,
    /// Set for a person's look at the session's screen (the relay's screen.md): it leaves no
    /// trace in what the session's next `recent` snapshot compares against.
    pub peek: bool,
    pub(crate) tabs: &'a Tabs,
}

impl Session<'_> {
    /// Its tabs, in the order they joined.
    pub fn tabs(&self) -> Vec<TabId> {
        self.tabs
            .owners()
            .get(self.id)
            .map(|s| s.tabs.clone())
            .unwrap_or_default()
    }

    /// The ref numbering its tabs share, once it has a tab.
    pub fn refs(&self) -> Option<Arc<std::sync::atomic::AtomicU64>> {
        self.tabs.owners().get(self.id).map(|s| s.refs.clone())
    }

    pub fn join(&self, tab: TabId) {
        self.tabs.owners().join(self.id, tab);
    }

    pub fn group_title(&self) -> Option<String> {
        self.tabs
            .owners()
            .get(self.id)
            .and_then(|s| s.group_title.clone())
    }

    pub fn set_group_title(&self, title: Option<String>) {
        self.tabs.owners().set_group_title(self.id, title);
    }

    /// Ends the session here: its tabs are no longer its.
    pub fn end(&self) {
        self.tabs.owners().end(self.id);
    }

    pub async fn prepare(&self, tab: TabId) -> Result<Arc<TabState>, ActionError> {
        self.tabs.prepare(tab).await
    }

    pub fn tab_state(&self, tab: TabId) -> Arc<TabState> {
        self.tabs.state(tab)
    }

    /// Forgets a tab that closed or left.
    pub fn forget(&self, tab: TabId) {
        self.tabs.forget(tab);
    }

    /// Signals every change to any tab's downloads.
    pub fn download_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.tabs.download_changes()
    }
}

macro_rules! define_dispatch {
    ($($variant:ident $module:ident),+ $(,)?) => {
        /// Runs one parsed action; its typed output becomes the result's JSON text.
        pub async fn dispatch(cx: &Context<'_>, call: ActionCall) -> ActionOutcome {
            match call {
                $(ActionCall::$variant(params) => Ok(Output::of(&$module::run(cx, params).await?)),)+
            }
        }
    };
}

tether_protocol::with_catalog!(define_dispatch);

/// The element an action's (checked) `xpath`/`ref` pair names, if it names one.
pub(crate) fn element<'p>(
    xpath: &'p Option<String>,
    r#ref: &'p Option<String>,
) -> Result<Option<Element<'p>>, ActionError> {
    Element::named(xpath, r#ref).map_err(ActionError::invalid_params)
}

/// The element an action that needs one addresses.
pub(crate) fn required_element<'p>(
    xpath: &'p Option<String>,
    r#ref: &'p Option<String>,
) -> Result<Element<'p>, ActionError> {
    Element::required(xpath, r#ref).map_err(ActionError::invalid_params)
}
