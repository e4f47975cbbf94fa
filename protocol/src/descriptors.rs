//! Self-describing actions (docs/protocol.md §3, ActionDescriptor): what each action does, its
//! params and its result, for orchestrators and for the LLM agents behind them.
//!
//! A descriptor is built from the JSON Schemas of the action's `Params` and `Output` types
//! (schemars reads serde's attributes and the fields' doc comments), so it names exactly the
//! fields serde reads and writes, with their defaults; only the action's label, category and
//! description are written by hand, in its `ABOUT`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where an action sits in the catalog, for people and agents browsing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Session,
    Page,
    Interact,
    Extract,
}

/// What an action says about itself in its descriptor, beside its params and result.
#[derive(Debug, Clone, Copy)]
pub struct About {
    pub label: &'static str,
    pub category: Category,
    pub description: &'static str,
    /// What the action waits for, as the relay's `progress` events say it while it runs
    /// (docs/protocol.md §12); `None` for an action that answers at once.
    pub waits_for: Option<&'static str>,
    /// How an agent reads its result over MCP (docs/protocol.md §11).
    pub reads_as: ReadsAs,
    /// The params of the example call `/api/actions.md` shows (JSON), where filling in the
    /// required params with plausible values would not make a call the action takes.
    pub example: Option<&'static str>,
}

/// How an agent reads an action's result over MCP (docs/protocol.md §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadsAs {
    /// The result as compact JSON.
    Json,
    /// Its `markdown`, as text (a Live Screen).
    Markdown,
    /// Its `title` and `text`, as an article (with where the rest is when it was cut).
    Article,
    /// The picture itself (at most 1280 px wide unless the call says), and a link to it.
    Image,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    String,
    Number,
    Boolean,
    Object,
    Array,
    /// Any JSON value (browser_evaluate's `value`). The spec's descriptor types have no word
    /// for it, so it is written as "object" (its description says "any JSON value"): a
    /// catalog reader that knows the five types keeps working.
    #[serde(rename(serialize = "object"), skip_deserializing)]
    Any,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldDescriptor {
    #[serde(rename = "type")]
    pub kind: FieldType,
    pub description: String,
    /// Absent means false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionDescriptor {
    pub name: String,
    pub label: String,
    pub category: Category,
    pub description: String,
    pub params: BTreeMap<String, FieldDescriptor>,
    pub result: BTreeMap<String, FieldDescriptor>,
}

impl FieldType {
    /// Whether a JSON value is of this type.
    pub fn admits(self, value: &Value) -> bool {
        match self {
            FieldType::String => value.is_string(),
            FieldType::Number => value.is_number(),
            FieldType::Boolean => value.is_boolean(),
            FieldType::Object => value.is_object(),
            FieldType::Array => value.is_array(),
            FieldType::Any => true,
        }
    }
}

impl ActionDescriptor {
    /// Checks a result against what this descriptor promises: only described fields, each of
    /// its type, and every required one present. Tests hold every result they see to it.
    pub fn check_result(&self, result: &Value) -> Result<(), String> {
        let name = &self.name;
        let object = result
            .as_object()
            .ok_or_else(|| format!("{name}'s result is not an object: {result}"))?;
        for (key, value) in object {
            let field = self
                .result
                .get(key)
                .ok_or_else(|| format!("{name}'s result has the undescribed field {key:?}"))?;
            if !field.kind.admits(value) {
                return Err(format!(
                    "{name}'s result field {key:?} is not a {:?}: {value}",
                    field.kind
                ));
            }
        }
        match self
            .result
            .iter()
            .find(|(key, field)| field.required == Some(true) && !object.contains_key(*key))
        {
            Some((key, _)) => Err(format!("{name}'s result lacks the required field {key:?}")),
            None => Ok(()),
        }
    }
}

/// What the host adds to the result of every action on a tab (see `dialogs` in docs/protocol.md §4).
const DIALOGS: &str = "JavaScript dialogs that opened during the action, each { type, message }, with how they were answered (alert and beforeunload accepted, confirm and prompt dismissed). Absent when none opened.";

/// What else the host adds (docs/protocol.md §17).
const OBSERVED: &str = "What happened in the tab during the action: console { errors, warnings, first } (the first error's text), failedRequests [ { url, status?, failed? } ] (up to 5: status 400 or more, or a network error), downloads [ ... as browser_downloads lists them ] (begun during the action), navigated { url } (the page's main frame went to another document). Absent when nothing did.";

/// What an action that changes the page shows of it when asked (docs/protocol.md §17).
const SCREEN: &str = "With observe: the page once the action settled, as browser_snapshot writes it with that detail (recent: what changed since this session's previous snapshot of the tab), cut at observeMaxChars.";

