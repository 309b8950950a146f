//! CEL for tool contracts: compiling, static checking, and evaluation with toolgate's functions.
//!
//! Every expression in a spec is compiled once at load ([`compile`]), checked against the tool's
//! parameter schema ([`check::check`]), and evaluated per call through an [`Evaluator`], under
//! the runtime cost budget of [`budget`].

pub mod budget;
pub mod check;
pub mod functions;
pub mod guard;
pub mod schema;
pub mod shell;
pub mod value;

use std::sync::{Arc, OnceLock};

use cel::{Context, Env, Program, Value};

pub use budget::{Budget, MAX_EVALUATION_BYTES, MAX_EVALUATION_STEPS, Spent};

pub use check::{Analysis, CelType, Problem, ProblemKind, Slot};
pub use guard::{MAX_CHAIN_DEPTH, MAX_EXPRESSION_BYTES, MAX_EXPRESSION_NESTING, guard};

/// Default ceiling of the cost estimate of one expression (evaluation steps).
pub const DEFAULT_COST_BUDGET: u64 = 100_000;

/// The shared CEL environment: the standard library plus the strings extension.
pub fn environment() -> Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // The strings extension only adds overloads; a failure would be a cel crate bug, and
        // expressions that use those functions then fail at evaluation with a clear error.
        let _ = env.add_extension(cel::extensions::strings);
        Arc::new(env)
    })
    .clone()
}

/// A syntax error in an expression, at a 1-based line and column of the expression text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line within the expression.
    pub line: usize,
    /// 1-based column (characters).
    pub column: usize,
    /// The parser's message.
    pub message: String,
}

/// A compiled expression: the program as written, which analysis reads (it derefs to it), and
/// the copy that charges the runtime budget, which the [`Evaluator`] runs.
#[derive(Debug)]
pub struct Compiled {
    program: Program,
    /// `None` when the expression has no comprehension: then it runs as written.
    budgeted: Option<cel::IdedExpr>,
}

impl Compiled {
    /// Wraps a program compiled elsewhere, adding its budgeted copy.
    pub fn new(program: Program) -> Self {
        let budgeted = budget::budgeted(program.expression());
        Compiled { program, budgeted }
    }

    /// The program as written.
    pub fn program(&self) -> &Program {
        &self.program
    }
}

impl std::ops::Deref for Compiled {
    type Target = Program;

    fn deref(&self) -> &Program {
        &self.program
    }
}

/// Parses an expression.
pub fn compile(source: &str) -> Result<Compiled, Vec<SyntaxError>> {
    guard(source).map_err(|e| vec![e])?;
    let program = environment().compile(source).map_err(|e| {
        e.errors
            .iter()
            .map(|err| SyntaxError {
                line: usize::try_from(err.pos.0).unwrap_or(1).max(1),
                column: usize::try_from(err.pos.1).unwrap_or(1).max(1),
                message: clean_message(&err.msg),
            })
            .collect::<Vec<_>>()
    })?;
    Ok(Compiled::new(program))
}

fn clean_message(msg: &str) -> String {
    let msg = msg.trim_start_matches("Syntax error: ");
    if msg.starts_with("mismatched input '<EOF>'") {
        return "the expression ends too early: an operand or closing bracket is missing"
            .to_owned();
    }
    if let Some(tok) = msg.strip_prefix("token recognition error at: ") {
        return format!("unexpected character {}", tok.trim_end());
    }
    if let Some(rest) = msg.strip_prefix("mismatched input ") {
        let tok = rest.split(" expecting").next().unwrap_or(rest);
        return format!("unexpected {tok}");
    }
    msg.to_owned()
}

/// What an expression can see besides `args`.
#[derive(Clone, Debug)]
pub struct Bindings<'a> {
    /// The validated arguments.
    pub args: &'a serde_json::Value,
    /// The tool's name.
    pub tool_name: &'a str,
    /// The tool's effect.
    pub tool_effect: &'a str,
    /// The tool's version.
    pub tool_version: u32,
    /// The context name (`interactive`, `ci`, ...).
    pub context: &'a str,
    /// The workspace root.
    pub workspace: &'a str,
}

