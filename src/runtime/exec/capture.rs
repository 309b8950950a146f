//! Capture of one output stream of a process: a bounded head and tail for the model, while the
//! whole stream is hashed (blake3), its lines counted, and — once it outgrows what the head can
//! hold or the tool's artifact threshold — written to an [`ArtifactWriter`] as it passes.
//!
//! Memory stays flat however much a tool prints: the head, the tail, one read buffer and a
//! short queue of chunks on their way to the file. File writes happen on a blocking thread so
//! a slow disk (dirty-page throttling) never stalls the async reader of another call.
//!
//! The artifact draws on the call's [`Allowance`]: once a budget is reached it stops (its
//! content, and so its id, is the stream up to there), the rest of the stream is still hashed,
//! counted and kept in head and tail, and [`Captured::spill_error`] says how much was dropped.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::runtime::artifacts::{
    Allowance, ArtifactStore, ArtifactWriter, BudgetCut, BudgetLimit, WrittenContent,
};

/// Bytes kept from the start of a stream.
pub const HEAD_BYTES: usize = 512 * 1024;
/// Bytes kept from the end of a stream.
pub const TAIL_BYTES: usize = 512 * 1024;
/// First read size: what a pipe holds by default. Enough for most tools, and small, since every
/// stream of every call has one.
const READ_CHUNK: usize = 64 * 1024;
/// The read size a stream grows to while reads keep filling the buffer (with the pipe enlarged
/// to match, [`PIPE_BYTES`]): a chatty process is drained in a sixteenth of the system calls
/// and wake-ups, and the artifact written in blocks of this size.
const READ_CHUNK_MAX: usize = 1024 * 1024;
/// The pipe size asked for a process's output (Linux caps it at `/proc/sys/fs/pipe-max-size`,
/// 1 MiB by default).
pub const PIPE_BYTES: usize = READ_CHUNK_MAX;
/// Chunks in flight to the artifact file: bounds memory when the disk is slower than the pipe
/// (the process then waits on a full pipe, which is the back-pressure we want).
const SPILL_QUEUE: usize = 8;

/// Where a stream goes beyond its head and tail.
#[derive(Clone, Debug)]
pub struct SpillTo {
    /// The store the artifact is written to.
    pub store: ArtifactStore,
    /// Output larger than this becomes an artifact.
    pub threshold: u64,
    /// What the call may still write to the store (shared by its streams).
    pub allowance: Allowance,
}

/// A captured stream.
#[derive(Debug)]
pub struct Captured {
    /// The first bytes.
    pub head: Vec<u8>,
    /// The last bytes (after the head).
    pub tail: Vec<u8>,
    /// Every byte that passed.
    pub total: u64,
    /// Newlines, plus one for a final unterminated line.
    pub lines: u64,
    /// blake3 of every byte.
    pub hash: blake3::Hash,
    /// The full stream, when it was written out (to be finished or dropped by the caller).
    pub spilled: Option<ArtifactWriter>,
    /// Why the full stream could not be kept.
    pub spill_error: Option<String>,
}

impl Captured {
    /// Bytes neither in the head nor in the tail.
    pub fn omitted(&self) -> u64 {
        self.total - self.head.len() as u64 - self.tail.len() as u64
    }

    #[cfg(test)]
    /// Whether the whole stream is in `head`.
    pub fn is_complete(&self) -> bool {
        self.omitted() == 0 && self.tail.is_empty()
    }

    /// What is known about the content, for the artifact (a writer a budget stopped names
    /// itself by the part it holds instead: [`ArtifactWriter::stopped_at`]).
    pub fn content(&self) -> WrittenContent {
        WrittenContent {
            hash: self.hash,
            size: self.total,
            lines: self.lines,
        }
    }

    /// Head and tail as text (lossy UTF-8), cut to whole lines, with a marker for the lines in
    /// between: `[… 99,000 lines (1234567 bytes) omitted …]`.
    pub fn text(&self) -> String {
        if self.omitted() == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&self.tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        // Cut the head after its last newline and the tail after its first, so both ends
        // hold whole lines and the marker can count lines.
        let head_end = self
            .head
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let tail_start = self
            .tail
            .iter()
            .position(|b| *b == b'\n')
            .map_or(self.tail.len(), |i| i + 1);
        let head = &self.head[..head_end];
        let tail = &self.tail[tail_start..];
        let newlines = |b: &[u8]| b.iter().filter(|c| **c == b'\n').count() as u64;
        let tail_lines = newlines(tail) + u64::from(!tail.is_empty() && !tail.ends_with(b"\n"));
        let omitted_lines = self.lines.saturating_sub(newlines(head) + tail_lines);
        let omitted_bytes = self.total - head.len() as u64 - tail.len() as u64;
        let mut s = String::from_utf8_lossy(head).into_owned();
        s.push_str(&format!(
            "[… {omitted_lines} line{} ({omitted_bytes} bytes) omitted …]\n",
            if omitted_lines == 1 { "" } else { "s" }
        ));
        s.push_str(&String::from_utf8_lossy(tail));
        s
    }
}

