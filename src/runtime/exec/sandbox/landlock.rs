//! Landlock: the tool may read beneath the read roots and read and write beneath the writable
//! roots; every other file system access is refused with EACCES. On ABI 6 and later, scopes
//! also keep its signals, and its connections to abstract Unix sockets, inside its own
//! sandbox (EPERM otherwise).
//!
//! The ruleset is built in the shim before it forks (opening each root as an `O_PATH` fd);
//! only `restrict_self` runs in the child between fork and exec.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, LandlockStatus, RestrictSelf,
    RestrictionStatus, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus,
    Scope, path_beneath_rules,
};

/// The ABI toolgate's rules are written for: file access rights through Linux 6.10 (truncate,
/// refer, device ioctls). Newer kernels enforce it fully; older ones partially (reported).
const TARGET_ABI: ABI = ABI::V5;

/// The running kernel's Landlock ABI, without restricting anything.
pub(super) fn abi() -> Option<u32> {
    // With no flags, `apply` only queries the version (and we opt out of no_new_privs).
    match RestrictSelf::default().no_new_privs(false).apply() {
        Ok(status) => match status.landlock {
            LandlockStatus::Available { effective_abi, .. } => Some(effective_abi as u32),
            LandlockStatus::NotEnabled | LandlockStatus::NotImplemented => None,
        },
        Err(_) => None,
    }
}

/// What a ruleset restricts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Restrictions<'a> {
    /// The read-only and the writable roots (`None`: file access is not restricted).
    pub(super) roots: Option<(&'a [PathBuf], &'a [PathBuf])>,
    /// Signals only to processes inside the sandbox.
    pub(super) signals: bool,
    /// Connections only to abstract Unix sockets made inside the sandbox.
    pub(super) abstract_sockets: bool,
}

impl Restrictions<'_> {
    /// Whether there is anything to restrict.
    pub(super) fn any(&self) -> bool {
        self.roots.is_some() || self.signals || self.abstract_sockets
    }

    fn scopes(&self) -> BitFlags<Scope> {
        let mut s = BitFlags::empty();
        if self.signals {
            s |= Scope::Signal;
        }
        if self.abstract_sockets {
            s |= Scope::AbstractUnixSocket;
        }
        s
    }
}

/// The ruleset, ready for `restrict_self` in the child. Scopes are asked for only when the
/// kernel has them (the plan checked the probe; the caller checks [`abi`] again), so a scope
/// is never silently dropped.
pub(super) fn ruleset(r: &Restrictions<'_>) -> Result<RulesetCreated, landlock::RulesetError> {
    // An access right this kernel cannot handle is dropped (and reported as partial
    // enforcement) rather than refusing the whole ruleset.
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort);
    if r.roots.is_some() {
        ruleset = ruleset.handle_access(AccessFs::from_all(TARGET_ABI))?;
    }
    let scopes = r.scopes();
    if !scopes.is_empty() {
        ruleset = ruleset.scope(scopes)?;
    }
    let mut created = ruleset.create()?;
    if let Some((read, write)) = r.roots {
        created = created
            .add_rules(path_beneath_rules(read, AccessFs::from_read(TARGET_ABI)))?
            .add_rules(path_beneath_rules(write, AccessFs::from_all(TARGET_ABI)))?;
    }
    Ok(created)
}

/// How much of a ruleset the kernel enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Enforcement {
    /// Every handled access right.
    Full,
    /// Some rights are unknown to this kernel (an older ABI).
    Partial,
    /// Nothing.
    None,
}

impl Enforcement {
    /// As reported.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Enforcement::Full => "fully enforced",
            Enforcement::Partial => "partially enforced",
            Enforcement::None => "not enforced",
        }
    }
}

/// Restricts the calling thread (the child, between fork and exec).
pub(super) fn restrict(ruleset: RulesetCreated) -> Result<Enforcement, landlock::RulesetError> {
    let status: RestrictionStatus = ruleset.restrict_self()?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => Enforcement::Full,
        RulesetStatus::PartiallyEnforced => Enforcement::Partial,
        // Non-exhaustive: anything unknown counts as not enforced, which fails closed.
        _ => Enforcement::None,
    })
}
