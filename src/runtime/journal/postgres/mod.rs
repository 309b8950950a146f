//! [`PostgresJournal`]: one journal in a PostgreSQL database, shared by every toolgate host
//! pointed at it (`journal: postgres://…`).
//!
//! - The same [`Journal`] semantics as the SQLite journal: a claim is one transaction,
//!   serialized across hosts by transaction-scoped advisory locks on the idempotency key and on
//!   the tool and arguments, so an idempotency key names one operation across the fleet and a
//!   call not safe to repeat is Blocked by an uncertain run on any host.
//! - Owners hold *leases* instead of lock files: each open journal is a row of `owners` whose
//!   `lease_expires_at` is set from the server's clock (`now() + lease`), renewed by a heartbeat
//!   every third of the lease. An owner whose lease has expired has ended: its started
//!   operations are orphans, settled by the next claim that meets one or by the periodic
//!   recovery ([`Journal::recovery_interval`]). A lease is never renewed once expired, and a
//!   claim renews this owner's lease in its own transaction or fails: a host cut off longer than
//!   its lease starts nothing more (fencing).
//! - The driver is tokio-postgres with a deadpool pool, on a small tokio runtime of the
//!   journal's own, so the journal serves callers on any runtime (or none), as the SQLite
//!   journal's writer thread does.
//! - Side-effecting starts, settlements and claims are committed when they return (PostgreSQL's
//!   `synchronous_commit`); the records of calls that change nothing, attempts and the audit
//!   are queued and written in batches by one task ([`queue`]).

mod listing;
mod owners;
mod queue;
mod rows;
mod schema;
mod writes;

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use crate::runtime::approval::Grant;

use super::{
    AttemptRecord, AuditEntry, Claim, Journal, JournalError, JournalFuture, KeySource,
    OperationFinish, OperationRecord, OperationStart, OperationState, Settlement, claimed_by,
};
use queue::{Queue, Queued};

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i64 = schema::SCHEMA_VERSION;

/// The class (first key) of the journal's advisory locks: resource locks on the same server
/// must use another class.
pub const LOCK_CLASS: i32 = 0x5447_4a31;

/// The default lease of an owner.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(15);

/// The shortest lease accepted (a heartbeat renews it every third).
pub const MIN_LEASE: Duration = Duration::from_millis(300);

/// How a PostgreSQL journal is opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostgresOptions {
    /// How long an owner stays alive without renewing its lease.
    pub lease: Duration,
    /// The most connections the pool opens.
    pub pool_size: usize,
    /// How long a connection attempt may take (unless the URL says `connect_timeout`).
    pub connect_timeout: Duration,
    /// How many queued records (reads, attempts, the audit) may wait for the writer task;
    /// past that, audit records are dropped (and counted).
    pub queue_capacity: usize,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            lease: DEFAULT_LEASE,
            pool_size: 16,
            connect_timeout: Duration::from_secs(5),
            queue_capacity: 16_384,
        }
    }
}

/// Whether a journal setting names a PostgreSQL server.
pub fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// Checks a journal URL without connecting; the error never repeats the URL (it may hold a
/// password).
pub fn check_url(url: &str) -> Result<(), JournalError> {
    parse(url).map(|_| ())
}

fn parse(url: &str) -> Result<tokio_postgres::Config, JournalError> {
    if !is_postgres_url(url) {
        return Err(JournalError::BadUrl {
            detail: "it does not start with postgres:// or postgresql://".into(),
        });
    }
    let config = tokio_postgres::Config::from_str(url).map_err(|e| JournalError::BadUrl {
        detail: e.to_string(),
    })?;
    if config.get_hosts().is_empty() {
        return Err(JournalError::BadUrl {
            detail: "it names no host".into(),
        });
    }
    Ok(config)
}

/// `user@host:port/database`, without the password.
fn describe(c: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let host = match h {
                tokio_postgres::config::Host::Tcp(h) => h.clone(),
                tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
            };
            match c.get_ports().get(i).or(c.get_ports().first()) {
                Some(p) => format!("{host}:{p}"),
                None => format!("{host}:5432"),
            }
        })
        .collect();
    let user = c.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    format!(
        "{user}{}/{}",
        hosts.join(","),
        c.get_dbname().or(c.get_user()).unwrap_or("postgres")
    )
}

