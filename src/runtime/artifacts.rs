//! [`ArtifactStore`]: full tool outputs kept as content-addressed files, so a result can carry a
//! short reference instead of megabytes of log (chapter §30, §32).
//!
//! Layout under the project's state folder: `artifacts/objects/ab/cdef…` (blake3 hex of the
//! content, split after two characters) and `artifacts/meta/abcdef….json`. Objects are written
//! to a temporary file in the same folder, fsynced, renamed into place and the folder fsynced,
//! so a crash never leaves a half-written object under its final name. The same content is
//! stored once. Output too large to hold in memory streams into an [`ArtifactWriter`] (a
//! temporary file in `artifacts/tmp`) and is renamed into place once its hash is known.
//! Files are owner-only (0600): an artifact keeps the raw output, secrets included, and what
//! is redacted for the model ([`ArtifactRedaction`]) is redacted again whenever
//! `read_artifact` shows a part. `read_artifact` reads from here; the journal records the ids.
//!
//! Budgets ([`ArtifactBudgets`], `budgets` in toolgate.yaml) bound what is kept: the bytes one
//! call may write, the bytes one session may write, and the store's quota. A call draws on an
//! [`Allowance`]; an artifact that reaches a budget stops there (its id is the hash of what was
//! kept) and the result says how much was dropped. When the store is near its quota, the oldest
//! artifacts of other sessions are evicted to make room for one call's worth; what still does
//! not fit is not kept. Usage is counted by this process and recounted from the disk whenever
//! the store looks nearly full, so several processes sharing a store stay near the quota.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

/// The id prefix naming the hash function.
pub const ID_PREFIX: &str = "blake3:";

/// A reference to a stored artifact, as a result carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRef {
    /// `blake3:` + 64 hex characters.
    pub id: String,
    /// Size in bytes.
    pub size: u64,
    /// Number of lines (newline-terminated or final partial line).
    pub lines: u64,
    /// What the bytes are, e.g. `text/plain`.
    pub media_type: String,
}

/// What the store knows about an artifact beside its bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactMeta {
    /// The reference.
    #[serde(flatten)]
    pub reference: ArtifactRef,
    /// When it was first stored (RFC 3339).
    pub created_at: String,
    /// The tool whose output it is.
    pub tool: String,
    /// The call that first produced it.
    pub call_id: String,
    /// What must be redacted whenever a part of it is shown to the model.
    #[serde(default, skip_serializing_if = "ArtifactRedaction::is_empty")]
    pub redact: ArtifactRedaction,
    /// The session whose call produced it (its artifacts are not evicted to make room for it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub session_id: String,
}

/// What is redacted from an artifact's content before the model sees any of it (the file
/// itself keeps the raw bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRedaction {
    /// Whether the well-known secret patterns apply.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secrets: bool,
    /// The spec's own patterns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patterns: Vec<String>,
    /// Literal secret values (secret environment variables of the process).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub literals: Vec<String>,
}

impl ArtifactRedaction {
    /// Whether nothing is redacted.
    pub fn is_empty(&self) -> bool {
        !self.secrets && self.patterns.is_empty() && self.literals.is_empty()
    }
}

/// Where an artifact came from.
#[derive(Clone, Copy, Debug)]
pub struct ArtifactOrigin<'a> {
    /// The tool.
    pub tool: &'a str,
    /// The call.
    pub call_id: &'a str,
    /// The media type of the bytes.
    pub media_type: &'a str,
}

/// An artifact that cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArtifactError {
    /// Not `blake3:` + 64 lowercase hex characters.
    #[error("`{0}` is not an artifact id (expected blake3: followed by 64 hex characters)")]
    InvalidId(String),
    /// No artifact with that id.
    #[error(
        "no artifact `{0}` in this project (the store evicts the oldest artifacts of other sessions when it reaches its quota, budgets.artifact_store)"
    )]
    NotFound(String),
    /// The file system failed.
    #[error("artifact store: {0}")]
    Io(#[from] io::Error),
}

