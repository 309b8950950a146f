//! The seccomp filter of a tool process, compiled in the shim before it forks:
//!
//! - no network: `socket` and `socketpair` for any family but `AF_UNIX` fail with EPERM, and
//!   so does `io_uring_setup` (io_uring can open sockets without `socket(2)`). Local IPC over
//!   Unix sockets keeps working; a tool that tries to reach the network sees "Operation not
//!   permitted".
//! - no mounts: the mount family (`mount`, `umount2`, `pivot_root`, `move_mount`, `open_tree`,
//!   `fsopen`, `fsmount`, `fspick`, `fsconfig`, `mount_setattr`) and `open_by_handle_at` (which
//!   opens files by handle, around the mounts) fail with EPERM, so the masks of the view stay.
//!
//! Everything else is allowed.

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The system calls that change mounts or open files around them.
const MOUNT_FAMILY: &[i64] = &[
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_fsconfig,
    libc::SYS_mount_setattr,
    libc::SYS_open_by_handle_at,
];

/// Compiles the filter for this architecture (in the shim, before it forks); `None` when
/// there is nothing to refuse.
pub(super) fn program(
    deny_network: bool,
    deny_mount: bool,
) -> Result<Option<BpfProgram>, seccompiler::Error> {
    if !deny_network && !deny_mount {
        return Ok(None);
    }
    let not_unix = || -> Result<Vec<SeccompRule>, seccompiler::Error> {
        Ok(vec![SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])?])
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if deny_network {
        rules.insert(libc::SYS_socket, not_unix()?);
        rules.insert(libc::SYS_socketpair, not_unix()?);
        // An empty rule list matches the syscall unconditionally.
        rules.insert(libc::SYS_io_uring_setup, Vec::new());
    }
    if deny_mount {
        for nr in MOUNT_FAMILY {
            rules.insert(*nr, Vec::new());
        }
    }
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    filter
        .try_into()
        .map(Some)
        .map_err(seccompiler::Error::Backend)
}

/// Installs the filter on the calling thread (the child, between fork and exec).
pub(super) fn apply(program: &BpfProgram) -> Result<(), seccompiler::Error> {
    seccompiler::apply_filter(program)
}
