//! TGS002 free-form-exec-parameter.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::words::split_identifier;
use crate::lint::rules::schema::exec_shapes::{
    MAX_NESTING, code_payload, language_selector, nested_executable,
};
use crate::lint::rules::schema::shape;
use crate::rule::Rule;
use crate::spec::resolve::CelRole;
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::FreeFormExecParameter,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameters that take a shell command, script, code or SQL as free text without a sandbox, timeout and permission rule to compensate.",
    explanation: r#"Smell: free-form exec.

## What it does
Finds string parameters (or lists of strings) that carry something to execute: named `command`,
`cmd`, `script`, `shell`, `bash`, `sql` or `eval`; named `code`, `query`, `expression`,
`function` and described as shell, Python, JavaScript or SQL; named for a language and a payload
(`sql_query`, `python_code`, `bash_script`); described as code to run ("shell command", "valid
python", "code to evaluate"); or the one free string parameter of a tool whose description says it
runs code ("A Python shell", "Execute a SQL query"); a free string named `code`, `source`,
`script`, `snippet`, `program` or `body` beside an enum whose values name languages (`language:
[bash, python, node]`); and any of these nested in an object parameter or in the items of an
array of objects (a list of browser steps one of which carries a `script`), reported on the
top-level parameter with the path. A plain argv array or a program chosen from an enum is
structured, not free-form. Search patterns, URLs, keys to press and
natural-language queries are not code. In a toolgate spec it then checks the
compensations such a parameter needs: a `sandbox` profile, an explicit `timeout`, and a permission
rule whose expression reads the parameter. It reports what is missing (and, as detail, a missing
`maxLength`). An imported tool list cannot declare any of these, so there it reports that the
contract cannot express them.

## Why is this bad?
`bash(command: str)` is as powerful as the machine: schema validation accepts anything, the effect
cannot be narrowed, and the scheduler cannot know what the call touches. Such a tool is governable
only if the runtime confines it (sandbox), bounds it (timeout, output limit) and decides per call
(a permission rule over the command).

## Example
```yaml
name: run_shell
description: Run a shell command in the workspace and return its output.
effect: process_execution
parameters:
  type: object
  properties:
    command: {type: string, description: The shell command to run.}
  required: [command]
exec: {command: {argv: [sh, -c, "{args.command}"]}}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    command: {type: string, maxLength: 4096, description: The shell command to run.}
  required: [command]
sandbox: workspace-write
timeout: 60s
permissions:
  rules:
    - id: git-read-only
      allow: "args.command.startsWith('git status') || args.command.startsWith('git diff')"
    - id: everything-else
      ask: "true"
```
"#,
};

/// Names that always mean "something to execute".
const EXEC_NAMES: &[&str] = &[
    "bash", "cmd", "cmdline", "command", "commands", "eval", "script", "scripts", "sql",
];
/// Names that mean it when the description says so.
const MAYBE_EXEC_NAMES: &[&str] = &[
    "code",
    "expr",
    "expression",
    "function",
    "program",
    "query",
    "shell",
    "snippet",
    "source",
    "statement",
];
/// Description words that make a maybe-name executable.
const EXEC_WORDS: &[&str] = &[
    "bash",
    "cypher",
    "execute",
    "executed",
    "graphql",
    "javascript",
    "js",
    "python",
    "run",
    "script",
    "shell",
    "sparql",
    "sql",
    "typescript",
];
/// Description phrases that make any string parameter executable.
const EXEC_PHRASES: &[&str] = &[
    "bash command",
    "shell command",
    "shell script",
    "terminal command",
    "python code",
    "javascript code",
    "javascript function",
    "sql query",
    "sql statement",
    "sql statements",
    "python command",
    "python commands",
    "valid python",
    "python expression",
    "javascript expression",
    "js expression",
    "js code",
    "typescript code",
    "shell commands",
    "bash commands",
    "terminal commands",
    "cypher query",
    "graphql query",
    "code to evaluate",
    "code to execute",
    "code to run",
    "command to execute",
    "command to run",
    "script to execute",
    "script to run",
];
/// Names that talk about a command rather than carry one.
const NOT_PAYLOAD: &[&str] = &[
    "description",
    "explanation",
    "id",
    "justification",
    "message",
    "name",
    "note",
    "reason",
    "summary",
    "title",
];

