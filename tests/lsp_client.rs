//! `toolgate lsp` driven by a real LSP client over stdio: pytest-lsp runs `tests/lsp/test_lsp.py`
//! against the binary — diagnostics after open (the same codes and ranges as `toolgate lint`) and
//! after an unsaved edit (a project-wide finding included), hover on keys, values and rule codes,
//! completion of keys and enum values, and the suppress code action applied.
//!
//! Needs `python3` with pytest-lsp (`tests/requirements.txt`, which `scripts/test` installs into
//! its venv). Without it the test fails in CI and is skipped, with a line saying so, elsewhere
//! (`common::toolchain`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::toolchain::{Toolchain, require};

#[test]
fn pytest_lsp_drives_toolgate_lsp() {
    if !require(&[Toolchain::PytestLsp]) {
        return;
    }
    let tests = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/lsp");
    let out = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(tests.join("test_lsp.py"))
        .current_dir(&tests)
        .env("TOOLGATE_BIN", env!("CARGO_BIN_EXE_toolgate"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "pytest-lsp failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    // Every test ran: none skipped, none deselected.
    assert!(stdout.contains("5 passed"), "{stdout}");
}
