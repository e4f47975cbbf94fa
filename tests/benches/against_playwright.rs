//! Tether against Playwright and raw CDP, on the same Chromium and the same pages, where the
//! caller ends up holding what it asked for: the bytes of a page's HTML or a screenshot (for
//! Tether: the action through the relay, then the artifact fetched from the relay's store), a
//! snapshot's text, a click or typing done. Each works on a tab of its own, loaded with the same
//! page. They run in turns, and who goes first rotates with every run: a screenshot waits for
//! the compositor's next frame (16.7 ms apart), and one taken right after another tab's capture
//! comes sooner, so a fixed order would favour whoever follows a given side.
//!
//!     (cd tests/benches/playwright && npm ci)   # playwright-core, once
//!     cargo bench -p tether-tests --bench against_playwright
//!
//! Playwright is driven from Node (`benches/playwright/ops.mjs`) and times its own calls; Tether
//! and raw CDP are timed here. Figures go to docs/performance.md.

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};
use tether_tests::bench::{ms, new_window, stats, Raw, RelayedWorker, Stats, RUNS};
use tether_tests::playwright::Playwright;
use tether_tests::Harness;

const WARMUP: usize = 3;

/// Tether as an orchestrator uses it: `POST /api/browser/action` on the relay, then the
/// artifact's presigned URL, on one HTTP client (kept-alive connections).
struct Tether {
    relay: RelayedWorker,
}

impl Tether {
    async fn act(&self, action: &str, params: Value) -> Value {
        self.relay.ok("tether", action, params).await
    }

    /// The action, and then its artifact's bytes; how many.
    async fn fetched(&self, action: &str, params: Value) -> usize {
        let result = self.act(action, params).await;
        self.fetch(&result).await
    }

    /// The bytes of the artifact a result names; how many.
    async fn fetch(&self, result: &Value) -> usize {
        let url = result["url"].as_str().expect("an artifact url");
        let bytes = self
            .relay
            .client
            .get(url)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(bytes.len() as u64, result["bytes"].as_u64().unwrap());
        bytes.len()
    }
}

/// A blank tab of raw CDP's own, with the page's events on.
async fn raw_tab(h: &Harness) -> Raw<'_> {
    let (session, _) = new_window(h.worker().transport.connection()).await;
    let raw = Raw::new(session);
    raw.call("Page.enable", json!({})).await;
    raw.call("Page.setLifecycleEventsEnabled", json!({ "enabled": true }))
        .await;
    raw
}

/// Raw CDP's whole life of a tab on `url`: `Target.createTarget` (a window of its own, as the
/// worker opens a session's), attached, `Page.navigate` to the load event, `Target.closeTarget`.
async fn raw_open(cdp: &tether_host::cdp::connection::CdpConnection, url: &str) -> usize {
    let (raw, target) = new_window(cdp).await;
    let mut events = cdp.subscribe();
    raw.call("Page.enable", json!({})).await;
    raw.call("Page.navigate", json!({ "url": url })).await;
    while !matches!(events.recv().await, Ok(e) if e.session_id.as_deref() == Some(&raw.session) && e.method == "Page.loadEventFired")
    {
    }
    cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
        .await
        .unwrap();
    0
}

/// One operation, as each side does it.
#[derive(Clone, Copy)]
enum Op {
    Html,
    Jpeg,
    Png,
    Snapshot,
    Click,
    Type,
    Scan,
    /// A session's whole life: a new tab on the page, loaded, closed.
    Open,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Html => "page HTML",
            Op::Jpeg => "screenshot JPEG q80",
            Op::Png => "screenshot PNG",
            Op::Snapshot => "snapshot (Tether's vs PW's AI)",
            Op::Click => "click (a button)",
            Op::Type => "type 5 characters, replacing",
            Op::Scan => "scan (what can be acted on)",
            Op::Open => "open, load, close a tab",
        }
    }

    /// Playwright's command for it (ops.mjs), on the page at `url`.
    fn playwright(self, url: &str) -> String {
        match self {
            Op::Html => "html".into(),
            Op::Jpeg => "jpeg".into(),
            Op::Png => "png".into(),
            Op::Snapshot => "snapshot".into(),
            Op::Click => "click #go".into(),
            Op::Type => "fill #bio hello".into(),
            Op::Scan => "scan".into(),
            Op::Open => format!("open {url}"),
        }
    }

    fn has_raw(self) -> bool {
        !matches!(self, Op::Snapshot)
    }
}

