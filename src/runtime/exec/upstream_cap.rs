//! The transport of an upstream MCP server: its stdio, read through [`CappedReader`], so that an
//! answer longer than a message may be fails the call at once instead of vanishing.
//!
//! rmcp reads a child's stdout one line (one JSON-RPC message) at a time and drops a line past
//! its cap ([`MESSAGE_CAP`], 16 MiB) with only a log record, leaving the connection open: the
//! request that line answered would wait for the whole of its budget and end as TIMEOUT. Here
//! the stdout is watched on its way to rmcp; a line about to pass the cap is read to its end
//! (counted, not kept, up to [`DRAIN_LIMIT`]), its size noted in an [`OversizeRecord`], and rmcp
//! sees the end of the stream. The connection closes, every call waiting on it fails at once,
//! and the executor, finding the record, reports UPSTREAM_ERROR naming the size and the cap.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// The longest message read from an upstream, in bytes, its newline included: rmcp's line cap
/// (16 MiB).
pub const MESSAGE_CAP: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// How far an oversized message is read to learn its size (1 GiB); past it, the size is given
/// as "at least".
pub const DRAIN_LIMIT: u64 = 1 << 30;

/// How long a closed connection's server gets to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// A message an upstream sent that was longer than [`MESSAGE_CAP`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Oversized {
    /// Its length in bytes, newline included (as far as it was read).
    pub bytes: u64,
    /// Whether it was read to its end; `false`: the stream ended or [`DRAIN_LIMIT`] was reached
    /// first, so `bytes` is a lower bound.
    pub complete: bool,
}

impl std::fmt::Display for Oversized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at_least = if self.complete { "" } else { "at least " };
        write!(
            f,
            "a message of {at_least}{} bytes, more than the {MESSAGE_CAP} bytes (16 MiB) toolgate reads in one message",
            self.bytes
        )
    }
}

/// Where a connection's reader notes the oversized message that ended it.
#[derive(Clone, Debug, Default)]
pub struct OversizeRecord(Arc<Mutex<Option<Oversized>>>);

impl OversizeRecord {
    /// The oversized message that ended the connection, if one did.
    pub fn get(&self) -> Option<Oversized> {
        match self.0.lock() {
            Ok(g) => *g,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    fn set(&self, o: Oversized) {
        match self.0.lock() {
            Ok(mut g) => *g = Some(o),
            Err(poisoned) => *poisoned.into_inner() = Some(o),
        }
    }
}

/// A reader that passes lines of at most `cap` bytes through and ends the stream at the first
/// longer one, after noting its size.
pub struct CappedReader<R> {
    inner: R,
    cap: usize,
    /// Bytes of the current line passed or counted so far.
    line: u64,
    /// The current line passed the cap; its rest is being counted.
    draining: bool,
    /// The stream has ended for the reader above (an oversized line was noted).
    ended: bool,
    record: OversizeRecord,
}

impl<R> CappedReader<R> {
    /// Reads `inner`, ending at the first line longer than `cap` bytes (noted in `record`).
    pub fn new(inner: R, cap: usize, record: OversizeRecord) -> Self {
        CappedReader {
            inner,
            cap,
            line: 0,
            draining: false,
            ended: false,
            record,
        }
    }

    fn end(&mut self, complete: bool) {
        self.record.set(Oversized {
            bytes: self.line,
            complete,
        });
        self.ended = true;
        self.draining = false;
    }
}

impl<R: AsyncRead + Unpin> CappedReader<R> {
    /// Counts the rest of an oversized line; ready once it is noted.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut scratch = [0u8; 64 * 1024];
        loop {
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.inner).poll_read(cx, &mut buf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {}
            }
            let got = buf.filled();
            if got.is_empty() {
                self.end(false);
                return Poll::Ready(Ok(()));
            }
            if let Some(p) = got.iter().position(|b| *b == b'\n') {
                self.line += p as u64 + 1;
                self.end(true);
                return Poll::Ready(Ok(()));
            }
            self.line += got.len() as u64;
            if self.line >= DRAIN_LIMIT {
                self.end(false);
                return Poll::Ready(Ok(()));
            }
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for CappedReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(Ok(()));
        }
        if this.draining {
            // Ready means the end of the stream for rmcp: nothing is added to `buf`.
            return this.poll_drain(cx);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {}
            other => return other,
        }
        let cap = this.cap as u64;
        let data = &buf.filled()[before..];
        let mut i = 0usize;
        while i < data.len() {
            let rest = &data[i..];
            let newline = rest.iter().position(|b| *b == b'\n');
            let seen = newline.map_or(rest.len(), |p| p + 1) as u64;
            if this.line + seen <= cap {
                this.line = if newline.is_some() {
                    0
                } else {
                    this.line + seen
                };
                i += seen as usize;
                continue;
            }
            // This line passes the cap: pass on what fits (rmcp drops it at the end of the
            // stream), count the rest.
            let fits = (cap - this.line) as usize;
            this.line += seen;
            buf.set_filled(before + i + fits);
            if newline.is_some() {
                this.end(true);
            } else {
                this.draining = true;
                if i + fits == 0 {
                    return this.poll_drain(cx);
                }
            }
            return Poll::Ready(Ok(()));
        }
        Poll::Ready(Ok(()))
    }
}

