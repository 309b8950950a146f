//! Parameter and result schemas, compared keyword by keyword: properties added, removed,
//! retyped, made required or optional; enums narrowed or widened; bounds tightened or loosened;
//! defaults; objects closed or opened. Parameters are what callers send (stricter breaks them),
//! results what harnesses read (a field gone or optional breaks them).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::diff::{Change, ChangeKind, tool_change};

/// Which side of the call a schema describes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Parameters,
    Result,
}

/// Compares the argument schemas of one tool.
pub fn compare_parameters(tool: &str, old: &Value, new: &Value, out: &mut Vec<Change>) {
    let mut cx = Walk {
        tool,
        role: Role::Parameters,
        out,
    };
    cx.value("parameters", old, new);
}

/// Compares the result schemas of one tool (a result schema removed removes every field).
pub fn compare_result(tool: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<Change>) {
    let empty = Value::Object(Map::new());
    let (Some(old), new) = (old, new) else {
        return;
    };
    let mut cx = Walk {
        tool,
        role: Role::Result,
        out,
    };
    cx.value("result", old, new.unwrap_or(&empty));
}

struct Walk<'a> {
    tool: &'a str,
    role: Role,
    out: &'a mut Vec<Change>,
}

/// Lower bounds: a larger value is stricter.
const LOWER: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
/// Upper bounds: a smaller value is stricter.
const UPPER: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];
/// Constraints that cannot be ordered: any new or changed one may refuse old calls.
const OPAQUE: &[&str] = &["pattern", "format", "multipleOf", "const", "uniqueItems"];

