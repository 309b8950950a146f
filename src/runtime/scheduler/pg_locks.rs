//! The resource locks of several hosts, in PostgreSQL: what the project's lock file
//! ([`super::lockfile`]) is to the processes of one host, session-level advisory locks are to
//! the hosts of a fleet that share one database.
//!
//! Each admitted call that needs locks takes a connection of its own from the pool and holds it
//! for as long as it runs; its locks are that session's. Keys live in the single-`bigint`
//! advisory key space (`pg_advisory_lock(int8)`; PostgreSQL keeps the `(int4, int4)` space
//! apart, so another program's two-key locks never meet these): a key is the first 8 bytes of
//! the BLAKE3 hash of `toolgate-lock`, the project's namespace and the lock's name. Advisory
//! locks belong to one database, so hosts exclude each other when they use the same database
//! and namespace. Distinct names that hash alike share a lock, which orders calls that need not
//! be — never the other way round.
//!
//! PostgreSQL locks are points with two modes (shared, exclusive), where the lock file has byte
//! ranges; a `tree:` key covers every path beneath it, so the locks are taken as in
//! multi-granularity locking. Each path component is a node (`tree:.` is the root), each other
//! key a node beneath a root of its own; a call takes, on every ancestor of what it names, an
//! *intent*: intent-to-read is the node's lock shared, intent-to-write the node's lock shared
//! and one of [`INTENT_SLOTS`] slot locks exclusive. Reading a `tree:` (or `dir:`) node is its
//! lock shared and every slot shared; writing one is its lock exclusive and every slot shared. A
//! `file:` key, or another key, is a point: its node's lock alone, shared or exclusive. So writers of different files beneath `src` share `src`, a reader of `tree:src`
//! waits for every writer beneath it, and a writer of `tree:src` for every reader and writer
//! beneath it. More than [`INTENT_SLOTS`] writers beneath one folder at once wait for a slot.
//!
//! Besides, every call that may change something takes the `world` lock shared, or exclusive
//! when it runs alone; a call that reads without declared resources reads both roots; a
//! concurrency group of `max: N` is N slot locks of which a call takes any one.
//!
//! The order rule is the lock file's: a call tries every lock at once without waiting (one
//! statement); if one is held elsewhere it releases all it took, waits — holding nothing else —
//! for that one, keeps it, and tries the rest again. Nobody waits while holding a lock, so no
//! cycle of waiting hosts forms. A wait its caller cancels ends with a cancel request to the
//! server, and the connection is closed rather than given back to the pool: whether the wait
//! ended before or after the lock was granted, the session ends and with it every lock it held.
//! A host that dies leaves no lock behind either: when its connections drop, the server ends
//! their sessions and releases their locks.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use deadpool_postgres::{Object, Pool};
use tokio_postgres::{NoTls, SimpleQueryMessage};
use tokio_util::sync::CancellationToken;

use super::admission::{ResourceClaim, WaitedBehind};
use crate::ir::Effect;

/// Slot locks per node for intents to write beneath it: how many calls may write beneath one
/// folder at once across the fleet.
pub const INTENT_SLOTS: usize = 32;

/// The largest number of slots a concurrency group gets (a larger `max` is capped).
const GROUP_SLOTS: u32 = 256;

/// A project's resource locks in a PostgreSQL database, shared by every host that uses the same
/// database and namespace.
#[derive(Clone)]
pub struct PgLocks {
    pool: Pool,
    namespace: Arc<str>,
    /// Which slot the next call tries first, and waits on when all are taken.
    turn: Arc<AtomicU64>,
}

impl std::fmt::Debug for PgLocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgLocks")
            .field("namespace", &self.namespace)
            .field("pool", &self.pool.status())
            .finish()
    }
}

/// Why locks could not be taken.
#[derive(Debug)]
pub(crate) enum PgNotAcquired {
    /// Cancelled while waiting, with what it waited for.
    Cancelled(Vec<WaitedBehind>),
    /// The pool or the server failed.
    Failed(String),
}

