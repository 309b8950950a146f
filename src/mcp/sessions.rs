//! Who owns each MCP session of `serve --http`, and how many each principal may hold.
//!
//! A session belongs to the principal whose `initialize` made it (MCP security best practices:
//! a session id is not authentication). Every later request naming the session — any method,
//! the GET event stream, DELETE — from another principal, or from nobody, is answered exactly as
//! a session that does not exist (404), so a session id learnt from a log or a shared proxy
//! neither reads, ends nor takes another principal's session.
//!
//! Live sessions are capped per principal and overall: an `initialize` past the caps is refused
//! before a session is made. Sessions end when their client sends DELETE, or after
//! `serve.limits.session_idle` without a request (rmcp's session worker); the table learns
//! which are gone from the session manager whenever it counts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// What the owner table says of a request naming a session.
#[derive(Debug, PartialEq, Eq)]
pub enum Ownership {
    /// The session is the caller's (or unknown here: rmcp answers for it).
    Caller,
    /// The session is another principal's.
    Foreign {
        /// The owner's id (empty when nobody authenticated).
        owner: String,
    },
}

/// Why a new session is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Full {
    /// The caller holds `serve.limits.sessions_per_principal` sessions already (429).
    Principal(u32),
    /// The server holds `serve.limits.sessions` sessions already (503).
    Server(u32),
}

/// The owners of the live sessions, and the caps on them.
pub struct SessionOwners {
    manager: Arc<LocalSessionManager>,
    per_principal: u32,
    overall: u32,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    /// Session id → owner's principal id (`""` without authentication).
    owners: HashMap<String, String>,
    /// Sessions being made (`initialize` in flight), by principal.
    pending: HashMap<String, u32>,
}

impl Table {
    fn held_by(&self, principal: &str) -> u32 {
        let live = self.owners.values().filter(|o| *o == principal).count();
        u32::try_from(live)
            .unwrap_or(u32::MAX)
            .saturating_add(self.pending.get(principal).copied().unwrap_or(0))
    }

    fn total(&self) -> u32 {
        u32::try_from(self.owners.len())
            .unwrap_or(u32::MAX)
            .saturating_add(self.pending.values().sum())
    }
}

/// A place for one session being made; dropped without [`Reservation::bind`], it is freed.
pub struct Reservation {
    owners: Arc<SessionOwners>,
    principal: String,
}

impl Reservation {
    /// The session `initialize` made is the reserving principal's.
    pub fn bind(self, session_id: &str) {
        let mut t = self.owners.lock();
        t.owners
            .insert(session_id.to_owned(), self.principal.clone());
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut t = self.owners.lock();
        if let Some(n) = t.pending.get_mut(&self.principal) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                t.pending.remove(&self.principal);
            }
        }
    }
}

impl SessionOwners {
    /// An empty table over rmcp's session manager; `per_principal` applies only to
    /// authenticated principals (without `serve.auth` everyone is the same nobody).
    pub fn new(manager: Arc<LocalSessionManager>, per_principal: u32, overall: u32) -> Self {
        SessionOwners {
            manager,
            per_principal,
            overall,
            table: Mutex::new(Table::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        match self.table.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Whose the session named is, as seen by `principal` (`""`: nobody authenticated).
    pub fn ownership(&self, session_id: &str, principal: &str) -> Ownership {
        match self.lock().owners.get(session_id) {
            Some(owner) if owner != principal => Ownership::Foreign {
                owner: owner.clone(),
            },
            _ => Ownership::Caller,
        }
    }

    /// Forgets a session its owner ended.
    pub fn forget(&self, session_id: &str) {
        self.lock().owners.remove(session_id);
    }

    /// Live sessions (those being made included).
    pub fn live(&self) -> u32 {
        self.lock().total()
    }

    /// A place for one more session of `principal`, unless a cap is reached. Sessions the
    /// manager no longer holds (ended by idleness) are forgotten first.
    pub async fn reserve(
        self: &Arc<Self>,
        principal: &str,
        authenticated: bool,
    ) -> Result<Reservation, Full> {
        {
            let live = self.manager.sessions.read().await;
            let mut t = self.lock();
            t.owners.retain(|id, _| live.contains_key(id.as_str()));
        }
        let mut t = self.lock();
        if authenticated && t.held_by(principal) >= self.per_principal {
            return Err(Full::Principal(self.per_principal));
        }
        if t.total() >= self.overall {
            return Err(Full::Server(self.overall));
        }
        *t.pending.entry(principal.to_owned()).or_insert(0) += 1;
        Ok(Reservation {
            owners: self.clone(),
            principal: principal.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn caps_count_pending_and_bound_sessions_and_free_dropped_places() {
        let owners = Arc::new(SessionOwners::new(
            Arc::new(LocalSessionManager::default()),
            2,
            3,
        ));
        let a1 = owners.reserve("alice", true).await.unwrap();
        let _a2 = owners.reserve("alice", true).await.unwrap();
        assert_eq!(
            owners.reserve("alice", true).await.err(),
            Some(Full::Principal(2))
        );
        let _b1 = owners.reserve("bob", true).await.unwrap();
        assert_eq!(
            owners.reserve("carol", true).await.err(),
            Some(Full::Server(3))
        );
        drop(a1);
        assert!(owners.reserve("carol", true).await.is_ok());
        // Without authentication only the overall cap applies.
        let owners = Arc::new(SessionOwners::new(
            Arc::new(LocalSessionManager::default()),
            1,
            5,
        ));
        let _n1 = owners.reserve("", false).await.unwrap();
        assert!(owners.reserve("", false).await.is_ok());
    }

    #[test]
    fn a_session_is_its_owners() {
        let owners = Arc::new(SessionOwners::new(
            Arc::new(LocalSessionManager::default()),
            2,
            3,
        ));
        owners.lock().owners.insert("s1".into(), "alice@idp".into());
        assert_eq!(owners.ownership("s1", "alice@idp"), Ownership::Caller);
        assert_eq!(
            owners.ownership("s1", "bob@idp"),
            Ownership::Foreign {
                owner: "alice@idp".into()
            }
        );
        assert_eq!(
            owners.ownership("s1", ""),
            Ownership::Foreign {
                owner: "alice@idp".into()
            }
        );
        assert_eq!(owners.ownership("other", "bob@idp"), Ownership::Caller);
        owners.forget("s1");
        assert_eq!(owners.ownership("s1", "bob@idp"), Ownership::Caller);
    }
}
