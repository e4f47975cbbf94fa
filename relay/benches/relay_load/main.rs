//! The relay under load, as the real `tether-relay` binary in its own process:
//! 1. forwarding: sessions spread over test hosts, each keeping one action in flight (the relay
//!    runs one per session anyway) until it has run 100; throughput and the latency
//!    orchestrator -> relay -> host -> relay -> orchestrator. With 1000 sessions all busy the
//!    relay is saturated and latency is queueing (Little's law: in flight / throughput); a run
//!    with 20 sessions shows the latency of one action through an unloaded relay;
//! 2. the same through two relays of a deployment on a real nats-server (docs/protocol.md §14):
//!    hosts on one, orchestrators on the other, so every action and its result cross both;
//! 3. memory: the relay's RSS idle, then with 1000 hosts joined.
//!
//! Each forwarding run is first made, in the same run, through a bare WebSocket router
//! ([`floor`]): the floor of moving these frames through a process on this machine. Every
//! run reports the CPU time its relays (or the router) used per action, which does not depend
//! on the share of the 2 cores the load generator takes.
//!
//! ```sh
//! cargo bench -p tether-relay --bench relay_load
//! cargo bench -p tether-relay --bench relay_load -- one   # one relay only (for a profile)
//! cargo bench -p tether-relay --bench relay_load -- memory   # the memory figures only
//! ```
//!
//! The load generator shares the machine with the relay: on 2 cores they compete, so the
//! figures are a floor for the relay alone. Figures go to docs/performance.md.

mod floor;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use std::process::Stdio;

use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use tether_tests::nats::NatsServer;
use tether_tests::process::{self, RelayProcess};
use tether_tests::relay::{HOST, ORCHESTRATOR};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

const SESSIONS: usize = 1000;
const ACTIONS_PER_SESSION: usize = 100;
const HOSTS: usize = 4;
const ORCHESTRATORS: usize = 4;
const IDLE_HOSTS: usize = 1000;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

fn frame(kind: &str, id: &str, payload: Value) -> Message {
    Message::Text(
        json!({ "v": "1", "type": kind, "id": id, "payload": payload })
            .to_string()
            .into(),
    )
}

async fn joined(addr: &str, payload: Value) -> Ws {
    let url = format!("ws://{addr}/ws");
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, None, true)
        .await
        .unwrap();
    ws.send(frame("relay.join", "j", payload)).await.unwrap();
    let Some(Ok(Message::Text(text))) = ws.next().await else {
        panic!("no relay.joined");
    };
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reply["type"], "relay.joined", "{reply}");
    ws
}

fn host_join(client_id: &str) -> Value {
    json!({ "role": "host", "token": HOST, "clientId": client_id,
            "meta": { "browser": "bench", "mode": "worker", "actions": ["browser_click"] } })
}

/// What the load generator reads of a frame: just enough to answer it or count it, borrowed
/// from the text (the generator shares the 2 cores with what it measures, so it is kept lean:
/// reading every frame into a `Value` and writing with `json!` cost it ~13 us an action).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Read<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    id: Option<&'a str>,
    reply_to: Option<&'a str>,
    #[serde(default, borrow)]
    payload: Fields<'a>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fields<'a> {
    action_id: Option<&'a str>,
    action_name: Option<&'a str>,
    session_id: Option<&'a str>,
    status: Option<&'a str>,
}

/// A host that acks and answers every action at once.
async fn echo_host(addr: String, client_id: String) {
    let ws = joined(&addr, host_join(&client_id)).await;
    let (mut sink, mut stream) = ws.split();
    while let Some(Ok(Message::Text(text))) = stream.next().await {
        let frame: Read = serde_json::from_str(&text).unwrap();
        let (
            Some(id),
            Fields {
                action_id,
                action_name: Some(name),
                session_id: Some(session),
                ..
            },
        ) = (frame.id, frame.payload)
        else {
            continue;
        };
        if frame.kind != "browser_action" {
            continue;
        }
        // The relay's ids and the bench's names are plain: no escaping needed. The bare router
        // passes the orchestrator's frame on as it came, without an actionId.
        let action_id = action_id.map_or("null".to_owned(), |id| format!("\"{id}\""));
        let ack = format!(
            r#"{{"v":"1","type":"browser_action.ack","replyTo":"{id}","payload":{{"actionId":{action_id}}}}}"#
        );
        let result = format!(
            r#"{{"v":"1","type":"browser_action.result","replyTo":"{id}","payload":{{"actionId":{action_id},"actionName":"{name}","sessionId":"{session}","clientId":"{client_id}","status":"success","result":{{"clicked":true}},"startedAt":"2026-01-01T00:00:00.000Z","finishedAt":"2026-01-01T00:00:00.000Z","durationMs":0}}}}"#
        );
        let _ = sink.feed(Message::Text(ack.into())).await;
        if sink.send(Message::Text(result.into())).await.is_err() {
            return;
        }
    }
}

