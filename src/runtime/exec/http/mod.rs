//! The backend of `exec: {http: …}` tools: one request per attempt, built from the arguments
//! ([`request`]), sent through a client per tool whose resolver and redirect policy enforce
//! the tool's egress ([`egress`]), its status mapped to an error type and its body read through
//! the same bounded capture as a process's output ([`response`], [`crate::runtime::exec::capture`]).
//!
//! Secrets are read at call time, sent as sensitive headers, and redacted (as literals) from
//! everything the call returns or keeps: text, structured result, summary, artifacts.

pub mod egress;
pub mod request;
pub mod response;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::ir::{ErrorType, ExecSpec, HttpSpec, NetworkPolicy};
use crate::runtime::artifacts::ArtifactRedaction;
use crate::runtime::exec::capture::{Captured, SpillTo, capture};
use crate::runtime::exec::spawn::{OutputSink, finish_artifact};
use crate::runtime::exec::{ExecContext, ExecFuture, Executor, OutputSource, RawOutcome};
use crate::runtime::output::Redactor;
use crate::runtime::permission::AuthorizedCall;
use egress::{CheckedResolver, Egress};

/// How long connecting (resolution, TCP, TLS) may take; the attempt's own budget bounds the
/// rest.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The media type of a response body kept as an artifact.
pub const BODY_MEDIA_TYPE: &str = "application/octet-stream; http=response-body";
/// Buffer between the response stream and the capture.
const PIPE_BYTES: usize = 256 * 1024;

/// Runs HTTP tools.
pub struct HttpExecutor {
    network: NetworkPolicy,
    project_root: PathBuf,
    clients: Mutex<HashMap<String, (reqwest::Client, Arc<Egress>)>>,
}

impl std::fmt::Debug for HttpExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpExecutor")
            .field("network", &self.network)
            .finish_non_exhaustive()
    }
}

impl HttpExecutor {
    /// An executor under the project's egress policy; secret files are read relative to
    /// `project_root`.
    pub fn new(network: NetworkPolicy, project_root: impl Into<PathBuf>) -> Self {
        HttpExecutor {
            network,
            project_root: project_root.into(),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The client of a tool (made on first use, then reused for its connection pool).
    fn client(
        &self,
        tool: &str,
        spec: &HttpSpec,
        url: &reqwest::Url,
    ) -> Result<(reqwest::Client, Arc<Egress>), String> {
        let mut clients = self
            .clients
            .lock()
            .map_err(|_| "client cache poisoned".to_owned())?;
        if let Some(c) = clients.get(tool) {
            return Ok(c.clone());
        }
        let mut allowed: Vec<String> = url.host_str().map(str::to_owned).into_iter().collect();
        allowed.extend(spec.hosts.iter().cloned());
        allowed.extend(self.network.allow.iter().cloned());
        let egress = Arc::new(Egress::new(allowed, self.network.allow_private.clone()));
        let mut b = reqwest::Client::builder()
            .dns_resolver(Arc::new(CheckedResolver::new(Arc::clone(&egress))))
            .redirect(egress.redirect_policy())
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("toolgate/", env!("CARGO_PKG_VERSION")));
        b = match &self.network.proxy {
            Some(p) => {
                b.proxy(reqwest::Proxy::all(p).map_err(|e| format!("`network.proxy` `{p}`: {e}"))?)
            }
            None => b.no_proxy(),
        };
        let client = b.build().map_err(|e| chain(&e))?;
        clients.insert(tool.to_owned(), (client.clone(), Arc::clone(&egress)));
        Ok((client, egress))
    }
}

/// An error and its causes, on one line.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let t = s.to_string();
        if !out.contains(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
        cur = s.source();
    }
    out
}