/// The locks a call took, and what it found held on the way.
#[derive(Debug)]
pub(crate) struct PgAcquired {
    /// The session holding the locks (none when the claim needs none).
    pub(crate) held: Option<PgHeld>,
    /// The locks it waited for.
    pub(crate) waited: Vec<WaitedBehind>,
}

/// A call's session and its locks; released when dropped.
pub(crate) struct PgHeld {
    conn: Option<Object>,
}

impl std::fmt::Debug for PgHeld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgHeld").finish_non_exhaustive()
    }
}

impl Drop for PgHeld {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else {
            return;
        };
        // The session goes back to the pool only once it holds nothing; without a runtime to
        // run the release on, it is closed, which releases its locks too.
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    if unlock_all(&conn).await.is_err() {
                        discard(conn);
                    }
                });
            }
            Err(_) => discard(conn),
        }
    }
}

/// One lock a call needs: the first key, or any one of several (a slot).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Want {
    keys: Vec<i64>,
    exclusive: bool,
    /// What it stands for, for the trace.
    what: String,
}

impl PgLocks {
    /// Locks in the database of `pool`, named within `namespace` (the project's: hosts serving
    /// one project give the same). Give it a pool of its own: each running call that takes locks
    /// holds one of its connections.
    pub fn new(pool: Pool, namespace: impl Into<String>) -> PgLocks {
        PgLocks {
            pool,
            namespace: namespace.into().into(),
            turn: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The namespace of the keys.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Takes the locks of a claim, all or nothing, waiting while another session holds one;
    /// `cancel` ends the wait.
    pub(crate) async fn acquire(
        &self,
        claim: &ResourceClaim,
        cancel: &CancellationToken,
    ) -> Result<PgAcquired, PgNotAcquired> {
        let wants = wants(claim, &self.namespace);
        if wants.is_empty() {
            return Ok(PgAcquired {
                held: None,
                waited: Vec::new(),
            });
        }
        let conn = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(PgNotAcquired::Cancelled(Vec::new())),
            c = self.pool.get() => c.map_err(|e| PgNotAcquired::Failed(e.to_string()))?,
        };
        let mut held = PgHeld { conn: Some(conn) };
        // The slot a blocking wait already took (trying the others again would take two).
        let mut kept: Option<(usize, i64)> = None;
        let mut waited: Vec<WaitedBehind> = Vec::new();
        loop {
            let Some(c) = held.conn.as_ref() else {
                return Err(PgNotAcquired::Failed("the session was lost".into()));
            };
            let turn = self.turn.fetch_add(1, Ordering::Relaxed);
            let sql = try_all_sql(&wants, kept, turn);
            let got = query_row(c, &sql)
                .await
                .map_err(|e| PgNotAcquired::Failed(e.to_string()))?;
            let Some(blocked) = got.iter().position(|v| v == "f" || v == "-1") else {
                return Ok(PgAcquired {
                    held: Some(held),
                    waited,
                });
            };
            let want = &wants[blocked];
            if !waited.iter().any(|w| w.resource == want.what) {
                waited.push(WaitedBehind::lock(want.what.clone()));
            }
            unlock_all(c)
                .await
                .map_err(|e| PgNotAcquired::Failed(e.to_string()))?;
            let slot = usize::try_from(turn % want.keys.len() as u64).unwrap_or(0);
            let key = want.keys[slot];
            let func = if want.exclusive {
                "pg_advisory_lock"
            } else {
                "pg_advisory_lock_shared"
            };
            let token = c.cancel_token();
            let wait_sql = format!("SELECT {func}({key})::text");
            tokio::select! {
                r = query_row(c, &wait_sql) => {
                    r.map_err(|e| PgNotAcquired::Failed(e.to_string()))?;
                }
                () = cancel.cancelled() => {
                    // The wait may end either way now; the session is closed once it has, so a
                    // lock granted after the caller gave up is released with it.
                    tokio::spawn(async move {
                        let _ = token.cancel_query(NoTls).await;
                    });
                    if let Some(conn) = held.conn.take() {
                        discard(conn);
                    }
                    return Err(PgNotAcquired::Cancelled(waited));
                }
            }
            kept = (want.keys.len() > 1).then_some((blocked, key));
        }
    }
}

/// Runs one statement; the text of each column of its first row.
async fn query_row(conn: &Object, sql: &str) -> Result<Vec<String>, tokio_postgres::Error> {
    let messages = conn.simple_query(sql).await?;
    for m in messages {
        if let SimpleQueryMessage::Row(row) = m {
            return Ok((0..row.len())
                .map(|i| row.get(i).unwrap_or_default().to_owned())
                .collect());
        }
    }
    Ok(Vec::new())
}

async fn unlock_all(conn: &Object) -> Result<(), tokio_postgres::Error> {
    conn.simple_query("SELECT pg_advisory_unlock_all()")
        .await
        .map(|_| ())
}

/// Closes a session instead of giving it back to the pool: the server ends it and releases
/// every lock it holds.
fn discard(conn: Object) {
    drop(Object::take(conn));
}

/// One statement that tries every lock without waiting: a column per want, `t`/`f` for a
/// single lock, the slot taken or `-1` for a choice (`CASE` stops at the first slot it gets).
/// Keys are integers of ours, so the text is safe to build.
fn try_all_sql(wants: &[Want], kept: Option<(usize, i64)>, turn: u64) -> String {
    let cols: Vec<String> = wants
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let func = if w.exclusive {
                "pg_try_advisory_lock"
            } else {
                "pg_try_advisory_lock_shared"
            };
            if kept.is_some_and(|(k, _)| k == i) {
                return "'t'".to_owned();
            }
            if w.keys.len() == 1 {
                return format!("{func}({})", w.keys[0]);
            }
            let n = w.keys.len();
            let start = usize::try_from(turn % n as u64).unwrap_or(0);
            let arms: String = (0..n)
                .map(|j| {
                    let slot = (start + j) % n;
                    format!(" WHEN {func}({}) THEN {slot}", w.keys[slot])
                })
                .collect();
            format!("CASE{arms} ELSE -1 END")
        })
        .collect();
    format!("SELECT {}", cols.join(", "))
}

