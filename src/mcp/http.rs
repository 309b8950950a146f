//! `toolgate serve --http ADDR`: the MCP server over Streamable HTTP (rmcp's
//! `StreamableHttpService` on axum), with sessions (`Mcp-Session-Id`), server-sent events, a
//! health endpoint and, when toolgate.yaml has `serve.auth`, bearer-token authentication
//! ([`crate::mcp::auth`]).
//!
//! | path | what |
//! |---|---|
//! | the resource URI's path (`/mcp` without `serve.auth`) | MCP (POST, GET for the SSE stream, DELETE to end a session) |
//! | `/healthz` | `200 {"status":"ok"}` while the server accepts requests |
//! | `/.well-known/oauth-protected-resource` (and the same followed by the MCP path) | RFC 9728 metadata (with `serve.auth`) |
//!
//! Every MCP session gets a handler of its own, so allow-for-session grants and elicitations
//! (approvals) stay with the session that asked. The principal whose `initialize` made a session
//! owns it: a request of anyone else naming it is answered 404, as if it did not exist
//! ([`crate::mcp::sessions`]).
//!
//! What one client may cost is bounded by `serve.limits` ([`ServeLimits`]): connections are
//! served by [`crate::mcp::listen`] (header-read timeout, connection cap), a request body must
//! arrive within `body_timeout`, and live sessions are capped per principal (429) and overall
//! (503). Every refusal of these is a line in the log.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use axum::routing::{any, get};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::ir::ServeLimits;
use crate::mcp::auth::{self, Refusal, TokenVerifier};
use crate::mcp::sessions::{Full, Ownership, SessionOwners};
use crate::mcp::{ElicitationApprover, ServeError, ServeOptions, ToolgateServer};
use crate::runtime::ToolRuntime;

/// Why `serve --http` does not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// No `serve.auth`, on an address other than loopback.
    #[error(
        "`serve --http {0}` would accept calls from other hosts without authentication; configure `serve.auth` in toolgate.yaml (bearer tokens of your authorization server), or bind a loopback address such as 127.0.0.1:{port}",
        port = .0.port()
    )]
    Unauthenticated(SocketAddr),
    /// The address cannot be bound.
    #[error("cannot listen on {0}: {1}")]
    Bind(String, std::io::Error),
    /// The server failed.
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
    /// A handler could not be made.
    #[error(transparent)]
    Handler(#[from] ServeError),
}

/// Where `serve --http` writes a line about a refusal (a foreign session, a cap reached).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// The header naming a request's MCP session.
const SESSION_HEADER: &str = "mcp-session-id";
/// Seconds a client refused a session is told to wait (`Retry-After`).
const SESSION_RETRY_SECS: u32 = 10;

/// What `serve --http` serves, and how it checks callers.
pub struct HttpServer {
    runtime: ToolRuntime,
    approver: Arc<ElicitationApprover>,
    options: ServeOptions,
    verifier: Option<Arc<TokenVerifier>>,
    listener: tokio::net::TcpListener,
    limits: ServeLimits,
    log: Log,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.listener.local_addr().ok())
            .field("auth", &self.verifier.is_some())
            .finish_non_exhaustive()
    }
}