/// An upstream server's process and its capped stdio transport.
pub struct CappedChild {
    child: Child,
    transport: AsyncRwTransport<RoleClient, CappedReader<ChildStdout>, ChildStdin>,
}

impl CappedChild {
    /// The transport over a started child's piped stdin and stdout (taken from it); `None`
    /// when either was not piped.
    pub fn new(mut child: Child, record: OversizeRecord) -> Option<Self> {
        let stdout = child.stdout.take()?;
        let stdin = child.stdin.take()?;
        let reader = CappedReader::new(stdout, MESSAGE_CAP, record);
        // rmcp's own cap stays above ours: it never drops a line in silence.
        let transport =
            AsyncRwTransport::new_client(reader, stdin).with_max_line_length(usize::MAX);
        Some(CappedChild { child, transport })
    }

    /// The child's process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }
}

impl Transport<RoleClient> for CappedChild {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    /// Closes the server's stdin (the MCP stdio shutdown), waits a little for it to exit, then
    /// kills it. Dropping the transport kills it too (`kill_on_drop`).
    async fn close(&mut self) -> Result<(), Self::Error> {
        self.transport.close().await?;
        if tokio::time::timeout(EXIT_GRACE, self.child.wait())
            .await
            .is_err()
        {
            self.child.kill().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    async fn read_all(input: Vec<u8>, cap: usize) -> (Vec<u8>, Option<Oversized>) {
        let record = OversizeRecord::default();
        let mut r = CappedReader::new(&input[..], cap, record.clone());
        let mut out = Vec::new();
        r.read_to_end(&mut out).await.unwrap();
        (out, record.get())
    }

    #[tokio::test]
    async fn lines_within_the_cap_pass_whole() {
        let input = b"abc\n1234567\n\nxy".to_vec();
        assert_eq!(read_all(input.clone(), 8).await, (input, None));
    }

    #[tokio::test]
    async fn a_longer_line_ends_the_stream_with_its_size() {
        let mut input = b"ok\n".to_vec();
        input.extend(vec![b'x'; 100]);
        input.extend(b"\nlater\n");
        let (out, o) = read_all(input, 8).await;
        assert_eq!(
            out,
            b"ok\nxxxxxxxx".to_vec(),
            "the head is passed, then the end"
        );
        assert_eq!(
            o,
            Some(Oversized {
                bytes: 101,
                complete: true
            })
        );
    }

    #[tokio::test]
    async fn a_line_cut_by_the_end_of_the_stream_is_at_least_its_length() {
        let (_, o) = read_all(vec![b'y'; 50], 8).await;
        assert_eq!(
            o,
            Some(Oversized {
                bytes: 50,
                complete: false
            })
        );
        assert_eq!(
            o.unwrap().to_string(),
            "a message of at least 50 bytes, more than the 16777216 bytes (16 MiB) toolgate reads in one message"
        );
    }
}