/// Evaluates compiled expressions against one call's bindings.
pub struct Evaluator<'a> {
    ctx: Context<'a, 'a>,
    /// The limits of each evaluation.
    budget: Budget,
}

/// toolgate's functions registered once, for many calls to evaluate in: a call's
/// [`Evaluator::in_scope`] binds its variables in a scope of its own over it, so that a call
/// does not register every function again.
pub struct Functions {
    ctx: Context<'static, 'static>,
}

impl std::fmt::Debug for Functions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Functions").finish_non_exhaustive()
    }
}

impl Functions {
    /// The functions, with `path.protected` asking `protected` (the project's set, or the
    /// runtime's workspace) instead of the default set when one is given.
    pub fn new(
        protected: Option<Arc<dyn crate::policy::ProtectedPaths>>,
    ) -> Result<Self, EvalError> {
        let mut ctx = Context::with_env(environment());
        functions::register(&mut ctx)
            .map_err(|e| EvalError::Failed(format!("registering functions: {e}")))?;
        if let Some(p) = protected {
            functions::register_protected(&mut ctx, p)
                .map_err(|e| EvalError::Failed(format!("registering path.protected: {e}")))?;
        }
        Ok(Functions { ctx })
    }

    /// The functions with the default protected set, built once per process.
    pub fn shared() -> Result<&'static Functions, EvalError> {
        static SHARED: OnceLock<Result<Functions, EvalError>> = OnceLock::new();
        SHARED
            .get_or_init(|| Functions::new(None))
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Binds a call's variables: `args`, `tool`, `context`, `workspace`.
fn bind(ctx: &mut Context<'_, '_>, b: &Bindings<'_>) {
    ctx.add_variable_from_value("args", value::json_to_cel(b.args));
    let tool = Value::Map(cel::objects::Map {
        map: Arc::new(
            [
                ("name", Value::String(Arc::new(b.tool_name.to_owned()))),
                ("effect", Value::String(Arc::new(b.tool_effect.to_owned()))),
                ("version", Value::Int(i64::from(b.tool_version))),
            ]
            .into_iter()
            .map(|(k, v)| (cel::objects::Key::String(Arc::new(k.to_owned())), v))
            .collect(),
        ),
    });
    ctx.add_variable_from_value("tool", tool);
    ctx.add_variable_from_value("context", Value::String(Arc::new(b.context.to_owned())));
    ctx.add_variable_from_value("workspace", Value::String(Arc::new(b.workspace.to_owned())));
    ctx.add_variable_from_value("principal", value::json_to_cel(&anonymous_principal()));
}

/// An expression that failed at evaluation time.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// The expression failed (a missing key, a wrong type, a function's error).
    #[error("{0}")]
    Failed(String),
    /// The evaluation was cut off by its budget ([`Budget`]): the arguments are too large for
    /// the expression to be evaluated over them.
    #[error("its evaluation was stopped: {0}")]
    BudgetExceeded(Spent),
}

impl EvalError {
    /// Whether the budget, not the expression, stopped the evaluation.
    pub fn is_budget(&self) -> bool {
        matches!(self, EvalError::BudgetExceeded(_))
    }
}

impl<'a> Evaluator<'a> {
    /// Binds the variables and toolgate's functions.
    pub fn new(b: &Bindings<'_>) -> Result<Self, EvalError> {
        let mut ctx = Context::with_env(environment());
        functions::register(&mut ctx)
            .map_err(|e| EvalError::Failed(format!("registering functions: {e}")))?;
        bind(&mut ctx, b);
        Ok(Evaluator {
            ctx,
            budget: Budget::default(),
        })
    }

