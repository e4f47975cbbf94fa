//! Agents plug in (docs/protocol.md §11): the official MCP SDK as the client, over the relay's
//! `/mcp` (streamable HTTP) and over `tether-host mcp` (stdio, with a Chromium of its own or
//! through a relay). The agent's defaults (its own session, the current tab), refs from a
//! snapshot, a screenshot as an image, errors, auth refusals, and a clean exit.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use tether_mcp::Caps;
use tether_protocol::ActionName;
use tether_tests::mcp::{ref_named, McpClient};
use tether_tests::relay::{TestRelay, HOST, ORCHESTRATOR};
use tether_tests::{binary, block_on, fixtures, run_worker};

const JOIN_WITHIN: Duration = Duration::from_secs(20);
const PAGE: &str = "/fixtures/snapshot.html";

/// The tools that take a secret name the one secret the browser holds (§18), and no tool
/// carries its value.
fn assert_names_secrets(tools: &[Value], name: &str, value: &str) {
    for tool_name in ["browser_type", "browser_fill_form", "browser_secrets"] {
        let tool = tools.iter().find(|t| t["name"] == tool_name).unwrap();
        let description = tool["description"].as_str().unwrap();
        assert!(
            description.contains(&format!("Secrets this browser holds: {name}.")),
            "{tool_name}: {description}"
        );
    }
    assert!(!serde_json::to_string(tools).unwrap().contains(value));
}

/// An agent on the relay's `/mcp` (the SDK as client), once the worker `client_id` is online.
async fn agent_of(relay: &TestRelay, client_id: &str) -> McpClient {
    relay.wait_online(client_id, JOIN_WITHIN).await;
    McpClient::http(&relay.http("/mcp"), Some(ORCHESTRATOR))
        .await
        .unwrap()
}

