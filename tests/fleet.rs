//! A fleet: two `toolgate serve --http` processes that share one journal, eight concurrent
//! clients of the official Python SDK (`tests/mcp/fleet_client.py`) holding different JWTs,
//! and one server killed with SIGKILL while non-idempotent calls are in flight on it.
//!
//! What must hold (tests/fixtures/fleet):
//! - per-principal permissions: the two clients whose token is not of the core team are denied
//!   `mark` on both servers, and their marks never happen;
//! - for the non-idempotent `mark`, 0 duplicates and 0 lost: every call's marker line is
//!   written at most once, every call a client saw succeed is on record as succeeded and its
//!   line is there, and a call cut off by the kill — sent again with its idempotency key to the
//!   surviving server — is settled there (unknown_outcome, when the killed server had started
//!   it), never run twice;
//! - conflicting writes are serialized across the two servers: `ledger` calls, which all write
//!   one resource, never overlap (a call cut off by the kill counts as inside until the kill).
//!
//! The journal is a parameter ([`fleet`]): the shared SQLite journal of one state folder with
//! the project's lock file, and a PostgreSQL database holding the journal and the locks of two
//! hosts with state folders of their own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use common::toolchain::{Toolchain, require};

const RESOURCE: &str = "https://fleet.test/mcp";
const ISSUER: &str = "https://idp.test";
/// Clients 0–5 are of the core team (they may mark); 6 and 7 are not.
const CLIENTS: usize = 8;
const CORE: usize = 6;
/// Marks per core client.
const CALLS: usize = 12;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// A token of the test issuer for client `sub` of `team`.
fn token(sub: &str, team: &str) -> String {
    let claims = json!({
        "iss": ISSUER, "sub": sub, "aud": RESOURCE, "exp": now_s() + 600, "iat": now_s(),
        "scope": "mcp", "client_id": "fleet-test", "team": team,
    });
    // The PEM's body is the PKCS#8 DER of the test-only key (its public half: jwks.json).
    let pem =
        std::fs::read_to_string(repo().join("tests/fixtures/serve_http/test-key.pem")).unwrap();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some("test-1".into());
    jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ed_der(&der)).unwrap()
}

/// A running `serve --http`, killed when dropped.
struct Server {
    child: Child,
    url: String,
    _stderr: mpsc::Receiver<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `serve --http 127.0.0.1:0` as host `name` (its tools see `FLEET_HOST=name`).
fn serve(name: &str, config: &Path, ws: &Path, state: &Path) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(config)
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .env("FLEET_HOST", name)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => {
                if let Some(i) = line.find("http://") {
                    let url = line[i..].split_whitespace().next().unwrap().to_owned();
                    return Server {
                        child,
                        url,
                        _stderr: rx,
                    };
                }
                seen.push(line);
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("serve --http printed no URL; stderr:\n{}", seen.join("\n"))
            }
        }
    }
}

/// The marker lines: (client, seq) → the hosts that ran it.
fn marks(ws: &Path) -> BTreeMap<(String, u64), Vec<String>> {
    let mut out: BTreeMap<(String, u64), Vec<String>> = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(ws.join("marks")) else {
        return out;
    };
    for e in dir {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap_or_default();
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            assert_eq!(f.len(), 3, "a marker line: {line:?}");
            out.entry((f[0].to_owned(), f[1].parse().unwrap()))
                .or_default()
                .push(f[2].to_owned());
        }
    }
    out
}

/// The ledger's visits from probe.log: (enter, leave or the kill, who, host).
fn ledger_visits(ws: &Path, killed_at: u128) -> Vec<(u128, u128, String, String)> {
    let text = std::fs::read_to_string(ws.join("probe.log")).unwrap_or_default();
    let mut open: BTreeMap<String, (u128, String)> = BTreeMap::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 4, "a probe line: {line:?}");
        let (who, at, host) = (f[1].to_owned(), f[2].parse::<u128>().unwrap(), f[3]);
        match f[0] {
            "enter" => {
                open.insert(format!("{who}@{host}"), (at, host.to_owned()));
            }
            "leave" => {
                let (start, host) = open.remove(&format!("{who}@{host}")).unwrap();
                out.push((start, at, who, host));
            }
            other => panic!("probe.log: {other}"),
        }
    }
    // Visits the kill cut short were inside until the kill.
    for (who, (start, host)) in open {
        assert_eq!(host, "a", "only the killed host leaves a visit open: {who}");
        out.push((start, killed_at, who, host));
    }
    out.sort();
    out
}

