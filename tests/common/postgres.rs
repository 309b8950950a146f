//! A real PostgreSQL server for the tests of the PostgreSQL journal, and a database of its own
//! per test.
//!
//! With `TOOLGATE_TEST_POSTGRES` set to a superuser's URL (`postgres://postgres@127.0.0.1:5432/postgres`)
//! the tests use that server. Otherwise each test binary starts a private cluster once: `initdb`
//! (found on PATH or under `/usr/lib/postgresql/*/bin`, as Debian's `postgresql` package puts
//! it) into a temporary folder, then `postgres` on a free port of 127.0.0.1. As root it runs as
//! the `postgres` user (PostgreSQL refuses to run as root). The server is stopped, and its
//! folder removed, when the test binary ends: a shell beside it waits for its standard input,
//! which closes with the test process however that ends.
//!
//! Each test takes a [`TestDatabase`]: a database created for it and dropped (`WITH (FORCE)`)
//! when it goes out of scope. Without PostgreSQL a test is skipped outside CI and fails in CI
//! ([`super::toolchain::require`] with [`super::toolchain::Toolchain::Postgres`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable naming an existing server (a superuser's URL).
pub const SERVER_VAR: &str = "TOOLGATE_TEST_POSTGRES";

/// A running server: the URL of its maintenance database, as a superuser.
pub struct PostgresServer {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub admin_url: String,
    /// The private cluster's shell; its standard input is held open for the process's life.
    _keeper: Option<Mutex<(Child, ChildStdin)>>,
}

impl PostgresServer {
    /// The URL of database `name` on this server.
    pub fn url_of(&self, name: &str) -> String {
        match self.admin_url.rsplit_once('/') {
            Some((base, _)) => format!("{base}/{name}"),
            None => format!("{}/{name}", self.admin_url),
        }
    }

    /// Runs SQL on the maintenance database with `psql`, returning its unaligned output.
    pub fn psql(&self, sql: &str) -> Result<String, String> {
        psql(&self.admin_url, sql)
    }
}

/// Runs SQL with `psql` against `url`; its output (unaligned, tuples only) or the error.
pub fn psql(url: &str, sql: &str) -> Result<String, String> {
    let psql = find_binary("psql").ok_or("`psql` was not found")?;
    let out = Command::new(psql)
        .args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            url,
            "-c",
            sql,
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("psql cannot be run: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    } else {
        Err(format!(
            "psql `{sql}` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A database of one test, dropped with it.
pub struct TestDatabase {
    /// Its URL (`postgres://postgres@127.0.0.1:PORT/tg_test_…`).
    pub url: String,
    /// Its name.
    pub name: String,
    server: &'static PostgresServer,
}

impl TestDatabase {
    /// Runs SQL in this database with `psql`.
    pub fn psql(&self, sql: &str) -> Result<String, String> {
        psql(&self.url, sql)
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        if let Err(e) = self.server.psql(&sql) {
            let _ = writeln!(std::io::stderr(), "could not drop test database: {e}");
        }
    }
}

/// The server, started on first use; `Err` says why there is none.
pub fn server() -> Result<&'static PostgresServer, String> {
    static SERVER: OnceLock<Result<PostgresServer, String>> = OnceLock::new();
    SERVER.get_or_init(start).as_ref().map_err(Clone::clone)
}

/// A fresh database for the calling test, or `None` when the test is to be skipped (outside CI,
/// without PostgreSQL; in CI that fails instead).
pub fn database() -> Option<TestDatabase> {
    if !super::toolchain::require(&[super::toolchain::Toolchain::Postgres]) {
        return None;
    }
    let server = match server() {
        Ok(s) => s,
        Err(e) => panic!("PostgreSQL could not be started for the tests: {e}"),
    };
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "tg_test_{}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0)
    );
    if let Err(e) = server.psql(&format!("CREATE DATABASE \"{name}\"")) {
        panic!("cannot create the test database {name}: {e}");
    }
    Some(TestDatabase {
        url: server.url_of(&name),
        name,
        server,
    })
}

/// Whether a server can be had: named by [`SERVER_VAR`], or `initdb` and `postgres` found.
pub fn probe() -> Result<(), String> {
    if std::env::var_os(SERVER_VAR).is_some() {
        return Ok(());
    }
    for bin in ["initdb", "postgres", "psql"] {
        if find_binary(bin).is_none() {
            return Err(format!(
                "`{bin}` is not on PATH nor in /usr/lib/postgresql/*/bin, and {SERVER_VAR} is not set"
            ));
        }
    }
    if is_root() && postgres_user().is_none() {
        return Err("running as root and there is no `postgres` user to run the server as".into());
    }
    Ok(())
}

/// A PostgreSQL program: on PATH, else in the newest `/usr/lib/postgresql/*/bin`.
pub fn find_binary(name: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin").join(name)))
        .filter(|p| p.is_file())
        .collect();
    versions.sort();
    versions.pop()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The uid and gid of the `postgres` user.
fn postgres_user() -> Option<(u32, u32)> {
    let id = |flag: &str| -> Option<u32> {
        let o = Command::new("id").args([flag, "postgres"]).output().ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .flatten()
    };
    Some((id("-u")?, id("-g")?))
}

fn start() -> Result<PostgresServer, String> {
    if let Ok(url) = std::env::var(SERVER_VAR) {
        psql(&url, "SELECT 1").map_err(|e| format!("{SERVER_VAR}={url} does not answer: {e}"))?;
        return Ok(PostgresServer {
            admin_url: url,
            _keeper: None,
        });
    }
    probe()?;
    let initdb = find_binary("initdb").ok_or("no initdb")?;
    let postgres = find_binary("postgres").ok_or("no postgres")?;
    let dir = tempfile::Builder::new()
        .prefix("toolgate-pg-")
        .tempdir_in(std::env::temp_dir())
        .map_err(|e| format!("cannot make a folder for the cluster: {e}"))?
        .keep();
    let run_as = if is_root() {
        let (uid, gid) = postgres_user().ok_or("no postgres user")?;
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
            .map_err(|e| format!("cannot hand {} to postgres: {e}", dir.display()))?;
        Some("postgres")
    } else {
        None
    };
    let data = dir.join("data");
    let out = as_user(run_as, &initdb)
        .args(["-D"])
        .arg(&data)
        .args([
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("initdb cannot be run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))?;
    // The shell starts the server, then waits for its standard input to close (the test
    // process ended), stops the server quickly and removes the cluster.
    let script = format!(
        "'{postgres}' -D '{data}' -p {port} -k '{dir}' -c listen_addresses=127.0.0.1 \
         -c max_connections=300 -c fsync=off >'{dir}/log' 2>&1 & pid=$!; \
         cat >/dev/null; kill -INT $pid; wait $pid; rm -rf '{dir}'",
        postgres = postgres.display(),
        data = data.display(),
        dir = dir.display(),
    );
    let mut child = as_user(run_as, Path::new("sh"))
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start postgres: {e}"))?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let admin_url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match psql(&admin_url, "SELECT 1") {
            Ok(_) => break,
            Err(e) if Instant::now() > deadline => {
                let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
                return Err(format!("postgres did not answer within 60 s: {e}\n{log}"));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    Ok(PostgresServer {
        admin_url,
        _keeper: Some(Mutex::new((child, stdin))),
    })
}

/// `program` run as `user` (through `runuser`) or as this process's user.
fn as_user(user: Option<&str>, program: &Path) -> Command {
    match user {
        Some(user) => {
            let mut c = Command::new("runuser");
            c.args(["-u", user, "--"]).arg(program);
            c
        }
        None => Command::new(program),
    }
}
