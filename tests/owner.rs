//! The browser's owner in control (docs/protocol.md §12, §18), through the extension's popup
//! and options page as they would use them: sites they block, a Stop per session, approving
//! each action themselves, a secret an agent types without seeing it, and a tab an agent hands
//! them to act in.
//! The owner's settings hold for the whole browser, so this binary has a browser of its own
//! and runs its scenarios one after the other, never beside other tests.
//!
//! `TETHER_DOC_SHOTS=1` also writes `docs/owner-panel.png` (the README links it).

use std::time::Duration;

use serde_json::{json, Value};
use tether_host::cdp::connection::CdpConnection;
use tether_protocol::ErrorCode;
use tether_tests::cdp::RawSession;
use tether_tests::client::{recv_type, subscribed};
use tether_tests::extension::EXTENSION_ID;
use tether_tests::person::{click, doc_shot, gone, shown, shown_with, type_into};
use tether_tests::relay::ORCHESTRATOR;
use tether_tests::{run_extension, run_worker, Harness};

#[test]
fn blocked_sites_hold_in_worker_mode() {
    run_worker(blocked_sites);
}

#[test]
fn the_owner_blocks_sites_stops_a_session_approves_actions_and_keeps_secrets() {
    run_extension(|h| async move {
        blocked_sites(h).await;
        stop_one_session(h).await;
        approve_each_action(h).await;
        owner_secrets(h).await;
        hand_back_from_the_popup(h).await;
    });
}

/// An agent hands the owner a tab; the popup shows what it asks, and Done (with a note) ends
/// the action.
async fn hand_back_from_the_popup(h: &'static Harness) {
    let s = "owner-takes-the-wheel";
    let tab = h.start(s, "/fixtures/form.html").await;
    let (cdp, _) = h.extension().service_worker().await;
    let (popup, target) = open_extension_page(&cdp, "popup/popup.html").await;
    let params = json!({ "tabId": tab, "message": "Please accept the terms yourself" });
    let handing = tokio::spawn(h.act(s, "browser_handoff", params));
    let card = popup
        .eval_checked(&shown_with("#ask-list li[data-handoff]", "accept the terms"))
        .await;
    assert!(card.as_str().unwrap().contains(&format!("tab {tab}")), "{card}");
    type_into(&popup, "li[data-handoff] input.note", "accepted").await;
    click(&popup, "li[data-handoff] .done").await;
    let handed = handing.await.unwrap();
    let output = handed.result.expect("handed back").value();
    assert_eq!(output, json!({ "handedBack": true, "note": "accepted" }));
    popup.eval_checked(&gone("li[data-handoff]")).await;
    h.ok(s, "session_stop", json!({})).await;
    cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
        .await
        .unwrap();
}

/// Waits (bounded) until the host says it holds a secret named `name`, or none when `None`.
async fn host_holds(h: &Harness, name: Option<&str>) {
    let (cdp, worker) = h.extension().service_worker().await;
    let worker = RawSession {
        cdp: &cdp,
        session: worker,
    };
    let wanted = serde_json::to_string(&name).unwrap();
    let check = format!(
        "new Promise(done => {{ const check = () => {{ const names = (tetherState().secrets ?? []).map(s => s.name); \
           ({wanted} === null ? names.length === 0 : names.includes({wanted})) ? done(true) : setTimeout(check, 10); }}; check(); }})"
    );
    tokio::time::timeout(Duration::from_secs(20), worker.eval_checked(&check))
        .await
        .expect("the host applied the owner's secrets");
}

