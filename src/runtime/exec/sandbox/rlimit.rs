//! rlimits of the tool process, set in the child between fork and exec: CPU seconds
//! (SIGXCPU), address space, file size (SIGXFSZ) and open files. RLIMIT_NPROC is not used: it
//! counts every process of the user and does not bind root; the process cap is the cgroup's.
//!
//! How a breach shows, and so how [`exceeded`] and [`refused`] tell it apart from an ordinary
//! failure: CPU time and file size end the process with their own signal; the address space and
//! open files make a system call fail (ENOMEM, EMFILE), which the tool reports in its own words.

use super::Rlimits;

/// Signals the kernel sends when a limit is exceeded, and which limit each means.
pub(crate) const SIGXCPU: i32 = 24;
/// See [`SIGXCPU`].
pub(crate) const SIGXFSZ: i32 = 25;

/// How a failed allocation reads (Python, C's strerror, Rust, C++, Go and Node).
const OUT_OF_MEMORY: &[&str] = &[
    "MemoryError",
    "Cannot allocate memory",
    "memory allocation of",
    "std::bad_alloc",
    "out of memory",
];
/// How EMFILE reads.
const TOO_MANY_FILES: &[&str] = &["Too many open files", "EMFILE"];

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

/// The first output line where the tool reports a system call refused by the address-space or
/// open-files limit, with that limit (a heuristic on the tool's message, like Landlock's).
pub(crate) fn refused<'a>(limits: &Rlimits, text: &'a str) -> Option<(String, &'a str)> {
    text.lines().find_map(|l| {
        let limit = match (limits.address_space, limits.open_files) {
            (Some(b), _) if OUT_OF_MEMORY.iter().any(|m| l.contains(m)) => {
                format!("the memory (address space) limit ({})", bytes(b))
            }
            (_, Some(n)) if TOO_MANY_FILES.iter().any(|m| l.contains(m)) => {
                format!("the open files limit ({n})")
            }
            _ => return None,
        };
        Some((limit, l.trim()))
    })
}

/// Bytes as a profile writes them when they are a whole number of MiB or GiB.
fn bytes(b: u64) -> String {
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    match b {
        _ if b >= GIB && b.is_multiple_of(GIB) => format!("{} GiB", b / GIB),
        _ if b >= MIB && b.is_multiple_of(MIB) => format!("{} MiB", b / MIB),
        _ => format!("{b} bytes"),
    }
}

/// The soft and hard value of one limit, given the hard limit the shim inherited.
///
/// The CPU limit's hard value is one second above the soft one: at the soft limit the kernel
/// sends SIGXCPU, which names the breach; only a tool that catches it and keeps spinning meets
/// SIGKILL at the hard one. (With soft = hard the kernel sends SIGKILL at once, which cannot be
/// told apart from any other kill.) Every other limit is soft = hard, so the tool cannot raise
/// it. A value above the inherited hard limit is clamped to it: the tool is then held tighter
/// than asked, and `setrlimit` does not fail for lack of CAP_SYS_RESOURCE.
fn soft_hard(cpu: bool, value: u64, inherited_hard: u64) -> (u64, u64) {
    let hard = if cpu { value.saturating_add(1) } else { value }.min(inherited_hard);
    (value.min(hard), hard)
}

/// Sets the limits on the calling process.
#[cfg(unix)]
pub(super) fn apply(limits: &Rlimits) -> nix::Result<()> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let pairs = [
        (Resource::RLIMIT_CPU, limits.cpu_seconds),
        (Resource::RLIMIT_AS, limits.address_space),
        (Resource::RLIMIT_FSIZE, limits.file_size),
        (Resource::RLIMIT_NOFILE, limits.open_files),
    ];
    for (resource, value) in pairs {
        if let Some(v) = value {
            let (_, inherited) = getrlimit(resource)?;
            let (soft, hard) = soft_hard(resource == Resource::RLIMIT_CPU, v, inherited);
            setrlimit(resource, soft, hard)?;
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

    #[test]
    fn cpu_gets_a_second_between_sigxcpu_and_sigkill() {
        let inf = u64::MAX;
        assert_eq!(soft_hard(true, 5, inf), (5, 6));
        assert_eq!(soft_hard(false, 256, inf), (256, 256));
        // Clamped to what the shim itself may set.
        assert_eq!(soft_hard(true, 5, 3), (3, 3));
        assert_eq!(soft_hard(false, 4096, 1024), (1024, 1024));
        assert_eq!(soft_hard(true, u64::MAX, inf), (u64::MAX, u64::MAX));
    }

    #[test]
    fn finds_refusals_of_the_memory_and_open_files_limits() {
        let l = Rlimits {
            address_space: Some(1 << 30),
            open_files: Some(256),
            ..Rlimits::default()
        };
        let py = "Traceback (most recent call last):\n  File \"<string>\", line 1\nMemoryError\n";
        assert_eq!(
            refused(&l, py),
            Some((
                "the memory (address space) limit (1 GiB)".to_owned(),
                "MemoryError"
            ))
        );
        let emfile = "OSError: [Errno 24] Too many open files: '/dev/null'";
        assert_eq!(
            refused(&l, emfile),
            Some(("the open files limit (256)".to_owned(), emfile))
        );
        // Only while that limit is set.
        assert_eq!(refused(&Rlimits::default(), py), None);
        assert_eq!(refused(&l, "error: no such file\n"), None);
        assert_eq!(bytes(3 << 20), "3 MiB");
        assert_eq!(bytes(1000), "1000 bytes");
    }
}
