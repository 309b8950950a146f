//! A journal that cannot be used is an engine error that says why — corrupted, another
//! application's database, held exclusively by a toolgate that does not share journals,
//! locked by another process, an unwritable state folder, a newer schema — and never a silent
//! fresh start: the file is left byte for byte as it was. Runtimes that share it (in one
//! process or several) are not an error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::toolchain::{Toolchain, require};
use common::{Fixture, repo};
use pretty_assertions::assert_eq;
use toolgate::runtime::extend::JournalError;
use toolgate::runtime::{BuildError, RuntimeBuilder};
use toolgate::runtime::{
    JOURNAL_FILE, JournalReader, SCHEMA_VERSION, SqliteJournal, SqliteOptions,
};

fn journal_in(dir: &Path) -> PathBuf {
    dir.join(JOURNAL_FILE)
}

/// A new journal, closed again.
fn existing_journal(dir: &Path) -> PathBuf {
    let path = journal_in(dir);
    drop(SqliteJournal::open(&path).unwrap());
    path
}

fn hash(path: &Path) -> String {
    blake3::hash(&std::fs::read(path).unwrap())
        .to_hex()
        .to_string()
}

/// `toolgate journal list` on a state folder: exit code and stderr.
fn cli_list(state: &Path) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["journal", "list", "--state-dir"])
        .arg(state)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8(o.stderr).unwrap())
}

/// `toolgate call echo` with a state folder: exit code and stderr.
fn cli_call(state: &Path, ws: &Path) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["call", "echo", "--args", r#"{"text": "hi"}"#, "--config"])
        .arg(repo().join("tests/fixtures/runtime/toolgate.yaml"))
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8(o.stderr).unwrap())
}

#[test]
fn a_corrupted_journal_is_an_error_and_stays_as_it_was() {
    let f = Fixture::new();
    let path = journal_in(f.state.path());
    std::fs::write(&path, vec![0x5a; 8192]).unwrap();
    let before = hash(&path);
    let e = SqliteJournal::open(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{} is damaged or not a toolgate journal (file is not a database); it was left untouched: restore it from a backup, or move it aside to start a new journal",
            path.display()
        )
    );
    assert!(matches!(e, JournalError::Corrupt { .. }));
    assert!(matches!(
        JournalReader::open(&path).unwrap_err(),
        JournalError::Corrupt { .. }
    ));
    let (code, stderr) = cli_call(f.state.path(), f.path());
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("is damaged or not a toolgate journal"),
        "{stderr}"
    );
    assert_eq!(hash(&path), before, "the file was changed");

    // Damage inside a real journal is found by the integrity check.
    let g = Fixture::new();
    let path = existing_journal(g.state.path());
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() >= 3 * 4096, "{} bytes", bytes.len());
    for b in &mut bytes[4096..3 * 4096] {
        *b = 0xff;
    }
    std::fs::write(&path, &bytes).unwrap();
    let e = SqliteJournal::open(&path).unwrap_err();
    assert!(matches!(e, JournalError::Corrupt { .. }), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn another_applications_database_is_not_taken_over() {
    let f = Fixture::new();
    let path = journal_in(f.state.path());
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('keep me');")
        .unwrap();
    let before = hash(&path);
    let e = SqliteJournal::open(&path).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{} is damaged or not a toolgate journal (a SQLite database of another application (application_id 0x0, 1 tables)); it was left untouched: restore it from a backup, or move it aside to start a new journal",
            path.display()
        )
    );
    assert_eq!(hash(&path), before);
}

#[test]
fn a_journal_is_shared_but_an_exclusive_holder_is_refused() {
    let f = Fixture::new();
    let path = journal_in(f.state.path());
    // Several runtimes share a journal: in this process, and the command line beside them.
    let held = SqliteJournal::open(&path).unwrap();
    let second = SqliteJournal::open(&path).unwrap();
    assert_ne!(held.owner(), second.owner());
    assert_eq!(cli_call(f.state.path(), f.path()), (Some(0), String::new()));
    assert_eq!(cli_list(f.state.path()), (Some(0), String::new()));
    drop((held, second));

    // A toolgate from before shared journals holds the lock file exclusively, with its pid in
    // it: neither writes while the other has the journal.
    let mut old = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(f.state.path().join("journal.db.lock"))
        .unwrap();
    old.lock().unwrap();
    write!(old, "4242").unwrap();
    let expected = format!(
        "{} is held exclusively by another process (pid 4242), a toolgate that does not share its journal: stop it or upgrade it, or give this one another state folder",
        path.display()
    );
    let e = SqliteJournal::open(&path).unwrap_err();
    assert!(matches!(e, JournalError::InUse { .. }));
    assert_eq!(e.to_string(), expected);
    assert_eq!(
        cli_call(f.state.path(), f.path()),
        (Some(2), format!("toolgate: {expected}\n"))
    );
    // Reading while it is held is fine.
    assert_eq!(cli_list(f.state.path()), (Some(0), String::new()));
    drop(old);
    assert_eq!(cli_call(f.state.path(), f.path()).0, Some(0));
}

