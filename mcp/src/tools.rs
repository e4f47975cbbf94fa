//! `tools/list`: a tool per catalog action of the groups chosen ([`Caps`]), its input schema made
//! from the action's own params type, so MCP and `/api/actions` cannot disagree on what a field
//! accepts, and its description written for a model (`briefs`). In MCP `tabId` is optional
//! (the current tab) and `sessionId` names a session other than the agent's own.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};
use tether_protocol::actions::Category;
use tether_protocol::ActionName;

use crate::briefs::{brief, SETTLES};
use crate::call::{OBSERVE, SCREENSHOT_MAX_WIDTH};
use crate::caps::{Caps, Group};
use crate::schema;

/// The words for the parameters many tools share, said once the way a model needs them.
const SHARED: [(&str, &str); 6] = [
    ("tabId", "The tab to act on; without it, the current tab."),
    ("sessionId", "The session to act in; without it, your own."),
    ("ref", "The element's ref (eN) from browser_snapshot."),
    ("xpath", "In place of ref: an XPath."),
    (
        "observe",
        "What to show once settled: recent (what changed), gist (a few lines) or none.",
    ),
    (
        "settle",
        "auto: wait for the page to settle; none: return at once.",
    ),
];

/// The parameters listed only with the `options` group: each has a default that suits an agent.
const OPTIONS: [&str; 3] = ["dialog", "settleMs", "observeMaxChars"];

/// The default tools (`Caps::default()`), in catalog order.
pub fn tools() -> Vec<Tool> {
    listed(Caps::default(), &[])
}

/// The tools of the chosen groups, in catalog order; those that take a secret name the ones
/// the browser holds (docs/protocol.md §18).
pub fn listed(caps: Caps, secrets: &[String]) -> Vec<Tool> {
    ActionName::ALL
        .iter()
        .filter(|action| caps.lists(**action))
        .map(|&action| tool(action, caps, secrets))
        .collect()
}

fn tool(action: ActionName, caps: Caps, secrets: &[String]) -> Tool {
    let mut description = brief(action).to_owned();
    let takes_secret = matches!(
        action,
        ActionName::BrowserType | ActionName::BrowserFillForm | ActionName::BrowserSecrets
    );
    if takes_secret && !secrets.is_empty() {
        description.push_str(&format!(" Secrets this browser holds: {}.", secrets.join(", ")));
    }
    let schema = input_schema(action, caps);
    // An action that takes `settle` ends once the page settled after it.
    if schema.get("properties").and_then(|p| p.get("settle")).is_some() {
        description.push_str(SETTLES);
    }
    let mut tool = Tool::new(action.as_str(), description, Arc::new(schema))
        .with_title(action.descriptor().label.clone());
    if action.descriptor().category == Category::Extract {
        tool = tool.with_annotations(ToolAnnotations::new().read_only(true));
    }
    tool
}

/// The params' schema as an agent calls the tool: lean ([`schema::lean`]); `tabId` optional;
/// the defaults MCP fills in (`observe: "recent"`, screenshots 1280 pixels wide); `sessionId`
/// with the `sessions` group; the rarely needed parameters with the `options` group (they are
/// taken without it too).
pub fn input_schema(action: ActionName, caps: Caps) -> JsonObject {
    let Value::Object(mut schema) = schema::lean(action.params_schema()) else {
        return JsonObject::new();
    };
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|name| name != "tabId");
        if required.is_empty() {
            schema.remove("required");
        }
    }
    let properties = schema
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut();
    if let Some(properties) = properties {
        if let Some(Value::Object(observe)) = properties.get_mut("observe") {
            observe.insert("default".into(), OBSERVE.into());
        }
        if let Some(Value::Object(width)) = properties.get_mut("maxWidth") {
            width.insert("default".into(), SCREENSHOT_MAX_WIDTH.into());
        }
        if !caps.has(Group::Options) {
            properties.retain(|name, _| !OPTIONS.contains(&name.as_str()));
        }
        if caps.has(Group::Sessions) {
            properties.insert("sessionId".into(), json!({ "type": "string", "minLength": 1 }));
        }
        for (name, words) in SHARED {
            if let Some(Value::Object(property)) = properties.get_mut(name) {
                property.insert("description".into(), words.into());
            }
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
        tools.iter().find(|t| t.name == name).unwrap()
    }

    #[test]
    fn every_action_is_a_tool_whose_tab_is_optional() {
        let tools = listed(Caps::all(), &[]);
        assert_eq!(tools.len(), ActionName::ALL.len());
        for (tool, action) in tools.iter().zip(ActionName::ALL) {
            assert_eq!(tool.name, action.as_str());
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
            let required = tool.input_schema.get("required").cloned().unwrap_or(json!([]));
            assert!(
                !required.as_array().unwrap().contains(&json!("tabId")),
                "{}",
                tool.name
            );
            assert!(tool.input_schema["properties"].get("sessionId").is_some());
        }
        let click = named(&tools, "browser_click");
        assert!(click.input_schema["properties"].get("dialog").is_some());
        let navigate = named(&tools, "browser_navigate");
        assert_eq!(navigate.input_schema["required"], json!(["url"]));
    }

    #[test]
    fn the_default_tools_are_the_browsing_ones_with_the_parameters_most_calls_need() {
        let tools = tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert!(names.contains(&"browser_fill_form") && names.contains(&"browser_tabs"));
        assert!(!names.contains(&"browser_evaluate") && !names.contains(&"session_start"));
        let click = named(&tools, "browser_click").input_schema["properties"].clone();
        assert!(click.get("ref").is_some() && click.get("settle").is_some());
        for hidden in ["dialog", "settleMs", "observeMaxChars", "sessionId"] {
            assert!(click.get(hidden).is_none(), "{hidden}");
        }
        // What the schema says is what MCP does.
        assert_eq!(click["observe"]["default"], json!("recent"));
        let shot = named(&tools, "browser_screenshot").input_schema["properties"].clone();
        assert_eq!(shot["maxWidth"]["default"], json!(1280));
    }

    /// Playwright MCP 0.0.83's `tools/list` for its 25 default tools, as the MCP SDK's client
    /// holds it (`agent_step` bench, 2026-11-27). Many clients send the list with every model
    /// call.
    const PLAYWRIGHT_MCP_LIST_BYTES: usize = 20_296;

    #[test]
    fn the_default_list_is_at_most_four_fifths_of_playwright_mcps() {
        let list = rmcp::model::ListToolsResult::with_all_items(tools());
        let bytes = serde_json::to_string(&list).unwrap().len();
        assert!(
            bytes * 5 <= PLAYWRIGHT_MCP_LIST_BYTES * 4,
            "tools/list is {bytes} bytes"
        );
    }
}