/// `toolgate journal list --operations` for `mark`: idempotency key → its operations' states.
fn journal_marks(config: &Path, state: &Path) -> BTreeMap<String, Vec<String>> {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["journal", "list", "--operations", "--tool", "mark"])
        .args(["--limit", "10000", "--format", "json", "--config"])
        .arg(config)
        .arg("--state-dir")
        .arg(state)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "journal list: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut by_key: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for r in rows {
        by_key
            .entry(r["idempotency_key"].as_str().unwrap_or("").to_owned())
            .or_default()
            .push(r["status"].as_str().unwrap().to_owned());
    }
    by_key
}

/// The fleet run on a journal: `journal_line` goes into toolgate.yaml (empty: the SQLite
/// journal of the state folder); with `shared_state` both servers use one state folder (the
/// SQLite journal and the lock file are files there), else each its own.
fn fleet(journal_line: &str, shared_state: bool) {
    if !require(&[Toolchain::PythonMcp]) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    let fixture = repo().join("tests/fixtures/fleet");
    let template = std::fs::read_to_string(fixture.join("toolgate.yaml.in")).unwrap();
    let config = project.path().join("toolgate.yaml");
    std::fs::write(&config, template.replace("{journal}", journal_line)).unwrap();
    std::fs::create_dir(project.path().join("specs")).unwrap();
    for spec in ["mark.yaml", "ledger.yaml"] {
        std::fs::copy(
            fixture.join("specs").join(spec),
            project.path().join("specs").join(spec),
        )
        .unwrap();
    }
    std::fs::copy(
        repo().join("tests/fixtures/serve_http/jwks.json"),
        project.path().join("jwks.json"),
    )
    .unwrap();
    let ws = project.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let (state_a, state_b) = if shared_state {
        (project.path().join("state"), project.path().join("state"))
    } else {
        (
            project.path().join("state-a"),
            project.path().join("state-b"),
        )
    };
    let mut a = serve("a", &config, &ws, &state_a);
    let b = serve("b", &config, &ws, &state_b);

    let tokens: BTreeMap<String, String> = (0..CLIENTS)
        .map(|i| {
            let team = if i < CORE { "core" } else { "ops" };
            (format!("c{i}"), token(&format!("c{i}"), team))
        })
        .collect();
    let core: Vec<String> = (0..CORE).map(|i| format!("c{i}")).collect();
    let run = format!("run{}", now_ns());
    let refused = project.path().join("refused");
    let started = Instant::now();
    let mut clients = Command::new("python3")
        .arg(repo().join("tests/mcp/fleet_client.py"))
        .args(["--a", &a.url, "--b", &b.url, "--tokens"])
        .arg(serde_json::to_string(&tokens).unwrap())
        .args(["--core", &core.join(","), "--calls", &CALLS.to_string()])
        .args(["--run", &run, "--refused"])
        .arg(&refused)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = clients.stdout.take().unwrap();
    let mut stderr = clients.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).unwrap();
        s
    });

    // Mid-run: once the clients are well under way (and the denied clients have tried both
    // servers), the moment server a has just begun a mark
    // (its tool sleeps 0.4 s after writing the line), kill it.
    let on_a = |m: &BTreeMap<(String, u64), Vec<String>>| {
        m.values().flatten().filter(|h| h.as_str() == "a").count()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let refusals_in = || {
        std::fs::read_to_string(&refused)
            .unwrap_or_default()
            .lines()
            .count()
            == CLIENTS - CORE
    };
    while marks(&ws).len() < 2 * CORE || !refusals_in() {
        assert!(Instant::now() < deadline, "the clients made no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
    let before = on_a(&marks(&ws));
    while on_a(&marks(&ws)) == before {
        assert!(Instant::now() < deadline, "server a began no further mark");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
    let killed_at = now_ns();
    a.child.kill().unwrap(); // SIGKILL
    a.child.wait().unwrap();

    let status = clients.wait().unwrap();
    let (stdout, stderr) = (out_reader.join().unwrap(), err_reader.join().unwrap());
    assert!(
        status.success(),
        "the Python clients failed ({status}):\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();

    // Server b ends cleanly (its journal is complete), then the journal is read.
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(b.child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let mut b = b;
    let ended = Instant::now();
    while b.child.try_wait().unwrap().is_none() {
        assert!(ended.elapsed() < Duration::from_secs(20), "b did not stop");
        std::thread::sleep(Duration::from_millis(20));
    }
    let journal = journal_marks(&config, &state_b);
    let marked = marks(&ws);

    // Per-principal permissions, on both servers.
    for i in CORE..CLIENTS {
        let c = &summary[format!("c{i}")];
        for server in ["a", "b"] {
            let refusal = c["refusals"][server].as_str().unwrap();
            assert!(
                refusal.contains("Only the core team marks"),
                "c{i} on {server}: {refusal}"
            );
        }
        assert!(!marked.keys().any(|(client, _)| client == &format!("c{i}")));
    }

    // The non-idempotent marks: at most once, none lost, the cut ones settled.
    let mut duplicates = Vec::new();
    for (call, hosts) in &marked {
        if hosts.len() > 1 {
            duplicates.push(format!("{call:?} ran on {hosts:?}"));
        }
    }
    assert_eq!(duplicates, Vec::<String>::new(), "0 duplicates");
    let (mut succeeded, mut cut, mut unknown) = (0, 0, 0);
    let mut lost = Vec::new();
    for i in 0..CORE {
        let client = format!("c{i}");
        let calls = summary[&client]["marks"].as_array().unwrap();
        assert_eq!(calls.len(), CALLS, "{client}: {summary}");
        for c in calls {
            let key = c["key"].as_str().unwrap();
            let seq = c["seq"].as_u64().unwrap();
            let line = marked.get(&(client.clone(), seq));
            let states = journal.get(key).cloned().unwrap_or_default();
            let result = if c["outcome"] == "cut" {
                cut += 1;
                c["retry"].as_str().unwrap()
            } else {
                c["outcome"].as_str().unwrap()
            };
            if result == "success" {
                succeeded += 1;
                // Seen to succeed: on record and done.
                if line.is_none() || states != ["success"] {
                    lost.push(format!("{key}: line {line:?}, journal {states:?}"));
                }
            } else {
                assert!(
                    c["outcome"] == "cut" && result.contains("UNKNOWN_OUTCOME"),
                    "{key}: a mark may end only in success, or UNKNOWN_OUTCOME after a cut: {c}"
                );
                unknown += 1;
                // Settled by the surviving server, and never run again (its line, if the
                // killed server got that far, is the only one: checked above).
                assert_eq!(states, ["unknown_outcome"], "{key}: {c}");
            }
        }
    }
    assert_eq!(lost, Vec::<String>::new(), "0 lost");
    assert!(cut >= 1, "the kill cut off at least one mark: {summary}");
    assert!(
        unknown >= 1,
        "at least one mark in flight on the killed server was settled unknown_outcome: {summary}"
    );
    assert_eq!(succeeded + unknown, CORE * CALLS);
    // Nothing is left started: the surviving server settled every operation it met.
    let unsettled: Vec<&String> = journal
        .iter()
        .filter(|(_, s)| s.iter().any(|s| s == "started"))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(unsettled, Vec::<&String>::new());

    // Conflicting writes, serialized across the two hosts.
    let visits = ledger_visits(&ws, killed_at);
    let hosts: BTreeSet<&str> = visits.iter().map(|v| v.3.as_str()).collect();
    assert_eq!(
        hosts,
        BTreeSet::from(["a", "b"]),
        "both hosts wrote the ledger"
    );
    let overlaps: Vec<String> = visits
        .windows(2)
        .filter(|w| w[1].0 < w[0].1)
        .map(|w| format!("{} ({}) / {} ({})", w[0].2, w[0].3, w[1].2, w[1].3))
        .collect();
    assert_eq!(overlaps, Vec::<String>::new(), "ledger visits overlap");
    for i in 0..CLIENTS {
        for r in summary[format!("c{i}")]["ledger"].as_array().unwrap() {
            assert!(r == "success" || r == "cut", "c{i} ledger: {r}");
        }
    }
    eprintln!(
        "fleet: {succeeded} marks succeeded, {cut} cut by the kill ({unknown} settled unknown_outcome), {} ledger visits, {:.1} s",
        visits.len(),
        started.elapsed().as_secs_f64()
    );
}

/// Two servers on one host: the shared SQLite journal and the project's lock file, both in one
/// state folder.
#[test]
fn two_servers_share_a_sqlite_journal_through_a_kill() {
    fleet("", true);
}

/// Two hosts: separate state folders, one PostgreSQL database — the journal, and (taken by
/// default with a PostgreSQL journal) the resource locks; the database is all they share.
#[test]
fn two_servers_share_a_postgres_journal_through_a_kill() {
    let Some(db) = common::postgres::database() else {
        return;
    };
    // A short lease, so that the survivor learns of the kill within a second or two.
    fleet(
        &format!("journal: {{url: \"{}\", lease: 1s}}", db.url),
        false,
    );
}