/// The session a call's result is of, as its `_meta` names it; and its first text.
fn session_named(answer: &Value) -> (String, String) {
    let session = answer["ok"]["_meta"]["dev.tether/sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("a session named in {answer}"));
    let text = answer["ok"]["content"][0]["text"].as_str().unwrap_or_default();
    (session.to_owned(), text.to_owned())
}

#[test]
fn an_agent_drives_a_browser_through_the_relays_mcp() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let _worker = relay.start_worker(h, "mcp-worker");
        relay.wait_online("mcp-worker", JOIN_WITHIN).await;
        let mut agent = McpClient::http(&relay.http("/mcp"), Some(ORCHESTRATOR))
            .await
            .unwrap();
        assert_eq!(agent.connected["server"]["name"], "tether");
        assert!(agent.connected["sessionId"]
            .as_str()
            .is_some_and(|id| !id.is_empty()));

        // The default tools: a browsing task's (core, tabs, forms), each described for a model,
        // tabId optional; the rest by the groups an operator chooses (?caps=).
        let tools = agent.tools().await;
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        let lean: Vec<&str> = ActionName::ALL
            .iter()
            .filter(|a| Caps::default().lists(**a))
            .map(|a| a.as_str())
            .collect();
        assert_eq!(names, lean);
        assert!(names.contains(&"browser_fill_form") && !names.contains(&"browser_evaluate"));
        let click = tools.iter().find(|t| t["name"] == "browser_click").unwrap();
        let said = click["description"].as_str().unwrap();
        assert!(
            said.contains("ref") && !said.contains("docs/protocol.md"),
            "{said}"
        );
        assert!(click["inputSchema"]["properties"]["ref"].is_object());
        assert!(!click["inputSchema"]["required"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r == "tabId"));
        let mut every = McpClient::http(&relay.http("/mcp?caps=all"), Some(ORCHESTRATOR))
            .await
            .unwrap();
        let all: Vec<String> = every
            .tools()
            .await
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        let catalog: Vec<&str> = ActionName::ALL.iter().map(|a| a.as_str()).collect();
        assert_eq!(all, catalog);
        every.close().await;
        // A tool outside the groups is refused to the model, saying which group has it.
        let off = agent.call("browser_evaluate", json!({ "expression": "1" })).await;
        assert_eq!(off["ok"]["isError"], true, "{off}");
        let text = off["ok"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("\"debug\""), "{text}");

        // Before any tab, an action on "the current tab" says what to do.
        let early = agent.call("browser_snapshot", json!({})).await;
        assert_eq!(early["ok"]["isError"], true, "{early}");
        assert!(early["ok"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("browser_navigate"));

        // browser_navigate opens the session's tab; later calls go to it.
        let opened = agent
            .text("browser_navigate", json!({ "url": h.url(PAGE) }))
            .await;
        // A tool that changes the page answers its result, then the page it left (observe),
        // whose header names the page (so the result does not, nor a load that completed).
        let (opened, screen) = opened.split_once("\n\n").unwrap_or((&opened, ""));
        let opened: Value = serde_json::from_str(opened).unwrap();
        assert!(
            screen.starts_with(&format!("Page \"Snapshot shop\" at {}", h.url(PAGE))),
            "{screen}"
        );
        assert!(
            opened.get("status").is_none() && opened.get("url").is_none(),
            "{opened}"
        );
        let tab = opened["tabId"].as_i64().expect("the result names its tab");

        let (session, page) = session_named(&agent.call("browser_snapshot", json!({})).await);
        assert!(session.starts_with("mcp-"), "{session}");
        assert!(page.starts_with(&format!("[tab {tab}] ")), "{page}");
        assert!(!page.contains(&session), "{page}");
        assert!(page.contains("# Garden shop"), "{page}");
        let add = ref_named(&page, "Add watering can");
        let clicked = agent.text("browser_click", json!({ "ref": add })).await;
        let (result, screen) = clicked
            .split_once("\n\n")
            .expect("the click's result, then what it changed");
        assert_eq!(serde_json::from_str::<Value>(result).unwrap()["tabId"], tab);
        assert!(
            screen
                .lines()
                .any(|l| l.starts_with("+ ") && l.contains("Watering can")),
            "what the click changed, in its own reply: {screen}"
        );

        // A screenshot comes as an image no wider than 1280, and a link to its artifact.
        let shot = agent.call("browser_screenshot", json!({})).await;
        let content = shot["ok"]["content"]
            .as_array()
            .unwrap_or_else(|| panic!("{shot}"));
        let image = content.iter().find(|c| c["type"] == "image").expect("an image");
        assert_eq!(image["mimeType"], "image/png");
        let png = base64::engine::general_purpose::STANDARD
            .decode(image["data"].as_str().unwrap())
            .unwrap();
        let picture = image::load_from_memory(&png).unwrap();
        assert!(picture.width() <= 1280 && picture.width() > 0);
        let link = content
            .iter()
            .find(|c| c["type"] == "resource_link")
            .expect("a link");
        assert!(link["uri"]
            .as_str()
            .unwrap()
            .starts_with(&relay.http("/artifacts/")));
        let (kind, linked) = tether_tests::client::download(link["uri"].as_str().unwrap()).await;
        assert_eq!((kind.as_str(), linked), ("image/png", png));

        // An action's error is a result with isError, its code and message, naming the tab.
        let stale = agent.call("browser_click", json!({ "ref": "e9999" })).await;
        assert_eq!(stale["ok"]["isError"], true, "{stale}");
        let text = stale["ok"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("ELEMENT_NOT_FOUND: ") && text.contains(&format!("tab {tab}")),
            "{text}"
        );
        // An unknown tool is the client's error; wrong arguments are the model's, a result it
        // reads (isError) saying what to send instead.
        let unknown = agent.call("browser_teleport", json!({})).await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
        assert!(unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("browser_teleport"));
        let bad = agent.call("browser_click", json!({ "ref": "12" })).await;
        assert_eq!(bad["ok"]["isError"], true, "{bad}");
        let text = bad["ok"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("INVALID_PARAMS: ") && text.contains("ref"),
            "{text}"
        );
        let wrong_type = agent.call("browser_click", json!({ "ref": 12 })).await;
        assert_eq!(wrong_type["ok"]["isError"], true, "{wrong_type}");

        // An address typed without a scheme is read as the address bar reads it.
        let typed = h.url(PAGE).replacen("http://", "", 1);
        let went = agent
            .text("browser_navigate", json!({ "url": typed, "observe": "none" }))
            .await;
        let (went, _) = went.split_once("\n\n").unwrap_or((&went, ""));
        let went: Value = serde_json::from_str(went).unwrap();
        assert_eq!(went["url"], h.url(PAGE), "{went}");

        // The calls went through the relay's scheduler: its session knows them.
        let known = relay.get(&format!("/api/sessions/{session}")).await;
        assert_eq!(known["sessionId"], session.as_str(), "{known}");
        assert_eq!(known["clientId"], "mcp-worker", "{known}");

        // A second MCP session has a Tether session of its own.
        let mut other = McpClient::http(&relay.http("/mcp"), Some(ORCHESTRATOR))
            .await
            .unwrap();
        let none = other.call("browser_snapshot", json!({})).await;
        assert_eq!(none["ok"]["isError"], true, "{none}");
        let theirs = other
            .call("browser_snapshot", json!({ "sessionId": session, "tabId": tab }))
            .await;
        assert_eq!(theirs["ok"]["isError"], false, "{theirs}");

        // Ending the MCP session ends its own Tether session and closes its tab.
        agent.end().await;
        wait_completed(&relay, &session).await;
        wait_twin_drops(&relay, tab).await;
        other.close().await;
    });
}

