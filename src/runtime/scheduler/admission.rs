//! The admission table: one per runtime, shared by every session, request and `execute()` of
//! it. The [`Plan`](super::Plan) orders the calls of one turn; this table orders the calls of
//! all turns in flight against each other (chapter §11–14: concurrency is the runtime's
//! decision).
//!
//! Each call presents its [`ResourceClaim`] — footprint, concurrency group, effect — and is admitted
//! when it conflicts with no call that is running *or waiting ahead of it*: conflicting calls
//! run in arrival order (a later call never overtakes an earlier one it conflicts with), and a
//! call that conflicts with nothing in the table runs at once, past any waiters. A call takes
//! its whole claim at once or nothing — it never holds part of it while it waits — so a waiter
//! only ever waits for running calls and for earlier waiters, and no set of calls can wait in a
//! circle: the earliest waiter waits only for running calls, which end (each under its
//! timeout). A waiting call leaves the queue when its caller cancels it or drops its future,
//! and the calls behind it are looked at again.
//!
//! Pure calls outside any concurrency group never enter: nothing they do can conflict. After
//! the table admits a call, it takes the cross-process locks ([`ResourceLocks`]: the project's
//! lock file, or PostgreSQL advisory locks shared by several hosts), so that other toolgate
//! processes on the project are excluded too.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::locks::{HeldResourceLocks, NotTaken, ResourceLocks, Taken};
use super::{Clash, Footprint, Side, clash, exclusive_why};
use crate::ir::{ConcurrencyGroup, Effect};
use crate::runtime::permission::AuthorizedCall;

/// How many of the calls a call waited behind its trace record names.
pub const MAX_WAITED_BEHIND: usize = 16;

/// What a call holds while it runs.
#[derive(Clone, Debug)]
pub(crate) struct ResourceClaim {
    /// Its effect.
    pub(crate) effect: Effect,
    /// Whether its spec declares resources.
    pub(crate) declares_resources: bool,
    /// Its resources.
    pub(crate) footprint: Footprint,
    /// Its concurrency group.
    pub(crate) group: Option<ConcurrencyGroup>,
    /// Why it runs alone, if it does.
    pub(crate) exclusive: Option<String>,
}

impl ResourceClaim {
    /// The claim of an authorized call; `None` for a pure call outside any concurrency group,
    /// which nothing can conflict with.
    pub(crate) fn of(call: &AuthorizedCall) -> Option<ResourceClaim> {
        let def = call.definition();
        ResourceClaim::new(
            def.effect,
            !def.resources.is_empty(),
            call.footprint().clone(),
            def.concurrency_group.clone(),
        )
    }

    /// A claim from its parts (see [`ResourceClaim::of`]).
    pub(crate) fn new(
        effect: Effect,
        declares_resources: bool,
        footprint: Footprint,
        group: Option<ConcurrencyGroup>,
    ) -> Option<ResourceClaim> {
        if effect == Effect::Pure && group.is_none() {
            return None;
        }
        let exclusive = exclusive_why(effect, declares_resources, &footprint);
        Some(ResourceClaim {
            effect,
            declares_resources,
            footprint,
            group,
            exclusive,
        })
    }

    fn side(&self) -> Side<'_> {
        Side {
            effect: self.effect,
            declares_resources: self.declares_resources,
            footprint: &self.footprint,
            group: self.group.as_ref(),
            exclusive: self.exclusive.as_deref(),
        }
    }

    /// The group and its limit (at least 1), if the call is in one.
    fn group_limit(&self) -> Option<(&str, usize)> {
        self.group.as_ref().map(|g| {
            (
                g.name.as_str(),
                usize::try_from(g.max.max(1)).unwrap_or(usize::MAX),
            )
        })
    }
}

