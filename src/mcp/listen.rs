//! The accept loop of `serve --http`: HTTP/1.1 connections with a header-read timeout and a cap
//! on how many are open at once.
//!
//! `axum::serve` reads headers for as long as a client cares to send them and accepts until the
//! process runs out of file descriptors, so a client holding connections with unfinished
//! headers starves everyone before any token is read. Here each connection gets hyper's
//! `header_read_timeout` (which also closes a connection idle between requests), and a
//! connection past the cap is answered `503` with `Retry-After` and closed at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::mcp::http::Log;

/// Descriptors kept free beside the connections: the journal, upstreams, tool processes and
/// the refusals themselves need some.
const SPARE_DESCRIPTORS: u64 = 64;
/// What a connection past the cap is told.
const FULL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: 75\r\nConnection: close\r\n\r\n{\"error\":\"too many open connections; retry after a second\",\"retry_after\":1}";

/// The connection cap in effect: the one configured, and never more than the process's open
/// file limit allows.
pub fn connection_cap(configured: u32) -> u32 {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX);
    let room = soft.saturating_sub(SPARE_DESCRIPTORS).max(1);
    u32::try_from(room.min(u64::from(configured))).unwrap_or(configured)
}

/// Serves `router` on `listener` until `stop` is cancelled, then lets the open connections
/// finish their requests.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    header_timeout: Duration,
    cap: u32,
    stop: CancellationToken,
    log: Log,
) {
    let cap_usize = usize::try_from(cap).unwrap_or(usize::MAX);
    let permits = Arc::new(Semaphore::new(cap_usize));
    let refusals = Arc::new(RateLimitedLog::default());
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            a = listener.accept() => a,
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            Err(e) => {
                // Out of descriptors, or a connection reset before it was accepted: wait a
                // moment rather than spin.
                refusals.note(&log, &format!("accepting a connection failed: {e}"));
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            refusals.note(
                &log,
                &format!(
                    "refused a connection (503): {cap} are open, the cap `serve.limits.connections`"
                ),
            );
            tokio::spawn(async move {
                let mut stream = stream;
                let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(FULL)).await;
                let _ = stream.shutdown().await;
            });
            continue;
        };
        let service = TowerToHyperService::new(router.clone());
        let stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .keep_alive(true);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                () = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    // Every connection gives its place back when it ends.
    let _ = permits.acquire_many(cap).await;
}

/// Logs a kind of refusal at most once a second, with how many were not logged.
#[derive(Default)]
struct RateLimitedLog {
    last_ms: AtomicU64,
    suppressed: AtomicU64,
    epoch: std::sync::OnceLock<Instant>,
}

impl RateLimitedLog {
    fn note(&self, log: &Log, line: &str) {
        let epoch = *self.epoch.get_or_init(Instant::now);
        let now = u64::try_from(epoch.elapsed().as_millis())
            .unwrap_or(u64::MAX)
            .saturating_add(1000);
        let last = self.last_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) < 1000
            || self
                .last_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            return;
        }
        match self.suppressed.swap(0, Ordering::Relaxed) {
            0 => log(line),
            n => log(&format!("{line} (and {n} more in the last second)")),
        }
    }
}