#[test]
fn a_database_lock_held_by_another_process_times_out_with_an_error() {
    if !require(&[Toolchain::Sqlite3]) {
        return;
    }
    let f = Fixture::new();
    let path = existing_journal(f.state.path());
    let mut sqlite = Command::new("sqlite3")
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = sqlite.stdin.take().unwrap();
    writeln!(
        stdin,
        "PRAGMA locking_mode=EXCLUSIVE;\nBEGIN EXCLUSIVE;\nSELECT 'locked';"
    )
    .unwrap();
    // sqlite3 prints the locking mode, then `locked` once it holds the lock.
    let mut out = BufReader::new(sqlite.stdout.take().unwrap());
    let mut line = String::new();
    while line.trim() != "locked" {
        line.clear();
        assert_ne!(out.read_line(&mut line).unwrap(), 0, "sqlite3 ended early");
    }
    let opts = SqliteOptions {
        busy_timeout: Duration::from_millis(200),
        ..SqliteOptions::default()
    };
    let e = SqliteJournal::open_with(&path, opts).unwrap_err();
    assert!(
        matches!(&e, JournalError::Locked { waited_ms: 200, .. }),
        "{e}"
    );
    assert!(
        e.to_string().starts_with(&format!(
            "{} is locked by another process and stayed locked for 200 ms (",
            path.display()
        )),
        "{e}"
    );
    drop(stdin);
    sqlite.wait().unwrap();
    drop(SqliteJournal::open(&path).unwrap());
}

/// Makes a folder unwritable even for root (chattr +i), undone on drop.
struct Immutable(PathBuf);

impl Immutable {
    fn new(dir: &Path) -> Option<Self> {
        let ok = Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Immutable(dir.to_path_buf()))
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
fn an_unwritable_state_folder_is_an_error() {
    let f = Fixture::new();
    // A state folder below a regular file cannot be created.
    std::fs::write(f.state.path().join("file"), "").unwrap();
    let state = f.state.path().join("file/.toolgate");
    let e = SqliteJournal::open(journal_in(&state)).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "the journal cannot be written in {}: Not a directory (os error 20)",
            state.display()
        )
    );
    let b = RuntimeBuilder::from_bundle(common::bundle(), env!("CARGO_MANIFEST_DIR"))
        .workspace(f.path())
        .state_dir(&state)
        .sqlite_journal()
        .build();
    assert!(matches!(
        b,
        Err(BuildError::Journal(JournalError::Unwritable { .. }))
    ));

    // An existing folder that cannot be written (read-only for everyone, root included).
    let ro = f.state.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let guard = Immutable::new(&ro);
    if guard.is_none() {
        println!("chattr +i is not available here; the read-only folder case is not run");
        return;
    }
    let e = SqliteJournal::open(journal_in(&ro)).unwrap_err();
    assert!(matches!(e, JournalError::Unwritable { .. }), "{e}");
    let (code, stderr) = cli_call(&ro, f.path());
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("the journal cannot be written in"),
        "{stderr}"
    );
    assert!(
        std::fs::read_dir(&ro).unwrap().next().is_none(),
        "nothing was created"
    );
}

#[test]
fn a_journal_from_a_newer_toolgate_is_refused() {
    let f = Fixture::new();
    let path = existing_journal(f.state.path());
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("INSERT INTO schema_migrations (version, applied_at, toolgate) VALUES (99, '2030-01-01T00:00:00Z', '9.0.0');")
        .unwrap();
    let before = hash(&path);
    let expected = format!(
        "{} has journal schema version 99, newer than this toolgate reads (up to {SCHEMA_VERSION}); upgrade toolgate to use it",
        path.display()
    );
    assert_eq!(
        SqliteJournal::open(&path).unwrap_err().to_string(),
        expected
    );
    assert_eq!(
        JournalReader::open(&path).unwrap_err().to_string(),
        expected
    );
    assert_eq!(
        cli_list(f.state.path()),
        (Some(2), format!("toolgate: {expected}\n"))
    );
    assert_eq!(hash(&path), before);
}

#[test]
fn reading_a_missing_journal_creates_nothing() {
    let f = Fixture::new();
    let path = journal_in(f.state.path());
    assert_eq!(
        JournalReader::open(&path).unwrap_err().to_string(),
        format!(
            "there is no journal at {} (no call has been journaled there)",
            path.display()
        )
    );
    assert!(!path.exists());
}
