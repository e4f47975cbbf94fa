//! The page's Live Screen (docs/protocol.md §10): `browser_snapshot` on a page with the tricky
//! parts (a covered button, shadow DOM with a slot, a same-origin frame, text hidden five ways
//! (display, `hidden`, visibility, content-visibility, a closed `<details>`), a password), its
//! refs used by other actions, stale refs, `recent` after a click, `gist` and the cut at
//! `maxChars`. In both modes.

use serde_json::{json, Value};
use tether_protocol::ErrorCode;
use tether_tests::{run, Harness};

const PAGE: &str = "/fixtures/snapshot.html";

async fn snapshot(h: &Harness, s: &str, tab: i64, extra: Value) -> Value {
    let mut params = json!({ "tabId": tab });
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    h.ok(s, "browser_snapshot", params).await
}

fn markdown(snap: &Value) -> &str {
    snap["markdown"].as_str().expect("markdown")
}

/// The ref written just before `what` (e.g. `button "Add watering can"`).
fn ref_of(markdown: &str, what: &str) -> String {
    let at = markdown
        .find(what)
        .unwrap_or_else(|| panic!("{what} is not in:\n{markdown}"));
    let open = markdown[..at].rfind("[e").expect("a ref before it");
    let close = open + markdown[open..].find(']').unwrap();
    markdown[open + 1..close].to_owned()
}

#[test]
fn a_snapshot_writes_the_page_with_every_element_in_place() {
    run(|h| async move {
        let s = "snap-live";
        let tab = h.start(s, PAGE).await;
        let snap = snapshot(h, s, tab, json!({})).await;
        let md = markdown(&snap);
        assert_eq!(snap["title"], "Snapshot shop");
        assert!(snap["url"].as_str().unwrap().ends_with(PAGE));
        assert_eq!(snap["truncated"], false);
        for line in [
            "# Garden shop",
            "## Sign in",
            "- Tomato seeds",
            "| Item | Price |",
            "### Slotted title",
        ] {
            assert!(md.lines().any(|l| l == line), "no line {line:?} in:\n{md}");
        }
        for shown in [
            "Read the [e",
            "link \"growing guide\" → /fixtures/article.html",
            "textbox \"Email\" = \"ada@example.com\"",
            "checkbox \"Remember me\" checked",
            "combobox \"Quantity\" = \"2\"",
            "button \"Sign in\" disabled",
            "button \"Under the veil\" covered",
            "button \"Buy in shadow\"",
            "textbox \"City\"",
            "button \"Save\"",
            "button \"Care notes\"",
            "Ships in spring",
            "link \"basket\" → #basket",
        ] {
            assert!(md.contains(shown), "{shown:?} is not in:\n{md}");
        }
        assert!(md.contains("textbox \"Password\""), "{md}");
        for hidden in ["hunter2", "Secret"] {
            assert!(!md.contains(hidden), "{hidden:?} shows in:\n{md}");
        }
        let refs = md.matches("[e").count();
        assert_eq!(snap["refs"], refs as u64);

        // A ref from the snapshot reaches into the frame.
        let city = ref_of(md, "textbox \"City\"");
        h.ok(
            s,
            "browser_type",
            json!({ "tabId": tab, "ref": city, "text": "Lyon" }),
        )
        .await;
        let typed = "document.getElementById('frame').contentDocument.getElementById('city').value";
        assert_eq!(h.eval(tab, typed).await, "Lyon");
    });
}

