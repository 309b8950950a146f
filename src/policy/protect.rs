//! [`ProtectedSet`]: the paths no tool may read or write, whatever its own rules say.
//!
//! One set per project, compiled once from [`ProtectPolicy`] and consulted everywhere a byte
//! could leak: the permission stage (every resolved path argument, before the tool's rules),
//! every builtin (refuse, or skip and count), and the sandbox of command tools (the shim masks
//! each match). Matching is purely lexical over workspace-relative paths; callers resolve
//! symbolic links first and compare file identities where links could be swapped in.
//!
//! A glob matches at any depth (`.env` protects `config/.env`) unless it starts with `/`,
//! which anchors it at the workspace root. A path is protected when it, or any folder above
//! it, matches a protected glob and does not match an exception; so `.ssh` protects
//! `.ssh/id_rsa`. Matching ignores letter case: a case-insensitive file system (or a model
//! writing `.ENV`) must not slip past.

use std::sync::{Arc, LazyLock};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::ir::{ProtectPolicy, ProtectedPath};

#[cfg(test)]
mod agree;
mod prefix;

use prefix::PrefixMatcher;

/// Why a path is protected: the path as judged and the entry that protects it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protection {
    /// The path judged: normalized, and with symbolic links followed where the judge can.
    pub path: String,
    /// The protected glob it matches, as written.
    pub glob: String,
    /// Why that glob is protected.
    pub reason: String,
}

/// What decides whether a path is protected: the project's [`ProtectedSet`] (lexically, at lint
/// and policy-test time) or the runtime's workspace (following symbolic links too). The
/// permission stage and CEL's `path.protected` ask it.
pub trait ProtectedPaths: Send + Sync {
    /// Why `path` is protected, or `None` when it is not.
    fn protection(&self, path: &str) -> Option<Protection>;

    /// What `path.protected(p)` answers: whether a tool touching `path` could touch a protected
    /// file. At least [`ProtectedPaths::protection`]; a judge that follows links also answers
    /// true for a path it cannot follow safely (a link out of the workspace, or to nowhere).
    fn protects(&self, path: &str) -> bool {
        self.protection(path).is_some()
    }
}

/// The longest path judged by its globs, in bytes: Linux's `PATH_MAX`. The operating system
/// refuses to open a longer path anyway, so a longer path is protected outright (refused,
/// fail-closed) by [`TOO_LONG`] instead of matched; a path up to it is judged in one pass.
pub const PATH_MAX: usize = 4096;

/// What protects a path longer than [`PATH_MAX`].
pub static TOO_LONG: LazyLock<ProtectedPath> = LazyLock::new(|| ProtectedPath {
    glob: format!("(longer than {PATH_MAX} bytes)"),
    reason: format!(
        "a path longer than {PATH_MAX} bytes (PATH_MAX) is refused unjudged: no file system \
         opens it; shorten it"
    ),
    default: true,
});

/// What protects a path the globs' automaton could not judge: refused, not let by. The
/// automaton is built never to give up, so nothing is protected by this in practice.
static UNJUDGED: LazyLock<ProtectedPath> = LazyLock::new(|| ProtectedPath {
    glob: "(not judged)".to_owned(),
    reason: "the protected globs could not be matched against this path, so it is refused"
        .to_owned(),
    default: true,
});

/// The default set alone, compiled once: what `path.protected` consults where nobody gave it
/// the project's set.
pub fn default_set() -> Arc<ProtectedSet> {
    static DEFAULT: LazyLock<Arc<ProtectedSet>> = LazyLock::new(|| {
        Arc::new(
            ProtectedSet::new(&ProtectPolicy::default())
                .unwrap_or_else(|e| unreachable!("the default protected globs compile: {e}")),
        )
    });
    DEFAULT.clone()
}

impl ProtectedPaths for ProtectedSet {
    /// Judged lexically: `./a/../.env` is `.env`; a path that is absolute or climbs out is
    /// judged as written (`/home/u/.ssh/id_rsa` matches `.ssh`).
    fn protection(&self, path: &str) -> Option<Protection> {
        let judged = crate::cel::functions::normalize(path)
            .unwrap_or_else(|| path.trim_start_matches('/').to_owned());
        self.protects(&judged).map(|p| Protection {
            glob: p.glob.clone(),
            reason: p.reason.clone(),
            // A refusal quotes the path: not all of a megabyte of it.
            path: if judged.len() > PATH_MAX {
                let head: String = judged.chars().take(64).collect();
                format!("{head}… ({} bytes)", judged.len())
            } else {
                judged
            },
        })
    }
}

/// The protected paths of a project, compiled.
#[derive(Clone, Debug)]
pub struct ProtectedSet {
    paths: Vec<ProtectedPath>,
    exceptions: Vec<ProtectedPath>,
    protect: GlobSet,
    except: GlobSet,
    /// Both as one DFA, for [`ProtectedSet::protects`]: every folder of a path in one pass.
    prefixes: Arc<PrefixMatcher>,
}

/// A glob in `protect` that does not compile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the protected glob `{glob}` is not valid: {message}")]
pub struct ProtectError {
    /// The glob as written.
    pub glob: String,
    /// What is wrong with it.
    pub message: String,
}

