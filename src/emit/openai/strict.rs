//! Strict mode (Structured Outputs): the conversion of a parameters schema, with a record of
//! every change it makes — what it loosens, and why a schema cannot be strict at all. The
//! emitter sends the result; the linter's provider rules report the record.

use serde_json::{Map, Value, json};

use crate::emit::rewrite::{self, is_object, types_of};

/// Deepest object nesting strict mode accepts.
pub const MAX_NESTING: usize = 10;
/// Most object properties in one strict schema.
pub const MAX_PROPERTIES: usize = 5000;
/// Most enum values in one strict schema.
pub const MAX_ENUM_VALUES: usize = 1000;
/// Most characters of property names, definition names, enum and const values together.
pub const MAX_STRING_BUDGET: usize = 120_000;
/// String formats strict mode accepts.
pub const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Keywords strict mode accepts (everything else moves into the description).
pub const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "description",
    "title",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// One thing the strict conversion does to a schema, at a JSON pointer of the schema it
/// converts: the authored one, except below an inlined `$ref` (there it points into the copy,
/// and so names the property that holds the reference).
#[derive(Clone, Debug, PartialEq)]
pub struct StrictChange {
    /// Where, as a JSON pointer (`""` is the root).
    pub pointer: String,
    /// What.
    pub kind: StrictChangeKind,
}

/// What the strict conversion does at one place. The first two loosen what the model is held
/// to and keep strict mode; the others make the tool go out with `strict: false`.
#[derive(Clone, Debug, PartialEq)]
pub enum StrictChangeKind {
    /// `oneOf` became `anyOf`, which also accepts a value matching several branches.
    OneOfToAnyOf,
    /// A keyword strict mode lacks moved into the description: a value constraint
    /// (`maxLength`, `format: uri`), a structural one (`not`, `if`, dependencies, an `allOf`
    /// that does not merge), or a root combinator.
    Moved {
        /// The keyword.
        keyword: String,
        /// Its value.
        value: Value,
    },
    /// A boolean schema (`true`/`false`) has no type.
    BooleanSchema,
    /// A pattern-keyed map (`patternProperties`).
    PatternProperties,
    /// A tuple (`prefixItems`).
    PrefixItems,
    /// A schema with no type (any JSON value).
    Untyped,
    /// An open object: `additionalProperties` other than `false`, or an object without
    /// `properties` (closing it would leave `{}` the only value).
    OpenObject,
    /// Objects nest deeper than [`MAX_NESTING`].
    Nesting {
        /// The nesting found.
        deepest: usize,
    },
    /// More than [`MAX_PROPERTIES`] properties.
    Properties {
        /// How many.
        count: usize,
    },
    /// More than [`MAX_ENUM_VALUES`] enum values.
    EnumValues {
        /// How many.
        count: usize,
    },
    /// More than [`MAX_STRING_BUDGET`] characters of names and values.
    StringBudget {
        /// How many.
        chars: usize,
    },
}

/// Whether a keyword the strict conversion moves into the description constrains the shape of
/// a value (alternatives, negation, conditions, dependencies) rather than one value's range
/// (`maxLength`, `format`): moving it changes which structures the model may send.
pub fn is_structural(keyword: &str) -> bool {
    matches!(
        keyword,
        "anyOf"
            | "oneOf"
            | "allOf"
            | "not"
            | "if"
            | "then"
            | "else"
            | "dependentRequired"
            | "dependentSchemas"
            | "dependencies"
    )
}

impl StrictChangeKind {
    /// Whether the schema cannot be strict at all because of it.
    pub fn blocks_strict(&self) -> bool {
        !matches!(
            self,
            StrictChangeKind::OneOfToAnyOf | StrictChangeKind::Moved { .. }
        )
    }
}

/// The strict conversion of a schema: the converted schema and every change made on the way.
#[derive(Clone, Debug)]
pub struct StrictConversion {
    /// The converted schema (meaningful only when [`StrictConversion::is_strict`]).
    pub schema: Value,
    /// What changed, in walk order.
    pub changes: Vec<StrictChange>,
}

impl StrictConversion {
    /// Whether the schema can be sent with `strict: true`.
    pub fn is_strict(&self) -> bool {
        !self.changes.iter().any(|c| c.kind.blocks_strict())
    }
}