/// The advisory key of a lock's name.
fn key(namespace: &str, name: &str) -> i64 {
    let mut h = blake3::Hasher::new();
    for part in ["toolgate-lock", namespace, name] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let mut b = [0u8; 8];
    b.copy_from_slice(&h.finalize().as_bytes()[..8]);
    i64::from_le_bytes(b)
}

/// How a call uses one node.
#[derive(Clone, Copy, Debug, Default)]
struct Use {
    intent_read: bool,
    intent_write: bool,
    read: bool,
    write: bool,
    /// It reads or writes everything beneath the node too (a `tree:`/`dir:` key, a root).
    beneath: bool,
}

/// A node of the lock hierarchy: its name, its ancestors' names (root first), and whether the
/// key covers what is beneath the node (`tree:`, `dir:`; a `file:` or another key is a point).
fn node_of(resource: &str) -> (String, Vec<String>, bool) {
    match resource.split_once(':') {
        Some((kind @ ("file" | "dir" | "tree"), path)) => {
            let parts: Vec<&str> = path
                .split('/')
                .filter(|p| !p.is_empty() && *p != ".")
                .collect();
            let name = |n: usize| format!("path:{}", parts[..n].join("/"));
            let ancestors = (0..parts.len()).map(name).collect();
            (name(parts.len()), ancestors, kind != "file")
        }
        _ => (format!("key:{resource}"), vec!["keys".to_owned()], false),
    }
}