/// A stream being written to an artifact by a blocking thread.
struct Spill {
    tx: mpsc::Sender<Vec<u8>>,
    done: tokio::task::JoinHandle<io::Result<ArtifactWriter>>,
}

impl Spill {
    fn start(store: &ArtifactStore, allowance: &Allowance) -> io::Result<Spill> {
        let mut writer = store.writer(allowance).map_err(io::Error::other)?;
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(SPILL_QUEUE);
        let done = tokio::task::spawn_blocking(move || {
            while let Some(chunk) = rx.blocking_recv() {
                writer.write(&chunk)?;
            }
            Ok(writer)
        });
        Ok(Spill { tx, done })
    }

    async fn finish(self) -> io::Result<ArtifactWriter> {
        drop(self.tx);
        self.done.await.map_err(io::Error::other)?
    }
}

/// The running state of one stream.
struct State {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
    newlines: u64,
    last: Option<u8>,
    hasher: blake3::Hasher,
    spill: Option<Spill>,
    spill_error: Option<String>,
    /// Set once a budget stopped the artifact: the budget, and the stream up to the cut.
    cut: Option<(BudgetLimit, WrittenContent)>,
}

impl State {
    fn keep(&mut self, mut chunk: &[u8]) {
        let take = (HEAD_BYTES - self.head.len()).min(chunk.len());
        self.head.extend_from_slice(&chunk[..take]);
        chunk = &chunk[take..];
        if chunk.is_empty() {
            return;
        }
        // A read as large as the tail holds the whole tail: copy only that.
        if chunk.len() >= TAIL_BYTES {
            self.tail.clear();
            self.tail
                .extend_from_slice(&chunk[chunk.len() - TAIL_BYTES..]);
            return;
        }
        // A buffer of up to twice the tail, trimmed in one move: amortized O(1) per byte.
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > 2 * TAIL_BYTES {
            let cut = self.tail.len() - TAIL_BYTES;
            self.tail.drain(..cut);
        }
    }
}

/// Reads a stream to its end (or until `stop`), keeping head and tail, hashing everything and
/// spilling it to the store when it grows past `min(threshold, HEAD_BYTES)`, within the call's
/// allowance.
pub async fn capture(
    mut reader: impl AsyncRead + Unpin,
    spill_to: Option<SpillTo>,
    stop: CancellationToken,
) -> Captured {
    let mut st = State {
        head: Vec::new(),
        tail: Vec::new(),
        total: 0,
        newlines: 0,
        last: None,
        hasher: blake3::Hasher::new(),
        spill: None,
        spill_error: None,
        cut: None,
    };
    // Everything up to this point is still in the head, so spilling can start from it.
    let spill_from = spill_to
        .as_ref()
        .map(|s| s.threshold.min(HEAD_BYTES as u64));
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let n = tokio::select! {
            r = reader.read(&mut buf) => match r {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            },
            () = stop.cancelled() => break,
        };
        let full = n == buf.len();
        let chunk = &buf[..n];
        let before = st.total;
        // Spill before the chunk is counted: a budget cut inside it needs the hash of the
        // stream up to the cut.
        if let (Some(from), Some(to)) = (spill_from, &spill_to)
            && st.spill.is_none()
            && st.spill_error.is_none()
            && st.cut.is_none()
            && before + n as u64 > from
        {
            // Counting (and near the quota, evicting) is file-system work: off this thread.
            let allowance = to.allowance.clone();
            let _ = tokio::task::spawn_blocking(move || allowance.prepare()).await;
            match Spill::start(&to.store, &to.allowance) {
                Ok(s) => {
                    st.spill = Some(s);
                    let earlier = st.head[..usize::try_from(before).unwrap_or(0)].to_vec();
                    offer(&mut st, &to.allowance, &earlier, 0, &[]).await;
                    offer(&mut st, &to.allowance, chunk, before, chunk).await;
                }
                Err(e) => st.spill_error = Some(e.to_string()),
            }
        } else if st.spill.is_some()
            && st.cut.is_none()
            && let Some(to) = &spill_to
        {
            offer(&mut st, &to.allowance, chunk, before, chunk).await;
        }
        st.total += n as u64;
        st.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        st.last = chunk.last().copied();
        st.hasher.update(chunk);
        st.keep(chunk);
        // The process writes faster than we read: read more at a time.
        if full && buf.len() < READ_CHUNK_MAX {
            buf.resize(buf.len() * 4, 0);
        }
    }
    let mut spilled = match st.spill.take() {
        Some(s) => match s.finish().await {
            Ok(w) => Some(w),
            Err(e) => {
                st.spill_error.get_or_insert(e.to_string());
                None
            }
        },
        None => None,
    };
    if let (Some((limit, kept)), Some(to)) = (st.cut.take(), &spill_to) {
        let cut = BudgetCut::new(&to.allowance, limit, kept.size, st.total);
        st.spill_error.get_or_insert(cut.to_string());
        spilled = match spilled {
            // Nothing kept at all: there is no artifact to finish.
            Some(_) if kept.size == 0 => None,
            Some(mut w) => {
                w.stopped_at(kept);
                Some(w)
            }
            None => None,
        };
    }
    let tail = if st.tail.len() > TAIL_BYTES {
        st.tail[st.tail.len() - TAIL_BYTES..].to_vec()
    } else {
        st.tail
    };
    Captured {
        head: st.head,
        tail,
        total: st.total,
        lines: st.newlines + u64::from(st.last.is_some_and(|b| b != b'\n')),
        hash: st.hasher.finalize(),
        spilled,
        spill_error: st.spill_error,
    }
}