/// Session `session`'s action number `n`, as its frame (its id is the session's number; its
/// actionId names both, so a refused one is sent again as the same action).
fn action(session: usize, n: usize) -> Message {
    Message::Text(
        format!(
            r#"{{"v":"1","type":"browser_action","id":"{session}","payload":{{"sessionId":"load-{session}","actionId":"load-{session}-{n}","actionName":"browser_click","params":{{"tabId":1,"xpath":"//button"}}}}}}"#
        )
        .into(),
    )
}

/// What one orchestrator saw: each action's latency, and how many times it was refused
/// `QUEUE_FULL` and sent again.
struct Orchestrated {
    latencies: Vec<Duration>,
    refused: usize,
}

/// One orchestrator connection driving its share of the sessions, each with one action in
/// flight; an action refused `QUEUE_FULL` is sent again by its actionId.
async fn orchestrate(addr: String, sessions: Vec<usize>) -> Orchestrated {
    let ws = joined(&addr, json!({ "role": "orchestrator", "token": ORCHESTRATOR })).await;
    let (mut sink, mut stream) = ws.split();
    let mut sent_at: HashMap<usize, Instant> = HashMap::new();
    let mut done: HashMap<usize, usize> = HashMap::new();
    let mut latencies = Vec::with_capacity(sessions.len() * ACTIONS_PER_SESSION);
    let mut refused = 0;
    for &s in &sessions {
        sent_at.insert(s, Instant::now());
        sink.feed(action(s, 0)).await.unwrap();
    }
    sink.flush().await.unwrap();
    let mut remaining = sessions.len() * ACTIONS_PER_SESSION;
    while remaining > 0 {
        let Some(Ok(Message::Text(text))) = stream.next().await else {
            panic!("the relay closed an orchestrator");
        };
        let reply: Read = serde_json::from_str(&text).unwrap();
        if reply.kind != "browser_action.result" {
            continue;
        }
        let s: usize = reply.reply_to.unwrap().parse().unwrap();
        let count = done.entry(s).or_default();
        if reply.payload.status != Some("success") && text.contains("\"QUEUE_FULL\"") {
            refused += 1;
            sink.send(action(s, *count)).await.unwrap();
            continue;
        }
        assert_eq!(reply.payload.status, Some("success"), "{}", text.as_str());
        latencies.push(sent_at[&s].elapsed());
        remaining -= 1;
        *count += 1;
        if *count < ACTIONS_PER_SESSION {
            sent_at.insert(s, Instant::now());
            sink.send(action(s, *count)).await.unwrap();
        }
    }
    Orchestrated { latencies, refused }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// What the load goes through.
enum Under {
    /// One relay: hosts and orchestrators join it.
    One(RelayProcess),
    /// Two relays of a deployment: the hosts join the first, the orchestrators the second.
    Two(RelayProcess, Box<RelayProcess>),
    /// The bare router of [`floor`].
    Floor(Child, String),
}

impl Under {
    async fn start(kind: &str, nats: Option<&NatsServer>) -> Self {
        let args = ["--queue-limit", "1000"];
        match (kind, nats) {
            ("floor", _) => {
                let mut child = Command::new(std::env::current_exe().unwrap())
                    .arg("floor-router")
                    .stdout(Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .unwrap();
                let stdout = child.stdout.take().unwrap();
                let mut lines = BufReader::new(stdout).lines();
                let addr = lines.next_line().await.unwrap().expect("the router's address");
                Self::Floor(child, addr)
            }
            (_, None) => Self::One(RelayProcess::start(&args).await),
            (_, Some(nats)) => {
                let args = [&args[..], &["--nats", &nats.url]].concat();
                let hosts_on = RelayProcess::start(&args).await;
                Self::Two(hosts_on, Box::new(RelayProcess::start(&args).await))
            }
        }
    }

    fn label(&self) -> &'static str {
        match self {
            Self::One(_) => "one relay",
            Self::Two(..) => "two relays",
            Self::Floor(..) => "bare router (floor)",
        }
    }

    fn hosts_join(&self) -> &str {
        match self {
            Self::One(relay) | Self::Two(relay, _) => &relay.addr,
            Self::Floor(_, addr) => addr,
        }
    }

    fn orchestrators_join(&self) -> &str {
        match self {
            Self::One(relay) => &relay.addr,
            Self::Two(_, relay) => &relay.addr,
            Self::Floor(_, addr) => addr,
        }
    }

    fn pids(&self) -> Vec<u32> {
        let pid = |relay: &RelayProcess| relay.child.id().expect("running");
        match self {
            Self::One(relay) => vec![pid(relay)],
            Self::Two(a, b) => vec![pid(a), pid(b)],
            Self::Floor(child, _) => vec![child.id().expect("running")],
        }
    }

    /// The CPU time its processes have used: what an action costs them, whatever share of
    /// the machine the load generator takes.
    fn cpu_time(&self) -> Duration {
        self.pids().into_iter().map(process::cpu_time).sum()
    }

    /// The resident memory of the process the orchestrators join.
    fn rss_kib(&self) -> u64 {
        process::rss_kib(*self.pids().last().unwrap())
    }
}

async fn forwarding(sessions: usize, under: Under) {
    let label = under.label();
    for h in 0..HOSTS {
        tokio::spawn(echo_host(under.hosts_join().to_owned(), format!("host-{h}")));
    }
    let addr = under.orchestrators_join().to_owned();
    // Each session bound to a host, round robin.
    let mut binder = joined(&addr, json!({ "role": "orchestrator", "token": ORCHESTRATOR })).await;
    for s in 0..sessions {
        let bind = json!({ "sessionId": format!("load-{s}"), "clientId": format!("host-{}", s % HOSTS) });
        // A host may not have joined yet: bind again until it has.
        loop {
            binder
                .send(frame("session.bind", "b", bind.clone()))
                .await
                .unwrap();
            let Some(Ok(Message::Text(text))) = binder.next().await else {
                panic!()
            };
            if serde_json::from_str::<Value>(&text).unwrap()["type"] == "session.bound" {
                break;
            }
            tokio::task::yield_now().await;
        }
    }
    let start = Instant::now();
    let cpu_before = under.cpu_time();
    let tasks: Vec<_> = (0..ORCHESTRATORS)
        .map(|o| {
            let mine: Vec<usize> = (0..sessions).filter(|s| s % ORCHESTRATORS == o).collect();
            tokio::spawn(orchestrate(addr.clone(), mine))
        })
        .collect();
    let mut latencies = Vec::new();
    let mut refused = 0;
    for task in tasks {
        let orchestrated = task.await.unwrap();
        latencies.extend(orchestrated.latencies);
        refused += orchestrated.refused;
    }
    let elapsed = start.elapsed();
    let cpu = under.cpu_time() - cpu_before;
    latencies.sort();
    let total = latencies.len();
    println!(
        "forwarding, {label}: {total} actions over {sessions} sessions and {HOSTS} hosts in {:.2} s: {:.0} actions/s; \
         CPU {:.1} us per action; \
         latency p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms; RSS after: {} KiB; \
         refused QUEUE_FULL and sent again: {refused}",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / total as f64,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.9),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
        under.rss_kib(),
    );
}

