//! What a session's own browser context costs (docs/protocol.md §21). First, opening a session
//! on a loaded page in a fresh context: Tether's `session_start` + `browser_wait_for_loaded`
//! (its context made, and disposed at `session_stop` after the timing) against raw CDP doing
//! the same (`Target.createBrowserContext`, `Target.createTarget` in it in a window of its own,
//! attach, `Page.enable`, `Page.navigate` and its load event) and Playwright's `newContext()`,
//! `newPage()` and `goto`, on the same Chromium, in turns. Then 50 sessions at once through the
//! relay, each in its own context, each clicking: back to back (every session's next click
//! sent as its last returns: what the two cores can serve) and as agents click (a second of
//! thought between steps, the sessions' steps spread over it); a click's p50 and p99 against a
//! lone session's; the browser's memory (PSS of every process of it) per extra session, and
//! once all 50 ended, 10 s after, from where raw CDP left it after holding as many contexts
//! with a page each and disposing of them (what the browser keeps of that, it keeps for any
//! client), then after a second round of 50 (whether what stays grows round by round).
//! Between them, a session on a page through a proxy that asks for a login (every request of
//! its context paused and continued: `host/src/cdp/proxy_auth.rs`) against one through a proxy
//! that does not, both the test kit's proxy on loopback.
//!
//!     npm ci --prefix tests/benches/playwright
//!     cargo bench -p tether-tests --bench contexts
//!
//! Figures go to docs/performance.md.

use std::time::{Duration, Instant};

use serde_json::json;
use tether_tests::bench::{loaded_tab_in, ms, open_loaded_tab_in, relayed_worker, stats, tether_open, RUNS};
use tether_tests::playwright::Playwright;
use tether_tests::process::{tree_pss_by_kind, tree_pss_kib};
use tether_tests::proxy::TestProxy;
use tether_tests::Harness;

