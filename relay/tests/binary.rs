//! The real `tether-relay` binary. SIGTERM: running actions get their grace period, then a
//! result; queued ones end in order without running; the socket closes after the results; the
//! session log has every result; the process exits 0. And it listens on loopback unless told
//! otherwise, warning when exposed without TLS. `agent-docs --inject` edits only its section.

use std::time::Duration;

mod common;

use common::client::{closes, envelope, orchestrator, recv, send};
use common::process::RelayProcess;
use common::test_host::TestHost;
use common::ORCHESTRATOR;
use serde_json::{json, Value};

fn click(id: &str) -> Value {
    json!({ "sessionId": "stopping", "actionId": id, "actionName": "browser_click",
            "params": { "tabId": 1, "xpath": "//a" } })
}

#[tokio::test]
async fn sigterm_ends_every_action_with_a_result_then_closes() {
    let mut relay = RelayProcess::start(&["--shutdown-grace-ms", "300"]).await;
    let mut host = TestHost::join(&relay.addr, "browser-1").await;
    let mut orch = orchestrator(&relay.addr).await;
    send(&mut orch, envelope("browser_action", "r1", click("running"))).await;
    let running = host.next_action().await;
    host.ack(&running).await;
    let ack = recv(&mut orch).await;
    assert_eq!(ack["type"], "browser_action.ack");
    send(&mut orch, envelope("browser_action", "r2", click("queued"))).await;
    // Queued before the signal: read after it, the relay would refuse it at once instead (one
    // run in a few, where its result overtook the running action's).
    let api = relay.api();
    let queued = || async {
        let state = api.get("/api/sessions/stopping").await;
        (state["queued"] == 1).then_some(())
    };
    api.wait_until(
        json!({ "sessionId": "stopping" }),
        Duration::from_secs(10),
        queued,
    )
    .await;

    relay.terminate();
    // The host never answers: after the grace period the running action ends, then the
    // queued one, in order, each with a result; then the relay closes the socket.
    let first = recv(&mut orch).await;
    let second = recv(&mut orch).await;
    for (reply, id) in [(&first, "r1"), (&second, "r2")] {
        assert_eq!(reply["type"], "browser_action.result", "{reply}");
        assert_eq!(reply["replyTo"], id);
        assert_eq!(reply["payload"]["error"]["code"], "INTERNAL", "{reply}");
    }
    assert!(first["payload"]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("stopped before"));
    assert!(second["payload"]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("did not run"));
    assert!(
        closes(&mut orch).await,
        "the relay closes the socket after the results"
    );

    assert_eq!(relay.exit_code().await, Some(0));
    let log = std::fs::read_to_string(relay.data.path().join("logs/stopping.jsonl")).unwrap();
    let results = log
        .lines()
        .filter(|l| l.contains("\"browser_action.result\""))
        .count();
    assert_eq!(results, 2, "both results are in the session log");
}

#[tokio::test]
async fn a_stopping_relay_refuses_new_actions_with_a_result() {
    // A grace long enough for a loaded machine: the relay exits as soon as the running action
    // ends, so the test does not wait it out.
    let mut relay = RelayProcess::start(&["--shutdown-grace-ms", "20000"]).await;
    let mut host = TestHost::join(&relay.addr, "browser-1").await;
    let mut orch = orchestrator(&relay.addr).await;
    send(&mut orch, envelope("browser_action", "r1", click("running"))).await;
    let running = host.next_action().await;
    host.ack(&running).await;
    recv(&mut orch).await;
    relay.terminate();
    // While the running action has its grace period, a new one is answered at once.
    let mut late = orchestrator_or_refused(&relay.addr).await;
    if let Some(ws) = late.as_mut() {
        send(ws, envelope("browser_action", "late", click("late"))).await;
        let reply = recv(ws).await;
        assert_eq!(reply["payload"]["error"]["code"], "INTERNAL", "{reply}");
    }
    // The running one still finishes normally within the grace period.
    host.succeed(&running, json!({ "clicked": true })).await;
    let done = recv(&mut orch).await;
    assert_eq!(done["payload"]["status"], "success", "{done}");
    assert_eq!(relay.exit_code().await, Some(0));
}

/// A new connection to a stopping relay: refused at the door, or joined.
async fn orchestrator_or_refused(addr: &str) -> Option<common::client::Ws> {
    match tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await {
        Ok((mut ws, _)) => {
            send(&mut ws, common::client::join("orchestrator", ORCHESTRATOR)).await;
            (recv(&mut ws).await["type"] == "relay.joined").then_some(ws)
        }
        Err(_) => None,
    }
}

