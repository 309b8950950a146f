//! What a JSON Schema says about the CEL value of `args`: field types, and the bounds
//! (`maxItems`, `maxLength`) that make evaluation cost finite.

use serde_json::Value;

use crate::cel::check::CelType;

/// A type with its size bound: `maxItems` for lists, `maxLength` for strings.
#[derive(Clone, Debug, PartialEq)]
pub struct Ty {
    /// The CEL type.
    pub ty: CelType,
    /// The largest size, when the schema bounds it.
    pub bound: Option<u64>,
}

impl Ty {
    /// A type without a bound.
    pub fn of(ty: CelType) -> Self {
        Ty { ty, bound: None }
    }

    /// The dynamic type.
    pub fn dyn_() -> Self {
        Ty::of(CelType::Dyn)
    }
}

/// The result of looking up a field path in a schema.
#[derive(Clone, Debug, PartialEq)]
pub enum Lookup {
    /// The field exists with this type.
    Found(Ty),
    /// The path leaves the declared properties at segment `at`; `known` lists the properties
    /// that do exist there.
    Missing {
        /// Index of the first unknown segment.
        at: usize,
        /// The properties available at that level.
        known: Vec<String>,
    },
}

/// A view of one root schema, resolving local `$ref`s against it.
pub struct SchemaView<'a> {
    root: &'a Value,
}

const MAX_REF_DEPTH: usize = 32;

impl<'a> SchemaView<'a> {
    /// Wraps a root schema.
    pub fn new(root: &'a Value) -> Self {
        SchemaView { root }
    }

    /// The type of the root.
    pub fn root_type(&self) -> Ty {
        self.ty_of(self.root, 0)
    }

    /// Looks up `args.<path>`; list indices are written as `[]` segments.
    pub fn lookup(&self, path: &[&str]) -> Lookup {
        let mut cur = self.resolve(self.root, 0);
        for (i, seg) in path.iter().enumerate() {
            let Some(schema) = cur else {
                return Lookup::Found(Ty::dyn_());
            };
            if *seg == "[]" {
                match self.items_of(schema) {
                    Some(items) => cur = self.resolve(items, 0),
                    None => return Lookup::Found(Ty::dyn_()),
                }
                continue;
            }
            match self.property(schema, seg, 0) {
                PropertyLookup::Found(s) => cur = self.resolve(s, 0),
                PropertyLookup::Open => return Lookup::Found(Ty::dyn_()),
                PropertyLookup::Missing(known) => return Lookup::Missing { at: i, known },
            }
        }
        match cur {
            Some(s) => Lookup::Found(self.ty_of(s, 0)),
            None => Lookup::Found(Ty::dyn_()),
        }
    }

    fn resolve(&self, schema: &'a Value, depth: usize) -> Option<&'a Value> {
        if depth > MAX_REF_DEPTH {
            return None;
        }
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let pointer = r.strip_prefix('#')?;
                let target = self.root.pointer(pointer)?;
                self.resolve(target, depth + 1)
            }
            None => Some(schema),
        }
    }

    fn items_of(&self, schema: &'a Value) -> Option<&'a Value> {
        schema.get("items").filter(|i| i.is_object())
    }

    fn property(&self, schema: &'a Value, name: &str, depth: usize) -> PropertyLookup<'a> {
        if depth > MAX_REF_DEPTH {
            return PropertyLookup::Open;
        }
        let mut known = Vec::new();
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            if let Some(s) = props.get(name) {
                return PropertyLookup::Found(s);
            }
            known.extend(props.keys().cloned());
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            for branch in schema
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(branch) = self.resolve(branch, depth + 1) else {
                    continue;
                };
                match self.property(branch, name, depth + 1) {
                    PropertyLookup::Found(s) => return PropertyLookup::Found(s),
                    PropertyLookup::Open => return PropertyLookup::Open,
                    PropertyLookup::Missing(k) => known.extend(k),
                }
            }
        }
        if let Some(ap) = schema.get("additionalProperties").filter(|v| v.is_object()) {
            return PropertyLookup::Found(ap);
        }
        // A declared property list makes any other name a typo, whatever additionalProperties
        // says; only an object with no declared properties at all is free-form.
        if known.is_empty() && schema.get("properties").is_none() {
            return PropertyLookup::Open;
        }
        known.sort();
        known.dedup();
        PropertyLookup::Missing(known)
    }

    fn ty_of(&self, schema: &'a Value, depth: usize) -> Ty {
        let Some(schema) = self.resolve(schema, depth) else {
            return Ty::dyn_();
        };
        let ty = match schema.get("type") {
            Some(Value::String(t)) => Some(t.as_str()),
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null"),
            _ => None,
        };
        let ty = ty.or_else(|| {
            if schema.get("properties").is_some() {
                Some("object")
            } else if schema.get("items").is_some() {
                Some("array")
            } else if let Some(Value::Array(vals)) = schema.get("enum") {
                if vals.iter().all(Value::is_string) {
                    Some("string")
                } else {
                    None
                }
            } else {
                None
            }
        });
        match ty {
            Some("string") => Ty {
                ty: CelType::String,
                bound: schema
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .or_else(|| enum_max_len(schema)),
            },
            Some("integer") => Ty::of(CelType::Int),
            Some("number") => Ty::of(CelType::Double),
            Some("boolean") => Ty::of(CelType::Bool),
            Some("null") => Ty::of(CelType::Null),
            Some("object") => Ty {
                ty: CelType::Map(Box::new(CelType::Dyn)),
                bound: schema.get("maxProperties").and_then(Value::as_u64),
            },
            Some("array") => {
                let elem = self
                    .items_of(schema)
                    .map(|i| self.ty_of(i, depth + 1).ty)
                    .unwrap_or(CelType::Dyn);
                Ty {
                    ty: CelType::List(Box::new(elem)),
                    bound: schema.get("maxItems").and_then(Value::as_u64),
                }
            }
            _ => Ty::dyn_(),
        }
    }
}

fn enum_max_len(schema: &Value) -> Option<u64> {
    schema.get("enum").and_then(Value::as_array).map(|vals| {
        vals.iter()
            .filter_map(Value::as_str)
            .map(|s| s.chars().count() as u64)
            .max()
            .unwrap_or(0)
    })
}

enum PropertyLookup<'a> {
    Found(&'a Value),
    Open,
    Missing(Vec<String>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_nested_fields_and_refs() {
        let s = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "maxLength": 10},
                "edits": {"type": "array", "maxItems": 5, "items": {"$ref": "#/$defs/edit"}},
                "meta": {"type": "object"}
            },
            "additionalProperties": false,
            "$defs": {"edit": {"type": "object", "properties": {"old": {"type": "string"}}}}
        });
        let v = SchemaView::new(&s);
        assert_eq!(
            v.lookup(&["path"]),
            Lookup::Found(Ty {
                ty: CelType::String,
                bound: Some(10)
            })
        );
        assert_eq!(
            v.lookup(&["edits"]),
            Lookup::Found(Ty {
                ty: CelType::List(Box::new(CelType::Map(Box::new(CelType::Dyn)))),
                bound: Some(5)
            })
        );
        assert_eq!(
            v.lookup(&["edits", "[]", "old"]),
            Lookup::Found(Ty {
                ty: CelType::String,
                bound: None
            })
        );
        assert_eq!(v.lookup(&["meta", "anything"]), Lookup::Found(Ty::dyn_()));
        assert_eq!(
            v.lookup(&["pth"]),
            Lookup::Missing {
                at: 0,
                known: vec!["edits".into(), "meta".into(), "path".into()]
            }
        );
    }
}