/// Why a request got no response.
fn send_failure(e: &reqwest::Error, safe: bool, target: &str) -> RawOutcome {
    if let Some(r) = egress::refusal(e) {
        return RawOutcome::failure(ErrorType::PolicyDenied, format!("{target}: {r}"));
    }
    if e.is_timeout() {
        return RawOutcome::failure(
            ErrorType::Timeout,
            format!("{target}: timed out ({})", chain(e)),
        );
    }
    if e.is_connect() {
        return RawOutcome::failure(
            ErrorType::NetworkError,
            format!("{target}: could not connect ({})", chain(e)),
        );
    }
    if safe {
        RawOutcome::failure(ErrorType::NetworkError, format!("{target}: {}", chain(e)))
    } else {
        // The request may have reached the server before the connection broke.
        RawOutcome::failure(
            ErrorType::UnknownOutcome,
            format!(
                "{target}: the connection failed after the request was sent ({}); it may have taken effect",
                chain(e)
            ),
        )
    }
}

/// Streams the body into the bounded capture (which spills it to an artifact as it grows).
async fn read_body(
    mut resp: reqwest::Response,
    spill: SpillTo,
    cancel: tokio_util::sync::CancellationToken,
) -> (Captured, Option<String>) {
    let (mut tx, rx) = tokio::io::duplex(PIPE_BYTES);
    let pump = async move {
        loop {
            match resp.chunk().await {
                Ok(Some(c)) => {
                    if tx.write_all(&c).await.is_err() {
                        return None;
                    }
                }
                Ok(None) => return None,
                Err(e) => return Some(chain(&e)),
            }
        }
    };
    let (err, captured) = tokio::join!(pump, capture(rx, Some(spill), cancel));
    (captured, err)
}

