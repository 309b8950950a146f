//! A real HTTP/1.1 server (hyper) on 127.0.0.1 for the HTTP-tool tests and benchmark: items
//! by id, a validation error, a missing item, a rate limit that lifts after N requests, a
//! redirect to another host, a 50 MB body, and an echo of what the request carried.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// Size of `/big`.
pub const BIG_BYTES: usize = 50 * 1024 * 1024;

/// One request as the server saw it: method, path and query as sent, headers.
pub type SeenRequest = (String, String, Vec<(String, String)>);

/// What the server saw.
#[derive(Default, Debug)]
pub struct Seen {
    /// Requests to `/limited` so far.
    pub limited: AtomicU32,
    /// Every request: method, path and query as sent, headers.
    pub requests: Mutex<Vec<SeenRequest>>,
}

/// A running server.
pub struct TestServer {
    pub addr: SocketAddr,
    pub seen: Arc<Seen>,
    /// `/limited` answers 429 this many times before succeeding.
    pub limit_times: u32,
}

impl TestServer {
    /// Starts the server on an ephemeral port of 127.0.0.1, on the current tokio runtime.
    pub async fn start(limit_times: u32) -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Seen::default());
        let big = Bytes::from(
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n"
                .repeat(BIG_BYTES / 64),
        );
        let s = Arc::clone(&seen);
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (s, big) = (Arc::clone(&s), big.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req| {
                        handle(req, Arc::clone(&s), big.clone(), limit_times)
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        TestServer {
            addr,
            seen,
            limit_times,
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
}

fn json_response(status: StatusCode, v: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .unwrap()
}

async fn handle(
    req: Request<Incoming>,
    seen: Arc<Seen>,
    big: Bytes,
    limit_times: u32,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().to_string();
    let path_and_query = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    seen.requests
        .lock()
        .unwrap()
        .push((method.clone(), path_and_query.clone(), headers.clone()));
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let path = req.uri().path().to_owned();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let r = match (method.as_str(), path.as_str()) {
        ("GET", p) if p.starts_with("/items/") => {
            let id = &p["/items/".len()..];
            if id == "404" {
                json_response(StatusCode::NOT_FOUND, &json!({"message": "no item 404"}))
            } else {
                json_response(
                    StatusCode::OK,
                    &json!({"data": {"id": id, "name": format!("item {id}"), "query": path_and_query}}),
                )
            }
        }
        ("POST", "/items") => {
            let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            match v.get("title").and_then(Value::as_str) {
                Some(t) if !t.is_empty() => json_response(
                    StatusCode::CREATED,
                    &json!({"id": 7, "title": t, "idempotency_key": header("idempotency-key")}),
                ),
                _ => json_response(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    &json!({"message": "title must not be empty", "errors": [{"field": "title", "code": "missing"}]}),
                ),
            }
        }
        ("POST", "/limited") => {
            let n = seen.limited.fetch_add(1, Ordering::SeqCst) + 1;
            if n <= limit_times {
                let mut r = json_response(
                    StatusCode::TOO_MANY_REQUESTS,
                    &json!({"message": "slow down"}),
                );
                r.headers_mut().insert("retry-after", "1".parse().unwrap());
                r
            } else {
                json_response(
                    StatusCode::OK,
                    &json!({"ok": true, "attempt": n, "idempotency_key": header("idempotency-key")}),
                )
            }
        }
        ("GET", "/redirect") => Response::builder()
            .status(StatusCode::FOUND)
            .header("location", "http://evil.example.net/steal")
            .body(Full::new(Bytes::new()))
            .unwrap(),
        ("GET", "/redirect-same") => Response::builder()
            .status(StatusCode::FOUND)
            .header("location", "/items/9")
            .body(Full::new(Bytes::new()))
            .unwrap(),
        ("GET", "/big") => Response::builder()
            .header("content-type", "text/plain")
            .body(Full::new(big))
            .unwrap(),
        ("GET", "/echo") => json_response(
            StatusCode::OK,
            &json!({"authorization": header("authorization"), "x_api_key": header("x-api-key")}),
        ),
        ("GET", "/forbidden") => json_response(
            StatusCode::FORBIDDEN,
            &json!({"message": format!("token {} may not read this", header("authorization").unwrap_or_default())}),
        ),
        _ => json_response(StatusCode::NOT_FOUND, &json!({"message": "no route"})),
    };
    Ok(r)
}
