//! `toolgate serve --http` as a real process (tests/fixtures/serve_http): refused bearer tokens
//! get the status and `WWW-Authenticate` challenge the MCP authorization spec asks for; the
//! health and RFC 9728 metadata endpoints answer; without `serve.auth` only loopback is served;
//! SIGTERM ends the server cleanly; and two (three) clients of the official Python SDK with
//! different tokens see and may call different tools, a rule on `principal` deciding too, with
//! the principal in the audit.
//!
//! The tokens are signed here with the fixture's test-only Ed25519 key (`test-key.pem`; its
//! public half is `jwks.json`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

use common::toolchain::{Toolchain, require};

const RESOURCE: &str = "https://tools.test/mcp";
const ISSUER: &str = "https://idp.test";
const METADATA: &str = "https://tools.test/.well-known/oauth-protected-resource/mcp";

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/serve_http")
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims of a good token for `sub`, with these scopes.
fn claims(sub: &str, scope: &str) -> Value {
    json!({
        "iss": ISSUER,
        "sub": sub,
        "aud": RESOURCE,
        "exp": now() + 600,
        "iat": now(),
        "scope": scope,
        "client_id": "test-agent",
    })
}

fn sign_with(key: &str, claims: &Value) -> String {
    sign_as(key, "test-1", claims)
}

/// Signs with a fixture key, naming key id `kid` in the header.
fn sign_as(key: &str, kid: &str, claims: &Value) -> String {
    // The PEM's body is the PKCS#8 DER of the key.
    let pem = std::fs::read_to_string(fixture().join(key)).unwrap();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(kid.into());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_ed_der(&der)).unwrap()
}

fn sign(claims: &Value) -> String {
    sign_with("test-key.pem", claims)
}

/// A running `serve --http`, killed when dropped.
struct Server {
    child: Child,
    base: String,
    _stderr: mpsc::Receiver<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `serve --http 127.0.0.1:0` on a config and a workspace; waits for its URL.
fn start(config: &Path, ws: &Path) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(config)
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(ws.join(".state"))
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
                    let base = url.trim_end_matches("/mcp").to_owned();
                    return Server {
                        child,
                        base,
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

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// POSTs `initialize` with this Authorization header (if any): status and WWW-Authenticate.
fn initialize(s: &Server, authorization: Option<&str>) -> (u16, Option<String>) {
    let mut req = agent()
        .post(format!("{}/mcp", s.base))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    if let Some(a) = authorization {
        req = req.header("Authorization", a);
    }
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "serve_http.rs", "version": "1"}}
    });
    let resp = req.send(body.to_string()).unwrap();
    let challenge = resp
        .headers()
        .get("www-authenticate")
        .map(|h| h.to_str().unwrap().to_owned());
    (resp.status().as_u16(), challenge)
}

