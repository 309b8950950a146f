//! Validation: the model's arguments are untrusted input (chapter §6).
//!
//! [`schema_check`] turns a [`ResolvedCall`] into [`ValidArgs`] or INVALID_ARGUMENTS listing
//! every schema error at its argument path. [`resolve_paths`] applies the workspace path policy
//! to every path parameter and puts the *resolved* path (symbolic links inside the workspace
//! followed) into the arguments, so everything after it — the CEL rules, the permission rules,
//! the resource keys, the approver and the tool — judges and touches the same file, however the
//! model spelled it. [`semantic_check`] then turns [`ValidArgs`] into a [`CheckedCall`] — the
//! spec's CEL `validate` rules and the path violations together — or
//! SEMANTIC_VALIDATION_ERROR. A checked call also carries what later stages need from the same
//! CEL pass: its resource footprint, its idempotency key and its canonical form.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::cel::Evaluator;
use crate::ir::ErrorType;
use crate::runtime::registry::{CompiledTool, ResolvedCall};
use crate::runtime::scheduler::Footprint;
use crate::runtime::session::ToolCall;
use crate::runtime::workspace::{PathViolation, Workspace};

mod quote;

/// A call whose arguments match the tool's parameter schema.
#[derive(Clone, Debug)]
pub struct ValidArgs {
    pub(crate) resolved: ResolvedCall,
    /// Path parameters the policy refused (set by [`resolve_paths`]): parameter and violation.
    path_violations: Vec<(String, PathViolation)>,
    /// Paths that reach their file through a symbolic link (set by [`resolve_paths`]).
    links: Vec<LinkedPath>,
}

impl ValidArgs {
    /// The arguments: as the model wrote them, with path parameters resolved once
    /// [`resolve_paths`] has run.
    pub fn arguments(&self) -> &Value {
        &self.resolved.call.arguments
    }
}

/// A path argument that reaches its file through a symbolic link inside the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkedPath {
    /// What the model wrote.
    pub written: String,
    /// The file it leads to (what the rules judged and the tool received).
    pub resolved: String,
}

/// What the model reads about its paths that went through links, for a refusal: why a rule
/// about `.env` applies to `envlink`. Empty when no path did.
pub fn links_note(links: &[LinkedPath]) -> String {
    if links.is_empty() {
        return String::new();
    }
    let each: Vec<String> = links
        .iter()
        .map(|l| format!("`{}` leads to `{}`", l.written, l.resolved))
        .collect();
    format!(
        " Paths are judged by the file they lead to: {}.",
        each.join(", ")
    )
}

/// A call that passed every validation; ready for the permission decision.
#[derive(Clone, Debug)]
pub struct CheckedCall {
    pub(crate) call: ToolCall,
    pub(crate) tool: Arc<CompiledTool>,
    pub(crate) footprint: Footprint,
    pub(crate) idempotency_key: Option<String>,
    /// The key the call is recognised by: the spec's, else derived from session and call id
    /// (set by the pipeline, which knows the session).
    pub(crate) call_key: String,
    pub(crate) canonical_args: String,
    pub(crate) args_hash: String,
    /// Path arguments that went through a symbolic link.
    pub(crate) links: Vec<LinkedPath>,
}

/// Why validation refused a call: what the model is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// INVALID_ARGUMENTS, SEMANTIC_VALIDATION_ERROR or COST_LIMIT.
    pub error_type: ErrorType,
    /// Every problem, one per line.
    pub message: String,
    /// How to fix the call.
    pub hint: Option<String>,
}

/// The schema stage.
pub fn schema_check(resolved: ResolvedCall) -> Result<ValidArgs, Rejection> {
    let tool = &resolved.tool;
    let args = &resolved.call.arguments;
    if tool.parameters.is_valid(args) {
        return Ok(ValidArgs {
            resolved,
            path_violations: Vec::new(),
            links: Vec::new(),
        });
    }
    let def = &tool.definition;
    if let Some(message) = not_an_object(&def.name, args) {
        return Err(Rejection {
            error_type: ErrorType::InvalidArguments,
            message,
            hint: Some(format!(
                "Call {} again with the arguments as one JSON object. Parameters: {}.",
                def.name,
                describe_parameters(&def.parameters)
            )),
        });
    }
    // Each error names the offending value by a bounded quote (jsonschema's own text embeds the
    // whole instance), and the list itself is bounded: the refusal stays small for any input.
    let mut problems: Vec<String> = Vec::new();
    let mut more = 0usize;
    for e in tool.parameters.iter_errors(args) {
        if problems.len() == quote::LISTED_ERRORS {
            more += 1;
            continue;
        }
        let at = readable_path(&e.instance_path().to_string());
        let what = match e.kind() {
            jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => format!(
                "Additional properties are not allowed ({} unexpected: {})",
                unexpected.len(),
                quote::named_list(unexpected)
            ),
            _ => e.masked_with(quote::quoted_value(e.instance())).to_string(),
        };
        problems.push(format!("- {at}: {what}"));
    }
    if more > 0 {
        problems.push(format!("- and {more} more errors"));
    }
    Err(Rejection {
        error_type: ErrorType::InvalidArguments,
        message: format!(
            "The arguments do not match the parameters of {}:\n{}",
            def.name,
            problems.join("\n")
        ),
        hint: Some(format!(
            "Fix these arguments and call {} again. Parameters: {}.",
            def.name,
            describe_parameters(&def.parameters)
        )),
    })
}

