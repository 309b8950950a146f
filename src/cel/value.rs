//! Conversion between JSON and CEL values.
//!
//! JSON integers become CEL `int` (not `uint`, as serde binding would make them), so `x * 2`
//! and `size(l) + 1` type-check the way spec authors expect.

use std::collections::HashMap;
use std::sync::Arc;

use cel::Value;
use cel::objects::{Key, Map};

/// A JSON value as a CEL value.
pub fn json_to_cel(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                Value::UInt(u)
            } else {
                Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(items) => {
            Value::List(Arc::new(items.iter().map(json_to_cel).collect()))
        }
        serde_json::Value::Object(map) => {
            let mut out: HashMap<Key, Value> = HashMap::with_capacity(map.len());
            for (k, v) in map {
                out.insert(Key::String(Arc::new(k.clone())), json_to_cel(v));
            }
            Value::Map(Map { map: Arc::new(out) })
        }
    }
}

/// A CEL value as JSON (non-JSON values such as functions become their debug text).
pub fn cel_to_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Int(i) => serde_json::Value::from(*i),
        Value::UInt(u) => serde_json::Value::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null),
        Value::String(s) => serde_json::Value::String(s.to_string()),
        Value::List(items) => serde_json::Value::Array(items.iter().map(cel_to_json).collect()),
        Value::Map(m) => {
            let mut entries: Vec<(String, serde_json::Value)> = m
                .map
                .iter()
                .map(|(k, v)| (key_text(k), cel_to_json(v)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(entries.into_iter().collect())
        }
        other => serde_json::Value::String(format!("{other:?}")),
    }
}

fn key_text(k: &Key) -> String {
    match k {
        Key::Int(i) => i.to_string(),
        Key::Uint(u) => u.to_string(),
        Key::Bool(b) => b.to_string(),
        Key::String(s) => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_signed() {
        assert_eq!(json_to_cel(&serde_json::json!(3)), Value::Int(3));
        let back = cel_to_json(&json_to_cel(&serde_json::json!({"a": [1, "x", null, 2.5]})));
        assert_eq!(back, serde_json::json!({"a": [1, "x", null, 2.5]}));
    }
}