/// Content-addressed files under `<state_dir>/artifacts`.
#[derive(Clone, Debug)]
pub struct ArtifactStore {
    root: PathBuf,
    ledger: Arc<Ledger>,
}

/// How many artifact bytes calls may write ([`crate::ir::Budgets`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArtifactBudgets {
    /// Bytes one call may write.
    pub per_call: u64,
    /// Bytes one session may write.
    pub per_session: u64,
    /// Bytes the store may hold.
    pub store: u64,
}

impl ArtifactBudgets {
    /// The artifact budgets of a project's budgets.
    pub fn of(b: &crate::ir::Budgets) -> ArtifactBudgets {
        ArtifactBudgets {
            per_call: b.call_artifacts,
            per_session: b.session_artifacts,
            store: b.artifact_store,
        }
    }
}

impl Default for ArtifactBudgets {
    fn default() -> Self {
        ArtifactBudgets::of(&crate::ir::Budgets::default())
    }
}

/// Which budget stopped an artifact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetLimit {
    /// The call's (`budgets.call_artifacts`).
    Call,
    /// The session's (`budgets.session_artifacts`).
    Session,
    /// The store's quota (`budgets.artifact_store`).
    Store,
}

/// An artifact cut short by a budget: what the result says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetCut {
    /// The budget that was reached.
    pub limit: BudgetLimit,
    /// Its size.
    pub budget: u64,
    /// Bytes kept in the artifact.
    pub kept: u64,
    /// Bytes of the output that were not kept.
    pub dropped: u64,
}

impl std::fmt::Display for BudgetCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.limit {
            BudgetLimit::Call => "the per-call artifact budget (budgets.call_artifacts",
            BudgetLimit::Session => "this session's artifact budget (budgets.session_artifacts",
            BudgetLimit::Store => {
                "the artifact store's quota, with nothing older left to evict (budgets.artifact_store"
            }
        };
        let kept = if self.kept == 0 {
            "no artifact was kept".to_owned()
        } else {
            format!("the artifact keeps the first {}", size_exact(self.kept))
        };
        write!(
            f,
            "{kept}: {what}, {}) was reached; {} dropped",
            size_text(self.budget),
            size_exact(self.dropped)
        )
    }
}

/// What the store has counted: per-session usage, and the store's size.
#[derive(Debug, Default)]
struct Ledger {
    budgets: ArtifactBudgets,
    sessions: Mutex<HashMap<String, Arc<AtomicU64>>>,
    /// Bytes in the store (objects and unfinished writes) as this process knows it; `None`
    /// until first counted from the disk.
    stored: Mutex<Option<u64>>,
}

/// What one call may still write to the store ([`ArtifactStore::allowance`]); clones share it.
#[derive(Clone, Debug)]
pub struct Allowance {
    store: ArtifactStore,
    session_id: String,
    call: Arc<AtomicU64>,
    session: Arc<AtomicU64>,
}

impl Allowance {
    /// The budgets it draws on.
    pub fn budgets(&self) -> ArtifactBudgets {
        self.store.ledger.budgets
    }

    /// Grants up to `want` bytes and counts them against the call, the session and the store.
    /// Fewer than `want` come with the budget that was reached.
    pub fn take(&self, want: u64) -> (u64, Option<BudgetLimit>) {
        let b = self.store.ledger.budgets;
        let mut grant = want;
        let mut limit = None;
        let mut narrow = |room: u64, l: BudgetLimit| {
            if room < grant {
                grant = room;
                limit = Some(l);
            }
        };
        narrow(
            b.per_call.saturating_sub(self.call.load(Ordering::Relaxed)),
            BudgetLimit::Call,
        );
        narrow(
            b.per_session
                .saturating_sub(self.session.load(Ordering::Relaxed)),
            BudgetLimit::Session,
        );
        let mut stored = self
            .store
            .ledger
            .stored
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let used = stored.unwrap_or(0);
        narrow(b.store.saturating_sub(used), BudgetLimit::Store);
        *stored = Some(used + grant);
        drop(stored);
        self.call.fetch_add(grant, Ordering::Relaxed);
        self.session.fetch_add(grant, Ordering::Relaxed);
        (grant, limit)
    }