/// What an action that settles says it waited for (docs/protocol.md §20).
const SETTLED: &str = "What the action waited for once its own work was done: ms (time spent settling), waited { navigation, requests, timers, animations }, pending [ { kind (request, timer or animation), url? } ] (up to 5, what still ran when settleMs ran out). Absent when nothing was waited for.";

/// The descriptor of the action `name` whose params and result are `P` and `O`.
pub fn describe<P: JsonSchema, O: JsonSchema>(name: &str, about: About) -> ActionDescriptor {
    let params = fields(&schemars::schema_for!(P).to_value());
    let mut result = fields(&schemars::schema_for!(O).to_value());
    if params.get("tabId").is_some_and(|f| f.required == Some(true)) {
        for (name, kind, description) in [
            ("dialogs", FieldType::Array, DIALOGS),
            ("observed", FieldType::Object, OBSERVED),
        ] {
            let added = FieldDescriptor {
                kind,
                description: description.into(),
                required: None,
                default: None,
            };
            result.insert(name.into(), added);
        }
    }
    if params.contains_key("observe") {
        let screen = FieldDescriptor {
            kind: FieldType::String,
            description: SCREEN.into(),
            required: None,
            default: None,
        };
        result.insert("screen".into(), screen);
    }
    if params.contains_key("settle") {
        let settled = FieldDescriptor {
            kind: FieldType::Object,
            description: SETTLED.into(),
            required: None,
            default: None,
        };
        result.insert("settled".into(), settled);
    }
    ActionDescriptor {
        name: name.to_owned(),
        label: about.label.to_owned(),
        category: about.category,
        description: about.description.to_owned(),
        params,
        result,
    }
}

/// The top-level properties of an object schema, as descriptor fields.
fn fields(schema: &Value) -> BTreeMap<String, FieldDescriptor> {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let defs = schema.get("$defs").unwrap_or(&Value::Null);
    properties
        .iter()
        .map(|(name, property)| {
            let field = FieldDescriptor {
                kind: field_type(property, defs),
                description: property
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                required: required.contains(&name.as_str()).then_some(true),
                default: property.get("default").filter(|d| !d.is_null()).cloned(),
            };
            (name.clone(), field)
        })
        .collect()
}

