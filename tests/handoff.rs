//! A person takes the wheel (`browser_handoff`, docs/protocol.md §18), end to end: an agent
//! hands a real worker's tab to the person watching the relay's console, which runs in a real
//! headless Chromium and is used with real clicks and typing. Done (with a note), Decline and
//! the handoff's own timeout each end the action as the spec says, and the console shows the
//! request only while it stands. A person's answer outside a handoff is refused. In the live
//! view the person clicks and types into the worker's headless tab, and sees the page change.
//!
//! `TETHER_DOC_SHOTS=1` also writes `docs/handoff.png` (the README links it).

use std::time::Duration;

use serde_json::json;
use tether_host::cdp::connection::CdpConnection;
use tether_tests::cdp::RawSession;
use tether_tests::client::{orchestrator, post_action, recv_type, request, subscribed};
use tether_tests::person::{click, doc_shot, gone, shown, shown_with, signed_in_console, type_into};
use tether_tests::relay::{TestRelay, ORCHESTRATOR};
use tether_tests::{run_extension, run_worker, Harness};

const JOIN_WITHIN: Duration = Duration::from_secs(20);

/// Starts `browser_handoff` in the background; its result.
fn hand_over(
    relay: &TestRelay,
    session: &str,
    params: serde_json::Value,
) -> tokio::task::JoinHandle<serde_json::Value> {
    let (addr, session) = (relay.addr.to_string(), session.to_owned());
    tokio::spawn(async move {
        let body = json!({ "sessionId": session, "actionName": "browser_handoff", "params": params });
        post_action(&addr, ORCHESTRATOR, body).await.1
    })
}

/// A relay with a worker (`client_id`) on the harness's browser, and `session` started on the
/// fixture `page`.
struct Started {
    relay: TestRelay,
    tab: serde_json::Value,
    _worker: tokio::task::JoinHandle<()>,
    _data: tempfile::TempDir,
}

async fn started(h: &Harness, client_id: &str, session: &str, page: &str) -> Started {
    let data = tempfile::tempdir().unwrap();
    let relay = TestRelay::start(data.path(), None);
    let worker = relay.start_worker(h, client_id);
    relay.wait_online(client_id, JOIN_WITHIN).await;
    let url = h.url(&format!("/fixtures/{page}"));
    let tab = relay.ok(session, "session_start", json!({ "url": url })).await["tabId"].clone();
    Started {
        relay,
        tab,
        _worker: worker,
        _data: data,
    }
}

#[test]
fn a_person_takes_the_wheel_from_the_console_and_hands_it_back() {
    run_worker(|h| async move {
        let s = "needs-a-person";
        let Started {
            relay,
            tab,
            _data: data,
            ..
        } = started(h, "handoff-worker", s, "snapshot.html").await;
        let cdp = CdpConnection::connect(h.browser_ws()).await.unwrap();
        let (page, target) = signed_in_console(&cdp, &relay.http("/")).await;

        // Outside a handoff, a person's answer is refused.
        let mut ws = orchestrator(&relay.addr.to_string()).await;
        let answer = json!({ "sessionId": s, "actionId": "none", "outcome": "done" });
        let refused = request(&mut ws, "handoff.answer", "early", answer).await;
        assert_eq!(refused["payload"]["code"], "INVALID_PARAMS", "{refused}");

        // Done, with a note: the agent goes on, and is told what the person wrote.
        let message = "Please log in with your own account, then press Done";
        let done = hand_over(&relay, s, json!({ "tabId": tab, "message": message }));
        let card = page
            .eval_checked(&shown_with("#ask-list [data-handoff]", message))
            .await;
        assert!(card.as_str().unwrap().contains(&format!("tab {tab}")), "{card}");
        page.eval_checked(&shown(&format!("[data-session='{s}'] .status.waiting_for_user")))
            .await;
        type_into(&page, "[data-handoff] input.note", "logged in as ada").await;
        click(&page, "[data-handoff] .done").await;
        let done = done.await.unwrap();
        assert_eq!(done["status"], "success", "{done}");
        assert_eq!(
            done["result"],
            json!({ "handedBack": true, "note": "logged in as ada" })
        );
        page.eval_checked(&gone("[data-handoff]")).await;

        // Decline: USER_DENIED.
        let declined = hand_over(
            &relay,
            s,
            json!({ "tabId": tab, "message": "Choose a seat for me" }),
        );
        click(&page, "[data-handoff] .decline").await;
        let declined = declined.await.unwrap();
        assert_eq!(declined["error"]["code"], "USER_DENIED", "{declined}");
        page.eval_checked(&gone("[data-handoff]")).await;

        // Nobody answers: ACTION_TIMEOUT at the handoff's own timeout, and the request goes.
        let waited = hand_over(
            &relay,
            s,
            json!({ "tabId": tab, "message": "Solve the CAPTCHA", "timeoutMs": 1000 }),
        );
        page.eval_checked(&shown_with("#ask-list [data-handoff]", "CAPTCHA"))
            .await;
        let waited = waited.await.unwrap();
        assert_eq!(waited["error"]["code"], "ACTION_TIMEOUT", "{waited}");
        page.eval_checked(&gone("[data-handoff]")).await;

        // The session's log (what its event stream replays) tells each handoff's start and end.
        let log = std::fs::read_to_string(data.path().join("logs").join(format!("{s}.jsonl"))).unwrap();
        let of = |kind: &str| -> Vec<serde_json::Value> {
            log.lines()
                .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
                .filter(|entry| entry["type"] == kind)
                .map(|entry| entry["payload"].clone())
                .collect()
        };
        let asked: Vec<_> = of("handoff.requested")
            .iter()
            .map(|p| p["message"].clone())
            .collect();
        assert_eq!(asked, [message, "Choose a seat for me", "Solve the CAPTCHA"]);
        let ended: Vec<_> = of("handoff.ended")
            .iter()
            .map(|p| (p["outcome"].clone(), p["note"].clone()))
            .collect();
        assert_eq!(
            ended,
            [
                (json!("done"), json!("logged in as ada")),
                (json!("declined"), json!(null)),
                (json!("timeout"), json!(null))
            ]
        );
        cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
            .await
            .unwrap();
    });
}