/// Waits until the twin of `mcp-worker` no longer lists `tab`.
async fn wait_twin_drops(relay: &TestRelay, tab: i64) {
    let filter = json!({ "clientId": "mcp-worker" });
    relay
        .wait_until(filter, JOIN_WITHIN, || async {
            let twin = relay.get("/api/twin/mcp-worker").await;
            let tabs = twin["tabs"].as_array().cloned().unwrap_or_default();
            (!tabs.iter().any(|t| t["tabId"] == tab)).then_some(())
        })
        .await
}

/// Waits until the relay's session `session` completed (ended by `session_stop`).
async fn wait_completed(relay: &TestRelay, session: &str) {
    let path = format!("/api/sessions/{session}");
    relay
        .wait_until(json!({ "sessionId": session }), JOIN_WITHIN, || async {
            (relay.get(&path).await["status"] == "completed").then_some(())
        })
        .await
}

#[test]
fn mcp_refuses_wrong_tokens_and_foreign_hosts() {
    block_on(async {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let url = relay.http("/mcp");
        for (token, status, code) in [
            (None, 401, "UNAUTHORIZED"),
            (Some("wrong"), 401, "UNAUTHORIZED"),
            (Some(HOST), 403, "FORBIDDEN"),
        ] {
            let refused = McpClient::http(&url, token).await.err().expect("refused");
            assert_eq!(refused["code"], status, "{token:?}: {refused}");
            assert!(
                refused["message"].as_str().unwrap().contains(code),
                "{token:?}: {refused}"
            );
        }
        // DNS rebinding: a page elsewhere that reaches this relay by a name of its own.
        let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
        for (header, value) in [("host", "rebound.example"), ("origin", "http://rebound.example")] {
            let response = tether_tests::client::own_http()
                .post(&url)
                .bearer_auth(ORCHESTRATOR)
                .header(header, value)
                .header("accept", "application/json, text/event-stream")
                .json(&initialize)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status().as_u16(), 403, "{header}: {value}");
        }
    });
}

#[test]
fn a_tool_call_with_no_browser_online_says_what_to_do() {
    block_on(async {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let mut agent = McpClient::http(&relay.http("/mcp"), Some(ORCHESTRATOR))
            .await
            .unwrap();
        let answer = agent
            .call("browser_navigate", json!({ "url": "https://example.com/" }))
            .await;
        assert_eq!(answer["ok"]["isError"], true, "{answer}");
        let text = answer["ok"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("NO_CLIENT_SELECTED: "), "{text}");
        agent.close().await;
    });
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so read after its closing paren.
        let after = &stat[stat.rfind(')').unwrap_or(0) + 1..];
        if after.split_whitespace().nth(1) == Some(&pid.to_string()) {
            children.push(child);
        }
    }
    children
}

