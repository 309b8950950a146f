//! Capture of one output stream of a process: a bounded head and tail for the model, while the
//! whole stream is hashed (blake3), its lines counted, and — once it outgrows what the head can
//! hold or the tool's artifact threshold — written to an [`ArtifactWriter`] as it passes.
//!
//! The stream is read into blocks of [`BLOCK_BYTES`] (the first one starts small and grows, so
//! a tool that prints little costs little), each filled to the brim before it moves on. A
//! stream that fits in its first block is taken care of where it was read. A larger one is
//! handed, block by block, to a blocking thread of its own ([`Sink`]) that keeps the head,
//! hashes, counts lines and writes the artifact; the reader only reads, so hashing and the
//! disk are off its path and a slow disk (dirty-page throttling) never stalls the async reader
//! of another call. Blocks come back to the reader to be filled again: no allocation or copy
//! per block, and the tail is the last two blocks, kept instead of copied.
//!
//! Memory stays flat however much a tool prints: the head, at most [`POOL_BLOCKS`] blocks and
//! the tail cut from two of them at the end.
//!
//! The artifact draws on the call's [`Allowance`]: once a budget is reached it stops (its
//! content, and so its id, is the stream up to there), the rest of the stream is still hashed,
//! counted and kept in head and tail, and [`Captured::spill_error`] says how much was dropped.

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
/// The first block's size: what a pipe holds by default. Enough for most tools, and small,
/// since every stream of every call has one.
const FIRST_BLOCK: usize = 64 * 1024;
/// The size every block but the last has once the stream outgrew the first: reads of up to
/// this much (with the pipe enlarged to match, [`PIPE_BYTES`]) drain a chatty process in few
/// system calls and wake-ups, and the artifact is written in blocks of this size. At least
/// [`TAIL_BYTES`] and more than [`HEAD_BYTES`], so that the first block holds the head and any
/// stream's tail lies in its last two blocks.
const BLOCK_BYTES: usize = 1024 * 1024;
/// The pipe size asked for a process's output (Linux caps it at `/proc/sys/fs/pipe-max-size`,
/// 1 MiB by default).
pub const PIPE_BYTES: usize = BLOCK_BYTES;
/// Blocks a large stream may hold at once: two kept by the sink for the tail, one being
/// filled and the rest queued. Bounds memory when hashing or the disk is slower than the
/// pipe (the process then waits on a full pipe, which is the back-pressure we want).
const POOL_BLOCKS: usize = 6;

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

/// A block of the stream and where it starts in it.
struct Block {
    offset: u64,
    bytes: Vec<u8>,
}

/// Everything done with the stream's bytes but reading them: head, hash, line count, the
/// artifact and its budget, and the last two blocks (the tail). Runs where the reader is for a
/// stream of one block, on a blocking thread of its own for a larger one.
struct Sink {
    spill_to: Option<SpillTo>,
    /// Spilling starts once the stream passes this many bytes: everything up to it is still
    /// in the head, so the artifact can start from there.
    spill_from: Option<u64>,
    head: Vec<u8>,
    total: u64,
    newlines: u64,
    last: Option<u8>,
    hasher: blake3::Hasher,
    writer: Option<ArtifactWriter>,
    spill_error: Option<String>,
    /// Set once a budget stopped the artifact: the budget, and the stream up to the cut.
    cut: Option<(BudgetLimit, WrittenContent)>,
    /// The two latest blocks, older first: the tail lies in them.
    kept: [Option<Block>; 2],
}

impl Sink {
    fn new(spill_to: Option<SpillTo>) -> Sink {
        let spill_from = spill_to
            .as_ref()
            .map(|s| s.threshold.min(HEAD_BYTES as u64));
        Sink {
            spill_to,
            spill_from,
            head: Vec::new(),
            total: 0,
            newlines: 0,
            last: None,
            hasher: blake3::Hasher::new(),
            writer: None,
            spill_error: None,
            cut: None,
            kept: [None, None],
        }
    }

    /// Whether taking `n` more bytes starts the artifact (blocking file-system work).
    fn starts_spill(&self, n: usize) -> bool {
        self.spill_from
            .is_some_and(|from| self.total + n as u64 > from)
            && self.writer.is_none()
            && self.spill_error.is_none()
            && self.cut.is_none()
    }