/// The three sides, each with its tab on the page being measured.
struct Sides<'h> {
    playwright: Playwright,
    raw: Raw<'h>,
    tether: Tether,
    tab: Value,
    /// The page the sides are on.
    url: String,
}

/// The page's markup as Playwright's `page.content()` builds it.
const CONTENT: &str = "(document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') + document.documentElement.outerHTML";

impl Sides<'_> {
    async fn load(&mut self, url: &str) {
        self.url = url.to_owned();
        let params = json!({ "tabId": self.tab, "url": url });
        self.tether.act("browser_navigate", params).await;
        self.tether
            .act("browser_wait_for_loaded", json!({ "tabId": self.tab }))
            .await;
        assert_eq!(self.playwright.send(&format!("goto {url}")).await, "ok");
        self.raw.navigate_only(url).await;
    }

    /// Side `side` (0 Playwright, 1 raw CDP, 2 Tether) does `op` once; how long it took and
    /// the length of what it got back.
    async fn once(&mut self, side: usize, op: Op) -> (Duration, usize) {
        if side == 0 {
            return self.playwright.time(&op.playwright(&self.url)).await;
        }
        let start = Instant::now();
        let length = if side == 1 {
            self.raw_op(op).await
        } else {
            self.tether_op(op).await
        };
        (start.elapsed(), length)
    }

    async fn raw_op(&self, op: Op) -> usize {
        let raw = &self.raw;
        let format = match op {
            Op::Html => return raw.eval(CONTENT).await.as_str().unwrap().len(),
            Op::Jpeg => json!({ "format": "jpeg", "quality": 80 }),
            Op::Png => json!({ "format": "png" }),
            Op::Click => {
                let point = raw
                    .lib("clickPoint", json!({ "xpath": "//button[@id='go']" }))
                    .await;
                for (kind, buttons) in [("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)] {
                    let button = if kind == "mouseMoved" { "none" } else { "left" };
                    let event = json!({ "type": kind, "x": point["x"], "y": point["y"], "button": button, "buttons": buttons, "clickCount": u8::from(kind != "mouseMoved") });
                    raw.call("Input.dispatchMouseEvent", event).await;
                }
                return 0;
            }
            Op::Type => {
                let field = json!({ "xpath": "//textarea[@id='bio']", "clear": true });
                raw.lib("focusForTyping", field).await;
                raw.call("Input.insertText", json!({ "text": "hello" })).await;
                return 0;
            }
            Op::Scan => {
                let scanned = raw
                    .lib("scan", json!({ "scope": "document", "refFloor": 1 }))
                    .await;
                return scanned.to_string().len();
            }
            Op::Open => return raw_open(self.raw.cdp, &self.url).await,
            Op::Snapshot => unreachable!("no raw CDP side"),
        };
        let shot = self.raw.call("Page.captureScreenshot", format).await;
        let data = shot["data"].as_str().unwrap();
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap()
            .len()
    }

    async fn tether_op(&self, op: Op) -> usize {
        let tab = &self.tab;
        match op {
            Op::Html => {
                // A small page's HTML is in the result; a larger one is fetched.
                let result = self.tether.act("browser_get_html", json!({ "tabId": tab })).await;
                match result["html"].as_str() {
                    Some(html) => html.len(),
                    None => self.tether.fetch(&result).await,
                }
            }
            Op::Jpeg => {
                let params = json!({ "tabId": tab, "format": "jpeg", "quality": 80 });
                self.tether.fetched("browser_screenshot", params).await
            }
            Op::Png => {
                self.tether
                    .fetched("browser_screenshot", json!({ "tabId": tab }))
                    .await
            }
            Op::Snapshot => {
                // Whole, as Playwright's is.
                let params = json!({ "tabId": tab, "maxChars": 10_000_000 });
                let result = self.tether.act("browser_snapshot", params).await;
                result["markdown"].as_str().unwrap().len()
            }
            Op::Click => {
                let params = json!({ "tabId": tab, "xpath": "//button[@id='go']" });
                self.tether.act("browser_click", params).await;
                0
            }
            Op::Type => {
                let params =
                    json!({ "tabId": tab, "xpath": "//textarea[@id='bio']", "text": "hello", "clear": true });
                self.tether.act("browser_type", params).await;
                0
            }
            Op::Scan => {
                let params = json!({ "tabId": tab, "scope": "document" });
                self.tether.act("browser_xpath_scan", params).await["elements"]
                    .to_string()
                    .len()
            }
            Op::Open => {
                let (relay, s) = (&self.tether.relay, "tether-open");
                let opened = relay.ok(s, "session_start", json!({ "url": self.url })).await;
                relay
                    .ok(s, "browser_wait_for_loaded", json!({ "tabId": opened["tabId"] }))
                    .await;
                relay.ok(s, "session_stop", json!({})).await;
                0
            }
        }
    }

    /// `op` on every side that has it, in turns, the first side rotating; its row.
    async fn row(&mut self, op: Op) -> Row {
        let sides = if op.has_raw() { 3 } else { 2 };
        let mut times: [Vec<Duration>; 3] = Default::default();
        let mut lengths = [0; 3];
        for run in 0..WARMUP + RUNS {
            for turn in 0..sides {
                // Without raw CDP, the sides are Playwright (0) and Tether (2).
                let side = match (run + turn) % sides {
                    1 if sides == 2 => 2,
                    side => side,
                };
                let (time, length) = self.once(side, op).await;
                lengths[side] = length;
                if run >= WARMUP {
                    times[side].push(time);
                }
            }
        }
        let [playwright, raw, tether] = times;
        Row {
            op,
            playwright: stats(playwright),
            raw: (sides == 3).then(|| stats(raw)),
            tether: stats(tether),
            lengths,
        }
    }
}