/// The locks of a claim (see the module documentation).
fn wants(claim: &ResourceClaim, ns: &str) -> Vec<Want> {
    let mut out = Vec::new();
    if claim.effect != Effect::Pure {
        if claim.exclusive.is_some() {
            out.push(Want {
                keys: vec![key(ns, "world")],
                exclusive: true,
                what: "everything: this call runs alone".into(),
            });
        } else {
            out.push(Want {
                keys: vec![key(ns, "world")],
                exclusive: false,
                what: "everything: a call that runs alone".into(),
            });
            // Nodes in a stable order, each with what the call does there and what it names.
            let mut nodes: std::collections::BTreeMap<String, (Use, String)> = Default::default();
            let mut mark = |node: String, what: &str, f: &dyn Fn(&mut Use)| {
                let e = nodes
                    .entry(node)
                    .or_insert_with(|| (Use::default(), what.to_owned()));
                f(&mut e.0);
            };
            if !claim.declares_resources {
                let what = "any resource: this call reads without declared resources";
                let all = |u: &mut Use| {
                    u.read = true;
                    u.beneath = true;
                };
                mark("path:".into(), what, &all);
                mark("keys".into(), what, &all);
            }
            let fp = &claim.footprint;
            for (k, write) in fp
                .reads
                .iter()
                .filter(|k| !fp.writes.contains(*k))
                .map(|k| (k, false))
                .chain(fp.writes.iter().map(|k| (k, true)))
            {
                let (node, ancestors, beneath) = node_of(k);
                for a in ancestors {
                    mark(a, k, &|u| {
                        if write {
                            u.intent_write = true;
                        } else {
                            u.intent_read = true;
                        }
                    });
                }
                mark(node, k, &|u| {
                    if write {
                        u.write = true;
                    } else {
                        u.read = true;
                    }
                    u.beneath |= beneath;
                });
            }
            for (node, (u, what)) in nodes {
                let slots = || (0..INTENT_SLOTS).map(|i| key(ns, &format!("{node}#{i}")));
                out.push(Want {
                    keys: vec![key(ns, &node)],
                    exclusive: u.write,
                    what: what.clone(),
                });
                // Covering what is beneath conflicts with every intent to write there; a
                // point needs only the node's lock (nothing beneath it is named by its kind).
                if (u.read || u.write) && u.beneath {
                    out.extend(slots().map(|k| Want {
                        keys: vec![k],
                        exclusive: false,
                        what: what.clone(),
                    }));
                }
                if u.intent_write && !(u.write && u.beneath) {
                    out.push(Want {
                        keys: slots().collect(),
                        exclusive: true,
                        what: what.clone(),
                    });
                }
            }
        }
    }
    if let Some(g) = &claim.group {
        let max = g.max.clamp(1, GROUP_SLOTS);
        out.push(Want {
            keys: (0..max)
                .map(|i| key(ns, &format!("group:{}#{i}", g.name)))
                .collect(),
            exclusive: true,
            what: format!("concurrency group {} (max {})", g.name, g.max.max(1)),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::ir::ConcurrencyGroup;
    use crate::runtime::scheduler::{Footprint, overlaps};

    fn claim(effect: Effect, reads: &[&str], writes: &[&str]) -> ResourceClaim {
        let footprint = Footprint {
            reads: reads.iter().map(|s| (*s).to_owned()).collect(),
            writes: writes.iter().map(|s| (*s).to_owned()).collect(),
            unresolved: None,
        };
        let declares = !reads.is_empty() || !writes.is_empty();
        ResourceClaim::new(effect, declares, footprint, None).unwrap()
    }

    /// Whether two calls' locks conflict when each gets the slots it tries first and the other
    /// call's took different ones (the best case of slot choice).
    fn conflict(a: &[Want], b: &[Want]) -> bool {
        a.iter().any(|x| {
            b.iter().any(|y| {
                let single = |w: &Want| (w.keys.len() == 1).then(|| w.keys[0]);
                match (single(x), single(y)) {
                    (Some(kx), Some(ky)) => kx == ky && (x.exclusive || y.exclusive),
                    // A choice of slots conflicts with a lock on one of them when either is
                    // exclusive (it cannot avoid every slot the other holds: all are held).
                    (None, Some(ky)) => x.keys.contains(&ky) && (x.exclusive || y.exclusive),
                    (Some(kx), None) => y.keys.contains(&kx) && (x.exclusive || y.exclusive),
                    // Two choices take different slots.
                    (None, None) => false,
                }
            })
        })
    }

    #[test]
    fn the_locks_of_two_calls_conflict_exactly_when_the_calls_do() {
        let keys = [
            "file:a",
            "file:src/a.py",
            "file:src/b.py",
            "file:srcx/a.py",
            "tree:src",
            "dir:src",
            "tree:.",
            "tree:src/lib",
            "file:src/lib/x.rs",
            "git:index",
            "svc:notes",
        ];
        for a in keys {
            for b in keys {
                for (wa, wb) in [(true, true), (true, false), (false, true), (false, false)] {
                    let ca = if wa {
                        claim(Effect::LocalWrite, &[], &[a])
                    } else {
                        claim(Effect::LocalWrite, &[a], &[])
                    };
                    let cb = if wb {
                        claim(Effect::LocalWrite, &[], &[b])
                    } else {
                        claim(Effect::LocalWrite, &[b], &[])
                    };
                    let expect = (wa || wb) && overlaps(a, b);
                    let got = conflict(&wants(&ca, "ns"), &wants(&cb, "ns"));
                    // A path named as a file and as a folder ("file:src" beside "tree:src/…")
                    // shares its node; no such pair is among these keys.
                    assert_eq!(got, expect, "{a} ({wa}) / {b} ({wb})");
                }
            }
        }
    }

    #[test]
    fn reads_anything_conflicts_with_writers_and_alone_with_all() {
        let anything = claim(Effect::ReadOnly, &[], &[]);
        let alone = claim(Effect::LocalWrite, &[], &[]);
        let write = claim(Effect::LocalWrite, &[], &["git:index"]);
        let write_path = claim(Effect::LocalWrite, &[], &["file:src/a"]);
        let read = claim(Effect::ReadOnly, &["file:src/a"], &[]);
        let ns = "ns";
        assert!(conflict(&wants(&anything, ns), &wants(&write, ns)));
        assert!(conflict(&wants(&anything, ns), &wants(&write_path, ns)));
        assert!(!conflict(&wants(&anything, ns), &wants(&read, ns)));
        assert!(conflict(&wants(&alone, ns), &wants(&read, ns)));
        assert!(!conflict(&wants(&write, ns), &wants(&write_path, ns)));
        // Reading a tree while writing beneath it is both: it meets another reader of the tree.
        let both = claim(Effect::LocalWrite, &["tree:src"], &["file:src/a"]);
        let tree_reader = claim(Effect::ReadOnly, &["tree:src"], &[]);
        assert!(conflict(&wants(&both, ns), &wants(&tree_reader, ns)));
        // A file is a point: one lock, beside the world's and its folders' intents.
        let deep = claim(Effect::LocalWrite, &[], &["file:src/lib/a.rs"]);
        assert_eq!(wants(&deep, ns).len(), 1 + 3 * 2 + 1);
    }

    #[test]
    fn namespaces_and_groups_get_their_own_keys() {
        let w = claim(Effect::LocalWrite, &[], &["file:a"]);
        assert!(!conflict(&wants(&w, "one"), &wants(&w, "two")));
        let group = ConcurrencyGroup {
            name: "gpu".into(),
            max: 3,
        };
        let g = ResourceClaim::new(Effect::Pure, false, Footprint::default(), Some(group)).unwrap();
        let ws = wants(&g, "ns");
        assert_eq!(ws.len(), 1);
        assert_eq!(ws[0].keys.len(), 3);
        let sql = try_all_sql(&ws, None, 1);
        assert!(
            sql.starts_with("SELECT CASE WHEN pg_try_advisory_lock("),
            "{sql}"
        );
        assert!(sql.ends_with(" THEN 0 ELSE -1 END"), "{sql}");
    }
}
