//! Where the admission table takes its cross-process locks: the project's lock file (the
//! processes of one host, [`super::lockfile`]) or, with `journal-postgres`, advisory locks in a
//! PostgreSQL database (the hosts of a fleet, [`super::pg_locks`]).

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::admission::{ResourceClaim, WaitedBehind};
use super::lockfile::{HeldLocks, NotAcquired, ProjectLocks};

/// The backend of the cross-process locks.
#[derive(Debug)]
pub(crate) enum ResourceLocks {
    /// The project's lock file.
    File(ProjectLocks),
    /// PostgreSQL advisory locks.
    #[cfg(feature = "journal-postgres")]
    Postgres(super::pg_locks::PgLocks),
}

/// A call's cross-process locks; released when dropped.
#[derive(Debug)]
pub(crate) enum HeldResourceLocks {
    /// Held in the lock file.
    File(#[allow(dead_code)] HeldLocks),
    /// Held by a PostgreSQL session.
    #[cfg(feature = "journal-postgres")]
    Postgres(#[allow(dead_code)] Box<super::pg_locks::PgHeld>),
}

/// The locks a call took, and what it found held on the way.
#[derive(Debug)]
pub(crate) struct Taken {
    /// The locks (none when the claim needs none).
    pub(crate) held: Option<HeldResourceLocks>,
    /// The locks it waited for.
    pub(crate) waited: Vec<WaitedBehind>,
}

/// Why a call did not get its locks.
#[derive(Debug)]
pub(crate) enum NotTaken {
    /// Cancelled while waiting, with what it waited for.
    Cancelled(Vec<WaitedBehind>),
    /// The backend failed: what it is, and the failure.
    Failed {
        /// The backend, in words (`the project's lock file /…/resources.lock`).
        backend: String,
        /// The failure.
        error: String,
    },
}

impl ResourceLocks {
    /// The lock file, when the locks are in one.
    pub(crate) fn path(&self) -> Option<&Path> {
        match self {
            ResourceLocks::File(l) => Some(l.path()),
            #[cfg(feature = "journal-postgres")]
            ResourceLocks::Postgres(_) => None,
        }
    }

    /// The backend, in words.
    pub(crate) fn describe(&self) -> String {
        match self {
            ResourceLocks::File(l) => format!("the project's lock file {}", l.path().display()),
            #[cfg(feature = "journal-postgres")]
            ResourceLocks::Postgres(l) => format!(
                "the PostgreSQL resource locks (namespace {:?})",
                l.namespace()
            ),
        }
    }

    /// Takes the locks of a claim, all or nothing, waiting while another holder has one;
    /// `cancel` ends the wait.
    pub(crate) async fn acquire(
        &self,
        claim: &ResourceClaim,
        cancel: &CancellationToken,
    ) -> Result<Taken, NotTaken> {
        match self {
            ResourceLocks::File(l) => match l.acquire(claim, cancel).await {
                Ok(a) => Ok(Taken {
                    held: a.held.map(HeldResourceLocks::File),
                    waited: a.waited,
                }),
                Err(NotAcquired::Cancelled(w)) => Err(NotTaken::Cancelled(w)),
                Err(NotAcquired::Io(e)) => Err(NotTaken::Failed {
                    backend: self.describe(),
                    error: e.to_string(),
                }),
            },
            #[cfg(feature = "journal-postgres")]
            ResourceLocks::Postgres(l) => {
                use super::pg_locks::PgNotAcquired;
                match l.acquire(claim, cancel).await {
                    Ok(a) => Ok(Taken {
                        held: a.held.map(|h| HeldResourceLocks::Postgres(Box::new(h))),
                        waited: a.waited,
                    }),
                    Err(PgNotAcquired::Cancelled(w)) => Err(NotTaken::Cancelled(w)),
                    Err(PgNotAcquired::Failed(error)) => Err(NotTaken::Failed {
                        backend: self.describe(),
                        error,
                    }),
                }
            }
        }
    }
}
