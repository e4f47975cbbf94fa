//! A real MCP client for tests: the official SDK (`@modelcontextprotocol/sdk` from npm) in a
//! Node process (`tests/mcp-client/bridge.mjs`), driven one JSON line at a time, so a test can
//! base each call on the last answer while every byte of MCP is the SDK's. Every wait is
//! bounded: a silent server fails the test instead of hanging it.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The longest a call may take: a navigation plus Chromium's start-up on a busy machine.
const ANSWER_WITHIN: Duration = Duration::from_secs(90);

pub struct McpClient {
    child: Child,
    stdin: ChildStdin,
    answers: Lines<BufReader<ChildStdout>>,
    /// What the SDK said on connecting: server info, protocol version, session id, pid.
    pub connected: Value,
}

/// The folder of the bridge and its `node_modules`.
fn bridge_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp-client")
}

impl McpClient {
    /// Connects over streamable HTTP, with `token` as Bearer if given; the SDK's error if it
    /// could not connect.
    pub async fn http(url: &str, token: Option<&str>) -> Result<Self, Value> {
        let mut args = vec!["http".to_owned(), url.to_owned()];
        args.extend(token.map(str::to_owned));
        Self::start(&args).await
    }

    /// Starts `command args` and connects to it on stdio.
    pub async fn stdio(command: &std::path::Path, args: &[&str]) -> Result<Self, Value> {
        let mut all = vec!["stdio".to_owned(), command.display().to_string()];
        all.extend(args.iter().map(|a| (*a).to_owned()));
        Self::start(&all).await
    }

    async fn start(args: &[String]) -> Result<Self, Value> {
        let dir = bridge_dir();
        assert!(
            dir.join("node_modules/@modelcontextprotocol/sdk").is_dir(),
            "the MCP SDK is not installed: run scripts/test.sh, or npm ci in {}",
            dir.display()
        );
        let mut child = Command::new("node")
            .arg(dir.join("bridge.mjs"))
            .args(args)
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("node (Node.js) runs the MCP client");
        let stdin = child.stdin.take().unwrap();
        let answers = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut client = Self {
            child,
            stdin,
            answers,
            connected: Value::Null,
        };
        let first = client.answer().await;
        match first.get("connected") {
            Some(connected) => {
                client.connected = connected.clone();
                Ok(client)
            }
            None => Err(first["error"].clone()),
        }
    }

    async fn answer(&mut self) -> Value {
        let line = tokio::time::timeout(ANSWER_WITHIN, self.answers.next_line())
            .await
            .unwrap_or_else(|_| panic!("the MCP client answered nothing within {ANSWER_WITHIN:?}"))
            .expect("the MCP client's output")
            .expect("the MCP client ended early");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON from the bridge ({e}): {line}"))
    }

    async fn ask(&mut self, request: Value) -> Value {
        let mut line = request.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("write to the MCP client");
        self.answer().await
    }

    /// `tools/list`: the tools.
    pub async fn tools(&mut self) -> Vec<Value> {
        let answer = self.ask(json!({ "op": "tools" })).await;
        answer["ok"]["tools"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("{answer}"))
    }

    /// `tools/call`: `{"ok": CallToolResult}`, or `{"error": {code, message}}` for an MCP error.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.ask(json!({ "op": "call", "name": name, "arguments": arguments }))
            .await
    }

    /// A call that must succeed: its result's first text.
    pub async fn text(&mut self, name: &str, arguments: Value) -> String {
        let answer = self.call(name, arguments.clone()).await;
        let result = &answer["ok"];
        assert_eq!(result["isError"], false, "{name} {arguments}: {answer}");
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"))
            .to_owned()
    }

    /// Ends the MCP session over HTTP (the SDK's DELETE), then closes the client.
    pub async fn end(mut self) {
        let answer = self.ask(json!({ "op": "end" })).await;
        assert!(answer.get("ok").is_some(), "ending the MCP session: {answer}");
        let _ = tokio::time::timeout(ANSWER_WITHIN, self.child.wait()).await;
    }

    /// Closes the session (on stdio, the SDK ends the server's stdin); on stdio, how the
    /// server's process ended: `{code, signal}`.
    pub async fn close(mut self) -> Value {
        let answer = self.ask(json!({ "op": "close" })).await;
        let _ = tokio::time::timeout(ANSWER_WITHIN, self.child.wait()).await;
        answer["ok"].clone()
    }
}

/// A ref from a snapshot's Markdown: the one written just before `name`.
pub fn ref_named(markdown: &str, name: &str) -> String {
    let quoted = format!("\"{name}\"");
    let line = markdown
        .lines()
        .find(|l| l.contains(&quoted))
        .unwrap_or_else(|| panic!("no {quoted} in:\n{markdown}"));
    let before = &line[..line.find(&quoted).unwrap()];
    let start = before
        .rfind("[e")
        .unwrap_or_else(|| panic!("no ref before {quoted}: {line}"));
    before[start + 1..].split(']').next().unwrap().to_owned()
}