#[test]
fn refused_tokens_get_the_right_status_and_challenge() {
    let ws = tempfile::tempdir().unwrap();
    let s = start(&fixture().join("toolgate.yaml"), ws.path());
    let bearer = |t: &str| format!("Bearer {t}");
    let with = |f: &dyn Fn(&mut Value)| {
        let mut c = claims("alice", "mcp tools:read");
        f(&mut c);
        sign(&c)
    };
    let b64 = |v: &Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
    };
    let alg_none = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "JWT"})),
        b64(&claims("alice", "mcp"))
    );
    let hs256 = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims("alice", "mcp"),
        &EncodingKey::from_secret(b"a shared secret the server never agreed to").unwrap(),
    )
    .unwrap();
    let invalid = [
        (
            "expired",
            "it has expired",
            with(&|c| {
                c["exp"] = json!(now() - 3600);
            }),
        ),
        (
            "not yet valid",
            "not valid yet",
            with(&|c| {
                c["nbf"] = json!(now() + 3600);
            }),
        ),
        (
            "wrong audience",
            "its audience is not this server's resource",
            with(&|c| {
                c["aud"] = json!("https://other.test/mcp");
            }),
        ),
        (
            "no audience",
            "no `aud` claim",
            with(&|c| {
                c.as_object_mut().unwrap().remove("aud");
            }),
        ),
        (
            "wrong issuer",
            "its issuer is not one this server accepts",
            with(&|c| {
                c["iss"] = json!("https://evil.test");
            }),
        ),
        (
            "bad signature",
            "signature does not verify",
            sign_with("other-key.pem", &claims("alice", "mcp")),
        ),
        ("alg none", "`none` is never accepted", alg_none),
        ("HS256", "must be signed with a public-key algorithm", hs256),
        ("not a JWT", "not a JWS header", "not-a-token".to_owned()),
    ];
    for (what, why, token) in &invalid {
        let (status, challenge) = initialize(&s, Some(&bearer(token)));
        assert_eq!(status, 401, "{what}: status");
        let c = challenge.unwrap_or_else(|| panic!("{what}: no WWW-Authenticate"));
        assert!(
            c.starts_with("Bearer error=\"invalid_token\""),
            "{what}: {c}"
        );
        assert!(
            c.contains(&format!("resource_metadata=\"{METADATA}\"")),
            "{what}: {c}"
        );
        assert!(c.contains(why), "{what}: {c}");
    }

    // No token at all: 401 naming the metadata (and the scope needed), no error code.
    for missing in [None, Some("Basic YWxpY2U6cHc="), Some("Bearer ")] {
        let (status, challenge) = initialize(&s, missing);
        assert_eq!(status, 401, "{missing:?}");
        assert_eq!(
            challenge.as_deref(),
            Some(format!("Bearer resource_metadata=\"{METADATA}\", scope=\"mcp\"").as_str()),
            "{missing:?}"
        );
    }

    // A good token without the scope every token needs: 403 insufficient_scope.
    let (status, challenge) = initialize(&s, Some(&bearer(&sign(&claims("alice", "tools:read")))));
    assert_eq!(status, 403);
    let c = challenge.unwrap();
    assert!(
        c.starts_with("Bearer error=\"insufficient_scope\", scope=\"mcp\""),
        "{c}"
    );

    // And a good one is let in.
    let (status, challenge) = initialize(&s, Some(&bearer(&sign(&claims("alice", "mcp")))));
    assert_eq!(status, 200);
    assert_eq!(challenge, None);
}

#[test]
fn health_and_protected_resource_metadata() {
    let ws = tempfile::tempdir().unwrap();
    let s = start(&fixture().join("toolgate.yaml"), ws.path());
    let a = agent();
    let mut r = a.get(format!("{}/healthz", s.base)).call().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let body: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(body, json!({"status": "ok"}));
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let mut r = a.get(format!("{}{path}", s.base)).call().unwrap();
        assert_eq!(r.status().as_u16(), 200, "{path}");
        let m: Value = serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        assert_eq!(m["resource"], RESOURCE);
        assert_eq!(m["authorization_servers"], json!([ISSUER]));
        assert_eq!(m["bearer_methods_supported"], json!(["header"]));
        assert_eq!(
            m["scopes_supported"],
            json!(["mcp", "tools:read", "tools:write"])
        );
    }
}

