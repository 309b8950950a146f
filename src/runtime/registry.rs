//! [`Registry`]: the tools a runtime can run, each compiled once at load — schema validators,
//! CEL programs, the permission policy, argv templates — and the lookup stage that turns a
//! call's tool name into a [`ResolvedCall`] or an UNKNOWN_TOOL refusal naming alternatives.
//!
//! Loading fails loudly: a CEL expression that does not compile, a schema the validator rejects,
//! an unknown builtin or a permission example that does not get its expected decision stops the
//! runtime from starting (the examples run through the same evaluator as live calls).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::cel::Compiled;
use indexmap::IndexMap;

use crate::ir::{Bundle, ExecSpec, ToolDefinition, ValidationRule};
use crate::policy::{CompiledPolicy, ProtectedSet};
use crate::runtime::exec::Backend;
use crate::runtime::exec::builtin::Builtin;
use crate::runtime::exec::command::CompiledCommand;
use crate::runtime::session::ToolCall;

/// The most alternatives an UNKNOWN_TOOL result names.
const MAX_ALTERNATIVES: usize = 4;

/// A tool with everything it needs compiled.
pub struct CompiledTool {
    /// The contract.
    pub definition: ToolDefinition,
    pub(crate) parameters: jsonschema::Validator,
    pub(crate) result: Option<jsonschema::Validator>,
    pub(crate) validate: Vec<(ValidationRule, Compiled)>,
    pub(crate) policy: CompiledPolicy,
    pub(crate) reads: Vec<Compiled>,
    pub(crate) writes: Vec<Compiled>,
    pub(crate) idempotency_key: Option<Compiled>,
    pub(crate) path_params: Vec<PathParam>,
    /// The parameters holding globs (judged against the protected paths like paths).
    pub(crate) glob_params: Vec<PathParam>,
    pub(crate) backend: Backend,
    pub(crate) builtin: Option<Builtin>,
    pub(crate) command: Option<CompiledCommand>,
    pub(crate) redact: Vec<regex::Regex>,
    /// Whether anything about a call needs a CEL evaluator (saves building one per call).
    pub(crate) uses_cel: bool,
    /// A digest of the parameter schema (`blake3:` + 16 hex), journaled with every operation.
    pub(crate) schema_version: String,
}

impl std::fmt::Debug for CompiledTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledTool")
            .field("name", &self.definition.name)
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

pub(crate) use crate::policy::arguments::{PathParam, path_params};

/// A tool that cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}`: {message}")]
pub struct ToolLoadError {
    /// The tool.
    pub tool: String,
    /// What is wrong.
    pub message: String,
}

/// The lookup stage's output: a call bound to its compiled tool.
#[derive(Clone, Debug)]
pub struct ResolvedCall {
    /// The call.
    pub call: ToolCall,
    /// Its tool.
    pub tool: Arc<CompiledTool>,
}

/// An unknown (or unexposed) tool, with what the model could call instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownTool {
    /// The name the model used.
    pub name: String,
    /// Close or related tools, best first.
    pub alternatives: Vec<String>,
    /// Set when the tool exists but the session's toolset does not expose it.
    pub hidden_by_toolset: Option<String>,
}

/// Every runnable tool, by name.
#[derive(Debug, Default)]
pub struct Registry {
    tools: HashMap<String, Arc<CompiledTool>>,
    names: Vec<String>,
    /// Former names (`aliases`) and the tool each reaches.
    aliases: HashMap<String, String>,
    toolsets: IndexMap<String, Vec<String>>,
}

