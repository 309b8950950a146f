//! Sample arguments for a contract's `parameters`, generated with proptest: plausible valid
//! values built from the schema, and mutations of them (a required key removed, an unknown key
//! added, a value of the wrong type, `null`, a bound crossed, a value outside an enum). Every
//! sample is labelled by the contract's own validator, so a generator that misjudges validity
//! only changes the label, never the verdict.

#![allow(dead_code)]

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Map, Value, json};

const MAX_DEPTH: usize = 5;

fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) if r.starts_with('#') => root.pointer(&r[1..]).unwrap_or(node),
        _ => node,
    }
}

/// A strategy for values that probably match `node`.
pub fn strategy(root: &Value, node: &Value, depth: usize) -> BoxedStrategy<Value> {
    let node = resolve(root, node);
    let Some(obj) = node.as_object() else {
        return Just(json!(null)).boxed();
    };
    if depth > MAX_DEPTH {
        return Just(json!(null)).boxed();
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        return proptest::sample::select(values.clone()).boxed();
    }
    if let Some(c) = obj.get("const") {
        return Just(c.clone()).boxed();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array) {
            let strategies: Vec<BoxedStrategy<Value>> = branches
                .iter()
                .map(|b| {
                    let mut merged = obj.clone();
                    merged.remove(key);
                    if let Some(bo) = b.as_object() {
                        for (k, v) in bo {
                            merged.insert(k.clone(), v.clone());
                        }
                    }
                    strategy(root, &Value::Object(merged), depth + 1)
                })
                .collect();
            return proptest::strategy::Union::new(strategies).boxed();
        }
    }
    let types: Vec<String> = match obj.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => vec![],
    };
    if types.len() > 1 {
        let strategies: Vec<BoxedStrategy<Value>> = types
            .iter()
            .map(|t| {
                let mut single = obj.clone();
                single.insert("type".into(), json!(t));
                strategy(root, &Value::Object(single), depth)
            })
            .collect();
        return proptest::strategy::Union::new(strategies).boxed();
    }
    let num = |k: &str| obj.get(k).and_then(Value::as_f64);
    let count = |k: &str| obj.get(k).and_then(Value::as_u64).map(|n| n as usize);
    match types.first().map(String::as_str) {
        Some("string") => {
            if obj.get("format").and_then(Value::as_str) == Some("email") {
                return Just(json!("ada@example.com")).boxed();
            }
            if obj.get("format").and_then(Value::as_str) == Some("date-time") {
                return Just(json!("2026-11-30T12:00:00Z")).boxed();
            }
            if let Some(p) = obj.get("pattern").and_then(Value::as_str)
                && let Ok(s) =
                    proptest::string::string_regex(p.trim_start_matches('^').trim_end_matches('$'))
            {
                return s.prop_map(Value::String).boxed();
            }
            let min = count("minLength").unwrap_or(0);
            let max = count("maxLength")
                .unwrap_or(min + 12)
                .min(min + 12)
                .max(min);
            proptest::collection::vec(proptest::char::range('a', 'z'), min..=max)
                .prop_map(|cs| Value::String(cs.into_iter().collect()))
                .boxed()
        }
        Some("integer") => {
            let lo = num("minimum").unwrap_or(-1000.0) as i64;
            let hi = num("maximum").unwrap_or(lo as f64 + 2000.0) as i64;
            (lo..=hi.max(lo)).prop_map(|n| json!(n)).boxed()
        }
        Some("number") => {
            let lo = num("minimum").unwrap_or(-1000.0);
            let hi = num("maximum").unwrap_or(lo + 2000.0).max(lo);
            (lo..=hi).prop_map(|n| json!(n)).boxed()
        }
        Some("boolean") => any::<bool>().prop_map(|b| json!(b)).boxed(),
        Some("null") => Just(json!(null)).boxed(),
        Some("array") => {
            let item = match obj.get("items") {
                Some(i) => strategy(root, i, depth + 1),
                None => any::<u8>().prop_map(|n| json!(n)).boxed(),
            };
            let min = count("minItems").unwrap_or(0);
            let max = count("maxItems").unwrap_or(min + 3).min(min + 3).max(min);
            proptest::collection::vec(item, min..=max)
                .prop_map(Value::Array)
                .boxed()
        }
        Some("object") => object_strategy(root, obj, depth),
        _ => proptest::strategy::Union::new(vec![
            Just(json!(1)).boxed(),
            Just(json!("text")).boxed(),
            Just(json!({"k": true})).boxed(),
        ])
        .boxed(),
    }
}

