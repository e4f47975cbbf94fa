//! Settling (docs/protocol.md §20): an action that can change the page ends once what it set
//! going has finished, so its result, its `observed` and its `screen` are the page after it.
//! Before the action, the page's hooks are armed (`js/settle.js`, `js/hooks.js`: they count the
//! requests, short timers and frames that the action's input caused, and nothing else); after
//! it, the host waits for a navigation it caused to reach its load event, then for the page's
//! count of what the action set going and the animations it started to reach nothing, then for
//! one frame, all within `settleMs`. An action that set nothing going waits for nothing.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tether_protocol::actions::fields::{InvalidField, PendingWork, Settled, Waited};
use tether_protocol::actions::TabId;
use tokio::time::Instant;

use crate::actions::Context;
use crate::library::LibraryCall;
use crate::observed;
use crate::page::Page;

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

/// Where the tab stood when the action began: how many times it had navigated, for an action
/// whose own work is not a navigation.
pub struct Armed {
    navigations: Option<u64>,
}

/// Arms the tab's page before an action that settles. A page that cannot be armed (it is
/// between documents) is settled on its navigation alone. An action that navigates (its own
/// work ends at the new page's load) arms nothing: the page it starts from goes.
pub async fn arm(page: &Page<'_>, navigates: bool) -> Armed {
    if navigates {
        return Armed { navigations: None };
    }
    if let Err(e) = page.call(&SettleArm {}).await {
        tracing::debug!(tab = page.tab, "cannot arm the page for settling: {e}");
    }
    Armed {
        navigations: Some(page.state().navigations().0),
    }
}

/// Waits, at most `budget`, for what the action set going to finish; what was waited for, or
/// `None` when nothing was.
pub async fn wait(cx: &Context<'_>, tab: TabId, armed: Armed, budget: Duration) -> Option<Settled> {
    let start = Instant::now();
    let deadline = start + budget;
    let state = cx.session.tab_state(tab);
    let mut waited = Waited::default();
    let (mut pending, mut invalid) = (Vec::new(), Vec::new());
    loop {
        let left = || deadline.saturating_duration_since(Instant::now());
        waited.navigation |= observed::loads_ended(cx, tab, left).await;
        let settle = Settle {
            budget_ms: left().as_millis() as u64,
        };
        match cx.page(tab).call(&settle).await {
            Ok(in_page) => {
                // Counted since the page was armed: a second look at the same document sees
                // the first one's again.
                waited.requests = waited.requests.max(in_page.waited.requests);
                waited.timers = waited.timers.max(in_page.waited.timers);
                waited.animations = waited.animations.max(in_page.waited.animations);
                pending = in_page.pending;
                invalid = in_page.invalid;
            }
            // The document went as the page asked (its action began a navigation).
            Err(e) => tracing::debug!(tab, "settling in the page: {e}"),
        }
        // What the page did meanwhile may have begun a navigation: go round for it.
        let loading = state.loading.has_requested() || !state.loading.complete();
        if !loading || Instant::now() >= deadline {
            break;
        }
    }
    waited.navigation |= armed
        .navigations
        .is_some_and(|before| state.navigations().0 > before);
    let anything = waited.navigation || waited.requests + waited.timers + waited.animations > 0;
    (anything || !pending.is_empty() || !invalid.is_empty()).then(|| Settled {
        ms: start.elapsed().as_millis() as u64,
        waited,
        pending,
        invalid,
    })
}