impl ProtectedSet {
    /// Compiles the default set with a project's additions and exceptions.
    pub fn new(policy: &ProtectPolicy) -> Result<ProtectedSet, ProtectError> {
        let paths = policy.all_paths();
        ProtectedSet::from_parts(paths, policy.except.clone())
    }

    /// Compiles a set from its protected globs and exceptions as [`ProtectedSet::paths`] and
    /// [`ProtectedSet::exceptions`] return them (the exec shim rebuilds the set this way).
    pub fn from_parts(
        paths: Vec<ProtectedPath>,
        exceptions: Vec<ProtectedPath>,
    ) -> Result<ProtectedSet, ProtectError> {
        let (protect, protect_regexes) = compile(&paths)?;
        let (except, except_regexes) = compile(&exceptions)?;
        Ok(ProtectedSet {
            protect,
            except,
            prefixes: prefix_matcher(&protect_regexes, &except_regexes)?,
            paths,
            exceptions,
        })
    }

    /// A set of exactly these globs and exceptions (no defaults): for lint, which judges one
    /// default glob at a time.
    pub fn from_globs(
        paths: Vec<ProtectedPath>,
        except: &[ProtectedPath],
    ) -> Result<ProtectedSet, ProtectError> {
        ProtectedSet::from_parts(paths, except.to_vec())
    }

    /// Checks that globs compile, without building a set.
    pub fn check_globs(globs: &[ProtectedPath]) -> Result<(), ProtectError> {
        compile(globs).map(|_| ())
    }

    /// Adds a workspace-relative path protected as it is written (no glob), such as the state
    /// folder when it lies inside the workspace.
    pub fn with_literal(mut self, rel: &str, reason: &str) -> Result<ProtectedSet, ProtectError> {
        let escaped = globset::escape(rel.trim_start_matches("./"));
        self.paths.push(ProtectedPath {
            glob: format!("/{escaped}"),
            reason: reason.to_owned(),
            default: false,
        });
        let (protect, protect_regexes) = compile(&self.paths)?;
        let (_, except_regexes) = compile(&self.exceptions)?;
        self.prefixes = prefix_matcher(&protect_regexes, &except_regexes)?;
        self.protect = protect;
        Ok(self)
    }

    /// The protected globs: the defaults, then the project's.
    pub fn paths(&self) -> &[ProtectedPath] {
        &self.paths
    }

    /// The exceptions.
    pub fn exceptions(&self) -> &[ProtectedPath] {
        &self.exceptions
    }

    /// Why a workspace-relative path is protected, or `None` when it is not. `.` (the root)
    /// is never protected; a path that climbs out with `..` is judged as written. A path longer
    /// than [`PATH_MAX`] is protected by [`TOO_LONG`].
    pub fn protects(&self, rel: &str) -> Option<&ProtectedPath> {
        let rel = rel.trim_start_matches("./");
        if rel.is_empty() || rel == "." {
            return None;
        }
        if rel.len() > PATH_MAX {
            return Some(&TOO_LONG);
        }
        // The path and every folder above it, shortest first: `.ssh` protects `.ssh/id_rsa`.
        let Some(found) = self.prefixes.judge(rel) else {
            return Some(&UNJUDGED);
        };
        match found.protected {
            Some(i) if !found.excepted => self.paths.get(i),
            _ => None,
        }
    }
}

impl ProtectedSet {
    /// One step of a walk down the tree that does not descend into protected folders: whether
    /// `rel` is protected, and whether it is excepted (pass that on to what is inside it).
    /// For a path none of whose folders is protected this agrees with
    /// [`ProtectedSet::protects`], at two glob matches instead of two per folder.
    pub fn judge_entry(&self, rel: &str, parent_excepted: bool) -> (bool, bool) {
        let excepted = parent_excepted || self.except.is_match(rel);
        (!excepted && self.protect.is_match(rel), excepted)
    }
}

/// Compiles globs as the module describes: any depth unless anchored, case-insensitive,
/// `*` within one folder. Also returns each glob's regex, for [`PrefixMatcher`].
fn compile(paths: &[ProtectedPath]) -> Result<(GlobSet, Vec<String>), ProtectError> {
    let mut b = GlobSetBuilder::new();
    let mut regexes = Vec::with_capacity(paths.len());
    for p in paths {
        let pattern = anchored(&p.glob);
        let glob = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .case_insensitive(true)
            .build()
            .map_err(|e| ProtectError {
                glob: p.glob.clone(),
                message: e.kind().to_string(),
            })?;
        regexes.push(glob.regex().to_owned());
        b.add(glob);
    }
    let set = b.build().map_err(|e| ProtectError {
        glob: String::new(),
        message: e.to_string(),
    })?;
    Ok((set, regexes))
}

/// The one-pass matcher of compiled globs' regexes.
fn prefix_matcher(
    protected: &[String],
    exceptions: &[String],
) -> Result<Arc<PrefixMatcher>, ProtectError> {
    PrefixMatcher::new(protected, exceptions)
        .map(Arc::new)
        .map_err(|message| ProtectError {
            glob: String::new(),
            message,
        })
}