impl HttpServer {
    /// Binds `addr`. Without a verifier only a loopback address is accepted.
    pub async fn bind(
        addr: &str,
        runtime: ToolRuntime,
        approver: Arc<ElicitationApprover>,
        options: ServeOptions,
        verifier: Option<Arc<TokenVerifier>>,
    ) -> Result<Self, HttpError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| HttpError::Bind(addr.to_owned(), e))?;
        let local = listener
            .local_addr()
            .map_err(|e| HttpError::Bind(addr.to_owned(), e))?;
        if verifier.is_none() && !local.ip().is_loopback() {
            return Err(HttpError::Unauthenticated(local));
        }
        let limits = runtime.project().serve.limits.clone();
        Ok(HttpServer {
            runtime,
            approver,
            options,
            verifier,
            listener,
            limits,
            log: Arc::new(|line: &str| tracing::warn!("{line}")),
        })
    }

    /// Writes the refusal lines with `log` (default: `tracing` at warn level).
    pub fn with_log(mut self, log: Log) -> Self {
        self.log = log;
        self
    }

    /// The connection cap in effect (`serve.limits.connections`, lowered to what the open file
    /// limit allows).
    pub fn connection_cap(&self) -> u32 {
        crate::mcp::listen::connection_cap(self.limits.connections)
    }

    /// The address bound (its real port when the one asked for was 0).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// The path MCP is served at.
    pub fn mcp_path(&self) -> String {
        self.verifier.as_ref().map_or_else(
            || "/mcp".to_owned(),
            |v| auth::resource_path(&v.auth().resource),
        )
    }

    /// Serves until `stop` resolves, then stops accepting, ends the sessions and their event
    /// streams, and waits for requests in flight.
    pub async fn serve(
        self,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), HttpError> {
        let mcp_path = self.mcp_path();
        let local = self.local_addr();
        let shutdown = CancellationToken::new();
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        if let Some(a) = local {
            hosts.push(a.ip().to_string());
        }
        if let Some(v) = &self.verifier {
            let rest = v.auth().resource.split_once("://").map_or("", |(_, r)| r);
            let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
            hosts.push(authority.to_owned());
            if let Some((host, _port)) = authority.rsplit_once(':')
                && !host.ends_with(']')
                && !host.contains(':')
            {
                hosts.push(host.to_owned());
            }
        }
        let origins = own_origins(
            local,
            self.verifier.as_ref().map(|v| v.auth().resource.as_str()),
        )
        .into_iter()
        .chain(self.runtime.project().serve.allowed_origins.iter().cloned());
        // A browser page on another origin must not reach the server (the MCP transport's
        // "servers MUST validate the Origin header"): a foreign Origin gets 403.
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_cancellation_token(shutdown.child_token());
        // Checked once here, so that a session's handler cannot fail later.
        ToolgateServer::new(
            self.runtime.clone(),
            Some(self.approver.clone()),
            self.options.clone(),
        )?;
        let mut scoped: Vec<String> = Vec::new();
        for t in self.runtime.project().toolsets.values() {
            scoped.extend(t.scopes.iter().cloned());
        }
        let cap = self.connection_cap();
        let (runtime, approver, options) = (self.runtime, self.approver, self.options);
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive =
            Some(Duration::from_millis(self.limits.session_idle_ms));
        let manager = Arc::new(manager);
        let owners = Arc::new(SessionOwners::new(
            manager.clone(),
            self.limits.sessions_per_principal,
            self.limits.sessions,
        ));
        let service: StreamableHttpService<ToolgateServer, LocalSessionManager> =
            StreamableHttpService::new(
                move || {
                    ToolgateServer::new(runtime.clone(), Some(approver.clone()), options.clone())
                        .map_err(std::io::Error::other)
                },
                manager,
                config,
            );
        let app = Arc::new(App {
            service,
            owners,
            log: self.log.clone(),
            body_timeout: Duration::from_millis(self.limits.body_timeout_ms),
            metadata: self
                .verifier
                .as_ref()
                .map(|v| auth::metadata(v.auth(), &scoped)),
            metadata_url: self
                .verifier
                .as_ref()
                .map(|v| auth::metadata_url(&v.auth().resource))
                .unwrap_or_default(),
            verifier: self.verifier,
        });
        let mut router = Router::new()
            .route("/healthz", get(healthz))
            .route(WELL_KNOWN, get(metadata))
            .route(&mcp_path, any(mcp));
        let suffixed = format!("{WELL_KNOWN}{mcp_path}");
        router = router.route(&suffixed, get(metadata));
        let router = router.with_state(app);
        let ended = shutdown.clone();
        tokio::spawn(async move {
            stop.await;
            // Ends every session and its event stream, so that the server can drain.
            ended.cancel();
        });
        crate::mcp::listen::serve(
            self.listener,
            router,
            Duration::from_millis(self.limits.header_timeout_ms),
            cap,
            shutdown,
            self.log,
        )
        .await;
        Ok(())
    }
}

const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

struct App {
    service: StreamableHttpService<ToolgateServer, LocalSessionManager>,
    owners: Arc<SessionOwners>,
    log: Log,
    body_timeout: Duration,
    verifier: Option<Arc<TokenVerifier>>,
    metadata: Option<serde_json::Value>,
    metadata_url: String,
}

async fn healthz() -> Response {
    json_response(StatusCode::OK, &serde_json::json!({"status": "ok"}))
}

async fn metadata(State(app): State<Arc<App>>) -> Response {
    match &app.metadata {
        Some(m) => json_response(StatusCode::OK, m),
        None => json_response(
            StatusCode::NOT_FOUND,
            &serde_json::json!({"error": "this server does not require authorization"}),
        ),
    }
}

