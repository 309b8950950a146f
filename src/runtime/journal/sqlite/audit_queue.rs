//! The bounded queue of audit records between the pipeline and the journal's writer thread:
//! a push never waits (a full queue drops the record and counts it), and the writer takes
//! what is queued into its next transaction.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::runtime::journal::AuditEntry;

/// The bounded queue of audit records waiting for the writer.
pub(super) struct AuditQueue {
    entries: Mutex<VecDeque<AuditEntry>>,
    capacity: usize,
    pub(super) dropped: AtomicU64,
}

impl AuditQueue {
    pub(super) fn new(capacity: usize) -> Self {
        AuditQueue {
            entries: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
            dropped: AtomicU64::new(0),
        }
    }

    pub(super) fn with<T>(&self, f: impl FnOnce(&mut VecDeque<AuditEntry>) -> T) -> T {
        match self.entries.lock() {
            Ok(mut q) => f(&mut q),
            Err(p) => f(&mut p.into_inner()),
        }
    }

    /// Queues one record; whether the queue was empty before (the writer needs a nudge).
    pub(super) fn push(&self, e: AuditEntry) -> bool {
        self.with(|q| {
            if q.len() >= self.capacity {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            q.push_back(e);
            q.len() == 1
        })
    }

    pub(super) fn len(&self) -> usize {
        self.with(|q| q.len())
    }

    pub(super) fn take(&self, n: usize) -> Vec<AuditEntry> {
        self.with(|q| {
            let n = n.min(q.len());
            q.drain(..n).collect()
        })
    }
}