/// Offers `bytes` (the stream from `offset`) to the artifact within the allowance; when a
/// budget cuts them, records what the artifact then holds. `chunk` is the current read (not
/// yet counted in the state) when `bytes` is it; earlier bytes are still all in the head.
async fn offer(st: &mut State, allowance: &Allowance, bytes: &[u8], offset: u64, chunk: &[u8]) {
    if bytes.is_empty() || st.cut.is_some() || st.spill.is_none() {
        return;
    }
    let (grant, limit) = allowance.take(bytes.len() as u64);
    let g = usize::try_from(grant)
        .unwrap_or(bytes.len())
        .min(bytes.len());
    if g > 0 {
        send(st, bytes[..g].to_vec()).await;
    }
    let Some(limit) = limit else { return };
    let kept = offset + g as u64;
    let newlines = |b: &[u8]| memchr::memchr_iter(b'\n', b).count() as u64;
    let (hash, lines, last) = if chunk.is_empty() {
        // The cut is inside the head (bytes before the spill started).
        let prefix = &st.head[..usize::try_from(kept).unwrap_or(0).min(st.head.len())];
        (
            blake3::hash(prefix),
            newlines(prefix),
            prefix.last().copied(),
        )
    } else {
        let mut h = st.hasher.clone();
        h.update(&chunk[..g]);
        let last = if g > 0 {
            chunk.get(g - 1).copied()
        } else {
            st.last
        };
        (h.finalize(), st.newlines + newlines(&chunk[..g]), last)
    };
    st.cut = Some((
        limit,
        WrittenContent {
            hash,
            size: kept,
            lines: lines + u64::from(kept > 0 && last.is_some_and(|b| b != b'\n')),
        },
    ));
}

