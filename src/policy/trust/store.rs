//! The trust store: a folder of the user's state ([`super::trust_dir`]) holding
//!
//! - `projects/<blake3 of the project's canonical path>.json`: the [`TrustRecord`] of a project;
//! - `blobs/<blake3 of the content>`: every trusted file's bytes, content-addressed, so that a
//!   changed policy can be compared with the one trusted (`toolgate diff`'s analysis).
//!
//! Every write goes through a temporary file, fsync, rename and an fsync of the folder, so a
//! crash leaves the old record or the new one, never half of one. Files are the owner's only.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fingerprint::{Fingerprint, PolicySnapshot, hash_bytes};
use super::{TrustError, trust_dir};

/// What `toolgate trust` recorded for a project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// The project folder, canonical.
    pub project: PathBuf,
    /// When it was trusted, seconds since the Unix epoch.
    pub trusted_at: u64,
    /// The policy trusted.
    pub fingerprint: Fingerprint,
}

/// A trust store folder.
#[derive(Clone, Debug)]
pub struct TrustStore {
    dir: PathBuf,
}

impl TrustStore {
    /// The store at [`trust_dir`]; [`TrustError::NoTrustDir`] when there is none.
    pub fn open_default() -> Result<Self, TrustError> {
        trust_dir().map(Self::at).ok_or(TrustError::NoTrustDir)
    }

    /// The store in `dir` (created on the first write).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        TrustStore { dir: dir.into() }
    }

    /// The store's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the record of the project at `root` (canonical) is.
    pub fn record_path(&self, root: &Path) -> PathBuf {
        let key = hash_bytes(root.as_os_str().as_encoded_bytes());
        self.dir.join("projects").join(format!("{key}.json"))
    }

    /// The record of the project at `root` (canonical), if it was trusted.
    pub fn load(&self, root: &Path) -> Result<Option<TrustRecord>, TrustError> {
        let path = self.record_path(root);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(TrustError::Read { path, source }),
        };
        let record: TrustRecord = serde_json::from_str(&text).map_err(|e| TrustError::Record {
            path: path.clone(),
            message: e.to_string(),
        })?;
        // Two paths hashing alike is not expected; a record of another project is not trust.
        if record.project != root {
            return Err(TrustError::Record {
                path,
                message: format!("it is the record of {}", record.project.display()),
            });
        }
        Ok(Some(record))
    }

    /// Trusts a policy as read: its files' bytes into the snapshot, then the record (so a
    /// record never names a blob that is not there).
    pub fn trust(&self, snapshot: &PolicySnapshot) -> Result<TrustRecord, TrustError> {
        let blobs = self.dir.join("blobs");
        create_private_dir(&self.dir)?;
        create_private_dir(&blobs)?;
        create_private_dir(&self.dir.join("projects"))?;
        for (file, bytes) in snapshot.fingerprint.files.iter().zip(&snapshot.contents) {
            let target = blobs.join(&file.hash);
            // A blob already there is reused only when it still holds what its name says.
            if self.blob(&file.hash).is_err() {
                write_atomic(&blobs, &target, bytes)?;
            }
        }
        let record = TrustRecord {
            project: snapshot.root.clone(),
            trusted_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            fingerprint: snapshot.fingerprint.clone(),
        };
        let text = serde_json::to_string_pretty(&record).map_err(|e| TrustError::Record {
            path: self.record_path(&snapshot.root),
            message: e.to_string(),
        })?;
        write_atomic(
            &self.dir.join("projects"),
            &self.record_path(&snapshot.root),
            format!("{text}\n").as_bytes(),
        )?;
        Ok(record)
    }

    /// Forgets the project's trust; whether there was any. The snapshot's blobs stay (other
    /// projects may share them).
    pub fn revoke(&self, root: &Path) -> Result<bool, TrustError> {
        let path = self.record_path(root);
        match std::fs::remove_file(&path) {
            Ok(()) => {
                if let Some(dir) = path.parent() {
                    sync_dir(dir)?;
                }
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(TrustError::Write { path, source }),
        }
    }

    /// A trusted file's bytes by their hash; checked against it (a blob changed in the store is
    /// not the file that was trusted).
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>, TrustError> {
        let path = self.dir.join("blobs").join(hash);
        let bytes = std::fs::read(&path).map_err(|source| TrustError::Read {
            path: path.clone(),
            source,
        })?;
        if hash_bytes(&bytes) != hash {
            return Err(TrustError::Record {
                path,
                message: "its content does not match its hash".into(),
            });
        }
        Ok(bytes)
    }
}

fn create_private_dir(dir: &Path) -> Result<(), TrustError> {
    let write_err = |source| TrustError::Write {
        path: dir.to_path_buf(),
        source,
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(write_err)
}

fn sync_dir(dir: &Path) -> Result<(), TrustError> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|source| TrustError::Write {
            path: dir.to_path_buf(),
            source,
        })
}

/// temp file in `dir` → write → fsync → rename → fsync `dir` (as the artifact store writes).
fn write_atomic(dir: &Path, target: &Path, bytes: &[u8]) -> Result<(), TrustError> {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".tmp-{}-{n}", std::process::id()));
    let result = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut f = options.open(&tmp)?;
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
    result.map_err(|source| TrustError::Write {
        path: target.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_load_blob_and_revoke() {
        let project = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("toolgate.yaml"), "name: x\n").unwrap();
        let snap =
            Fingerprint::read(project.path(), &[project.path().join("toolgate.yaml")]).unwrap();
        let store = TrustStore::at(state.path().join("trust"));
        assert_eq!(store.load(&snap.root).unwrap(), None);
        let record = store.trust(&snap).unwrap();
        assert_eq!(store.load(&snap.root).unwrap(), Some(record.clone()));
        let hash = &record.fingerprint.files[0].hash;
        assert_eq!(store.blob(hash).unwrap(), b"name: x\n");
        std::fs::write(store.dir().join("blobs").join(hash), "tampered").unwrap();
        assert!(matches!(store.blob(hash), Err(TrustError::Record { .. })));
        assert!(store.revoke(&snap.root).unwrap());
        assert!(!store.revoke(&snap.root).unwrap());
        assert_eq!(store.load(&snap.root).unwrap(), None);
    }
}
