//! The functions toolgate adds to CEL, and the catalogue of every function a spec may call
//! (with result types, for the static checker).
//!
//! Path helpers are lexical: they never touch the file system, so a policy's decision depends
//! only on the call. The runtime enforces the same boundary again at open time. The one
//! exception is `path.protected(p)`, which asks the project's protected set
//! ([`ProtectedPaths`]): lexically at lint and policy-test time, and through the workspace
//! (symbolic links followed) at run time. The `shell.*` functions read a command line as
//! [`crate::cel::shell`] describes.

use std::path::{Component, Path};
use std::sync::Arc;

use cel::{Context, ExecutionError, Value};

use crate::cel::check::CelType;
use crate::cel::shell::CommandLine;
use crate::policy::protect::ProtectedPaths;

/// Registers toolgate's functions on an evaluation context, `path.protected` over the default
/// protected set (see [`register_protected`] for the project's).
pub fn register(ctx: &mut Context<'_, '_>) -> Result<(), cel::DeclarationError> {
    register_protected(ctx, crate::policy::protect::default_set())?;
    crate::cel::budget::register(ctx)?;
    ctx.add_function("path.within_workspace", |p: Arc<String>| {
        within_workspace(&p)
    })?;
    ctx.add_function("path.is_absolute", |p: Arc<String>| p.starts_with('/'))?;
    ctx.add_function("path.normalize", |p: Arc<String>| {
        normalize(&p).unwrap_or_else(|| p.to_string())
    })?;
    ctx.add_function("path.base", |p: Arc<String>| {
        Path::new(p.as_str())
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    })?;
    ctx.add_function("path.dir", |p: Arc<String>| {
        Path::new(p.as_str())
            .parent()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    })?;
    ctx.add_function("path.ext", |p: Arc<String>| {
        Path::new(p.as_str())
            .extension()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    })?;
    ctx.add_function(
        "path.matches_glob",
        |p: Arc<String>, globs: Arc<Vec<Value>>| -> Result<bool, ExecutionError> {
            let patterns: Vec<&str> = globs
                .iter()
                .filter_map(|g| match g {
                    Value::String(s) => Some(s.as_str()),
                    _ => None,
                })
                .collect();
            matches_glob(&p, &patterns)
                .map_err(|e| ExecutionError::function_error("path.matches_glob", e))
        },
    )?;
    ctx.add_function("path.in_git_dir", |p: Arc<String>| in_git_dir(&p))?;
    // A line the reader refuses (nested too deep) fails the call: a rule over it cannot
    // be evaluated, and the permission stage refuses a call whose rule fails.
    ctx.add_function(
        "shell.words",
        |s: Arc<String>| -> Result<Value, ExecutionError> {
            shell_words(&s)
                .map(strings)
                .map_err(|e| ExecutionError::function_error("shell.words", e.to_string()))
        },
    )?;
    ctx.add_function(
        "shell.commands",
        |s: Arc<String>| -> Result<Value, ExecutionError> {
            CommandLine::parse(&s)
                .map(|c| strings(c.programs()))
                .map_err(|e| ExecutionError::function_error("shell.commands", e.to_string()))
        },
    )?;
    ctx.add_function(
        "shell.is_simple",
        |s: Arc<String>| -> Result<bool, ExecutionError> {
            CommandLine::parse(&s)
                .map(|c| c.is_simple())
                .map_err(|e| ExecutionError::function_error("shell.is_simple", e.to_string()))
        },
    )?;
    Ok(())
}

/// Registers `path.protected` over a judge of protected paths (replacing an earlier one).
pub fn register_protected(
    ctx: &mut Context<'_, '_>,
    protected: Arc<dyn ProtectedPaths>,
) -> Result<(), cel::DeclarationError> {
    ctx.add_function("path.protected", move |p: Arc<String>| {
        protected.protects(&p)
    })
}

fn strings(items: Vec<String>) -> Value {
    Value::List(Arc::new(
        items
            .into_iter()
            .map(|w| Value::String(Arc::new(w)))
            .collect(),
    ))
}