    /// Binds the variables in a scope of their own over functions registered once.
    pub fn in_scope(functions: &'a Functions, b: &Bindings<'_>) -> Self {
        let mut ctx = functions.ctx.new_inner_scope();
        bind(&mut ctx, b);
        Evaluator {
            ctx,
            budget: Budget::default(),
        }
    }

    /// Stops every evaluation at `deadline` (the call's timeout) as well as at the budget.
    pub fn with_deadline(mut self, deadline: std::time::Instant) -> Self {
        self.budget.deadline = Some(deadline);
        self
    }

    /// Evaluates under `budget` instead of the default one.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Shows the expressions who calls (`principal`) instead of the anonymous principal.
    pub fn with_principal(mut self, principal: &serde_json::Value) -> Self {
        self.ctx
            .add_variable_from_value("principal", value::json_to_cel(principal));
        self
    }

    /// Makes `path.protected` ask `protected` (the project's set, or the runtime's workspace)
    /// instead of the default set.
    pub fn with_protected(
        mut self,
        protected: Arc<dyn crate::policy::ProtectedPaths>,
    ) -> Result<Self, EvalError> {
        functions::register_protected(&mut self.ctx, protected)
            .map_err(|e| EvalError::Failed(format!("registering path.protected: {e}")))?;
        Ok(self)
    }

    /// Evaluates to any value, within the budget.
    pub fn value(&self, p: &Compiled) -> Result<Value, EvalError> {
        let Some(budgeted) = &p.budgeted else {
            return p
                .execute(&self.ctx)
                .map_err(|e| EvalError::Failed(describe(&e)));
        };
        let (out, spent) = budget::metered(self.budget, || Value::resolve(budgeted, &self.ctx));
        // Checked before the result: `||` can absorb the charge's error and still answer,
        // and an answer computed from a cut-off side is no answer.
        if let Some(spent) = spent {
            return Err(EvalError::BudgetExceeded(spent));
        }
        out.map_err(|e| EvalError::Failed(describe(&e)))
    }

    /// Evaluates a condition.
    pub fn condition(&self, p: &Compiled) -> Result<bool, EvalError> {
        match self.value(p)? {
            Value::Bool(b) => Ok(b),
            other => Err(EvalError::Failed(format!(
                "expected bool, got {}",
                type_name(&other)
            ))),
        }
    }

    /// Evaluates resource keys: a string or a list of strings.
    pub fn strings(&self, p: &Compiled) -> Result<Vec<String>, EvalError> {
        match self.value(p)? {
            Value::String(s) => Ok(vec![s.to_string()]),
            Value::List(items) => items
                .iter()
                .map(|i| match i {
                    Value::String(s) => Ok(s.to_string()),
                    other => Err(EvalError::Failed(format!(
                        "expected a list of strings, found {}",
                        type_name(other)
                    ))),
                })
                .collect(),
            other => Err(EvalError::Failed(format!(
                "expected a string or a list of strings, got {}",
                type_name(&other)
            ))),
        }
    }

    /// Evaluates to text (template placeholders): strings as they are, other values as JSON.
    pub fn text(&self, p: &Compiled) -> Result<String, EvalError> {
        Ok(match self.value(p)? {
            Value::String(s) => s.to_string(),
            Value::Int(i) => i.to_string(),
            Value::UInt(u) => u.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Null => String::new(),
            other => value::cel_to_json(&other).to_string(),
        })
    }
}