/// Reports executable free-text parameters among the top-level properties.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(props) = tool.parameters().and_then(|p| p.get("properties")) else {
        return;
    };
    // A tool whose description says it runs code, with one free string parameter: that parameter
    // is the code ("A Python shell. Input should be a valid python command.").
    let free_strings: Vec<&str> = props
        .entries()
        .iter()
        .filter(|(_, n)| {
            shape::single_type(n) == Some("string") && !shape::has_any(n, &["enum", "const"])
        })
        .map(|(k, _)| k.name.as_str())
        .collect();
    let by_tool = match free_strings.as_slice() {
        [only] => tool_runs_code(tool.description()).map(|kind| (*only, kind)),
        _ => None,
    };
    let language = language_selector(props);
    for (key, node) in props.entries() {
        let found = executable(&key.name, node)
            .or_else(|| {
                by_tool
                    .filter(|(name, _)| *name == key.name)
                    .map(|(_, kind)| (kind, node))
            })
            .or_else(|| {
                language
                    .filter(|_| code_payload(&key.name, node))
                    .map(|_| ("code", node))
            });
        let found = found
            .map(|(what, strings)| (what.to_owned(), strings))
            .or_else(|| {
                nested_executable(node, MAX_NESTING).map(|(path, what, strings)| {
                    (format!("{what} (in `{}{path}`)", key.name), strings)
                })
            });
        let Some((what, strings)) = found else {
            continue;
        };
        let what = what.as_str();
        let bounded = shape::has_any(strings, &["maxLength"]);
        let length = if bounded { "" } else { " (nor a `maxLength`)" };
        if !tool.is_spec() {
            ctx.report(
                tool.span(key.range),
                format!(
                    "`{}` takes {what} as free text, and a tool list cannot declare the sandbox, timeout and permission rule that must compensate{length}",
                    key.name
                ),
            )
            .help(format!(
                "run `{}` through a toolgate contract with `sandbox`, `timeout` and a permission rule over `args.{}`, or replace the free text with an enum of allowed operations",
                tool.name, key.name
            ));
            continue;
        }
        let spec = &tool.spec.value;
        let example = match what {
            "a shell command" => format!("`ask: \"!args.{}.startsWith('git ')\"`", key.name),
            "a query" => format!("`ask: \"!args.{}.startsWith('SELECT ')\"`", key.name),
            _ => "`ask: \"true\"`".to_owned(),
        };
        let mut missing = Vec::new();
        let mut fixes = Vec::new();
        if spec.sandbox.is_none() {
            missing.push("no `sandbox`".to_owned());
            fixes.push("`sandbox: <profile>`".to_owned());
        }
        if spec.timeout.is_none() {
            missing.push("no `timeout`".to_owned());
            fixes.push("`timeout: 60s`".to_owned());
        }
        let governed = tool.resolved.cel.iter().any(|site| {
            matches!(site.role, CelRole::Permission(..))
                && site
                    .analysis
                    .as_ref()
                    .is_some_and(|a| a.arg_paths.iter().any(|p| p.first() == Some(&key.name)))
        });
        if !governed {
            missing.push(format!("no permission rule that reads `args.{}`", key.name));
            fixes.push(format!(
                "a permission rule over `args.{}` such as {example}",
                key.name
            ));
        }
        if missing.is_empty() {
            continue;
        }
        ctx.report(
            tool.span(key.range),
            format!(
                "`{}` takes {what} as free text, but `{}` has {}{length}",
                key.name,
                tool.name,
                join(&missing)
            ),
        )
        .help(format!("add {}", join(&fixes)));
    }
}

