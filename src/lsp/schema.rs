//! The spec format's JSON Schema, read for hover and completion.
//!
//! The schemas are the ones `toolgate schema` prints (generated from the syntax tree types), so
//! what the editor offers is exactly what the loader accepts. A YAML path is followed through
//! `properties`, `additionalProperties` and `items`, with local `$ref`s resolved and every branch
//! of `anyOf`/`oneOf`/`allOf` considered.

use serde_json::Value;

use crate::lsp::yaml_path::Segment;

/// How deep `$ref` and union branches are followed (the spec schema refers to itself).
const MAX_DEPTH: usize = 12;

/// One of the two schemas: a tool spec's or toolgate.yaml's.
#[derive(Debug)]
pub struct Schema {
    root: Value,
}

/// A key or value the schema allows, with its documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key, or the value as written in YAML.
    pub label: String,
    /// Its `description`, when the schema has one.
    pub doc: Option<String>,
}

impl Schema {
    /// The schema of tool spec files.
    pub fn spec() -> Self {
        Self::parse(&crate::spec::schema::spec_schema())
    }

    /// The schema of toolgate.yaml.
    pub fn project() -> Self {
        Self::parse(&crate::spec::schema::project_schema())
    }

    fn parse(text: &str) -> Self {
        Schema {
            root: serde_json::from_str(text).unwrap_or(Value::Null),
        }
    }

    /// The documentation of the node at `path` (a key's description), if any.
    pub fn doc(&self, path: &[Segment]) -> Option<String> {
        let (parents, last) = path.split_last().map(|(l, p)| (p, l))?;
        let mut docs = Vec::new();
        for parent in self.nodes(parents) {
            let child = match last {
                Segment::Key(k) => property(parent, k),
                Segment::Item => parent.get("items"),
            };
            let Some(child) = child else { continue };
            // The property's own description first; a referenced definition's otherwise.
            let doc = description(child)
                .or_else(|| self.expand(child, 0).into_iter().find_map(description));
            if let Some(d) = doc
                && !docs.contains(&d)
            {
                docs.push(d);
            }
        }
        (!docs.is_empty()).then(|| docs.join("\n\n"))
    }

    /// The keys the mapping at `path` may hold.
    pub fn keys(&self, path: &[Segment]) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        for node in self.nodes(path) {
            let Some(props) = node.get("properties").and_then(Value::as_object) else {
                continue;
            };
            for (name, prop) in props {
                if out.iter().any(|e| &e.label == name) {
                    continue;
                }
                let doc = description(prop)
                    .or_else(|| self.expand(prop, 0).into_iter().find_map(description));
                out.push(Entry {
                    label: name.clone(),
                    doc,
                });
            }
        }
        out
    }

    /// The values the node at `path` may take when it is one of a fixed set (`enum`, `const`
    /// branches, booleans).
    pub fn values(&self, path: &[Segment]) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        let mut push = |label: String, doc: Option<String>| {
            if !out.iter().any(|e| e.label == label) {
                out.push(Entry { label, doc });
            }
        };
        for node in self.nodes(path) {
            if let Some(c) = node.get("const").and_then(scalar_text) {
                push(c, description(node));
            }
            for v in node
                .get("enum")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(v) = scalar_text(v) {
                    push(v, None);
                }
            }
            let types = node.get("type");
            let is_bool = types == Some(&Value::from("boolean"))
                || types
                    .and_then(Value::as_array)
                    .is_some_and(|t| t.contains(&Value::from("boolean")));
            if is_bool {
                push("true".into(), None);
                push("false".into(), None);
            }
        }
        out
    }

    /// Every schema node a value at `path` may be checked against.
    fn nodes(&self, path: &[Segment]) -> Vec<&Value> {
        let mut current = self.expand(&self.root, 0);
        for seg in path {
            let mut next: Vec<&Value> = Vec::new();
            for node in current {
                let child = match seg {
                    Segment::Key(k) => property(node, k),
                    Segment::Item => node.get("items"),
                };
                if let Some(child) = child {
                    for n in self.expand(child, 0) {
                        if !next.iter().any(|m| std::ptr::eq(*m, n)) {
                            next.push(n);
                        }
                    }
                }
            }
            current = next;
        }
        current
    }

    /// A node and what it stands for: its local `$ref` target and its union branches.
    fn expand<'a>(&'a self, node: &'a Value, depth: usize) -> Vec<&'a Value> {
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let mut out = vec![node];
        if let Some(target) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|pointer| self.root.pointer(pointer))
        {
            out.extend(self.expand(target, depth + 1));
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for branch in node
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.extend(self.expand(branch, depth + 1));
            }
        }
        out
    }
}

/// The schema of key `k` in an object schema: a declared property, else `additionalProperties`.
fn property<'a>(node: &'a Value, k: &str) -> Option<&'a Value> {
    node.get("properties")
        .and_then(|p| p.get(k))
        .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
}

fn description(node: &Value) -> Option<String> {
    node.get("description")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(_) | Value::Number(_) => Some(v.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Segment {
        Segment::Key(k.into())
    }

    #[test]
    fn keys_values_and_docs_follow_refs_and_unions() {
        let s = Schema::spec();
        let top: Vec<String> = s.keys(&[]).into_iter().map(|e| e.label).collect();
        assert!(top.contains(&"effect".to_owned()) && top.contains(&"exec".to_owned()));
        // `permissions` is `anyOf [$ref PermissionsAst, null]`; its rules are an array.
        let rule_keys: Vec<String> = s
            .keys(&[key("permissions"), key("rules"), Segment::Item])
            .into_iter()
            .map(|e| e.label)
            .collect();
        assert!(rule_keys.contains(&"deny".to_owned()), "{rule_keys:?}");
        let effects = s.values(&[key("effect")]);
        let read_only = effects.iter().find(|e| e.label == "read_only").unwrap();
        assert!(
            read_only
                .doc
                .as_deref()
                .unwrap()
                .contains("without changing")
        );
        assert_eq!(
            s.doc(&[key("effect")]).unwrap(),
            "What running it can change."
        );
        // `exec` is a oneOf of single-key objects: every backend's key is offered.
        let exec: Vec<String> = s
            .keys(&[key("exec")])
            .into_iter()
            .map(|e| e.label)
            .collect();
        assert!(exec.contains(&"builtin".to_owned()) && exec.contains(&"command".to_owned()));
        assert!(s.keys(&[key("no_such_key")]).is_empty());
        assert!(s.doc(&[key("no_such_key")]).is_none());
    }

    #[test]
    fn the_project_schema_documents_toolgate_yaml() {
        let s = Schema::project();
        assert!(s.doc(&[key("protect")]).is_some());
        assert!(s.keys(&[key("lint")]).iter().any(|e| e.label == "severity"));
    }
}
