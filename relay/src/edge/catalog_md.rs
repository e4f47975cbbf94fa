//! `GET /api/actions.md`: the action catalog written for an LLM agent (seed 000 §5): what each
//! action does, its params and result, and a curl line ready to run.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use tether_protocol::descriptors::{ActionDescriptor, FieldDescriptor};
use tether_protocol::ActionName;

/// How an agent reads a page and acts on what it read: snapshot, refs, recent.
pub const READING_A_PAGE: &str = "
## Reading a page and acting on it

1. `browser_snapshot` gives the page as compact Markdown: headings, condensed text, lists and small tables, \
and every element you can act on written in place as `[eN] role \"name\"` with its state \
(`= \"value\"`, `checked`, `disabled`, `covered`, `→ href`). Password values and hidden content are never shown.
2. Act on an element by its ref: `{\"tabId\": 3, \"ref\": \"e12\"}` works wherever an action takes `xpath` \
(click, type, hover, select, press a key on it, scroll to it, screenshot it, upload to it).
3. Act and see in one call: an action that can change the page takes `\"observe\": \"recent\"` and its result \
carries `screen`, the lines of the page that changed once it settled (`+ ` added, `- ` removed, with one line of \
context; a page it loaded is waited for): far fewer tokens than the whole page again, and no second call. \
`\"observe\": \"gist\"` gives a few lines (title, main heading, counts, open dialogs). Over MCP this is the default. \
`browser_snapshot` with `\"detail\": \"recent\"` or `\"gist\"` answers the same on its own.
4. Read `observed` on a result: what happened in the tab while the action ran, without asking: console errors \
and warnings (`first` is the first error's text), failed requests, downloads begun, a navigation. \
`browser_console`, `browser_network` and `browser_downloads` tell the rest.
5. A ref names one element for as long as it stays in the page, and is never reused in the tab. \
A ref whose element is gone answers `ELEMENT_NOT_FOUND` saying it is stale: take a new snapshot.
6. Past `maxChars` (24,000 by default) the snapshot ends with a line saying how much was left out; \
scroll and use `\"scope\": \"viewport\"`, or raise `maxChars`. `browser_readability_extract` reads an article in full; \
`browser_screenshot` shows what the Markdown cannot.

";

/// Renders the catalog; `base` is the relay's URL as the reader reaches it.
pub fn render(actions: &[ActionDescriptor], base: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Tether browser actions\n\n\
         Every action is one call: `POST {base}/api/browser/action` with `Authorization: Bearer $TETHER_ORCHESTRATOR_TOKEN` \
         and a JSON body `{{\"sessionId\", \"actionName\", \"params\", \"timeoutMs\"?}}`. The answer is the action's result: \
         `status` is `\"success\"` with `result`, or `\"error\"` with `error.code` and `error.message`.\n\n\
         Start with `session_start`, pass its `tabId` to the other actions, and end with `session_stop`.\n"
    );
    md.push_str(READING_A_PAGE);
    for action in actions {
        let _ = writeln!(
            md,
            "## `{}`: {}\n\n{}\n",
            action.name, action.label, action.description
        );
        fields(&mut md, "Params", &action.params);
        fields(&mut md, "Result", &action.result);
        let _ = writeln!(
            md,
            "```sh\ncurl -s {base}/api/browser/action -H \"Authorization: Bearer $TETHER_ORCHESTRATOR_TOKEN\" \\\n  -H 'Content-Type: application/json' -d '{}'\n```\n",
            example(action)
        );
    }
    md
}

fn fields(md: &mut String, heading: &str, fields: &std::collections::BTreeMap<String, FieldDescriptor>) {
    if fields.is_empty() {
        let _ = writeln!(md, "{heading}: none.\n");
        return;
    }
    let _ = writeln!(md, "{heading}:\n");
    for (name, f) in fields {
        let kind = serde_json::to_value(f.kind).unwrap_or_default();
        let required = if f.required == Some(true) {
            ", required"
        } else {
            ""
        };
        let default = f
            .default
            .as_ref()
            .map(|d| format!(", default {d}"))
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "- `{name}` ({}{required}{default}): {}",
            kind.as_str().unwrap_or("?"),
            f.description
        );
    }
    md.push('\n');
}

/// A body with the required params filled in with plausible values, and the element (if the
/// action takes one) given by ref.
fn example(action: &ActionDescriptor) -> String {
    let own = action
        .name
        .parse::<ActionName>()
        .ok()
        .and_then(|name| name.about().example);
    if let Some(params) = own.and_then(|text| serde_json::from_str::<Value>(text).ok()) {
        return json!({ "sessionId": "my-session", "actionName": action.name, "params": params }).to_string();
    }
    let mut params = Map::new();
    for (name, f) in action.params.iter().filter(|(_, f)| f.required == Some(true)) {
        let value = match name.as_str() {
            "tabId" => json!(123),
            "url" => json!("https://example.com"),
            "xpath" => json!("//button[1]"),
            "text" => json!("hello"),
            "key" => json!("Enter"),
            "values" => json!(["medium"]),
            "expression" => json!("document.title"),
            "artifactIds" => json!(["ARTIFACT_ID_FROM_PUT_ARTIFACTS"]),
            _ => f.default.clone().unwrap_or(Value::Null),
        };
        params.insert(name.clone(), value);
    }
    // An element action names its element by a ref from a scan (or an xpath).
    if action.params.contains_key("ref") {
        params.insert("ref".into(), json!("e3"));
    }
    json!({ "sessionId": "my-session", "actionName": action.name, "params": params }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::ActionCall;

    #[test]
    fn every_example_is_a_call_the_host_accepts() {
        for action in tether_protocol::actions::catalog() {
            let body: Value = serde_json::from_str(&example(action)).unwrap();
            let parsed = ActionCall::parse(&action.name, &body["params"]);
            assert!(parsed.is_ok(), "{}: {:?}", action.name, parsed.err());
        }
    }
}