/// Why `later` may not run while `earlier` does, worded as what they share; `None` when they
/// may run at once. A pure call conflicts only through its concurrency group; groups are
/// counted apart (see [`State::blockers`]).
fn shared(earlier: &ResourceClaim, later: &ResourceClaim) -> Option<String> {
    if earlier.effect == Effect::Pure || later.effect == Effect::Pure {
        return None;
    }
    Some(match clash(earlier.side(), later.side())? {
        Clash::Alone { first: true, why } => format!("everything: it runs alone ({why})"),
        Clash::Alone { first: false, why } => {
            format!("everything: this call runs alone ({why})")
        }
        Clash::ReadsAnything { reader_first: true } => {
            "any resource: it reads without declared resources".to_owned()
        }
        Clash::ReadsAnything {
            reader_first: false,
        } => "any resource: this call reads without declared resources".to_owned(),
        Clash::Writes { key, .. } => key,
        Clash::Group(_) => return None,
    })
}

/// Who holds (or waits for) a place in the table.
#[derive(Clone, Debug)]
pub(crate) struct Holder {
    /// The session.
    pub(crate) session_id: String,
    /// The call id.
    pub(crate) call_id: String,
    /// The tool.
    pub(crate) tool: String,
}

/// How long a call waited before it could run, and behind what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wait {
    /// Microseconds from its arrival at the scheduler to its admission (or to its cancel).
    pub queued_us: u64,
    /// What it waited behind (the first [`MAX_WAITED_BEHIND`]): the calls of this runtime it
    /// conflicted with when it arrived, then the locks of the project's lock file it found
    /// held.
    pub behind: Vec<WaitedBehind>,
}

/// One thing a call waited behind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitedBehind {
    /// The session of the call waited for (a call of this runtime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The call waited for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Its tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What they share: a resource key (`file:src/a.py`, or `tree:src / file:src/a.py`), a
    /// concurrency group, or why one of them runs alone.
    pub resource: String,
    /// The lock was held in the project's lock file by someone this runtime does not know:
    /// another toolgate process (or, rarely, a call of this one whose key shares the lock).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub other_process: bool,
}

impl WaitedBehind {
    fn call(h: &Holder, resource: String) -> WaitedBehind {
        WaitedBehind {
            session_id: Some(h.session_id.clone()),
            call_id: Some(h.call_id.clone()),
            tool: Some(h.tool.clone()),
            resource,
            other_process: false,
        }
    }

    /// A lock of the lock file held elsewhere.
    pub(crate) fn lock(resource: String) -> WaitedBehind {
        WaitedBehind {
            session_id: None,
            call_id: None,
            tool: None,
            resource,
            other_process: true,
        }
    }
}

/// Why a call was not admitted.
#[derive(Debug)]
pub(crate) enum NotAdmitted {
    /// Its caller cancelled it while it waited; it did not run.
    Cancelled(Wait),
    /// The cross-process locks failed; it did not run.
    Locks {
        /// The backend, in words (`the project's lock file /…/resources.lock`).
        backend: String,
        /// The failure.
        error: String,
    },
}

/// A call's admission: while it lives, the call holds its claim. Dropping it releases the
/// cross-process locks first, then the place in the table.
#[derive(Debug)]
pub(crate) struct Admitted {
    _locks: Option<HeldResourceLocks>,
    _ticket: Ticket,
    /// How long it waited and behind what, when it waited.
    pub(crate) wait: Option<Wait>,
}

struct Entry {
    id: u64,
    claim: Arc<ResourceClaim>,
    holder: Holder,
}

struct Waiter {
    entry: Entry,
    wake: Option<oneshot::Sender<()>>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    running: Vec<Entry>,
    waiting: VecDeque<Waiter>,
}

