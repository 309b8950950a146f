//! Dropping every capability of the tool process (between fork and exec), so that nothing it
//! runs can undo the view: no `CAP_SYS_ADMIN` (mounts), `CAP_DAC_READ_SEARCH`
//! (`open_by_handle_at` opens files around the mounts), `CAP_MKNOD`, `CAP_SYS_PTRACE`, … — in
//! the user namespace the shim made, or in the host's when toolgate runs as root.
//!
//! The bounding set is emptied first (so no exec can regain one, a set-user-ID-root program or
//! root's own exec included), then the ambient set, then the effective, permitted and
//! inheritable sets; `no_new_privs` is set. A root tool is then uid 0 without privilege: its
//! file access is the owner's, on a view whose system folders are read-only.

use std::io;

use rustix::thread::{
    CapabilitySet, CapabilitySets, clear_ambient_capability_set,
    remove_capability_from_bounding_set, set_capabilities, set_no_new_privs,
};

/// The highest capability number this kernel knows (`/proc/sys/kernel/cap_last_cap`, or the
/// highest any kernel has had when unreadable).
pub(super) fn last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(63)
        .min(63)
}

/// Drops every capability of the calling thread for good. `last` comes from [`last_cap`],
/// read before the view hides `/proc`.
pub(super) fn drop_all(last: u32) -> io::Result<()> {
    for cap in 0..=last {
        match remove_capability_from_bounding_set(CapabilitySet::from_bits_retain(1 << cap)) {
            // EINVAL: a number this kernel does not know.
            Ok(()) | Err(rustix::io::Errno::INVAL) => {}
            Err(e) => return Err(e.into()),
        }
    }
    clear_ambient_capability_set()?;
    set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    )?;
    set_no_new_privs(true)?;
    Ok(())
}