/// What the journal's tasks share: the pool, the server's name, this owner and its lease.
pub(crate) struct Db {
    pool: Pool,
    /// `user@host:port/database`.
    pub(crate) server: String,
    /// This owner's id.
    pub(crate) owner: String,
    /// Its lease.
    pub(crate) lease: Duration,
    /// Set once this owner's lease is found expired: it starts nothing more.
    fenced: AtomicBool,
}

impl Db {
    /// A pooled connection.
    pub(crate) async fn client(&self) -> Result<Object, JournalError> {
        self.pool.get().await.map_err(|e| {
            let detail = match e {
                deadpool_postgres::PoolError::Backend(e) => pg_detail(&e),
                e => e.to_string(),
            };
            JournalError::Unreachable {
                server: self.server.clone(),
                detail,
            }
        })
    }

    /// A driver error as a journal error: a lost connection as unreachable, else failed.
    pub(crate) fn error(&self, e: &tokio_postgres::Error) -> JournalError {
        let io = std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>());
        if e.is_closed() || io {
            JournalError::Unreachable {
                server: self.server.clone(),
                detail: pg_detail(e),
            }
        } else {
            JournalError::Failed(format!("{}: {}", self.server, pg_detail(e)))
        }
    }

    /// Marks this owner's lease as lost.
    pub(crate) fn fence(&self) {
        self.fenced.store(true, Ordering::SeqCst);
    }

    /// Whether this owner's lease has been found lost.
    pub(crate) fn is_fenced(&self) -> bool {
        self.fenced.load(Ordering::SeqCst)
    }

    /// The error of a lost lease.
    pub(crate) fn expired(&self) -> JournalError {
        JournalError::LeaseExpired {
            server: self.server.clone(),
            detail: format!(
                "owner {} did not renew its {} ms lease in time",
                self.owner,
                self.lease.as_millis()
            ),
        }
    }
}

/// What the driver said, with the server's message when there is one.
fn pg_detail(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut s = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(inner) = source {
                s.push_str(&format!(": {inner}"));
                source = inner.source();
            }
            s
        }
    }
}

/// The PostgreSQL journal.
pub struct PostgresJournal {
    db: Arc<Db>,
    queue: Queue,
    rt: Option<tokio::runtime::Runtime>,
    heartbeat: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for PostgresJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresJournal")
            .field("server", &self.db.server)
            .field("owner", &self.db.owner)
            .finish_non_exhaustive()
    }
}

/// Waits for a task of the journal's runtime from any thread (in a runtime or not).
fn wait<T: Send + 'static>(
    rt: &tokio::runtime::Runtime,
    f: impl Future<Output = Result<T, JournalError>> + Send + 'static,
) -> Result<T, JournalError> {
    let (tx, rx) = std::sync::mpsc::channel();
    rt.spawn(async move {
        let _ = tx.send(f.await);
    });
    rx.recv()
        .map_err(|_| JournalError::Failed("the journal's task stopped".into()))?
}

/// A pool on the journal's database for the resource locks of the hosts that share it
/// ([`crate::runtime::PgLocks`]): a pool of its own, since each running call that takes locks
/// holds one of its connections for as long as it runs, and the journal's writes must never
/// wait behind them. Connects lazily, from the runtime that takes the locks.
pub fn lock_pool(url: &str, opts: &PostgresOptions) -> Result<Pool, JournalError> {
    let mut config = parse(url)?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(opts.connect_timeout);
    }
    if config.get_application_name().is_none() {
        config.application_name("toolgate-locks");
    }
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(LOCK_POOL_SIZE)
        .runtime(Runtime::Tokio1)
        .create_timeout(Some(opts.connect_timeout))
        .build()
        .map_err(|e| JournalError::Failed(format!("cannot make the lock pool: {e}")))
}

/// The most connections a host holds for resource locks: how many of its calls that take locks
/// can run at once (more wait for a connection).
pub const LOCK_POOL_SIZE: usize = 64;

impl PostgresJournal {
    /// Opens the journal at `url` with the default options.
    pub fn open(url: &str) -> Result<Self, JournalError> {
        PostgresJournal::open_with(url, PostgresOptions::default())
    }