async fn mcp(State(app): State<Arc<App>>, mut req: Request) -> Response {
    let mut caller = None;
    if let Some(v) = &app.verifier {
        let authorization = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .map(str::to_owned);
        let verifier = v.clone();
        // A refresh of the keys may read a file or fetch a URL.
        let checked =
            tokio::task::spawn_blocking(move || verifier.verify(authorization.as_deref())).await;
        let principal = match checked {
            Ok(Ok(p)) => p,
            Ok(Err(refusal)) => return refused(&app, v, &refusal),
            Err(e) => {
                return json_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &serde_json::json!({"error": format!("the token check failed: {e}")}),
                );
            }
        };
        // The token stops here: what goes on is who it names.
        req.headers_mut().remove(header::AUTHORIZATION);
        caller = Some(principal.id());
        req.extensions_mut().insert(principal);
    }
    let req = match with_body(&app, req).await {
        Ok(r) => r,
        Err(refusal) => return refusal,
    };
    let authenticated = caller.is_some();
    let caller = caller.unwrap_or_default();
    let named = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned);
    match named {
        Some(session) => {
            if let Ownership::Foreign { owner } = app.owners.ownership(&session, &caller) {
                (app.log)(&format!(
                    "refused {} {} (404): principal {:?} named session {session:?}, which belongs to {owner:?}",
                    req.method(),
                    req.uri().path(),
                    if authenticated {
                        caller.as_str()
                    } else {
                        "(nobody)"
                    },
                ));
                // Exactly what rmcp answers for a session that does not exist.
                let mut r = Response::new(Body::from("Not Found: Session not found"));
                *r.status_mut() = StatusCode::NOT_FOUND;
                return r;
            }
            let ends = req.method() == Method::DELETE;
            let r = app.service.handle(req).await.map(Body::new);
            if ends && r.status().is_success() {
                app.owners.forget(&session);
            }
            r
        }
        // A POST naming no session is an `initialize` (or rmcp refuses it): a new session.
        None if req.method() == Method::POST => {
            let place = match app.owners.reserve(&caller, authenticated).await {
                Ok(p) => p,
                Err(full) => return sessions_full(&app, &caller, &full),
            };
            let r = app.service.handle(req).await.map(Body::new);
            if let Some(id) = r
                .headers()
                .get(SESSION_HEADER)
                .and_then(|h| h.to_str().ok())
            {
                place.bind(id);
            }
            r
        }
        None => app.service.handle(req).await.map(Body::new),
    }
}

/// The request with its body read within `serve.limits.body_timeout` (408 when it is not).
async fn with_body(app: &App, req: Request) -> Result<Request, Response> {
    if req.method() != Method::POST {
        return Ok(req);
    }
    let (parts, body) = req.into_parts();
    // rmcp refuses bodies past its own cap with 413; this one only bounds the time.
    let limit = 4 * 1024 * 1024 + 1;
    match tokio::time::timeout(app.body_timeout, axum::body::to_bytes(body, limit)).await {
        Ok(Ok(bytes)) => Ok(Request::from_parts(parts, Body::from(bytes))),
        Ok(Err(_)) => Err(json_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &serde_json::json!({"error": "the request body is larger than 4 MiB"}),
        )),
        Err(_) => {
            (app.log)(&format!(
                "refused {} {} (408): its body did not arrive within {} ms (serve.limits.body_timeout)",
                parts.method,
                parts.uri.path(),
                app.body_timeout.as_millis()
            ));
            let mut r = json_response(
                StatusCode::REQUEST_TIMEOUT,
                &serde_json::json!({"error": "the request body did not arrive in time"}),
            );
            r.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Err(r)
        }
    }
}

/// 429 (the caller's cap) or 503 (the server's), with `Retry-After`, and a line in the log.
fn sessions_full(app: &App, caller: &str, full: &Full) -> Response {
    let (status, message) = match full {
        Full::Principal(n) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "this principal holds {n} live sessions, the cap `serve.limits.sessions_per_principal`; end one (DELETE) or retry later"
            ),
        ),
        Full::Server(n) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the server holds {n} live sessions, the cap `serve.limits.sessions`; retry later"
            ),
        ),
    };
    (app.log)(&format!(
        "refused a new session ({}): principal {caller:?}: {message}",
        status.as_u16()
    ));
    let mut r = json_response(
        status,
        &serde_json::json!({"error": message, "retry_after": SESSION_RETRY_SECS}),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(SESSION_RETRY_SECS));
    r
}

fn refused(app: &App, v: &TokenVerifier, refusal: &Refusal) -> Response {
    let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::UNAUTHORIZED);
    let mut r = json_response(
        status,
        &serde_json::json!({
            "error": match refusal {
                Refusal::Missing => "unauthorized",
                Refusal::Invalid { .. } => "invalid_token",
                Refusal::InsufficientScope(_) => "insufficient_scope",
            },
            "error_description": refusal.message(),
        }),
    );
    // The challenge is printable ASCII (`Refusal::challenge`), so this never drops it.
    let challenge = refusal.challenge(&app.metadata_url, &v.auth().scopes);
    let h = HeaderValue::from_str(&challenge)
        .unwrap_or_else(|_| HeaderValue::from_static("Bearer error=\"invalid_token\""));
    r.headers_mut().insert(header::WWW_AUTHENTICATE, h);
    r
}

fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// The origins of the server's own addresses: the loopback names at the bound port, the bound
/// address, and the `serve.auth` resource's origin.
fn own_origins(local: Option<SocketAddr>, resource: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(a) = local {
        let port = a.port();
        for host in ["localhost", "127.0.0.1", "[::1]"] {
            out.push(format!("http://{host}:{port}"));
        }
        out.push(match a.ip() {
            std::net::IpAddr::V4(ip) => format!("http://{ip}:{port}"),
            std::net::IpAddr::V6(ip) => format!("http://[{ip}]:{port}"),
        });
    }
    if let Some(r) = resource
        && let Some((scheme, rest)) = r.split_once("://")
    {
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        out.push(format!("{scheme}://{authority}"));
    }
    out
}
