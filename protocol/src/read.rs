//! Reading a typed value from JSON, with an error that names the field that is wrong. The
//! value is read plainly first; the field's path is tracked (`serde_path_to_error`) only to
//! explain a failure, since tracking it copies every key read (a relay reads three
//! payloads and one set of params an action).

use serde::de::DeserializeOwned;
use serde_json::Value;

/// `T` from JSON text.
pub fn from_text<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).or_else(|_| {
        let mut json = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut json).map_err(|e| e.to_string())
    })
}

/// `T` from a JSON tree, read in place.
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).or_else(|_| serde_path_to_error::deserialize(value).map_err(|e| e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Outer {
        inner: Inner,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        count: u32,
    }

    #[test]
    fn a_failure_names_the_field_from_text_and_from_a_tree() {
        let bad = json!({ "inner": { "count": "three" } });
        let from_text = from_text::<Outer>(&bad.to_string()).unwrap_err();
        let from_tree = from_value::<Outer>(&bad).unwrap_err();
        assert!(from_text.starts_with("inner.count: "), "{from_text}");
        assert!(from_tree.starts_with("inner.count: "), "{from_tree}");
        assert_eq!(
            from_value::<Outer>(&json!({ "inner": { "count": 3 } }))
                .unwrap()
                .inner
                .count,
            3
        );
    }
}
