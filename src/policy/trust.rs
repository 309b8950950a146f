//! Where a person's trust in a project's policy is recorded: a folder of the user's own state,
//! outside every workspace, which no tool may write (command tools see it read-only).

use std::path::PathBuf;

/// The environment variable that moves the trust store (tests, shared machines).
pub const TRUST_DIR_ENV: &str = "TOOLGATE_TRUST_DIR";

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