/// Waits (bounded, in the console) until the session's live view has drawn more than `after`
/// frames; how many it has.
async fn frames_past(page: &RawSession<'_>, session: &str, after: u64) -> u64 {
    let wait = format!(
        r#"new Promise((resolve, reject) => {{
            const limit = setTimeout(() => reject(new Error("no new frame")), 20000);
            const check = () => {{
                const c = document.querySelector("[data-session='{session}'] canvas.live");
                const n = Number(c?.dataset.frames ?? 0);
                if (n > {after}) {{ clearTimeout(limit); watch.disconnect(); resolve(n); }}
            }};
            const watch = new MutationObserver(check);
            watch.observe(document, {{ subtree: true, childList: true, attributes: true }});
            check();
        }})"#
    );
    page.eval_checked(&wait).await.as_u64().unwrap()
}

/// Waits (bounded, in the console) until the session's live view shows dark pixels (text) in
/// the page's CSS-pixel box `(left, top, right, bottom)`.
fn drawn_dark(session: &str, (left, top, right, bottom): (f64, f64, f64, f64)) -> String {
    format!(
        r#"new Promise((resolve, reject) => {{
            const limit = setTimeout(() => reject(new Error("the live view never showed it")), 20000);
            const check = () => {{
                const c = document.querySelector("[data-session='{session}'] canvas.live");
                if (!c || !c.dataset.pageWidth) return;
                const k = c.width / Number(c.dataset.pageWidth);
                const box = c.getContext("2d").getImageData({left} * k, {top} * k, ({right} - {left}) * k, ({bottom} - {top}) * k).data;
                for (let i = 0; i < box.length; i += 4) {{
                    if (box[i] < 80 && box[i + 1] < 80 && box[i + 2] < 80) {{ clearTimeout(limit); watch.disconnect(); return resolve(true); }}
                }}
            }};
            const watch = new MutationObserver(check);
            watch.observe(document, {{ subtree: true, attributes: true, attributeFilter: ["data-frames"] }});
            check();
        }})"#
    )
}

/// A person's click on the live view, at the page's CSS pixel (`x`, `y`).
async fn click_live(page: &RawSession<'_>, session: &str, x: f64, y: f64) {
    let at = page
        .eval_checked(&format!(
            "(() => {{ const c = document.querySelector(\"[data-session='{session}'] canvas.live\"); \
               c.scrollIntoView({{ block: \"center\" }}); const r = c.getBoundingClientRect(); \
               return [r.left + {x} * r.width / Number(c.dataset.pageWidth), r.top + {y} * r.height / Number(c.dataset.pageHeight)]; }})()"
        ))
        .await;
    let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
    for kind in ["mousePressed", "mouseReleased"] {
        let event = json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 });
        page.call("Input.dispatchMouseEvent", event).await;
    }
}

