//! An OpenAPI document's schemas as a spec's JSON Schema: 3.0's forms brought to 2020-12, and
//! local `$ref`s resolved so that shared schemas stay shared.
//!
//! A target referenced from one place in the document is inlined there. A target referenced
//! from two or more (a DAG: `S0` whose eight properties all name `S1`, and so on) becomes one
//! entry of the tool schema's `$defs`, and every use a `{"$ref": "#/$defs/NAME"}`: the output
//! grows with the document, not with the number of paths through it. The entries are converted
//! from a work list, not by recursion, so a long chain of shared schemas costs no stack. Every
//! node converted is counted against the import's node budget and its depth checked, with the
//! document pointer of the node for the message.

use std::collections::{BTreeSet, HashMap, VecDeque};

use serde_json::{Map, Value, json};

use crate::cli::import::limits::Walk;

/// Why a schema was not converted.
#[derive(Debug)]
pub enum Failure {
    /// The operation cannot be a tool; the reason is listed.
    Inexpressible(String),
    /// A limit was passed at this document pointer: the import stops.
    Limit {
        /// The message.
        message: String,
        /// The JSON pointer in the document.
        pointer: String,
    },
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Inexpressible(s)
    }
}

/// How often each local `$ref` target is named in the document.
pub fn count_refs(doc: &Value) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref")
                    && let Some(p) = r.strip_prefix('#')
                {
                    *counts.entry(p.to_owned()).or_insert(0) += 1;
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    counts
}

/// The `$defs` of one tool schema being built: document pointer → entry name, the entries
/// done, and those still to convert.
#[derive(Default)]
pub struct Defs {
    names: HashMap<String, String>,
    taken: BTreeSet<String>,
    done: Map<String, Value>,
    todo: VecDeque<(String, String)>,
}

impl Defs {
    /// The entry name for a target, queued for conversion the first time it is named.
    fn name_of(&mut self, pointer: &str) -> String {
        if let Some(n) = self.names.get(pointer) {
            return n.clone();
        }
        let last = pointer.rsplit('/').next().unwrap_or("");
        let last = last.replace("~1", "/").replace("~0", "~");
        let mut base: String = last
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        if base.is_empty() {
            base.push_str("schema");
        }
        let mut name = base.clone();
        let mut k = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        self.names.insert(pointer.to_owned(), name.clone());
        self.todo.push_back((pointer.to_owned(), name.clone()));
        name
    }
}

/// The converter of one document: the document, its reference counts and the node budget.
pub struct Converter<'d, 'l> {
    doc: &'d Value,
    refs: HashMap<String, usize>,
    /// The import's node and depth budget.
    pub walk: Walk<'l>,
}

impl<'d, 'l> Converter<'d, 'l> {
    /// A converter for `doc` spending `walk`.
    pub fn new(doc: &'d Value, walk: Walk<'l>) -> Self {
        Converter {
            doc,
            refs: count_refs(doc),
            walk,
        }
    }

    /// Converts a schema found at `pointer` in the document; a top-level `$ref` is followed (so
    /// an object body's properties can join the parameters), shared targets below it go into
    /// `defs`.
    pub fn root(&mut self, v: &Value, pointer: &str, defs: &mut Defs) -> Result<Value, Failure> {
        let mut seen = Vec::new();
        let (mut v, mut pointer) = (v, pointer.to_owned());
        while let Some(r) = v.get("$ref").and_then(Value::as_str) {
            let (target, p) = self.target(r, &pointer)?;
            if seen.contains(&p) {
                return Err(Failure::Inexpressible(format!(
                    "its schema `{r}` refers only to itself"
                )));
            }
            seen.push(p.clone());
            (v, pointer) = (target, p);
        }
        self.node(v, 0, &pointer, defs, &mut seen)
    }

    /// Converts every queued `$defs` entry (and those they queue) and returns the finished map.
    pub fn finish(&mut self, defs: &mut Defs) -> Result<Map<String, Value>, Failure> {
        while let Some((pointer, name)) = defs.todo.pop_front() {
            let target = self.doc.pointer(&pointer).ok_or_else(|| {
                Failure::Inexpressible(format!("`#{pointer}` is not in the document"))
            })?;
            // An entry sits two levels below its schema's root (`$defs`, then its name).
            let v = self.node(target, 2, &pointer, defs, &mut vec![pointer.clone()])?;
            defs.done.insert(name, v);
        }
        Ok(std::mem::take(&mut defs.done))
    }