    /// Takes the next block of the stream; gives back the block it no longer needs.
    fn take(&mut self, bytes: Vec<u8>) -> Option<Vec<u8>> {
        let chunk = &bytes[..];
        let before = self.total;
        // Spill before the chunk is counted: a budget cut inside it needs the hash of the
        // stream up to the cut.
        let starts = self.starts_spill(chunk.len());
        if let Some(to) = self.spill_to.take() {
            if starts {
                // Counting (and near the quota, evicting) the store: this is a blocking
                // thread, or the stream is small enough not to get here.
                to.allowance.prepare();
                match to.store.writer(&to.allowance) {
                    Ok(w) => {
                        self.writer = Some(w);
                        // Everything before this block is in the head (`spill_from`).
                        let upto = usize::try_from(before)
                            .unwrap_or(usize::MAX)
                            .min(self.head.len());
                        let head = std::mem::take(&mut self.head);
                        self.offer(&to.allowance, &head[..upto], 0, &[]);
                        self.head = head;
                        self.offer(&to.allowance, chunk, before, chunk);
                    }
                    Err(e) => self.spill_error = Some(e.to_string()),
                }
            } else {
                self.offer(&to.allowance, chunk, before, chunk);
            }
            self.spill_to = Some(to);
        }
        self.total += chunk.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        if let Some(&b) = chunk.last() {
            self.last = Some(b);
        }
        self.hasher.update(chunk);
        let room = HEAD_BYTES.saturating_sub(self.head.len()).min(chunk.len());
        self.head.extend_from_slice(&chunk[..room]);
        let [older, newer] = &mut self.kept;
        let freed = older.take().map(|b| b.bytes);
        *older = newer.take();
        *newer = Some(Block {
            offset: before,
            bytes,
        });
        freed
    }

    /// Offers `bytes` (the stream from `offset`) to the artifact within the allowance; when a
    /// budget cuts them, records what the artifact then holds. `chunk` is the current block
    /// (not yet counted) when `bytes` is it; earlier bytes are still all in the head.
    fn offer(&mut self, allowance: &Allowance, bytes: &[u8], offset: u64, chunk: &[u8]) {
        if bytes.is_empty() || self.cut.is_some() || self.writer.is_none() {
            return;
        }
        let (grant, limit) = allowance.take(bytes.len() as u64);
        let g = usize::try_from(grant)
            .unwrap_or(bytes.len())
            .min(bytes.len());
        if g > 0
            && let Some(w) = &mut self.writer
            && let Err(e) = w.write(&bytes[..g])
        {
            // Dropping the writer removes its file and gives its bytes back to the budgets.
            self.writer = None;
            self.spill_error = Some(e.to_string());
            return;
        }
        let Some(limit) = limit else { return };
        let kept = offset + g as u64;
        let newlines = |b: &[u8]| memchr::memchr_iter(b'\n', b).count() as u64;
        let (hash, lines, last) = if chunk.is_empty() {
            // The cut is inside the head (bytes before the spill started, from the start).
            let prefix = &bytes[..g];
            (
                blake3::hash(prefix),
                newlines(prefix),
                prefix.last().copied(),
            )
        } else {
            let mut h = self.hasher.clone();
            h.update(&chunk[..g]);
            let last = if g > 0 {
                chunk.get(g - 1).copied()
            } else {
                self.last
            };
            (h.finalize(), self.newlines + newlines(&chunk[..g]), last)
        };
        self.cut = Some((
            limit,
            WrittenContent {
                hash,
                size: kept,
                lines: lines + u64::from(kept > 0 && last.is_some_and(|b| b != b'\n')),
            },
        ));
    }

