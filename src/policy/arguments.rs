//! Which arguments of a tool name workspace paths, and the protected-path decision over them —
//! the check the permission stage makes before any rule, at run time and in policy tests alike.
//!
//! Path parameters are found by name ([`path_params`]): their values are resolved by the path
//! policy and judged whole. Glob parameters ([`glob_params`]: named `glob`, `globs`, or ending
//! in `_glob`/`_globs`, and the `pattern` of the `glob` builtin) are judged by their literal
//! prefix — the folders before the first wildcard, or the whole pattern when it has none — so
//! `.ssh/*` and `deploy/.aws/**` are refused while `**/*.pem` is left to the tool, which skips
//! what is protected. Other strings (a regular expression, a command line) are not paths here;
//! rules judge those with `path.protected`.

use serde_json::Value;

use crate::ir::{Decision, ExecSpec};
use crate::policy::protect::{ProtectedPaths, Protection};
use crate::policy::{DecisionSource, PolicyDecision};

/// A parameter that names a workspace path (by naming convention), checked by the path policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathParam {
    /// The parameter.
    pub name: String,
    /// Whether it is a list of paths.
    pub list: bool,
}

/// Parameters that hold workspace paths, by name: `path`, `paths`, `workdir`, `cwd`, `dir`,
/// `file`, `directory`, and names ending in `_path`, `_dir` or `_file` (strings), or `paths`,
/// `files` and names ending in `_paths` (arrays of strings).
pub fn path_params(schema: &Value) -> Vec<PathParam> {
    let Some(props) = schema.get("properties").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    let is_path_name = |n: &str| {
        matches!(n, "path" | "workdir" | "cwd" | "dir" | "file" | "directory")
            || n.ends_with("_path")
            || n.ends_with("_dir")
            || n.ends_with("_file")
    };
    props
        .iter()
        .filter_map(|(name, s)| {
            let ty = s.get("type").and_then(|t| t.as_str());
            match ty {
                Some("string") if is_path_name(name) => Some(PathParam {
                    name: name.clone(),
                    list: false,
                }),
                Some("array")
                    if matches!(name.as_str(), "paths" | "files") || name.ends_with("_paths") =>
                {
                    Some(PathParam {
                        name: name.clone(),
                        list: true,
                    })
                }
                _ => None,
            }
        })
        .collect()
}

/// Parameters that hold globs over workspace paths: string (or string-list) parameters named
/// `glob`, `globs`, or ending in `_glob`/`_globs`, and the `pattern` of the `glob` builtin.
pub fn glob_params(schema: &Value, exec: &ExecSpec) -> Vec<PathParam> {
    let Some(props) = schema.get("properties").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    let glob_builtin = matches!(exec, ExecSpec::Builtin { name } if name == "glob");
    props
        .iter()
        .filter_map(|(name, s)| {
            let by_name = matches!(name.as_str(), "glob" | "globs")
                || name.ends_with("_glob")
                || name.ends_with("_globs");
            let builtin = glob_builtin && name == "pattern";
            if !(by_name || builtin) {
                return None;
            }
            match s.get("type").and_then(|t| t.as_str()) {
                Some("string") => Some(PathParam {
                    name: name.clone(),
                    list: false,
                }),
                Some("array") => Some(PathParam {
                    name: name.clone(),
                    list: true,
                }),
                _ => None,
            }
        })
        .collect()
}

/// The part of a glob before its first wildcard, by whole folders: `keys/*.pem` → `keys`,
/// `.env` → `.env`, `**/x` → `` (nothing to judge).
pub fn literal_prefix(glob: &str) -> String {
    glob.split('/')
        .take_while(|seg| !seg.contains(['*', '?', '[', '{']))
        .collect::<Vec<_>>()
        .join("/")
}

/// An argument the protected set covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtectedArgument {
    /// The parameter, with the index for a list (`paths[2]`).
    pub parameter: String,
    /// The value as the call gave it (after path resolution, at run time).
    pub value: String,
    /// What protects it.
    pub protection: Protection,
}

impl ProtectedArgument {
    /// What the model reads: "`config/.env` is protected (matches `.env`): Secrets are never
    /// readable or writable by tools." — naming the path judged, the glob and its reason.
    pub fn message(&self) -> String {
        let p = &self.protection;
        let lexical = crate::cel::functions::normalize(&self.value);
        let what = if p.path == self.value || lexical.as_deref() == Some(p.path.as_str()) {
            format!("`{}` is protected", p.path)
        } else {
            format!("`{}` leads to `{}`, which is protected", self.value, p.path)
        };
        format!("{what} (matches `{}`): {}", p.glob, p.reason.trim())
    }
}

