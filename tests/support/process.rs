//! The real `tether-relay` binary in a process of its own, for what only a process shows:
//! signals, exit codes, start-up warnings.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::binary;
use crate::relay::{HOST, ORCHESTRATOR};

pub struct RelayProcess {
    pub child: Child,
    pub addr: String,
    pub data: tempfile::TempDir,
    /// What it logged before it was ready.
    pub startup_log: Vec<String>,
}

impl RelayProcess {
    /// Starts the relay on loopback with the test tokens and `args`; returns once it listens.
    pub async fn start(args: &[&str]) -> Self {
        Self::start_on("127.0.0.1", args).await
    }

    /// The same, listening on `ip` (reached through 127.0.0.1).
    pub async fn start_on(ip: &str, args: &[&str]) -> Self {
        let data = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr = format!("127.0.0.1:{port}");
        let mut child = Command::new(binary("tether-relay"))
            .args(["--listen", &format!("{ip}:{port}")])
            .args([
                "--orchestrator-token",
                ORCHESTRATOR,
                "--host-token",
                HOST,
                "--data-dir",
            ])
            .arg(data.path())
            .args(args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // Ready once it says where it listens; its log is then drained so it never blocks.
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut startup_log = Vec::new();
        let ready = async {
            while let Some(line) = lines.next_line().await.unwrap() {
                let listening = line.contains("listening on");
                startup_log.push(line);
                if listening {
                    return;
                }
            }
            panic!("the relay exited before listening");
        };
        tokio::time::timeout(Duration::from_secs(20), ready)
            .await
            .expect("the relay did not start");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Self {
            child,
            addr,
            data,
            startup_log,
        }
    }

    /// Its resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        let pid = self.child.id().expect("running");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }

    pub fn terminate(&self) {
        let pid = self.child.id().expect("running");
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits (bounded) for the process to exit; its exit code.
    pub async fn exit_code(&mut self) -> Option<i32> {
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("the relay exited after SIGTERM")
            .unwrap();
        status.code()
    }
}