/// Why arguments that are not a JSON object were refused: a provider sends the model's text
/// as it came when it is not JSON (src/runtime/provider), and a client may send any value.
fn not_an_object(tool: &str, args: &Value) -> Option<String> {
    let kind = match args {
        Value::Object(_) => return None,
        Value::String(text) => {
            return Some(match serde_json::from_str::<Value>(text) {
                Err(e) => format!(
                    "The arguments of {tool} are not a JSON object: the text {} is not valid JSON ({e}).",
                    preview(text)
                ),
                Ok(_) => format!(
                    "The arguments of {tool} are a string holding JSON text, not a JSON object: {}",
                    preview(text)
                ),
            });
        }
        Value::Array(_) => "an array",
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
    };
    Some(format!(
        "The arguments of {tool} must be a JSON object, not {kind}."
    ))
}

/// The start of a text, quoted, for a message.
fn preview(text: &str) -> String {
    const MAX: usize = 200;
    let mut s: String = text.chars().take(MAX).collect();
    if text.chars().count() > MAX {
        s.push('…');
    }
    format!("`{s}`")
}

/// The path policy: every path parameter is checked and, when it passes, replaced in the
/// arguments by its resolved workspace-relative form (`./alias/login.py` → `src/login.py`). A
/// refused path stays as written, for the CEL rules to judge, and is reported by
/// [`semantic_check`].
pub fn resolve_paths(valid: &mut ValidArgs, workspace: &Workspace) {
    let ValidArgs {
        resolved,
        path_violations,
        links,
    } = valid;
    let args = &mut resolved.call.arguments;
    for param in &resolved.tool.path_params {
        let values: Vec<&mut String> = match args.get_mut(&param.name) {
            Some(Value::String(s)) if !param.list => vec![s],
            Some(Value::Array(items)) if param.list => items
                .iter_mut()
                .filter_map(|v| match v {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for v in values {
            match workspace.check(v) {
                Ok(p) => {
                    let lexical = crate::cel::functions::normalize(v);
                    if lexical.as_deref() != Some(p.as_str()) {
                        links.push(LinkedPath {
                            written: v.clone(),
                            resolved: p.as_str().to_owned(),
                        });
                    }
                    *v = p.as_str().to_owned();
                }
                Err(violation) => path_violations.push((param.name.clone(), violation)),
            }
        }
    }
}

/// The semantic stage: CEL rules and the path policy's findings (all problems are reported
/// together), plus the footprint, idempotency key and canonical form. `ev` is `None` only for
/// tools with no CEL at all; it must be built over [`ValidArgs::arguments`] after
/// [`resolve_paths`].
pub fn semantic_check(
    valid: ValidArgs,
    ev: Option<&Evaluator<'_>>,
) -> Result<CheckedCall, Rejection> {
    let ValidArgs {
        resolved: ResolvedCall { call, tool },
        path_violations,
        links,
    } = valid;
    let mut problems = Vec::new();
    let mut hint = None;
    // Whether a failed rule already stated the lexical path policy (`path.within_workspace`);
    // then the path findings below add only what CEL cannot see: symbolic links.
    let mut lexical_reported = false;
    if let Some(ev) = ev {
        for (rule, program) in &tool.validate {
            let failed = match ev.condition(program) {
                Ok(true) => None,
                Ok(false) => Some(rule.message.clone()),
                // Not a rule that said no: the arguments are too large to judge at all, which
                // the caller fixes differently, so it is a type of its own.
                Err(e) if e.is_budget() => {
                    return Err(Rejection {
                        error_type: ErrorType::CostLimit,
                        message: format!(
                            "{}: validation rule `{}` could not be checked over these arguments: {e}",
                            tool.definition.name, rule.id
                        ),
                        hint: None,
                    });
                }
                Err(e) => Some(format!("rule `{}` could not be evaluated: {e}", rule.id)),
            };
            if let Some(m) = failed {
                problems.push(m);
                lexical_reported |= rule.expr.contains("path.within_workspace");
                if hint.is_none() {
                    hint.clone_from(&rule.hint);
                }
            }
        }
    }
    for (param, violation) in path_violations {
        let by_link = matches!(
            violation,
            PathViolation::Symlink(_) | PathViolation::BrokenLink(_) | PathViolation::NotUtf8(_)
        );
        if lexical_reported && !by_link {
            continue;
        }
        problems.push(format!("{param}: {violation}"));
        if hint.is_none() {
            hint = Some(
                "Use a path relative to the workspace root, such as src/main.rs; symbolic links must lead to something inside it."
                    .to_owned(),
            );
        }
    }
    if !problems.is_empty() {
        let note = links_note(&links);
        return Err(Rejection {
            error_type: ErrorType::SemanticValidationError,
            message: format!("{}{note}", problems.join("\n")),
            hint,
        });
    }
    let footprint = match ev {
        Some(ev) => footprint(&tool, ev),
        None => Footprint::default(),
    };
    let idempotency_key = match (&tool.idempotency_key, ev) {
        (Some(p), Some(ev)) => ev.text(p).ok().filter(|k| !k.is_empty()),
        _ => None,
    };
    let canonical_args = canonical_json(&call.arguments);
    let args_hash = blake3::hash(canonical_args.as_bytes()).to_hex().to_string();
    Ok(CheckedCall {
        call,
        tool,
        footprint,
        idempotency_key,
        call_key: String::new(),
        canonical_args,
        args_hash,
        links,
    })
}

/// Resource keys from the spec's CEL; a failure makes the call conflict with everything.
fn footprint(tool: &CompiledTool, ev: &Evaluator<'_>) -> Footprint {
    let mut fp = Footprint::default();
    let eval = |programs: &[crate::cel::Compiled], into: &mut BTreeSet<String>| {
        for p in programs {
            match ev.strings(p) {
                Ok(keys) => into.extend(keys),
                Err(e) => return Some(e.to_string()),
            }
        }
        None
    };
    let mut reads = BTreeSet::new();
    let mut writes = BTreeSet::new();
    let failed = eval(&tool.reads, &mut reads).or_else(|| eval(&tool.writes, &mut writes));
    fp.reads = reads;
    fp.writes = writes;
    fp.unresolved = failed;
    fp
}

/// `/edits/0/old_text` → `edits[0].old_text`; the root → `arguments`.
fn readable_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    if out.is_empty() {
        "arguments".to_owned()
    } else {
        out
    }
}

/// `path (string, required), start_line (integer)`.
fn describe_parameters(schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "none".to_owned();
    };
    if props.is_empty() {
        return "none".to_owned();
    }
    props
        .iter()
        .map(|(name, s)| {
            let ty = s.get("type").and_then(Value::as_str).unwrap_or("any");
            if required.contains(&name.as_str()) {
                format!("{name} ({ty}, required)")
            } else {
                format!("{name} ({ty})")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// JSON with object keys sorted at every level and no insignificant whitespace.
pub fn canonical_json(v: &Value) -> String {
    let mut out = Vec::with_capacity(128);
    write_canonical(v, &mut out);
    // serde_json writes UTF-8 only.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Writes `v` as compact JSON with object keys sorted, without building a sorted copy.
fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                // Writing a string or a scalar into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *out, k);
                out.push(b':');
                write_canonical(v, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_paths() {
        assert_eq!(readable_path(""), "arguments");
        assert_eq!(readable_path("/edits/0/old_text"), "edits[0].old_text");
        assert_eq!(readable_path("/end_line"), "end_line");
    }

    #[test]
    fn canonical_form_ignores_key_order() {
        let a = serde_json::json!({"b": 1, "a": {"d": [1, 2], "c": null}});
        let b = serde_json::json!({"a": {"c": null, "d": [1, 2]}, "b": 1});
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(canonical_json(&a), r#"{"a":{"c":null,"d":[1,2]},"b":1}"#);
    }

    /// Written in place, the canonical form is the text of a sorted copy: escapes, numbers,
    /// non-ASCII keys and nesting included.
    #[test]
    fn canonical_form_is_the_sorted_copy_serialized() {
        fn sorted(v: &Value) -> Value {
            match v {
                Value::Object(m) => {
                    let mut e: Vec<_> = m.iter().collect();
                    e.sort_by(|a, b| a.0.cmp(b.0));
                    Value::Object(e.into_iter().map(|(k, v)| (k.clone(), sorted(v))).collect())
                }
                Value::Array(i) => Value::Array(i.iter().map(sorted).collect()),
                o => o.clone(),
            }
        }
        let v = serde_json::json!({
            "zé": "tab\there \"quoted\" \u{1}\n", "a\"b": [1.5, -0.0, 1e300, 18446744073709551615u64,
            -9223372036854775808i64, true, null, {"y": [], "x": {}}],
            "": {"nested": {"k2": 2, "k1": "日本"}},
        });
        assert_eq!(canonical_json(&v), sorted(&v).to_string());
    }
}
