//! `/metrics` (Prometheus text): actions by name and outcome, their latency, hosts online and
//! actions queued. Gauges are read from the relay when scraped, so they cannot drift.

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

type Latency = Family<Action, Histogram, fn() -> Histogram>;

pub struct Metrics {
    registry: Registry,
    actions: Family<Outcome, Counter>,
    latency: Latency,
    hosts_online: Gauge,
    queued: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("tether");
        let actions = Family::<Outcome, Counter>::default();
        // 1 ms to ~65 s, doubling.
        let latency: Latency =
            Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.001, 2.0, 17)));
        let hosts_online = Gauge::default();
        let queued = Gauge::default();
        registry.register(
            "actions",
            "Actions that ended, by action name and outcome (success or the error code)",
            actions.clone(),
        );
        registry.register(
            "action_duration_seconds",
            "How long actions ran, from start to result",
            latency.clone(),
        );
        registry.register(
            "hosts_online",
            "Browser hosts connected now",
            hosts_online.clone(),
        );
        registry.register(
            "actions_queued",
            "Actions waiting behind a running one, over all sessions",
            queued.clone(),
        );
        Self {
            registry,
            actions,
            latency,
            hosts_online,
            queued,
        }
    }
}

impl Metrics {
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

    /// The exposition text, with the gauges as they are now.
    pub fn render(&self, hosts_online: usize, queued: usize) -> String {
        self.hosts_online.set(hosts_online as i64);
        self.queued.set(queued as i64);
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!("cannot encode metrics: {e}");
        }
        text
    }
}
