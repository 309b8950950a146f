//! TGE011 destructive-without-signal.

use crate::diagnostic::Severity;
use crate::ir::Effect;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::effect::names::{is_path_like, tool_verb, words};
use crate::lint::rules::schema::prose::{self, contains_words, sentences};
use crate::lint::rules::schema::unstable_result_shape::quote;
use crate::rule::Rule;
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::DestructiveWithoutSignal,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tools that can overwrite or delete data though neither name, description nor annotations say so, and read-only claims the description contradicts.",
    explanation: r#"Smell: destructive without signal.

## What it does
Reports a tool that can destroy data without saying so anywhere a model, a person approving the
call or a policy would look:

- **A silent overwrite.** The tool writes, saves, copies, moves or pushes to a target that may
  already exist (a file, a path, a key), and its description says nothing about what happens then
  (no "overwrites", "replaces", "fails if it exists", "existing", "update"), nor is it marked
  destructive (`destructiveHint: true`, `effect: destructive`).
- **A patch that deletes.** A patch language whose sections include deleting files ("`*** Delete
  File`") in a tool that is not marked destructive: its name and summary say "edit", its grammar
  says "delete".
- **A read-only claim the description contradicts.** A tool annotated `readOnlyHint: true` (or
  declared `read_only`, `network_read` or `pure`) whose description leads with a writing verb
  ("Save page as PDF") or whose file-name parameter always saves ("File name to save the
  screenshot to. Defaults to …"); or one annotated `destructiveHint: false` whose description
  says it deletes or overwrites.

What does not count: a tool that says it overwrites or deletes, or is named for it (`delete_*`,
"overwrites the file if it exists"); a create that fails on an existing target; an edit or update
of named fields; an upload to a page; annotations that over-warn (`destructiveHint: true` on a
click); a general interpreter (a shell can delete anything: that is TGS002). A name whose verb
contradicts the effect is TGE001.

## Why is this bad?
Approval prompts, permission defaults, retries and the model's own caution all key on the
signals: the name, the description, the annotations. A write that silently replaces an existing
file is called as casually as a read, retried after a timeout, and allowed by a policy that asks
only for destructive tools. MCP clients must treat annotations as untrusted hints — all the more
reason for the description to state the loss.

## Example
```yaml
name: store_note
description: Store a note under a key.
effect: local_write
parameters:
  type: object
  properties:
    path: {type: string, description: Where to store the note.}
    text: {type: string}
```

Use instead: say it, and declare it.
```yaml
name: store_note
description: Store a note under a key, replacing any note already stored there.
effect: destructive
```
"#,
};

/// Verbs that write to a target that may already exist.
const WRITING_VERBS: &[&str] = &[
    "write", "save", "put", "push", "copy", "move", "store", "dump",
];
/// Words that say what happens to existing data.
const SIGNALS: &[&str] = &[
    "overwrite",
    "overwrites",
    "overwritten",
    "overwriting",
    "replace",
    "replaces",
    "replaced",
    "replacing",
    "existing",
    "exists",
    "fail",
    "fails",
    "clobber",
    "clobbers",
    "update",
    "updates",
    "updating",
    "destructive",
    "truncate",
    "truncates",
];
/// Leading verbs of a description that say the tool changes something.
const CHANGE_VERBS: &[&str] = &[
    "save",
    "saves",
    "write",
    "writes",
    "delete",
    "deletes",
    "remove",
    "removes",
    "create",
    "creates",
    "update",
    "updates",
    "overwrite",
    "overwrites",
    "store",
    "stores",
    "upload",
    "uploads",
    "modify",
    "modifies",
    "rename",
    "renames",
    "move",
    "moves",
];

/// Reports tools that hide that they can destroy data.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let desc = tool.description();
    let lower = desc.to_ascii_lowercase();
    let annotated_destructive = tool.effect == Some(Effect::Destructive)
        || tool
            .annotations
            .and_then(|a| a.get("destructiveHint"))
            .and_then(serde_json::Value::as_bool)
            == Some(true);
    let claims_read_only = tool.effect.is_some_and(Effect::is_read_only);
    let claims_safe = tool
        .annotations
        .and_then(|a| a.get("destructiveHint"))
        .and_then(serde_json::Value::as_bool)
        == Some(false)
        || (tool.is_spec()
            && tool
                .effect
                .is_some_and(|e| e != Effect::Destructive && !e.is_read_only()));
    let props = tool.properties();
    let signalled = SIGNALS.iter().any(|w| contains_words(&lower, w));

    // A read-only claim the description or a parameter contradicts.
    if claims_read_only {
        let lead = sentences(desc).into_iter().next().filter(|s| {
            s.split_whitespace()
                .next()
                .is_some_and(|w| CHANGE_VERBS.contains(&w.to_ascii_lowercase().as_str()))
        });
        let saving = props.iter().find_map(|(k, n, _)| {
            let d = n.get("description").and_then(Node::as_str)?;
            let l = d.to_ascii_lowercase();
            (is_path_like(&k.name)
                && (contains_words(&l, "save") || contains_words(&l, "saved"))
                && (l.contains("defaults to") || l.contains("default:")))
            .then(|| d.to_owned())
        });
        if let Some(evidence) = lead.or(saving) {
            let claim = if tool.is_spec() {
                "declares a read-only effect"
            } else {
                "is annotated read-only (`readOnlyHint: true`)"
            };
            ctx.report(
                tool.name_span(),
                format!(
                    "`{}` {claim}, but it writes (\"{}\")",
                    tool.name,
                    quote(&evidence)
                ),
            )
            .help("declare what it changes: `readOnlyHint: false` (and `destructiveHint: true` if it can replace an existing file), or `effect: local_write`/`destructive` in a spec");
            return;
        }
    }
    if annotated_destructive {
        return;
    }
    // A non-destructive claim the description contradicts.
    if claims_safe
        && let Some(s) = sentences(desc).into_iter().find(|s| {
            let l = s.to_ascii_lowercase();
            [
                "delete",
                "deletes",
                "overwrite",
                "overwrites",
                "erase",
                "erases",
                "wipe",
                "wipes",
            ]
            .iter()
            .any(|w| destroys(&l, w))
                && !l.contains("cannot")
                && !l.contains("never")
                && !l.contains("will fail")
        })
    {
        let claim = if tool.is_spec() {
            "declares a non-destructive effect"
        } else {
            "is annotated non-destructive (`destructiveHint: false`)"
        };
        ctx.report(
            tool.name_span(),
            format!("`{}` {claim}, but its description says it destroys data (\"{}\")", tool.name, quote(&s)),
        )
        .help("mark it destructive (`destructiveHint: true`, or `effect: destructive` in a spec), so approval and retries treat it as such");
        return;
    }
    // A patch language that deletes.
    for (key, node, _) in &props {
        if crate::lint::rules::schema::shape::single_type(node) != Some("string") {
            continue;
        }
        let pdesc = node.get("description").and_then(Node::as_str).unwrap_or("");
        let ops = prose::patch_operations(&format!("{desc}\n{pdesc}"));
        if ops.contains(&"delete") {
            ctx.report(
                tool.span(key.range),
                format!(
                    "`{}` takes a patch language that can delete files, but nothing marks `{}` as destructive",
                    key.name, tool.name
                ),
            )
            .help("mark the tool destructive (`destructiveHint: true`, or `effect: destructive`) and say in its first sentence that a patch can delete and move files — or offer deletion as a tool of its own");
            return;
        }
    }
    // A silent overwrite.
    if signalled {
        return;
    }
    let verb = tool_verb(tool.name).map(|v| v.word);
    let lead = desc
        .split_whitespace()
        .next()
        .map(|w| w.to_ascii_lowercase())
        .unwrap_or_default();
    let writes = verb.as_deref().is_some_and(|v| WRITING_VERBS.contains(&v))
        || WRITING_VERBS.iter().any(|v| {
            lead == *v || lead.strip_suffix('s') == Some(v) || lead.strip_suffix("es") == Some(v)
        });
    let targets = props.iter().any(|(k, _, _)| is_path_like(&k.name))
        || words(tool.name).iter().any(|w| {
            matches!(
                w.as_str(),
                "file" | "files" | "path" | "document" | "object" | "blob"
            )
        });
    if writes && targets {
        let first = sentences(desc)
            .into_iter()
            .next()
            .unwrap_or_else(|| tool.name.to_owned());
        ctx.report(
            tool.name_span(),
            format!(
                "`{}` can replace existing data (\"{}\"), but neither its name, its description nor its annotations say so",
                tool.name,
                quote(&first)
            ),
        )
        .help("say what happens to an existing target (\"Overwrites the file if it exists\" or \"Fails if the file exists\"), and mark it destructive (`destructiveHint: true`, `effect: destructive`) if it overwrites");
    }
}

/// Whether a sentence (lowercased) uses the verb `verb` for destroying data: not for replacing
/// chosen fields of a record ("Overwrite chosen fields of an existing account, leaving the others
/// as they are" is an update).
fn destroys(l: &str, verb: &str) -> bool {
    const FIELDS: &[&str] = &[
        "field",
        "fields",
        "value",
        "values",
        "property",
        "properties",
        "setting",
        "settings",
        "attribute",
        "attributes",
    ];
    l.match_indices(verb).any(|(i, _)| {
        let before = l[..i].chars().next_back();
        let after = l[i + verb.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !word(before)
            && !word(after)
            && !l[i + verb.len()..]
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .take(3)
                .any(|w| FIELDS.contains(&w))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destroying_and_updating() {
        assert!(destroys(
            "deletes cache entries older than a week.",
            "deletes"
        ));
        assert!(destroys("overwrites the target file.", "overwrites"));
        assert!(!destroys(
            "overwrite chosen fields of an existing account, leaving the others.",
            "overwrite"
        ));
        assert!(!destroys("the undeleted entries stay.", "delete"));
    }
}