/// Whether `pid` still runs (a zombie has ended).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat[stat.rfind(')').unwrap_or(0) + 1..]
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn tether_host_mcp_runs_its_own_chromium_and_leaves_nothing_behind() {
    block_on(async {
        let pages = fixtures::Server::start().await;
        let mut agent = McpClient::stdio(&binary("tether-host"), &["mcp"]).await.unwrap();
        let pid = agent.connected["pid"].as_u64().unwrap() as u32;
        let chromium = children_of(pid);
        assert!(!chromium.is_empty(), "tether-host mcp launched no Chromium");

        agent
            .text("browser_navigate", json!({ "url": pages.url(PAGE) }))
            .await;
        let page = agent.text("browser_snapshot", json!({})).await;
        let field = ref_named(&page, "Email");
        let typed = agent
            .text(
                "browser_type",
                json!({ "ref": field, "text": "grace@example.com" }),
            )
            .await;
        assert!(
            typed.contains("grace@example.com"),
            "what the typing changed: {typed}"
        );
        let shot = agent.call("browser_screenshot", json!({ "maxWidth": 400 })).await;
        let image = shot["ok"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "image")
            .cloned();
        let png = base64::engine::general_purpose::STANDARD
            .decode(image.expect("an image")["data"].as_str().unwrap())
            .unwrap();
        assert_eq!(image::load_from_memory(&png).unwrap().width(), 400);

        // The SDK ends the server's stdin: it exits by itself (no signal) and closes Chromium.
        let ended = agent.close().await;
        assert_eq!(ended, json!({ "code": 0, "signal": null }));
        for child in chromium {
            assert!(!running(child), "Chromium {child} outlived tether-host mcp");
        }
    });
}

#[test]
fn tether_host_mcp_serves_through_a_relay() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let _worker = relay.start_worker(h, "stdio-worker");
        relay.wait_online("stdio-worker", JOIN_WITHIN).await;
        let host = binary("tether-host");
        let ws = format!("ws://{}", relay.addr);
        let mut agent = McpClient::stdio(&host, &["mcp", "--relay", &ws, "--token", ORCHESTRATOR])
            .await
            .unwrap();
        agent
            .text("browser_navigate", json!({ "url": h.url(PAGE) }))
            .await;
        let gist = agent.call("browser_snapshot", json!({ "detail": "gist" })).await;
        let (session, page) = session_named(&gist);
        assert!(page.contains("Garden shop"), "{page}");
        let known = relay.get(&format!("/api/sessions/{session}")).await;
        assert_eq!(known["clientId"], "stdio-worker", "{known}");
        let shot = agent.call("browser_screenshot", json!({})).await;
        assert!(
            shot["ok"]["content"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["type"] == "image"),
            "{shot}"
        );
        agent.close().await;
        // Its own session was ended before the process exited.
        let ended = relay.get(&format!("/api/sessions/{session}")).await;
        assert_eq!(ended["status"], "completed", "{ended}");

        // A wrong token: the call is an error saying so, not a hang.
        let mut refused = McpClient::stdio(&host, &["mcp", "--relay", &ws, "--token", HOST])
            .await
            .unwrap();
        let answer = refused
            .call("browser_navigate", json!({ "url": h.url(PAGE) }))
            .await;
        let text = answer["ok"]["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.starts_with("FORBIDDEN: "), "{answer}");
        refused.close().await;
    });
}

#[test]
fn tether_host_mcp_names_the_secrets_it_holds_in_its_tools() {
    block_on(async {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("secrets.json");
        let given = r#"{"site-password": {"value": "Mcp-S3cret!", "origins": ["https://login.example"]}}"#;
        std::fs::write(&file, given).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut agent = McpClient::stdio(
            &binary("tether-host"),
            &["mcp", "--secrets", file.to_str().unwrap()],
        )
        .await
        .unwrap();
        let tools = agent.tools().await;
        assert_names_secrets(&tools, "site-password", "Mcp-S3cret!");
        let listed = agent.text("browser_secrets", json!({})).await;
        assert!(
            listed.contains("site-password") && !listed.contains("Mcp-S3cret!"),
            "{listed}"
        );
        agent.close().await;
    });
}

