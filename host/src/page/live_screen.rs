//! The page's Live Screen as an agent reads it (docs/protocol.md §10): the header, the page's
//! blocks (`live`), what changed since the previous snapshot (`recent`), a few lines (`gist`),
//! and the cut at `maxChars`. Pure text work on what the in-page `snapshot` found.

use similar::{ChangeTag, TextDiff};
use tether_protocol::actions::browser_snapshot::Detail;

use crate::page::library::{PageGist, PageText};

/// Characters of the title the header keeps.
const TITLE_CHARS: usize = 100;

/// The session's previous snapshot of a tab, as `recent` compares against it.
#[derive(Debug, Default)]
pub struct Previous {
    pub url: String,
    pub title: String,
    pub blocks: Vec<String>,
}

impl From<PageText> for Previous {
    fn from(page: PageText) -> Self {
        Self {
            url: page.url,
            title: page.title,
            blocks: page.blocks,
        }
    }
}

/// A Live Screen ready to send: its Markdown, and whether it was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    pub markdown: String,
    pub truncated: bool,
}

/// What a snapshot of `page` says at `detail`, given the session's previous snapshot of the
/// tab (`None`: this is its first, and `recent` says everything, as `live` does).
pub fn render(
    page: &PageText,
    version: u64,
    detail: Detail,
    previous: Option<&Previous>,
    max_chars: usize,
) -> Screen {
    let same_page =
        detail == Detail::Recent && previous.is_some_and(|p| p.url == page.url && p.title == page.title);
    let header = header(page, version, same_page);
    let body = match (detail, previous) {
        (Detail::Gist, _) => gist(&page.gist),
        (Detail::Recent, Some(previous)) => {
            // What changed is never longer than the page it describes: then the page itself.
            let changed = changes(&previous.blocks, &page.blocks);
            match length(&changed) < length(&page.blocks) {
                true => changed,
                false => page.blocks.clone(),
            }
        }
        (Detail::Live | Detail::Recent, _) => page.blocks.clone(),
    };
    cut(&header, &body, max_chars)
}

/// The characters of some lines, as sent.
fn length(lines: &[String]) -> usize {
    lines.iter().map(|l| l.len() + 1).sum()
}

/// The header: the page's title and address, or that they are the previous snapshot's (for
/// `recent`, which answers with what changed); the snapshot's number; how far down the page the
/// viewport is, where the page is longer than the viewport.
fn header(page: &PageText, version: u64, same_page: bool) -> String {
    let viewport = match page.gist.scrollable {
        true => format!("; viewport {}% down the page", page.gist.scrolled),
        false => String::new(),
    };
    if same_page {
        return format!("Same page (snapshot {version}{viewport})");
    }
    let title: String = page.title.split_whitespace().collect::<Vec<_>>().join(" ");
    let title = match title.char_indices().nth(TITLE_CHARS) {
        Some((end, _)) => format!("{}…", &title[..end]),
        None => title,
    };
    format!("Page {title:?} at {} (snapshot {version}{viewport})", page.url)
}

