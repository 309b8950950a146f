//! `toolgate serve --http` against hostile clients (issue 34), as a real process: a session is
//! its initializer's (anyone else naming it gets 404, whatever the method, and the refusal is
//! logged); a token without a usable `sub` is refused; half-sent requests are closed within
//! `serve.limits.header_timeout` while `/healthz` keeps answering, and connections past the cap
//! get 503; sessions are capped per principal (429) and overall (503), with `Retry-After`; a
//! stalled JWKS endpoint holds up no request while keys are cached; and a challenge stays
//! ASCII and quotes nothing of a hostile token.
//!
//! Tokens are signed with the serve_http fixture's test-only Ed25519 key.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

const RESOURCE: &str = "https://tools.test/mcp";
const ISSUER: &str = "https://idp.test";
/// A bound on every wait, so that a hung server fails the test instead of hanging it.
const WAIT_LIMIT: Duration = Duration::from_secs(60);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures/serve_http").join(name)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn claims(sub: Value) -> Value {
    json!({"iss": ISSUER, "sub": sub, "aud": RESOURCE, "exp": now() + 600, "iat": now()})
}

/// A token of the fixture's key, with these claims and key id.
fn sign_claims(claims: &Value, kid: &str) -> String {
    let pem = std::fs::read_to_string(fixture("test-key.pem")).unwrap();
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap();
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(kid.into());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_ed_der(&der)).unwrap()
}

fn token(sub: &str) -> String {
    sign_claims(&claims(json!(sub)), "test-1")
}

/// A project serving read_file to tokens of the test issuer, with these `serve.limits` and
/// this issuer key source (YAML flow mapping entries).
fn project(dir: &Path, limits: &str, keys: &str) -> PathBuf {
    // `specs:` globs stay inside the project: the spec is copied in.
    std::fs::copy(
        repo().join("tool-specs/read_file.yaml"),
        dir.join("read_file.yaml"),
    )
    .unwrap();
    let read_file = "read_file.yaml";
    let path = dir.join("toolgate.yaml");
    std::fs::write(
        &path,
        format!(
            "specs: [{read_file:?}]
workspace: .
toolsets:
  served: {{tools: [read_file]}}
serve:
  toolset: served
  limits: {{{limits}}}
  auth:
    resource: {RESOURCE}
    issuers:
      - {{issuer: {ISSUER:?}, {keys}}}
contexts:
  headless: {{ask: deny}}
targets: [mcp]
"
        ),
    )
    .unwrap();
    path
}

fn jwks_file() -> String {
    format!("jwks_file: {:?}", fixture("jwks.json"))
}

/// A running `serve --http`, killed when dropped; its stderr lines arrive on `log`.
struct Server {
    child: Child,
    base: String,
    addr: String,
    log: mpsc::Receiver<String>,
    _ws: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    // The child is killed and waited for by `Drop`, or by the panic that ends the test.
    #[allow(clippy::zombie_processes)]
    fn start(config: &Path) -> Server {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("notes.txt"), "alice's notes\n").unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(config)
            .arg("--workspace")
            .arg(ws.path())
            .arg("--state-dir")
            .arg(ws.path().join(".state"))
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
            match rx.recv_timeout(WAIT_LIMIT) {
                Ok(line) => {
                    if let Some(i) = line.find("http://") {
                        let url = line[i..].split_whitespace().next().unwrap().to_owned();
                        let base = url.trim_end_matches("/mcp").to_owned();
                        let addr = base.trim_start_matches("http://").to_owned();
                        return Server {
                            child,
                            base,
                            addr,
                            log: rx,
                            _ws: ws,
                        };
                    }
                    seen.push(line);
                }
                Err(_) => panic!("serve --http printed no URL; stderr:\n{}", seen.join("\n")),
            }
        }
    }

    /// The first log line that contains `part`, waiting for it.
    fn logged(&self, part: &str) -> String {
        let deadline = Instant::now() + WAIT_LIMIT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.log.recv_timeout(left) {
                Ok(line) if line.contains(part) => return line,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        panic!("no log line with {part:?}")
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(WAIT_LIMIT))
        .build()
        .into()
}

/// An answer: status, headers of interest, and the body.
#[derive(Debug)]
struct Answer {
    status: u16,
    session: Option<String>,
    retry_after: Option<String>,
    challenge: Option<String>,
    body: String,
}

impl Answer {
    /// The JSON-RPC message of an event-stream (or JSON) body.
    fn message(&self) -> Value {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|v| v.get("id").is_some())
            .or_else(|| serde_json::from_str(&self.body).ok())
            .unwrap_or_else(|| panic!("no JSON-RPC message in {:?}", self.body))
    }
}

