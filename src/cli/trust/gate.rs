//! The start-up check of `call`, `run` and `serve`: no call runs under a policy nobody trusted.
//!
//! - `--trust-policy` (or `TOOLGATE_TRUST_POLICY=1`): whoever started toolgate trusts the
//!   policy as it stands now, for this run; nothing is recorded.
//! - `--trust-git REV` (or `TOOLGATE_TRUST_GIT`): every policy file must hold what it holds at
//!   REV, else the run is refused, naming the files.
//! - Otherwise the policy's fingerprint must be the one `toolgate trust` recorded. When it is
//!   not and someone can answer (a terminal, in a context that prompts), what changed is shown
//!   — files, and the permissions it widens with their witness calls — and the person is asked;
//!   yes records the trust. Anywhere else the run is refused, naming the changed files.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use crate::diff::{self, Class, DiffOptions, source};
use crate::ir::{AskMode, Bundle, ProjectConfig};
use crate::policy::PolicyFiles;
use crate::policy::trust::{
    self, Fingerprint, PolicyChanges, PolicySnapshot, TrustError, TrustRecord, TrustStore,
};
use crate::spec::load::{LoadOptions, LoadedSpecs};

/// How the person starting toolgate says which policy is trusted (`call`, `run`, `serve`).
#[derive(Clone, Debug, Default, Args)]
pub struct TrustFlags {
    /// Obey only the policy committed at REV (`HEAD` in CI): a policy file that differs from
    /// its content there is refused. Default: TOOLGATE_TRUST_GIT.
    #[arg(long, value_name = "REV")]
    pub trust_git: Option<String>,
    /// Trust the policy as it stands at start-up, for this run only (records nothing).
    /// Default: TOOLGATE_TRUST_POLICY=1.
    #[arg(long, conflicts_with = "trust_git")]
    pub trust_policy: bool,
}

/// Which policy this run obeys.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mode {
    /// The one that stands at start-up.
    AsItStands,
    /// The one committed at a revision.
    Git(String),
    /// The one `toolgate trust` recorded.
    Recorded,
}

impl TrustFlags {
    fn mode(&self) -> Result<Mode, String> {
        let policy_env = match std::env::var(trust::TRUST_POLICY_ENV) {
            Ok(v) => match v.trim() {
                "1" | "true" | "yes" => true,
                "" | "0" | "false" | "no" => false,
                other => {
                    return Err(format!(
                        "{}={other:?}: expected 1 (trust the policy as it stands) or 0",
                        trust::TRUST_POLICY_ENV
                    ));
                }
            },
            Err(_) => false,
        };
        let git_env = std::env::var(trust::TRUST_GIT_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty());
        Ok(if self.trust_policy {
            Mode::AsItStands
        } else if let Some(rev) = &self.trust_git {
            Mode::Git(rev.clone())
        } else if policy_env {
            Mode::AsItStands
        } else if let Some(rev) = git_env {
            Mode::Git(rev)
        } else {
            Mode::Recorded
        })
    }
}

/// How the policy was loaded, so that the trusted snapshot can be loaded the same way.
pub(crate) enum PolicyForm {
    /// Specs with toolgate.yaml: `config` is the project file's name when `--config` named it.
    Specs { config: Option<PathBuf> },
    /// A bundle.json (`--bundle`): obeyed only as committed or when vouched for.
    Bundle,
}

/// The policy a command is about to obey.
pub(crate) struct LoadedPolicy<'a> {
    /// The project folder.
    pub root: &'a Path,
    /// Every policy file.
    pub files: Vec<PathBuf>,
    /// The text the loader read of some of them (path as in `files`): hashed as read.
    pub loaded: Vec<(PathBuf, std::sync::Arc<str>)>,
    /// What it resolved to (for the comparison with the trusted one; only built when a person
    /// is shown what changed).
    pub bundle: &'a dyn Fn() -> Option<Bundle>,
    /// How it was loaded.
    pub form: PolicyForm,
}

/// The policy files of loaded specs ([`PolicyFiles`]: toolgate.yaml, every file the `specs:`
/// globs match, key files), with every other file the loader read.
pub(crate) fn policy_files(loaded: &LoadedSpecs, cwd: &Path) -> Result<Vec<PathBuf>, String> {
    let policy = PolicyFiles::of(loaded).map_err(|e| e.to_string())?;
    let mut files: Vec<PathBuf> = policy.files().to_vec();
    files.extend(loaded.sources.iter().map(|(_, f)| cwd.join(&f.path)));
    files.sort();
    files.dedup();
    Ok(files)
}