fn text_of(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl Executor for HttpExecutor {
    fn run<'a>(&'a self, call: AuthorizedCall, ctx: ExecContext) -> ExecFuture<'a> {
        Box::pin(async move {
            let def = call.definition();
            let ExecSpec::Http(spec) = &def.exec else {
                return RawOutcome::failure(
                    ErrorType::RuntimeException,
                    format!("`{}` is not an HTTP tool", def.name),
                );
            };
            let prepared = match request::prepare(
                spec,
                call.arguments(),
                &ctx.idempotency_key,
                &self.project_root,
            ) {
                Ok(p) => p,
                Err(f) => return f.into(),
            };
            let safe = spec.is_safe_method();
            let host = prepared.url.host_str().unwrap_or_default().to_owned();
            let target = format!("{} {}{}", prepared.method, host, prepared.url.path());
            let (client, egress) = match self.client(&def.name, spec, &prepared.url) {
                Ok(c) => c,
                Err(m) => return RawOutcome::failure(ErrorType::RuntimeException, m),
            };
            // An IP literal never reaches the resolver: check it here.
            if let Err(r) = egress.check_url(&prepared.url) {
                return RawOutcome::failure(ErrorType::PolicyDenied, format!("{target}: {r}"));
            }
            let literals = prepared.secrets.clone();
            let redactor = Redactor {
                secrets: false,
                patterns: &[],
                literals: &literals,
            };
            let mut rb = client
                .request(prepared.method, prepared.url)
                .headers(prepared.headers);
            if let Some(b) = prepared.body {
                rb = rb.body(b);
            }
            let resp = tokio::select! {
                r = rb.send() => r,
                () = ctx.cancel.cancelled() => {
                    return RawOutcome::failure(ErrorType::Cancelled, format!("{target}: stopped"));
                }
            };
            let resp = match resp {
                Ok(r) => r,
                Err(e) => {
                    let mut o = send_failure(&e, safe, &target);
                    if let Some((_, m)) = &mut o.failure {
                        *m = redactor.text(m);
                    }
                    return o;
                }
            };
            let status = resp.status();
            let retry_after = response::retry_after(resp.headers());
            let output = &def.output;
            let redact = ArtifactRedaction {
                secrets: output.redact_secrets,
                patterns: output.redact.clone(),
                literals: literals.clone(),
            };
            let sink = OutputSink {
                spill: Some(SpillTo {
                    store: ctx.artifacts.clone(),
                    threshold: output.artifact_threshold,
                    allowance: ctx.artifacts.allowance_of(ctx.artifact_owner()),
                }),
                tool: def.name.clone(),
                call_id: call.call_id().to_owned(),
                redact,
            };
            let Some(spill) = sink.spill.clone() else {
                return RawOutcome::failure(ErrorType::RuntimeException, "no artifact store");
            };
            let (captured, body_error) = read_body(resp, spill, ctx.cancel.clone()).await;
            let total = captured.total;
            let complete = captured.omitted() == 0 && body_error.is_none();
            let stream = finish_artifact(captured, &sink, BODY_MEDIA_TYPE).await;
            let c = stream.captured;
            let status_text = format!(
                "{} {}",
                status.as_u16(),
                status.canonical_reason().unwrap_or_default()
            );
            let mut whole = Vec::new();
            if complete {
                whole.extend_from_slice(&c.head);
                whole.extend_from_slice(&c.tail);
            }

            if let Some(t) = response::error_type(status) {
                let said = if complete {
                    response::server_message(&whole)
                } else {
                    response::server_message(&c.head)
                };
                let mut o = RawOutcome::failure(
                    t,
                    redactor.text(&format!("{target} answered {status_text}: {said}")),
                );
                o.retry_after = retry_after;
                o.artifacts.extend(stream.artifact);
                return o;
            }
            if let Some(e) = body_error {
                let t = if safe {
                    ErrorType::NetworkError
                } else {
                    ErrorType::UnknownOutcome
                };
                let mut o = RawOutcome::failure(
                    t,
                    redactor.text(&format!(
                        "{target} answered {status_text}, then the body broke off after {total} bytes: {e}"
                    )),
                );
                o.artifacts.extend(stream.artifact);
                return o;
            }
            let size = crate::runtime::artifacts::size_text(total);
            if !complete {
                // Too large to hold: the model reads head and tail, the whole is an artifact.
                let kept = match &stream.artifact {
                    Some(a) => format!("the whole body is artifact {}", a.id),
                    None => match &c.spill_error {
                        Some(e) => format!("the whole body could not be kept: {e}"),
                        None => "the whole body could not be kept".to_owned(),
                    },
                };
                return RawOutcome {
                    summary: Some(format!(
                        "{target} answered {status_text} with {size}, too large to return whole; {kept}"
                    )),
                    text: Some(redactor.text(&c.text())),
                    truncated: true,
                    artifacts: stream.artifact.into_iter().collect(),
                    source: OutputSource::Streams {
                        held: Vec::new(),
                        left_out: true,
                    },
                    ..RawOutcome::default()
                };
            }
            let summary = format!("{target} answered {status_text} ({size})");
            let parsed = if whole.is_empty() {
                None
            } else {
                serde_json::from_slice::<Value>(&whole).ok()
            };
            let mut out = match parsed {
                Some(v) => {
                    let picked = match spec.pick.as_deref() {
                        Some(p) => match v.pointer(p) {
                            Some(x) => x.clone(),
                            None => {
                                return RawOutcome::failure(
                                    ErrorType::RuntimeException,
                                    format!(
                                        "{target} answered {status_text}, but its body has nothing at `{p}`"
                                    ),
                                );
                            }
                        },
                        None => v,
                    };
                    let mut structured = picked;
                    redactor.json(&mut structured);
                    let text = serde_json::to_string_pretty(&structured).unwrap_or_default();
                    RawOutcome::success(structured, text)
                }
                None if def.result.is_some() && !whole.is_empty() => {
                    return RawOutcome::failure(
                        ErrorType::RuntimeException,
                        format!(
                            "{target} answered {status_text}, but its body is not JSON, and the tool's `result` needs JSON"
                        ),
                    );
                }
                None => RawOutcome {
                    text: Some(redactor.text(&text_of(&whole))),
                    ..RawOutcome::default()
                },
            };
            out.summary = Some(summary);
            out.artifacts.extend(stream.artifact);
            out
        })
    }
}