/// What a tool runs, when its description says it executes code: "Execute a SQL query", "A
/// Python shell", "Run shell commands".
fn tool_runs_code(desc: &str) -> Option<&'static str> {
    let l = desc.to_ascii_lowercase();
    if EXEC_PHRASES.iter().any(|p| l.contains(p))
        || [
            "python shell",
            "python repl",
            "execute python",
            "run python",
            "execute javascript",
            "run javascript",
        ]
        .iter()
        .any(|p| l.contains(p))
    {
        let kind = if ["sql", "cypher", "graphql", "sparql"]
            .iter()
            .any(|w| crate::lint::rules::schema::prose::contains_words(&l, w))
        {
            "a query"
        } else if ["python", "javascript", "typescript", "code"]
            .iter()
            .any(|w| crate::lint::rules::schema::prose::contains_words(&l, w))
        {
            "code"
        } else {
            "a shell command"
        };
        return Some(kind);
    }
    None
}

/// The items of an array of strings.
fn string_items(node: &Node) -> Option<&Node> {
    let items = shape::non_null(node).get("items")?;
    (shape::single_type(items) == Some("string")).then_some(items)
}

/// What an executable parameter takes, and the string schema holding its constraints; `None`
/// for a parameter that is not one.
pub(crate) fn executable<'n>(name: &str, node: &'n Node) -> Option<(&'static str, &'n Node)> {
    let strings = match shape::single_type(node) {
        Some("string") => node,
        Some("array") => string_items(node)?,
        Some(_) => return None,
        // `anyOf: [{type: string}, {type: array, items: {type: string}}]`: one command or several.
        None => ["anyOf", "oneOf"]
            .iter()
            .filter_map(|k| node.get(k))
            .flat_map(Node::items)
            .find_map(|b| match shape::single_type(b) {
                Some("string") => Some(b),
                Some("array") => string_items(b),
                _ => None,
            })?,
    };
    if shape::has_any(strings, &["enum", "const", "pattern"]) {
        return None;
    }
    let words = split_identifier(name);
    let last = words.last()?.as_str();
    if NOT_PAYLOAD.contains(&last) {
        return None;
    }
    let desc = node
        .get("description")
        .and_then(Node::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    let desc_words = crate::lint::rules::naming::words::tokens(&desc);
    let says = |w: &[&str]| desc_words.iter().any(|d| w.contains(&d.as_str()));
    let kind = if says(&["sql", "graphql", "cypher", "sparql"]) {
        "a query"
    } else if says(&["python", "javascript", "js", "typescript", "code"])
        || matches!(last, "code" | "function" | "program" | "snippet")
    {
        "code"
    } else if matches!(last, "expression" | "expr" | "eval") {
        "an expression"
    } else if matches!(last, "script" | "scripts") {
        "a script"
    } else {
        "a shell command"
    };
    if EXEC_NAMES.contains(&last) {
        return Some((if last == "sql" { "a query" } else { kind }, strings));
    }
    // `sql_query`, `python_code`, `bash_script`: a language before a payload word.
    if words.len() > 1
        && matches!(
            last,
            "query"
                | "code"
                | "script"
                | "statement"
                | "snippet"
                | "source"
                | "expression"
                | "input"
        )
        && words[..words.len() - 1].iter().any(|w| {
            matches!(
                w.as_str(),
                "sql"
                    | "python"
                    | "py"
                    | "javascript"
                    | "js"
                    | "typescript"
                    | "ts"
                    | "bash"
                    | "shell"
                    | "sh"
                    | "cypher"
                    | "graphql"
                    | "sparql"
                    | "powershell"
            )
        })
    {
        return Some((
            if words
                .iter()
                .any(|w| matches!(w.as_str(), "sql" | "cypher" | "graphql" | "sparql"))
            {
                "a query"
            } else {
                kind
            },
            strings,
        ));
    }
    if MAYBE_EXEC_NAMES.contains(&last) {
        let needs: &[&str] = match last {
            "query" => &["sql", "graphql", "cypher", "sparql"],
            "shell" => &["command", "commands", "script"],
            _ => EXEC_WORDS,
        };
        // `function: "() => { /* code */ }"` is code; a `code` is not code because it says so.
        let code_shaped = matches!(
            last,
            "function" | "program" | "snippet" | "expression" | "expr" | "source" | "statement"
        );
        if says(needs) || (code_shaped && says(&["code"])) {
            return Some((kind, strings));
        }
    }
    EXEC_PHRASES
        .iter()
        .any(|p| desc.contains(p))
        .then_some((kind, strings))
}

fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::rules::schema::test_node as node;

    fn kind(name: &str, schema: &str) -> Option<&'static str> {
        let n = node(schema);
        executable(name, &n).map(|(k, _)| k)
    }

    #[test]
    fn executable_parameters() {
        assert_eq!(kind("command", "{type: string}"), Some("a shell command"));
        assert_eq!(
            kind("shell_command", "{type: string}"),
            Some("a shell command")
        );
        assert_eq!(
            kind("commands", "{type: array, items: {type: string}}"),
            Some("a shell command")
        );
        assert_eq!(
            kind(
                "code",
                "{type: string, description: The Python code to execute.}"
            ),
            Some("code")
        );
        assert_eq!(
            kind(
                "commands",
                "{anyOf: [{type: string}, {type: array, items: {type: string}}], description: List of shell commands to run.}"
            ),
            Some("a shell command")
        );
        assert_eq!(
            kind(
                "query",
                "{type: string, description: A detailed and correct SQL query.}"
            ),
            Some("a query")
        );
        assert_eq!(
            kind(
                "input",
                "{type: string, description: The bash command to run.}"
            ),
            Some("a shell command")
        );
        assert_eq!(kind("sql_query", "{type: string}"), Some("a query"));
        assert_eq!(kind("python_code", "{type: string}"), Some("code"));
        assert_eq!(
            kind(
                "text",
                "{type: string, description: Input should be a valid python command.}"
            ),
            Some("code")
        );
    }

    #[test]
    fn other_parameters() {
        assert_eq!(
            kind("command", "{type: string, enum: [view, create]}"),
            None
        );
        assert_eq!(
            kind(
                "query",
                "{type: string, description: The natural language search query.}"
            ),
            None
        );
        assert_eq!(
            kind("code", "{type: string, description: ISO country code.}"),
            None
        );
        assert_eq!(kind("command_id", "{type: string}"), None);
        assert_eq!(kind("sql_dialect", "{type: string}"), None);
        assert_eq!(
            kind(
                "justification",
                "{type: string, description: Why the shell command needs approval.}"
            ),
            None
        );
        assert_eq!(kind("path", "{type: string}"), None);
        assert_eq!(
            kind(
                "query",
                "{type: string, description: Search query for code search.}"
            ),
            None
        );
        assert_eq!(
            kind(
                "shell",
                "{type: string, description: Shell binary to launch.}"
            ),
            None
        );
        assert_eq!(
            kind(
                "function",
                "{type: string, description: \"() => { /* code */ }\"}"
            ),
            Some("code")
        );
    }

    #[test]
    fn tools_that_run_code() {
        assert_eq!(
            tool_runs_code("A Python shell. Use this to execute python commands."),
            Some("code")
        );
        assert_eq!(
            tool_runs_code("Execute a SQL query against the warehouse."),
            Some("a query")
        );
        assert_eq!(tool_runs_code("Search the web for a query."), None);
    }

    #[test]
    fn joins() {
        assert_eq!(join(&["a".into(), "b".into(), "c".into()]), "a, b, and c");
    }
}
