//! `tools/list`: one tool per catalog action, its description and its input schema made from
//! the action's own descriptor and params type, so MCP and `/api/actions` cannot disagree. In
//! MCP `tabId` is optional (the current tab) and every tool takes an optional `sessionId`.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};
use tether_protocol::actions::Category;
use tether_protocol::ActionName;

const SESSION_ID: &str =
    "The Tether session to act in. Without it, this MCP session has a session of its own.";
const TAB_ID: &str =
    "The tab to act on. Without it, the session's current tab: the last one an action ran on or opened.";

const SETTLES: &str = " Returns once the page settled after it: the requests, short timers and animations it set going, and a navigation it caused, finished (settle: \"none\" returns at once).";

/// Whether an action ends once the page settled after it (it takes `settle`).
fn settles(action: ActionName) -> bool {
    action.params_schema()["properties"].get("settle").is_some()
}

/// Every action as a tool, in catalog order.
pub fn tools() -> Vec<Tool> {
    with_secrets(&[])
}

/// The same, the tools that take a secret naming those the browser holds (docs/protocol.md §18).
pub fn with_secrets(names: &[String]) -> Vec<Tool> {
    ActionName::ALL
        .iter()
        .map(|&action| tool(action, names))
        .collect()
}

fn tool(action: ActionName, secrets: &[String]) -> Tool {
    let descriptor = action.descriptor();
    let mut description = descriptor.description.clone();
    let takes_secret = matches!(
        action,
        ActionName::BrowserType | ActionName::BrowserFillForm | ActionName::BrowserSecrets
    );
    if takes_secret && !secrets.is_empty() {
        description.push_str(&format!(" Secrets this browser holds: {}.", secrets.join(", ")));
    }
    if action.takes_tab() {
        description.push_str(" tabId is optional: the session's current tab.");
    }
    if settles(action) {
        description.push_str(SETTLES);
    }
    if action == ActionName::BrowserNavigate {
        description.push_str(" Opens the session's tab first when it has none.");
    }
    let mut tool = Tool::new(action.as_str(), description, Arc::new(input_schema(action)))
        .with_title(descriptor.label.clone());
    if descriptor.category == Category::Extract {
        tool = tool.with_annotations(ToolAnnotations::new().read_only(true));
    }
    tool
}

/// The params' JSON Schema with `tabId` made optional and `sessionId` added.
pub fn input_schema(action: ActionName) -> JsonObject {
    let Value::Object(mut schema) = action.params_schema() else {
        return JsonObject::new();
    };
    schema.remove("title");
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
        if let Some(Value::Object(tab)) = properties.get_mut("tabId") {
            tab.insert("description".into(), TAB_ID.into());
        }
        properties.insert(
            "sessionId".into(),
            json!({ "type": "string", "minLength": 1, "description": SESSION_ID }),
        );
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_is_a_tool_whose_tab_is_optional() {
        let tools = tools();
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
        let click = &tools[ActionName::BrowserClick as usize];
        assert!(click.input_schema["properties"].get("ref").is_some());
        let navigate = &tools[ActionName::BrowserNavigate as usize];
        assert_eq!(navigate.input_schema["required"], json!(["url"]));
    }
}
