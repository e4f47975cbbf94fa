//! The relay's HTTP routes over a real socket on 127.0.0.1: health, the catalog, and who may
//! call what.

mod common;

use common::{start_relay, HOST, METRICS, OBSERVER, ORCHESTRATOR};
use serde_json::Value;
use tether_relay::stores::artifacts::Limits;

/// Starts a relay on a free port; returns its base URL.
async fn relay() -> String {
    format!("http://{}", start_relay(Limits::default()).await)
}

async fn get(url: &str, token: Option<&str>) -> (u16, String) {
    let mut request = tether_tests::client::own_http().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn health_needs_no_token() {
    let base = relay().await;
    let (status, body) = get(&format!("{base}/healthz"), None).await;
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["status"], "ok");
}

#[tokio::test]
async fn orchestrator_routes_refuse_missing_wrong_and_cross_role_tokens() {
    let base = relay().await;
    let routes = [
        "/api/actions",
        "/api/actions.md",
        "/api/agent.md",
        "/api/extension/extension-list",
        "/api/sessions/s1",
        "/api/sessions/s1/events",
        "/api/twin/nobody",
        "/metrics",
    ];
    for route in routes {
        let url = format!("{base}{route}");
        for (token, status, code) in [
            (None, 401, "UNAUTHORIZED"),
            (Some("not-a-token"), 401, "UNAUTHORIZED"),
            (Some(HOST), 403, "FORBIDDEN"),
        ] {
            let (got, body) = get(&url, token).await;
            assert_eq!(got, status, "{route} with {token:?}: {body}");
            let error: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(error["code"], code);
            assert!(!error["message"].as_str().unwrap().is_empty());
        }
        // An event stream never ends, and an unknown twin is 404: both are past the door.
        if route.ends_with("/events") || route.contains("/twin/") {
            continue;
        }
        assert_eq!(get(&url, Some(ORCHESTRATOR)).await.0, 200, "{route}");
        // A token in the URL is for where a header cannot be set (/ws, the events stream).
        assert_eq!(
            get(&format!("{url}?token={ORCHESTRATOR}"), None).await.0,
            401,
            "{route}"
        );
    }
    let client = tether_tests::client::own_http();
    for token in [HOST, "not-a-token"] {
        let bind = client
            .post(format!("{base}/api/sessions/s1/bind"))
            .bearer_auth(token)
            .json(&serde_json::json!({ "clientId": "x" }))
            .send()
            .await
            .unwrap();
        assert!([401, 403].contains(&bind.status().as_u16()));
    }
}