fn answer(mut r: ureq::http::Response<ureq::Body>) -> Answer {
    let h = |n: &str| {
        r.headers()
            .get(n)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    let (status, session, retry_after, challenge) = (
        r.status().as_u16(),
        h("mcp-session-id"),
        h("retry-after"),
        h("www-authenticate"),
    );
    Answer {
        status,
        session,
        retry_after,
        challenge,
        body: r.body_mut().read_to_string().unwrap_or_default(),
    }
}

/// A request to /mcp with this token (if any) and session (if any).
fn request(
    s: &Server,
    method: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: Option<Value>,
) -> Answer {
    let url = format!("{}/mcp", s.base);
    let a = agent();
    let mut b = ureq::http::Request::builder()
        .method(method)
        .uri(&url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json");
    if let Some(t) = token {
        b = b.header("Authorization", format!("Bearer {t}"));
    }
    if let Some(id) = session {
        b = b
            .header("Mcp-Session-Id", id)
            .header("MCP-Protocol-Version", "2025-06-18");
    }
    let r = match body {
        Some(v) => a.run(b.body(v.to_string()).unwrap()),
        None => a.run(b.body(()).unwrap()),
    };
    answer(r.unwrap())
}

fn initialize(s: &Server, token: &str) -> Answer {
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "serve_limits.rs", "version": "1"}}
    });
    request(s, "POST", Some(token), None, Some(init))
}

/// An initialized session of this token's principal.
fn open_session(s: &Server, token: &str) -> String {
    let a = initialize(s, token);
    assert_eq!(a.status, 200, "{a:?}");
    let id = a.session.clone().unwrap();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let a = request(s, "POST", Some(token), Some(&id), Some(note));
    assert_eq!(a.status, 202, "{a:?}");
    id
}

fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn read_notes() -> Value {
    rpc(
        2,
        "tools/call",
        json!({"name": "read_file", "arguments": {"path": "notes.txt"}}),
    )
}

#[test]
fn a_session_answers_only_its_initializer() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&project(dir.path(), "", &jwks_file()));
    let (alice, bob) = (token("alice"), token("bob"));
    let session = open_session(&s, &alice);

    // Bob, with a valid token of his own, names Alice's session before she has made one call:
    // every method answers as if the session did not exist.
    let foreign = [
        ("POST", Some(read_notes())),
        ("POST", Some(rpc(3, "resources/list", json!({})))),
        (
            "POST",
            Some(rpc(
                4,
                "resources/read",
                json!({"uri": "toolgate-artifact:///x"}),
            )),
        ),
        ("POST", Some(rpc(5, "tools/list", json!({})))),
        ("GET", None),
        ("DELETE", None),
    ];
    for (method, body) in foreign {
        let what = format!("{method} {body:?}");
        let a = request(&s, method, Some(&bob), Some(&session), body);
        assert_eq!(
            (a.status, a.body.as_str()),
            (404, "Not Found: Session not found"),
            "{what}"
        );
        assert_eq!(
            s.logged("(404)"),
            format!(
                "toolgate serve: refused {method} /mcp (404): principal \"bob@{ISSUER}\" named session {session:?}, which belongs to \"alice@{ISSUER}\""
            )
        );
    }
    // Nobody at all is refused before the session is looked at.
    let a = request(&s, "POST", None, Some(&session), Some(read_notes()));
    assert_eq!(a.status, 401);

    // Alice's session still works, and is still hers: Bob's calls took nothing.
    let a = request(&s, "POST", Some(&alice), Some(&session), Some(read_notes()));
    assert_eq!(a.status, 200, "{a:?}");
    let m = a.message();
    assert_eq!(m["result"]["isError"], json!(false), "{m}");
    assert!(
        m["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("alice's notes")
    );
    let a = request(&s, "POST", Some(&bob), Some(&session), Some(read_notes()));
    assert_eq!(a.status, 404);

    // Bob's own session is his; Alice ends hers, after which it is gone for her too.
    let bobs = open_session(&s, &bob);
    let a = request(&s, "POST", Some(&bob), Some(&bobs), Some(read_notes()));
    assert_eq!(a.status, 200, "{a:?}");
    let a = request(&s, "DELETE", Some(&alice), Some(&session), None);
    assert!(a.status == 200 || a.status == 202, "{a:?}");
    let a = request(&s, "POST", Some(&alice), Some(&session), Some(read_notes()));
    assert_eq!(a.status, 404);
}