/// The text the loader read of each file, by its path from `cwd`.
pub(crate) fn loaded_texts(
    loaded: &LoadedSpecs,
    cwd: &Path,
) -> Vec<(PathBuf, std::sync::Arc<str>)> {
    loaded
        .sources
        .iter()
        .map(|(_, f)| (cwd.join(&f.path), f.text.clone()))
        .collect()
}

/// Whether a person can be asked to trust: stdin and stderr are a terminal, and the context
/// the run is in (`context`, else the default) prompts for approvals — never in `ci` or
/// `headless`.
pub(crate) fn can_ask(project: &ProjectConfig, context: Option<&str>) -> bool {
    let context = context.unwrap_or(crate::ir::project::DEFAULT_CONTEXT);
    std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal()
        && !matches!(context, "ci" | "headless")
        && project
            .contexts
            .get(context)
            .is_some_and(|c| c.ask == AskMode::Prompt)
}

/// Refuses to go on unless the policy is trusted (see the module comment); the error is
/// printed here (it has several lines), the returned message is the last.
pub(crate) fn require_trust(
    policy: &LoadedPolicy<'_>,
    flags: &TrustFlags,
    interactive: bool,
) -> Result<(), String> {
    let mode = flags.mode()?;
    if mode == Mode::AsItStands {
        return Ok(());
    }
    let loaded: Vec<(PathBuf, &[u8])> = policy
        .loaded
        .iter()
        .map(|(p, t)| (p.clone(), t.as_bytes()))
        .collect();
    let snapshot =
        Fingerprint::read_with(policy.root, &policy.files, &loaded).map_err(|e| e.to_string())?;
    if let Mode::Git(rev) = &mode {
        let differences = trust::differences_from_git(&snapshot, rev).map_err(|e| e.to_string())?;
        if differences.is_empty() {
            return Ok(());
        }
        let list: Vec<String> = differences
            .iter()
            .map(|d| format!("{} {}", shown(&d.path), d.why))
            .collect();
        eprintln!(
            "{:?}",
            miette::miette!(
                help = "commit the policy, or review it and run without --trust-git after `toolgate trust`",
                "the policy is not the one committed at {rev}:\n  {}",
                list.join("\n  ")
            )
        );
        return Err(format!(
            "nothing ran: the policy differs from {rev} ({} file(s))",
            differences.len()
        ));
    }
    if matches!(policy.form, PolicyForm::Bundle) {
        // `toolgate trust` records a project's specs; a bundle is vouched for by whoever
        // starts toolgate, or by the commit it is in.
        return Err(
            "nothing ran: a --bundle run obeys its bundle only with --trust-git REV (the bundle as committed) or --trust-policy (whoever starts toolgate vouches for it)"
                .into(),
        );
    }
    let store = TrustStore::open_default().map_err(|e| {
        format!(
            "{e}; or pass --trust-policy (the policy as it stands, for this run) or --trust-git REV"
        )
    })?;
    let record = store.load(&snapshot.root).map_err(|e| e.to_string())?;
    if record
        .as_ref()
        .is_some_and(|r| r.fingerprint.policy == snapshot.fingerprint.policy)
    {
        return Ok(());
    }
    let changes = match &record {
        Some(r) => snapshot.fingerprint.changes_since(&r.fingerprint),
        None => PolicyChanges {
            added: snapshot
                .fingerprint
                .files
                .iter()
                .map(|f| f.path.clone())
                .collect(),
            ..PolicyChanges::default()
        },
    };
    let what = describe(&snapshot.root, record.as_ref(), &changes);
    if !interactive {
        eprintln!(
            "{:?}",
            miette::miette!(
                help = "review the policy, then run `toolgate trust`; in CI pass `--trust-git HEAD` to obey the committed policy (or `--trust-policy` when whoever starts toolgate vouches for the files)",
                "{what}"
            )
        );
        return Err("nothing ran: the policy is not trusted".into());
    }
    let mut report = format!("{what}\n");
    if let Some(r) = &record {
        report.push_str(&widened(&store, r, policy));
    }
    report.push_str("Trust this policy and go on? [y/N] ");
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(report.as_bytes()).and_then(|_| err.flush());
    drop(err);
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    if matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES") {
        store.trust(&snapshot).map_err(|e| e.to_string())?;
        eprintln!("trusted {}", snapshot.root.display());
        Ok(())
    } else {
        Err("nothing ran: the policy was not trusted".into())
    }
}

