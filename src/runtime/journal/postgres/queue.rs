//! The records nobody waits for — those of calls that change nothing, attempts, finishes of
//! reads, the audit — go through one task that writes them in order, many to a transaction.
//! A full queue drops audit records (counted) rather than make a call wait; the other records
//! wait for room.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};

use super::{Db, writes};
use crate::runtime::journal::{
    AttemptRecord, AuditEntry, JournalError, OperationFinish, OperationStart,
};

/// The most records one transaction takes.
const MAX_GROUP: usize = 512;

/// A record for the writer task.
pub(crate) enum Queued {
    /// A started operation of a call that changes nothing.
    Start(Box<OperationStart>),
    /// The finish of such a call.
    Finish(Box<OperationFinish>),
    /// An attempt.
    Attempt(AttemptRecord),
    /// An audit record.
    Audit(Box<AuditEntry>),
    /// Answer once everything before it is committed.
    Flush(oneshot::Sender<Result<(), JournalError>>),
}

/// The handle of the writer task.
pub(crate) struct Queue {
    tx: mpsc::Sender<Queued>,
    dropped: Arc<AtomicU64>,
}

impl Queue {
    /// Starts the writer task on the current runtime.
    pub(crate) fn spawn(db: Arc<Db>, capacity: usize) -> Queue {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        tokio::spawn(run(db, rx));
        Queue {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Queues a record, waiting for room.
    pub(crate) async fn send(&self, q: Queued) -> Result<(), JournalError> {
        self.tx
            .send(q)
            .await
            .map_err(|_| JournalError::Failed("the journal's writer stopped".into()))
    }

    /// Queues an audit record; never waits (drops it when the queue is full).
    pub(crate) fn audit(&self, e: AuditEntry) {
        if self.tx.try_send(Queued::Audit(Box::new(e))).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Audit records dropped so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Asks for a flush; the answer comes once everything queued before is committed.
    pub(crate) fn flush_request(&self) -> Option<oneshot::Receiver<Result<(), JournalError>>> {
        let (tx, rx) = oneshot::channel();
        self.tx.try_send(Queued::Flush(tx)).ok().map(|()| rx)
    }
}

async fn run(db: Arc<Db>, mut rx: mpsc::Receiver<Queued>) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while rx.recv_many(&mut group, MAX_GROUP).await > 0 {
        let mut waiting = Vec::new();
        let mut records = Vec::with_capacity(group.len());
        for q in group.drain(..) {
            match q {
                Queued::Flush(tx) => waiting.push(tx),
                q => records.push(q),
            }
        }
        let r = if records.is_empty() {
            Ok(())
        } else {
            write(&db, &records).await
        };
        for tx in waiting {
            let _ = tx.send(r.as_ref().map(|_| ()).map_err(|e| {
                JournalError::Failed(format!("the journal could not write queued records: {e}"))
            }));
        }
    }
}

/// Writes a group in one transaction; when a record fails, the group is written again one
/// record at a time, so one bad record does not lose the rest. The first failure is returned.
async fn write(db: &Db, records: &[Queued]) -> Result<(), JournalError> {
    let mut c = db.client().await?;
    let tx = c.transaction().await.map_err(|e| db.error(&e))?;
    let mut all = Ok(());
    for q in records {
        all = apply(db, &*tx, q).await;
        if all.is_err() {
            break;
        }
    }
    if all.is_ok() {
        return tx.commit().await.map_err(|e| db.error(&e));
    }
    tx.rollback().await.map_err(|e| db.error(&e))?;
    let mut first = None;
    for q in records {
        if let Err(e) = apply(db, &**c, q).await {
            first.get_or_insert(e);
        }
    }
    first.map_or(Ok(()), Err)
}

async fn apply(
    db: &Db,
    c: &impl tokio_postgres::GenericClient,
    q: &Queued,
) -> Result<(), JournalError> {
    match q {
        Queued::Start(op) => writes::insert(db, c, op).await,
        Queued::Finish(f) => writes::finish(db, c, f).await,
        Queued::Attempt(a) => writes::attempt(db, c, a).await,
        Queued::Audit(e) => writes::audit(db, c, e).await,
        Queued::Flush(_) => Ok(()),
    }
}
