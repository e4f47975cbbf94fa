//! One agent step, as an agent takes it through MCP, against Playwright MCP on the same
//! Chromium (docs/protocol.md §20): `tether-host mcp` and `@playwright/mcp` on stdio, driven by
//! the official MCP SDK's client (`tests/mcp-client/agent_step.mjs`) in turns, on pages whose
//! button sets one kind of work going (`tests/fixtures/step.html`). For each page: whether the
//! reply showed the page's final state, ms per step as the client sees it, characters of the
//! reply; and Tether's step with `settle: "none"`, the step as it was before settling.
//!
//!     npm ci --prefix tests/mcp-client && npm ci --prefix tests/benches/playwright
//!     cargo build --release -p tether-host && cargo bench -p tether-tests --bench agent_step
//!
//! Both servers run at their defaults (headless, a fresh profile), on Debian's Chromium.
//! Figures go to docs/performance.md.

use std::collections::BTreeMap;

use serde_json::Value;
use tether_tests::bench::median_ms;

const RUNS: usize = 7;

/// The page's own time for each kind: how long the work its button sets going takes.
const OWN_MS: &[(&str, f64)] = &[
    ("static", 0.0),
    ("fetch 100 ms", 100.0),
    ("fetch 600 ms", 600.0),
    ("chain of two fetches", 200.0),
    ("timer 300 ms", 300.0),
    ("form POST, redirect after 400 ms", 400.0),
    ("debounced search", 350.0),
    ("long-poll never answered", f64::INFINITY),
    ("clock beside a button", 0.0),
];

fn chromium() -> &'static str {
    ["/usr/lib/chromium/chromium", "/usr/bin/chromium"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("Debian's chromium (apt-get install -y chromium)")
}

fn main() {
    tether_tests::block_on(async {
        let pages = tether_tests::fixtures::Server::start().await;
        let base = pages.url("");
        let base = base.trim_end_matches('/');
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/mcp-client/agent_step.mjs");
        let tether = tether_tests::binary("tether-host");
        let tether = tether.to_str().unwrap();
        let playwright = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/benches/playwright/node_modules/.bin/playwright-mcp"
        );
        let runs = RUNS.to_string();
        let args = [
            script,
            base,
            &runs,
            "tether",
            tether,
            "mcp",
            "--",
            "tether-none",
            tether,
            "mcp",
            "--",
            "tether-all-list",
            tether,
            "mcp",
            "--caps",
            "all",
            "--",
            "playwright-mcp",
            playwright,
            "--headless",
            "--isolated",
            "--no-sandbox",
            "--executable-path",
            chromium(),
        ];
        let output = tokio::process::Command::new("node")
            .args(args)
            .env("TETHER_CHROMIUM", chromium())
            .output()
            .await
            .expect("node runs the bench's MCP client (npm ci in tests/mcp-client and tests/benches/playwright first)");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let mut table: BTreeMap<(usize, String), BTreeMap<String, Value>> = BTreeMap::new();
        let mut seats = Vec::new();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let row: Value = serde_json::from_str(line).unwrap();
            let Some(kind) = row["kind"].as_str().map(str::to_owned) else {
                seats.push(row);
                continue;
            };
            let order = OWN_MS.iter().position(|(k, _)| *k == kind).unwrap_or(usize::MAX);
            let server = row["server"].as_str().unwrap().to_owned();
            table.entry((order, kind)).or_default().insert(server, row);
        }
        println!("{RUNS} steps each, in turns, p50; settled: the reply showed the page's final state (runs that did / runs)");
        println!("| page | its own ms | Tether ms | settled | chars | Playwright MCP ms | settled | chars | Tether / Playwright | Tether settle: none ms |");
        println!("|---|---|---|---|---|---|---|---|---|---|");
        for ((order, kind), rows) in &table {
            let own = OWN_MS.get(*order).map_or(f64::NAN, |(_, ms)| *ms);
            let cell = |server: &str| {
                let row = &rows[server];
                let settled = row["settled"].as_array().unwrap();
                let yes = settled.iter().filter(|s| s.as_bool() == Some(true)).count();
                (
                    median_ms(&row["ms"]),
                    format!("{yes}/{}", settled.len()),
                    median_ms(&row["chars"]),
                )
            };
            let (t_ms, t_settled, t_chars) = cell("tether");
            let (p_ms, p_settled, p_chars) = cell("playwright-mcp");
            let (n_ms, _, _) = cell("tether-none");
            println!(
                "| {kind} | {own} | {t_ms:.1} | {t_settled} | {t_chars:.0} | {p_ms:.1} | {p_settled} | {p_chars:.0} | {:.2} | {n_ms:.1} |",
                t_ms / p_ms
            );
        }
        seat(&seats);
    });
}

/// The agent's seat: each server's tools/list, and the characters read for the small task.
fn seat(seats: &[Value]) {
    let of = |server: &str| {
        seats
            .iter()
            .find(|s| s["server"] == server)
            .cloned()
            .unwrap_or_default()
    };
    let playwright = of("playwright-mcp");
    let (list, task) = (
        playwright["listBytes"].as_f64().unwrap_or(f64::NAN),
        playwright["taskChars"].as_f64().unwrap_or(f64::NAN),
    );
    println!();
    println!("| server | tools/list bytes | of Playwright MCP's | small task: characters read | of Playwright MCP's | answer read |");
    println!("|---|---:|---:|---:|---:|---|");
    for (server, name) in [
        ("tether", "Tether (default groups)"),
        ("tether-all-list", "Tether (all groups)"),
        ("playwright-mcp", "Playwright MCP"),
    ] {
        let row = of(server);
        let bytes = row["listBytes"].as_f64().unwrap_or(f64::NAN);
        let chars = row["taskChars"].as_f64();
        println!(
            "| {name} | {bytes:.0} | {:.2}x | {} | {} | {} |",
            bytes / list,
            chars.map_or("".into(), |c| format!("{c:.0}")),
            chars.map_or("".into(), |c| format!("{:.2}x", c / task)),
            row["taskDone"]
                .as_bool()
                .map_or("", |d| if d { "yes" } else { "no" }),
        );
    }
}
