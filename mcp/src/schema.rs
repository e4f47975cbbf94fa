//! A tool's input schema as a model reads it: the action's params schema with its shared
//! definitions inlined where used, "this or null" read as an optional field, a choice of
//! constants as an `enum`, and what only a validator reads (`$schema`, titles, `format`) left
//! out. What a field accepts is unchanged: every bound and `required` stays.

use serde_json::{Map, Value};

/// The schema, lean.
pub fn lean(mut schema: Value) -> Value {
    let defs = match &mut schema {
        Value::Object(map) => map.remove("$defs").unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let mut lean = inline(schema, &defs);
    if let Value::Object(map) = &mut lean {
        map.remove("$schema");
        map.remove("title");
    }
    lean
}

/// A node with its `$ref`s replaced by what they name, read as [`tidy`] says.
fn inline(node: Value, defs: &Value) -> Value {
    match node {
        Value::Object(map) => {
            let mut map: Map<String, Value> = map.into_iter().map(|(k, v)| (k, inline(v, defs))).collect();
            if let Some(Value::String(target)) = map.remove("$ref") {
                let name = target.trim_start_matches("#/$defs/");
                if let Value::Object(def) = inline(defs[name].clone(), defs) {
                    // The field's own words and default win over the definition's.
                    for (key, value) in def {
                        map.entry(key).or_insert(value);
                    }
                }
            }
            tidy(map)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|v| inline(v, defs)).collect()),
        other => other,
    }
}

fn tidy(mut map: Map<String, Value>) -> Value {
    map.remove("format");
    map.remove("title");
    if map.get("default") == Some(&Value::Null) {
        map.remove("default");
    }
    // ["string", "null"]: an optional string (leaving a field out is the same as null).
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if kept.len() == 1 {
            map.insert("type".into(), kept[0].clone());
        }
    }
    // anyOf [X, null]: X.
    if let Some(Value::Array(options)) = map.get("anyOf") {
        let kept: Vec<Value> = options
            .iter()
            .filter(|o| o.get("type") != Some(&Value::String("null".into())))
            .cloned()
            .collect();
        if kept.len() == 1 {
            map.remove("anyOf");
            if let Value::Object(only) = kept.into_iter().next().unwrap_or_default() {
                for (key, value) in only {
                    map.entry(key).or_insert(value);
                }
            }
        }
    }
    // oneOf of constants: an enum, the constants' words folded into one description.
    if let Some(Value::Array(options)) = map.get("oneOf") {
        let constants: Option<Vec<(Value, Option<String>)>> = options
            .iter()
            .map(|o| {
                let words = o.get("description").and_then(Value::as_str).map(str::to_owned);
                o.get("const").map(|c| (c.clone(), words))
            })
            .collect();
        if let Some(constants) = constants {
            map.remove("oneOf");
            map.insert("type".into(), "string".into());
            if !map.contains_key("description") {
                let said: Vec<String> = constants
                    .iter()
                    .filter_map(|(c, words)| Some(format!("{}: {}", c.as_str()?, words.as_deref()?)))
                    .collect();
                if !said.is_empty() {
                    map.insert("description".into(), said.join("; ").into());
                }
            }
            map.insert("enum".into(), constants.into_iter().map(|(c, _)| c).collect());
        }
    }
    if let Some(Value::String(words)) = map.get_mut("description") {
        *words = plain(words);
    }
    Value::Object(map)
}

/// A description without the references to documents a model cannot open, on one line.
fn plain(words: &str) -> String {
    let mut text = words.replace('\n', " ");
    while let Some(start) = text.find(" (docs/protocol.md") {
        let end = text[start..].find(')').map_or(text.len(), |e| start + e + 1);
        text.replace_range(start..end, "");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tether_protocol::ActionName;

    #[test]
    fn a_lean_schema_keeps_what_a_field_accepts() {
        let schema = lean(ActionName::BrowserClick.params_schema());
        let text = schema.to_string();
        for gone in [
            "$defs",
            "$ref",
            "$schema",
            "\"format\"",
            "\"null\"",
            "docs/protocol.md",
        ] {
            assert!(!text.contains(gone), "{gone} in {text}");
        }
        let p = &schema["properties"];
        assert_eq!(p["button"]["enum"], json!(["left", "right", "middle"]));
        assert_eq!(p["button"]["default"], json!("left"));
        assert_eq!(p["observe"]["enum"], json!(["none", "recent", "gist"]));
        assert_eq!(
            (
                p["clickCount"]["minimum"].clone(),
                p["clickCount"]["maximum"].clone()
            ),
            (json!(1), json!(3))
        );
        assert_eq!(p["ref"]["type"], json!("string"));
        assert_eq!(p["dialog"]["required"], json!(["accept"]));
        assert_eq!(
            p["modifiers"]["items"]["enum"],
            json!(["Alt", "Control", "Meta", "Shift"])
        );
        assert_eq!(schema["additionalProperties"], json!(false));
    }
}
