//! Every action's params schema says what the action accepts: each bound a schema states is
//! the bound the action's own check holds (a value at it is taken, one past it refused), and
//! each bound a description states in words is in the schema. Agents read the schema, not the
//! check: the two must not disagree.

use serde_json::{json, Map, Value};
use tether_protocol::{ActionCall, ActionName};

/// Params each action takes as they are: what a bound is tried on top of.
fn valid(action: ActionName) -> Value {
    let mut params = match action {
        ActionName::BrowserNavigate => json!({ "url": "https://example.com/" }),
        ActionName::BrowserMouse => json!({ "action": "move", "x": 1, "y": 1 }),
        ActionName::BrowserPressKey => json!({ "key": "Enter" }),
        ActionName::BrowserSelectOption => json!({ "ref": "e1", "values": ["a"] }),
        ActionName::BrowserFillForm => json!({ "fields": [{ "ref": "e1", "value": "a" }] }),
        ActionName::BrowserUploadFile => json!({ "ref": "e1", "artifactIds": ["a"] }),
        ActionName::BrowserEvaluate => json!({ "expression": "1" }),
        ActionName::BrowserStorageState => json!({ "action": "save" }),
        ActionName::BrowserHandoff => json!({ "message": "Sign in, please." }),
        ActionName::BrowserType => json!({ "ref": "e1", "text": "a" }),
        ActionName::BrowserClick | ActionName::BrowserHover => json!({ "ref": "e1" }),
        ActionName::BrowserDrag => json!({ "ref": "e1", "dx": 10, "dy": 0 }),
        ActionName::BrowserWaitFor => json!({ "text": "a" }),
        ActionName::BrowserResize => json!({ "width": 800, "height": 600 }),
        ActionName::BrowserScreenshot => json!({ "format": "jpeg" }),
        _ => json!({}),
    };
    if action.takes_tab() {
        params["tabId"] = json!(1);
    }
    // observeMaxChars counts when there is something to observe.
    if action.params_schema()["properties"].get("observe").is_some() {
        params["observe"] = json!("gist");
    }
    params
}

fn accepts(action: ActionName, params: &Value) -> bool {
    ActionCall::parse(action.as_str(), params).is_ok()
}

/// The integer and number properties of a schema, with their bounds.
fn bounded(schema: &Value) -> Vec<(String, Option<f64>, Option<f64>, bool)> {
    let properties = schema["properties"].as_object().cloned().unwrap_or_default();
    properties
        .into_iter()
        .filter_map(|(name, p)| {
            let types = match &p["type"] {
                Value::String(t) => vec![t.clone()],
                Value::Array(ts) => ts.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect(),
                _ => return None,
            };
            let integer = types.iter().any(|t| t == "integer");
            (integer || types.iter().any(|t| t == "number")).then(|| {
                let bound = |key: &str| p[key].as_f64();
                (name, bound("minimum"), bound("maximum"), integer)
            })
        })
        .collect()
}

fn with(params: &Value, name: &str, value: f64, integer: bool) -> Value {
    let mut params = params.clone();
    params[name] = if integer {
        json!(value as i64)
    } else {
        json!(value)
    };
    params
}

#[test]
fn each_actions_params_are_valid_as_the_bounds_test_starts_them() {
    for &action in ActionName::ALL {
        let params = valid(action);
        let parsed = ActionCall::parse(action.as_str(), &params);
        assert!(parsed.is_ok(), "{action:?} {params}: {:?}", parsed.err());
    }
}

#[test]
fn every_bound_a_schema_states_is_the_one_the_action_holds() {
    let mut tried = 0;
    for &action in ActionName::ALL {
        let base = valid(action);
        for (name, min, max, integer) in bounded(&action.params_schema()) {
            let step = if integer { 1.0 } else { 0.5 };
            if let Some(min) = min {
                assert!(
                    accepts(action, &with(&base, &name, min, integer)),
                    "{action:?} {name} = {min}"
                );
                if !(integer && min <= 0.0) {
                    let under = with(&base, &name, min - step, integer);
                    assert!(!accepts(action, &under), "{action:?} {name} under {min} is taken");
                }
                tried += 1;
            }
            if let Some(max) = max {
                assert!(
                    accepts(action, &with(&base, &name, max, integer)),
                    "{action:?} {name} = {max}"
                );
                let over = with(&base, &name, max + step, integer);
                assert!(!accepts(action, &over), "{action:?} {name} over {max} is taken");
                tried += 1;
            }
        }
    }
    assert!(tried > 20, "only {tried} bounds tried");
}

#[test]
fn every_range_a_description_states_is_in_the_schema() {
    let range = regex_lite(r"(\d[\d ]*) (?:to|-) (\d[\d ]*)");
    for &action in ActionName::ALL {
        let schema = action.params_schema();
        let properties: Map<String, Value> = schema["properties"].as_object().cloned().unwrap_or_default();
        for (name, p) in properties {
            let Some(text) = p["description"].as_str() else {
                continue;
            };
            if bounded(&json!({ "properties": { &name: p } })).is_empty() {
                continue;
            }
            if let Some((low, high)) = range(text) {
                assert_eq!(
                    (p["minimum"].as_f64(), p["maximum"].as_f64()),
                    (Some(low), Some(high)),
                    "{action:?} {name}: {text}"
                );
            }
        }
    }
}

/// The first "A to B" (or "A-B") in a text, as numbers: a stand-in for a regex crate.
fn regex_lite(_: &str) -> impl Fn(&str) -> Option<(f64, f64)> {
    |text: &str| {
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',' || c == ';')
            .filter(|w| !w.is_empty())
            .collect();
        let number = |w: &str| w.trim_end_matches('.').parse::<f64>().ok();
        for (i, w) in words.iter().enumerate() {
            if let Some((a, b)) = w.split_once('-') {
                if let (Some(a), Some(b)) = (number(a), number(b)) {
                    return Some((a, b));
                }
            }
            if *w == "to" && i > 0 && i + 1 < words.len() {
                if let (Some(a), Some(b)) = (number(words[i - 1]), number(words[i + 1])) {
                    return Some((a, b));
                }
            }
        }
        None
    }
}
