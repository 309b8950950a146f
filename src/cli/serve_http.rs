//! `toolgate serve --http ADDR`: the same server over Streamable HTTP (`crate::mcp::http`),
//! authenticated by toolgate.yaml's `serve.auth` (`crate::mcp::auth`).
//!
//! The startup line on stderr names the URL (with the real port when ADDR's was 0). SIGINT or
//! SIGTERM stops accepting, ends the sessions and their event streams, waits for the requests
//! in flight, closes the upstream MCP servers and flushes the journal before the process exits.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::mcp::auth::TokenVerifier;
use crate::mcp::http::HttpServer;
use crate::mcp::{ElicitationApprover, Exposure, ServeOptions, ToolgateServer};
use crate::runtime::ToolRuntime;
use crate::runtime::exec::mcp::McpUpstreams;

/// How long the process waits for in-flight work once the server has stopped.
const SHUTDOWN_GRACE_MS: u64 = 2000;

/// What was chosen to serve, and where the project is.
pub(super) struct Served {
    pub exposure: Exposure,
    pub chosen_by: &'static str,
    pub root: PathBuf,
}

/// Serves over HTTP until SIGINT or SIGTERM.
pub(super) fn run(
    addr: &str,
    runtime: ToolRuntime,
    approver: Arc<ElicitationApprover>,
    options: ServeOptions,
    upstreams: Arc<McpUpstreams>,
    served: Served,
) -> miette::Result<u8> {
    let verifier = match &runtime.project().serve.auth {
        Some(auth) => match TokenVerifier::load(auth, &served.root) {
            Ok(v) => Some(Arc::new(v)),
            Err(e) => return super::call::fail(&e.to_string()),
        },
        None => None,
    };
    let listing =
        match ToolgateServer::new(runtime.clone(), Some(approver.clone()), options.clone()) {
            Ok(s) => s,
            Err(e) => return super::call::fail(&e.to_string()),
        };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return super::call::fail(&format!("cannot start the async runtime: {e}")),
    };
    let served_result = rt.block_on(async {
        let _recovery = super::serve::spawn_recovery(&runtime);
        let auth_line = match &verifier {
            Some(v) => format!(
                "bearer tokens of {} for {}",
                v.auth()
                    .issuers
                    .iter()
                    .map(|i| i.issuer.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                v.auth().resource
            ),
            None => "no authentication (loopback only)".to_owned(),
        };
        let server = HttpServer::bind(addr, runtime.clone(), approver, options.clone(), verifier)
            .await
            .map_err(|e| e.to_string())?
            .with_log(Arc::new(|line: &str| eprintln!("toolgate serve: {line}")));
        let url = match server.local_addr() {
            Some(a) => format!("http://{a}{}", server.mcp_path()),
            None => addr.to_owned(),
        };
        eprint!(
            "{}",
            super::serve::startup_line(
                &listing,
                &served.exposure,
                served.chosen_by,
                options.session.as_deref(),
                &runtime.workspace().root().display().to_string(),
                &format!("{url} ({auth_line})"),
            )
        );
        let r = server
            .serve(super::serve::stop_signal())
            .await
            .map_err(|e| e.to_string());
        upstreams.close().await;
        let flushed = runtime.journal().flush().await.map_err(|e| e.to_string());
        r.and(flushed)
    });
    rt.shutdown_timeout(Duration::from_millis(SHUTDOWN_GRACE_MS));
    match served_result {
        Ok(()) => Ok(super::EXIT_OK),
        Err(m) => super::call::fail(&m),
    }
}
