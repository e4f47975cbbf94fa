//! `browser_snapshot` measured, on the test kit's one Chromium.
//!
//! Speed: a document-scope snapshot of a generated 2,000-element page (and of the
//! 20,000-element one) against `browser_xpath_scan` of the same page, end to end through
//! the host. Size: on real-world pages, the snapshot's
//! characters against Playwright's AI snapshot of the same page in the same browser (what
//! Playwright MCP's browser_snapshot returns), and whether it names every link, button and
//! input Playwright names.
//!
//! ```sh
//! cargo bench -p tether-tests --bench snapshot
//! # size too: Mozilla Readability's test pages, and Playwright from npm
//! git clone --depth 1 https://github.com/mozilla/readability /tmp/readability
//! (cd tests/benches/playwright && npm install)
//! TETHER_SNAPSHOT_CORPUS=/tmp/readability/test/test-pages cargo bench -p tether-tests --bench snapshot
//! # or some of its pages: TETHER_SNAPSHOT_PAGES=wikipedia,bbc-1,...
//! ```
//!
//! Figures go to docs/performance.md.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};
use tether_tests::bench::{compare, host, ms, on_tab, open, SESSION};
use tether_tests::Harness;

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        speed(&h, 2_000).await;
        speed(&h, 20_000).await;
        match std::env::var_os("TETHER_SNAPSHOT_CORPUS") {
            Some(corpus) => size(&h, Path::new(&corpus)).await,
            None => println!(
                "\nsize: set TETHER_SNAPSHOT_CORPUS to Readability's test-pages folder (see the header)"
            ),
        }
    });
}

/// `browser_snapshot` against `browser_xpath_scan`, both of the whole document, through the
/// host, measured in alternation. End to end bounds the time in the page from above: timing
/// the library inside the page from separate `Runtime.evaluate` calls gave figures above the
/// end-to-end ones (53 ms in the page against 24.5 ms end to end on 2,000 elements), so it
/// was not measuring what the host runs.
async fn speed(h: &Harness, elements: usize) {
    let (tab, _raw) = open(h, &format!("/big/{elements}")).await;
    let snapshot = on_tab(tab, json!({ "scope": "document", "maxChars": 10_000_000 }));
    let scan = on_tab(tab, json!({ "scope": "document" }));
    let (snap, scanned) = compare(
        || host(h, "browser_snapshot", snapshot.clone()),
        || host(h, "browser_xpath_scan", scan.clone()),
    )
    .await;
    println!(
        "{elements:>6}-element page, end to end: browser_snapshot p50 {:.1} ms (p90 {:.1}), \
         browser_xpath_scan p50 {:.1} ms (p90 {:.1}): snapshot/scan {:.2}x",
        ms(snap.median),
        ms(snap.p90),
        ms(scanned.median),
        ms(scanned.p90),
        ms(snap.median) / ms(scanned.median)
    );
}

/// What a snapshot names, by kind, as Playwright's names are counted.
fn tether_names(markdown: &str) -> HashMap<&'static str, usize> {
    let mut counts = HashMap::new();
    for (at, _) in markdown.match_indices("[e") {
        let rest = &markdown[at..];
        let Some(close) = rest.find("] ") else { continue };
        let role = rest[close + 2..].split([' ', '\n']).next().unwrap_or_default();
        let kind = match role {
            "link" => "link",
            "button" => "button",
            "textbox" | "searchbox" | "combobox" | "checkbox" | "radio" | "switch" | "slider"
            | "spinbutton" => "input",
            _ => continue,
        };
        *counts.entry(kind).or_default() += 1;
    }
    counts
}

async fn size(h: &Harness, corpus: &Path) {
    // TETHER_SNAPSHOT_PAGES=a,b,c: just these pages of the corpus.
    let chosen: Vec<String> = std::env::var("TETHER_SNAPSHOT_PAGES")
        .map(|v| v.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(corpus)
        .expect("TETHER_SNAPSHOT_CORPUS is a folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("source.html").is_file())
        .filter(|p| chosen.is_empty() || chosen.iter().any(|c| p.ends_with(c)))
        .collect();
    pages.sort();
    let urls: Vec<String> = pages
        .iter()
        .map(|p| h.url(&format!("/corpus/{}", p.file_name().unwrap().to_string_lossy())))
        .collect();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/playwright/ai-snapshot.mjs");
    let started = Instant::now();
    let output = std::process::Command::new("node")
        .arg(&script)
        .arg(h.browser_ws())
        .args(&urls)
        .output()
        .expect("node runs (install Node.js, and npm install in tests/benches/playwright)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let playwright: HashMap<String, Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| (v["url"].as_str().unwrap().to_owned(), v))
        .collect();
    println!(
        "\nPlaywright's AI snapshots of {} pages: {:.0} s",
        urls.len(),
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:<40} {:>9} {:>9} {:>6}  named (Tether/Playwright: links buttons inputs)",
        "page", "Tether", "Playwright", "ratio"
    );
    let (mut ours_total, mut theirs_total, mut ratios, mut short) = (0usize, 0usize, Vec::new(), Vec::new());
    let started = h
        .act(SESSION, "session_start", json!({ "url": "about:blank" }))
        .await;
    let tab = started.result.as_ref().unwrap().value()["tabId"]
        .as_i64()
        .unwrap();
    for url in &urls {
        h.act(
            SESSION,
            "browser_navigate",
            json!({ "tabId": tab, "url": url, "timeoutMs": 30_000 }),
        )
        .await;
        let snap = h
            .act(
                SESSION,
                "browser_snapshot",
                json!({ "tabId": tab, "maxChars": 100_000_000 }),
            )
            .await;
        let markdown = snap.result.as_ref().unwrap().value()["markdown"]
            .as_str()
            .unwrap()
            .to_owned();
        let theirs = &playwright[url];
        let (ours_chars, their_chars) = (
            markdown.chars().count(),
            theirs["chars"].as_u64().unwrap() as usize,
        );
        if their_chars == 0 {
            continue; // a page that shows nothing without its scripts
        }
        ours_total += ours_chars;
        theirs_total += their_chars;
        let ratio = ours_chars as f64 / their_chars as f64;
        ratios.push(ratio);
        let ours = tether_names(&markdown);
        let named = ["link", "button", "input"].map(|k| {
            let (a, b) = (
                ours.get(k).copied().unwrap_or(0),
                theirs["roles"][k].as_array().map_or(0, Vec::len),
            );
            if a < b {
                short.push(format!("{url}: {k} {a} < {b}"));
            }
            format!("{a}/{b}")
        });
        let name = url.rsplit('/').next().unwrap();
        println!(
            "{name:<40} {ours_chars:>9} {their_chars:>9} {ratio:>6.2}  {}",
            named.join(" ")
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "\n{} pages: Tether {ours_total} chars, Playwright {theirs_total}: {:.2}x in all; per page median {:.2}x, p90 {:.2}x, max {:.2}x",
        ratios.len(),
        ours_total as f64 / theirs_total as f64,
        ratios[ratios.len() / 2],
        ratios[ratios.len() * 9 / 10],
        ratios[ratios.len() - 1]
    );
    println!(
        "pages where Tether names fewer of a kind than Playwright: {}",
        short.len()
    );
    for line in short {
        println!("  {line}");
    }
}
