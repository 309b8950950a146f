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
//! (approvals) stay with the session that asked. The first request's principal owns the session.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::{any, get};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::mcp::auth::{self, Refusal, TokenVerifier};
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

/// What `serve --http` serves, and how it checks callers.
pub struct HttpServer {
    runtime: ToolRuntime,
    approver: Arc<ElicitationApprover>,
    options: ServeOptions,
    verifier: Option<Arc<TokenVerifier>>,
    listener: tokio::net::TcpListener,
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
        Ok(HttpServer {
            runtime,
            approver,
            options,
            verifier,
            listener,
        })
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
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
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
        let (runtime, approver, options) = (self.runtime, self.approver, self.options);
        let service: StreamableHttpService<ToolgateServer, LocalSessionManager> =
            StreamableHttpService::new(
                move || {
                    ToolgateServer::new(runtime.clone(), Some(approver.clone()), options.clone())
                        .map_err(std::io::Error::other)
                },
                Arc::new(LocalSessionManager::default()),
                config,
            );
        let app = Arc::new(App {
            service,
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
        axum::serve(self.listener, router)
            .with_graceful_shutdown(async move {
                stop.await;
                // Ends every session and its event stream, so that the server can drain.
                ended.cancel();
            })
            .await
            .map_err(HttpError::Serve)
    }
}

const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

struct App {
    service: StreamableHttpService<ToolgateServer, LocalSessionManager>,
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
        req.extensions_mut().insert(principal);
    }
    app.service.handle(req).await.map(Body::new)
}

fn refused(app: &App, v: &TokenVerifier, refusal: &Refusal) -> Response {
    let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::UNAUTHORIZED);
    let mut r = json_response(
        status,
        &serde_json::json!({
            "error": match refusal {
                Refusal::Missing => "unauthorized",
                Refusal::Invalid(_) => "invalid_token",
                Refusal::InsufficientScope(_) => "insufficient_scope",
            },
            "error_description": refusal.message(),
        }),
    );
    if let Ok(h) = HeaderValue::from_str(&refusal.challenge(&app.metadata_url, &v.auth().scopes)) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, h);
    }
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