    /// The stream has ended: head, tail (from the kept blocks), counts, hash and artifact.
    fn finish(mut self) -> Captured {
        let mut spilled = self.writer.take();
        if let (Some((limit, kept)), Some(to)) = (self.cut.take(), &self.spill_to) {
            let cut = BudgetCut::new(&to.allowance, limit, kept.size, self.total);
            self.spill_error.get_or_insert(cut.to_string());
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
        // The tail is what follows the head, at most TAIL_BYTES of it.
        let from = (HEAD_BYTES as u64).max(self.total.saturating_sub(TAIL_BYTES as u64));
        let mut tail =
            Vec::with_capacity(usize::try_from(self.total - from.min(self.total)).unwrap_or(0));
        for block in self.kept.iter().flatten() {
            let end = block.offset + block.bytes.len() as u64;
            if end > from {
                let skip = usize::try_from(from.saturating_sub(block.offset)).unwrap_or(usize::MAX);
                tail.extend_from_slice(block.bytes.get(skip..).unwrap_or_default());
            }
        }
        Captured {
            head: self.head,
            tail,
            total: self.total,
            lines: self.newlines + u64::from(self.last.is_some_and(|b| b != b'\n')),
            hash: self.hasher.finalize(),
            spilled,
            spill_error: self.spill_error,
        }
    }
}

/// Reads into `block` until it is full, the stream ends or `stop` fires; whether the stream
/// goes on.
async fn fill(
    reader: &mut (impl AsyncRead + Unpin),
    block: &mut Vec<u8>,
    stop: &CancellationToken,
) -> bool {
    while block.len() < block.capacity() {
        // Into the block's spare room: nothing zeroed, nothing copied.
        let r = tokio::select! {
            r = reader.read_buf(block) => r,
            () = stop.cancelled() => return false,
        };
        match r {
            Ok(0) | Err(_) => return false,
            Ok(_) => {}
        }
    }
    true
}

/// Reads a stream to its end (or until `stop`), keeping head and tail, hashing everything and
/// spilling it to the store when it grows past `min(threshold, HEAD_BYTES)`, within the call's
/// allowance.
pub async fn capture(
    mut reader: impl AsyncRead + Unpin,
    spill_to: Option<SpillTo>,
    stop: CancellationToken,
) -> Captured {
    let mut sink = Sink::new(spill_to);
    // The first block grows (×4) while the stream fills it, up to BLOCK_BYTES.
    let mut first = Vec::with_capacity(FIRST_BLOCK);
    let mut more = fill(&mut reader, &mut first, &stop).await;
    while more && first.capacity() < BLOCK_BYTES {
        first.reserve_exact((first.capacity() * 4).min(BLOCK_BYTES) - first.len());
        more = fill(&mut reader, &mut first, &stop).await;
    }
    if !more {
        // The whole stream is in one block: no thread of its own, unless it starts an
        // artifact (file-system work).
        if !sink.starts_spill(first.len()) {
            sink.take(first);
            return sink.finish();
        }
        return on_blocking_thread(move || {
            sink.take(first);
            sink.finish()
        })
        .await;
    }
    let (to_sink, mut blocks) = mpsc::unbounded_channel::<Vec<u8>>();
    let (give_back, mut free) = mpsc::unbounded_channel::<Vec<u8>>();
    let done = tokio::task::spawn_blocking(move || {
        while let Some(block) = blocks.blocking_recv() {
            if let Some(freed) = sink.take(block) {
                // The reader may be gone (it stopped); the block is then dropped.
                let _ = give_back.send(freed);
            }
        }
        sink.finish()
    });
    let mut allocated = 1;
    let mut block = first;
    loop {
        if to_sink.send(block).is_err() {
            break;
        }
        block = if let Ok(b) = free.try_recv() {
            b
        } else if allocated < POOL_BLOCKS {
            allocated += 1;
            Vec::with_capacity(BLOCK_BYTES)
        } else {
            match free.recv().await {
                Some(b) => b,
                None => break,
            }
        };
        block.clear();
        let more = fill(&mut reader, &mut block, &stop).await;
        if !more {
            if !block.is_empty() {
                let _ = to_sink.send(block);
            }
            break;
        }
    }
    drop(to_sink);
    match done.await {
        Ok(c) => c,
        // The sink panicked: nothing of the stream is known.
        // The sink panicked: nothing of the stream is known.
        Err(_) => Sink::new(None).finish(),
    }
}

/// Runs a small stream's file-system work off the async threads.
async fn on_blocking_thread(f: impl FnOnce() -> Captured + Send + 'static) -> Captured {
    match tokio::task::spawn_blocking(f).await {
        Ok(c) => c,
        Err(_) => Sink::new(None).finish(),
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

    /// A stream of `len` bytes of lines of varying length.
    fn stream(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| {
                if i % 61 == 60 || i % 997 == 0 {
                    b'\n'
                } else {
                    b'a' + (i % 26) as u8
                }
            })
            .collect()
    }

    /// Writes `bytes` in pieces of `piece` bytes into a small pipe, so that reads return
    /// partly filled blocks.
    fn trickle(bytes: Vec<u8>, piece: usize) -> tokio::io::DuplexStream {
        use tokio::io::AsyncWriteExt;
        let (mut w, r) = tokio::io::duplex(16 * 1024);
        tokio::spawn(async move {
            for p in bytes.chunks(piece) {
                w.write_all(p).await.unwrap();
            }
        });
        r
    }

    /// Every size around the edges of the head, the tail and the blocks, read whole and in
    /// small pieces: head, tail, count, lines, hash and the artifact are exact.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_size_around_the_block_edges_is_exact() {
        let sizes = [
            0,
            1,
            FIRST_BLOCK,
            FIRST_BLOCK + 1,
            HEAD_BYTES,
            HEAD_BYTES + 1,
            HEAD_BYTES + TAIL_BYTES,
            HEAD_BYTES + TAIL_BYTES + 1,
            BLOCK_BYTES - 1,
            BLOCK_BYTES,
            BLOCK_BYTES + 1,
            BLOCK_BYTES + TAIL_BYTES + 7,
            2 * BLOCK_BYTES,
            3 * BLOCK_BYTES + TAIL_BYTES - 1,
            (POOL_BLOCKS + 3) * BLOCK_BYTES + 12_345,
        ];
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path());
        for len in sizes {
            let all = stream(len);
            for piece in [None, Some(7_777)] {
                let spill = SpillTo {
                    store: store.clone(),
                    threshold: 64 * 1024,
                    allowance: store.allowance("s"),
                };
                let c = match piece {
                    None => run(all.clone(), Some(spill)).await,
                    Some(p) => {
                        let r = trickle(all.clone(), p);
                        capture(r, Some(spill), CancellationToken::new()).await
                    }
                };
                let at = format!("{len} bytes in pieces of {piece:?}");
                assert_eq!(c.total, len as u64, "{at}");
                assert_eq!(c.head, all[..len.min(HEAD_BYTES)], "{at}");
                let tail_from = HEAD_BYTES.max(len.saturating_sub(TAIL_BYTES)).min(len);
                assert_eq!(c.tail, all[tail_from..], "{at}");
                assert_eq!(c.hash, blake3::hash(&all), "{at}");
                assert_eq!(
                    c.lines,
                    crate::runtime::artifacts::count_lines(&all),
                    "{at}"
                );
                assert!(c.spill_error.is_none(), "{at}");
                let content = c.content();
                match c.spilled {
                    Some(w) => {
                        assert!(len > 64 * 1024, "{at}: spilled");
                        let origin = crate::runtime::artifacts::ArtifactOrigin {
                            tool: "t",
                            call_id: "c",
                            media_type: "text/plain",
                        };
                        let r = w.finish(content, origin, Default::default()).unwrap();
                        assert!(store.get(&r.id).unwrap() == all, "{at}: artifact");
                    }
                    None => assert!(len <= 64 * 1024, "{at}: not spilled"),
                }
            }
        }
    }

    /// A budget that ends inside a later block of a long stream: the artifact holds exactly
    /// the budget's worth, named by its hash; the stream's own figures cover everything.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_budget_inside_a_later_block_cuts_there() {
        let all = stream(4 * BLOCK_BYTES + 999);
        let budget = 2 * BLOCK_BYTES + 4_321;
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path()).with_budgets(
            crate::runtime::artifacts::ArtifactBudgets {
                per_call: budget as u64,
                per_session: 1 << 30,
                store: 1 << 30,
            },
        );
        let spill = SpillTo {
            store: store.clone(),
            threshold: 64 * 1024,
            allowance: store.allowance("s"),
        };
        let mut c = capture(
            trickle(all.clone(), 100_003),
            Some(spill),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(c.hash, blake3::hash(&all));
        assert!(
            c.spill_error
                .as_deref()
                .unwrap()
                .contains("per-call artifact budget")
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
        let kept = &all[..budget];
        assert_eq!(r.id, format!("blake3:{}", blake3::hash(kept).to_hex()));
        assert!(store.get(&r.id).unwrap() == kept);
        assert_eq!(r.lines, crate::runtime::artifacts::count_lines(kept));
        assert_eq!(r.dropped, (all.len() - budget) as u64);
    }

    /// Reading stops when asked, and what was read is kept.
    #[tokio::test]
    async fn stop_ends_the_capture_with_what_was_read() {
        let (mut w, r) = tokio::io::duplex(64 * 1024);
        let stop = CancellationToken::new();
        let task = tokio::spawn(capture(r, None, stop.clone()));
        tokio::io::AsyncWriteExt::write_all(&mut w, b"partial\n")
            .await
            .unwrap();
        tokio::task::yield_now().await;
        stop.cancel();
        let c = task.await.unwrap();
        assert!(c.total <= 8);
        assert_eq!(c.head, b"partial\n"[..c.total as usize]);
        drop(w);
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