const WARMUP: usize = 3;
/// Sessions at once.
const SESSIONS: usize = 50;
/// Clicks each session makes, alone and at once.
const CLICKS: usize = 10;
/// An agent's thought between two steps, in the paced run.
const THINKING: Duration = Duration::from_secs(1);

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        let cdp = h.worker().transport.connection();
        let url = h.url("/fixtures/article.html");
        let mut playwright = Playwright::start(h.browser_ws());
        let (mut raw, mut tether, mut pw) = (Vec::new(), Vec::new(), Vec::new());
        for run in 0..WARMUP + RUNS {
            let r = open_loaded_tab_in_context(cdp, &url).await;
            let t = tether_open(|action, params| h.ok("bench-context", action, params), &url).await;
            let (p, _) = playwright.time(&format!("context {url}")).await;
            if run >= WARMUP {
                raw.push(r);
                tether.push(t);
                pw.push(p);
            }
        }
        let (raw, tether, pw) = (stats(raw), stats(tether), stats(pw));
        println!(
            "{:<58} {:>9} {:>9} {:>8}",
            "a session on a loaded page, in a fresh context (ms)", "p50", "p90", "/ raw"
        );
        for (name, s) in [
            ("raw CDP: createBrowserContext + createTarget + load", raw),
            ("Tether: session_start + wait_for_loaded, on the host", tether),
            ("Playwright: newContext + newPage + goto", pw),
        ] {
            println!(
                "{name:<58} {:>9.2} {:>9.2} {:>7.2}x",
                ms(s.median),
                ms(s.p90),
                ms(s.median) / ms(raw.median)
            );
        }
        drop(playwright);
        through_proxies(&h).await;

        let relay = relayed_worker(&h).await;
        let page = h.url("/fixtures/clicks.html");
        let click = json!({ "xpath": "//*[@id='target']" });
        let browser = h.browser_pid();
        // The baseline for what stays once sessions end: raw CDP holding as many contexts
        // with a loaded page each, then disposing of them. What the browser keeps after that
        // it keeps for any client.
        let untouched = tree_pss_kib(browser);
        raw_round(cdp, &page).await;
        let before = settled_rss(browser).await;
        let before_by_kind = tree_pss_by_kind(browser);
        let lone = {
            relay.ok("lone", "session_start", json!({ "url": page })).await;
            let mut times = Vec::new();
            // Enough clicks for a p99 that is not one unlucky click.
            for _ in 0..WARMUP + CLICKS * 10 {
                let start = Instant::now();
                relay.ok("lone", "browser_click", click.clone()).await;
                times.push(start.elapsed());
            }
            relay.ok("lone", "session_stop", json!({})).await;
            times.split_off(WARMUP)
        };
        let names: Vec<String> = (0..SESSIONS).map(|i| format!("many-{i}")).collect();
        for name in &names {
            relay.ok(name, "session_start", json!({ "url": page })).await;
        }
        let started = tree_pss_kib(browser);
        let back_to_back = clicks_at_once(&relay, &names, &click, Duration::ZERO).await;
        let paced = clicks_at_once(&relay, &names, &click, THINKING).await;
        for name in &names {
            relay.ok(name, "session_stop", json!({})).await;
        }
        let ended = settled_rss(browser).await;
        let ended_by_kind = tree_pss_by_kind(browser);
        let lone_p99 = percentile(&lone, 99);
        println!();
        println!(
            "{:<58} {:>9} {:>9}",
            "a click through the relay (ms)", "p50", "p99"
        );
        for (name, times) in [
            ("one session alone".to_owned(), &lone),
            (
                format!("{SESSIONS} sessions at once, back to back"),
                &back_to_back,
            ),
            (
                format!(
                    "{SESSIONS} sessions at once, {} s between steps",
                    THINKING.as_secs()
                ),
                &paced,
            ),
        ] {
            let (p50, p99) = (percentile(times, 50), percentile(times, 99));
            println!(
                "{name:<58} {:>9.2} {:>9.2}  p99 {:.2}x alone",
                ms(p50),
                ms(p99),
                ms(p99) / ms(lone_p99)
            );
        }
        println!();
        println!("the browser's memory (PSS of every process of it): {} MiB at first; {} MiB after raw CDP held {SESSIONS} contexts with a page each and disposed of them ({:+.1} %)",
            untouched / 1024, before / 1024, (before as f64 / untouched as f64 - 1.0) * 100.0);
        println!("Tether, from there: {} MiB before, {} MiB with {SESSIONS} sessions ({:.1} MiB each), {} MiB once they ended ({:+.1} % of before)",
            before / 1024, started / 1024, (started.saturating_sub(before)) as f64 / 1024.0 / SESSIONS as f64,
            ended / 1024, (ended as f64 / before as f64 - 1.0) * 100.0);
        println!(
            "{:<20} {:>16} {:>16}",
            "by process, MiB", "before", "once they ended"
        );
        for kind in before_by_kind
            .keys()
            .chain(ended_by_kind.keys())
            .collect::<std::collections::BTreeSet<_>>()
        {
            let show = |by: &std::collections::BTreeMap<String, (usize, u64)>| {
                by.get(kind).map_or("-".to_owned(), |(n, kib)| {
                    format!("{n} x, {:.1}", *kib as f64 / 1024.0)
                })
            };
            println!(
                "{kind:<20} {:>16} {:>16}",
                show(&before_by_kind),
                show(&ended_by_kind)
            );
        }
        // Whether what stays grows with each round of sessions or is a high-water mark: a
        // second round of as many, each starting, clicking once and ending.
        for name in &names {
            relay.ok(name, "session_start", json!({ "url": page })).await;
        }
        for name in &names {
            relay.ok(name, "browser_click", click.clone()).await;
        }
        for name in &names {
            relay.ok(name, "session_stop", json!({})).await;
        }
        let again = settled_rss(browser).await;
        println!(
            "after a second round of {SESSIONS} sessions ended: {} MiB ({:+.1} % of before)",
            again / 1024,
            (again as f64 / before as f64 - 1.0) * 100.0
        );
    });
}

/// Raw CDP holding `SESSIONS` contexts at once, a page loaded in each (in a window of its own,
/// as the worker opens a session's tab), then disposing of them.
async fn raw_round(cdp: &tether_host::cdp::connection::CdpConnection, url: &str) {
    let mut contexts = Vec::new();
    for _ in 0..SESSIONS {
        let made = cdp
            .call(None, "Target.createBrowserContext", json!({}))
            .await
            .unwrap();
        let context = made["browserContextId"].as_str().unwrap().to_owned();
        loaded_tab_in(cdp, url, Some(&context)).await;
        contexts.push(context);
    }
    for context in contexts {
        let dispose = json!({ "browserContextId": context });
        cdp.call(None, "Target.disposeBrowserContext", dispose)
            .await
            .unwrap();
    }
}