impl Registry {
    /// Compiles every tool of a bundle and runs its permission examples.
    pub fn build(bundle: &Bundle) -> Result<Registry, ToolLoadError> {
        let mut tools = HashMap::new();
        let mut names = Vec::new();
        let mut aliases = HashMap::new();
        // Policy tests judge paths against the project's protected set, as lint does.
        let protected = ProtectedSet::new(&bundle.project.protect)
            .map(Arc::new)
            .unwrap_or_else(|_| crate::policy::protect::default_set());
        for def in &bundle.tools {
            let compiled = compile_tool(def)?;
            run_examples(&compiled, &protected)?;
            names.push(def.name.clone());
            for alias in &def.aliases {
                aliases.insert(alias.clone(), def.name.clone());
            }
            tools.insert(def.name.clone(), Arc::new(compiled));
        }
        names.sort();
        let toolsets = bundle
            .project
            .toolsets
            .iter()
            .map(|(k, v)| (k.clone(), v.tools.clone()))
            .collect();
        Ok(Registry {
            tools,
            names,
            aliases,
            toolsets,
        })
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<&Arc<CompiledTool>> {
        self.tools.get(name)
    }

    /// Every tool name, sorted.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether a toolset of that name exists.
    pub fn has_toolset(&self, name: &str) -> bool {
        self.toolsets.contains_key(name)
    }

    /// Whether a toolset lists a tool this registry has.
    pub fn toolset_has(&self, toolset: &str, name: &str) -> bool {
        self.tools.contains_key(name)
            && self
                .toolsets
                .get(toolset)
                .is_some_and(|members| members.iter().any(|m| m == name))
    }

    /// The lookup stage: the call's tool, or UNKNOWN_TOOL with alternatives from the tools the
    /// session can see.
    pub fn lookup(
        &self,
        call: ToolCall,
        toolset: Option<&str>,
    ) -> Result<ResolvedCall, UnknownTool> {
        let members = toolset.and_then(|t| self.toolsets.get(t));
        // Every tool of the registry is visible without a (known) toolset.
        let sees = |name: &str| members.is_none_or(|m| m.iter().any(|n| n == name));
        let visible = || match members {
            Some(members) => members
                .iter()
                .map(String::as_str)
                .filter(|n| self.tools.contains_key(*n))
                .collect(),
            None => self.names.iter().map(String::as_str).collect(),
        };
        self.resolve(call, &sees, &visible, toolset)
    }

    /// The lookup stage for a session limited to a set of tools that is not a toolset of
    /// toolgate.yaml; `label` names the set in the UNKNOWN_TOOL message.
    pub fn lookup_among(
        &self,
        call: ToolCall,
        names: &[String],
        label: &str,
    ) -> Result<ResolvedCall, UnknownTool> {
        let sees = |name: &str| names.iter().any(|n| n == name);
        let visible = || {
            names
                .iter()
                .map(String::as_str)
                .filter(|n| self.tools.contains_key(*n))
                .collect()
        };
        self.resolve(call, &sees, &visible, Some(label))
    }

    /// `sees` says whether a tool of the registry is visible; `visible` lists the visible tools
    /// (only an unknown name needs the list, for its alternatives).
    fn resolve<'r>(
        &'r self,
        mut call: ToolCall,
        sees: &dyn Fn(&str) -> bool,
        visible: &dyn Fn() -> Vec<&'r str>,
        scope: Option<&str>,
    ) -> Result<ResolvedCall, UnknownTool> {
        // A former name reaches its tool wherever the tool is visible; the call then carries the
        // current name, and the pipeline records the one it used.
        if !self.tools.contains_key(&call.name)
            && let Some(current) = self.aliases.get(&call.name)
            && sees(current)
            && let Some(tool) = self.tools.get(current)
        {
            call.name.clone_from(current);
            return Ok(ResolvedCall {
                tool: tool.clone(),
                call,
            });
        }
        match self.tools.get(&call.name) {
            Some(tool) if sees(&call.name) => Ok(ResolvedCall {
                tool: tool.clone(),
                call,
            }),
            found => Err(UnknownTool {
                alternatives: self.alternatives(&call.name, &visible()),
                hidden_by_toolset: found.and(scope.map(str::to_owned)),
                name: call.name,
            }),
        }
    }