/// `/x` → `x` (at the root); `**/x` stays; anything else → `**/x` (at any depth). A trailing
/// `/` or `/**` is dropped: a folder's match already covers what is in it.
fn anchored(glob: &str) -> String {
    let g = glob.trim_end_matches("/**").trim_end_matches('/');
    if let Some(rooted) = g.strip_prefix('/') {
        rooted.to_owned()
    } else if g.starts_with("**/") {
        g.to_owned()
    } else {
        format!("**/{g}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(extra: &[(&str, &str)], except: &[&str]) -> ProtectedSet {
        let mut policy = ProtectPolicy::default();
        policy
            .paths
            .extend(extra.iter().map(|(g, r)| ProtectedPath {
                glob: (*g).into(),
                reason: (*r).into(),
                default: false,
            }));
        policy.except = except
            .iter()
            .map(|g| ProtectedPath {
                glob: (*g).into(),
                reason: "test".into(),
                default: false,
            })
            .collect();
        ProtectedSet::new(&policy).unwrap()
    }

    #[test]
    fn defaults_protect_secrets_at_any_depth() {
        let s = set(&[], &[]);
        for p in [
            ".env",
            "config/.env",
            ".env.production",
            "deploy/prod.env",
            "keys/server.pem",
            "a/b/c/tls.key",
            "home/.ssh/id_rsa",
            "id_ed25519",
            "id_rsa.pub",
            ".ssh",
            ".ssh/known_hosts",
            ".aws/credentials",
            "x/.config/gcloud/credentials.db",
            ".docker/config.json",
            ".netrc",
            "terraform/prod.tfstate",
            "CONFIG/.ENV",
        ] {
            assert!(s.protects(p).is_some(), "{p} should be protected");
        }
        for p in [
            ".",
            "src/main.rs",
            "environment.md",
            "src/env.rs",
            "id_utils.py",
            ".envrc.md/x",
            "docs/ssh.md",
            ".docker/other.json",
            "keys",
        ] {
            assert!(s.protects(p).is_none(), "{p} should not be protected");
        }
    }

    #[test]
    fn a_protected_folder_protects_what_is_in_it() {
        let s = set(&[("secrets", "deploy secrets")], &[]);
        let hit = s.protects("ops/secrets/db/password.txt").unwrap();
        assert_eq!(hit.glob, "secrets");
        assert_eq!(hit.reason, "deploy secrets");
        assert!(!hit.default);
    }

    #[test]
    fn anchored_globs_match_at_the_root_only() {
        let s = set(&[("/private", "root only"), ("/data/*.db", "dbs")], &[]);
        assert!(s.protects("private/x").is_some());
        assert!(s.protects("src/private/x").is_none());
        assert!(s.protects("data/a.db").is_some());
        assert!(s.protects("data/sub/a.db").is_none());
    }

    #[test]
    fn exceptions_exempt_paths_beneath_them() {
        let s = set(&[], &["tests/fixtures/**", "/public.pem"]);
        assert!(s.protects("tests/fixtures/cert.pem").is_none());
        assert!(s.protects("public.pem").is_none());
        assert!(s.protects("sub/public.pem").is_some());
        assert!(s.protects("src/cert.pem").is_some());
    }

    #[test]
    fn literals_are_escaped() {
        let s = ProtectedSet::new(&ProtectPolicy::default())
            .unwrap()
            .with_literal("state[1]/*", "the state folder")
            .unwrap();
        assert!(s.protects("state[1]/*/journal.db").is_some());
        assert!(s.protects("state1/x").is_none());
        assert!(s.protects("nested/state[1]/*").is_none());
    }

    #[test]
    fn invalid_globs_are_errors() {
        let policy = ProtectPolicy {
            paths: vec![ProtectedPath {
                glob: "[unclosed".into(),
                reason: "r".into(),
                default: false,
            }],
            except: vec![],
        };
        let e = ProtectedSet::new(&policy).unwrap_err();
        assert_eq!(e.glob, "[unclosed");
    }

    #[test]
    fn a_path_past_path_max_is_refused_unjudged_and_fast() {
        let s = set(&[], &["**/ok"]);
        // 4 MB of folders: matching each prefix took minutes; the bound answers at once.
        let huge = "a/".repeat(2 * 1024 * 1024);
        let started = std::time::Instant::now();
        assert_eq!(s.protects(&huge).map(|p| &p.glob), Some(&TOO_LONG.glob));
        let p = s.protection(&huge).unwrap();
        assert!(p.path.len() < 200 && p.path.contains("bytes"), "{}", p.path);
        assert!(p.reason.contains("PATH_MAX"), "{}", p.reason);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // At the bound, the globs judge as before.
        let at = format!("{}.env", "a/".repeat((PATH_MAX - 4) / 2));
        assert_eq!(at.len(), PATH_MAX);
        assert_eq!(s.protects(&at).map(|p| p.glob.as_str()), Some(".env"));
        let plain = format!("{}x", "a/".repeat((PATH_MAX - 1) / 2));
        assert!(plain.len() <= PATH_MAX && s.protects(&plain).is_none());
    }
}