impl Walk<'_> {
    fn push(&mut self, kind: ChangeKind, at: &str, message: String) {
        self.out.push(tool_change(kind, self.tool, at, message));
    }

    fn value(&mut self, at: &str, old: &Value, new: &Value) {
        if old == new {
            return;
        }
        let (Some(o), Some(n)) = (old.as_object(), new.as_object()) else {
            return;
        };
        let (ot, nt) = (types(o), types(n));
        if ot != nt && !ot.is_empty() {
            let widened = !nt.is_empty() && nt.is_superset(&ot) || nt.is_empty();
            match (self.role, widened) {
                (Role::Parameters, true) => self.push(
                    ChangeKind::BoundsLoosened,
                    at,
                    format!("`{at}` accepts more types ({} → {})", show(&ot), show(&nt)),
                ),
                (Role::Parameters, false) => self.push(
                    ChangeKind::ParameterRetyped,
                    at,
                    format!("`{at}` changed type from {} to {}", show(&ot), show(&nt)),
                ),
                (Role::Result, _) => self.push(
                    ChangeKind::ResultFieldRetyped,
                    at,
                    format!("`{at}` changed type from {} to {}", show(&ot), show(&nt)),
                ),
            }
            return;
        }
        for key in ["anyOf", "oneOf", "allOf", "$ref"] {
            if o.get(key) != n.get(key) {
                let kind = match self.role {
                    Role::Parameters => ChangeKind::ParameterRetyped,
                    Role::Result => ChangeKind::ResultFieldRetyped,
                };
                self.push(kind, at, format!("`{at}`'s `{key}` changed"));
                return;
            }
        }
        self.enumeration(at, o, n);
        if self.role == Role::Parameters {
            self.bounds(at, o, n);
            if o.get("default") != n.get("default") && o.get("default").is_some() {
                self.push(
                    ChangeKind::DefaultChanged,
                    at,
                    format!(
                        "`{at}`'s default changed from {} to {}",
                        shown(o.get("default")),
                        shown(n.get("default"))
                    ),
                );
            }
            if at != "parameters" && o.get("description") != n.get("description") {
                self.push(
                    ChangeKind::DescriptionChanged,
                    at,
                    format!("`{at}`'s description changed"),
                );
            }
        }
        if o.contains_key("properties") || n.contains_key("properties") {
            self.object(at, o, n);
        }
        if let (Some(oi), Some(ni)) = (o.get("items"), n.get("items")) {
            self.value(&format!("{at}[]"), oi, ni);
        }
    }

    fn enumeration(&mut self, at: &str, o: &Map<String, Value>, n: &Map<String, Value>) {
        let (Some(oe), Some(ne)) = (enum_values(o), enum_values(n)) else {
            if enum_values(o).is_some() && self.role == Role::Parameters {
                self.push(
                    ChangeKind::EnumWidened,
                    at,
                    format!("`{at}` no longer limits its values to an enum"),
                );
            } else if enum_values(n).is_some() {
                let kind = match self.role {
                    Role::Parameters => ChangeKind::EnumNarrowed,
                    Role::Result => ChangeKind::ResultFieldRetyped,
                };
                self.push(kind, at, format!("`{at}` is now limited to an enum"));
            }
            return;
        };
        let gone: Vec<&String> = oe.difference(&ne).collect();
        let added: Vec<&String> = ne.difference(&oe).collect();
        if self.role == Role::Result {
            if !gone.is_empty() || !added.is_empty() {
                self.push(
                    ChangeKind::ResultFieldRetyped,
                    at,
                    format!("`{at}`'s values changed"),
                );
            }
            return;
        }
        if !gone.is_empty() {
            self.push(
                ChangeKind::EnumNarrowed,
                at,
                format!("`{at}` no longer accepts {}", list(&gone)),
            );
        }
        if !added.is_empty() {
            self.push(
                ChangeKind::EnumWidened,
                at,
                format!("`{at}` now accepts {}", list(&added)),
            );
        }
    }

    fn bounds(&mut self, at: &str, o: &Map<String, Value>, n: &Map<String, Value>) {
        for (keys, lower) in [(LOWER, true), (UPPER, false)] {
            for key in keys {
                let (ov, nv) = (
                    o.get(*key).and_then(Value::as_f64),
                    n.get(*key).and_then(Value::as_f64),
                );
                let tighter = match (ov, nv) {
                    (None, None) => continue,
                    (None, Some(_)) => true,
                    (Some(_), None) => false,
                    (Some(a), Some(b)) if a == b => continue,
                    (Some(a), Some(b)) => (b > a) == lower,
                };
                self.bound(at, key, tighter, o.get(*key), n.get(*key));
            }
        }
        for key in OPAQUE {
            let (ov, nv) = (o.get(*key), n.get(*key));
            if ov == nv {
                continue;
            }
            self.bound(at, key, nv.is_some(), ov, nv);
        }
    }

    fn bound(
        &mut self,
        at: &str,
        key: &str,
        tighter: bool,
        ov: Option<&Value>,
        nv: Option<&Value>,
    ) {
        let kind = if tighter {
            ChangeKind::BoundsTightened
        } else {
            ChangeKind::BoundsLoosened
        };
        self.push(
            kind,
            &format!("{at}.{key}"),
            format!("`{at}`'s {key} changed from {} to {}", shown(ov), shown(nv)),
        );
    }

    fn object(&mut self, at: &str, o: &Map<String, Value>, n: &Map<String, Value>) {
        let empty = Map::new();
        let op = o
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let np = n
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let (or, nr) = (required(o), required(n));
        let params = self.role == Role::Parameters;
        for (name, ov) in op {
            let here = format!("{at}.{name}");
            match np.get(name) {
                None => {
                    let kind = if params {
                        ChangeKind::ParameterRemoved
                    } else {
                        ChangeKind::ResultFieldRemoved
                    };
                    self.push(kind, &here, format!("`{here}` was removed"));
                }
                Some(nv) => {
                    let (was, is) = (or.contains(name.as_str()), nr.contains(name.as_str()));
                    if params && !was && is {
                        self.push(
                            ChangeKind::ParameterMadeRequired,
                            &here,
                            format!("`{here}` is now required"),
                        );
                    } else if params && was && !is {
                        self.push(
                            ChangeKind::ParameterMadeOptional,
                            &here,
                            format!("`{here}` is now optional"),
                        );
                    } else if !params && was && !is {
                        self.push(
                            ChangeKind::ResultFieldMadeOptional,
                            &here,
                            format!("`{here}` is no longer always present"),
                        );
                    }
                    self.value(&here, ov, nv);
                }
            }
        }
        for name in np.keys().filter(|k| !op.contains_key(*k)) {
            let here = format!("{at}.{name}");
            let (kind, what) = match (params, nr.contains(name.as_str())) {
                (true, true) => (
                    ChangeKind::RequiredParameterAdded,
                    "a new required parameter",
                ),
                (true, false) => (
                    ChangeKind::OptionalParameterAdded,
                    "a new optional parameter",
                ),
                (false, _) => (ChangeKind::ResultFieldAdded, "a new result field"),
            };
            self.push(kind, &here, format!("`{here}` is {what}"));
        }
        if params {
            let closed =
                |m: &Map<String, Value>| m.get("additionalProperties") == Some(&Value::Bool(false));
            match (closed(o), closed(n)) {
                (false, true) => self.push(
                    ChangeKind::ObjectClosed,
                    at,
                    format!("`{at}` no longer accepts unknown properties"),
                ),
                (true, false) => self.push(
                    ChangeKind::ObjectOpened,
                    at,
                    format!("`{at}` now accepts unknown properties"),
                ),
                _ => {}
            }
        }
    }
}

fn types(m: &Map<String, Value>) -> BTreeSet<String> {
    let mut t: BTreeSet<String> = match m.get("type") {
        Some(Value::String(s)) => [s.clone()].into(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect(),
        _ => BTreeSet::new(),
    };
    // An integer is a number: `integer` → `number` widens, it does not retype.
    if t.contains("number") {
        t.insert("integer".into());
    }
    t
}

fn enum_values(m: &Map<String, Value>) -> Option<BTreeSet<String>> {
    m.get("enum")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(Value::to_string).collect())
}

fn required(m: &Map<String, Value>) -> BTreeSet<&str> {
    m.get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn show(t: &BTreeSet<String>) -> String {
    let shown: Vec<&str> = t
        .iter()
        .map(String::as_str)
        .filter(|s| !(*s == "integer" && t.contains("number")))
        .collect();
    if shown.is_empty() {
        "any".into()
    } else {
        shown.join("|")
    }
}

fn shown(v: Option<&Value>) -> String {
    v.map(Value::to_string).unwrap_or_else(|| "none".into())
}

fn list(values: &[&String]) -> String {
    values
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