/// A log that goes to a file or a pipe carries no terminal colour codes (an operator's log
/// shipper would keep them as text).
#[tokio::test]
async fn a_log_that_is_no_terminal_has_no_colour_codes() {
    let relay = RelayProcess::start(&[]).await;
    assert!(!relay.startup_log.is_empty());
    for line in &relay.startup_log {
        assert!(!line.contains('\u{1b}'), "{line:?}");
    }
}

#[tokio::test]
async fn metrics_token_prints_the_kept_token_a_scraper_reads_the_metrics_with() {
    let data = tempfile::tempdir().unwrap();
    let print = || {
        let output = std::process::Command::new(common::binary("tether-relay"))
            .args(["metrics-token", "--data-dir"])
            .arg(data.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    let token = print();
    assert_eq!(token.len(), 64, "{token}");
    assert_eq!(print(), token, "the same token, kept");
    // A relay started on that data dir without a metrics token of its own takes the kept one.
    let relay = RelayProcess::start_in(data, &[]).await;
    let metrics = tether_tests::client::own_http()
        .get(format!("http://{}/metrics", relay.addr))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(metrics.status().as_u16(), 200);
}

#[tokio::test]
async fn a_config_file_from_print_default_starts_the_relay_and_flags_win_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let printed = std::process::Command::new(common::binary("tether-relay"))
        .args(["config", "--print-default"])
        .output()
        .unwrap();
    assert!(printed.status.success(), "{printed:?}");
    let defaults = String::from_utf8(printed.stdout).unwrap();
    let file = dir.path().join("relay.toml");
    // As printed: the relay starts on it (the kit's --listen and --data-dir win over the file's).
    std::fs::write(&file, &defaults).unwrap();
    let relay = RelayProcess::start(&["--config", file.to_str().unwrap()]).await;
    assert!(
        relay.startup_log.iter().all(|l| !l.starts_with('{')),
        "text, the default"
    );
    drop(relay);
    // A setting changed in the file is the relay's ...
    std::fs::write(
        &file,
        defaults.replace(r#"log-format = "text""#, r#"log-format = "json""#),
    )
    .unwrap();
    let relay = RelayProcess::start(&["--config", file.to_str().unwrap()]).await;
    assert!(
        relay.startup_log.iter().all(|l| l.starts_with('{')),
        "{:?}",
        relay.startup_log
    );
    drop(relay);
    // ... unless a flag says otherwise.
    let relay = RelayProcess::start(&["--config", file.to_str().unwrap(), "--log-format", "text"]).await;
    assert!(
        relay.startup_log.iter().all(|l| !l.starts_with('{')),
        "{:?}",
        relay.startup_log
    );
    // A key that is no flag stops the relay, naming it.
    std::fs::write(&file, "queue-limt = 3\n").unwrap();
    let refused = std::process::Command::new(common::binary("tether-relay"))
        .args(["--config", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("\"queue-limt\""),
        "{refused:?}"
    );
}

#[tokio::test]
async fn json_log_lines_parse_and_carry_time_level_target_and_message() {
    let relay = RelayProcess::start(&["--log-format", "json"]).await;
    assert!(!relay.startup_log.is_empty());
    for line in &relay.startup_log {
        let parsed: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?} is not JSON: {e}"));
        assert!(parsed["timestamp"].is_string(), "{line}");
        assert!(
            ["INFO", "WARN", "ERROR"].contains(&parsed["level"].as_str().unwrap()),
            "{line}"
        );
        assert!(parsed["target"].as_str().unwrap().starts_with("tether"), "{line}");
        assert!(parsed["fields"]["message"].is_string(), "{line}");
    }
    assert!(relay
        .startup_log
        .iter()
        .any(|line| line.contains(r#""message":"listening on"#)));
}

#[tokio::test]
async fn the_relay_listens_on_loopback_and_warns_when_exposed_without_tls() {
    let local = RelayProcess::start(&[]).await;
    assert!(
        !local.startup_log.iter().any(|l| l.contains("without TLS")),
        "{:?}",
        local.startup_log
    );
    let exposed = RelayProcess::start_on("0.0.0.0", &[]).await;
    assert!(
        exposed.startup_log.iter().any(|l| l.contains("without TLS")),
        "{:?}",
        exposed.startup_log
    );
}

#[tokio::test]
async fn agent_docs_are_injected_between_markers_and_nothing_else_changes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("CLAUDE.md");
    let mine = "# My project\n\nAlways run the tests.\n";
    std::fs::write(&file, mine).unwrap();
    let inject = || {
        let status = std::process::Command::new(common::binary("tether-relay"))
            .args([
                "agent-docs",
                "--relay-url",
                "http://relay.example:17800",
                "--inject",
            ])
            .arg(&file)
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::read_to_string(&file).unwrap()
    };
    let once = inject();
    assert!(once.starts_with(mine), "{once}");
    let section = &once[mine.len()..];
    assert!(section.starts_with("\n<!-- tether:start -->\n# "), "{section}");
    assert!(section.ends_with("<!-- tether:end -->\n"), "{section}");
    assert!(section.contains("http://relay.example:17800/mcp"));
    assert_eq!(inject(), once, "a second run changes nothing");

    // The user edits around the section; a new run replaces only the section.
    let edited = once.replace("Always run the tests.", "Run the tests first.") + "\n## Notes\n";
    std::fs::write(&file, &edited).unwrap();
    assert_eq!(inject(), edited);

    let printed = std::process::Command::new(common::binary("tether-relay"))
        .arg("agent-docs")
        .output()
        .unwrap();
    let printed = String::from_utf8(printed.stdout).unwrap();
    assert!(printed.contains("http://127.0.0.1:17800/mcp") && !printed.contains("tether:start"));
}

/// docs/protocol.md §15, at rest: the data dir and its files are the relay's user's alone, a tokens
/// file others could read is made private with a warning, and what was typed into a page is
/// logged as its length; the host still gets the text.
#[tokio::test]
async fn the_relays_files_are_its_own_and_typed_text_stays_out_of_logs() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let data = tempfile::tempdir().unwrap();
    std::fs::set_permissions(data.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let tokens = data.path().join("tokens.json");
    std::fs::write(
        &tokens,
        r#"{"orchestrator":"o-old","host":"h-old","observer":"w-old"}"#,
    )
    .unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o644)).unwrap();
    let data_path = data.path().to_owned();
    let relay = RelayProcess::start_in(data, &[]).await;
    assert!(
        relay
            .startup_log
            .iter()
            .any(|l| l.contains("readable by other users")),
        "{:#?}",
        relay.startup_log
    );
    assert_eq!(mode(&tokens), 0o600);
    assert_eq!(mode(&data_path), 0o700);
    for dir in ["logs", "artifacts"] {
        assert_eq!(mode(&data_path.join(dir)), 0o700, "{dir}");
    }

    let mut host = TestHost::join(&relay.addr, "typing-browser").await;
    let mut orch = orchestrator(&relay.addr).await;
    let typed = json!({ "sessionId": "typing", "actionName": "browser_type",
        "params": { "tabId": 1, "xpath": "//input", "text": "correct horse battery" } });
    send(&mut orch, envelope("browser_action", "t1", typed)).await;
    let action = host.next_action().await;
    assert_eq!(action["payload"]["params"]["text"], "correct horse battery");
    host.ack(&action).await;
    host.succeed(&action, json!({ "typed": true })).await;
    loop {
        if recv(&mut orch).await["type"] == "browser_action.result" {
            break;
        }
    }
    // A proxy's credentials reach the host, never the log (§21).
    let proxied = json!({ "sessionId": "typing", "actionName": "session_start",
        "params": { "proxy": { "server": "http://127.0.0.1:3128", "username": "pr0xy-user", "password": "pr0xy-s3cret" } } });
    send(&mut orch, envelope("browser_action", "t2", proxied)).await;
    let action = host.next_action().await;
    assert_eq!(action["payload"]["params"]["proxy"]["password"], "pr0xy-s3cret");
    host.ack(&action).await;
    let started = json!({ "tabId": 1, "windowId": 1, "url": "about:blank" });
    host.succeed(&action, started).await;
    loop {
        if recv(&mut orch).await["type"] == "browser_action.result" {
            break;
        }
    }
    let log = data_path.join("logs/typing.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("pr0xy-"), "{text}");
    assert!(text.contains("<kept back>"), "{text}");
    assert!(!text.contains("correct horse"), "{text}");
    assert!(text.contains("<typed: 21 chars>"), "{text}");
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(&data_path.join("relay.db")), 0o600);
    assert_eq!(mode(&data_path.join("relay.db-wal")), 0o600);
}

/// `tether-relay host-token`: a token is shown once, when minted; `--list` names browsers, never
/// tokens; `--revoke` ends one.
#[tokio::test]
async fn host_tokens_are_minted_listed_and_revoked_from_the_command_line() {
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let output = std::process::Command::new(common::binary("tether-relay"))
            .arg("host-token")
            .args(args)
            .arg("--data-dir")
            .arg(data.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let token = run(&["--client-id", "laptop"]).trim().to_owned();
    assert!(token.len() >= 32, "{token}");
    let listed = run(&["--list"]);
    assert!(listed.starts_with("laptop\t"), "{listed}");
    assert!(!listed.contains(&token));
    let kept = std::fs::read_to_string(data.path().join("host-tokens.json")).unwrap();
    assert!(!kept.contains(&token), "only a digest is kept");
    run(&["--revoke", "laptop"]);
    assert_eq!(run(&["--list"]), "");
}
