//! The user's own browser, end to end: orchestrator -> relay -> tether-host (started by
//! Chromium through native messaging) -> the extension -> chrome.debugger -> the tab. One
//! browser for this file; each test has its own session and tab.

use serde_json::{json, Value};
use tether_tests::client::download;
use tether_tests::extension::{ExtensionBrowser, CONTROL_UI};
use tether_tests::find_element as find;
use tokio::sync::OnceCell;

static BROWSER: OnceCell<ExtensionBrowser> = OnceCell::const_new();

fn run<F, Fut>(test: F)
where
    F: FnOnce(&'static ExtensionBrowser) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    tether_tests::shared(&BROWSER, ExtensionBrowser::launch, test);
}

#[test]
fn the_catalog_runs_in_the_users_browser_in_a_background_group() {
    run(|b| async move {
        let meta = b.get("/api/extension/extension-list").await;
        let me = meta["clients"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["clientId"] == b.client_id.as_str())
            .unwrap();
        assert!(me["meta"]["browser"].as_str().unwrap().contains("Chrome"), "{me}");

        // What the user is looking at, before: a window and its active tab.
        let before = b.get(&format!("/api/twin/{}", b.client_id)).await;
        let active_in = |twin: &Value, window: &Value| {
            let tabs = twin["tabs"].as_array().unwrap().clone();
            tabs.into_iter()
                .find(|t| t["active"] == true && t["windowId"] == *window)
                .map(|t| t["tabId"].clone())
        };
        let user_window = before["tabs"][0]["windowId"].clone();
        let user_tab = active_in(&before, &user_window);
        assert!(user_tab.is_some(), "{before}");

        let s = "ext-catalog";
        let started = b
            .ok(
                s,
                "session_start",
                json!({ "url": b.url("/fixtures/form.html"), "groupTitle": "Agent" }),
            )
            .await;
        let tab = started["tabId"].as_i64().unwrap();
        assert!(started["groupId"].as_i64().is_some(), "{started}");
        b.ok(s, "browser_wait_for_loaded", json!({ "tabId": tab })).await;

        // In the twin: in its group titled as asked, in the background: the user's window
        // still shows the user's tab.
        let twin = b.get(&format!("/api/twin/{}", b.client_id)).await;
        let mine = twin["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tabId"] == tab)
            .expect("the session tab in the twin");
        assert_eq!(
            active_in(&twin, &user_window),
            user_tab,
            "the user's tab is still in front"
        );
        assert_ne!(
            mine["windowId"], user_window,
            "the session tab is not in the user's window"
        );
        let group = twin["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["groupId"] == mine["groupId"])
            .expect("its group");
        assert_eq!(group["title"], "Agent");

        let scan = b
            .ok(
                s,
                "browser_xpath_scan",
                json!({ "tabId": tab, "scope": "document" }),
            )
            .await;
        let elements = scan["elements"].as_array().unwrap();
        let name = find(elements, "input", "name")["xpath"].clone();
        let go = find(elements, "button", "go")["xpath"].clone();
        b.ok(
            s,
            "browser_type",
            json!({ "tabId": tab, "xpath": name, "text": "Grace" }),
        )
        .await;
        b.ok(s, "browser_click", json!({ "tabId": tab, "xpath": go }))
            .await;
        let html = b.ok(s, "browser_get_html", json!({ "tabId": tab })).await;
        let (_, bytes) = download(html["url"].as_str().unwrap()).await;
        let page = String::from_utf8(bytes).unwrap();
        assert!(
            page.contains(r#"<span id="submitted">Grace</span>"#),
            "the React-style form took real input"
        );

        let shot = b.ok(s, "browser_screenshot", json!({ "tabId": tab })).await;
        let (kind, png) = download(shot["url"].as_str().unwrap()).await;
        assert_eq!(kind, "image/png");
        assert!(png.starts_with(b"\x89PNG"));
        assert!(shot["width"].as_u64().unwrap() > 100);

        let nav = b
            .ok(
                s,
                "browser_navigate",
                json!({ "tabId": tab, "url": b.url("/fixtures/article.html") }),
            )
            .await;
        assert_eq!(nav["status"], "complete");
        let article = b
            .ok(s, "browser_readability_extract", json!({ "tabId": tab }))
            .await;
        assert!(!article["text"].as_str().unwrap().is_empty());

        b.ok(s, "session_stop", json!({})).await;
        let twin = b.get(&format!("/api/twin/{}", b.client_id)).await;
        assert!(
            twin["tabs"].as_array().unwrap().iter().all(|t| t["tabId"] != tab),
            "session_stop closed the tab, and the twin followed"
        );
    });
}

#[test]
fn a_page_of_the_control_ui_is_refused() {
    run(|b| async move {
        let url = b.url(&format!("{CONTROL_UI}form.html"));
        let result = b
            .act("ext-control-ui", "session_start", json!({ "url": url }))
            .await;
        assert_eq!(result["error"]["code"], "FORBIDDEN_TARGET", "{result}");
        let result = b
            .act(
                "ext-control-ui",
                "session_start",
                json!({ "url": "chrome://settings" }),
            )
            .await;
        assert_eq!(result["error"]["code"], "FORBIDDEN_TARGET", "{result}");
    });
}

#[test]
fn a_session_acts_only_on_its_own_tabs() {
    run(|b| async move {
        let theirs = b
            .ok(
                "ext-owner-a",
                "session_start",
                json!({ "url": b.url("/fixtures/form.html") }),
            )
            .await;
        let result = b
            .act(
                "ext-owner-b",
                "browser_xpath_scan",
                json!({ "tabId": theirs["tabId"] }),
            )
            .await;
        assert_eq!(result["error"]["code"], "TAB_NOT_IN_SESSION", "{result}");
        b.ok("ext-owner-a", "session_stop", json!({})).await;
    });
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next twin pushed to `ws` for which `check` holds; bounded.
async fn next_twin_where(ws: &mut Ws, check: impl Fn(&Value) -> bool) -> Value {
    use futures::StreamExt;
    let wait = async {
        while let Some(Ok(message)) = ws.next().await {
            let envelope: Value = serde_json::from_str(message.to_text().unwrap()).unwrap();
            if envelope["type"] == "twin_state_sync" && check(&envelope["payload"]) {
                return envelope["payload"].clone();
            }
        }
        panic!("the relay closed the connection");
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), wait)
        .await
        .expect("the twin followed")
}

fn shows(twin: &Value, tab: i64, url_end: &str) -> bool {
    twin["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["tabId"] == tab && t["url"].as_str().unwrap().ends_with(url_end))
}

#[test]
fn the_twin_follows_a_tab_opening_changing_and_closing() {
    run(|b| async move {
        use futures::SinkExt;
        let url = format!(
            "ws://{}/ws?token={}",
            b.relay.addr,
            tether_tests::relay::ORCHESTRATOR
        );
        let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        for (kind, payload) in [
            ("relay.join", json!({ "role": "orchestrator" })),
            ("subscribe", json!({ "clientId": b.client_id })),
        ] {
            let text = json!({ "v": "1", "type": kind, "id": kind, "payload": payload }).to_string();
            ws.send(tokio_tungstenite::tungstenite::Message::Text(text.into()))
                .await
                .unwrap();
        }
        let s = "ext-twin";
        let started = b
            .ok(s, "session_start", json!({ "url": b.url("/fixtures/form.html") }))
            .await;
        let tab = started["tabId"].as_i64().unwrap();
        next_twin_where(&mut ws, |twin| shows(twin, tab, "/fixtures/form.html")).await;
        b.ok(s, "browser_debugger_attach", json!({ "tabId": tab })).await;
        b.ok(
            s,
            "browser_navigate",
            json!({ "tabId": tab, "url": b.url("/fixtures/article.html") }),
        )
        .await;
        next_twin_where(&mut ws, |twin| shows(twin, tab, "/fixtures/article.html")).await;
        b.ok(s, "session_stop", json!({})).await;
        next_twin_where(&mut ws, |twin| !shows(twin, tab, "")).await;
    });
}