    /// Makes room before a call writes: counts the store from the disk when it looks nearly
    /// full (or was never counted), then evicts the oldest artifacts of other sessions until
    /// what this call may still write fits under the quota. Blocking file-system work, done
    /// only near the quota.
    pub fn prepare(&self) {
        let b = self.store.ledger.budgets;
        let need = b
            .per_call
            .saturating_sub(self.call.load(Ordering::Relaxed))
            .min(
                b.per_session
                    .saturating_sub(self.session.load(Ordering::Relaxed)),
            );
        let mut stored = self
            .store
            .ledger
            .stored
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match *stored {
            Some(used) if used.saturating_add(need) <= b.store => return,
            _ => {}
        }
        let mut used = self.store.disk_usage();
        if used.saturating_add(need) > b.store {
            used = self
                .store
                .evict(used, used.saturating_add(need) - b.store, &self.session_id);
        }
        *stored = Some(used);
    }

    /// Gives back bytes counted against the store that did not stay there (a duplicate).
    fn release_stored(&self, bytes: u64) {
        let mut stored = self
            .store
            .ledger
            .stored
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(used) = stored.as_mut() {
            *used = used.saturating_sub(bytes);
        }
    }
}

/// Sizes as people read them: `256 MiB`, `1.5 GiB`, `900 bytes`.
pub fn size_text(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            return if bytes.is_multiple_of(unit) {
                format!("{} {name}", bytes / unit)
            } else {
                format!("{:.1} {name}", bytes as f64 / unit as f64)
            };
        }
    }
    format!("{bytes} bytes")
}

/// A size as people read it, with the exact byte count when that is rounded:
/// `900 bytes`, `1.5 GiB (1610612736 bytes)`.
pub fn size_exact(bytes: u64) -> String {
    if bytes < 1024 {
        size_text(bytes)
    } else {
        format!("{} ({bytes} bytes)", size_text(bytes))
    }
}

impl ArtifactStore {
    /// A store under a state folder (created on first write), with the default budgets.
    pub fn new(state_dir: &Path) -> Self {
        ArtifactStore {
            root: state_dir.join("artifacts"),
            ledger: Arc::new(Ledger::default()),
        }
    }

    /// Sets the artifact budgets.
    pub fn with_budgets(mut self, budgets: ArtifactBudgets) -> Self {
        self.ledger = Arc::new(Ledger {
            budgets,
            ..Ledger::default()
        });
        self
    }

    /// A fresh allowance for one call of a session.
    pub fn allowance(&self, session_id: &str) -> Allowance {
        let session = self
            .ledger
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(session_id.to_owned())
            .or_default()
            .clone();
        Allowance {
            store: self.clone(),
            session_id: session_id.to_owned(),
            call: Arc::new(AtomicU64::new(0)),
            session,
        }
    }

    /// Stores what fits of `bytes` within a call's allowance (see [`ArtifactStore::put`]):
    /// the reference (none when nothing fits) and, when a budget cut it, by how much.
    pub fn put_within(
        &self,
        bytes: &[u8],
        origin: ArtifactOrigin<'_>,
        allowance: &Allowance,
    ) -> Result<(Option<ArtifactRef>, Option<BudgetCut>), ArtifactError> {
        allowance.prepare();
        let (grant, limit) = allowance.take(bytes.len() as u64);
        let kept = &bytes[..usize::try_from(grant)
            .unwrap_or(bytes.len())
            .min(bytes.len())];
        let cut = limit.map(|limit| BudgetCut {
            limit,
            budget: budget_of(allowance.budgets(), limit),
            kept: kept.len() as u64,
            dropped: (bytes.len() - kept.len()) as u64,
        });
        if kept.is_empty() {
            return Ok((None, cut));
        }
        let (reference, fresh) = self.put_object(kept, origin, &allowance.session_id)?;
        if !fresh {
            allowance.release_stored(kept.len() as u64);
        }
        Ok((Some(reference), cut))
    }

