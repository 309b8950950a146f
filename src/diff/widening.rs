//! What the new contracts let through that the old ones stopped, found by evaluating both on
//! the same calls: (a) both versions' permission examples, (b) arguments generated from the
//! schemas and from the literals, globs and bounds the rules and schemas mention, and (c) calls
//! recorded in a journal. Each side decides with the one permission evaluator the runtime and
//! policy tests use ([`CompiledPolicy::decide_example`]: protected paths first, then the rules),
//! after its own schema and `validate:` rules. A call the new side decides less strictly is a
//! witness of a widening; one it decides more strictly, of a narrowing.
//!
//! No witness is not a proof: the calls tried are samples, and the report says how many.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::cel::{Bindings, Evaluator};
use crate::diff::{
    CallsEvaluated, Change, ChangeKind, RecordedCall, Witness, project::sample_path,
};
use crate::ir::{Bundle, Decision, ToolDefinition};
use crate::policy::{CompiledPolicy, ProtectedSet};

/// The workspace root the rules see (they compare paths beneath it).
const WORKSPACE: &str = "/workspace";
/// At most this many generated calls per tool and context.
const MAX_GENERATED: usize = 400;
/// The longest string generated.
const MAX_LENGTH: u64 = 100_000;
/// Literals combined pairwise, at most this many of each property's.
const MAX_JOINED: usize = 12;

/// What one side decides about a call, strictest last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Allow,
    Ask,
    Deny,
    /// Refused before permissions: the schema or a `validate:` rule.
    Invalid,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Allow => "allow",
            Outcome::Ask => "ask",
            Outcome::Deny => "deny",
            Outcome::Invalid => "invalid",
        }
    }

    /// How strictly the call is stopped: a denial and a validation failure both refuse it.
    fn rank(self) -> u8 {
        match self {
            Outcome::Allow => 0,
            Outcome::Ask => 1,
            Outcome::Deny | Outcome::Invalid => 2,
        }
    }
}

/// One version of a tool, ready to decide calls.
struct Judge<'a> {
    def: &'a ToolDefinition,
    schema: Option<jsonschema::Validator>,
    validate: Vec<crate::cel::Compiled>,
    policy: Option<CompiledPolicy>,
    protected: Arc<ProtectedSet>,
}

impl<'a> Judge<'a> {
    fn new(def: &'a ToolDefinition, protected: Arc<ProtectedSet>) -> Self {
        Judge {
            def,
            schema: jsonschema::draft202012::new(&def.parameters).ok(),
            validate: def
                .validate
                .iter()
                .filter_map(|r| crate::cel::compile(&r.expr).ok())
                .collect(),
            policy: CompiledPolicy::compile(&def.permissions).ok(),
            protected,
        }
    }

    fn decide(&self, args: &Value, context: &str) -> Outcome {
        if self.schema.as_ref().is_some_and(|s| !s.is_valid(args)) {
            return Outcome::Invalid;
        }
        let bindings = Bindings {
            args,
            tool_name: &self.def.name,
            tool_effect: self.def.effect.as_str(),
            tool_version: self.def.version,
            context,
            workspace: WORKSPACE,
        };
        if !self.validate.is_empty() {
            let Ok(ev) = Evaluator::new(&bindings) else {
                return Outcome::Invalid;
            };
            // A rule that cannot be evaluated refuses the call, as at run time.
            if self
                .validate
                .iter()
                .any(|p| !matches!(ev.condition(p), Ok(true)))
            {
                return Outcome::Invalid;
            }
        }
        let Some(policy) = &self.policy else {
            return Outcome::Deny;
        };
        match policy.decide_example(&bindings, self.def, self.protected.clone()) {
            Ok(d) => match d.decision {
                Decision::Allow => Outcome::Allow,
                Decision::Ask => Outcome::Ask,
                Decision::Deny => Outcome::Deny,
            },
            Err(_) => Outcome::Deny,
        }
    }
}

/// A call to try, with its origin.
struct Probe {
    args: Value,
    context: Option<String>,
    origin: &'static str,
}