/// The first path or glob argument (in parameter order) that `protected` covers.
pub fn protected_argument(
    args: &Value,
    paths: &[PathParam],
    globs: &[PathParam],
    protected: &dyn ProtectedPaths,
) -> Option<ProtectedArgument> {
    let values = |param: &PathParam| -> Vec<(String, String)> {
        match args.get(&param.name) {
            Some(Value::String(s)) if !param.list => vec![(param.name.clone(), s.clone())],
            Some(Value::Array(items)) if param.list => items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    v.as_str()
                        .map(|s| (format!("{}[{i}]", param.name), s.to_owned()))
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    let judged = paths
        .iter()
        .flat_map(|p| values(p).into_iter().map(|(n, v)| (n, v.clone(), v)))
        .chain(globs.iter().flat_map(|p| {
            values(p)
                .into_iter()
                .map(|(n, v)| (n, literal_prefix(&v), v))
        }));
    for (parameter, path, value) in judged {
        if path.is_empty() {
            continue;
        }
        if let Some(protection) = protected.protection(&path) {
            return Some(ProtectedArgument {
                parameter,
                value,
                protection,
            });
        }
    }
    None
}

/// The decision for a call with a protected argument: deny, from the protected set, before and
/// whatever the rules say. `None` when no argument is protected.
pub fn protected_decision(
    args: &Value,
    paths: &[PathParam],
    globs: &[PathParam],
    protected: &dyn ProtectedPaths,
) -> Option<(PolicyDecision, ProtectedArgument)> {
    let hit = protected_argument(args, paths, globs, protected)?;
    let decision = PolicyDecision {
        decision: Decision::Deny,
        source: DecisionSource::Protected {
            parameter: hit.parameter.clone(),
            path: hit.protection.path.clone(),
            glob: hit.protection.glob.clone(),
        },
        reason: Some(hit.message()),
        chain: Vec::new(),
    };
    Some((decision, hit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ProtectPolicy;
    use crate::policy::ProtectedSet;
    use serde_json::json;

    #[test]
    fn path_params_by_convention() {
        let schema = json!({"properties": {
            "path": {"type": "string"}, "pattern": {"type": "string"},
            "paths": {"type": "array"}, "out_dir": {"type": "string"}
        }});
        let names: Vec<String> = path_params(&schema).into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["path", "paths", "out_dir"]);
    }

    #[test]
    fn glob_params_by_name_and_the_glob_builtin() {
        let schema = json!({"properties": {
            "pattern": {"type": "string"}, "glob": {"type": "string"},
            "exclude_globs": {"type": "array"}, "path": {"type": "string"}
        }});
        let names = |exec: &ExecSpec| -> Vec<String> {
            glob_params(&schema, exec)
                .into_iter()
                .map(|p| p.name)
                .collect()
        };
        let grep = ExecSpec::Builtin {
            name: "search_files".into(),
        };
        let glob = ExecSpec::Builtin {
            name: "glob".into(),
        };
        assert_eq!(names(&grep), ["glob", "exclude_globs"]);
        assert_eq!(names(&glob), ["pattern", "glob", "exclude_globs"]);
    }

    #[test]
    fn literal_prefixes() {
        assert_eq!(literal_prefix("keys/*.pem"), "keys");
        assert_eq!(literal_prefix(".env"), ".env");
        assert_eq!(literal_prefix("deploy/.aws/**"), "deploy/.aws");
        assert_eq!(literal_prefix("**/.env"), "");
        assert_eq!(literal_prefix("src/{a,b}.rs"), "src");
    }

    #[test]
    fn the_first_protected_argument_is_named_with_its_glob_and_reason() {
        let set = ProtectedSet::new(&ProtectPolicy::default()).unwrap();
        let paths = [PathParam {
            name: "paths".into(),
            list: true,
        }];
        let globs = [PathParam {
            name: "glob".into(),
            list: false,
        }];
        let args = json!({"paths": ["src/a.rs", "./config/../.env"], "glob": "**/*.rs"});
        let hit = protected_argument(&args, &paths, &globs, &set).unwrap();
        assert_eq!(hit.parameter, "paths[1]");
        assert_eq!(hit.protection.path, ".env");
        assert_eq!(hit.protection.glob, ".env");
        assert_eq!(
            hit.message(),
            "`.env` is protected (matches `.env`): Secrets are never readable or writable by tools."
        );
        let args = json!({"paths": ["src"], "glob": "deploy/.aws/*"});
        let hit = protected_argument(&args, &paths, &globs, &set).unwrap();
        assert_eq!(
            (hit.parameter.as_str(), hit.protection.glob.as_str()),
            ("glob", ".aws")
        );
        let args = json!({"paths": ["src", "keys"], "glob": "**/*.pem"});
        assert_eq!(protected_argument(&args, &paths, &globs, &set), None);
    }
}