/// What is not trusted, in a few lines.
pub(crate) fn describe(
    root: &Path,
    record: Option<&TrustRecord>,
    changes: &PolicyChanges,
) -> String {
    let head = match record {
        None => format!(
            "the policy of {} has never been trusted; its files:",
            shown(&root.display().to_string())
        ),
        Some(_) => format!(
            "the policy of {} changed since it was trusted:",
            shown(&root.display().to_string())
        ),
    };
    let mut lines = vec![head];
    if record.is_none() {
        lines.extend(changes.added.iter().map(|f| format!("  {}", shown(f))));
    } else {
        lines.extend(changes.lines().iter().map(|l| format!("  {}", shown(l))));
    }
    lines.join("\n")
}

/// The permissions the current policy widens against the trusted one, each with its witness
/// call (`toolgate diff`'s analysis); a line saying why when they cannot be compared.
fn widened(store: &TrustStore, record: &TrustRecord, policy: &LoadedPolicy<'_>) -> String {
    let old = match trusted_side(store, record, policy) {
        Ok(side) => side,
        Err(e) => return format!("(the trusted policy cannot be compared: {})\n", shown(&e)),
    };
    let Some(new) = (policy.bundle)() else {
        return "(the policy cannot be compared: it does not resolve)\n".into();
    };
    let d = diff::diff(&old, &new, &DiffOptions::default());
    let widenings: Vec<_> = d
        .changes
        .iter()
        .filter(|c| c.kind.meta().class == Class::Widening)
        .collect();
    if widenings.is_empty() {
        return format!(
            "No permission is widened (compared on {} call(s); that is not a proof).\n",
            d.calls_evaluated.examples + d.calls_evaluated.generated
        );
    }
    let mut out = String::from("Widened permissions:\n");
    for c in widenings {
        let m = c.kind.meta();
        let subject = match &c.tool {
            Some(t) => format!("{t} {}", c.at),
            None => c.at.clone(),
        };
        out.push_str(&format!(
            "  {} {}: {}\n",
            m.id,
            shown(subject.trim()),
            shown(&c.message)
        ));
        if let Some(w) = &c.witness {
            out.push_str(&format!(
                "    witness ({}, context {}): {} — was {}, now {}\n",
                w.origin,
                shown(&w.context),
                shown(&w.arguments.to_string()),
                w.old,
                w.new
            ));
        }
    }
    out
}

/// The trusted policy, loaded from its snapshot as the current one was loaded.
fn trusted_side(
    store: &TrustStore,
    record: &TrustRecord,
    policy: &LoadedPolicy<'_>,
) -> Result<Bundle, String> {
    let dir = ScratchDir::new().map_err(|e| format!("cannot make a scratch folder: {e}"))?;
    for f in &record.fingerprint.files {
        let rel = Path::new(&f.path);
        // Only files inside the project can be put back where the loader looks for them.
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            continue;
        }
        let bytes = store.blob(&f.hash).map_err(|e: TrustError| e.to_string())?;
        let target = dir.0.join(rel);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::fs::write(&target, bytes).map_err(|e| e.to_string())?;
    }
    let PolicyForm::Specs { config } = &policy.form else {
        return Err("a bundle is not compared (it is never trusted by record)".into());
    };
    let side = source::from_specs(
        &LoadOptions {
            paths: Vec::new(),
            config: config.as_ref().map(|c| dir.0.join(c)),
            cwd: dir.0.clone(),
        },
        "trusted",
    );
    side.map(|s| s.bundle).map_err(|e| e.to_string())
}

/// A folder of the system's temporary space, removed when dropped.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> std::io::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir =
            std::env::temp_dir().join(format!("toolgate-trusted-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir)?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A name or message as it is safe to show on a terminal: control characters, bidi overrides
/// and zero-width characters are written as `\u{…}` (a file name may hold any of them) — the
/// escaping of every approval prompt, [`crate::runtime::question::shown`].
pub(crate) fn shown(text: &str) -> String {
    crate::runtime::question::shown(text)
}

/// The snapshot of the policy as it stands (for `toolgate trust` and `init`).
pub(crate) fn read_policy(
    root: &Path,
    files: &[PathBuf],
    loaded: &[(PathBuf, std::sync::Arc<str>)],
) -> Result<PolicySnapshot, String> {
    let loaded: Vec<(PathBuf, &[u8])> = loaded
        .iter()
        .map(|(p, t)| (p.clone(), t.as_bytes()))
        .collect();
    Fingerprint::read_with(root, files, &loaded).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_shown_escaped() {
        assert_eq!(
            shown("a\u{1b}[2Jb\u{202e}c\u{200b}\r"),
            "a\\u{1b}[2Jb\\u{202e}c\\u{200b}\\u{d}"
        );
        assert_eq!(shown("tool-specs/bash.yaml"), "tool-specs/bash.yaml");
    }
}