/// Evaluates every pair of tool versions on the same calls; returns how many were evaluated.
pub fn compare(
    old: &Bundle,
    new: &Bundle,
    pairs: &[(&ToolDefinition, &ToolDefinition)],
    replay: &[RecordedCall],
    out: &mut Vec<Change>,
) -> CallsEvaluated {
    let mut counted = CallsEvaluated::default();
    let (Ok(op), Ok(np)) = (
        ProtectedSet::new(&old.project.protect),
        ProtectedSet::new(&new.project.protect),
    ) else {
        return counted;
    };
    let (op, np) = (Arc::new(op), Arc::new(np));
    let mut contexts: Vec<String> = old
        .project
        .contexts
        .keys()
        .chain(new.project.contexts.keys())
        .cloned()
        .collect();
    contexts.push("interactive".into());
    contexts.sort();
    contexts.dedup();
    // Journal calls by the name they used: current, former or alias.
    let mut recorded: std::collections::HashMap<&str, Vec<&RecordedCall>> = Default::default();
    for c in replay {
        recorded.entry(c.tool.as_str()).or_default().push(c);
    }
    let same_protect = old.project.protect == new.project.protect;
    for (o, n) in pairs {
        // The same evaluator on the same inputs decides every call alike: nothing to sample.
        if same_protect && decides_alike(o, n) {
            continue;
        }
        let (jo, jn) = (Judge::new(o, op.clone()), Judge::new(n, np.clone()));
        let mut probes = Vec::new();
        for ex in o.permissions.examples.iter().chain(&n.permissions.examples) {
            probes.push(Probe {
                args: ex.args.clone(),
                context: Some(ex.context.clone().unwrap_or_else(|| "interactive".into())),
                origin: "example",
            });
        }
        for args in generate(o, n) {
            probes.push(Probe {
                args,
                context: None,
                origin: "generated",
            });
        }
        let names = [&o.name, &n.name]
            .into_iter()
            .chain(&o.aliases)
            .chain(&n.aliases);
        let mut seen_names = Vec::new();
        for name in names {
            if seen_names.contains(&name) {
                continue;
            }
            seen_names.push(name);
            for c in recorded.get(name.as_str()).into_iter().flatten() {
                probes.push(Probe {
                    args: c.arguments.clone(),
                    context: Some(c.context.clone()),
                    origin: "journal",
                });
            }
        }
        let mut found: Vec<ChangeKind> = Vec::new();
        for p in &probes {
            let ctxs: Vec<&str> = match &p.context {
                Some(c) => vec![c.as_str()],
                None => contexts.iter().map(String::as_str).collect(),
            };
            for ctx in ctxs {
                match p.origin {
                    "example" => counted.examples += 1,
                    "journal" => counted.journal += 1,
                    _ => counted.generated += 1,
                }
                let (a, b) = (jo.decide(&p.args, ctx), jn.decide(&p.args, ctx));
                let kind = if b.rank() < a.rank() {
                    if a == Outcome::Invalid {
                        // A call that passes a parameter the old schema did not have shows
                        // only that the parameter is new (reported as such).
                        if uses_new_parameter(&p.args, o) {
                            continue;
                        }
                        ChangeKind::ValidationRelaxed
                    } else {
                        ChangeKind::PermissionWidened
                    }
                } else if b.rank() > a.rank() && b != Outcome::Invalid {
                    ChangeKind::PermissionNarrowed
                } else {
                    continue;
                };
                if found.contains(&kind) {
                    continue;
                }
                found.push(kind);
                out.push(Change {
                    kind,
                    tool: Some(n.name.clone()),
                    at: "permissions".into(),
                    message: format!(
                        "a call the old contract decided `{}` is now `{}` in context `{ctx}`",
                        a.as_str(),
                        b.as_str()
                    ),
                    witness: Some(Witness {
                        arguments: p.args.clone(),
                        context: ctx.to_owned(),
                        old: a.as_str().into(),
                        new: b.as_str().into(),
                        origin: p.origin.into(),
                    }),
                });
            }
        }
    }
    counted
}

/// Whether two versions of a tool give the evaluator the same inputs: what a decision reads
/// (name, version, effect, schemas, `validate:`, rules, default, and the exec spec that marks
/// glob parameters) is equal.
fn decides_alike(o: &ToolDefinition, n: &ToolDefinition) -> bool {
    o.name == n.name
        && o.version == n.version
        && o.effect == n.effect
        && o.parameters == n.parameters
        && o.validate == n.validate
        && o.permissions.rules == n.permissions.rules
        && o.permissions.default == n.permissions.default
        && o.exec == n.exec
}

/// Whether the arguments name a property the old parameters do not declare.
fn uses_new_parameter(args: &Value, old: &ToolDefinition) -> bool {
    let declared = old.parameters.get("properties").and_then(Value::as_object);
    args.as_object().is_some_and(|a| {
        a.keys()
            .any(|k| declared.is_none_or(|d| !d.contains_key(k)))
    })
}

/// Arguments built from both schemas and the rules: a base call (every property at a typical
/// value) and, one property at a time, each boundary value and literal the contracts mention.
fn generate(o: &ToolDefinition, n: &ToolDefinition) -> Vec<Value> {
    let mut literals = Vec::new();
    for def in [o, n] {
        for r in &def.permissions.rules {
            scan_literals(&r.expr, &mut literals);
        }
        for r in &def.validate {
            scan_literals(&r.expr, &mut literals);
        }
    }
    literals.sort();
    literals.dedup();
    let mut props: Vec<(String, Vec<Value>)> = Vec::new();
    let mut base = Map::new();
    for def in [n, o] {
        let Some(p) = def.parameters.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (name, schema) in p {
            let values = candidates(schema, &literals);
            // The base call holds a value the property's schema accepts, so that varying
            // another property is what decides.
            if !base.contains_key(name) {
                let accepts = jsonschema::draft202012::new(schema).ok();
                let typical = values
                    .iter()
                    .find(|v| accepts.as_ref().is_none_or(|a| a.is_valid(v)))
                    .or(values.first());
                if let Some(v) = typical {
                    base.insert(name.clone(), v.clone());
                }
            }
            match props.iter_mut().find(|(k, _)| k == name) {
                Some((_, v)) => v.extend(values),
                None => props.push((name.clone(), values)),
            }
        }
    }
    let mut out = vec![Value::Object(base.clone())];
    for (name, values) in &props {
        for v in values {
            let mut call = base.clone();
            call.insert(name.clone(), v.clone());
            out.push(Value::Object(call));
        }
        // Without the property too (an optional one left out).
        let mut without = base.clone();
        without.remove(name);
        out.push(Value::Object(without));
    }
    out.dedup();
    out.truncate(MAX_GENERATED);
    out
}

