//! Playwright in a Node process of its own on a running Chromium (`benches/playwright/ops.mjs`,
//! which times its own calls), for the benches that set it beside Tether and raw CDP.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// Playwright in a Node process of its own, on the same browser.
pub struct Playwright {
    _node: Child,
    commands: ChildStdin,
    answers: Lines<BufReader<ChildStdout>>,
}

impl Playwright {
    pub fn start(browser_ws: &str) -> Self {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/playwright/ops.mjs");
        let mut node = tokio::process::Command::new("node")
            .arg(script)
            .arg(browser_ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs (install Node.js, and npm ci in tests/benches/playwright)");
        Self {
            commands: node.stdin.take().unwrap(),
            answers: BufReader::new(node.stdout.take().unwrap()).lines(),
            _node: node,
        }
    }

    pub async fn send(&mut self, command: &str) -> String {
        self.commands
            .write_all(format!("{command}\n").as_bytes())
            .await
            .unwrap();
        self.answers
            .next_line()
            .await
            .unwrap()
            .expect("Playwright answers (see its error above)")
    }

    /// Runs one operation; how long Playwright took, and the length of what it returned.
    pub async fn time(&mut self, op: &str) -> (Duration, usize) {
        let answer = self.send(op).await;
        let (ms, length) = answer.split_once(' ').expect("MS LENGTH");
        let ms: f64 = ms.parse().unwrap();
        (Duration::from_secs_f64(ms / 1000.0), length.parse().unwrap())
    }
}
