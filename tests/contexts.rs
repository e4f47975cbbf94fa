//! Each session its own browser (docs/protocol.md §21), in worker mode: what one session's
//! pages keep (server and script cookies, localStorage, sessionStorage, IndexedDB, Cache
//! Storage, service workers, the HTTP cache) no other session sees, running at the same time
//! or after it; a named profile is one context its sessions share, and `"default"` the
//! browser's own; bad names and proxies are refused, and extension mode, which lends a
//! person's one profile, says a profile or proxy is not for it.

use serde_json::{json, Value};
use tether_protocol::ErrorCode;
use tether_tests::{fixtures, run, run_worker, Harness};

const PAGE: &str = "/fixtures/state.html";

/// Starts session `s` on the state page with `extra` in its session_start; its tab and result.
async fn start(h: &Harness, s: &str, extra: Value) -> (i64, Value) {
    let mut params = json!({ "url": h.url(PAGE) });
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let started = h.ok(s, "session_start", params).await;
    let tab = started["tabId"].as_i64().unwrap();
    h.ok(s, "browser_wait_for_loaded", json!({ "tabId": tab })).await;
    (tab, started)
}

async fn write(h: &Harness, tab: i64, tag: &str) {
    assert_eq!(h.eval(tab, &format!("write({tag:?})")).await, "written");
}

async fn read(h: &Harness, tab: i64) -> Value {
    h.eval(tab, "read()").await
}

