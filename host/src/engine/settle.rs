//! Settling (docs/protocol.md §20): an action that can change the page ends once what it set
//! going has finished, so its result, its `observed` and its `screen` are the page after it.
//! Before the action, the page's hooks are armed, in the page, its same-origin frames and each
//! cross-origin frame the session may touch (`js/settle.js`, `js/hooks.js`: they count the
//! requests, short timers and frames that the action's input caused, and nothing else), and the
//! tab's request log is marked. After it, the host waits for a navigation it caused to reach
//! its load event, for each document's count of what the action set going and the animations it
//! started to reach nothing, and for the frame documents, scripts and stylesheets requested
//! since the mark to end (seen at the network: the page's own `fetch` and XHR are the hooks'),
//! going round while any of these brought more, then for one frame, all within `settleMs`. An
//! action that set nothing going waits for nothing.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tether_protocol::actions::fields::{InvalidField, PendingWork, Settled, Waited};
use tether_protocol::actions::TabId;
use tokio::time::Instant;

use crate::actions::Context;
use crate::engine::observed;
use crate::page::framed;
use crate::page::library::LibraryCall;
use crate::page::tab_state::TabState;
use crate::page::Page;

/// How many of what still ran a result names.
const PENDING_NAMED: usize = 5;

/// Arms the page's hooks: what the page sets going from now on because of the action counts.
#[derive(Serialize)]
struct SettleArm {}

impl LibraryCall for SettleArm {
    const FUNCTION: &'static str = "settleArm";
    type Reply = serde_json::Value;
}

/// Waits in the page, at most `budget_ms`, for what the action set going there.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Settle {
    budget_ms: u64,
}

#[derive(Debug, Deserialize)]
struct InPage {
    waited: InPageWaited,
    pending: Vec<PendingWork>,
    #[serde(default)]
    invalid: Vec<InvalidField>,
}

#[derive(Debug, Default, Deserialize)]
struct InPageWaited {
    requests: u32,
    timers: u32,
    animations: u32,
}

impl LibraryCall for Settle {
    const FUNCTION: &'static str = "settle";
    type Reply = InPage;
}

/// Where the tab stood when the action began, for an action whose own work is not a
/// navigation: how many times it had navigated, and its request log's last seq.
pub struct Armed {
    before: Option<(u64, u64)>,
}

/// Arms the tab's page and its cross-origin frames before an action that settles. A document
/// that cannot be armed (it is between documents) counts nothing. An action that navigates (its
/// own work ends at the new page's load) arms nothing: the page it starts from goes.
pub async fn arm(cx: &Context<'_>, tab: TabId, navigates: bool) -> Armed {
    if navigates {
        return Armed { before: None };
    }
    let page = cx.page(tab);
    for document in documents(cx, &page).await {
        if let Err(e) = document.call(&SettleArm {}).await {
            tracing::debug!(tab, "cannot arm a document for settling: {e}");
        }
    }
    // The log has every request the browser told of before the arm's answer.
    page.state().caught_up().await;
    Armed {
        before: Some((page.state().navigations().0, page.state().network.last())),
    }
}

/// The tab's page and the cross-origin frames in it that the session may touch (the others
/// are not reached into: their work is seen at the network only).
async fn documents<'a>(cx: &Context<'a>, page: &Page<'a>) -> Vec<Page<'a>> {
    let mut documents = framed::each(page, cx.rules).await;
    documents.insert(0, cx.page(page.tab));
    documents
}

/// Waits, at most `budget`, for what the action set going to finish; what was waited for, or
/// `None` when nothing was.
pub async fn wait(cx: &Context<'_>, tab: TabId, armed: Armed, budget: Duration) -> Option<Settled> {
    let start = Instant::now();
    let deadline = start + budget;
    let page = cx.page(tab);
    let state = page.state();
    let mut waited = Waited::default();
    let mut at_network = 0;
    let (mut pending, mut invalid) = loop {
        let left = || deadline.saturating_duration_since(Instant::now());
        waited.navigation |= observed::loads_ended(cx, tab, left).await;
        let InPage {
            waited: counted,
            mut pending,
            invalid,
        } = in_documents(cx, &page, deadline).await;
        // Counted since each document was armed: a second look sees the first one's again.
        waited.requests = waited.requests.max(counted.requests);
        waited.timers = waited.timers.max(counted.timers);
        waited.animations = waited.animations.max(counted.animations);
        let mut more = false;
        if let Some((_, requests)) = armed.before {
            let (begun, open, ended) = network_ended(&page, state, requests, deadline).await;
            at_network = begun;
            pending.extend(open);
            // What ended may have set more going in the page (a script that ran): look again.
            more = ended;
        }
        // What the page did meanwhile may have begun a navigation: go round for it.
        let loading = state.loading.has_requested() || !state.loading.complete();
        if !(loading || more) || Instant::now() >= deadline {
            break (pending, invalid);
        }
    };
    waited.requests += at_network;
    pending.truncate(PENDING_NAMED);
    invalid.truncate(PENDING_NAMED);
    waited.navigation |= armed
        .before
        .is_some_and(|(before, _)| state.navigations().0 > before);
    let anything = waited.navigation || waited.requests + waited.timers + waited.animations > 0;
    (anything || !pending.is_empty() || !invalid.is_empty()).then(|| Settled {
        ms: start.elapsed().as_millis() as u64,
        waited,
        pending,
        invalid,
    })
}

/// Waits, until `deadline`, in the page and each of its cross-origin frames the session may
/// touch, for what the action set going there: their counts summed, what still ran, the
/// fields a form refused.
async fn in_documents(cx: &Context<'_>, page: &Page<'_>, deadline: Instant) -> InPage {
    let mut sum = InPage {
        waited: InPageWaited::default(),
        pending: Vec::new(),
        invalid: Vec::new(),
    };
    for document in documents(cx, page).await {
        let left = deadline.saturating_duration_since(Instant::now());
        let settle = Settle {
            budget_ms: left.as_millis() as u64,
        };
        match document.call(&settle).await {
            Ok(in_page) => {
                sum.waited.requests += in_page.waited.requests;
                sum.waited.timers += in_page.waited.timers;
                sum.waited.animations += in_page.waited.animations;
                sum.pending.extend(in_page.pending);
                sum.invalid.extend(in_page.invalid);
            }
            // The document went as the page asked (its action began a navigation).
            Err(e) => tracing::debug!(tab = page.tab, "settling in the page: {e}"),
        }
    }
    sum
}

/// Waits, until `deadline`, for the frame documents, scripts and stylesheets requested after
/// `seq` to end: how many were requested, those still open at the deadline, and whether any
/// was waited for.
async fn network_ended(
    page: &Page<'_>,
    state: &TabState,
    seq: u64,
    deadline: Instant,
) -> (u32, Vec<PendingWork>, bool) {
    let mut events = page.events_with_frames();
    state.caught_up().await;
    let mut waited = false;
    loop {
        let (begun, open) = state.network.loading_after(seq, PENDING_NAMED);
        if open.is_empty() {
            return (begun, Vec::new(), waited);
        }
        waited = true;
        // Any event of the tab may be the one that ended a request: look again once the
        // tab's watcher has taken it.
        match events.next_until(deadline).await {
            Ok(Some(_)) => state.caught_up().await,
            _ => {
                let open = open.into_iter().map(|r| PendingWork {
                    kind: "request".into(),
                    url: Some(r.url),
                });
                return (begun, open.collect(), waited);
            }
        }
    }
}