/// A watched page that changes once (a paint or two, which the screencast may skip: it
/// captures one paint in four) is shown as it changed, however still it is after.
#[test]
fn a_watched_page_that_changes_once_is_shown_as_it_changed() {
    run_worker(|h| async move {
        let s = "still";
        // Its own address: the other tests' workers show person.html in the same browser.
        let Started { relay, .. } = started(h, "still-worker", s, "person.html?still").await;
        let cdp = CdpConnection::connect(h.browser_ws()).await.unwrap();
        let (page, target) = signed_in_console(&cdp, &relay.http("/")).await;
        click(&page, &format!("[data-session='{s}'] button.watch")).await;
        frames_past(&page, s, 0).await;
        let worker_page = worker_tab(&cdp, "/fixtures/person.html?still").await;
        worker_page
            .eval_checked("document.getElementById('greeting').textContent = 'Hello, Ada', true")
            .await;
        page.eval_checked(&drawn_dark(s, (40.0, 160.0, 300.0, 200.0)))
            .await;
        cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
            .await
            .unwrap();
    });
}

/// The worker's own tab showing `path`, attached on a raw session (the relay's session is
/// busy, or need not be asked).
async fn worker_tab<'c>(cdp: &'c CdpConnection, path: &str) -> RawSession<'c> {
    let targets = cdp.call(None, "Target.getTargets", json!({})).await.unwrap();
    let tab = targets["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["url"].as_str().unwrap_or_default().ends_with(path))
        .expect("the worker's tab")["targetId"]
        .clone();
    RawSession::attach(cdp, &tab).await
}

#[test]
fn a_person_acts_in_a_headless_tab_through_the_live_view() {
    run_worker(|h| async move {
        let s = "live";
        let Started { relay, tab, .. } = started(h, "live-worker", s, "person.html?live").await;
        let cdp = CdpConnection::connect(h.browser_ws()).await.unwrap();
        let (page, target) = signed_in_console(&cdp, &relay.http("/")).await;

        // Watching: the tab's frames arrive while nothing is handed over.
        click(&page, &format!("[data-session='{s}'] button.watch")).await;
        frames_past(&page, s, 0).await;
        // Outside a handoff, the relay passes no input to the tab.
        let mut ws = orchestrator(&relay.addr.to_string()).await;
        let input = json!({ "sessionId": s, "actionId": "none",
            "input": { "kind": "mouse", "action": "down", "x": 140, "y": 55 } });
        let refused = request(&mut ws, "handoff.input", "early", input).await;
        assert_eq!(refused["payload"]["code"], "INVALID_PARAMS", "{refused}");

        let waiting = hand_over(
            &relay,
            s,
            json!({ "tabId": tab, "message": "Greet yourself, then press Done" }),
        );
        page.eval_checked(&shown(&format!("[data-session='{s}'] canvas.live.handing")))
            .await;
        frames_past(&page, s, 0).await;
        click_live(&page, s, 140.0, 55.0).await;
        for key in ["A", "d", "a"] {
            for kind in ["keyDown", "keyUp"] {
                let event = json!({ "type": kind, "key": key, "code": format!("Key{}", key.to_uppercase()), "text": key });
                page.call("Input.dispatchKeyEvent", event).await;
            }
        }
        click_live(&page, s, 100.0, 120.0).await;
        // The worker's headless page heard the person (read straight from the browser: the
        // session itself is busy with the handoff).
        let worker_page = worker_tab(&cdp, "/fixtures/person.html?live").await;
        let greeted = r#"new Promise((resolve, reject) => {
            const limit = setTimeout(() => reject(new Error("not greeted; the page heard " + JSON.stringify(heard))), 20000);
            const check = () => {
                if (document.getElementById("greeting").textContent === "Hello, Ada") { clearTimeout(limit); resolve(true); }
            };
            new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true });
            check();
        })"#;
        worker_page.eval_checked(greeted).await;
        // ...and the live view shows the page as it changed: the greeting's dark text is drawn
        // where the page has it.
        page.eval_checked(&drawn_dark(s, (40.0, 160.0, 300.0, 200.0)))
            .await;
        page.eval_checked("window.scrollTo(0, 0), true").await;
        doc_shot(&page, "handoff.png", None).await;
        click(&page, "[data-handoff] .done").await;
        assert_eq!(waiting.await.unwrap()["status"], "success");
        cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
            .await
            .unwrap();
    });
}