/// Converts a schema for strict mode, recording everything that loosens it or blocks strict
/// mode. The emitter and the linter's provider rules both read this.
pub fn strict_conversion(schema: &Value) -> StrictConversion {
    let mut s = schema.clone();
    rewrite::strip_private(&mut s);
    rewrite::inline_refs(&mut s);
    rewrite::merge_all_of(&mut s);
    let mut changes = Vec::new();
    if let Some(obj) = s.as_object() {
        for (k, v) in obj {
            if rewrite::ROOT_COMBINATORS.contains(&k.as_str()) {
                changes.push(StrictChange {
                    pointer: String::new(),
                    kind: StrictChangeKind::Moved {
                        keyword: k.clone(),
                        value: v.clone(),
                    },
                });
            }
        }
    }
    rewrite::fix_root(&mut s);
    strictify(&mut s, "", &mut changes);
    check_limits(&s, &mut changes);
    StrictConversion { schema: s, changes }
}

/// The strict form, or what keeps the schema from being strict without accepting something
/// else.
pub fn strict_parameters(schema: &Value) -> Result<Value, Vec<StrictChange>> {
    let conversion = strict_conversion(schema);
    if conversion.is_strict() {
        Ok(conversion.schema)
    } else {
        Err(conversion
            .changes
            .into_iter()
            .filter(|c| c.kind.blocks_strict())
            .collect())
    }
}

/// Whether strict mode keeps a keyword with this value (the rest moves into the description).
pub fn strict_keeps(keyword: &str, value: &Value) -> bool {
    if keyword == "format" {
        return value.as_str().is_some_and(|f| STRICT_FORMATS.contains(&f));
    }
    STRICT_KEYWORDS.contains(&keyword)
}

fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

fn strictify(node: &mut Value, path: &str, changes: &mut Vec<StrictChange>) {
    let mut change = |kind: StrictChangeKind| {
        changes.push(StrictChange {
            pointer: path.to_owned(),
            kind,
        })
    };
    let obj = match node {
        Value::Object(obj) => obj,
        Value::Bool(_) => {
            change(StrictChangeKind::BooleanSchema);
            return;
        }
        _ => return,
    };
    if let Some(one_of) = obj.shift_remove("oneOf") {
        // Strict mode has no oneOf; anyOf accepts a superset (the runtime still checks).
        change(StrictChangeKind::OneOfToAnyOf);
        obj.insert("anyOf".into(), one_of);
    }
    if obj.contains_key("patternProperties") {
        change(StrictChangeKind::PatternProperties);
    }
    if obj.contains_key("prefixItems") {
        change(StrictChangeKind::PrefixItems);
    }
    let typed = obj.contains_key("type")
        || obj.contains_key("enum")
        || obj.contains_key("const")
        || obj.contains_key("anyOf")
        || obj.contains_key("$ref");
    if !typed {
        change(StrictChangeKind::Untyped);
    }
    if is_object(obj) {
        match obj.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            None if obj.contains_key("properties") => {
                obj.insert("additionalProperties".into(), Value::Bool(false));
            }
            // Already blocked as a pattern-keyed map: the same openness, reported once.
            None if obj.contains_key("patternProperties") => {}
            _ => change(StrictChangeKind::OpenObject),
        }
        if !obj.contains_key("properties") {
            obj.insert("properties".into(), Value::Object(Map::new()));
        }
        let keys: Vec<String> = obj
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let required: Vec<String> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
            for (key, sub) in props.iter_mut() {
                strictify(sub, &format!("{path}/properties/{}", escape(key)), changes);
                if !required.contains(key) {
                    make_nullable(sub);
                }
            }
        }
        obj.insert(
            "required".into(),
            Value::Array(keys.into_iter().map(Value::String).collect()),
        );
    }
    for key in ["items", "$defs", "definitions", "anyOf"] {
        match obj.get_mut(key) {
            Some(Value::Array(items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    strictify(item, &format!("{path}/{key}/{i}"), changes);
                }
            }
            Some(Value::Object(map)) if key != "items" => {
                for (name, sub) in map.iter_mut() {
                    strictify(sub, &format!("{path}/{key}/{}", escape(name)), changes);
                }
            }
            Some(item @ (Value::Object(_) | Value::Bool(_))) => {
                strictify(item, &format!("{path}/{key}"), changes)
            }
            _ => {}
        }
    }
    for (k, v) in obj.iter() {
        if !k.starts_with("x-") && !rewrite::SILENT.contains(&k.as_str()) && !strict_keeps(k, v) {
            changes.push(StrictChange {
                pointer: path.to_owned(),
                kind: StrictChangeKind::Moved {
                    keyword: k.clone(),
                    value: v.clone(),
                },
            });
        }
    }
    rewrite::demote_node(obj, &strict_keeps);
}