/// Queues a chunk for the file; if the writer failed, stops spilling and keeps its error.
async fn send(st: &mut State, chunk: Vec<u8>) {
    let Some(spill) = &st.spill else { return };
    if spill.tx.send(chunk).await.is_err()
        && let Some(s) = st.spill.take()
    {
        let e = match s.finish().await {
            Err(e) => e.to_string(),
            Ok(_) => "the artifact writer stopped".to_owned(),
        };
        st.spill_error = Some(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads grow past the tail's size; head, tail, count, lines and hash stay exact.
    #[tokio::test]
    async fn large_reads_keep_head_and_tail_exact() {
        let all: Vec<u8> = (0..5 * 1024 * 1024 + 123)
            .map(|i: usize| {
                if i % 61 == 60 {
                    b'\n'
                } else {
                    b'a' + (i % 26) as u8
                }
            })
            .collect();
        let c = capture(&all[..], None, CancellationToken::new()).await;
        assert_eq!(c.total, all.len() as u64);
        assert_eq!(c.head, all[..HEAD_BYTES]);
        assert_eq!(c.tail, all[all.len() - TAIL_BYTES..]);
        assert_eq!(c.hash, blake3::hash(&all));
        let newlines = all.iter().filter(|b| **b == b'\n').count() as u64;
        assert_eq!(c.lines, newlines + u64::from(all.last() != Some(&b'\n')));
    }

    async fn run(bytes: Vec<u8>, spill: Option<SpillTo>) -> Captured {
        capture(&bytes[..], spill, CancellationToken::new()).await
    }

    #[tokio::test]
    async fn small_output_is_complete() {
        let c = run(b"a\nb".to_vec(), None).await;
        assert!(c.is_complete());
        assert_eq!((c.total, c.lines, c.text()), (3, 2, "a\nb".to_owned()));
        assert_eq!(c.hash, blake3::hash(b"a\nb"));
    }

    #[tokio::test]
    async fn large_output_keeps_whole_lines_at_both_ends_and_spills_everything() {
        let text: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path());
        let spill = SpillTo {
            store: store.clone(),
            threshold: 64 * 1024,
            allowance: store.allowance("s"),
        };
        let c = run(text.clone().into_bytes(), Some(spill)).await;
        assert_eq!((c.total, c.lines), (text.len() as u64, 200_000));
        assert_eq!(c.hash, blake3::hash(text.as_bytes()));
        let shown = c.text();
        assert!(shown.starts_with("line 0\n"));
        assert!(shown.ends_with("line 199999\n"));
        let marker = shown.lines().find(|l| l.starts_with("[… ")).unwrap();
        let kept = shown.lines().count() - 1;
        assert_eq!(
            marker,
            format!(
                "[… {} lines ({} bytes) omitted …]",
                200_000 - kept,
                text.len() - (shown.len() - marker.len() - 1)
            )
        );
        let content = c.content();
        let origin = crate::runtime::artifacts::ArtifactOrigin {
            tool: "t",
            call_id: "c",
            media_type: "text/plain",
        };
        let r = c
            .spilled
            .unwrap()
            .finish(content, origin, Default::default())
            .unwrap();
        assert_eq!(store.get(&r.id).unwrap(), text.as_bytes());
        assert_eq!(
            (r.size, r.lines, r.dropped),
            (text.len() as u64, 200_000, 0)
        );
    }

    /// A stream larger than the call's artifact budget: the artifact holds the budget's worth
    /// from the start, named by the hash of that; the result's note says how much was dropped;
    /// head, tail, hash and line count still cover the whole stream.
    #[tokio::test]
    async fn the_artifact_stops_at_the_call_budget() {
        let text: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path()).with_budgets(
            crate::runtime::artifacts::ArtifactBudgets {
                per_call: 200_000,
                per_session: 1 << 30,
                store: 1 << 30,
            },
        );
        let spill = SpillTo {
            store: store.clone(),
            threshold: 64 * 1024,
            allowance: store.allowance("s"),
        };
        let mut c = run(text.clone().into_bytes(), Some(spill)).await;
        assert_eq!((c.total, c.lines), (text.len() as u64, 100_000));
        assert_eq!(c.hash, blake3::hash(text.as_bytes()));
        assert!(c.text().ends_with("line 99999\n"));
        let dropped = text.len() - 200_000;
        assert_eq!(
            c.spill_error.as_deref(),
            Some(
                format!(
                    "the artifact keeps the first 195.3 KiB (200000 bytes): the per-call artifact budget (budgets.call_artifacts, 195.3 KiB) was reached; {} dropped",
                    crate::runtime::artifacts::size_exact(dropped as u64)
                )
                .as_str()
            )
        );
        let content = c.content();
        let origin = crate::runtime::artifacts::ArtifactOrigin {
            tool: "t",
            call_id: "c",
            media_type: "text/plain",
        };
        let r = c
            .spilled
            .take()
            .unwrap()
            .finish(content, origin, Default::default())
            .unwrap();
        let kept = &text.as_bytes()[..200_000];
        assert_eq!(r.id, format!("blake3:{}", blake3::hash(kept).to_hex()));
        assert_eq!(r.dropped, dropped as u64);
        assert_eq!(store.get(&r.id).unwrap(), kept);
        assert_eq!(r.lines, crate::runtime::artifacts::count_lines(kept));
    }

    /// A budget smaller than what the head already held: the cut falls inside the head.
    #[tokio::test]
    async fn a_budget_inside_the_head_cuts_there() {
        let text = "abc\n".repeat(50_000);
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path()).with_budgets(
            crate::runtime::artifacts::ArtifactBudgets {
                per_call: 1_001,
                per_session: 1 << 30,
                store: 1 << 30,
            },
        );
        let spill = SpillTo {
            store: store.clone(),
            threshold: 100_000,
            allowance: store.allowance("s"),
        };
        let mut c = run(text.clone().into_bytes(), Some(spill)).await;
        let content = c.content();
        let origin = crate::runtime::artifacts::ArtifactOrigin {
            tool: "t",
            call_id: "c",
            media_type: "text/plain",
        };
        let r = c
            .spilled
            .take()
            .unwrap()
            .finish(content, origin, Default::default())
            .unwrap();
        let kept = &text.as_bytes()[..1_001];
        assert_eq!(store.get(&r.id).unwrap(), kept);
        assert_eq!((r.size, r.lines), (1_001, 251));
    }
}
