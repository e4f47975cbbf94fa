//! The Markdown an agent needs to drive this relay (docs/protocol.md §11, seed 000 §5): how to call
//! it (MCP and curl), auth, the session rules and the catalog as a table. Served as
//! `GET /api/agent.md`, printed by `tether-relay agent-docs`, and injected into an agent's
//! instructions file between markers, where only the marked section ever changes.
//!
//! The docs name the environment variable that holds the token, never a token: they are meant
//! to be committed.

use std::fmt::Write as _;
use std::path::Path;

use tether_protocol::descriptors::ActionDescriptor;

use crate::edge::catalog_md::READING_A_PAGE;

pub const START: &str = "<!-- tether:start -->";
pub const END: &str = "<!-- tether:end -->";

/// The docs, for a relay reached at `base` (e.g. `http://127.0.0.1:17800`).
pub fn render(actions: &[ActionDescriptor], base: &str) -> String {
    let mut md = format!(
        "# Driving a browser through Tether

Tether drives a real Chromium-family browser for you: a person's own Chrome (through the Tether \
extension, the person watching and able to stop you) or a headless worker. The relay is at `{base}`.

## Connect

- **MCP** (Streamable HTTP): `{base}/mcp` with the header `Authorization: Bearer $TETHER_ORCHESTRATOR_TOKEN`. \
Claude Code: `claude mcp add --transport http tether {base}/mcp --header \"Authorization: Bearer $TETHER_ORCHESTRATOR_TOKEN\"`.
- **MCP without a relay** (a headless Chromium of its own): `claude mcp add tether -- tether-host mcp`.
- **HTTP**: one call per action, `POST {base}/api/browser/action`:

```sh
curl -s {base}/api/browser/action -H \"Authorization: Bearer $TETHER_ORCHESTRATOR_TOKEN\" \\
  -H 'Content-Type: application/json' \\
  -d '{{\"sessionId\": \"my-task\", \"actionName\": \"session_start\", \"params\": {{\"url\": \"https://example.com\"}}}}'
```

The token is in the environment variable `TETHER_ORCHESTRATOR_TOKEN` (the person who runs the relay has it). \
Never write it into a file or a message.

## Sessions and tabs

- A session is one task. Its actions run one at a time, in order; its tabs open in the background, in a tab \
group, and the person's own tabs are never touched.
- Over MCP your MCP session has a Tether session of its own, ended with it, its tabs closed (`sessionId`, listed \
with the `sessions` tool group, names another). `tabId` is optional: without it, the session's current tab, the \
last one an action ran on or opened. `browser_navigate` opens the session's tab when it has none. Every result \
names the tab it acted on. The tools come in groups (`/mcp?caps=all` for every one).
- Over HTTP, start with `session_start`, then act; `tabId` may be left out as in MCP (the session's current tab). \
End with `session_stop`. \
Give each action an `actionId` of your own: if the connection drops or the relay restarts before you have its \
result, send the same action with the same `actionId` again. You get its one result (`replayed: true`), and the \
browser never runs it twice.
- An action that can change the page (click, type, navigate, ...) returns once the page settled after it: the \
requests, short timers and animations it set going, and a navigation it caused, have finished, so its result \
(and `observe`'s screen) is the page your step left, not the page mid-way. `settled` says what it waited for; \
a page that keeps loading stops the wait at `settleMs` (5000 by default), with `settled.pending` naming what \
still ran. A clock or polling the page runs on its own is never waited for. `settle: \"none\"` returns at once.
- Every answer is a result (`status` \"success\" with `result`) or an error with a `code` and a `message` that \
says what to do. `ELEMENT_NOT_FOUND`: the page changed, take a new snapshot. `ELEMENT_NOT_INTERACTABLE`: something \
covers the element (its message names it). `NO_CLIENT_SELECTED` / `CLIENT_OFFLINE`: no browser is online; ask \
the person to open theirs. `USER_DENIED`: the person declined; do not retry it unasked.
"
    );
    md.push_str(READING_A_PAGE);
    md.push_str("## Actions\n\n| action | what it does | params (`?` optional) |\n|---|---|---|\n");
    for action in actions {
        let params: Vec<String> = action
            .params
            .iter()
            .map(|(name, f)| match f.required {
                Some(true) => format!("`{name}`"),
                _ => format!("`{name}?`"),
            })
            .collect();
        let _ = writeln!(
            md,
            "| `{}` | {} | {} |",
            action.name,
            first_sentence(&action.description).replace('|', "\\|"),
            params.join(", ")
        );
    }
    let _ = writeln!(
        md,
        "\nEvery param and result field, with a curl line per action: `{base}/api/actions.md`."
    );
    md
}

/// A description's first sentence: enough for the table; the catalog has the rest.
fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(end) => &text[..=end],
        None => text,
    }
}

/// `file`'s text with `docs` between the markers: the marked section replaced, or appended
/// at the end when the file has none (a blank line before it). The rest is kept byte for
/// byte, so injecting the same docs twice changes nothing.
pub fn inject(file: &str, docs: &str) -> Result<String, String> {
    let section = format!("{START}\n{}\n{END}", docs.trim_end());
    match (file.find(START), file.find(END)) {
        (Some(start), Some(end)) if start < end => {
            Ok(format!("{}{section}{}", &file[..start], &file[end + END.len()..]))
        }
        (None, None) if file.is_empty() => Ok(format!("{section}\n")),
        (None, None) => {
            let gap = if file.ends_with("\n\n") {
                ""
            } else if file.ends_with('\n') {
                "\n"
            } else {
                "\n\n"
            };
            Ok(format!("{file}{gap}{section}\n"))
        }
        _ => Err(format!(
            "the file has a broken Tether section: it needs {START} and then {END}; fix or remove them and run again"
        )),
    }
}

/// Writes the docs into `path` between the markers, creating the file when absent.
pub fn inject_into(path: &Path, docs: &str) -> anyhow::Result<()> {
    let before = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    };
    let after = inject(&before, docs).map_err(|why| anyhow::anyhow!("{}: {why}", path.display()))?;
    if after != before {
        std::fs::write(path, after).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCS: &str = "# Tether\nsome docs\n";

    #[test]
    fn injecting_creates_appends_and_replaces_only_the_section() {
        let created = inject("", DOCS).unwrap();
        assert_eq!(created, format!("{START}\n# Tether\nsome docs\n{END}\n"));

        let mine = "# My project\n\nRules of the house.";
        let appended = inject(mine, DOCS).unwrap();
        assert!(appended.starts_with("# My project\n\nRules of the house.\n\n<!-- tether:start -->"));
        assert_eq!(inject(&appended, DOCS).unwrap(), appended, "idempotent");

        let edited = appended.replace("Rules of the house.", "Rules, edited.") + "\nAfter.\n";
        let replaced = inject(&edited, "# Tether\nnew docs").unwrap();
        assert!(replaced.contains("new docs") && !replaced.contains("some docs"));
        assert!(replaced.starts_with("# My project\n\nRules, edited.\n\n"));
        assert!(replaced.ends_with(&format!("{END}\n\nAfter.\n")));
    }

    #[test]
    fn a_broken_section_is_refused_not_guessed() {
        let broken = format!("text\n{END}\nmore\n{START}\n");
        assert!(inject(&broken, DOCS).unwrap_err().contains("broken"));
        assert!(inject(&format!("{START}\nno end"), DOCS).is_err());
    }

    #[test]
    fn the_docs_name_the_token_variable_and_every_action() {
        let docs = render(tether_protocol::actions::catalog(), "http://127.0.0.1:17800");
        assert!(docs.contains("$TETHER_ORCHESTRATOR_TOKEN"));
        assert!(docs.contains("http://127.0.0.1:17800/mcp"));
        for action in tether_protocol::actions::catalog() {
            assert!(
                docs.contains(&format!("| `{}` |", action.name)),
                "{}",
                action.name
            );
        }
    }
}
