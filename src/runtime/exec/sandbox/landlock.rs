//! Landlock: the tool may read beneath the read roots and read and write beneath the writable
//! roots; every other file system access is refused with EACCES.
//!
//! The ruleset is built in the shim before it forks (opening each root as an `O_PATH` fd);
//! only `restrict_self` runs in the child between fork and exec.

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, LandlockStatus, RestrictSelf,
    RestrictionStatus, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus,
    path_beneath_rules,
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

/// The ruleset for a plan's roots, ready for `restrict_self` in the child.
pub(super) fn ruleset(
    read: &[PathBuf],
    write: &[PathBuf],
) -> Result<RulesetCreated, landlock::RulesetError> {
    Ruleset::default()
        // An access right this kernel cannot handle is dropped (and reported as partial
        // enforcement) rather than refusing the whole ruleset.
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TARGET_ABI))?
        .create()?
        .add_rules(path_beneath_rules(read, AccessFs::from_read(TARGET_ABI)))?
        .add_rules(path_beneath_rules(write, AccessFs::from_all(TARGET_ABI)))
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
