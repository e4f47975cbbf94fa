//! The real host's link to the relay (`tether_host::modes::relay_link`, with its kept results) in
//! front of a browser stand-in that counts what it is asked to run: for load tests, where what
//! matters is that each action reaches a browser once and in order, not what a page does.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;
use tether_host::modes::relay_link::{self, Executor, LinkOptions};
use tether_host::modes::twin_report::{TwinChange, TwinSource};
use tether_protocol::messages::ActionRequest;
use tether_protocol::result::{ActionHeader, Output};
use tether_protocol::twin::FullState;
use tether_protocol::ActionResult;
use tokio::sync::{broadcast, Notify};

/// A browser that takes a moment per action and remembers what it ran, in order. An action on
/// the element [`HELD`] runs until [`CountingBrowser::release`].
pub const HELD: &str = "//button[@id='held']";

#[derive(Default)]
pub struct CountingBrowser {
    pub ran: Mutex<Vec<(String, String)>>,
    released: Notify,
    holding: Notify,
}

impl CountingBrowser {
    /// Ends the held actions.
    pub fn release(&self) {
        self.released.notify_waiters();
    }

    /// Resolves once an action is held.
    pub async fn holding(&self) {
        self.holding.notified().await;
    }

    pub fn ran(&self, action_id: &str) -> usize {
        self.ran
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, a)| a == action_id)
            .count()
    }
}

impl Executor for CountingBrowser {
    fn execute(&self, _timeout: Duration, request: ActionRequest) -> BoxFuture<'_, ActionResult> {
        Box::pin(async move {
            let started = chrono::Utc::now();
            let action_id = request.action_id.unwrap_or_default();
            self.ran
                .lock()
                .unwrap()
                .push((request.session_id.clone(), action_id.clone()));
            if request.params["xpath"] == HELD {
                let released = self.released.notified();
                self.holding.notify_one();
                released.await;
            } else {
                // Work takes time in a browser: actions are in flight when a relay dies.
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            let header = ActionHeader {
                action_id,
                action_name: request.action_name,
                session_id: request.session_id,
                client_id: request.client_id.unwrap_or_default(),
            };
            let output = match padding(&request.params) {
                Some(pad) => json!({ "pad": "x".repeat(pad) }),
                None => json!({}),
            };
            ActionResult::new(header, started, chrono::Utc::now(), Ok(Output::of(&output)))
        })
    }
}

/// An action on the element `//pad[n]` answers with n bytes more: a large result, to grow
/// what the relay keeps.
pub fn pad(bytes: usize) -> String {
    format!("//pad[{bytes}]")
}

fn padding(params: &serde_json::Value) -> Option<usize> {
    let xpath = params["xpath"].as_str()?;
    xpath.strip_prefix("//pad[")?.strip_suffix(']')?.parse().ok()
}

struct NoTabs(broadcast::Sender<TwinChange>);

#[async_trait::async_trait]
impl TwinSource for NoTabs {
    async fn full_state(&self) -> Option<FullState> {
        Some(FullState::default())
    }

    fn changes(&self) -> broadcast::Receiver<TwinChange> {
        self.0.subscribe()
    }
}

/// Starts a host `client_id` on the relays at `addrs` (it joins the first and moves on when it
/// goes away), running actions on `browser`.
pub fn host(addrs: &[&str], client_id: &str, browser: Arc<CountingBrowser>) {
    let options = LinkOptions {
        ws_urls: addrs.iter().map(|addr| format!("ws://{addr}/ws")).collect(),
        token: super::HOST.into(),
        client_id: client_id.into(),
        meta: serde_json::from_value(json!({ "mode": "worker", "actions": ["browser_click"] })).unwrap(),
        twin: Arc::new(NoTabs(broadcast::channel(4).0)),
        on_link: None,
        tls: tether_host::parts::tls::client_config(None).unwrap(),
        owner: None,
        policy: Default::default(),
    };
    tokio::spawn(async move { panic!("the host stopped: {}", relay_link::run(options, browser).await) });
}
