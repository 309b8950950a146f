//! Owners with leases: who writes the journal, and until when they count as alive.
//!
//! Each open journal is a row of `owners` with `lease_expires_at`, always computed by the
//! server (`now() + lease`), so the hosts' clocks never matter. A heartbeat renews it every
//! third of the lease, and only while it has not expired: an owner whose lease has run out has
//! ended for good (others may already have settled its operations), and it stops starting
//! operations ([`super::Db::fence`]).

use std::sync::Arc;

use super::Db;
use super::writes::renew;
use crate::runtime::journal::JournalError;

/// This host's name, for messages (`running on HOST`).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown host".into())
}

/// Records this owner with a fresh lease, and forgets ended owners none of whose operations
/// wait to be settled.
pub(crate) async fn register(db: &Db) -> Result<(), JournalError> {
    let c = db.client().await?;
    c.execute(
        "DELETE FROM owners w WHERE w.lease_expires_at <= now() AND NOT EXISTS
            (SELECT 1 FROM operations o WHERE o.owner = w.owner_id AND o.state = 'started')",
        &[],
    )
    .await
    .map_err(|e| db.error(&e))?;
    c.execute(
        "INSERT INTO owners (owner_id, host, pid, toolgate, lease_expires_at)
         VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))",
        &[
            &db.owner,
            &host_name(),
            &i32::try_from(std::process::id()).unwrap_or(i32::MAX),
            &env!("CARGO_PKG_VERSION"),
            &db.lease.as_secs_f64(),
        ],
    )
    .await
    .map_err(|e| db.error(&e))?;
    Ok(())
}

/// Gives up this owner's lease (the journal is closing): ended from now on.
pub(crate) async fn unregister(db: &Db) -> Result<(), JournalError> {
    let c = db.client().await?;
    c.execute("DELETE FROM owners WHERE owner_id = $1", &[&db.owner])
        .await
        .map_err(|e| db.error(&e))?;
    Ok(())
}

/// Renews the lease every third of it until it is found expired. A failed renewal (the server
/// unreachable) is retried at the next beat: the lease is lost only if the server's clock
/// passes it first.
pub(crate) async fn heartbeat(db: Arc<Db>) {
    let every = db.lease / 3;
    loop {
        tokio::time::sleep(every).await;
        let r = match db.client().await {
            Ok(c) => renew(&db, &**c).await,
            Err(e) => Err(e),
        };
        if matches!(r, Err(JournalError::LeaseExpired { .. })) {
            return;
        }
    }
}