impl State {
    /// What a claim arriving now (or looked at again, with `ahead` the waiters before it) waits
    /// behind; empty when it may run.
    fn blockers<'e>(
        running: &'e [Entry],
        ahead: impl Iterator<Item = &'e Entry> + Clone,
        claim: &ResourceClaim,
    ) -> Vec<WaitedBehind> {
        let mut out: Vec<WaitedBehind> = running
            .iter()
            .chain(ahead.clone())
            .filter_map(|e| shared(&e.claim, claim).map(|r| WaitedBehind::call(&e.holder, r)))
            .collect();
        if let Some((group, own_max)) = claim.group_limit() {
            let members: Vec<&Entry> = running
                .iter()
                .chain(ahead)
                .filter(|e| e.claim.group_limit().is_some_and(|(g, _)| g == group))
                .collect();
            // Two tools may give one group different limits: the smallest holds for all.
            let max = members
                .iter()
                .filter_map(|e| e.claim.group_limit().map(|(_, m)| m))
                .fold(own_max, usize::min);
            if members.len() >= max {
                let what = format!("concurrency group {group} (max {max})");
                out.extend(
                    members
                        .into_iter()
                        .map(|e| WaitedBehind::call(&e.holder, what.clone())),
                );
            }
        }
        out
    }

    /// Whether anything blocks a claim ([`State::blockers`] without the words).
    fn blocked<'e>(
        running: &'e [Entry],
        ahead: impl Iterator<Item = &'e Entry> + Clone,
        claim: &ResourceClaim,
    ) -> bool {
        let conflicts = |e: &Entry| {
            e.claim.effect != Effect::Pure
                && claim.effect != Effect::Pure
                && clash(e.claim.side(), claim.side())
                    .is_some_and(|c| !matches!(c, Clash::Group(_)))
        };
        if running.iter().chain(ahead.clone()).any(conflicts) {
            return true;
        }
        let Some((group, own_max)) = claim.group_limit() else {
            return false;
        };
        let mut members = 0;
        let mut max = own_max;
        for (_, m) in running
            .iter()
            .chain(ahead)
            .filter_map(|e| e.claim.group_limit())
            .filter(|(g, _)| *g == group)
        {
            members += 1;
            max = max.min(m);
        }
        members >= max
    }

    /// Admits every waiter that no running call and no earlier waiter blocks, in order.
    fn promote(&mut self) {
        let mut i = 0;
        while i < self.waiting.len() {
            let ahead = self.waiting.iter().take(i).map(|w| &w.entry);
            let free = !State::blocked(&self.running, ahead, &self.waiting[i].entry.claim);
            if free {
                if let Some(mut w) = self.waiting.remove(i) {
                    if let Some(wake) = w.wake.take() {
                        // A waiter that has gone away drops its ticket, which removes it.
                        let _ = wake.send(());
                    }
                    self.running.push(w.entry);
                }
            } else {
                i += 1;
            }
        }
    }
}

/// The admission table of one runtime (see the module documentation).
pub(crate) struct AdmissionTable {
    state: Mutex<State>,
    locks: Option<ResourceLocks>,
}

impl std::fmt::Debug for AdmissionTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("AdmissionTable")
            .field("running", &s.running.len())
            .field("waiting", &s.waiting.len())
            .field("locks", &self.locks)
            .finish()
    }
}

impl AdmissionTable {
    /// A table; with `locks`, admitted calls also take the project's cross-process locks.
    pub(crate) fn new(locks: Option<ResourceLocks>) -> Self {
        AdmissionTable {
            state: Mutex::new(State::default()),
            locks,
        }
    }