    /// Bytes in the store now: objects and unfinished writes.
    fn disk_usage(&self) -> u64 {
        let mut total = 0;
        for (_, size, _) in self.objects() {
            total += size;
        }
        if let Ok(entries) = std::fs::read_dir(self.root.join("tmp")) {
            for e in entries.flatten() {
                total += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
        total
    }

    /// Every stored object: modification time, size, hex id.
    fn objects(&self) -> Vec<(SystemTime, u64, String)> {
        let mut out = Vec::new();
        let Ok(heads) = std::fs::read_dir(self.root.join("objects")) else {
            return out;
        };
        for head in heads.flatten() {
            let Ok(tails) = std::fs::read_dir(head.path()) else {
                continue;
            };
            let head_name = head.file_name().to_string_lossy().into_owned();
            for tail in tails.flatten() {
                let Ok(m) = tail.metadata() else { continue };
                if !m.is_file() {
                    continue;
                }
                let hex = format!("{head_name}{}", tail.file_name().to_string_lossy());
                out.push((m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len(), hex));
            }
        }
        out
    }

    /// Removes the oldest artifacts of sessions other than `keep_session` until `want` bytes
    /// are freed (or none are left); returns the store's size after.
    fn evict(&self, mut used: u64, want: u64, keep_session: &str) -> u64 {
        let mut objects = self.objects();
        objects.sort();
        let mut freed = 0;
        for (_, size, hex) in objects {
            if freed >= want {
                break;
            }
            let id = format!("{ID_PREFIX}{hex}");
            if self
                .metadata(&id)
                .is_ok_and(|m| m.session_id == keep_session)
            {
                continue;
            }
            if std::fs::remove_file(self.object_path(&hex)).is_ok() {
                let _ = std::fs::remove_file(self.root.join("meta").join(format!("{hex}.json")));
                freed += size;
                used = used.saturating_sub(size);
            }
        }
        used
    }

    /// The store's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Stores bytes (once per content) and returns the reference. No budget applies (calls
    /// store through [`ArtifactStore::put_within`]).
    pub fn put(
        &self,
        bytes: &[u8],
        origin: ArtifactOrigin<'_>,
    ) -> Result<ArtifactRef, ArtifactError> {
        self.put_object(bytes, origin, "").map(|(r, _)| r)
    }

    /// Stores bytes once per content; also says whether they were new.
    fn put_object(
        &self,
        bytes: &[u8],
        origin: ArtifactOrigin<'_>,
        session_id: &str,
    ) -> Result<(ArtifactRef, bool), ArtifactError> {
        let hex = blake3::hash(bytes).to_hex().to_string();
        let reference = ArtifactRef {
            id: format!("{ID_PREFIX}{hex}"),
            size: bytes.len() as u64,
            lines: count_lines(bytes),
            media_type: origin.media_type.to_owned(),
        };
        let object = self.object_path(&hex);
        if object.is_file() {
            return Ok((reference, false));
        }
        let dir = object
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.root.clone());
        std::fs::create_dir_all(&dir)?;
        write_atomic(&dir, &object, bytes)?;
        let meta = ArtifactMeta {
            reference: reference.clone(),
            created_at: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            tool: origin.tool.to_owned(),
            call_id: origin.call_id.to_owned(),
            redact: ArtifactRedaction::default(),
            session_id: session_id.to_owned(),
        };
        self.write_meta(&hex, &meta)?;
        Ok((reference, true))
    }

    fn write_meta(&self, hex: &str, meta: &ArtifactMeta) -> Result<(), ArtifactError> {
        let meta_dir = self.root.join("meta");
        std::fs::create_dir_all(&meta_dir)?;
        let text = serde_json::to_vec_pretty(meta).map_err(io::Error::other)?;
        write_atomic(&meta_dir, &meta_dir.join(format!("{hex}.json")), &text)?;
        Ok(())
    }

    /// Starts an artifact whose bytes arrive in pieces (a temporary file in the store), for a
    /// call whose allowance the writer of the pieces draws on ([`Allowance::take`]).
    pub fn writer(&self, allowance: &Allowance) -> Result<ArtifactWriter, ArtifactError> {
        let dir = self.root.join("tmp");
        std::fs::create_dir_all(&dir)?;
        let tmp = dir.join(format!("{}.part", uuid::Uuid::now_v7().simple()));
        let file = owner_only().write(true).create_new(true).open(&tmp)?;
        Ok(ArtifactWriter {
            store: self.clone(),
            allowance: allowance.clone(),
            file: Some(file),
            tmp,
            written: 0,
            stopped: None,
        })
    }

    /// Opens an artifact for reading parts of it.
    pub fn open(&self, id: &str) -> Result<std::fs::File, ArtifactError> {
        let hex = parse_id(id).ok_or_else(|| ArtifactError::InvalidId(id.to_owned()))?;
        match std::fs::File::open(self.object_path(hex)) {
            Ok(f) => Ok(f),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(ArtifactError::NotFound(id.to_owned()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The bytes of an artifact.
    pub fn get(&self, id: &str) -> Result<Vec<u8>, ArtifactError> {
        let hex = parse_id(id).ok_or_else(|| ArtifactError::InvalidId(id.to_owned()))?;
        match std::fs::read(self.object_path(hex)) {
            Ok(b) => Ok(b),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(ArtifactError::NotFound(id.to_owned()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The metadata of an artifact.
    pub fn metadata(&self, id: &str) -> Result<ArtifactMeta, ArtifactError> {
        let hex = parse_id(id).ok_or_else(|| ArtifactError::InvalidId(id.to_owned()))?;
        let path = self.root.join("meta").join(format!("{hex}.json"));
        let text = match std::fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(ArtifactError::NotFound(id.to_owned()));
            }
            Err(e) => return Err(e.into()),
        };
        serde_json::from_slice(&text).map_err(|e| ArtifactError::Io(io::Error::other(e)))
    }

    fn object_path(&self, hex: &str) -> PathBuf {
        let (head, tail) = hex.split_at(2);
        self.root.join("objects").join(head).join(tail)
    }
}

/// An artifact being written while a tool's output streams; [`ArtifactWriter::finish`] names
/// it by the hash of everything written. Dropped unfinished, the temporary file is removed.
#[derive(Debug)]
pub struct ArtifactWriter {
    store: ArtifactStore,
    allowance: Allowance,
    file: Option<std::fs::File>,
    tmp: PathBuf,
    written: u64,
    /// Set when a budget stopped the artifact short of the whole output.
    stopped: Option<WrittenContent>,
}

/// What is known about the bytes of a finished [`ArtifactWriter`].
#[derive(Clone, Debug)]
pub struct WrittenContent {
    /// blake3 of every byte written.
    pub hash: blake3::Hash,
    /// Bytes written.
    pub size: u64,
    /// Lines written.
    pub lines: u64,
}

impl ArtifactWriter {
    /// Appends bytes (already counted against the allowance by whoever took them).
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.file {
            Some(f) => {
                f.write_all(bytes)?;
                self.written += bytes.len() as u64;
                Ok(())
            }
            None => Err(io::Error::other("the artifact is already finished")),
        }
    }

    /// Records that a budget stopped the artifact: it holds only `kept`, the start of the
    /// output, and [`ArtifactWriter::finish`] names it by that instead of the whole output.
    pub fn stopped_at(&mut self, kept: WrittenContent) {
        self.stopped = Some(kept);
    }

    /// fsync, then rename into place (or drop the copy when the content is already stored),
    /// and write the metadata. `content` describes the whole output (unless
    /// [`ArtifactWriter::stopped_at`] said the writer holds less).
    pub fn finish(
        mut self,
        content: WrittenContent,
        origin: ArtifactOrigin<'_>,
        redact: ArtifactRedaction,
    ) -> Result<ArtifactRef, ArtifactError> {
        let content = self.stopped.take().unwrap_or(content);
        let file = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("the artifact is already finished"))?;
        let hex = content.hash.to_hex().to_string();
        let reference = ArtifactRef {
            id: format!("{ID_PREFIX}{hex}"),
            size: content.size,
            lines: content.lines,
            media_type: origin.media_type.to_owned(),
        };
        let object = self.store.object_path(&hex);
        if object.is_file() {
            drop(file);
            let _ = std::fs::remove_file(&self.tmp);
            self.allowance.release_stored(self.written);
            return Ok(reference);
        }
        file.sync_all()?;
        drop(file);
        let dir = object
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.store.root.clone());
        std::fs::create_dir_all(&dir)?;
        std::fs::rename(&self.tmp, &object)?;
        std::fs::File::open(&dir)?.sync_all()?;
        let meta = ArtifactMeta {
            reference: reference.clone(),
            created_at: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            tool: origin.tool.to_owned(),
            call_id: origin.call_id.to_owned(),
            redact,
            session_id: self.allowance.session_id.clone(),
        };
        self.store.write_meta(&hex, &meta)?;
        Ok(reference)
    }
}

impl Drop for ArtifactWriter {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
            self.allowance.release_stored(self.written);
        }
    }
}

/// The size of the budget a limit names.
fn budget_of(b: ArtifactBudgets, limit: BudgetLimit) -> u64 {
    match limit {
        BudgetLimit::Call => b.per_call,
        BudgetLimit::Session => b.per_session,
        BudgetLimit::Store => b.store,
    }
}

impl BudgetCut {
    /// A cut of an output of `total` bytes at `kept` by `limit`.
    pub fn new(allowance: &Allowance, limit: BudgetLimit, kept: u64, total: u64) -> BudgetCut {
        BudgetCut {
            limit,
            budget: budget_of(allowance.budgets(), limit),
            kept,
            dropped: total.saturating_sub(kept),
        }
    }
}

/// Options for a new file only its owner can read.
fn owner_only() -> std::fs::OpenOptions {
    let mut o = std::fs::OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o
}

/// The hex digest of a well-formed id.
pub fn parse_id(id: &str) -> Option<&str> {
    let hex = id.strip_prefix(ID_PREFIX)?;
    (hex.len() == 64
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    .then_some(hex)
}

/// Lines in a byte string: newlines, plus one for a final line without one.
pub fn count_lines(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u64;
    newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

/// temp file in `dir` → write → fsync → rename → fsync `dir`.
fn write_atomic(dir: &Path, target: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = dir.join(format!(".tmp-{}", uuid::Uuid::now_v7().simple()));
    let result = (|| {
        let mut f = owner_only().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, target)?;
        // The rename is durable only once the folder entry is.
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_once_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path());
        let origin = ArtifactOrigin {
            tool: "bash",
            call_id: "c1",
            media_type: "text/plain",
        };
        let a = store.put(b"one\ntwo", origin).unwrap();
        let b = store.put(b"one\ntwo", origin).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.lines, 2);
        assert_eq!(store.get(&a.id).unwrap(), b"one\ntwo");
        assert_eq!(store.metadata(&a.id).unwrap().tool, "bash");
        let zeros = format!("{ID_PREFIX}{}", "0".repeat(64));
        assert!(matches!(store.get(&zeros), Err(ArtifactError::NotFound(_))));
        assert!(matches!(
            store.get("blake3:../../etc/passwd"),
            Err(ArtifactError::InvalidId(_))
        ));
    }

    fn origin() -> ArtifactOrigin<'static> {
        ArtifactOrigin {
            tool: "t",
            call_id: "c",
            media_type: "text/plain",
        }
    }

    fn store(per_call: u64, per_session: u64, quota: u64) -> (tempfile::TempDir, ArtifactStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path()).with_budgets(ArtifactBudgets {
            per_call,
            per_session,
            store: quota,
        });
        (dir, store)
    }