    fn target(&self, r: &str, at: &str) -> Result<(&'d Value, String), Failure> {
        let p = r.strip_prefix('#').ok_or_else(|| {
            Failure::Inexpressible(format!(
                "the reference `{r}` (at `{at}`) is not inside the document"
            ))
        })?;
        let t = self.doc.pointer(p).ok_or_else(|| {
            Failure::Inexpressible(format!(
                "the reference `{r}` (at `{at}`) is not inside the document"
            ))
        })?;
        Ok((t, p.to_owned()))
    }

    fn node(
        &mut self,
        v: &Value,
        depth: usize,
        pointer: &str,
        defs: &mut Defs,
        inlining: &mut Vec<String>,
    ) -> Result<Value, Failure> {
        self.walk
            .step(depth, &String::new)
            .map_err(|message| Failure::Limit {
                message,
                pointer: pointer.to_owned(),
            })?;
        let child = |k: &str| format!("{pointer}/{}", k.replace('~', "~0").replace('/', "~1"));
        Ok(match v {
            Value::Object(m) => {
                if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                    let (target, p) = self.target(r, pointer)?;
                    // Shared, or recursive (a cycle needs a name to close on).
                    if self.refs.get(&p).copied().unwrap_or(0) > 1 || inlining.contains(&p) {
                        return Ok(json!({"$ref": format!("#/$defs/{}", defs.name_of(&p))}));
                    }
                    inlining.push(p.clone());
                    let out = self.node(target, depth, &p, defs, inlining);
                    inlining.pop();
                    return out;
                }
                let mut out = Map::new();
                for (k, x) in m {
                    let x = match k.as_str() {
                        "properties" | "patternProperties" | "$defs" | "definitions" => {
                            let here = child(k);
                            let mut props = Map::new();
                            for (pk, pv) in x.as_object().into_iter().flatten() {
                                let at =
                                    format!("{here}/{}", pk.replace('~', "~0").replace('/', "~1"));
                                props.insert(
                                    pk.clone(),
                                    self.node(pv, depth + 2, &at, defs, inlining)?,
                                );
                            }
                            Value::Object(props)
                        }
                        "example" | "examples" | "xml" | "externalDocs" | "discriminator" => {
                            continue;
                        }
                        k if k.starts_with("x-") => continue,
                        _ => self.node(x, depth + 1, &child(k), defs, inlining)?,
                    };
                    out.insert(k.clone(), x);
                }
                // 3.0: `nullable: true` is a null in `type`; boolean exclusive bounds are numbers.
                if out.remove("nullable") == Some(Value::Bool(true))
                    && let Some(Value::String(t)) = out.get("type").cloned()
                {
                    out.insert("type".into(), json!([t, "null"]));
                }
                for (flag, bound) in [
                    ("exclusiveMinimum", "minimum"),
                    ("exclusiveMaximum", "maximum"),
                ] {
                    if let Some(Value::Bool(b)) = out.get(flag).cloned() {
                        out.remove(flag);
                        if b && let Some(n) = out.remove(bound) {
                            out.insert(flag.into(), n);
                        }
                    }
                }
                Value::Object(out)
            }
            Value::Array(a) => {
                let mut out = Vec::with_capacity(a.len());
                for (i, x) in a.iter().enumerate() {
                    out.push(self.node(x, depth + 1, &child(&i.to_string()), defs, inlining)?);
                }
                Value::Array(out)
            }
            other => other.clone(),
        })
    }
}

/// How many nodes a tool schema would have with every `#/$defs/…` reference inlined (as the
/// provider emitters inline them; a recursive reference counts once, as they keep it), capped
/// at `cap`. Each entry is counted once and remembered, so this costs the schema's own size.
pub fn inlined_size(schema: &Value, cap: u64) -> u64 {
    let defs = schema.get("$defs").and_then(Value::as_object);
    let mut memo: HashMap<String, u64> = HashMap::new();
    let mut busy: BTreeSet<String> = BTreeSet::new();
    let mut own = schema.clone();
    if let Value::Object(m) = &mut own {
        m.shift_remove("$defs");
    }
    size_of(&own, defs, &mut memo, &mut busy, cap, 0)
}