    /// Connects, creates or migrates the schema, becomes an owner (with a lease), and starts
    /// the heartbeat and the writer task.
    pub fn open_with(url: &str, opts: PostgresOptions) -> Result<Self, JournalError> {
        let mut config = parse(url)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(opts.connect_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("toolgate");
        }
        let server = describe(&config);
        let lease = opts.lease.max(MIN_LEASE);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("toolgate-journal")
            .enable_all()
            .build()
            .map_err(|e| JournalError::Failed(format!("cannot start the journal's tasks: {e}")))?;
        match PostgresJournal::start(&rt, config, server, lease, &opts) {
            Ok((db, queue, heartbeat)) => Ok(PostgresJournal {
                db,
                queue,
                rt: Some(rt),
                heartbeat,
            }),
            Err(e) => {
                // Dropping a runtime may block, which a caller on a runtime must not do.
                rt.shutdown_background();
                Err(e)
            }
        }
    }

    /// Makes the pool, migrates, registers this owner, and starts the heartbeat and the
    /// writer task on `rt`.
    fn start(
        rt: &tokio::runtime::Runtime,
        config: tokio_postgres::Config,
        server: String,
        lease: Duration,
        opts: &PostgresOptions,
    ) -> Result<(Arc<Db>, Queue, tokio::task::JoinHandle<()>), JournalError> {
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = {
            let _in = rt.enter();
            Pool::builder(manager)
                .max_size(opts.pool_size.max(2))
                .runtime(Runtime::Tokio1)
                .create_timeout(Some(opts.connect_timeout))
                .wait_timeout(Some(Duration::from_secs(60)))
                .build()
                .map_err(|e| JournalError::Failed(format!("cannot make the pool: {e}")))?
        };
        let db = Arc::new(Db {
            pool,
            server,
            owner: format!("own-{}", uuid::Uuid::now_v7().simple()),
            lease,
            fenced: AtomicBool::new(false),
        });
        let d = db.clone();
        wait(rt, async move {
            schema::migrate(&d).await?;
            owners::register(&d).await
        })?;
        let heartbeat = rt.spawn(owners::heartbeat(db.clone()));
        let queue = {
            let _in = rt.enter();
            Queue::spawn(db.clone(), opts.queue_capacity)
        };
        Ok((db, queue, heartbeat))
    }

    /// This journal's owner id (what its operations record as their owner).
    pub fn owner(&self) -> &str {
        &self.db.owner
    }

    /// The server, as `user@host:port/database` (never the password).
    pub fn server(&self) -> &str {
        &self.db.server
    }

    /// The lease of this owner.
    pub fn lease(&self) -> Duration {
        self.db.lease
    }

    /// Audit records dropped because the writer task did not keep up.
    pub fn audit_dropped(&self) -> u64 {
        self.queue.dropped()
    }

    /// Every operation of a call id (one per run of it), oldest first.
    pub async fn by_call(&self, call_id: &str) -> Result<Vec<OperationRecord>, JournalError> {
        let call_id = call_id.to_owned();
        self.run(move |db| async move {
            let c = db.client().await?;
            Ok(rows::by_call(&**c, &call_id)
                .await?
                .into_iter()
                .map(|o| o.record)
                .collect())
        })
        .await
    }

    /// The most recent calls (and operations without an audit record) matching a filter,
    /// oldest first: what `toolgate journal list` shows.
    pub async fn list(
        &self,
        filter: &crate::runtime::journal::listing::Filter,
    ) -> Result<Vec<crate::runtime::journal::listing::CallSummary>, JournalError> {
        let filter = filter.clone();
        self.run(move |db| async move {
            let c = db.client().await?;
            listing::list(&db, &**c, &filter).await
        })
        .await
    }

    /// Runs a future on the journal's runtime and waits for it from the caller's.
    async fn run<T, F>(&self, f: impl FnOnce(Arc<Db>) -> F) -> Result<T, JournalError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, JournalError>> + Send + 'static,
    {
        let Some(rt) = &self.rt else {
            return Err(JournalError::Failed("the journal is closed".into()));
        };
        rt.spawn(f(self.db.clone()))
            .await
            .map_err(|e| JournalError::Failed(format!("the journal's task failed: {e}")))?
    }
}