/// The string and number literals a CEL expression mentions.
fn scan_literals(expr: &str, out: &mut Vec<Literal>) {
    let bytes = expr.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'"' || c == b'\'' {
            let start = i + 1;
            let mut j = start;
            while j < bytes.len() && bytes[j] != c {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            if let Some(s) = expr.get(start..j.min(bytes.len())) {
                out.push(Literal::Text(s.to_owned()));
            }
            i = j + 1;
        } else if c.is_ascii_digit()
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric() && bytes[i - 1] != b'_')
        {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
                j += 1;
            }
            if let Some(n) = expr.get(i..j).and_then(|s| s.parse::<f64>().ok()) {
                out.push(Literal::Number(n as i64));
            }
            i = j;
        } else {
            i += 1;
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Literal {
    Text(String),
    Number(i64),
}

/// Values to try for one property: a typical one first, then its enum, defaults and bounds
/// (each side of each), and the rules' literals (as written, beneath a folder, and a path
/// each glob matches).
fn candidates(schema: &Value, literals: &[Literal]) -> Vec<Value> {
    let ty = schema.get("type").and_then(|t| match t {
        Value::String(s) => Some(s.as_str()),
        Value::Array(a) => a.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    });
    let mut out = Vec::new();
    if let Some(d) = schema.get("default") {
        out.push(d.clone());
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        out.extend(e.iter().cloned());
    }
    match ty {
        Some("integer" | "number") => {
            let lo = schema.get("minimum").and_then(Value::as_i64);
            let hi = schema.get("maximum").and_then(Value::as_i64);
            out.push(json!(lo.unwrap_or(0).max(0).min(hi.unwrap_or(i64::MAX))));
            for b in [lo, hi].into_iter().flatten() {
                out.extend([json!(b - 1), json!(b), json!(b + 1)]);
            }
            for l in literals {
                if let Literal::Number(n) = l {
                    out.extend([json!(n - 1), json!(n), json!(n + 1)]);
                }
            }
        }
        Some("boolean") => out.extend([json!(false), json!(true)]),
        Some("array") => {
            let item = schema.get("items").cloned().unwrap_or(Value::Null);
            let inner = candidates(&item, literals);
            out.push(json!(
                inner.first().cloned().into_iter().collect::<Vec<_>>()
            ));
            for v in inner.into_iter().skip(1) {
                out.push(json!([v]));
            }
        }
        Some("object") => out.push(json!({})),
        _ => {
            out.push(json!("a.txt"));
            // Lengths at the schema's bounds and around each number the rules mention (a rule
            // on `size(args.text)`).
            let mut lengths: Vec<u64> = Vec::new();
            for key in ["minLength", "maxLength"] {
                if let Some(n) = schema.get(key).and_then(Value::as_u64) {
                    lengths.extend([n.saturating_sub(1), n, n + 1]);
                }
            }
            for l in literals {
                if let Literal::Number(n) = l
                    && let Ok(n) = u64::try_from(*n)
                {
                    lengths.extend([n.saturating_sub(1), n, n + 1]);
                }
            }
            for len in lengths {
                out.push(json!("a".repeat(len.min(MAX_LENGTH) as usize)));
            }
            let texts: Vec<&str> = literals
                .iter()
                .filter_map(|l| match l {
                    Literal::Text(s) => Some(s.as_str()),
                    Literal::Number(_) => None,
                })
                .collect();
            for s in &texts {
                out.push(json!(s));
                out.push(json!(sample_path(s)));
                out.push(json!(format!("{}/a.txt", s.trim_end_matches('/'))));
                out.push(json!(format!("a/{}", sample_path(s))));
            }
            // Two literals joined: a prefix one rule allows followed by a part another denies.
            for a in texts.iter().take(MAX_JOINED) {
                for b in texts.iter().take(MAX_JOINED).filter(|b| *b != a) {
                    out.push(json!(format!("{a}{b}")));
                }
            }
        }
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_read_from_rules() {
        let mut l = Vec::new();
        scan_literals(
            r#"args.path.startsWith("deploy/") && args.n > 10 && x2 == 'a\'b'"#,
            &mut l,
        );
        assert_eq!(
            l,
            vec![
                Literal::Text("deploy/".into()),
                Literal::Number(10),
                Literal::Text(r"a\'b".into())
            ]
        );
    }
}