#[test]
fn a_handoff_without_a_message_or_with_a_timeout_out_of_range_is_refused() {
    run_worker(|h| async move {
        let s = "bad-handoffs";
        let Started { relay, tab, .. } = started(h, "handoff-params", s, "snapshot.html").await;
        for (params, says) in [
            (json!({ "tabId": tab }), "message"),
            (json!({ "tabId": tab, "message": "  " }), "message"),
            (
                json!({ "tabId": tab, "message": "x", "timeoutMs": 999 }),
                "timeoutMs",
            ),
            (
                json!({ "tabId": tab, "message": "x", "timeoutMs": 3_600_001 }),
                "timeoutMs",
            ),
        ] {
            let refused = relay.act(s, "browser_handoff", params.clone()).await;
            assert_eq!(refused["error"]["code"], "INVALID_PARAMS", "{params}: {refused}");
            let message = refused["error"]["message"].as_str().unwrap();
            assert!(message.contains(says), "{params}: {message}");
        }
    });
}

#[test]
fn a_console_opened_while_a_handoff_waits_shows_it_and_answers_it() {
    run_worker(|h| async move {
        let s = "asked-before-the-console";
        let Started { relay, tab, .. } = started(h, "handoff-late-console", s, "snapshot.html").await;
        let mut events = subscribed(&relay.addr.to_string(), json!({ "sessionId": s })).await;
        let message = "Approve the payment in your bank's app, then press Done";
        let done = hand_over(&relay, s, json!({ "tabId": tab, "message": message }));
        let asked = recv_type(&mut events, "handoff.requested").await;
        let action = asked["payload"]["actionId"].clone();

        // A note longer than a person's answer may carry is refused, and the handoff waits on.
        let mut ws = orchestrator(&relay.addr.to_string()).await;
        let long = json!({ "sessionId": s, "actionId": action, "outcome": "done", "note": "n".repeat(2001) });
        let refused = request(&mut ws, "handoff.answer", "long-note", long).await;
        assert_eq!(refused["payload"]["code"], "INVALID_PARAMS", "{refused}");
        assert!(
            refused["payload"]["message"].as_str().unwrap().contains("2000"),
            "{refused}"
        );

        // The person opens the console only now: the request already waiting is shown.
        let cdp = CdpConnection::connect(h.browser_ws()).await.unwrap();
        let (page, target) = signed_in_console(&cdp, &relay.http("/")).await;
        page.eval_checked(&shown_with("#ask-list [data-handoff]", message))
            .await;
        click(&page, "[data-handoff] .done").await;
        let done = done.await.unwrap();
        assert_eq!(done["status"], "success", "{done}");
        page.eval_checked(&gone("[data-handoff]")).await;

        // Ended, it is not shown to a console that comes later still.
        let (again, second) = signed_in_console(&cdp, &relay.http("/")).await;
        again
            .eval_checked(&shown(&format!("[data-session='{s}'] .status")))
            .await;
        assert_eq!(
            again
                .eval("document.querySelectorAll('#ask-list [data-handoff]').length")
                .await,
            0
        );
        for target in [target, second] {
            cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
                .await
                .unwrap();
        }
    });
}

#[test]
fn a_person_watches_a_tab_of_their_own_browser_live() {
    run_extension(|h| async move {
        let s = "live-extension";
        let b = h.extension();
        let tab = h.start(s, "/fixtures/person.html").await;
        h.ok(s, "browser_wait_for_loaded", json!({ "tabId": tab })).await;
        let cdp = CdpConnection::connect(b.chromium.ws_url().expect("launched with a port"))
            .await
            .unwrap();
        let (page, target) = signed_in_console(&cdp, &b.relay.http("/")).await;
        click(&page, &format!("[data-session='{s}'] button.watch")).await;
        let seen = frames_past(&page, s, 0).await;
        assert!(seen >= 1);
        // The page as it is: its button's dark label drawn where the page has it.
        page.eval_checked(&drawn_dark(s, (40.0, 100.0, 160.0, 140.0)))
            .await;
        cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
            .await
            .unwrap();
    });
}