async fn owner_secrets(h: &'static Harness) {
    const VALUE: &str = "Owner-S3cret!";
    let (cdp, _) = h.extension().service_worker().await;
    let (options, target) = open_extension_page(&cdp, "options/options.html").await;
    // Its script runs after its form shows: wait for the page to say it is ready.
    options.eval_checked(&shown("html[data-ready] #save")).await;
    type_into(&options, "#name", "site-password").await;
    type_into(&options, "#value", VALUE).await;
    type_into(&options, "#origins", &h.url("")).await;
    click(&options, "#save").await;
    options
        .eval_checked(&shown_with("#secrets tr", "site-password"))
        .await;
    host_holds(h, Some("site-password")).await;

    let s = "owner-secrets";
    let listed = h.ok(s, "browser_secrets", json!({})).await;
    assert_eq!(listed["secrets"][0]["name"], "site-password", "{listed}");
    let tab = h.start(s, "/fixtures/login.html").await;
    let typed = json!({ "tabId": tab, "xpath": "//input[@name='password']", "secret": "site-password" });
    let mut seen = vec![h.ok(s, "browser_type", typed).await];
    seen.push(h.ok(s, "browser_snapshot", json!({ "tabId": tab })).await);
    assert!(seen[1]["markdown"]
        .as_str()
        .unwrap()
        .contains("<secret:site-password>"));
    let before = tether_tests::fixtures::hits("login");
    seen.push(
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='sign-in']" }),
        )
        .await,
    );
    tether_tests::fixtures::hit_times("login", before + 1).await;
    let posted = tether_tests::fixtures::logins().pop().unwrap();
    assert!(
        posted.contains("password=Owner-S3cret%21"),
        "the site received it: {posted}"
    );
    for result in &seen {
        assert!(!result.to_string().contains(VALUE), "a result shows it: {result}");
    }
    h.ok(s, "session_stop", json!({})).await;

    // The owner removes it: the host holds it no more.
    click(&options, "#secrets tr[data-name='site-password'] button").await;
    host_holds(h, None).await;
    let _ = cdp
        .call(None, "Target.closeTarget", json!({ "targetId": target }))
        .await;
}

async fn blocked_sites(h: &'static Harness) {
    let s = "blocked-sites";
    let tab = h.start(s, "/fixtures/form.html").await;
    h.block_sites(&["*://127.0.0.1/fixtures/article.html"]).await;
    let article = h.url("/fixtures/article.html");
    let navigate = json!({ "tabId": tab, "url": article });
    let e = h
        .fails_with(
            ErrorCode::ForbiddenTarget,
            s,
            "browser_navigate",
            navigate.clone(),
        )
        .await;
    assert!(e.message.contains("blocked sites"), "{}", e.message);
    // The owner unblocks it: the same navigation goes through.
    h.block_sites(&[]).await;
    h.ok(s, "browser_navigate", navigate).await;
    h.ok(s, "session_stop", json!({})).await;
}

/// A page of the extension (`popup/popup.html`, `options/options.html`), open in a tab of the
/// browser as its owner would see it; the tab's target id.
async fn open_extension_page<'c>(cdp: &'c CdpConnection, page: &str) -> (RawSession<'c>, Value) {
    let target = cdp
        .call(None, "Target.createTarget", json!({ "url": "about:blank" }))
        .await
        .unwrap();
    let session = RawSession::attach(cdp, &target["targetId"]).await;
    // Navigated once attached: an evaluation never meets the blank page's ending context.
    let url = format!("chrome-extension://{EXTENSION_ID}/{page}");
    session.call("Page.navigate", json!({ "url": url })).await;
    (session, target["targetId"].clone())
}