/// The browser context tab `tab` is in.
async fn context_of(h: &Harness, tab: i64) -> String {
    let cdp = h.worker().transport.connection();
    let targets = cdp.call(None, "Target.getTargets", json!({})).await.unwrap();
    let target = h.worker().transport.target_id(tab).unwrap();
    let info = targets["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["targetId"] == target.as_str())
        .cloned()
        .unwrap();
    info["browserContextId"].as_str().unwrap().to_owned()
}

/// The browser's contexts now (its default one aside).
async fn contexts(h: &Harness) -> Vec<String> {
    let cdp = h.worker().transport.connection();
    let listed = cdp
        .call(None, "Target.getBrowserContexts", json!({}))
        .await
        .unwrap();
    listed["browserContextIds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str().map(str::to_owned))
        .collect()
}

fn nothing() -> Value {
    json!({ "cookies": "", "local": null, "session": null, "idb": null, "cache": null, "workers": 0 })
}

fn all_of(tag: &str) -> Value {
    json!({
        "cookies": format!("server={tag}; script={tag}"),
        "local": tag, "session": tag, "idb": tag, "cache": tag, "workers": 1,
    })
}

/// Cookies in the order the browser lists them vary: compared as a set.
fn same_state(seen: &Value, wanted: &Value) -> bool {
    let cookies = |v: &Value| {
        let mut c: Vec<String> = v["cookies"]
            .as_str()
            .unwrap_or_default()
            .split("; ")
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect();
        c.sort();
        c
    };
    let rest = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut().unwrap().remove("cookies");
        v
    };
    cookies(seen) == cookies(wanted) && rest(seen) == rest(wanted)
}

/// A file one session's page downloads is that session's: another session, running at the
/// same time in its own context, lists none.
#[test]
fn a_download_is_its_sessions_alone() {
    run_worker(|h| async move {
        let page = json!({ "url": h.url("/fixtures/downloads.html") });
        let (a, _) = start(h, "dl-a", page.clone()).await;
        start(h, "dl-b", page).await;
        h.ok(
            "dl-a",
            "browser_click",
            json!({ "tabId": a, "xpath": "//a[@id='report']" }),
        )
        .await;
        let wait = json!({ "wait": true, "timeoutMs": 20000 });
        let mine = h.ok("dl-a", "browser_downloads", wait).await;
        assert_eq!(mine["downloads"][0]["name"], "report.csv", "{mine}");
        assert_eq!(mine["downloads"][0]["state"], "complete", "{mine}");
        let theirs = h.ok("dl-b", "browser_downloads", json!({})).await;
        assert_eq!(theirs["downloads"], json!([]), "{theirs}");
        for s in ["dl-a", "dl-b"] {
            h.ok(s, "session_stop", json!({})).await;
        }
    });
}

/// A session's window carries no address-bar popups (WebUI views with a document each, never
/// shown over CDP): they cost 36 MiB a session.
#[test]
fn a_sessions_window_has_no_address_bar_views() {
    run_worker(|h| async move {
        start(h, "lean-window", json!({})).await;
        let cdp = h.worker().transport.connection();
        let every = json!({ "filter": [{}] });
        let targets = cdp.call(None, "Target.getTargets", every).await.unwrap();
        let ui: Vec<&Value> = targets["targetInfos"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["type"] == "browser_ui")
            .collect();
        assert!(ui.is_empty(), "{ui:?}");
        h.ok("lean-window", "session_stop", json!({})).await;
    });
}

#[test]
fn sessions_see_nothing_of_each_other_at_once_or_after() {
    run_worker(|h| async move {
        let (a, started) = start(h, "ctx-a", json!({})).await;
        assert!(started.get("profile").is_none(), "{started}");
        write(h, a, "ctx-a").await;
        assert!(same_state(&read(h, a).await, &all_of("ctx-a")));
        assert_eq!(fixtures::hits("kept-ctx-a"), 1);

        let (b, _) = start(h, "ctx-b", json!({})).await;
        let seen = read(h, b).await;
        assert!(same_state(&seen, &nothing()), "session B saw A's: {seen}");
        // A's answer is in A's HTTP cache only: B asks the server.
        h.eval(b, "fetch('/kept/ctx-a').then((r) => r.text())").await;
        assert_eq!(fixtures::hits("kept-ctx-a"), 2, "B was served from A's cache");
        // A again, once B wrote too: still A's alone.
        write(h, b, "ctx-b").await;
        assert!(same_state(&read(h, a).await, &all_of("ctx-a")));

        let context = context_of(h, a).await;
        h.ok("ctx-a", "session_stop", json!({})).await;
        assert!(!contexts(h).await.contains(&context), "A's context outlived it");
        let (c, _) = start(h, "ctx-c", json!({})).await;
        let seen = read(h, c).await;
        assert!(
            same_state(&seen, &nothing()),
            "a later session saw an ended one's: {seen}"
        );
        for s in ["ctx-b", "ctx-c"] {
            h.ok(s, "session_stop", json!({})).await;
        }
    });
}

#[test]
fn a_named_profile_is_shared_and_default_is_the_browsers_own() {
    run_worker(|h| async move {
        let (p1, started) = start(h, "prof-1", json!({ "profile": "team-x" })).await;
        assert_eq!(started["profile"], "team-x", "{started}");
        write(h, p1, "prof-x").await;
        let (p2, _) = start(h, "prof-2", json!({ "profile": "team-x" })).await;
        let seen = read(h, p2).await;
        assert_eq!(seen["local"], "prof-x", "{seen}");
        assert_eq!(seen["idb"], "prof-x", "{seen}");
        assert!(
            seen["cookies"].as_str().unwrap().contains("server=prof-x"),
            "{seen}"
        );
        let (own, _) = start(h, "prof-own", json!({})).await;
        assert!(same_state(&read(h, own).await, &nothing()));

        let (d1, started) = start(h, "default-1", json!({ "profile": "default" })).await;
        assert_eq!(started["profile"], "default", "{started}");
        write(h, d1, "by-default").await;
        let (d2, _) = start(h, "default-2", json!({ "profile": "default" })).await;
        assert_eq!(read(h, d2).await["local"], "by-default");
        assert_eq!(
            read(h, p2).await["local"],
            "prof-x",
            "a profile is not the default"
        );

        // A session keeps the context it started in.
        h.fails_with(
            ErrorCode::InvalidParams,
            "prof-own",
            "session_start",
            json!({ "url": h.url(PAGE), "profile": "team-x" }),
        )
        .await;
        let shared = context_of(h, p1).await;
        assert_eq!(context_of(h, p2).await, shared, "one context for the profile");
        h.ok("prof-1", "session_stop", json!({})).await;
        assert!(
            contexts(h).await.contains(&shared),
            "its other session still runs in it"
        );
        for s in ["prof-2", "prof-own", "default-1", "default-2"] {
            h.ok(s, "session_stop", json!({})).await;
        }
        assert!(!contexts(h).await.contains(&shared), "gone with its last session");
    });
}

#[test]
fn a_saved_storage_state_loads_into_another_sessions_context_only() {
    run_worker(|h| async move {
        h.allow_storage_state(true).await;
        let (a, _) = start(h, "state-a", json!({})).await;
        write(h, a, "state-a").await;
        let saved = h
            .ok("state-a", "browser_storage_state", json!({ "action": "save" }))
            .await;
        assert_eq!(
            saved["cookies"], 2,
            "A's own cookies, no other session's: {saved}"
        );

        let (b, _) = start(h, "state-b", json!({})).await;
        let load = json!({ "action": "load", "artifactId": saved["artifactId"] });
        h.ok("state-b", "browser_storage_state", load).await;
        h.ok("state-b", "browser_reload", json!({ "tabId": b })).await;
        let seen = read(h, b).await;
        assert_eq!(seen["local"], "state-a", "{seen}");
        assert_eq!(seen["idb"], "state-a", "IndexedDB travels with the state: {seen}");
        assert!(
            seen["cookies"].as_str().unwrap().contains("script=state-a"),
            "{seen}"
        );

        let (c, _) = start(h, "state-c", json!({})).await;
        assert!(same_state(&read(h, c).await, &nothing()), "the load reached C");
        for s in ["state-a", "state-b", "state-c"] {
            h.ok(s, "session_stop", json!({})).await;
        }
    });
}

#[test]
fn bad_profiles_and_proxies_are_refused_and_extension_mode_says_why() {
    run(|h| async move {
        let long = "p".repeat(65);
        for bad in [
            json!({ "profile": "" }),
            json!({ "profile": "../etc" }),
            json!({ "profile": "a b" }),
            json!({ "profile": "a/b" }),
            json!({ "profile": long }),
            json!({ "proxy": { "server": "ftp://127.0.0.1:21" } }),
            json!({ "proxy": { "server": "http://user:pw@127.0.0.1:3128" } }),
            json!({ "proxy": { "server": "socks5://127.0.0.1" } }),
            json!({ "proxy": { "server": "http://127.0.0.1:3128", "password": "pw" } }),
        ] {
            let mut params = bad.clone();
            params["url"] = json!(h.url(PAGE));
            let refused = h
                .fails_with(ErrorCode::InvalidParams, "bad-ctx", "session_start", params)
                .await;
            assert!(
                !refused.message.contains("pw"),
                "a credential in the message: {}",
                refused.message
            );
        }
        if h.mode == tether_tests::Mode::Extension {
            for unsupported in [
                json!({ "profile": "work" }),
                json!({ "proxy": { "server": "http://127.0.0.1:3128" } }),
            ] {
                let mut params = unsupported;
                params["url"] = json!(h.url(PAGE));
                let said = h
                    .fails_with(ErrorCode::Unsupported, "ext-ctx", "session_start", params)
                    .await;
                assert!(said.message.contains("profile"), "{}", said.message);
            }
            let (_, started) = start(h, "ext-default", json!({ "profile": "default" })).await;
            assert_eq!(started["profile"], "default", "{started}");
            h.ok("ext-default", "session_stop", json!({})).await;
        }
    });
}

/// A proxy that asks for a login is given the session's, on every page and frame of the
/// session's context (a popup too) and for none of another's; a login it refuses fails the
/// navigation, never a hang or a loop; Chromium signs in to no SOCKS proxy, so one with a login
/// is `UNSUPPORTED`, saying so without the password.
#[test]
fn a_proxy_that_asks_for_a_login_gets_the_sessions() {
    run_worker(|h| async move {
        let proxy = tether_tests::proxy::TestProxy::with_login("ada", "s3cret").await;
        let login = json!({ "server": proxy.server(), "bypass": "<-loopback>", "username": "ada", "password": "s3cret" });
        let site = "http://tether-proxy-login.test/";
        let (p, _) = start(h, "signed-in", json!({ "url": site, "proxy": login })).await;
        assert_eq!(h.eval(p, "document.title").await, "Through the proxy");
        assert!(proxy.seen().iter().any(|u| u == site), "{:?}", proxy.seen());
        // A frame and a popup the page opens go through it signed in too.
        let framed = format!("{site}framed");
        let add_frame = format!(
            "new Promise(r => {{ const f = document.createElement('iframe'); f.onload = () => r('loaded'); f.src = {framed:?}; document.body.append(f); }})"
        );
        assert_eq!(h.eval(p, &add_frame).await, "loaded");
        assert!(proxy.seen().contains(&framed), "{:?}", proxy.seen());
        let popup = format!("{site}popup");
        let button = format!(
            "document.body.insertAdjacentHTML('beforeend', `<button id=open onclick='window.open({popup:?})'>Open</button>`)"
        );
        h.eval(p, &button).await;
        let clicked = h
            .ok(
                "signed-in",
                "browser_click",
                json!({ "tabId": p, "xpath": "//button[@id='open']" }),
            )
            .await;
        let opened = clicked["openedTabIds"][0].as_i64().expect("the popup's tab");
        h.ok("signed-in", "browser_wait_for_loaded", json!({ "tabId": opened }))
            .await;
        assert_eq!(h.eval(opened, "document.title").await, "Through the proxy");
        assert!(proxy.seen().contains(&popup), "{:?}", proxy.seen());

        // A site asking for a login of its own (through the proxy) is never given the proxy's:
        // the navigation fails as it does through a proxy without a login.
        let asks = format!("{site}site-asks");
        let declined = h
            .err(
                "signed-in",
                "browser_navigate",
                json!({ "tabId": p, "url": asks }),
            )
            .await;
        let logins = proxy.site_logins();
        assert!(!logins.is_empty(), "the site was asked");
        assert!(logins.iter().all(String::is_empty), "{logins:?}");
        let open = tether_tests::proxy::TestProxy::start().await;
        let plain_proxy = json!({ "server": open.server() });
        let (q, _) = start(h, "no-login", json!({ "url": site, "proxy": plain_proxy })).await;
        let plain = h
            .err("no-login", "browser_navigate", json!({ "tabId": q, "url": asks }))
            .await;
        assert_eq!((declined.code, &declined.message), (plain.code, &plain.message));
        assert!(!declined.message.contains("s3cret"), "{}", declined.message);
        h.ok("no-login", "session_stop", json!({})).await;

        // Another session with no login is refused by the proxy, signed in by nobody.
        let refused_before = proxy.refused().len();
        let anonymous = json!({ "server": proxy.server(), "bypass": "<-loopback>" });
        let other = format!("{site}anonymous");
        let failed = h
            .err(
                "anonymous",
                "session_start",
                json!({ "url": other, "proxy": anonymous }),
            )
            .await;
        assert_eq!(failed.code, ErrorCode::NavigationFailed, "{}", failed.message);
        assert!(
            proxy.refused()[refused_before..].contains(&other),
            "{:?}",
            proxy.refused()
        );
        assert!(!proxy.seen().contains(&other), "{:?}", proxy.seen());

        let wrong = json!({ "server": proxy.server(), "bypass": "<-loopback>", "username": "ada", "password": "guess" });
        let failed = h
            .err(
                "wrong-login",
                "session_start",
                json!({ "url": format!("{site}wrong"), "proxy": wrong }),
            )
            .await;
        assert_eq!(failed.code, ErrorCode::NavigationFailed, "{}", failed.message);
        assert!(failed.message.contains("AUTH"), "{}", failed.message);
        assert!(!failed.message.contains("guess"), "{}", failed.message);

        let socks = json!({ "server": "socks5://127.0.0.1:1080", "username": "ada", "password": "s3cret" });
        let said = h
            .fails_with(
                ErrorCode::Unsupported,
                "socks-login",
                "session_start",
                json!({ "url": site, "proxy": socks }),
            )
            .await;
        assert!(
            said.message.contains("SOCKS") && !said.message.contains("s3cret"),
            "{}",
            said.message
        );
        h.ok("signed-in", "session_stop", json!({})).await;
    });
}

/// A session's proxy is its context's alone: its pages come through it, another session's
/// do not; a proxy that is not there fails the navigation at once; a profile keeps the proxy
/// of the session that opened it.
#[test]
fn a_sessions_proxy_carries_its_pages_only() {
    run_worker(|h| async move {
        let proxy = tether_tests::proxy::TestProxy::start().await;
        // Chromium sends loopback around any proxy unless told not to.
        let through = json!({ "server": proxy.server(), "bypass": "<-loopback>" });
        let (p, _) = start(h, "proxied", json!({ "proxy": through })).await;
        assert_eq!(h.eval(p, "document.title").await, "Through the proxy");
        let (q, _) = start(h, "direct", json!({})).await;
        assert_eq!(h.eval(q, "document.title").await, "State");
        let page = h.url(PAGE);
        // The page once (the proxied session's; the other session's went straight), and the
        // browser's look for the site's icon from the proxied session.
        let seen = proxy.seen();
        assert_eq!(seen.iter().filter(|u| **u == page).count(), 1, "{seen:?}");

        let dead = json!({ "server": "http://127.0.0.1:1", "bypass": "<-loopback>" });
        let failed = h
            .err(
                "dead-proxy",
                "session_start",
                json!({ "url": page, "proxy": dead }),
            )
            .await;
        assert_eq!(failed.code, ErrorCode::NavigationFailed, "{}", failed.message);
        assert!(failed.message.contains("PROXY"), "{}", failed.message);
        // The failed start left the session no context: started again with a proxy that is
        // there, it goes through that one (a context kept would refuse another proxy).
        let again = json!({ "url": page, "proxy": through });
        let started = h.ok("dead-proxy", "session_start", again).await;
        let tab = started["tabId"].as_i64().unwrap();
        h.ok("dead-proxy", "browser_wait_for_loaded", json!({ "tabId": tab }))
            .await;
        assert_eq!(h.eval(tab, "document.title").await, "Through the proxy");

        let team = json!({ "url": page, "profile": "proxied-team", "proxy": through });
        h.ok("team-1", "session_start", team).await;
        let other = json!({ "server": "http://127.0.0.1:2", "bypass": "<-loopback>" });
        let refused = h
            .fails_with(
                ErrorCode::InvalidParams,
                "team-2",
                "session_start",
                json!({ "url": page, "profile": "proxied-team", "proxy": other }),
            )
            .await;
        assert!(refused.message.contains("another proxy"), "{}", refused.message);
        for s in ["proxied", "direct", "dead-proxy", "team-1"] {
            h.ok(s, "session_stop", json!({})).await;
        }
    });
}
