//! A real `nats-server` with JetStream on a free port of 127.0.0.1, in a throwaway store, for
//! the tests of a deployment of several relays (docs/protocol.md §14). It dies with its handle.

use std::process::Stdio;

use tokio::process::{Child, Command};

use crate::process::{free_port, ready_when, RelayProcess};

pub struct NatsServer {
    pub url: String,
    _child: Child,
    _store: tempfile::TempDir,
}

impl NatsServer {
    /// Starts `nats-server -js`; returns once it says it is ready.
    pub async fn start() -> Self {
        let port = free_port();
        let store = tempfile::tempdir().unwrap();
        let mut child = Command::new(program())
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(store.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("nats-server (apt-get install -y nats-server)");
        ready_when(&mut child, "Server is ready", "nats-server").await;
        Self {
            url: format!("nats://127.0.0.1:{port}"),
            _child: child,
            _store: store,
        }
    }

    /// `count` relays of one deployment on this server, each with the flags `args` too.
    pub async fn relays(&self, count: usize, args: &[&str]) -> Vec<RelayProcess> {
        let mut relays = Vec::new();
        for _ in 0..count {
            let mut all = vec!["--nats", self.url.as_str()];
            all.extend_from_slice(args);
            relays.push(RelayProcess::start(&all).await);
        }
        relays
    }
}

fn program() -> &'static str {
    // Debian puts it in /usr/sbin, which is not on every user's PATH.
    if std::path::Path::new("/usr/sbin/nats-server").exists() {
        "/usr/sbin/nats-server"
    } else {
        "nats-server"
    }
}
