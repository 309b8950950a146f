//! Trust, as direnv's `allow` and mise's `trust`: the policy a runtime obeys is one a person
//! trusted. `toolgate trust` records the content fingerprint of every policy file
//! ([`Fingerprint`]) in the user's own state ([`trust_dir`]), outside every workspace, with a
//! content-addressed snapshot of the files ([`TrustStore`]) so that a changed policy can be
//! compared with the one trusted. In CI the trusted policy is the committed one
//! ([`differences_from_git`]).
//!
//! Whoever starts toolgate is trusted, the files are not: the flags and [`TRUST_POLICY_ENV`] /
//! [`TRUST_GIT_ENV`] come from the person, harness or CI job, and command tools never see any
//! `TOOLGATE_TRUST_*` variable ([`is_trust_env`]), so nothing a tool does changes how a later
//! run is started.

pub mod fingerprint;
pub mod git;
pub mod store;

use std::path::PathBuf;

pub use fingerprint::{Fingerprint, PolicyChanges, PolicyFile, PolicySnapshot};
pub use git::{GitDifference, differences_from_git};
pub use store::{TrustRecord, TrustStore};

/// The environment variable that moves the trust store (tests, shared machines).
pub const TRUST_DIR_ENV: &str = "TOOLGATE_TRUST_DIR";
/// The environment variable of `--trust-git REV`: the trusted policy is the one committed at REV.
pub const TRUST_GIT_ENV: &str = "TOOLGATE_TRUST_GIT";
/// The environment variable of `--trust-policy` (`1`): the policy as it stands at start-up is
/// trusted for this run.
pub const TRUST_POLICY_ENV: &str = "TOOLGATE_TRUST_POLICY";
/// What every trust variable's name starts with; none reaches a command tool.
pub const TRUST_ENV_PREFIX: &str = "TOOLGATE_TRUST_";

/// Whether an environment variable decides trust (and so must never reach a tool's process).
pub fn is_trust_env(name: &str) -> bool {
    name.to_ascii_uppercase().starts_with(TRUST_ENV_PREFIX)
}

/// The folder trust records live in: `$TOOLGATE_TRUST_DIR`, else `$XDG_STATE_HOME/toolgate/trust`,
/// else `$HOME/.local/state/toolgate/trust`; `None` when none of them is set to an absolute path.
pub fn trust_dir() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(dir) = absolute(TRUST_DIR_ENV) {
        return Some(dir);
    }
    if let Some(state) = absolute("XDG_STATE_HOME") {
        return Some(state.join("toolgate").join("trust"));
    }
    absolute("HOME").map(|home| home.join(".local/state/toolgate/trust"))
}

/// Why trust could not be read, recorded or checked.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// No folder for trust records: none of the variables [`trust_dir`] reads is set.
    #[error(
        "no folder for trust records: set {TRUST_DIR_ENV} (or XDG_STATE_HOME, or HOME) to an absolute folder outside the workspace"
    )]
    NoTrustDir,
    /// A policy file or a record could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A record or snapshot could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A record is not what `toolgate trust` writes.
    #[error("{path} is not a trust record: {message}")]
    Record {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// git failed, is missing, or does not know the revision.
    #[error("git: {0}")]
    Git(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_variables_are_recognised_in_any_case() {
        assert!(is_trust_env("TOOLGATE_TRUST_POLICY"));
        assert!(is_trust_env("toolgate_trust_git"));
        assert!(!is_trust_env("TOOLGATE_JOURNAL"));
        assert!(!is_trust_env("TOOLGATE_TRUS"));
    }
}
