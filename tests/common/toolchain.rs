//! Toolchains from outside Rust that some tests need: Python packages, Go, Node.js and the jest
//! fixture's `node_modules`, git, the sqlite3 shell, PostgreSQL.
//!
//! `scripts/test` (the README's test command) provides what it can without root: a venv under
//! `target/test-env/` with `tests/requirements.txt`, first on PATH, and `npm ci` for the jest
//! fixture when npm is present. A test whose toolchain is still absent appends a record to the
//! file named by `TOOLGATE_TEST_SKIPS` (set by `scripts/test`, which lists them in its summary);
//! outside CI it then prints one line and returns (a skip), and in CI (`CI` set) it fails:
//! `.ci/run` installs every toolchain.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Something a test needs from outside the Rust toolchain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Toolchain {
    /// `python3` with pytest (run_tests' pytest runner).
    Pytest,
    /// `python3` with the official MCP SDK and jsonschema.
    PythonMcp,
    /// `python3 -m mcp_server_git`, the reference MCP git server.
    McpServerGit,
    /// `python3` with pytest-lsp (a real LSP client for `toolgate lsp`).
    PytestLsp,
    /// `go` (the Go fixture's test tool).
    Go,
    /// `node` (the jest fixture's test tool).
    Node,
    /// jest in `tests/fixtures/tests/jest_project/node_modules` (from `npm ci`; require
    /// [`Toolchain::Node`] first, so that a missing `node` is reported as such).
    Jest,
    /// `git`.
    Git,
    /// The `sqlite3` shell (a second process holding the journal's lock).
    Sqlite3,
    /// A PostgreSQL server: `TOOLGATE_TEST_POSTGRES`, or `initdb` and `postgres` to start one
    /// (`super::postgres`).
    Postgres,
}

impl Toolchain {
    /// Its name in skip lines and in the summary of `scripts/test`.
    pub fn name(self) -> &'static str {
        match self {
            Toolchain::Pytest => "pytest",
            Toolchain::PythonMcp => "python-mcp",
            Toolchain::McpServerGit => "mcp-server-git",
            Toolchain::PytestLsp => "pytest-lsp",
            Toolchain::Go => "go",
            Toolchain::Node => "node",
            Toolchain::Jest => "jest",
            Toolchain::Git => "git",
            Toolchain::Sqlite3 => "sqlite3",
            Toolchain::Postgres => "postgresql",
        }
    }

    /// How to provide it.
    pub fn install(self) -> &'static str {
        match self {
            Toolchain::Pytest
            | Toolchain::PythonMcp
            | Toolchain::McpServerGit
            | Toolchain::PytestLsp => {
                "run scripts/test, which installs tests/requirements.txt into a venv under \
                 target/test-env/ (Debian needs python3-venv)"
            }
            Toolchain::Go => "install Go (Debian: apt-get install golang-go)",
            Toolchain::Node => "install Node.js and npm (Debian: apt-get install nodejs npm)",
            Toolchain::Jest => {
                "run scripts/test with npm on PATH (npm ci --prefix tests/fixtures/tests/jest_project)"
            }
            Toolchain::Git => "install git (Debian: apt-get install git)",
            Toolchain::Sqlite3 => "install the sqlite3 shell (Debian: apt-get install sqlite3)",
            Toolchain::Postgres => {
                "install PostgreSQL (Debian: apt-get install postgresql), or set \
                 TOOLGATE_TEST_POSTGRES to a superuser's URL of a running server"
            }
        }
    }

    /// Whether it is there, with what was missing when it is not.
    fn probe(self) -> Result<(), String> {
        let python = |code: &str| {
            let out = Command::new("python3")
                .args(["-c", code])
                .stdin(Stdio::null())
                .output()
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => "`python3` is not on PATH".to_owned(),
                    _ => format!("`python3` cannot be run ({e})"),
                })?;
            if out.status.success() {
                Ok(())
            } else {
                let err = String::from_utf8_lossy(&out.stderr);
                Err(err.lines().last().unwrap_or("").trim().to_owned())
            }
        };
        match self {
            Toolchain::Pytest => python("import pytest"),
            Toolchain::PythonMcp => python("import mcp, jsonschema, anyio"),
            Toolchain::McpServerGit => python("import mcp_server_git"),
            Toolchain::PytestLsp => python("import pytest_lsp, lsprotocol"),
            Toolchain::Go => runs("go", "version"),
            Toolchain::Node => runs("node", "--version"),
            Toolchain::Jest => {
                let jest = jest_bin();
                if jest.is_file() {
                    Ok(())
                } else {
                    Err(format!("{} does not exist", jest.display()))
                }
            }
            Toolchain::Git => runs("git", "--version"),
            Toolchain::Sqlite3 => runs("sqlite3", "--version"),
            Toolchain::Postgres => super::postgres::probe(),
        }
    }
}

/// jest's entry point in the jest fixture.
pub fn jest_bin() -> PathBuf {
    super::repo().join("tests/fixtures/tests/jest_project/node_modules/jest/bin/jest.js")
}

fn runs(program: &str, arg: &str) -> Result<(), String> {
    match Command::new(program).arg(arg).stdin(Stdio::null()).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("`{program} {arg}` failed ({})", o.status)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("`{program}` is not on PATH"))
        }
        Err(e) => Err(format!("`{program}` cannot be run ({e})")),
    }
}

/// Whether this is a CI run, where nothing may be skipped: `CI` set to anything but empty,
/// `0` or `false`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// Whether every one of `needs` is there. When one is not, it is recorded for the summary of
/// `scripts/test`; then in CI the test fails with what to install, and otherwise the skip is
/// printed (on the real stderr, so plain `cargo test` shows it) and the test should return:
///
/// ```ignore
/// if !common::toolchain::require(&[Toolchain::Go]) {
///     return;
/// }
/// ```
#[must_use]
pub fn require(needs: &[Toolchain]) -> bool {
    let test = test_name();
    for &need in needs {
        let Err(why) = need.probe() else { continue };
        record(&test, need);
        if in_ci() {
            panic!(
                "{test} needs {}, which is absent here: {why}\n{} (CI installs it: .ci/run)",
                need.name(),
                need.install()
            );
        }
        let line = format!(
            "skipped {test}: {} is absent ({why}); {} (CI runs it)\n",
            need.name(),
            need.install()
        );
        // Straight to stderr rather than through eprintln!, which the test harness captures.
        let _ = std::io::stderr().write_all(line.as_bytes());
        return false;
    }
    true
}

fn test_name() -> String {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("?");
    format!("{}::{name}", env!("CARGO_CRATE_NAME"))
}

/// Appends `toolchain<TAB>test<TAB>how to install` to the file named by `TOOLGATE_TEST_SKIPS`,
/// if any.
fn record(test: &str, need: Toolchain) {
    let Some(path) = std::env::var_os("TOOLGATE_TEST_SKIPS") else {
        return;
    };
    let record = format!("{}\t{test}\t{}\n", need.name(), need.install());
    // One write to a file opened for appending: records of parallel tests do not interleave.
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(record.as_bytes()));
    if let Err(e) = appended {
        let _ = writeln!(
            std::io::stderr(),
            "cannot record the skipped test in {}: {e}",
            PathBuf::from(path).display()
        );
    }
}