/// docs/protocol.md §18 over the relay's `/mcp`: the tools that take a secret name those the
/// browser holds that the MCP session would run on, as `tether-host mcp` does; never a value.
#[test]
fn the_relays_mcp_names_the_secrets_of_its_browser() {
    run_worker(|h| async move {
        const VALUE: &str = "Relay-Mcp-S3cret!";
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let secrets = tether_host::engine::secrets::Secrets::default();
        secrets
            .set(vec![("shop-login".into(), VALUE.into(), vec![h.url("")])])
            .unwrap();
        let _worker = relay.start_worker_with(h.browser_ws(), "secret-mcp", |w| w.secrets = secrets);
        let mut agent = agent_of(&relay, "secret-mcp").await;
        let tools = agent.tools().await;
        assert_names_secrets(&tools, "shop-login", VALUE);
        agent.close().await;
    });
}

/// docs/protocol.md §20 over MCP: a tool that changes the page settles by default (its
/// description says so), so the reply shows what the page rendered after its request answered.
#[test]
fn an_mcp_click_replies_with_the_settled_page() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let _worker = relay.start_worker(h, "settle-mcp");
        let mut agent = agent_of(&relay, "settle-mcp").await;
        let tools = agent.tools().await;
        let click = tools.iter().find(|t| t["name"] == "browser_click").unwrap();
        assert!(
            click["description"].as_str().unwrap().contains("settled"),
            "{click}"
        );
        let opened = agent
            .text(
                "browser_navigate",
                json!({ "url": h.url("/fixtures/settle.html") }),
            )
            .await;
        let save = ref_named(&opened, "Save");
        let replied = agent.text("browser_click", json!({ "ref": save })).await;
        assert!(replied.contains("Saved OK"), "{replied}");
        agent.close().await;
    });
}

/// docs/protocol.md §11: a link with target=_blank makes its new tab the current one, and the
/// reply says so; a ref read in the first tab acts there with its tabId, and `browser_tabs`
/// `select` makes the first tab current again.
#[test]
fn a_tab_an_action_opened_is_named_and_the_first_one_can_be_selected_again() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let _worker = relay.start_worker(h, "tabs-mcp");
        let mut agent = agent_of(&relay, "tabs-mcp").await;
        let opened = agent
            .text(
                "browser_navigate",
                json!({ "url": h.url("/fixtures/popups.html") }),
            )
            .await;
        let first: Value =
            serde_json::from_str(opened.split_once("\n\n").map_or(&*opened, |(j, _)| j)).unwrap();
        let first = first["tabId"].as_i64().unwrap();
        let link = ref_named(&opened, "Open article in a new tab");
        let button = ref_named(&opened, "window.open");
        let clicked = agent.call("browser_click", json!({ "ref": link })).await;
        let texts: Vec<&str> = clicked["ok"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect();
        let said = texts.last().unwrap();
        assert!(
            said.starts_with("The current tab is now ")
                && said.contains(&format!("Tab {first} is still open")),
            "{clicked}"
        );
        // Calls without tabId go to the new tab.
        let page = agent.text("browser_snapshot", json!({})).await;
        assert!(!page.starts_with(&format!("[tab {first}]")), "{page}");
        // Refs are the session's: the first tab's ref names nothing in the new tab's page.
        let elsewhere = agent.call("browser_click", json!({ "ref": button })).await;
        assert_eq!(elsewhere["ok"]["isError"], true, "{elsewhere}");
        let text = elsewhere["ok"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("not from the page now in this tab"), "{text}");
        // The first tab's ref, with its tabId, acts there.
        let pressed = agent
            .call(
                "browser_click",
                json!({ "ref": button, "tabId": first, "observe": "none" }),
            )
            .await;
        assert_eq!(pressed["ok"]["isError"], false, "{pressed}");
        // select makes the first tab current again.
        let selected = agent
            .call("browser_tabs", json!({ "action": "select", "tabId": first }))
            .await;
        assert_eq!(selected["ok"]["isError"], false, "{selected}");
        let page = agent.text("browser_snapshot", json!({})).await;
        assert!(page.starts_with(&format!("[tab {first}]")), "{page}");
        agent.close().await;
    });
}