/// Whether a path is a `.git` folder or lies inside one, at any depth (a nested repository's
/// too), ignoring letter case: repository internals, whose hooks and configuration run code
/// outside any sandbox the next time a person uses git.
pub fn in_git_dir(p: &str) -> bool {
    p.split(['/', '\\']).any(|c| c.eq_ignore_ascii_case(".git"))
}

/// Lexically normalizes a relative path: drops `.`, resolves `..` against earlier components.
/// `None` when the path climbs above its start or is absolute.
pub fn normalize(p: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in Path::new(p).components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    })
}

/// Whether a path, taken relative to the workspace root, stays inside it (lexically).
pub fn within_workspace(p: &str) -> bool {
    !p.is_empty() && !p.contains('\0') && normalize(p).is_some()
}

/// Glob lists compiled once per thread: policies repeat the same lists on every call.
const GLOB_CACHE_ENTRIES: usize = 256;

type GlobCache = std::collections::HashMap<Vec<String>, std::rc::Rc<globset::GlobSet>>;

thread_local! {
    static GLOB_CACHE: std::cell::RefCell<GlobCache> = std::cell::RefCell::new(GlobCache::new());
}

fn compile_globs(globs: &[&str]) -> Result<std::rc::Rc<globset::GlobSet>, String> {
    let key: Vec<String> = globs.iter().map(|g| (*g).to_owned()).collect();
    if let Some(set) = GLOB_CACHE.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(set);
    }
    let mut b = globset::GlobSetBuilder::new();
    for g in globs {
        let glob = |pattern: &str| {
            globset::GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("invalid glob `{g}`: {e}"))
        };
        b.add(glob(g)?);
        // `**/x` should also match `x` at the root, as people expect from .gitignore.
        if let Some(tail) = g.strip_prefix("**/") {
            b.add(glob(tail)?);
        }
    }
    let set = std::rc::Rc::new(b.build().map_err(|e| e.to_string())?);
    GLOB_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= GLOB_CACHE_ENTRIES {
            c.clear();
        }
        c.insert(key, set.clone());
    });
    Ok(set)
}

/// Whether a (normalized) relative path matches any of the globs (`**` crosses directories).
pub fn matches_glob(p: &str, globs: &[&str]) -> Result<bool, String> {
    let path = normalize(p).unwrap_or_else(|| p.to_owned());
    Ok(compile_globs(globs)?.is_match(&path))
}

/// The words of a command line, as bash would split them, every command's (substitutions'
/// included): quotes removed, no expansion, every separator a separator ([`crate::cel::shell`]).
/// [`crate::cel::shell::ShellError`] for a line nested too deep.
pub fn shell_words(s: &str) -> Result<Vec<String>, crate::cel::shell::ShellError> {
    CommandLine::parse(s).map(|c| c.words())
}

/// How a function may be called and what it returns.
#[derive(Clone, Copy, Debug)]
pub struct FunctionInfo {
    /// The name as the CEL AST spells it (operators included).
    pub name: &'static str,
    /// Result type.
    pub returns: Returns,
}

/// The result type of a catalogued function.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Returns {
    /// Always this type.
    Fixed(FixedType),
    /// The type of the first operand (arithmetic, `+` on strings and lists).
    FirstOperand,
    /// The element type of the first operand (indexing).
    Element,
    /// Not known statically.
    Dyn,
}

/// Types a function can be declared to return.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FixedType {
    /// bool
    Bool,
    /// int
    Int,
    /// uint
    Uint,
    /// double
    Double,
    /// string
    String,
    /// bytes
    Bytes,
    /// list(string)
    StringList,
}

impl FixedType {
    /// As a checker type.
    pub fn to_type(self) -> CelType {
        match self {
            FixedType::Bool => CelType::Bool,
            FixedType::Int => CelType::Int,
            FixedType::Uint => CelType::Uint,
            FixedType::Double => CelType::Double,
            FixedType::String => CelType::String,
            FixedType::Bytes => CelType::Bytes,
            FixedType::StringList => CelType::List(Box::new(CelType::String)),
        }
    }
}

macro_rules! catalogue {
    ($($name:literal => $ret:expr),+ $(,)?) => {
        /// Every function a toolgate CEL expression may call.
        pub const FUNCTIONS: &[FunctionInfo] = &[$(FunctionInfo { name: $name, returns: $ret }),+];
    };
}