#[test]
fn a_token_without_a_usable_sub_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&project(dir.path(), "", &jwks_file()));
    // A list: jsonwebtoken itself refuses to read the claims (401 too).
    let a = initialize(&s, &sign_claims(&claims(json!(["alice"])), "test-1"));
    assert_eq!(a.status, 401, "{a:?}");
    for sub in [json!(""), json!("  "), json!(42), json!(null)] {
        let a = initialize(&s, &sign_claims(&claims(sub.clone()), "test-1"));
        assert_eq!(a.status, 401, "sub {sub}: {a:?}");
        let body: Value = serde_json::from_str(&a.body).unwrap();
        let said = body["error_description"].as_str().unwrap();
        assert!(
            [
                "the bearer token is not accepted: its `sub` claim is empty or not a string",
                // null: jsonwebtoken finds no claim at all
                "the bearer token is not accepted: it has no `sub` claim",
            ]
            .contains(&said),
            "sub {sub}: {said}"
        );
    }
    assert_eq!(initialize(&s, &token("alice")).status, 200);
}

/// GET /healthz on a connection of its own: the status line, or what went wrong.
fn healthz(addr: &str) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        c,
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut got = String::new();
    match c.read_to_string(&mut got) {
        Ok(_) => got.lines().next().unwrap_or("").to_owned(),
        Err(e) => format!("no answer: {e}"),
    }
}

/// Whether the server closed this connection (reading gives end of file, or a reset) before
/// `deadline`.
fn closed_by(c: &mut TcpStream, deadline: Instant) -> bool {
    let mut buf = [0u8; 512];
    loop {
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return false;
        };
        c.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        match c.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

#[test]
fn half_sent_requests_are_closed_and_health_answers_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&project(
        dir.path(),
        "header_timeout: 1s, connections: 64",
        &jwks_file(),
    ));
    // 48 requests whose headers never end.
    let mut held: Vec<TcpStream> = (0..48)
        .map(|_| {
            let mut c = TcpStream::connect(&s.addr).unwrap();
            write!(
                c,
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl"
            )
            .unwrap();
            c
        })
        .collect();
    let sent = Instant::now();
    assert_eq!(healthz(&s.addr), "HTTP/1.1 200 OK");

    // Past the cap, a connection is told 503 at once (the 48 and some of these fill it).
    let opened: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(&s.addr).unwrap())
        .collect();
    let mut refused = None;
    let mut extra = Vec::new();
    for mut c in opened {
        c.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut got = String::new();
        let _ = c.read_to_string(&mut got);
        if got.starts_with("HTTP/1.1 503") {
            refused.get_or_insert(got);
        } else {
            extra.push(c);
        }
    }
    let refused = refused.expect("no connection past the cap was refused");
    assert!(refused.contains("\r\nRetry-After: 1\r\n"), "{refused}");
    assert!(
        s.logged("refused a connection (503)")
            .ends_with("64 are open, the cap `serve.limits.connections`")
    );

    // Every half-sent request is closed once the header timeout passes (1 s; the bound here is
    // only there so that a server that never closes them fails).
    let deadline = sent + Duration::from_secs(20);
    let mut last = Duration::ZERO;
    for c in held.iter_mut().chain(extra.iter_mut()) {
        assert!(closed_by(c, deadline), "a half-sent request stayed open");
        last = sent.elapsed();
    }
    eprintln!(
        "48 half-sent requests and {} idle connections closed {last:?} after they were sent",
        extra.len()
    );
    assert_eq!(healthz(&s.addr), "HTTP/1.1 200 OK");
}

#[test]
fn sessions_are_capped_per_principal_and_overall() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&project(
        dir.path(),
        "sessions: 3, sessions_per_principal: 2",
        &jwks_file(),
    ));
    let (alice, bob, carol) = (token("alice"), token("bob"), token("carol"));
    let first = open_session(&s, &alice);
    open_session(&s, &alice);
    let a = initialize(&s, &alice);
    assert_eq!(
        (a.status, a.retry_after.as_deref(), a.session.as_deref()),
        (429, Some("10"), None),
        "{a:?}"
    );
    let body: Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(
        body["error"],
        "this principal holds 2 live sessions, the cap `serve.limits.sessions_per_principal`; end one (DELETE) or retry later"
    );
    assert_eq!(
        s.logged("refused a new session"),
        format!(
            "toolgate serve: refused a new session (429): principal \"alice@{ISSUER}\": {}",
            body["error"].as_str().unwrap()
        )
    );
    open_session(&s, &bob);
    let a = initialize(&s, &carol);
    assert_eq!(
        (a.status, a.retry_after.as_deref()),
        (503, Some("10")),
        "{a:?}"
    );
    assert!(a.body.contains("the cap `serve.limits.sessions`"), "{a:?}");

    // A session ended gives its place back.
    let a = request(&s, "DELETE", Some(&alice), Some(&first), None);
    assert!(a.status == 200 || a.status == 202, "{a:?}");
    open_session(&s, &carol);
}