/// Makes an optional property accept `null`: `[T, "null"]` for simple types, `anyOf` with a
/// null branch for objects, arrays, unions and references.
pub fn make_nullable(node: &mut Value) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    let types: Vec<String> = types_of(obj).into_iter().map(str::to_owned).collect();
    if types.iter().any(|t| t == "null") {
        return;
    }
    if let Some(Value::Array(branches)) = obj.get_mut("anyOf") {
        if !branches
            .iter()
            .any(|b| b.get("type") == Some(&json!("null")))
        {
            branches.push(json!({"type": "null"}));
        }
        return;
    }
    let simple = types.len() == 1
        && !matches!(types[0].as_str(), "object" | "array")
        && !obj.contains_key("$ref");
    if simple {
        obj.insert("type".into(), json!([types[0], "null"]));
        if let Some(Value::Array(values)) = obj.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
        return;
    }
    if types.is_empty()
        && !obj.contains_key("$ref")
        && let Some(Value::Array(values)) = obj.get_mut("enum")
    {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
        return;
    }
    // Wrap: the description and title stay outside, the rest becomes the first branch.
    let mut outer = Map::new();
    for key in ["description", "title"] {
        if let Some(v) = obj.shift_remove(key) {
            outer.insert(key.into(), v);
        }
    }
    let inner = std::mem::take(obj);
    obj.insert(
        "anyOf".into(),
        json!([Value::Object(inner), {"type": "null"}]),
    );
    for (k, v) in outer {
        obj.insert(k, v);
    }
}

fn check_limits(schema: &Value, changes: &mut Vec<StrictChange>) {
    let mut properties = 0usize;
    let mut enum_values = 0usize;
    let mut chars = 0usize;
    let (deepest, deepest_at) = deepest_object(schema);
    rewrite::visit(schema, 0, &mut |obj, _| {
        if let Some(p) = obj.get("properties").and_then(Value::as_object) {
            properties += p.len();
            chars += p.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        for key in ["$defs", "definitions"] {
            if let Some(d) = obj.get(key).and_then(Value::as_object) {
                chars += d.keys().map(|k| k.chars().count()).sum::<usize>();
            }
        }
        if let Some(e) = obj.get("enum").and_then(Value::as_array) {
            enum_values += e.len();
            chars += e
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().count())
                .sum::<usize>();
        }
        if let Some(Value::String(c)) = obj.get("const") {
            chars += c.chars().count();
        }
    });
    let mut at_root = |kind| {
        changes.push(StrictChange {
            pointer: String::new(),
            kind,
        })
    };
    if properties > MAX_PROPERTIES {
        at_root(StrictChangeKind::Properties { count: properties });
    }
    if enum_values > MAX_ENUM_VALUES {
        at_root(StrictChangeKind::EnumValues { count: enum_values });
    }
    if chars > MAX_STRING_BUDGET {
        at_root(StrictChangeKind::StringBudget { chars });
    }
    if deepest > MAX_NESTING {
        changes.push(StrictChange {
            pointer: deepest_at,
            kind: StrictChangeKind::Nesting { deepest },
        });
    }
}

/// The deepest object nesting (the root object is level 1, an object property of it level 2)
/// and the pointer of the first object at the level past [`MAX_NESTING`] (or of the deepest).
pub fn deepest_object(schema: &Value) -> (usize, String) {
    let mut deepest = 0;
    let mut at = String::new();
    object_depth(schema, "", 0, &mut deepest, &mut at);
    (deepest, at)
}

fn object_depth(schema: &Value, path: &str, level: usize, deepest: &mut usize, at: &mut String) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    let level = if is_object(obj) { level + 1 } else { level };
    if level > *deepest && *deepest <= MAX_NESTING {
        *deepest = level;
        path.clone_into(at);
    } else {
        *deepest = (*deepest).max(level);
    }
    for key in ["properties", "$defs", "definitions"] {
        for (name, sub) in obj
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            object_depth(
                sub,
                &format!("{path}/{key}/{}", escape(name)),
                level,
                deepest,
                at,
            );
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = obj.get(key) {
            object_depth(sub, &format!("{path}/{key}"), level, deepest, at);
        }
    }
    for (i, sub) in obj
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        object_depth(sub, &format!("{path}/anyOf/{i}"), level, deepest, at);
    }
}
