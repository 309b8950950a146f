//! Per-execution cgroups, on the parent's side: made before the shim starts (the shim joins
//! them), killed and removed after it ends, so no cgroup outlives its execution — even when the
//! shim itself was killed.
//!
//! The v2 leaf gives `cgroup.kill` (and the process cap when `pids` is delegated); a v1 `pids`
//! leaf gives the process cap on hybrid hosts whose v2 hierarchy has no `pids` controller.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::CgroupPlan;

/// How long removal waits for killed processes to leave the cgroup.
const EMPTY_WAIT_MS: u64 = 2_000;

/// The cgroups of one execution; removed on drop.
#[derive(Debug, Default)]
pub struct ExecCgroups {
    v2: Option<PathBuf>,
    v1_pids: Option<PathBuf>,
}

/// Why a cgroup could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cgroup `{path}`: {source}")]
pub struct CgroupError {
    /// The folder.
    pub path: PathBuf,
    /// The file system error.
    pub source: io::Error,
}

fn leaf(parent: &Path) -> PathBuf {
    parent.join(format!("toolgate-{}", uuid::Uuid::now_v7().simple()))
}

fn write(path: &Path, text: &str) -> Result<(), CgroupError> {
    std::fs::write(path, text).map_err(|source| CgroupError {
        path: path.to_path_buf(),
        source,
    })
}

impl ExecCgroups {
    /// Makes the leaves a plan asks for. A v2 leaf that cannot be made is skipped (the shim's
    /// subreaper still contains the tree); a process cap that cannot be set is an error.
    pub fn create(plan: &CgroupPlan) -> Result<ExecCgroups, CgroupError> {
        let mut made = ExecCgroups::default();
        if let Some(parent) = &plan.v2_parent {
            let dir = leaf(parent);
            if std::fs::create_dir(&dir).is_ok() {
                made.v2 = Some(dir);
            }
        }
        if let Some(max) = plan.pids_max {
            let dir = match (&plan.v1_pids_parent, &made.v2) {
                (Some(parent), _) => {
                    let dir = leaf(parent);
                    std::fs::create_dir(&dir).map_err(|source| CgroupError {
                        path: dir.clone(),
                        source,
                    })?;
                    made.v1_pids = Some(dir.clone());
                    dir
                }
                (None, Some(v2)) => v2.clone(),
                (None, None) => {
                    let path = plan.v2_parent.clone().unwrap_or_default();
                    return Err(CgroupError {
                        path,
                        source: io::Error::other("no cgroup for the process cap"),
                    });
                }
            };
            write(&dir.join("pids.max"), &max.to_string())?;
        }
        Ok(made)
    }

    /// The v2 leaf the shim joins.
    pub fn v2(&self) -> Option<&Path> {
        self.v2.as_deref()
    }

    /// The v1 pids leaf the shim joins.
    pub fn v1_pids(&self) -> Option<&Path> {
        self.v1_pids.as_deref()
    }

    /// How many forks the process cap refused (`max` in `pids.events`).
    pub fn forks_refused(&self) -> u64 {
        let dir = self.v1_pids.as_ref().or(self.v2.as_ref());
        dir.and_then(|d| std::fs::read_to_string(d.join("pids.events")).ok())
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("max ").map(|n| n.trim().parse().ok()))
            })
            .flatten()
            .unwrap_or(0)
    }

    /// Kills every process in the cgroups.
    pub fn kill(&self) {
        if let Some(v2) = &self.v2 {
            // Errors mean the leaf is gone or the kernel lacks cgroup.kill; the v1 sweep and
            // the shim's own sweep still run.
            let _ = std::fs::write(v2.join("cgroup.kill"), "1");
        }
        for dir in self.v1_pids.iter().chain(self.v2.iter()) {
            kill_members(dir);
        }
    }

    /// Whether no process is left in them.
    fn is_empty(&self) -> bool {
        self.v2.iter().chain(self.v1_pids.iter()).all(|d| {
            std::fs::read_to_string(d.join("cgroup.procs")).map_or(true, |t| t.trim().is_empty())
        })
    }

    /// Removes the cgroups if no process is left in them, without waiting; false (and nothing
    /// done) when some are.
    pub fn remove_if_empty(&mut self) -> bool {
        if !self.is_empty() {
            return false;
        }
        self.remove();
        true
    }

    /// Kills what is left, waits until the cgroups are empty, removes them.
    pub fn remove(&mut self) {
        if self.v2.is_none() && self.v1_pids.is_none() {
            return;
        }
        let deadline = Instant::now() + Duration::from_millis(EMPTY_WAIT_MS);
        while !self.is_empty() && Instant::now() < deadline {
            self.kill();
            std::thread::sleep(Duration::from_millis(5));
        }
        for dir in [self.v1_pids.take(), self.v2.take()].into_iter().flatten() {
            // A cgroup that still has members cannot be removed; it stays empty-handed but
            // visible, which is better than hiding a process that would not die.
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

impl Drop for ExecCgroups {
    fn drop(&mut self) {
        self.remove();
    }
}

/// SIGKILL to every member listed in `cgroup.procs` (v1 has no cgroup.kill).
fn kill_members(dir: &Path) {
    let Ok(text) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
        return;
    };
    for pid in text.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        // ESRCH: it died meanwhile.
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}
