//! `toolgate trust`: record that a person trusts the project's policy as it stands (every
//! policy file, by content); `trust status` (or `show`) says whether the policy is still the one
//! trusted and which files changed, were added or removed since; `trust revoke` forgets it.
//!
//! The records live in the trust folder (`TOOLGATE_TRUST_DIR`, else
//! `$XDG_STATE_HOME/toolgate/trust`, else `~/.local/state/toolgate/trust`), never in the project.

pub(crate) mod gate;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::policy::trust::{PolicyChanges, PolicySnapshot, TrustStore};
use crate::spec::load::LoadOptions;

pub use gate::TrustFlags;

/// Arguments of `toolgate trust`.
#[derive(Debug, Args)]
pub struct TrustArgs {
    #[command(subcommand)]
    action: Option<TrustAction>,
    /// The project folder (default: the current folder).
    #[arg(long, global = true, value_name = "DIR")]
    project: Option<PathBuf>,
    /// The project file (default: toolgate.yaml in the project folder).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum TrustAction {
    /// Whether the policy is trusted, and which files changed since (exit 1 when not trusted).
    #[command(alias = "show")]
    Status,
    /// Forget the trust of this project: `call`, `run` and `serve` refuse it until trusted again.
    Revoke,
}

/// Runs `toolgate trust`.
pub fn run(a: TrustArgs) -> miette::Result<u8> {
    let cwd = std::env::current_dir()
        .map_err(|e| miette::miette!("cannot read the current folder: {e}"))?;
    let dir = match &a.project {
        Some(p) => cwd.join(p),
        None => cwd,
    };
    let store = TrustStore::open_default().map_err(|e| {
        miette::miette!(
            help = "e.g. `export TOOLGATE_TRUST_DIR=$HOME/.local/state/toolgate/trust`",
            "{e}"
        )
    })?;
    let snapshot = current_policy(&dir, a.config.clone())?;
    match a.action {
        None => {
            let record = store.trust(&snapshot).map_err(|e| miette::miette!("{e}"))?;
            super::print(&format!(
                "trusted {} ({} file(s), policy {})\n",
                gate::shown(&record.project.display().to_string()),
                record.fingerprint.files.len(),
                short(&record.fingerprint.policy)
            ))?;
            Ok(super::EXIT_OK)
        }
        Some(TrustAction::Status) => status(&store, &snapshot),
        Some(TrustAction::Revoke) => {
            let had = store
                .revoke(&snapshot.root)
                .map_err(|e| miette::miette!("{e}"))?;
            super::print(&format!(
                "{} {}\n",
                if had {
                    "revoked the trust of"
                } else {
                    "nothing to revoke: never trusted:"
                },
                gate::shown(&snapshot.root.display().to_string())
            ))?;
            Ok(super::EXIT_OK)
        }
    }
}

fn status(store: &TrustStore, snapshot: &PolicySnapshot) -> miette::Result<u8> {
    let record = store
        .load(&snapshot.root)
        .map_err(|e| miette::miette!("{e}"))?;
    let root = gate::shown(&snapshot.root.display().to_string());
    let Some(record) = record else {
        let changes = PolicyChanges {
            added: snapshot
                .fingerprint
                .files
                .iter()
                .map(|f| f.path.clone())
                .collect(),
            ..PolicyChanges::default()
        };
        super::print(&format!(
            "{}\n",
            gate::describe(&snapshot.root, None, &changes)
        ))?;
        return Ok(super::EXIT_FINDINGS);
    };
    if record.fingerprint.policy == snapshot.fingerprint.policy {
        super::print(&format!(
            "trusted: {root} ({} file(s), policy {})\n",
            record.fingerprint.files.len(),
            short(&record.fingerprint.policy)
        ))?;
        return Ok(super::EXIT_OK);
    }
    let changes = snapshot.fingerprint.changes_since(&record.fingerprint);
    super::print(&format!(
        "{}\n",
        gate::describe(&snapshot.root, Some(&record), &changes)
    ))?;
    Ok(super::EXIT_FINDINGS)
}

/// The project's policy as it stands in `dir` (loading errors in the specs do not matter:
/// what is trusted is the files).
fn current_policy(dir: &Path, config: Option<PathBuf>) -> miette::Result<PolicySnapshot> {
    let loaded = crate::spec::load::load(&LoadOptions {
        paths: Vec::new(),
        config,
        cwd: dir.to_path_buf(),
    })
    .map_err(|e| miette::miette!("{e}"))?;
    let files = gate::policy_files(&loaded, dir).map_err(|e| miette::miette!("{e}"))?;
    let texts = gate::loaded_texts(&loaded, dir);
    gate::read_policy(&loaded.root, &files, &texts).map_err(|e| miette::miette!("{e}"))
}

/// Trusts the project `init` wrote in `root`: says so, or why not (init itself succeeded).
pub(crate) fn trust_new_project(root: &Path) {
    let outcome = TrustStore::open_default()
        .map_err(|e| e.to_string())
        .and_then(|store| {
            let snapshot = current_policy(root, None).map_err(|e| e.to_string())?;
            store.trust(&snapshot).map_err(|e| e.to_string())
        });
    match outcome {
        Ok(r) => eprintln!(
            "trusted the policy it wrote ({} file(s); `toolgate trust status`)",
            r.fingerprint.files.len()
        ),
        Err(e) => eprintln!("not trusted: {e}; run `toolgate trust` once that is fixed"),
    }
}

/// The first 12 hex digits of a hash: enough to tell two policies apart by eye.
fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}