use FixedType as F;
use Returns::{Dyn, Element, FirstOperand, Fixed};

catalogue! {
    // Operators, as the parser names them.
    "_&&_" => Fixed(F::Bool), "_||_" => Fixed(F::Bool), "!_" => Fixed(F::Bool),
    "_==_" => Fixed(F::Bool), "_!=_" => Fixed(F::Bool), "_<_" => Fixed(F::Bool),
    "_<=_" => Fixed(F::Bool), "_>_" => Fixed(F::Bool), "_>=_" => Fixed(F::Bool),
    "@in" => Fixed(F::Bool), "@not_strictly_false" => Fixed(F::Bool),
    "_+_" => FirstOperand, "_-_" => FirstOperand, "_*_" => FirstOperand, "_/_" => FirstOperand,
    "_%_" => FirstOperand, "-_" => FirstOperand, "_[_]" => Element, "_?_:_" => Dyn,
    // Standard library.
    "size" => Fixed(F::Int), "contains" => Fixed(F::Bool), "startsWith" => Fixed(F::Bool),
    "endsWith" => Fixed(F::Bool), "matches" => Fixed(F::Bool), "int" => Fixed(F::Int),
    "uint" => Fixed(F::Uint), "double" => Fixed(F::Double), "string" => Fixed(F::String),
    "bytes" => Fixed(F::Bytes), "bool" => Fixed(F::Bool), "dyn" => Dyn, "type" => Dyn,
    // Strings extension.
    "charAt" => Fixed(F::String), "indexOf" => Fixed(F::Int), "lastIndexOf" => Fixed(F::Int),
    "lowerAscii" => Fixed(F::String), "upperAscii" => Fixed(F::String), "replace" => Fixed(F::String),
    "split" => Fixed(F::StringList), "substring" => Fixed(F::String), "trim" => Fixed(F::String),
    "join" => Fixed(F::String), "strings.quote" => Fixed(F::String), "reverse" => Fixed(F::String),
    "format" => Fixed(F::String),
    // toolgate.
    "path.within_workspace" => Fixed(F::Bool), "path.is_absolute" => Fixed(F::Bool),
    "path.normalize" => Fixed(F::String), "path.base" => Fixed(F::String),
    "path.dir" => Fixed(F::String), "path.ext" => Fixed(F::String),
    "path.matches_glob" => Fixed(F::Bool), "path.protected" => Fixed(F::Bool),
    "path.in_git_dir" => Fixed(F::Bool),
    "shell.words" => Fixed(F::StringList), "shell.commands" => Fixed(F::StringList),
    "shell.is_simple" => Fixed(F::Bool),
}

/// The catalogue entry of a function.
pub fn lookup(name: &str) -> Option<&'static FunctionInfo> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_helpers() {
        assert!(within_workspace("src/a.rs"));
        assert!(within_workspace("src/../b.rs"));
        assert!(!within_workspace("../etc/passwd"));
        assert!(!within_workspace("/etc/passwd"));
        assert!(!within_workspace("a/../../b"));
        assert_eq!(normalize("./a/./b/../c").as_deref(), Some("a/c"));
        assert!(matches_glob("config/.env", &["**/.env"]).unwrap());
        assert!(matches_glob(".env", &["**/.env"]).unwrap());
        assert!(matches_glob(".git/config", &[".git/**"]).unwrap());
        assert!(!matches_glob("src/main.rs", &["**/.env", ".git/**"]).unwrap());
        assert!(matches_glob("src/a.rs", &["src/*.rs"]).unwrap());
        assert!(!matches_glob("src/x/a.rs", &["src/*.rs"]).unwrap());
        assert!(matches_glob("x", &["[invalid"]).is_err());
    }

    #[test]
    fn shell_words_split_like_sh() {
        assert_eq!(
            shell_words(r#"git commit -m "a b" 'c d' e\ f"#).unwrap(),
            ["git", "commit", "-m", "a b", "c d", "e f"]
        );
        assert_eq!(shell_words("  ").unwrap(), Vec::<String>::new());
    }
}