impl Drop for PostgresJournal {
    /// Writes what is queued, and gives up this owner's lease: its operations that are still
    /// started (a call cut off by the end of the process) are orphans from now on.
    fn drop(&mut self) {
        self.heartbeat.abort();
        if let Some(rt) = self.rt.take() {
            let flushed = self.queue.flush_request();
            let db = self.db.clone();
            let (tx, rx) = std::sync::mpsc::channel();
            rt.spawn(async move {
                if let Some(f) = flushed {
                    let _ = f.await;
                }
                let _ = owners::unregister(&db).await;
                let _ = tx.send(());
            });
            let _ = rx.recv_timeout(Duration::from_secs(5));
            rt.shutdown_background();
        }
    }
}

impl Journal for PostgresJournal {
    fn start<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, ()> {
        Box::pin(async move {
            if op.effect.is_read_only() {
                return self.queue.send(Queued::Start(Box::new(op.clone()))).await;
            }
            if self.db.is_fenced() {
                return Err(self.db.expired());
            }
            let op = op.clone();
            self.run(move |db| async move {
                let mut c = db.client().await?;
                let tx = c.transaction().await.map_err(|e| db.error(&e))?;
                writes::renew(&db, &*tx).await?;
                writes::insert(&db, &*tx, &op).await?;
                tx.commit().await.map_err(|e| db.error(&e))
            })
            .await
        })
    }

    fn claim<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, Claim> {
        Box::pin(async move {
            if op.effect.is_read_only() {
                // Safe to repeat: look up what is committed, record without waiting.
                let o = op.clone();
                let earlier = self
                    .run(move |db| async move {
                        let c = db.client().await?;
                        let args = match o.key_source {
                            KeySource::Spec | KeySource::Client => None,
                            KeySource::Derived => Some(o.arguments_hash.as_str()),
                        };
                        let scope = o.key_scope();
                        rows::by_key(
                            &**c,
                            &o.tool,
                            &o.idempotency_key,
                            o.key_source,
                            args,
                            &scope,
                        )
                        .await
                    })
                    .await?;
                if let Some(earlier) = earlier
                    && claimed_by(&earlier.record, op)
                {
                    if earlier.record.state() == OperationState::Started && !earlier.live {
                        return Ok(Claim::Orphaned(Box::new(earlier.record)));
                    }
                    return Ok(Claim::Existing(Box::new(earlier.record)));
                }
                self.queue.send(Queued::Start(Box::new(op.clone()))).await?;
                return Ok(Claim::Started);
            }
            if self.db.is_fenced() {
                return Err(self.db.expired());
            }
            let op = op.clone();
            self.run(move |db| async move { writes::claim(&db, &op).await })
                .await
        })
    }

    fn attempt<'a>(&'a self, attempt: &'a AttemptRecord) -> JournalFuture<'a, ()> {
        Box::pin(async move { self.queue.send(Queued::Attempt(attempt.clone())).await })
    }

    fn finish<'a>(&'a self, finish: &'a OperationFinish) -> JournalFuture<'a, ()> {
        let side_effect = !finish.trace.effect.is_some_and(|e| e.is_read_only());
        Box::pin(async move {
            if !side_effect {
                return self
                    .queue
                    .send(Queued::Finish(Box::new(finish.clone())))
                    .await;
            }
            let f = finish.clone();
            self.run(move |db| async move {
                let c = db.client().await?;
                writes::finish(&db, &**c, &f).await
            })
            .await
        })
    }

    fn settle<'a>(&'a self, settlement: &'a Settlement) -> JournalFuture<'a, ()> {
        let s = settlement.clone();
        Box::pin(async move {
            self.run(move |db| async move { writes::settle(&db, &s).await })
                .await
        })
    }