    #[test]
    fn a_call_keeps_at_most_its_budget() {
        let (_d, store) = store(10, 100, 1000);
        let a = store.allowance("s1");
        let (r, cut) = store
            .put_within(b"0123456789abcdefghijklmno", origin(), &a)
            .unwrap();
        let r = r.unwrap();
        assert_eq!(store.get(&r.id).unwrap(), b"0123456789");
        assert_eq!(
            cut,
            Some(BudgetCut {
                limit: BudgetLimit::Call,
                budget: 10,
                kept: 10,
                dropped: 15
            })
        );
        assert_eq!(
            cut.unwrap().to_string(),
            "the artifact keeps the first 10 bytes: the per-call artifact budget (budgets.call_artifacts, 10 bytes) was reached; 15 bytes dropped"
        );
        assert_eq!(store.metadata(&r.id).unwrap().session_id, "s1");
    }

    #[test]
    fn a_session_keeps_at_most_its_budget() {
        let (_d, store) = store(10, 12, 1000);
        let (_, cut) = store
            .put_within(b"aaaaaaaa", origin(), &store.allowance("s1"))
            .unwrap();
        assert_eq!(cut, None);
        let (r, cut) = store
            .put_within(b"bbbbbbbb", origin(), &store.allowance("s1"))
            .unwrap();
        assert_eq!(store.get(&r.unwrap().id).unwrap(), b"bbbb");
        assert_eq!(cut.unwrap().limit, BudgetLimit::Session);
        // Another session has its own budget.
        let (_, cut) = store
            .put_within(b"cccccccc", origin(), &store.allowance("s2"))
            .unwrap();
        assert_eq!(cut, None);
    }