async fn memory() {
    let relay = RelayProcess::start(&["--queue-limit", "1000"]).await;
    let idle = relay.rss_kib();
    let mut hosts = Vec::with_capacity(IDLE_HOSTS);
    for h in 0..IDLE_HOSTS {
        hosts.push(joined(&relay.addr, host_join(&format!("idle-{h}"))).await);
    }
    let mut orch = joined(
        &relay.addr,
        json!({ "role": "orchestrator", "token": ORCHESTRATOR }),
    )
    .await;
    orch.send(frame("extension.list", "l", json!({}))).await.unwrap();
    let Some(Ok(Message::Text(text))) = orch.next().await else {
        panic!()
    };
    let listed = serde_json::from_str::<Value>(&text).unwrap()["payload"]["clients"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(listed, IDLE_HOSTS);
    let loaded = relay.rss_kib();
    println!(
        "memory: relay RSS idle {idle} KiB; with {IDLE_HOSTS} hosts joined {loaded} KiB ({:.1} MiB; {:.1} KiB per host)",
        loaded as f64 / 1024.0,
        (loaded - idle) as f64 / IDLE_HOSTS as f64
    );
}

fn main() {
    if std::env::args().any(|a| a == "floor-router") {
        return floor::serve();
    }
    tether_tests::block_on(async {
        if std::env::args().any(|a| a == "memory") {
            return memory().await;
        }
        for sessions in [SESSIONS, 20] {
            forwarding(sessions, Under::start("floor", None).await).await;
            forwarding(sessions, Under::start("one", None).await).await;
        }
        if std::env::args().any(|a| a == "one") {
            return;
        }
        let nats = NatsServer::start().await;
        forwarding(SESSIONS, Under::start("two", Some(&nats)).await).await;
        forwarding(20, Under::start("two", Some(&nats)).await).await;
        memory().await;
    });
}