fn gist(gist: &PageGist) -> Vec<String> {
    let plural = |n: u32, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let dialogs = match gist.dialogs.as_slice() {
        [] => "no open dialog".to_owned(),
        names => format!(
            "open dialogs: {}",
            names
                .iter()
                .map(|n| if n.is_empty() {
                    "(unnamed)".to_owned()
                } else {
                    format!("{n:?}")
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut lines = Vec::new();
    if !gist.heading.is_empty() {
        lines.push(format!("Main heading: {:?}", gist.heading));
    }
    lines.push(format!(
        "{}, {}, {}, {}; {dialogs}",
        plural(gist.links, "link"),
        plural(gist.buttons, "button"),
        plural(gist.inputs, "input"),
        plural(gist.forms, "form"),
    ));
    lines
}

/// The lines that went (`- `) and came (`+ `), each run with one line of context (`  `),
/// runs apart marked `  …`; one line when nothing changed.
fn changes(previous: &[String], now: &[String]) -> Vec<String> {
    let old: Vec<&str> = previous.iter().flat_map(|l| items(l)).collect();
    let new: Vec<&str> = now.iter().flat_map(|l| items(l)).collect();
    let diff = TextDiff::from_slices(&old, &new);
    let groups = diff.grouped_ops(1);
    if groups.is_empty() {
        return vec!["No change since the previous snapshot.".to_owned()];
    }
    let mut lines = vec!["Changes since the previous snapshot:".to_owned()];
    for (i, group) in groups.iter().enumerate() {
        if i > 0 {
            lines.push("  …".to_owned());
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => "  ",
                    ChangeTag::Delete => "- ",
                    ChangeTag::Insert => "+ ",
                };
                lines.push(format!("{sign}{}", change.value()));
            }
        }
    }
    lines
}

/// A block line as `recent` compares it: each element written inline (`[eN] ...`) on its own,
/// so a value typed into one field of a form written on one line comes back as that field, not
/// the whole form.
fn items(line: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut start = 0;
    for (at, _) in line.match_indices(" [e") {
        let digits = line[at + 3..].bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && line[at + 3 + digits..].starts_with(']') && at > start {
            items.push(&line[start..at]);
            start = at + 1;
        }
    }
    items.push(&line[start..]);
    items
}

/// The header, a blank line and the body's lines, cut after the last whole line that leaves
/// room for a closing line saying what was left out (the closing line counts too).
fn cut(header: &str, body: &[String], max_chars: usize) -> Screen {
    let mut markdown = format!("{header}\n\n");
    let mut used = markdown.chars().count();
    // Characters from each line to the end, counted once: the closing line names what is left,
    // and asking it of every line afresh was quadratic in the page's length.
    let mut left = vec![0; body.len() + 1];
    for (i, line) in body.iter().enumerate().rev() {
        left[i] = left[i + 1] + line.chars().count() + 1;
    }
    for (i, line) in body.iter().enumerate() {
        let len = left[i] - left[i + 1];
        let rest = body.len() - i;
        let closing = closing_line(rest, left[i]);
        if used + len + closing.chars().count() > max_chars && (rest > 1 || used + len > max_chars) {
            markdown.push_str(&closing);
            return Screen {
                markdown,
                truncated: true,
            };
        }
        markdown.push_str(line);
        markdown.push('\n');
        used += len;
    }
    Screen {
        markdown,
        truncated: false,
    }
}

/// What the cut leaves out: `lines` lines of `chars` characters.
fn closing_line(lines: usize, chars: usize) -> String {
    format!(
        "… {lines} more lines ({chars} characters) left out at maxChars; ask with a larger maxChars, or scope \"viewport\" after browser_scroll\n"
    )
}

/// How many refs (`[eN]`) the Markdown names.
pub fn count_refs(markdown: &str) -> u32 {
    let mut count = 0;
    for (at, _) in markdown.match_indices("[e") {
        let digits = markdown[at + 2..].bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && markdown.as_bytes().get(at + 2 + digits) == Some(&b']') {
            count += 1;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(blocks: &[&str]) -> PageText {
        PageText {
            url: "http://127.0.0.1/shop".into(),
            title: "Shop".into(),
            blocks: blocks.iter().map(|b| b.to_string()).collect(),
            gist: PageGist::default(),
        }
    }

    /// A previous snapshot of the same page as `page` makes.
    fn seen(blocks: &[String]) -> Previous {
        Previous {
            url: "http://127.0.0.1/shop".into(),
            title: "Shop".into(),
            blocks: blocks.to_vec(),
        }
    }

    #[test]
    fn live_is_the_header_then_the_blocks() {
        let screen = render(
            &page(&["# Shop", "[e1] link \"Home\" → /"]),
            1,
            Detail::Live,
            None,
            24_000,
        );
        assert_eq!(
            screen.markdown,
            "Page \"Shop\" at http://127.0.0.1/shop (snapshot 1)\n\n# Shop\n[e1] link \"Home\" → /\n"
        );
        assert!(!screen.truncated);
        assert_eq!(count_refs(&screen.markdown), 1);
        // Where the page is longer than the viewport, the header says where the viewport is.
        let mut long = page(&["# Shop"]);
        long.gist.scrollable = true;
        long.gist.scrolled = 40;
        let screen = render(&long, 2, Detail::Live, None, 24_000);
        assert!(
            screen.markdown.starts_with(
                "Page \"Shop\" at http://127.0.0.1/shop (snapshot 2; viewport 40% down the page)\n"
            ),
            "{}",
            screen.markdown
        );
    }

    #[test]
    fn recent_names_the_page_only_when_it_is_not_the_previous_ones() {
        let now = page(&["# Shop"]);
        let same = render(&now, 2, Detail::Recent, Some(&seen(&now.blocks)), 24_000);
        assert!(
            same.markdown.starts_with("Same page (snapshot 2)\n"),
            "{}",
            same.markdown
        );
        // Another address, or another title: the header names the page.
        for (url, title) in [
            ("http://127.0.0.1/", "Shop"),
            ("http://127.0.0.1/shop", "Shop (1)"),
        ] {
            let before = Previous {
                url: url.into(),
                title: title.into(),
                blocks: now.blocks.clone(),
            };
            let named = render(&now, 3, Detail::Recent, Some(&before), 24_000);
            assert!(
                named.markdown.starts_with("Page \"Shop\" at "),
                "{}",
                named.markdown
            );
        }
    }

    #[test]
    fn recent_shows_changed_lines_with_one_line_of_context() {
        let rest = [
            "d",
            "Pots, seeds and tools for every garden",
            "Delivered in two days",
            "Returns are free",
        ];
        let before: Vec<String> = ["# Shop", "a", "b", "Basket: empty", "c"]
            .iter()
            .chain(&rest)
            .map(|l| l.to_string())
            .collect();
        let lines: Vec<&str> = [
            "# Shop",
            "a",
            "b",
            "Basket: 1 item",
            "[e9] button \"Checkout\"",
            "c",
        ]
        .iter()
        .chain(&rest)
        .copied()
        .collect();
        let now = page(&lines);
        let screen = render(&now, 2, Detail::Recent, Some(&seen(&before)), 24_000);
        let body: Vec<&str> = screen.markdown.lines().skip(2).collect();
        assert_eq!(
            body,
            [
                "Changes since the previous snapshot:",
                "  b",
                "- Basket: empty",
                "+ Basket: 1 item",
                "+ [e9] button \"Checkout\"",
                "  c"
            ]
        );
        let same = render(&now, 3, Detail::Recent, Some(&seen(&now.blocks)), 24_000);
        assert!(same
            .markdown
            .ends_with("No change since the previous snapshot.\n"));
    }

    #[test]
    fn recent_compares_a_line_of_inline_elements_element_by_element() {
        let fields = |name: &str| {
            format!("[e1] textbox \"Name\"{name} [e2] textbox \"Email\" [e3] combobox \"Country\" = \"Choose\" [e4] button \"Send\"")
        };
        let rest = [
            "Pots, seeds and tools for every garden",
            "Delivered in two days",
            "Returns are free",
        ];
        let before: Vec<String> = std::iter::once(fields(""))
            .chain(rest.map(String::from))
            .collect();
        let line = fields(" = \"Ada\"");
        let lines: Vec<&str> = std::iter::once(line.as_str()).chain(rest).collect();
        let screen = render(&page(&lines), 2, Detail::Recent, Some(&seen(&before)), 24_000);
        let body: Vec<&str> = screen.markdown.lines().skip(2).collect();
        assert_eq!(
            body,
            [
                "Changes since the previous snapshot:",
                "- [e1] textbox \"Name\"",
                "+ [e1] textbox \"Name\" = \"Ada\"",
                "  [e2] textbox \"Email\"",
            ]
        );
        assert_eq!(
            items("Click [e5] link \"here\" [e6x] to go"),
            ["Click", "[e5] link \"here\" [e6x] to go"]
        );
    }

    #[test]
    fn recent_is_never_longer_than_the_page_it_describes() {
        let before: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let now = page(&["x", "y", "z"]);
        let body = |markdown: String| markdown.split_once("\n\n").unwrap().1.to_owned();
        assert_eq!(
            body(render(&now, 2, Detail::Recent, Some(&seen(&before)), 24_000).markdown),
            body(render(&now, 2, Detail::Live, None, 24_000).markdown)
        );
    }

    #[test]
    fn the_first_recent_is_live() {
        let now = page(&["# Shop"]);
        assert_eq!(
            render(&now, 1, Detail::Recent, None, 24_000).markdown,
            render(&now, 1, Detail::Live, None, 24_000).markdown
        );
    }

    #[test]
    fn a_cut_ends_at_a_line_and_says_what_was_left_out_within_max_chars() {
        let lines: Vec<String> = (0..100).map(|i| format!("line {i} {}", "x".repeat(40))).collect();
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let screen = render(&page(&refs), 1, Detail::Live, None, 1000);
        assert!(screen.truncated);
        assert!(
            screen.markdown.chars().count() <= 1000,
            "{}",
            screen.markdown.chars().count()
        );
        let last = screen.markdown.lines().last().unwrap();
        assert!(last.starts_with("… ") && last.contains("more lines"), "{last}");
        let kept = screen.markdown.lines().filter(|l| l.starts_with("line ")).count();
        assert!(
            last.starts_with(&format!("… {} more lines", 100 - kept)),
            "{last}"
        );
    }

    #[test]
    fn refs_are_counted_only_when_whole() {
        assert_eq!(count_refs("[e1] a [e22] b [e] c [ex] [e3"), 2);
    }
}