    /// Near the quota the oldest artifacts of other sessions go; the session's own stay, and
    /// what still does not fit is not kept.
    #[test]
    fn the_quota_evicts_other_sessions_then_refuses() {
        let (_d, store) = store(10, 100, 15);
        let put = |bytes: &[u8], session: &str| {
            store
                .put_within(bytes, origin(), &store.allowance(session))
                .unwrap()
        };
        let (old, _) = put(b"aaaaaaaaaa", "s1");
        let (first, cut) = put(b"bbbbbbbbbb", "s2");
        assert_eq!(cut, None);
        assert!(matches!(
            store.get(&old.unwrap().id),
            Err(ArtifactError::NotFound(_))
        ));
        let (second, cut) = put(b"cccccccccc", "s2");
        assert_eq!(store.get(&second.unwrap().id).unwrap(), b"ccccc");
        assert_eq!(
            cut.map(|c| (c.limit, c.kept)),
            Some((BudgetLimit::Store, 5))
        );
        let (third, cut) = put(b"dddddddddd", "s2");
        assert_eq!(third, None);
        assert_eq!(
            cut,
            Some(BudgetCut {
                limit: BudgetLimit::Store,
                budget: 15,
                kept: 0,
                dropped: 10
            })
        );
        assert!(
            cut.unwrap()
                .to_string()
                .starts_with("no artifact was kept: the artifact store's quota")
        );
        assert!(store.get(&first.unwrap().id).is_ok());
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_text(900), "900 bytes");
        assert_eq!(size_text(256 << 20), "256 MiB");
        assert_eq!(size_text(1_572_864_000), "1.5 GiB");
    }
}