/// A readable message for an evaluation error.
fn describe(e: &cel::ExecutionError) -> String {
    match e {
        cel::ExecutionError::NoSuchKey(k) => {
            format!("no such key `{k}` (use has(...) for optional fields)")
        }
        other => other.to_string(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Function(..) => "function",
        Value::Int(_) => "int",
        Value::UInt(_) => "uint",
        Value::Float(_) => "double",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::Bool(_) => "bool",
        Value::Null => "null",
        _ => "value",
    }
}

/// CEL's `principal` when nobody authenticated: every field present, empty.
pub fn anonymous_principal() -> serde_json::Value {
    serde_json::json!({
        "authenticated": false,
        "issuer": "",
        "subject": "",
        "id": "",
        "scopes": [],
        "client": "",
        "client_name": "",
        "claims": {},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_have_positions() {
        let e = compile("args.x &&& (").unwrap_err();
        assert_eq!(e[0].line, 1);
        assert_eq!(e[0].column, 10);
    }

    #[test]
    fn evaluates_with_toolgate_functions() {
        let args = serde_json::json!({"path": "config/.env", "n": 3, "items": [1, 2]});
        let b = Bindings {
            args: &args,
            tool_name: "read_file",
            tool_effect: "read_only",
            tool_version: 1,
            context: "ci",
            workspace: "/w",
        };
        let ev = Evaluator::new(&b).unwrap();
        let t = |s: &str| ev.condition(&compile(s).unwrap()).unwrap();
        assert!(t("path.matches_glob(args.path, ['**/.env'])"));
        assert!(t("args.items.map(x, x * 2) == [2, 4]"));
        assert!(t("context == 'ci' && tool.name == 'read_file'"));
        assert!(t("size(args.items) + 1 == 3"));
        assert_eq!(
            ev.strings(&compile("['file:' + args.path]").unwrap())
                .unwrap(),
            vec!["file:config/.env"]
        );
        assert!(ev.condition(&compile("args.missing").unwrap()).is_err());
    }

    #[test]
    fn principal_is_anonymous_until_given() {
        let args = serde_json::json!({});
        let b = Bindings {
            args: &args,
            tool_name: "t",
            tool_effect: "pure",
            tool_version: 1,
            context: "ci",
            workspace: "/",
        };
        let team = "has(principal.claims.team) && principal.claims.team == 'core'";
        let anonymous = Evaluator::new(&b).unwrap();
        let t = |ev: &Evaluator<'_>, s: &str| ev.condition(&compile(s).unwrap()).unwrap();
        assert!(t(
            &anonymous,
            "!principal.authenticated && principal.subject == ''"
        ));
        assert!(!t(&anonymous, "'tools:write' in principal.scopes"));
        assert!(!t(&anonymous, team));
        let alice = Evaluator::new(&b)
            .unwrap()
            .with_principal(&serde_json::json!({
                "authenticated": true, "subject": "alice", "scopes": ["tools:write"],
                "claims": {"team": "core"}
            }));
        assert!(t(
            &alice,
            "principal.authenticated && principal.subject == 'alice'"
        ));
        assert!(t(&alice, "'tools:write' in principal.scopes"));
        assert!(t(&alice, team));
    }

    #[test]
    fn every_catalogued_function_exists() {
        // Each catalogued non-operator function must be callable (or fail on argument types,
        // never as an unknown function) — keeps the checker's list and the runtime in step.
        let args = serde_json::json!({});
        let b = Bindings {
            args: &args,
            tool_name: "t",
            tool_effect: "pure",
            tool_version: 1,
            context: "ci",
            workspace: "/",
        };
        let ev = Evaluator::new(&b).unwrap();
        for f in functions::FUNCTIONS
            .iter()
            .filter(|f| !f.name.starts_with('@') && (!f.name.contains('_') || f.name.contains('.')))
        {
            let src = match f.name.split_once('.') {
                Some((ns, name)) => format!("{ns}.{name}('a')"),
                None => format!("'a'.{}()", f.name),
            };
            let src2 = format!("{}('a')", f.name);
            let r1 = ev.value(&compile(&src).unwrap());
            let r2 = ev.value(&compile(&src2).unwrap());
            let unknown = |r: &Result<Value, EvalError>| matches!(r, Err(EvalError::Failed(m)) if m.contains("Undeclared reference") || m.contains("undeclared"));
            assert!(
                !(unknown(&r1) && unknown(&r2)),
                "{} is not provided: {r1:?} {r2:?}",
                f.name
            );
        }
    }
}
