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
//!
//! Artifacts are walled per caller ([`ArtifactOwner`]): every call that produces an artifact
//! leaves a marker for its session and, when one is authenticated, its principal
//! (`artifacts/owners/<hex>/<blake3 of the scope>`), and `read_artifact` and the MCP resource
//! routes read only an artifact the caller's session or principal owns — one or two file
//! lookups, whatever the store holds. Content addresses are not secrets (the hash of a known
//! output), so knowing an id is not enough. Artifacts stored before owners were recorded have
//! no marker and are readable by no caller.

mod budget;
mod read;

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use budget::Ledger;
pub use budget::{Allowance, ArtifactBudgets, BudgetCut, BudgetLimit, size_exact, size_text};
pub use read::{ArtifactRange, PartError, ReadLimits};

/// The id prefix naming the hash function.
pub const ID_PREFIX: &str = "blake3:";

/// The URI scheme under which `toolgate serve` offers a connection's artifacts as MCP
/// resources.
pub const URI_SCHEME: &str = "toolgate-artifact";

/// The resource URI of an artifact: `toolgate-artifact:blake3:…`.
pub fn artifact_uri(id: &str) -> String {
    format!("{URI_SCHEME}:{id}")
}

/// Who may read the artifacts a call produces: its session and, when `serve --http`
/// authenticated one, its principal (then any session of that principal may).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArtifactOwner {
    /// The session id.
    pub session_id: String,
    /// The principal's id (`subject@issuer`), if any.
    pub principal: Option<String>,
}

impl ArtifactOwner {
    /// The owner a session and its principal make.
    pub fn new(session_id: impl Into<String>, principal: Option<String>) -> Self {
        ArtifactOwner {
            session_id: session_id.into(),
            principal,
        }
    }

    /// The scopes whose markers stand for this owner: `session:ID`, and `principal:ID` when
    /// there is a principal (the same words as the journal's client key scopes).
    fn scopes(&self) -> Vec<String> {
        let mut scopes = vec![format!("session:{}", self.session_id)];
        if let Some(p) = &self.principal {
            scopes.push(format!("principal:{p}"));
        }
        scopes
    }
}

/// A reference to a stored artifact, as a result carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRef {
    /// `blake3:` + 64 hex characters.
    pub id: String,
    /// Size in bytes.
    pub size: u64,
    /// Number of lines (newline-terminated or final partial line).
    pub lines: u64,
    /// What the bytes are, e.g. `text/plain`, or `text/plain; stream=stdout` for one stream
    /// of a process.
    pub media_type: String,
    /// Bytes of the output this artifact does not hold because a budget stopped it (it then
    /// holds the output's first `size` bytes); 0 when it holds the whole output.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: u64,
}

impl ArtifactRef {
    /// Which part of a call's output it holds: `stdout` or `stderr` for a stream of a
    /// process, else `output`.
    pub fn part(&self) -> &str {
        self.media_type
            .split(';')
            .skip(1)
            .find_map(|p| p.trim().strip_prefix("stream="))
            .unwrap_or("output")
    }

    /// Whether it holds the whole output (no budget stopped it).
    pub fn is_whole(&self) -> bool {
        self.dropped == 0
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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

impl ArtifactStore {
    /// A store under a state folder (created on first write), with the default budgets.
    pub fn new(state_dir: &Path) -> Self {
        ArtifactStore {
            root: state_dir.join("artifacts"),
            ledger: Arc::new(Ledger::default()),
        }
    }

    /// The store's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    #[cfg(test)]
    /// Stores bytes (once per content) and returns the reference. No budget applies (calls
    /// store through [`ArtifactStore::put_within`]).
    pub(crate) fn put(
        &self,
        bytes: &[u8],
        origin: ArtifactOrigin<'_>,
    ) -> Result<ArtifactRef, ArtifactError> {
        self.put_object(
            bytes,
            origin,
            &ArtifactOwner::default(),
            ArtifactRedaction::default(),
        )
        .map(|(r, _)| r)
    }

    /// Stores bytes once per content; also says whether they were new.
    fn put_object(
        &self,
        bytes: &[u8],
        origin: ArtifactOrigin<'_>,
        owner: &ArtifactOwner,
        redact: ArtifactRedaction,
    ) -> Result<(ArtifactRef, bool), ArtifactError> {
        let hex = blake3::hash(bytes).to_hex().to_string();
        let reference = ArtifactRef {
            id: format!("{ID_PREFIX}{hex}"),
            size: bytes.len() as u64,
            lines: count_lines(bytes),
            media_type: origin.media_type.to_owned(),
            dropped: 0,
        };
        let object = self.object_path(&hex);
        // Whoever produces the bytes may read them, also when another call stored them first.
        self.record_owner(&hex, owner)?;
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
            redact,
            session_id: owner.session_id.clone(),
        };
        self.write_meta(&hex, &meta)?;
        Ok((reference, true))
    }

    /// Leaves the markers that let `owner` read the artifact. They are not fsynced: one lost
    /// to a crash only makes the artifact unreadable to its caller, never readable to another.
    fn record_owner(&self, hex: &str, owner: &ArtifactOwner) -> Result<(), ArtifactError> {
        let dir = self.owners_dir(hex);
        std::fs::create_dir_all(&dir)?;
        for scope in owner.scopes() {
            let marker = dir.join(scope_name(&scope));
            if !marker.is_file() {
                owner_only()
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&marker)?;
            }
        }
        Ok(())
    }