    fn by_idempotency_key<'a>(
        &'a self,
        tool: &'a str,
        key: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let (tool, key) = (tool.to_owned(), key.to_owned());
        Box::pin(async move {
            self.run(move |db| async move {
                let c = db.client().await?;
                let spec = rows::by_key(&**c, &tool, &key, KeySource::Spec, None, "").await?;
                let found = match spec {
                    Some(o) => Some(o),
                    None => rows::by_key(&**c, &tool, &key, KeySource::Derived, None, "").await?,
                };
                Ok(found.map(|o| o.record))
            })
            .await
        })
    }

    fn operation<'a>(
        &'a self,
        operation_id: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let id = operation_id.to_owned();
        Box::pin(async move {
            self.run(move |db| async move {
                let c = db.client().await?;
                Ok(rows::by_id(&**c, &id).await?.map(|o| o.record))
            })
            .await
        })
    }

    /// Only the operations whose owner has ended (its lease expired, or it closed the
    /// journal): those of live owners are running.
    fn unfinished<'a>(&'a self) -> JournalFuture<'a, Vec<OperationRecord>> {
        Box::pin(async move {
            self.run(move |db| async move {
                let c = db.client().await?;
                Ok(rows::unfinished(&**c, true)
                    .await?
                    .into_iter()
                    .map(|o| o.record)
                    .collect())
            })
            .await
        })
    }

    fn uncertain<'a>(
        &'a self,
        tool: &'a str,
        arguments_hash: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let (tool, hash) = (tool.to_owned(), arguments_hash.to_owned());
        Box::pin(async move {
            self.run(move |db| async move {
                let c = db.client().await?;
                Ok(rows::latest_uncertain(&**c, &tool, &hash)
                    .await?
                    .filter(|o| o.live || o.record.state() != OperationState::Started)
                    .map(|o| o.record))
            })
            .await
        })
    }

    fn records_read_only(&self) -> bool {
        true
    }

    fn records_audit(&self) -> bool {
        true
    }

    fn audit(&self, entry: AuditEntry) {
        self.queue.audit(entry);
    }

    fn flush(&self) -> JournalFuture<'_, ()> {
        Box::pin(async move {
            let (tx, rx) = tokio::sync::oneshot::channel();
            self.queue.send(Queued::Flush(tx)).await?;
            rx.await
                .map_err(|_| JournalError::Failed("the journal's writer stopped".into()))?
        })
    }

    /// Every lease: the orphans of a host that died are settled within about two leases, even
    /// when no call meets them.
    fn shares_grants(&self) -> bool {
        true
    }

    fn grants<'a>(&'a self, session_id: &'a str) -> JournalFuture<'a, Vec<Grant>> {
        let session = session_id.to_owned();
        Box::pin(async move {
            self.run(move |db| async move {
                let c = db.client().await?;
                let rows = c
                    .query(
                        "SELECT grant_json::text FROM grants WHERE session_id = $1 ORDER BY seq",
                        &[&session],
                    )
                    .await
                    .map_err(|e| db.error(&e))?;
                rows.iter()
                    .map(|r| {
                        let text: String = r.get(0);
                        serde_json::from_str(&text).map_err(|e| {
                            JournalError::Failed(format!(
                                "a grant of session {session} cannot be read: {e}"
                            ))
                        })
                    })
                    .collect()
            })
            .await
        })
    }

    fn remember_grant<'a>(
        &'a self,
        session_id: &'a str,
        grant: &'a Grant,
    ) -> JournalFuture<'a, ()> {
        let session = session_id.to_owned();
        let grant = serde_json::to_string(grant);
        Box::pin(async move {
            let grant = grant.map_err(|e| JournalError::Failed(format!("a grant: {e}")))?;
            self.run(move |db| async move {
                let c = db.client().await?;
                c.execute(
                    "INSERT INTO grants (session_id, grant_json, owner) VALUES ($1, $2::text::jsonb, $3)
                     ON CONFLICT (session_id, grant_json) DO NOTHING",
                    &[&session, &grant, &db.owner],
                )
                .await
                .map_err(|e| db.error(&e))?;
                Ok(())
            })
            .await
        })
    }

    fn recovery_interval(&self) -> Option<Duration> {
        Some(self.db.lease)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_without_repeating_the_password() {
        assert!(check_url("postgres://tg:secret@db.example:5433/journal").is_ok());
        let e = check_url("mysql://tg:secret@db/journal").unwrap_err();
        assert!(!e.to_string().contains("secret"), "{e}");
        let e = check_url("postgres://tg:secret@db.example:notaport/j").unwrap_err();
        assert!(!e.to_string().contains("secret"), "{e}");
        let c = parse("postgresql://tg:secret@db.example:5433/journal").unwrap();
        assert_eq!(describe(&c), "tg@db.example:5433/journal");
    }
}
