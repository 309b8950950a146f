//! The no-network seccomp filter: `socket` and `socketpair` for any family but `AF_UNIX` fail
//! with EPERM, and so does `io_uring_setup` (io_uring can open sockets without `socket(2)`).
//! Everything else is allowed. Local IPC over Unix sockets keeps working; a tool that tries
//! to reach the network sees "Operation not permitted".

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Compiles the filter for this architecture (in the shim, before it forks).
pub(super) fn no_network() -> Result<BpfProgram, seccompiler::Error> {
    let not_unix = || -> Result<Vec<SeccompRule>, seccompiler::Error> {
        Ok(vec![SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])?])
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_socket, not_unix()?);
    rules.insert(libc::SYS_socketpair, not_unix()?);
    // An empty rule list matches the syscall unconditionally.
    rules.insert(libc::SYS_io_uring_setup, Vec::new());
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    filter.try_into().map_err(seccompiler::Error::Backend)
}

/// Installs the filter on the calling thread (the child, between fork and exec).
pub(super) fn apply(program: &BpfProgram) -> Result<(), seccompiler::Error> {
    seccompiler::apply_filter(program)
}