fn size_of(
    v: &Value,
    defs: Option<&Map<String, Value>>,
    memo: &mut HashMap<String, u64>,
    busy: &mut BTreeSet<String>,
    cap: u64,
    depth: usize,
) -> u64 {
    // Deeper than any schema the loader reads: as good as too large.
    if depth > 512 {
        return cap;
    }
    let mut n: u64 = 1;
    match v {
        Value::Object(m) => {
            if let Some(name) = m
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
            {
                let name = name.replace("~1", "/").replace("~0", "~");
                if let Some(k) = memo.get(&name) {
                    n = n.saturating_add(*k);
                } else if !busy.contains(&name)
                    && let Some(target) = defs.and_then(|d| d.get(&name))
                {
                    busy.insert(name.clone());
                    let k = size_of(target, defs, memo, busy, cap, depth + 1);
                    busy.remove(&name);
                    memo.insert(name, k);
                    n = n.saturating_add(k);
                }
            }
            for (k, x) in m {
                if k != "$ref" {
                    n = n.saturating_add(size_of(x, defs, memo, busy, cap, depth + 1));
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                n = n.saturating_add(size_of(x, defs, memo, busy, cap, depth + 1));
            }
        }
        _ => {}
    }
    n.min(cap)
}

/// Adds the finished `$defs` to a tool schema (nothing when there are none).
pub fn attach(schema: &mut Value, defs: Map<String, Value>) {
    if !defs.is_empty()
        && let Value::Object(m) = schema
    {
        m.insert("$defs".into(), Value::Object(defs));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::cli::import::limits::ImportLimits;

    fn doc() -> Value {
        json!({"components": {"schemas": {
            "Once": {"type": "string", "nullable": true},
            "Twice": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
            "Top": {"type": "object", "properties": {
                "a": {"$ref": "#/components/schemas/Twice"},
                "b": {"$ref": "#/components/schemas/Twice"},
                "c": {"$ref": "#/components/schemas/Once"}}}
        }}})
    }

    #[test]
    fn shared_targets_become_defs_and_single_ones_are_inlined() {
        let doc = doc();
        let limits = ImportLimits::default();
        let mut c = Converter::new(&doc, Walk::new(&limits));
        let mut defs = Defs::default();
        let mut s = c
            .root(
                &json!({"$ref": "#/components/schemas/Top"}),
                "/x",
                &mut defs,
            )
            .unwrap();
        let d = c.finish(&mut defs).unwrap();
        attach(&mut s, d);
        assert_eq!(
            s,
            json!({"type": "object", "properties": {
                "a": {"$ref": "#/$defs/Twice"},
                "b": {"$ref": "#/$defs/Twice"},
                "c": {"type": ["string", "null"]}},
                "$defs": {"Twice": {"type": "integer", "exclusiveMinimum": 0}}})
        );
    }

    #[test]
    fn the_inlined_size_counts_each_use_of_a_definition() {
        let s = json!({"properties": {"a": {"$ref": "#/$defs/D"}, "b": {"$ref": "#/$defs/D"}},
            "$defs": {"D": {"type": "string"}}});
        // root, properties, a (+ D's 2), b (+ D's 2)
        assert_eq!(inlined_size(&s, u64::MAX), 8);
        assert_eq!(inlined_size(&s, 5), 5);
    }

    #[test]
    fn a_self_reference_is_kept_as_a_reference() {
        let doc = json!({"components": {"schemas": {"Tree": {"type": "object", "properties": {
            "kids": {"type": "array", "items": {"$ref": "#/components/schemas/Tree"}}}}}}});
        let limits = ImportLimits::default();
        let mut c = Converter::new(&doc, Walk::new(&limits));
        let mut defs = Defs::default();
        let mut s = c
            .root(
                &json!({"$ref": "#/components/schemas/Tree"}),
                "/x",
                &mut defs,
            )
            .unwrap();
        let d = c.finish(&mut defs).unwrap();
        attach(&mut s, d);
        assert_eq!(
            s["properties"]["kids"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
        assert_eq!(
            s["$defs"]["Tree"]["properties"]["kids"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
    }

    #[test]
    fn the_node_budget_names_the_pointer() {
        let doc = doc();
        let limits = ImportLimits {
            nodes: 3,
            ..ImportLimits::default()
        };
        let mut c = Converter::new(&doc, Walk::new(&limits));
        let mut defs = Defs::default();
        let e = c
            .root(
                &json!({"$ref": "#/components/schemas/Top"}),
                "/x",
                &mut defs,
            )
            .unwrap_err();
        let Failure::Limit { pointer, message } = e else {
            panic!("{e:?}")
        };
        assert_eq!(pointer, "/components/schemas/Top/properties/b");
        assert_eq!(
            message,
            "the import visited more than 3 schema nodes: over the nodes limit of 3 (raise it with `--limit nodes=N`)"
        );
    }
}