#[test]
fn a_stalled_key_endpoint_holds_up_no_request_while_keys_are_cached() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let jwks = std::fs::read_to_string(fixture("jwks.json")).unwrap();
    let fetches = Arc::new(AtomicUsize::new(0));
    let ended = Arc::new(AtomicUsize::new(0));
    let stalled: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
    {
        let (fetches, ended, stalled) = (fetches.clone(), ended.clone(), stalled.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                if fetches.fetch_add(1, Ordering::SeqCst) == 0 {
                    // The fetch at startup is answered.
                    let mut buf = [0u8; 4096];
                    let _ = conn.read(&mut buf);
                    let _ = write!(
                        conn,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{jwks}",
                        jwks.len()
                    );
                    continue;
                }
                // Every later one is accepted and never answered; note when the server gives
                // up on it.
                let mut reader = conn.try_clone().unwrap();
                stalled.lock().unwrap().push(conn);
                let ended = ended.clone();
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
                    ended.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = format!("jwks_url: \"http://127.0.0.1:{port}/jwks.json\", refresh: 1s");
    let s = Server::start(&project(dir.path(), "", &keys));
    assert_eq!(fetches.load(Ordering::SeqCst), 1, "fetched at startup");
    std::thread::sleep(Duration::from_millis(1500));

    // The keys are stale: requests go on with them while one fetch hangs.
    for who in ["alice", "bob", "carol", "dave"] {
        assert_eq!(initialize(&s, &token(who)).status, 200, "{who}");
    }
    let deadline = Instant::now() + WAIT_LIMIT;
    while fetches.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        fetches.load(Ordering::SeqCst),
        2,
        "one refresh started, and only one (single flight)"
    );
    assert_eq!(
        ended.load(Ordering::SeqCst),
        0,
        "every request was answered while the refresh was still waiting for the key endpoint"
    );
}

#[test]
fn challenges_stay_ascii_and_quote_nothing_of_a_hostile_token() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&project(dir.path(), "", &jwks_file()));
    let hostile_iss = {
        let mut c = claims(json!("mallory"));
        c["iss"] = json!("https://idp.test\r\nSet-Cookie: stolen=1\u{202e}\t\u{7f}");
        sign_claims(&c, "test-1")
    };
    let hostile_kid = sign_claims(&claims(json!("mallory")), "\u{202e}kid\r\nX-Evil: 1");
    for (what, t, public) in [
        (
            "iss",
            hostile_iss,
            "its issuer is not one this server accepts",
        ),
        (
            "kid",
            hostile_kid,
            "its issuer has no key of the token's key id for EdDSA",
        ),
    ] {
        let a = initialize(&s, &t);
        assert_eq!(a.status, 401, "{what}");
        let c = a
            .challenge
            .unwrap_or_else(|| panic!("{what}: no WWW-Authenticate"));
        assert_eq!(
            c,
            format!(
                "Bearer error=\"invalid_token\", error_description=\"{public}\", resource_metadata=\"https://tools.test/.well-known/oauth-protected-resource/mcp\""
            ),
            "{what}"
        );
        // The body says what the token said, JSON-escaped.
        let body: Value = serde_json::from_str(&a.body).unwrap();
        let said = body["error_description"].as_str().unwrap();
        assert!(
            said.contains("\r\nX-Evil: 1") || said.contains("\r\nSet-Cookie"),
            "{what}: {said}"
        );
    }
}

#[test]
fn bad_limits_are_located_errors() {
    let dir = tempfile::tempdir().unwrap();
    let config = project(
        dir.path(),
        "connections: 0, header_timeout: 1h, sessions: 2, sessions_per_principal: 5",
        &jwks_file(),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(&config)
        .arg("--workspace")
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    for (place, what) in [
        (
            "toolgate.yaml:7:25]",
            "`serve.limits.connections` is 0, not a count from 1 to 1000000",
        ),
        (
            "toolgate.yaml:7:44]",
            "`serve.limits.header_timeout` is 1h, outside 100ms to 10m",
        ),
        (
            "toolgate.yaml:7:85]",
            "`serve.limits.sessions_per_principal` (5) is more than `sessions` (2)",
        ),
    ] {
        assert!(
            said.contains(place) && said.contains(what),
            "{what} at {place}:\n{said}"
        );
    }
    assert!(said.contains("3 errors"), "{said}");
}