async fn stop_one_session(h: &'static Harness) {
    let browser = h.extension();
    let (stopped, kept) = ("owner-stops", "owner-keeps");
    let tab = h.start(stopped, "/fixtures/form.html").await;
    let other = h.start(kept, "/fixtures/form.html").await;
    // An action that only the Stop can end, running when the person presses it.
    let waiting = tokio::spawn(h.act(
        stopped,
        "browser_wait_for",
        json!({ "tabId": tab, "text": "a text this page never shows", "timeoutMs": 25_000 }),
    ));
    let relay = &browser.relay;
    let running = || async {
        let state = relay.get(&format!("/api/sessions/{stopped}")).await;
        state["inFlight"].is_string().then_some(())
    };
    relay
        .wait_until(json!({ "sessionId": stopped }), Duration::from_secs(20), running)
        .await;

    let (cdp, _) = browser.service_worker().await;
    let (popup, target) = open_extension_page(&cdp, "popup/popup.html").await;
    click(&popup, &format!("li[data-session='{stopped}'] button")).await;
    let error = waiting
        .await
        .unwrap()
        .error
        .expect("the Stop ends the running action");
    assert_eq!(error.code, ErrorCode::UserDenied, "{}", error.message);
    popup
        .eval_checked(&gone(&format!("li[data-session='{stopped}']")))
        .await;
    popup.eval_checked(&shown_with("#sessions", kept)).await;
    // The other session goes on, its actions listed under it.
    h.ok(kept, "browser_xpath_scan", json!({ "tabId": other })).await;
    let line = popup
        .eval_checked(&shown_with(
            &format!("li[data-session='{kept}'] ul.latest li.ok"),
            "browser_xpath_scan",
        ))
        .await;
    assert!(line.as_str().unwrap().starts_with('✓'), "{line}");
    talk_in_the_popup(h, &popup, kept).await;
    let clip = json!({ "x": 0, "y": 0, "width": 330, "height": 720, "scale": 1 });
    doc_shot(&popup, "owner-panel.png", Some(clip)).await;
    h.ok(kept, "session_stop", json!({})).await;
    cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
        .await
        .unwrap();
}

/// The agent's words show under its session in the popup, and the owner answers there.
async fn talk_in_the_popup(h: &'static Harness, popup: &RawSession<'_>, session: &str) {
    let relay = &h.extension().relay;
    let mut agent = subscribed(&relay.addr.to_string(), json!({ "sessionId": session })).await;
    let said = tether_tests::client::own_http()
        .post(relay.http(&format!("/api/sessions/{session}/messages")))
        .bearer_auth(ORCHESTRATOR)
        .json(&json!({ "text": "Comparing the two offers now" }))
        .send()
        .await
        .unwrap();
    assert_eq!(said.status().as_u16(), 200);
    let here = format!("li[data-session='{session}']");
    popup
        .eval_checked(&shown_with(
            &format!("{here} .talk.agent"),
            "Comparing the two offers",
        ))
        .await;
    type_into(popup, &format!("{here} form.say input"), "Take the cheaper one").await;
    click(popup, &format!("{here} form.say button")).await;
    let answer = recv_type(&mut agent, "user.message").await;
    assert_eq!(
        answer["payload"],
        json!({ "sessionId": session, "text": "Take the cheaper one" })
    );
}

async fn approve_each_action(h: &'static Harness) {
    let browser = h.extension();
    let s = "owner-approves";
    browser.confirm_every_action(true).await;
    let (cdp, _) = browser.service_worker().await;
    let (popup, target) = open_extension_page(&cdp, "popup/popup.html").await;

    let url = h.url("/fixtures/form.html");
    let starting = tokio::spawn(h.act(s, "session_start", json!({ "url": url })));
    popup
        .eval_checked(&shown_with("#ask-list li", "session_start"))
        .await;
    click(&popup, "#ask-list li .approve").await;
    let started = starting.await.unwrap();
    let tab = started.result.expect("approved, it ran").value()["tabId"].clone();

    let scanning = tokio::spawn(h.act(s, "browser_xpath_scan", json!({ "tabId": tab })));
    popup
        .eval_checked(&shown_with("#ask-list li", "browser_xpath_scan"))
        .await;
    click(&popup, "#ask-list li .deny").await;
    let denied = scanning.await.unwrap().error.expect("denied, it did not run");
    assert_eq!(denied.code, ErrorCode::UserDenied, "{}", denied.message);

    // The owner stops asking: actions run at once again (stopping never asks).
    browser.confirm_every_action(false).await;
    h.ok(s, "browser_xpath_scan", json!({ "tabId": tab })).await;
    h.ok(s, "session_stop", json!({})).await;
    cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
        .await
        .unwrap();
}