    /// Tools related to an unknown name: close spellings, and tools whose name or title shares
    /// an action family with it (`find_symbol` → search_files, grep, glob). When nothing is
    /// related, the visible tools themselves.
    fn alternatives(&self, unknown: &str, visible: &[&str]) -> Vec<String> {
        let wanted = families(&crate::words::tokens(unknown));
        let mut scored: Vec<(f64, &str)> = visible
            .iter()
            .filter_map(|name| {
                let tool = self.tools.get(*name)?;
                let def = &tool.definition;
                let similarity =
                    strsim::jaro_winkler(&unknown.to_ascii_lowercase(), &name.to_ascii_lowercase());
                let in_name = families(&crate::words::tokens(name))
                    .intersection(&wanted)
                    .count() as f64;
                let in_title = families(&crate::words::tokens(def.title.as_deref().unwrap_or("")))
                    .intersection(&wanted)
                    .count() as f64;
                let in_desc = families(&crate::words::tokens(&def.description))
                    .intersection(&wanted)
                    .count() as f64;
                let close = if similarity >= 0.8 { similarity } else { 0.0 };
                // The name or title must relate; the description only ranks.
                let score = in_name.max(0.6 * in_title) + close + 0.3 * in_desc;
                (in_name + in_title + close > 0.0).then_some((score, *name))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        let mut out: Vec<String> = scored
            .into_iter()
            .take(MAX_ALTERNATIVES)
            .map(|(_, n)| n.to_owned())
            .collect();
        if out.is_empty() {
            out = visible.iter().take(8).map(|s| (*s).to_owned()).collect();
        }
        out
    }
}

/// Action families: words that name the same kind of tool.
const FAMILIES: &[(&str, &[&str])] = &[
    (
        "search",
        &[
            "find", "search", "grep", "locate", "lookup", "query", "symbol", "symbols", "rg",
            "ripgrep", "scan", "where",
        ],
    ),
    (
        "read",
        &["read", "cat", "view", "open", "show", "display", "load"],
    ),
    (
        "list",
        &[
            "list",
            "ls",
            "dir",
            "directory",
            "directories",
            "folder",
            "folders",
            "tree",
            "browse",
            "explore",
            "recursive",
        ],
    ),
    ("write", &["write", "create", "save", "put", "overwrite"]),
    (
        "edit",
        &[
            "edit", "patch", "modify", "change", "replace", "update", "apply",
        ],
    ),
    (
        "run",
        &[
            "run", "exec", "execute", "shell", "bash", "command", "cmd", "sh", "terminal",
        ],
    ),
    ("test", &["test", "tests", "pytest", "verify"]),
    ("git", &["git", "commit", "vcs", "diff", "status"]),
    ("artifact", &["artifact", "artifacts", "log", "logs"]),
];

fn families(words: &[String]) -> BTreeSet<&'static str> {
    FAMILIES
        .iter()
        .filter(|(_, members)| words.iter().any(|w| members.contains(&w.as_str())))
        .map(|(family, _)| *family)
        .collect()
}

fn compile_tool(def: &ToolDefinition) -> Result<CompiledTool, ToolLoadError> {
    let err = |message: String| ToolLoadError {
        tool: def.name.clone(),
        message,
    };
    let cel = |what: &str, src: &str| {
        crate::cel::compile(src).map_err(|e| {
            err(format!(
                "{what} `{src}` does not compile: {}",
                e.first()
                    .map(|e| e.message.as_str())
                    .unwrap_or("syntax error")
            ))
        })
    };
    let parameters = jsonschema::draft202012::new(&def.parameters)
        .map_err(|e| err(format!("parameters are not a valid JSON Schema: {e}")))?;
    let result = match &def.result {
        Some(schema) => Some(
            jsonschema::draft202012::new(schema)
                .map_err(|e| err(format!("result is not a valid JSON Schema: {e}")))?,
        ),
        None => None,
    };
    let mut validate = Vec::new();
    for rule in &def.validate {
        validate.push((
            rule.clone(),
            cel(&format!("validate rule `{}`", rule.id), &rule.expr)?,
        ));
    }
    let policy = CompiledPolicy::compile(&def.permissions).map_err(|e| err(e.to_string()))?;
    let reads = def
        .resources
        .reads
        .iter()
        .map(|r| cel("resources.reads", r))
        .collect::<Result<Vec<_>, _>>()?;
    let writes = def
        .resources
        .writes
        .iter()
        .map(|r| cel("resources.writes", r))
        .collect::<Result<Vec<_>, _>>()?;
    let idempotency_key = match &def.idempotency_key {
        Some(k) => Some(cel("idempotency key", k)?),
        None => None,
    };
    let backend = Backend::of(&def.exec);
    let builtin = match &def.exec {
        ExecSpec::Builtin { name } => {
            Some(Builtin::parse(name).ok_or_else(|| err(format!("unknown builtin `{name}`")))?)
        }
        _ => None,
    };
    let command = match &def.exec {
        ExecSpec::Command(spec) => Some(CompiledCommand::compile(spec).map_err(err)?),
        _ => None,
    };
    let redact = def
        .output
        .redact
        .iter()
        .map(|r| {
            crate::ir::tool::compile_redaction(r)
                .map_err(|e| err(format!("redact pattern `{r}` is invalid: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let uses_cel = !validate.is_empty()
        || !def.permissions.rules.is_empty()
        || !reads.is_empty()
        || !writes.is_empty()
        || idempotency_key.is_some();
    let schema_digest =
        blake3::hash(crate::runtime::validate::canonical_json(&def.parameters).as_bytes());
    Ok(CompiledTool {
        schema_version: format!("blake3:{}", &schema_digest.to_hex()[..16]),
        path_params: path_params(&def.parameters),
        glob_params: crate::policy::arguments::glob_params(&def.parameters, &def.exec),
        definition: def.clone(),
        parameters,
        result,
        validate,
        policy,
        reads,
        writes,
        idempotency_key,
        backend,
        builtin,
        command,
        redact,
        uses_cel,
    })
}

/// Runs the tool's permission examples as `lint` does ([`crate::policy::examples`]): the
/// same function and settings, so a bundle the linter passed always loads.
fn run_examples(tool: &CompiledTool, protected: &Arc<ProtectedSet>) -> Result<(), ToolLoadError> {
    use crate::policy::examples::{ExampleOutcome, run_example};
    let def = &tool.definition;
    for (i, ex) in def.permissions.examples.iter().enumerate() {
        let fail = |message: String| ToolLoadError {
            tool: def.name.clone(),
            message,
        };
        match run_example(
            def,
            &tool.policy,
            protected.clone(),
            Some(&tool.parameters),
            ex,
        ) {
            ExampleOutcome::InvalidArguments(errs) => {
                return Err(fail(format!(
                    "permission example {} has arguments that do not match `parameters`: {}",
                    i + 1,
                    errs.join("; ")
                )));
            }
            ExampleOutcome::Failed(m) => {
                return Err(fail(format!(
                    "permission example {} fails to evaluate: {m}",
                    i + 1
                )));
            }
            ExampleOutcome::Decided(got) if got.decision != ex.expect => {
                return Err(fail(format!(
                    "permission example {} expects `{}` but the rules decide `{}`",
                    i + 1,
                    ex.expect,
                    got.decision
                )));
            }
            ExampleOutcome::Decided(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_families() {
        assert_eq!(
            families(&crate::words::tokens("find_symbol")),
            BTreeSet::from(["search"])
        );
        assert_eq!(
            families(&crate::words::tokens("read_directory_recursive")),
            BTreeSet::from(["list", "read"])
        );
    }
}