    /// Whether `owner` may read the artifact: a call of its session, or of its principal,
    /// produced it. False for an id that is malformed or names nothing, so that an answer
    /// never tells another caller's artifact from none.
    pub fn readable_by(&self, id: &str, owner: &ArtifactOwner) -> bool {
        let Some(hex) = parse_id(id) else {
            return false;
        };
        let dir = self.owners_dir(hex);
        owner
            .scopes()
            .iter()
            .any(|scope| dir.join(scope_name(scope)).is_file())
    }

    /// The folder of an artifact's owner markers.
    fn owners_dir(&self, hex: &str) -> PathBuf {
        self.root.join("owners").join(hex)
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
    pub(crate) fn writer(&self, allowance: &Allowance) -> Result<ArtifactWriter, ArtifactError> {
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
        let whole = content.size;
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
            dropped: whole.saturating_sub(content.size),
        };
        let object = self.store.object_path(&hex);
        self.store.record_owner(&hex, &self.allowance.owner)?;
        if object.is_file() {
            drop(file);
            let _ = std::fs::remove_file(&self.tmp);
            // The call produced it, so its budgets stay charged; the store holds it once.
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
            session_id: self.allowance.owner.session_id.clone(),
        };
        self.store.write_meta(&hex, &meta)?;
        Ok(reference)
    }
}

impl Drop for ArtifactWriter {
    fn drop(&mut self) {
        // Nothing was kept: the bytes count against no budget (normalization may still keep
        // the same output from memory).
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
            self.allowance.release(self.written);
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

/// The file name of an owner marker: the hash of its scope, so that no session or principal
/// id (free text) ever names a path.
fn scope_name(scope: &str) -> String {
    blake3::hash(scope.as_bytes()).to_hex().to_string()
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

    #[test]
    fn an_artifact_is_readable_by_those_who_produced_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path());
        let origin = ArtifactOrigin {
            tool: "bash",
            call_id: "c1",
            media_type: "text/plain",
        };
        let alice = ArtifactOwner::new("s-alice", Some("alice@iss".into()));
        let (a, fresh) = store
            .put_object(b"secret\n", origin, &alice, ArtifactRedaction::default())
            .unwrap();
        assert!(fresh);
        let alice_again = ArtifactOwner::new("s-other", Some("alice@iss".into()));
        let bob = ArtifactOwner::new("s-bob", Some("bob@iss".into()));
        // A session id that is alice's principal id, spelled as a scope, is not her.
        let forger = ArtifactOwner::new("principal:alice@iss", None);
        assert!(store.readable_by(&a.id, &alice));
        assert!(store.readable_by(&a.id, &alice_again));
        assert!(!store.readable_by(&a.id, &bob));
        assert!(!store.readable_by(&a.id, &forger));
        assert!(!store.readable_by("blake3:../../x", &alice));
        // Bob producing the same bytes owns the one copy too.
        let (b, fresh) = store
            .put_object(b"secret\n", origin, &bob, ArtifactRedaction::default())
            .unwrap();
        assert_eq!((b.id.as_str(), fresh), (a.id.as_str(), false));
        assert!(store.readable_by(&a.id, &bob));
        // Stored before owners were recorded: readable by nobody.
        let hex = parse_id(&a.id).unwrap().to_owned();
        std::fs::remove_dir_all(store.owners_dir(&hex)).unwrap();
        assert!(!store.readable_by(&a.id, &alice));
    }
}