#[test]
fn without_auth_only_loopback_is_served_and_sigterm_stops_cleanly() {
    let config = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp/toolgate.yaml");
    let ws = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--http", "0.0.0.0:0", "--config"])
        .arg(&config)
        .arg("--workspace")
        .arg(ws.path())
        .arg("--state-dir")
        .arg(ws.path().join(".state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("without authentication; configure `serve.auth` in toolgate.yaml"),
        "{stderr}"
    );

    let mut s = start(&config, ws.path());
    let mut r = agent().get(format!("{}/healthz", s.base)).call().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let _ = r.body_mut().read_to_string();
    // No auth: the metadata endpoint says so, and MCP needs no token.
    let r = agent()
        .get(format!("{}/.well-known/oauth-protected-resource", s.base))
        .call()
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    assert_eq!(initialize(&s, None).0, 200);

    rustix::process::kill_process(
        rustix::process::Pid::from_raw(s.child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = s.child.try_wait().unwrap() {
            assert!(status.success(), "serve --http ended with {status}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "serve --http did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Three Python SDK clients at once: alice (core team, may write), bob (reads only), carol
/// (may write by scope, but not by the team rule).
#[test]
fn python_sdk_clients_with_different_tokens_get_their_own_permissions() {
    if !require(&[Toolchain::PythonMcp]) {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("readme.txt"), "shared notes live here\n").unwrap();
    let s = start(&fixture().join("toolgate.yaml"), ws.path());
    let token = |sub: &str, scope: &str, team: &str| {
        let mut c = claims(sub, scope);
        c["team"] = json!(team);
        sign(&c)
    };
    let out = Command::new("python3")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/http_principals.py"))
        .arg("--url")
        .arg(format!("{}/mcp", s.base))
        .arg("--alice")
        .arg(token("alice", "mcp tools:read tools:write", "core"))
        .arg("--bob")
        .arg(token("bob", "mcp tools:read", "core"))
        .arg("--carol")
        .arg(token("carol", "mcp tools:read tools:write", "ops"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python clients failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(summary["alice"]["tools"], json!(["read_file", "team_note"]));
    assert_eq!(summary["bob"]["tools"], json!(["read_file"]));
    assert_eq!(summary["carol"]["tools"], json!(["read_file", "team_note"]));
    assert_eq!(summary["alice"]["write"], "success");
    assert!(
        summary["bob"]["write"]
            .as_str()
            .unwrap()
            .contains("UNKNOWN_TOOL"),
        "{summary}"
    );
    assert!(
        summary["carol"]["write"]
            .as_str()
            .unwrap()
            .contains("Only the core team writes notes"),
        "{summary}"
    );
    for who in ["alice", "bob", "carol"] {
        assert_eq!(summary[who]["read"], "success", "{who}: {summary}");
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes/alice.md")).unwrap(),
        "from alice\n"
    );
    assert!(!ws.path().join("notes/carol.md").exists());

    // The audit names who called.
    drop(s);
    let db = rusqlite::Connection::open(ws.path().join(".state/journal.db")).unwrap();
    let mut st = db
        .prepare("SELECT tool, status, trace, principal FROM audit ORDER BY seq")
        .unwrap();
    let rows: Vec<(String, String, String, Option<String>)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let principal_of = |tool: &str, status: &str| -> Vec<String> {
        rows.iter()
            .filter(|(t, s, _, _)| t == tool && s == status)
            .map(|(_, _, trace, column)| {
                let v: Value = serde_json::from_str(trace).unwrap();
                let traced = v["principal"].as_str().unwrap_or("").to_owned();
                assert_eq!(column.as_deref(), Some(traced.as_str()));
                traced
            })
            .collect()
    };
    assert_eq!(
        principal_of("team_note", "success"),
        vec![format!("alice@{ISSUER}")]
    );
    assert_eq!(
        principal_of("team_note", "denied"),
        vec![format!("carol@{ISSUER}")]
    );
}

/// A JWK Set served over HTTP: the server fetches it at startup, and again at once when a token
/// names a key id it does not hold (a rotated key) — but not again for another unknown id within
/// 30 s.
#[test]
fn jwks_from_a_url_is_fetched_again_for_a_rotated_key() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let jwks = Arc::new(Mutex::new(
        std::fs::read_to_string(fixture().join("jwks.json")).unwrap(),
    ));
    let fetches = Arc::new(AtomicUsize::new(0));
    {
        let (jwks, fetches) = (jwks.clone(), fetches.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let mut buf = [0u8; 4096];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                fetches.fetch_add(1, Ordering::SeqCst);
                let body = jwks.lock().unwrap().clone();
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
    }
    let project = tempfile::tempdir().unwrap();
    // `specs:` globs stay inside the project: the spec is copied in.
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tool-specs/read_file.yaml"),
        project.path().join("read_file.yaml"),
    )
    .unwrap();
    let read_file = "read_file.yaml";
    std::fs::write(
        project.path().join("toolgate.yaml"),
        format!(
            "specs: [{read_file:?}]
workspace: .
toolsets:
  served: {{tools: [read_file]}}
serve:
  toolset: served
  auth:
    resource: {RESOURCE}
    issuers:
      - {{issuer: {ISSUER:?}, jwks_url: \"http://127.0.0.1:{port}/jwks.json\", refresh: 1h}}
contexts:
  headless: {{ask: deny}}
targets: [mcp]
"
        ),
    )
    .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let s = start(&project.path().join("toolgate.yaml"), ws.path());
    assert_eq!(fetches.load(Ordering::SeqCst), 1, "fetched at startup");
    let bearer = |t: String| format!("Bearer {t}");

    // Keys in hand: no fetch.
    let (status, _) = initialize(&s, Some(&bearer(sign(&claims("alice", "")))));
    assert_eq!(status, 200);
    assert_eq!(fetches.load(Ordering::SeqCst), 1);

    // The issuer rotates in a second key; a token signed with it makes the server fetch again.
    *jwks.lock().unwrap() = std::fs::read_to_string(fixture().join("rotated-jwks.json")).unwrap();
    let rotated = sign_as("other-key.pem", "test-2", &claims("alice", ""));
    let (status, challenge) = initialize(&s, Some(&bearer(rotated)));
    assert_eq!(status, 200, "{challenge:?}");
    assert_eq!(fetches.load(Ordering::SeqCst), 2);

    // An id nobody knows, right after: refused, and no third fetch within 30 s.
    let unknown = sign_as("other-key.pem", "test-3", &claims("alice", ""));
    let (status, challenge) = initialize(&s, Some(&bearer(unknown)));
    assert_eq!(status, 401);
    // The challenge names no field of the unverified token (the body does, escaped).
    assert!(
        challenge
            .unwrap()
            .contains("its issuer has no key of the token's key id for EdDSA"),
        "the refusal says why"
    );
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
}

/// POSTs `initialize` with this Origin header (if any): the status.
fn initialize_from(s: &Server, origin: Option<&str>) -> u16 {
    let mut req = agent()
        .post(format!("{}/mcp", s.base))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    if let Some(o) = origin {
        req = req.header("Origin", o);
    }
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "serve_http.rs", "version": "1"}}
    });
    let mut resp = req.send(body.to_string()).unwrap();
    let _ = resp.body_mut().read_to_string();
    resp.status().as_u16()
}

/// A browser page on a foreign origin cannot reach the server, even through a loopback Host;
/// the server's own origins and `serve.allowed_origins` can, and clients that send no Origin
/// are served as before.
#[test]
fn foreign_origins_are_refused_with_403() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tool-specs/read_file.yaml"),
        ws.path().join("read_file.yaml"),
    )
    .unwrap();
    let specs = PathBuf::from("read_file.yaml");
    let config = ws.path().join("toolgate.yaml");
    std::fs::write(
        &config,
        format!(
            "specs: [\"{}\"]\nworkspace: .\nserve:\n  allowed_origins: [\"https://app.example.com\"]\n",
            specs.display()
        ),
    )
    .unwrap();
    let s = start(&config, ws.path());
    let port = s.base.rsplit(':').next().unwrap().to_owned();
    assert_eq!(initialize_from(&s, Some("http://evil.example")), 403);
    assert_eq!(
        initialize_from(&s, Some("https://app.example.com.evil.example")),
        403
    );
    assert_eq!(
        initialize_from(&s, Some(&format!("http://localhost:{port}9"))),
        403
    );
    assert_eq!(initialize_from(&s, Some("https://app.example.com")), 200);
    assert_eq!(
        initialize_from(&s, Some(&format!("http://127.0.0.1:{port}"))),
        200
    );
    assert_eq!(
        initialize_from(&s, Some(&format!("http://localhost:{port}"))),
        200
    );
    assert_eq!(initialize_from(&s, None), 200);
}

#[test]
fn a_malformed_allowed_origin_is_a_located_error() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tool-specs/read_file.yaml"),
        ws.path().join("read_file.yaml"),
    )
    .unwrap();
    let specs = PathBuf::from("read_file.yaml");
    let config = ws.path().join("toolgate.yaml");
    std::fs::write(
        &config,
        format!(
            "specs: [\"{}\"]\nworkspace: .\nserve:\n  allowed_origins: [\"app.example.com/x\"]\n",
            specs.display()
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--workspace")
        .arg(ws.path())
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("toolgate.yaml:4:21]")
            && said.contains(
                "`serve.allowed_origins`: `app.example.com/x` has no scheme (`https://`)"
            ),
        "{said}"
    );
}