#[test]
fn refs_stay_with_their_element_and_a_gone_one_is_stale() {
    run(|h| async move {
        let s = "snap-refs";
        let tab = h.start(s, PAGE).await;
        let first = snapshot(h, s, tab, json!({})).await;
        let add = ref_of(markdown(&first), "button \"Add watering can\"");
        let remove = ref_of(markdown(&first), "button \"Remove me\"");
        h.ok(s, "browser_click", json!({ "tabId": tab, "ref": add }))
            .await;
        let second = snapshot(h, s, tab, json!({})).await;
        assert_eq!(ref_of(markdown(&second), "button \"Add watering can\""), add);
        assert!(second["version"].as_u64() > first["version"].as_u64());
        let scan = h
            .ok(
                s,
                "browser_xpath_scan",
                json!({ "tabId": tab, "scope": "document" }),
            )
            .await;
        let scanned = scan["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["xpath"] == "/html/body/button[1]")
            .expect("the add button in the scan");
        assert_eq!(scanned["ref"], add.as_str(), "scan and snapshot share refs");

        h.ok(s, "browser_click", json!({ "tabId": tab, "ref": remove }))
            .await;
        let error = h
            .fails_with(
                ErrorCode::ElementNotFound,
                s,
                "browser_click",
                json!({ "tabId": tab, "ref": remove }),
            )
            .await;
        assert!(
            error.message.contains("stale") && error.message.contains("removed"),
            "{}",
            error.message
        );

        h.ok(s, "browser_reload", json!({ "tabId": tab })).await;
        h.ok(s, "browser_wait_for_loaded", json!({ "tabId": tab })).await;
        let error = h
            .fails_with(
                ErrorCode::ElementNotFound,
                s,
                "browser_click",
                json!({ "tabId": tab, "ref": add }),
            )
            .await;
        assert!(
            error.message.contains("not from the page now in this tab")
                && error.message.contains("browser_snapshot"),
            "{}",
            error.message
        );
        let after = snapshot(h, s, tab, json!({})).await;
        let number = |r: &str| r[1..].parse::<u64>().unwrap();
        let fresh = ref_of(markdown(&after), "button \"Add watering can\"");
        assert!(
            number(&fresh) > number(&remove).max(number(&add)),
            "{fresh} reuses a number of the page before the reload"
        );
    });
}

#[test]
fn recent_says_what_a_click_changed() {
    run(|h| async move {
        let s = "snap-recent";
        let tab = h.start(s, PAGE).await;
        let first = snapshot(h, s, tab, json!({ "detail": "recent" })).await;
        assert!(
            markdown(&first).contains("# Garden shop"),
            "the first recent is live"
        );
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='add']" }),
        )
        .await;
        let recent = snapshot(h, s, tab, json!({ "detail": "recent" })).await;
        let md = markdown(&recent);
        let body: Vec<&str> = md.lines().skip(2).collect();
        // The context is the next element: a line of inline elements is compared element by
        // element.
        let buttons = markdown(&first)
            .lines()
            .find(|l| l.contains("Add watering can"))
            .unwrap();
        let next = buttons.find(" [e").map_or(buttons, |at| &buttons[..at]);
        assert_eq!(
            body,
            [
                "Changes since the previous snapshot:",
                "  - Trowel",
                "+ - Watering can",
                &format!("  {next}"),
            ],
            "{md}"
        );
        let again = snapshot(h, s, tab, json!({ "detail": "recent" })).await;
        assert!(markdown(&again).ends_with("No change since the previous snapshot.\n"));
    });
}

#[test]
fn gist_is_a_few_lines_and_max_chars_cuts_at_a_line() {
    run(|h| async move {
        let s = "snap-gist";
        let tab = h.start(s, PAGE).await;
        let gist = snapshot(h, s, tab, json!({ "detail": "gist" })).await;
        let md = markdown(&gist);
        assert!(md.lines().count() <= 5, "{md}");
        assert!(md.contains("Main heading: \"Garden shop\""), "{md}");
        assert!(md.contains("2 links, ") && md.contains("1 form"), "{md}");
        assert!(md.contains("0% down the page"), "{md}");

        let cut = snapshot(h, s, tab, json!({ "maxChars": 300 })).await;
        let md = markdown(&cut);
        assert_eq!(cut["truncated"], true);
        assert!(md.chars().count() <= 300, "{} chars", md.chars().count());
        assert!(
            md.trim_end().lines().last().unwrap().contains("more lines"),
            "{md}"
        );
        assert_eq!(cut["refs"], md.matches("[e").count() as u64);

        let error = h
            .fails_with(
                ErrorCode::InvalidParams,
                s,
                "browser_snapshot",
                json!({ "tabId": tab, "maxChars": 10 }),
            )
            .await;
        assert!(error.message.contains("maxChars"), "{}", error.message);
    });
}

/// A control its label wraps is named by the label's own words, not by its options or text, as
/// the browser names it: a select is "Country", not "Country Choose France...".
#[test]
fn a_control_inside_its_label_is_named_by_the_label_alone() {
    run(|h| async move {
        let s = "snapshot-labels";
        let tab = h.start(s, "/fixtures/task.html").await;
        h.ok(
            s,
            "browser_type",
            json!({ "tabId": tab, "xpath": "//*[@id='notes']", "text": "Bulbs" }),
        )
        .await;
        let snap = snapshot(h, s, tab, json!({})).await;
        let page = markdown(&snap);
        assert!(page.contains("combobox \"Country\" = \"Choose\""), "{page}");
        assert!(page.contains("textbox \"Notes\""), "{page}");
        assert!(!page.contains("Notes Bulbs"), "{page}");
    });
}