/// A session on a loaded page through a proxy without a login, and through one that asks for
/// it, in turns.
async fn through_proxies(h: &Harness) {
    let open = TestProxy::start().await;
    let login = TestProxy::with_login("bench", "secret").await;
    let open = json!({ "server": open.server() });
    let login = json!({ "server": login.server(), "username": "bench", "password": "secret" });
    let url = "http://tether-bench.test/";
    let (mut plain, mut signed_in) = (Vec::new(), Vec::new());
    for run in 0..WARMUP + RUNS {
        for (proxy, times) in [(&open, &mut plain), (&login, &mut signed_in)] {
            let start = Instant::now();
            let started = h
                .ok(
                    "bench-proxy",
                    "session_start",
                    json!({ "url": url, "proxy": proxy }),
                )
                .await;
            let tab = started["tabId"].clone();
            h.ok("bench-proxy", "browser_wait_for_loaded", json!({ "tabId": tab }))
                .await;
            if run >= WARMUP {
                times.push(start.elapsed());
            }
            h.ok("bench-proxy", "session_stop", json!({})).await;
        }
    }
    let (plain, signed_in) = (stats(plain), stats(signed_in));
    println!();
    println!(
        "{:<58} {:>9} {:>9} {:>8}",
        "a session on a page through a proxy (ms)", "p50", "p90", "/ open"
    );
    for (name, s) in [
        ("a proxy without a login", plain),
        ("a proxy that asks for one (every request paused)", signed_in),
    ] {
        println!(
            "{name:<58} {:>9.2} {:>9.2} {:>7.2}x",
            ms(s.median),
            ms(s.p90),
            ms(s.median) / ms(plain.median)
        );
    }
    println!();
}

/// Raw CDP opening a tab in a context of its own on a loaded page; the context disposed
/// after the timing.
async fn open_loaded_tab_in_context(
    cdp: &tether_host::cdp::connection::CdpConnection,
    url: &str,
) -> Duration {
    let start = Instant::now();
    let made = cdp
        .call(None, "Target.createBrowserContext", json!({}))
        .await
        .unwrap();
    let context = made["browserContextId"].as_str().unwrap().to_owned();
    let made_in = start.elapsed();
    let took = made_in + open_loaded_tab_in(cdp, url, Some(&context)).await;
    cdp.call(
        None,
        "Target.disposeBrowserContext",
        json!({ "browserContextId": context }),
    )
    .await
    .unwrap();
    took
}

/// Every session clicking `CLICKS` times at once, `thinking` between its clicks (its first
/// click put off by its share of `thinking`, so the sessions' steps spread over it); each
/// click's time.
async fn clicks_at_once(
    relay: &tether_tests::bench::RelayedWorker,
    names: &[String],
    click: &serde_json::Value,
    thinking: Duration,
) -> Vec<Duration> {
    let clicking = names.iter().enumerate().map(|(i, name)| async move {
        tokio::time::sleep(thinking * i as u32 / names.len() as u32).await;
        let mut times = Vec::new();
        for _ in 0..CLICKS {
            let start = Instant::now();
            relay.ok(name, "browser_click", click.clone()).await;
            times.push(start.elapsed());
            tokio::time::sleep(thinking).await;
        }
        times
    });
    futures::future::join_all(clicking).await.concat()
}

fn percentile(times: &[Duration], p: usize) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[((sorted.len() * p).div_ceil(100)).clamp(1, sorted.len()) - 1]
}

/// The browser's memory once the ended sessions' work is done: read 10 s after they ended, as
/// a person would watch it (read as soon as it stopped falling, it went on to rise by 60 MiB:
/// the browser process's own work on the ended contexts).
async fn settled_rss(browser: u32) -> u64 {
    tokio::time::sleep(Duration::from_secs(10)).await;
    tree_pss_kib(browser)
}
