//! What this kernel offers the sandbox, read once per process: the Landlock ABI, seccomp
//! filters, a writable cgroup v2 hierarchy (with `cgroup.kill`), the `pids` controller, and
//! mount and PID namespaces.
//!
//! Reads `/proc/self/{status,mountinfo,cgroup}` and makes (then removes) one empty probe cgroup
//! per hierarchy to learn whether it is writable; the Landlock query is the version call of
//! `landlock_create_ruleset`, which restricts nothing. Namespaces are tried for real: a forked
//! child unshares them (in a user namespace unless this process may mount) and mounts a tmpfs
//! in its private mount namespace, then exits.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Serialize;

/// The kernel's sandbox features.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelFeatures {
    /// The Landlock ABI version (`None`: not built in or not enabled).
    pub landlock_abi: Option<u32>,
    /// Whether seccomp filters are available.
    pub seccomp: bool,
    /// Whether a process can become a child subreaper (Linux).
    pub subreaper: bool,
    /// A writable cgroup v2 hierarchy.
    pub cgroup: Option<CgroupSupport>,
    /// Where a process cap can be set.
    pub pids: Option<PidsController>,
    /// Mount namespaces, and what comes with them (`None`: the kernel refuses them).
    pub namespaces: Option<NamespaceSupport>,
}

/// Private mount namespaces work (the view, the masks).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NamespaceSupport {
    /// PID namespaces work too.
    pub pid: bool,
    /// The shim needs a user namespace to mount: toolgate is not root with `CAP_SYS_ADMIN`.
    pub user_namespace: bool,
}

/// A writable cgroup v2 hierarchy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CgroupSupport {
    /// Our own cgroup in it; per-execution leaves are made beneath.
    pub v2_parent: PathBuf,
    /// Whether leaves have `cgroup.kill` (Linux ≥ 5.14).
    pub kill: bool,
    /// The controllers available to leaves (`cgroup.subtree_control` of the parent).
    pub controllers: Vec<String>,
}

/// Where the `pids` controller is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PidsController {
    /// Delegated to the v2 leaves.
    V2,
    /// A writable v1 `pids` hierarchy: our own cgroup in it.
    V1(PathBuf),
}

/// The features of this kernel (probed on first use).
pub fn probe() -> &'static KernelFeatures {
    static FEATURES: OnceLock<KernelFeatures> = OnceLock::new();
    FEATURES.get_or_init(probe_now)
}

#[cfg(not(target_os = "linux"))]
fn probe_now() -> KernelFeatures {
    KernelFeatures::default()
}

#[cfg(target_os = "linux")]
fn probe_now() -> KernelFeatures {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let cgroup = linux::cgroup_v2(&mounts, &own);
    let pids = match &cgroup {
        Some(c) if c.controllers.iter().any(|k| k == "pids") => Some(PidsController::V2),
        _ => linux::pids_v1(&mounts, &own).map(PidsController::V1),
    };
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let user_namespace = !linux::can_mount(&status);
    let namespaces =
        super::child::namespaces_work(user_namespace, false).then(|| NamespaceSupport {
            pid: super::child::namespaces_work(user_namespace, true),
            user_namespace,
        });
    KernelFeatures {
        landlock_abi: super::landlock::abi(),
        seccomp: status.lines().any(|l| l.starts_with("Seccomp_filters:")),
        subreaper: true,
        cgroup,
        pids,
        namespaces,
    }
}

/// One line of /proc/self/mountinfo: the mount point, file system type and super options.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn mounts_of<'a>(mountinfo: &'a str, fstype: &'a str) -> impl Iterator<Item = (&'a str, &'a str)> {
    mountinfo.lines().filter_map(move |l| {
        let (left, right) = l.split_once(" - ")?;
        let mount_point = left.split(' ').nth(4)?;
        let mut r = right.split(' ');
        (r.next()? == fstype).then_some(())?;
        let options = r.nth(1).unwrap_or("");
        Some((mount_point, options))
    })
}

/// Our cgroup path in a hierarchy from /proc/self/cgroup (`0::/x` for v2, `N:pids:/x` for v1).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn own_path<'a>(cgroup: &'a str, controller: &str) -> Option<&'a str> {
    cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        let hit = if controller.is_empty() {
            ctrls.is_empty()
        } else {
            ctrls.split(',').any(|c| c == controller)
        };
        hit.then_some(path)
    })
}

/// `mount` joined with an absolute cgroup path.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn under(mount: &str, path: &str) -> PathBuf {
    let rel = path.trim_start_matches('/');
    if rel.is_empty() {
        PathBuf::from(mount)
    } else {
        PathBuf::from(mount).join(rel)
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::{Path, PathBuf};

    use super::{CgroupSupport, mounts_of, own_path, under};

    /// Makes and removes an empty child to learn whether `parent` is writable; returns the
    /// names of the files the child had.
    fn try_child(parent: &Path) -> Option<Vec<String>> {
        let probe = parent.join(format!("toolgate-probe-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir(&probe).ok()?;
        let files = std::fs::read_dir(&probe)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        // An empty cgroup is removed with rmdir; if that fails we leave one empty folder.
        let _ = std::fs::remove_dir(&probe);
        Some(files)
    }

    pub(super) fn cgroup_v2(mountinfo: &str, cgroup: &str) -> Option<CgroupSupport> {
        let path = own_path(cgroup, "")?;
        mounts_of(mountinfo, "cgroup2").find_map(|(mount, _)| {
            let parent = under(mount, path);
            let files = try_child(&parent)?;
            let controllers = std::fs::read_to_string(parent.join("cgroup.subtree_control"))
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            Some(CgroupSupport {
                v2_parent: parent,
                kill: files.iter().any(|f| f == "cgroup.kill"),
                controllers,
            })
        })
    }

    /// Whether this process may mount without a user namespace: `CAP_SYS_ADMIN` (bit 21) in
    /// its effective set.
    pub(super) fn can_mount(status: &str) -> bool {
        status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .is_some_and(|caps| caps & (1 << 21) != 0)
    }

    pub(super) fn pids_v1(mountinfo: &str, cgroup: &str) -> Option<PathBuf> {
        let path = own_path(cgroup, "pids")?;
        mounts_of(mountinfo, "cgroup").find_map(|(mount, options)| {
            options.split(',').any(|o| o == "pids").then_some(())?;
            let parent = under(mount, path);
            let files = try_child(&parent)?;
            files.iter().any(|f| f == "pids.max").then_some(parent)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const CGROUP: &str = "8:pids:/a\n4:memory:/m\n0::/b/c\n";

    #[test]
    fn reads_mounts_and_own_paths() {
        assert_eq!(
            mounts_of(MOUNTINFO, "cgroup2").collect::<Vec<_>>(),
            vec![("/sys/fs/cgroup/unified", "rw")]
        );
        assert_eq!(
            mounts_of(MOUNTINFO, "cgroup").collect::<Vec<_>>(),
            vec![("/sys/fs/cgroup/pids", "rw,pids")]
        );
        assert_eq!(own_path(CGROUP, ""), Some("/b/c"));
        assert_eq!(own_path(CGROUP, "pids"), Some("/a"));
        assert_eq!(own_path(CGROUP, "cpu"), None);
        assert_eq!(
            under("/sys/fs/cgroup/unified", "/b/c"),
            PathBuf::from("/sys/fs/cgroup/unified/b/c")
        );
        assert_eq!(
            under("/sys/fs/cgroup", "/"),
            PathBuf::from("/sys/fs/cgroup")
        );
    }
}
