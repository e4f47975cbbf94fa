//! `/metrics` (OpenMetrics text, Prometheus' conventions, every name `tether_`): actions by name
//! and outcome (refusals such as `QUEUE_FULL` are outcomes too), their latency, sessions by
//! status, hosts online, actions queued, artifacts kept, events subscribers, the store's size,
//! the NATS link of a deployment of several relays. Gauges are read from the relay when
//! scraped ([`Now`]), so they cannot drift. docs/operations.md says which to alert on.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use tether_protocol::{ActionName, ActionResult};

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    action: &'static str,
    /// `success`, or the error code.
    outcome: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Action {
    action: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Status {
    status: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Link {
    link: &'static str,
}

type Latency = Family<Action, Histogram, fn() -> Histogram>;

/// What the relay is like when scraped.
#[derive(Debug, Default)]
pub struct Now {
    pub hosts_online: usize,
    pub queued: usize,
    /// Sessions in memory (running, waiting, or active in the last half minute) by status.
    pub sessions: Vec<(&'static str, usize)>,
    pub artifacts: usize,
    pub artifact_bytes: u64,
    pub subscribers: usize,
    /// The database and its write-ahead log, in bytes.
    pub store_bytes: u64,
    /// A deployment of several relays: its NATS link.
    pub nats: Option<NatsLink>,
}

/// A deployment's NATS link.
#[derive(Debug, Clone, Copy)]
pub struct NatsLink {
    pub connected: bool,
    /// What this relay handed over and NATS has not taken yet.
    pub behind_bytes: usize,
}

pub struct Metrics {
    registry: Registry,
    actions: Family<Outcome, Counter>,
    latency: Latency,
    hosts_online: Gauge,
    queued: Gauge,
    sessions: Family<Status, Gauge>,
    artifacts: Gauge,
    artifact_bytes: Gauge,
    subscribers: Gauge,
    store_bytes: Gauge,
    nats: Family<Link, Gauge>,
    nats_behind: Family<Link, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        let actions = Family::<Outcome, Counter>::default();
        // 1 ms to ~65 s, doubling.
        let latency: Latency =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.001, 2.0, 17)));
        let metrics = Self {
            registry: Registry::default(),
            actions,
            latency,
            hosts_online: Gauge::default(),
            queued: Gauge::default(),
            sessions: Family::default(),
            artifacts: Gauge::default(),
            artifact_bytes: Gauge::default(),
            subscribers: Gauge::default(),
            store_bytes: Gauge::default(),
            nats: Family::default(),
            nats_behind: Family::default(),
        };
        metrics.registered()
    }
}

impl Metrics {
    /// Names and describes each family.
    fn registered(mut self) -> Self {
        let mut registry = Registry::with_prefix("tether");
        registry.register(
            "actions",
            "Actions that ended, by action name and outcome (success or the error code, refusals such as QUEUE_FULL included)",
            self.actions.clone(),
        );
        registry.register(
            "action_duration_seconds",
            "How long actions ran, from start to result",
            self.latency.clone(),
        );
        registry.register(
            "hosts_online",
            "Browser hosts connected now",
            self.hosts_online.clone(),
        );
        registry.register(
            "actions_queued",
            "Actions waiting behind a running one, over all sessions",
            self.queued.clone(),
        );
        registry.register(
            "sessions",
            "Sessions in memory (running, waiting, or active in the last 30 s) by status",
            self.sessions.clone(),
        );
        registry.register("artifacts", "Artifacts kept", self.artifacts.clone());
        registry.register_with_unit(
            "artifacts",
            "What the kept artifacts take",
            prometheus_client::registry::Unit::Bytes,
            self.artifact_bytes.clone(),
        );
        registry.register(
            "event_subscribers",
            "Event streams open (WebSocket subscriptions and SSE)",
            self.subscribers.clone(),
        );
        registry.register_with_unit(
            "store",
            "The relay's database and its write-ahead log",
            prometheus_client::registry::Unit::Bytes,
            self.store_bytes.clone(),
        );
        registry.register(
            "nats_connected",
            "A deployment of several relays: 1 while this relay's NATS link is up",
            self.nats.clone(),
        );
        registry.register_with_unit(
            "nats_behind",
            "A deployment of several relays: what this relay handed to NATS and NATS has not taken yet",
            prometheus_client::registry::Unit::Bytes,
            self.nats_behind.clone(),
        );
        self.registry = registry;
        self
    }

    pub fn finished(&self, result: &ActionResult) {
        // Names come from outside: an unknown one must not grow the label set. The labels are
        // the catalog's own names, not copies of them.
        let action = match result.action_name.parse::<ActionName>() {
            Ok(name) => name.as_str(),
            Err(_) => "unknown",
        };
        let outcome = match &result.error {
            None => "success",
            Some(e) => e.code.as_str(),
        };
        self.actions.get_or_create(&Outcome { action, outcome }).inc();
        self.latency
            .get_or_create(&Action { action })
            .observe(result.duration_ms as f64 / 1000.0);
    }

    /// The exposition text, with the gauges as they are `now`.
    pub fn render(&self, now: Now) -> String {
        self.hosts_online.set(now.hosts_online as i64);
        self.queued.set(now.queued as i64);
        for (status, count) in now.sessions {
            self.sessions.get_or_create(&Status { status }).set(count as i64);
        }
        self.artifacts.set(now.artifacts as i64);
        self.artifact_bytes.set(now.artifact_bytes as i64);
        self.subscribers.set(now.subscribers as i64);
        self.store_bytes.set(now.store_bytes as i64);
        if let Some(link) = now.nats {
            let nats = Link { link: "nats" };
            self.nats.get_or_create(&nats).set(link.connected as i64);
            self.nats_behind
                .get_or_create(&nats)
                .set(link.behind_bytes as i64);
        }
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!("cannot encode metrics: {e}");
        }
        text
    }
}