/// The descriptor type of a property: `Option`'s `null` is left out, `$ref`s are followed,
/// integers are numbers, and a schema that says nothing (`true`, `{}`) is any value.
fn field_type(property: &Value, defs: &Value) -> FieldType {
    let says_nothing = ["type", "$ref", "anyOf", "oneOf"]
        .iter()
        .all(|key| property.get(key).is_none());
    if property == &Value::Bool(true) || (property.is_object() && says_nothing) {
        return FieldType::Any;
    }
    if let Some(name) = property
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
    {
        return field_type(defs.get(name).unwrap_or(&Value::Null), defs);
    }
    let named = match property.get("type") {
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).find(|k| *k != "null"),
        _ => None,
    };
    match named {
        Some("string") => FieldType::String,
        Some("integer" | "number") => FieldType::Number,
        Some("boolean") => FieldType::Boolean,
        Some("array") => FieldType::Array,
        Some("object") => FieldType::Object,
        // `anyOf` / `oneOf` (an Option of a struct, an untagged enum): the type its variants
        // that are not null share, or any value where they differ.
        _ => {
            let mut kinds = ["anyOf", "oneOf"]
                .iter()
                .filter_map(|key| property.get(key).and_then(Value::as_array))
                .flatten()
                .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
                .map(|v| field_type(v, defs));
            let first = kinds.next().unwrap_or(FieldType::Object);
            if kinds.all(|k| k == first) {
                first
            } else {
                FieldType::Any
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::{catalog, ActionCall, ActionName};
    use serde_json::json;

    fn sample(kind: FieldType) -> Value {
        match kind {
            FieldType::String => json!("x"),
            FieldType::Number => json!(1),
            FieldType::Boolean => json!(true),
            FieldType::Object => json!({}),
            FieldType::Array => json!([]),
            FieldType::Any => json!(null),
        }
    }

    /// A valid value for a param: the one object param (`dialog`) has a field of its own.
    fn sample_for(name: &str, kind: FieldType) -> Value {
        match name {
            "dialog" => json!({ "accept": true }),
            "action" => json!("move"),
            "colorScheme" => json!("dark"),
            _ => sample(kind),
        }
    }

    /// A top-level field serde does not know, or misses (not one inside a param's value).
    fn mismatch(error: &str) -> bool {
        let top = error.split_once(": ").map_or(error, |(_, rest)| rest);
        top.starts_with("unknown field") || top.starts_with("missing field")
    }

    #[test]
    fn a_result_is_checked_against_its_descriptor() {
        let stop = ActionName::SessionStop.descriptor();
        assert_eq!(stop.check_result(&json!({ "stopped": true })), Ok(()));
        let errors = [
            stop.check_result(&json!({})),
            stop.check_result(&json!({ "stopped": "yes" })),
            stop.check_result(&json!({ "stopped": true, "extra": 1 })),
            stop.check_result(&json!([])),
        ];
        for error in errors {
            assert!(error.is_err_and(|e| e.starts_with("session_stop")));
        }
    }

    #[test]
    fn every_action_is_described_once_in_catalog_order() {
        let names: Vec<&str> = catalog().iter().map(|d| d.name.as_str()).collect();
        let expected: Vec<&str> = ActionName::ALL.iter().map(|a| a.as_str()).collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn every_action_and_field_is_explained() {
        for d in catalog() {
            assert!(!d.label.is_empty() && !d.description.is_empty(), "{}", d.name);
            for (name, field) in d.params.iter().chain(&d.result) {
                assert!(
                    !field.description.is_empty(),
                    "{}.{name} has no description",
                    d.name
                );
            }
            assert!(!d.result.is_empty(), "{} describes no result", d.name);
        }
    }

    #[test]
    fn described_params_are_the_params_the_host_parses() {
        for d in catalog() {
            // Every described param is a real field, and nothing else is needed.
            let all: serde_json::Map<String, Value> = d
                .params
                .iter()
                .map(|(n, f)| {
                    (
                        n.clone(),
                        f.default.clone().unwrap_or_else(|| sample_for(n, f.kind)),
                    )
                })
                .collect();
            let parsed = ActionCall::parse(&d.name, &Value::Object(all.clone()));
            if let Err(e) = &parsed {
                assert!(!mismatch(&e.message), "{}: {}", d.name, e.message);
            }
            // The required ones are exactly the fields serde cannot do without.
            for (name, f) in &d.params {
                let mut without = all.clone();
                without.remove(name);
                let missing = ActionCall::parse(&d.name, &Value::Object(without))
                    .err()
                    .is_some_and(|e| e.message.contains(&format!("missing field `{name}`")));
                assert_eq!(
                    missing,
                    f.required == Some(true),
                    "{}.{name}: required is wrong",
                    d.name
                );
            }
            // And every field of the params type is described.
            if let Ok(call) = parsed {
                for key in call.params_json().as_object().unwrap().keys() {
                    assert!(d.params.contains_key(key), "{}.{key} is not described", d.name);
                }
            }
        }
    }

    #[test]
    fn descriptors_serialise_in_the_spec_shape() {
        let click = serde_json::to_value(ActionName::BrowserClick.descriptor()).unwrap();
        assert_eq!(click["category"], "interact");
        assert_eq!(click["params"]["xpath"]["type"], "string");
        assert!(click["params"]["xpath"].get("required").is_none(), "or x and y");
        let typing = serde_json::to_value(ActionName::BrowserType.descriptor()).unwrap();
        assert!(typing["params"]["xpath"].get("required").is_none(), "or ref");
        assert_eq!(typing["params"]["ref"]["type"], "string");
        assert_eq!(click["params"]["tabId"]["type"], "number");
        assert_eq!(click["result"]["openedTabIds"]["type"], "array");
        let start = serde_json::to_value(ActionName::SessionStart.descriptor()).unwrap();
        assert!(
            start["params"]["url"].get("required").is_none(),
            "absent means false"
        );
        assert!(
            start["params"]["url"].get("default").is_none(),
            "no null defaults"
        );
        assert_eq!(start["params"]["reuseExistingTab"]["default"], false);
        assert!(
            start["result"].get("dialogs").is_none(),
            "session_start has no tab yet"
        );
        let shot = serde_json::to_value(ActionName::BrowserScreenshot.descriptor()).unwrap();
        assert_eq!(shot["params"]["format"]["type"], "string", "enums are strings");
        assert_eq!(shot["params"]["format"]["default"], "png");
        assert_eq!(
            shot["params"]["quality"]["default"], 80,
            "host-side defaults are described"
        );
        assert_eq!(shot["result"]["width"]["required"], true);
        assert_eq!(shot["result"]["dialogs"]["type"], "array");
        let navigate = serde_json::to_value(ActionName::BrowserNavigate.descriptor()).unwrap();
        assert_eq!(navigate["params"]["timeoutMs"]["default"], 20000);
        assert!(navigate["result"]["title"].get("required").is_none());
    }
}