/// What one row measures: Playwright's operation, Tether's, and raw CDP's (where there is one),
/// and the length of what each got back (bytes; Playwright's HTML and snapshot in characters).
struct Row {
    op: Op,
    playwright: Stats,
    raw: Option<Stats>,
    tether: Stats,
    lengths: [usize; 3],
}

fn print(page: &str, rows: &[Row]) {
    println!(
        "\n{page}\n{:<32} {:>10} {:>8} {:>8} {:>7} {:>8} {:>8}  lengths PW / raw / Tether",
        "op (ms, p50)", "Playwright", "raw CDP", "Tether", "T / PW", "raw / PW", "T / raw"
    );
    for row in rows {
        let (pw, t) = (ms(row.playwright.median), ms(row.tether.median));
        let raw = row.raw.map(|r| ms(r.median));
        let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        println!(
            "{:<32} {pw:>10.2} {:>8} {t:>8.2} {:>6.2}x {:>8} {:>8}  {:?}",
            row.op.name(),
            or_dash(raw.map(|r| format!("{r:.2}"))),
            t / pw,
            or_dash(raw.map(|r| format!("{:.2}x", r / pw))),
            or_dash(raw.map(|r| format!("{:.2}x", t / r))),
            row.lengths,
        );
    }
}

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        let relay = tether_tests::bench::relayed_worker(&h).await;
        let tether = Tether { relay };
        let blank = json!({ "url": "about:blank" });
        let tab = tether.act("session_start", blank).await["tabId"].clone();
        let mut sides = Sides {
            playwright: Playwright::start(h.browser_ws()),
            raw: raw_tab(&h).await,
            tether,
            tab,
            url: String::new(),
        };
        for (page, ops) in [
            (
                "/fixtures/article.html",
                &[Op::Html, Op::Jpeg, Op::Png, Op::Snapshot][..],
            ),
            ("/long-article", &[Op::Html, Op::Snapshot][..]),
            ("/fixtures/form.html", &[Op::Click, Op::Type, Op::Scan][..]),
            ("/fixtures/article.html", &[Op::Open][..]),
        ] {
            sides.load(&h.url(page)).await;
            let mut rows = Vec::new();
            for op in ops {
                rows.push(sides.row(*op).await);
            }
            print(page, &rows);
        }
    });
}
