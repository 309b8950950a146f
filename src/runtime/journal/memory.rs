//! [`MemoryJournal`]: the whole journal behaviour in memory, without durability — the builder's
//! default, and the baseline the benchmarks compare the durable journal with.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::runtime::approval::Grant;

use super::{
    AttemptRecord, Claim, Journal, JournalError, JournalFuture, KeySource, OperationFinish,
    OperationRecord, OperationStart, Settlement, check_settle, claimed_by,
};

/// A journal in memory: complete behaviour, no durability. It records side-effecting calls
/// only, so memory grows with the side effects a runtime performs, not with every read.
#[derive(Debug, Default)]
pub struct MemoryJournal {
    state: Mutex<MemoryState>,
}

#[derive(Debug, Default)]
struct MemoryState {
    ops: Vec<OperationRecord>,
    by_id: HashMap<String, usize>,
    /// (tool, key) → the latest operation with it.
    by_key: HashMap<(String, String), usize>,
    /// (tool, key, principal) → the latest operation with them: a claim of a spec key looks
    /// among its own principal's operations (or those without one) only.
    by_owned_key: HashMap<(String, String, Option<String>), usize>,
    /// (tool, key, arguments hash) → the latest operation with them.
    by_call: HashMap<(String, String, String), usize>,
    /// A client's key in its scope ([`OperationStart::key_scope`]) → the latest operation
    /// with it.
    by_client_key: HashMap<(String, String), usize>,
    /// (tool, arguments hash) → every operation with them, oldest first.
    by_args: HashMap<(String, String), Vec<usize>>,
    /// Session id → its allow-for-session grants, oldest first (shared by every runtime this
    /// journal serves).
    grants: HashMap<String, Vec<Grant>>,
}

impl MemoryState {
    fn insert(&mut self, op: &OperationStart) -> Result<(), JournalError> {
        if self.by_id.contains_key(&op.operation_id) {
            return Err(JournalError::Invalid(format!(
                "operation {} started twice",
                op.operation_id
            )));
        }
        let i = self.ops.len();
        self.by_id.insert(op.operation_id.clone(), i);
        self.by_key
            .insert((op.tool.clone(), op.idempotency_key.clone()), i);
        self.by_owned_key.insert(
            (
                op.tool.clone(),
                op.idempotency_key.clone(),
                op.principal.clone(),
            ),
            i,
        );
        self.by_call.insert(
            (
                op.tool.clone(),
                op.idempotency_key.clone(),
                op.arguments_hash.clone(),
            ),
            i,
        );
        if op.key_source == KeySource::Client {
            self.by_client_key
                .insert((op.key_scope(), op.idempotency_key.clone()), i);
        }
        self.by_args
            .entry((op.tool.clone(), op.arguments_hash.clone()))
            .or_default()
            .push(i);
        self.ops.push(OperationRecord {
            start: op.clone(),
            attempts: Vec::new(),
            finish: None,
            settlements: Vec::new(),
            running_in: Some(std::process::id()),
        });
        Ok(())
    }

    /// The latest operation of the same tool and arguments whose outcome is unknown: cut off,
    /// or still running.
    fn uncertain(&self, op: &OperationStart) -> Option<&OperationRecord> {
        self.by_args
            .get(&(op.tool.clone(), op.arguments_hash.clone()))?
            .iter()
            .rev()
            .map(|&i| &self.ops[i])
            .find(|o| o.state().is_uncertain())
    }

    fn latest(&self, tool: &str, key: &str) -> Option<&OperationRecord> {
        self.by_key
            .get(&(tool.to_owned(), key.to_owned()))
            .map(|&i| &self.ops[i])
    }

    fn get_mut(&mut self, id: &str, what: &str) -> Result<&mut OperationRecord, JournalError> {
        match self.by_id.get(id) {
            Some(&i) => Ok(&mut self.ops[i]),
            None => Err(JournalError::Invalid(format!(
                "{what} of unknown operation {id}"
            ))),
        }
    }
}

impl MemoryJournal {
    /// Every operation, in start order.
    pub fn operations(&self) -> Vec<OperationRecord> {
        self.with(|s| s.ops.clone())
    }

    fn with<T>(&self, f: impl FnOnce(&mut MemoryState) -> T) -> T {
        let mut s = match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        f(&mut s)
    }
}

impl Journal for MemoryJournal {
    fn start<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, ()> {
        let r = self.with(|s| s.insert(op));
        Box::pin(async move { r })
    }