#[tokio::test]
async fn the_metrics_token_reads_the_metrics_and_nothing_else() {
    let base = relay().await;
    let (status, body) = get(&format!("{base}/metrics"), Some(METRICS)).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("# TYPE tether_hosts_online gauge"), "{body}");
    for route in [
        "/api/actions",
        "/api/agent.md",
        "/api/extension/extension-list",
        "/api/sessions/s1",
        "/api/sessions/s1/events",
        "/api/sessions/s1/screen.md",
        "/api/twin/nobody",
    ] {
        let (status, body) = get(&format!("{base}{route}"), Some(METRICS)).await;
        assert_eq!(status, 403, "{route}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["code"], "FORBIDDEN", "{route}");
        assert!(
            error["message"].as_str().unwrap().contains("metrics token"),
            "{body}"
        );
    }
    let client = tether_tests::client::own_http();
    let act = client
        .post(format!("{base}/api/browser/action"))
        .bearer_auth(METRICS)
        .json(&serde_json::json!({ "sessionId": "s1", "actionName": "session_start" }))
        .send()
        .await
        .unwrap();
    assert_eq!(act.status().as_u16(), 403);
    let mcp = client
        .post(format!("{base}/mcp"))
        .bearer_auth(METRICS)
        .header("accept", "application/json, text/event-stream")
        .json(&serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .send()
        .await
        .unwrap();
    assert_eq!(mcp.status().as_u16(), 403);
    let upload = client
        .put(format!("{base}/artifacts"))
        .bearer_auth(METRICS)
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(upload.status().as_u16(), 403);
}

#[tokio::test]
async fn the_catalog_lists_every_action_with_its_descriptor() {
    let base = relay().await;
    let (_, body) = get(&format!("{base}/api/actions"), Some(ORCHESTRATOR)).await;
    let catalog: Value = serde_json::from_str(&body).unwrap();
    let actions = catalog["actions"].as_array().unwrap();
    let names: Vec<&str> = actions.iter().map(|a| a["name"].as_str().unwrap()).collect();
    let expected: Vec<&str> = tether_protocol::ActionName::ALL
        .iter()
        .map(|a| a.as_str())
        .collect();
    assert_eq!(names, expected);
    let click = actions.iter().find(|a| a["name"] == "browser_click").unwrap();
    assert_eq!(click["category"], "interact");
    assert_eq!(click["params"]["tabId"]["required"], true);
    assert_eq!(
        click["params"]["x"]["type"], "number",
        "a point, in place of xpath"
    );
    let typing = actions.iter().find(|a| a["name"] == "browser_type").unwrap();
    assert_eq!(typing["params"]["text"]["type"], "string");
    assert_eq!(
        typing["params"]["secret"]["type"], "string",
        "a secret's name, in place of text"
    );
    assert_eq!(
        typing["params"]["ref"]["type"], "string",
        "a ref, in place of xpath"
    );
}

#[tokio::test]
async fn the_markdown_catalog_is_written_for_an_agent() {
    let base = relay().await;
    let response = tether_tests::client::own_http()
        .get(format!("{base}/api/actions.md"))
        .bearer_auth(ORCHESTRATOR)
        .send()
        .await
        .unwrap();
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(content_type.starts_with("text/markdown"), "{content_type}");
    let md = response.text().await.unwrap();
    for name in tether_protocol::ActionName::ALL {
        assert!(md.contains(&format!("## `{}`", name.as_str())), "{name} missing");
    }
    // Ready-to-run curl lines point at the relay the reader reached.
    assert!(
        md.contains(&format!("curl -s {base}/api/browser/action")),
        "{}",
        &md[..400]
    );
    assert!(md.contains("\"actionName\":\"browser_click\""));
}

#[tokio::test]
async fn the_agent_docs_say_how_to_connect_without_a_token_in_them() {
    let base = relay().await;
    let (status, md) = get(&format!("{base}/api/agent.md"), Some(ORCHESTRATOR)).await;
    assert_eq!(status, 200);
    assert!(md.contains(&format!("{base}/mcp")), "{md}");
    assert!(md.contains("$TETHER_ORCHESTRATOR_TOKEN"));
    assert!(!md.contains(ORCHESTRATOR), "a token in the docs");
    assert!(md.contains("| `browser_snapshot` |"));
}

#[tokio::test]
async fn the_observer_token_reads_and_binds_but_never_dispatches() {
    let base = relay().await;
    for route in [
        "/api/actions",
        "/api/extension/extension-list",
        "/api/sessions/s1",
        "/api/sessions/s1/screen.md",
    ] {
        let (status, body) = get(&format!("{base}{route}"), Some(OBSERVER)).await;
        assert_ne!(status, 401, "{route}: {body}");
        assert_ne!(status, 403, "{route}: {body}");
    }
    let http = tether_tests::client::own_http();
    let bind = http
        .post(format!("{base}/api/sessions/s1/bind"))
        .bearer_auth(OBSERVER)
        .json(&serde_json::json!({ "clientId": "nobody" }))
        .send()
        .await
        .unwrap();
    assert_ne!(bind.status().as_u16(), 403, "an observer binds");
    for (method, route) in [("POST", "/api/browser/action"), ("POST", "/mcp")] {
        let response = http
            .request(method.parse().unwrap(), format!("{base}{route}"))
            .bearer_auth(OBSERVER)
            .json(&serde_json::json!({ "sessionId": "s1", "actionName": "browser_tabs" }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 403, "{route}");
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["code"], "FORBIDDEN");
        assert!(error["message"].as_str().unwrap().contains("observer"), "{error}");
    }
}

#[tokio::test]
async fn the_console_is_served_without_a_token_and_keeps_to_this_relay() {
    let base = relay().await;
    for (path, kind) in [
        ("/", "text/html"),
        ("/console.js", "text/javascript"),
        ("/console.css", "text/css"),
    ] {
        let response = tether_tests::client::own_http()
            .get(format!("{base}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{path}");
        let headers = response.headers();
        assert!(
            headers["content-type"].to_str().unwrap().starts_with(kind),
            "{path}"
        );
        let policy = headers["content-security-policy"].to_str().unwrap();
        assert!(
            policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"),
            "{policy}"
        );
        let body = response.text().await.unwrap();
        assert!(
            !body.contains(ORCHESTRATOR) && !body.contains(OBSERVER),
            "a token in {path}"
        );
    }
}

/// docs/protocol.md §15: MCP sessions are capped; past the cap an `initialize` is refused with a
/// JSON-RPC error saying so, and the sessions already open keep working.
#[tokio::test]
async fn mcp_sessions_are_capped() {
    let settings = tether_relay::config::Settings {
        mcp_max_sessions: 20,
        ..Default::default()
    };
    let (addr, _) = common::start(settings, tether_relay::stores::artifacts::Limits::default()).await;
    let client = tether_tests::client::own_http();
    let initialize = |id: u32| {
        client
            .post(format!("http://{addr}/mcp"))
            .bearer_auth(ORCHESTRATOR)
            .header("accept", "application/json, text/event-stream")
            .json(
                &serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "cap-test", "version": "1" } } }),
            )
            .send()
    };
    let mut open = Vec::new();
    for id in 0..20 {
        let response = initialize(id).await.unwrap();
        assert_eq!(response.status().as_u16(), 200, "session {id}");
        assert!(response.headers().contains_key("mcp-session-id"));
        open.push(response);
    }
    let refused = initialize(20).await.unwrap();
    assert_eq!(refused.status().as_u16(), 503);
    let error: Value = refused.json().await.unwrap();
    assert_eq!(error["id"], 20, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--mcp-max-sessions"),
        "{error}"
    );
}
