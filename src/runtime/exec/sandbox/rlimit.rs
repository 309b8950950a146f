//! rlimits of the tool process, set in the child between fork and exec: CPU seconds
//! (SIGXCPU), address space, file size (SIGXFSZ) and open files. RLIMIT_NPROC is not used: it
//! counts every process of the user and does not bind root; the process cap is the cgroup's.

use super::Rlimits;

/// Signals the kernel sends when a limit is exceeded, and which limit each means.
pub(crate) const SIGXCPU: i32 = 24;
/// See [`SIGXCPU`].
pub(crate) const SIGXFSZ: i32 = 25;

/// The limit a terminating signal (or a shell's `128 + signal` exit code) points at.
pub(crate) fn exceeded(limits: &Rlimits, signal: i32) -> Option<String> {
    match signal {
        SIGXCPU => limits
            .cpu_seconds
            .map(|s| format!("the CPU time limit ({s} s)")),
        SIGXFSZ => limits
            .file_size
            .map(|b| format!("the file size limit ({b} bytes)")),
        _ => None,
    }
}

/// Sets the limits on the calling process (soft = hard, so the tool cannot raise them).
#[cfg(unix)]
pub(super) fn apply(limits: &Rlimits) -> nix::Result<()> {
    use nix::sys::resource::{Resource, setrlimit};
    let pairs = [
        (Resource::RLIMIT_CPU, limits.cpu_seconds),
        (Resource::RLIMIT_AS, limits.address_space),
        (Resource::RLIMIT_FSIZE, limits.file_size),
        (Resource::RLIMIT_NOFILE, limits.open_files),
    ];
    for (resource, value) in pairs {
        if let Some(v) = value {
            setrlimit(resource, v, v)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_exceeded_limit() {
        let l = Rlimits {
            cpu_seconds: Some(2),
            file_size: Some(1024),
            ..Rlimits::default()
        };
        assert_eq!(
            exceeded(&l, SIGXCPU).as_deref(),
            Some("the CPU time limit (2 s)")
        );
        assert_eq!(
            exceeded(&l, SIGXFSZ).as_deref(),
            Some("the file size limit (1024 bytes)")
        );
        assert_eq!(exceeded(&l, 9), None);
        assert_eq!(exceeded(&Rlimits::default(), SIGXFSZ), None);
    }
}