    fn claim<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, Claim> {
        let r = self.with(|s| {
            let earlier = match op.key_source {
                KeySource::Spec => s
                    .by_owned_key
                    .get(&(
                        op.tool.clone(),
                        op.idempotency_key.clone(),
                        op.principal.clone(),
                    ))
                    .map(|&i| &s.ops[i]),
                KeySource::Client => s
                    .by_client_key
                    .get(&(op.key_scope(), op.idempotency_key.clone()))
                    .map(|&i| &s.ops[i]),
                KeySource::Derived => s
                    .by_call
                    .get(&(
                        op.tool.clone(),
                        op.idempotency_key.clone(),
                        op.arguments_hash.clone(),
                    ))
                    .map(|&i| &s.ops[i])
                    .filter(|e| e.start.principal == op.principal),
            };
            if let Some(earlier) = earlier
                && claimed_by(earlier, op)
            {
                return Ok(Claim::Existing(Box::new(earlier.clone())));
            }
            if op.blocked_by_uncertainty()
                && let Some(earlier) = s.uncertain(op)
            {
                return Ok(Claim::Blocked(Box::new(earlier.clone())));
            }
            s.insert(op).map(|()| Claim::Started)
        });
        Box::pin(async move { r })
    }

    fn attempt<'a>(&'a self, attempt: &'a AttemptRecord) -> JournalFuture<'a, ()> {
        let r = self.with(|s| {
            s.get_mut(&attempt.operation_id, "attempt")
                .map(|op| op.attempts.push(attempt.clone()))
        });
        Box::pin(async move { r })
    }

    fn finish<'a>(&'a self, finish: &'a OperationFinish) -> JournalFuture<'a, ()> {
        let r = self.with(|s| {
            let op = s.get_mut(&finish.operation_id, "finish")?;
            if op.finish.is_some() {
                return Err(JournalError::Invalid(format!(
                    "operation {} finished twice",
                    finish.operation_id
                )));
            }
            op.finish = Some(finish.clone());
            Ok(())
        });
        Box::pin(async move { r })
    }

    fn settle<'a>(&'a self, settlement: &'a Settlement) -> JournalFuture<'a, ()> {
        let r = self.with(|s| {
            let op = s.get_mut(&settlement.operation_id, "settlement")?;
            check_settle(Some(op), settlement)?;
            op.settlements.push(settlement.clone());
            Ok(())
        });
        Box::pin(async move { r })
    }

    fn by_idempotency_key<'a>(
        &'a self,
        tool: &'a str,
        key: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let r = self.with(|s| s.latest(tool, key).cloned());
        Box::pin(async move { Ok(r) })
    }

    fn operation<'a>(
        &'a self,
        operation_id: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let r = self.with(|s| s.by_id.get(operation_id).map(|&i| s.ops[i].clone()));
        Box::pin(async move { Ok(r) })
    }

    fn uncertain<'a>(
        &'a self,
        tool: &'a str,
        arguments_hash: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let r = self.with(|s| {
            s.by_args
                .get(&(tool.to_owned(), arguments_hash.to_owned()))?
                .iter()
                .rev()
                .map(|&i| &s.ops[i])
                .find(|o| o.state().is_uncertain())
                .cloned()
        });
        Box::pin(async move { Ok(r) })
    }

    fn unfinished<'a>(&'a self) -> JournalFuture<'a, Vec<OperationRecord>> {
        let r = self.with(|s| {
            s.ops
                .iter()
                .filter(|o| o.finish.is_none() && o.settlements.is_empty())
                .cloned()
                .collect()
        });
        Box::pin(async move { Ok(r) })
    }

    fn shares_grants(&self) -> bool {
        true
    }

    fn grants<'a>(&'a self, session_id: &'a str) -> JournalFuture<'a, Vec<Grant>> {
        let r = self.with(|s| s.grants.get(session_id).cloned().unwrap_or_default());
        Box::pin(async move { Ok(r) })
    }

    fn remember_grant<'a>(
        &'a self,
        session_id: &'a str,
        grant: &'a Grant,
    ) -> JournalFuture<'a, ()> {
        self.with(|s| {
            let kept = s.grants.entry(session_id.to_owned()).or_default();
            if !kept.contains(grant) {
                kept.push(grant.clone());
            }
        });
        Box::pin(async { Ok(()) })
    }
}