    /// The cross-process locks calls take, if they take any.
    pub(crate) fn locks(&self) -> Option<&ResourceLocks> {
        self.locks.as_ref()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is consistent between statements (no method panics midway), so a poisoned
        // lock holds a usable table.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until the call may run, then holds its claim (in this process and, with a lock
    /// file, across processes) until the returned [`Admitted`] is dropped. `cancel` ends the
    /// wait: the call leaves the queue and did not run.
    pub(crate) async fn admit(
        self: &Arc<Self>,
        holder: Holder,
        claim: ResourceClaim,
        cancel: &CancellationToken,
    ) -> Result<Admitted, NotAdmitted> {
        let arrived = Instant::now();
        let claim = Arc::new(claim);
        let (ticket, wake, mut behind) = self.enqueue(holder, claim.clone());
        if let Some(wake) = wake {
            tokio::select! {
                biased;
                _ = wake => {}
                () = cancel.cancelled() => {
                    return Err(NotAdmitted::Cancelled(Wait::since(arrived, behind)));
                }
            }
        }
        let locks = match &self.locks {
            None => None,
            Some(l) => match l.acquire(&claim, cancel).await {
                Ok(Taken { held, waited }) => {
                    behind.extend(waited);
                    held
                }
                Err(NotTaken::Cancelled(waited)) => {
                    behind.extend(waited);
                    return Err(NotAdmitted::Cancelled(Wait::since(arrived, behind)));
                }
                Err(NotTaken::Failed { backend, error }) => {
                    return Err(NotAdmitted::Locks { backend, error });
                }
            },
        };
        let wait = (!behind.is_empty()).then(|| Wait::since(arrived, behind));
        Ok(Admitted {
            _locks: locks,
            _ticket: ticket,
            wait,
        })
    }

    /// Puts a call in the table: running at once when nothing blocks it, else waiting (with
    /// the receiver its admission is sent to, and what it waits behind).
    fn enqueue(
        self: &Arc<Self>,
        holder: Holder,
        claim: Arc<ResourceClaim>,
    ) -> (Ticket, Option<oneshot::Receiver<()>>, Vec<WaitedBehind>) {
        let mut s = self.lock();
        let id = s.next_id;
        s.next_id += 1;
        let ticket = Ticket {
            table: self.clone(),
            id,
        };
        let ahead = s.waiting.iter().map(|w| &w.entry);
        if !State::blocked(&s.running, ahead, &claim) {
            s.running.push(Entry { id, claim, holder });
            return (ticket, None, Vec::new());
        }
        let behind = State::blockers(&s.running, s.waiting.iter().map(|w| &w.entry), &claim);
        let entry = Entry { id, claim, holder };
        let (tx, rx) = oneshot::channel();
        s.waiting.push_back(Waiter {
            entry,
            wake: Some(tx),
        });
        (ticket, Some(rx), behind)
    }

    /// How many calls run and wait now.
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        let s = self.lock();
        (s.running.len(), s.waiting.len())
    }
}

/// A place in the table, running or waiting; dropping it leaves the table and lets the calls
/// it blocked be looked at again.
struct Ticket {
    table: Arc<AdmissionTable>,
    id: u64,
}

impl std::fmt::Debug for Ticket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Ticket").field(&self.id).finish()
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut s = self.table.lock();
        if let Some(i) = s.running.iter().position(|e| e.id == self.id) {
            s.running.swap_remove(i);
        } else if let Some(i) = s.waiting.iter().position(|w| w.entry.id == self.id) {
            s.waiting.remove(i);
        } else {
            return;
        }
        s.promote();
    }
}

impl Wait {
    /// The first thing waited behind, in words (`write_file call c2 (file:a.txt)`).
    pub fn first_blocker(&self) -> String {
        match self.behind.first() {
            Some(WaitedBehind {
                call_id: Some(id),
                tool,
                resource,
                ..
            }) => format!("{} call {id} ({resource})", tool.as_deref().unwrap_or("a")),
            Some(w) => format!("a lock held by another process ({})", w.resource),
            None => "nothing".to_owned(),
        }
    }

    fn since(arrived: Instant, mut behind: Vec<WaitedBehind>) -> Wait {
        behind.truncate(MAX_WAITED_BEHIND);
        Wait {
            queued_us: u64::try_from(arrived.elapsed().as_micros()).unwrap_or(u64::MAX),
            behind,
        }
    }
}

#[cfg(test)]
mod tests;
