//! The artifact budgets: what one call and one session may keep, the store's quota, and the
//! eviction that makes room (the module docs of [`super`] say how they apply).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::{
    ArtifactError, ArtifactOrigin, ArtifactOwner, ArtifactRedaction, ArtifactRef, ArtifactStore,
    ID_PREFIX,
};

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
pub(super) struct Ledger {
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
    pub(super) owner: ArtifactOwner,
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
            used = self.store.evict(
                used,
                used.saturating_add(need) - b.store,
                &self.owner.session_id,
            );
        }
        *stored = Some(used);
    }

    /// Gives back bytes counted against the call, the session and the store that were not
    /// kept at all (an artifact abandoned before it was finished).
    pub(super) fn release(&self, bytes: u64) {
        let give_back = |counter: &AtomicU64| {
            let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_sub(bytes))
            });
        };
        give_back(&self.call);
        give_back(&self.session);
        self.release_stored(bytes);
    }

    /// Gives back bytes counted against the store that did not stay there (a duplicate).
    pub(super) fn release_stored(&self, bytes: u64) {
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
    /// Sets the artifact budgets.
    pub fn with_budgets(mut self, budgets: ArtifactBudgets) -> Self {
        self.ledger = Arc::new(Ledger {
            budgets,
            ..Ledger::default()
        });
        self
    }

    /// A fresh allowance for one call of a session without a principal.
    pub fn allowance(&self, session_id: &str) -> Allowance {
        self.allowance_of(ArtifactOwner::new(session_id, None))
    }

    /// A fresh allowance for one call of a session (its principal's, when there is one): what
    /// it stores, the owner may read.
    pub fn allowance_of(&self, owner: ArtifactOwner) -> Allowance {
        let session = self
            .ledger
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(owner.session_id.clone())
            .or_default()
            .clone();
        Allowance {
            store: self.clone(),
            owner,
            call: Arc::new(AtomicU64::new(0)),
            session,
        }
    }

    /// Stores what fits of `bytes` within a call's allowance (see `ArtifactStore::put`),
    /// with what to redact whenever a part of it is shown: the reference (none when nothing
    /// fits; its `dropped` says what a budget left out) and, when a budget cut it, by how much.
    pub fn put_within(
        &self,
        bytes: &[u8],
        origin: ArtifactOrigin<'_>,
        allowance: &Allowance,
        redact: ArtifactRedaction,
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
        let (mut reference, fresh) = self.put_object(kept, origin, &allowance.owner, redact)?;
        if !fresh {
            allowance.release_stored(kept.len() as u64);
        }
        reference.dropped = cut.map_or(0, |c| c.dropped);
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
                let _ = std::fs::remove_dir_all(self.owners_dir(&hex));
                freed += size;
                used = used.saturating_sub(size);
            }
        }
        used
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

#[cfg(test)]
mod tests {
    use super::*;

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
            .put_within(
                b"0123456789abcdefghijklmno",
                origin(),
                &a,
                Default::default(),
            )
            .unwrap();
        let r = r.unwrap();
        assert_eq!(store.get(&r.id).unwrap(), b"0123456789");
        assert_eq!((r.size, r.dropped), (10, 15));
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
            .put_within(
                b"aaaaaaaa",
                origin(),
                &store.allowance("s1"),
                Default::default(),
            )
            .unwrap();
        assert_eq!(cut, None);
        let (r, cut) = store
            .put_within(
                b"bbbbbbbb",
                origin(),
                &store.allowance("s1"),
                Default::default(),
            )
            .unwrap();
        assert_eq!(store.get(&r.unwrap().id).unwrap(), b"bbbb");
        assert_eq!(cut.unwrap().limit, BudgetLimit::Session);
        // Another session has its own budget.
        let (_, cut) = store
            .put_within(
                b"cccccccc",
                origin(),
                &store.allowance("s2"),
                Default::default(),
            )
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
                .put_within(
                    bytes,
                    origin(),
                    &store.allowance(session),
                    Default::default(),
                )
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