fn object_strategy(root: &Value, obj: &Map<String, Value>, depth: usize) -> BoxedStrategy<Value> {
    let props: Vec<(String, Value)> = obj
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let required: Vec<String> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    for (k, sub) in props {
        let s = strategy(root, &sub, depth + 1);
        let key = k.clone();
        if required.contains(&k) {
            fields.push(s.prop_map(move |v| Some((key.clone(), v))).boxed());
        } else {
            fields.push(
                proptest::option::of(s)
                    .prop_map(move |v| v.map(|v| (key.clone(), v)))
                    .boxed(),
            );
        }
    }
    if let Some(extra @ Value::Object(_)) = obj.get("additionalProperties") {
        let s = strategy(root, extra, depth + 1);
        fields.push(
            proptest::option::of(s)
                .prop_map(|v| v.map(|v| ("extra_key".to_owned(), v)))
                .boxed(),
        );
    }
    fields
        .prop_map(|pairs| Value::Object(pairs.into_iter().flatten().collect()))
        .boxed()
}

/// A mutation of a valid value, chosen by `which`.
pub fn mutate(root: &Value, schema: &Value, value: &Value, which: usize) -> Value {
    let mut v = value.clone();
    let Some(obj) = v.as_object_mut() else {
        return json!("not an object");
    };
    let props = resolve(root, schema)
        .get("properties")
        .and_then(Value::as_object);
    let keys: Vec<String> = obj.keys().cloned().collect();
    let pick = keys.get(which / 7 % keys.len().max(1)).cloned();
    match which % 7 {
        0 => {
            if let Some(r) = schema
                .get("required")
                .and_then(Value::as_array)
                .and_then(|r| r.first())
            {
                obj.remove(r.as_str().unwrap_or(""));
            }
        }
        1 => {
            obj.insert("zz_unknown".into(), json!(1));
        }
        2 => {
            if let Some(k) = pick {
                let wrong = if obj[&k].is_string() {
                    json!(12345)
                } else {
                    json!("wrong")
                };
                obj.insert(k, wrong);
            }
        }
        3 => {
            if let Some(k) = pick {
                obj.insert(k, Value::Null);
            }
        }
        4 => {
            // Cross a bound of some property.
            for (k, sub) in props.into_iter().flatten() {
                let sub = resolve(root, sub);
                if let Some(max) = sub.get("maxLength").and_then(Value::as_u64) {
                    obj.insert(k.clone(), Value::String("x".repeat(max as usize + 1)));
                    break;
                }
                if let Some(min) = sub.get("minimum").and_then(Value::as_f64) {
                    obj.insert(k.clone(), json!(min - 1.0));
                    break;
                }
            }
        }
        5 => {
            for (k, sub) in props.into_iter().flatten() {
                if resolve(root, sub).get("enum").is_some() {
                    obj.insert(k.clone(), json!("not-in-the-enum"));
                    break;
                }
            }
        }
        _ => {
            // Mutate one level down.
            if let Some(k) = pick
                && let Some(sub) = props.and_then(|p| p.get(&k))
                && obj[&k].is_object()
            {
                let inner = mutate(root, resolve(root, sub), &obj[&k], which / 7 + 1);
                obj.insert(k, inner);
            }
        }
    }
    v
}

/// Labelled samples (`{"args", "valid"}`) for a parameters schema.
pub fn samples(parameters: &Value, count: usize) -> Vec<Value> {
    let validator = jsonschema::draft202012::new(parameters).unwrap();
    let mut runner = TestRunner::deterministic();
    let strategy = strategy(parameters, parameters, 0);
    let mut out = Vec::new();
    for i in 0..count {
        let valid = strategy.new_tree(&mut runner).unwrap().current();
        let mutated = mutate(parameters, parameters, &valid, i);
        for args in [valid, mutated] {
            let label = validator.is_valid(&args);
            out.push(json!({"args": args, "valid": label}));
        }
    }
    out
}
