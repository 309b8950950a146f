//! `plan`: profiles against kernels with and without each feature.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::*;
use crate::ir::ResourceLimits;

fn full_kernel() -> KernelFeatures {
    KernelFeatures {
        landlock_abi: Some(7),
        seccomp: true,
        subreaper: true,
        cgroup: Some(CgroupSupport {
            v2_parent: "/sys/fs/cgroup/unified".into(),
            kill: true,
            controllers: vec!["hugetlb".into()],
        }),
        pids: Some(PidsController::V1("/sys/fs/cgroup/pids".into())),
    }
}

fn bare_kernel() -> KernelFeatures {
    KernelFeatures {
        subreaper: true,
        ..KernelFeatures::default()
    }
}

fn workspace_write(best_effort: bool) -> SandboxProfile {
    SandboxProfile {
        read: vec!["/".into()],
        write: vec!["{workspace}".into(), "/dev/null".into(), "/tmp".into()],
        network: false,
        best_effort,
        limits: ResourceLimits {
            cpu_seconds: Some(600),
            memory_bytes: Some(4 << 30),
            file_size_bytes: Some(1 << 30),
            open_files: Some(1024),
            processes: Some(512),
        },
    }
}

const WS: &str = "/work/ws";

#[test]
fn workspace_write_on_a_full_kernel_uses_everything() {
    let p = plan(
        Some(("workspace-write", &workspace_write(false))),
        Path::new(WS),
        &full_kernel(),
    )
    .unwrap();
    assert_eq!(
        p,
        SandboxPlan {
            profile: Some("workspace-write".into()),
            read_roots: vec![PathBuf::from("/")],
            write_roots: vec![
                PathBuf::from(WS),
                PathBuf::from("/dev/null"),
                PathBuf::from("/tmp")
            ],
            landlock: true,
            deny_network: true,
            scope_signals: true,
            scope_abstract_sockets: true,
            rlimits: Rlimits {
                cpu_seconds: Some(600),
                address_space: Some(4 << 30),
                file_size: Some(1 << 30),
                open_files: Some(1024),
            },
            cgroup: CgroupPlan {
                v2_parent: Some("/sys/fs/cgroup/unified".into()),
                v1_pids_parent: Some("/sys/fs/cgroup/pids".into()),
                pids_max: Some(512),
            },
            best_effort: false,
            protections: vec![
                Protection::ProcessGroup,
                Protection::Subreaper,
                Protection::CgroupKill,
                Protection::Landlock,
                Protection::SignalScope,
                Protection::NoNetwork,
                Protection::AbstractSocketScope,
                Protection::ResourceLimits,
                Protection::ProcessLimit,
            ],
            missing: vec![],
        }
    );
}

#[test]
fn landlock_before_abi_6_runs_without_scopes_and_says_so() {
    let mut k = full_kernel();
    k.landlock_abi = Some(5);
    // Not best effort, and still runs: scopes are the kernel's, like Landlock's newer rights.
    let p = plan(
        Some(("workspace-write", &workspace_write(false))),
        Path::new(WS),
        &k,
    )
    .unwrap();
    assert_eq!(
        (p.scope_signals, p.scope_abstract_sockets, p.missing.clone()),
        (false, false, vec![])
    );
    assert!(!p.has(Protection::SignalScope) && !p.has(Protection::AbstractSocketScope));
    assert!(p.has(Protection::Landlock));
}

#[test]
fn no_network_without_file_rules_still_scopes_abstract_sockets() {
    let offline = SandboxProfile {
        read: vec!["/".into()],
        write: vec!["/".into()],
        network: false,
        best_effort: false,
        limits: ResourceLimits::default(),
    };
    let p = plan(Some(("offline", &offline)), Path::new(WS), &full_kernel()).unwrap();
    assert_eq!(
        (p.landlock, p.scope_signals, p.scope_abstract_sockets),
        (false, false, true)
    );
    assert_eq!(
        p.protections,
        vec![
            Protection::ProcessGroup,
            Protection::Subreaper,
            Protection::CgroupKill,
            Protection::NoNetwork,
            Protection::AbstractSocketScope,
        ]
    );
}

#[test]
fn a_missing_feature_fails_closed() {
    let e = plan(
        Some(("workspace-write", &workspace_write(false))),
        Path::new(WS),
        &bare_kernel(),
    )
    .unwrap_err();
    assert_eq!(
        e,
        SandboxUnavailable {
            profile: "workspace-write".into(),
            missing: vec![
                "Landlock (read-only and writable roots)".into(),
                "seccomp (the no-network filter)".into(),
                "the cgroup pids controller (the process cap)".into(),
            ],
        }
    );
    assert!(e.to_string().contains("refusing to run unsandboxed"));
}

#[test]
fn best_effort_runs_with_what_there_is_and_says_so() {
    let p = plan(
        Some(("ws", &workspace_write(true))),
        Path::new(WS),
        &bare_kernel(),
    )
    .unwrap();
    assert_eq!(
        p.protections,
        vec![
            Protection::ProcessGroup,
            Protection::Subreaper,
            Protection::ResourceLimits
        ]
    );
    assert_eq!(p.missing.len(), 3);
    assert!(!p.landlock && !p.deny_network && p.read_roots.is_empty());
}

#[test]
fn pids_on_v2_need_the_v2_leaf() {
    let mut k = full_kernel();
    k.pids = Some(PidsController::V2);
    let p = plan(Some(("ws", &workspace_write(false))), Path::new(WS), &k).unwrap();
    assert_eq!(
        p.cgroup,
        CgroupPlan {
            v2_parent: Some("/sys/fs/cgroup/unified".into()),
            v1_pids_parent: None,
            pids_max: Some(512),
        }
    );
    k.cgroup = None;
    assert!(plan(Some(("ws", &workspace_write(false))), Path::new(WS), &k).is_err());
}

#[test]
fn none_and_no_profile_only_contain() {
    let none = SandboxProfile {
        read: vec!["/".into()],
        write: vec!["/".into()],
        network: true,
        best_effort: true,
        limits: ResourceLimits::default(),
    };
    let p = plan(Some(("none", &none)), Path::new(WS), &bare_kernel()).unwrap();
    assert_eq!(
        (
            p.protections.clone(),
            p.missing.clone(),
            p.landlock,
            p.deny_network
        ),
        (
            vec![Protection::ProcessGroup, Protection::Subreaper],
            vec![],
            false,
            false
        )
    );
    let p = plan(None, Path::new(WS), &full_kernel()).unwrap();
    assert_eq!(
        p.protections,
        vec![
            Protection::ProcessGroup,
            Protection::Subreaper,
            Protection::CgroupKill
        ]
    );
    assert_eq!(p.profile, None);
}

#[test]
fn roots_resolve_against_the_workspace() {
    assert_eq!(
        resolve_root("{workspace}/out", Path::new(WS)),
        PathBuf::from("/work/ws/out")
    );
    assert_eq!(
        resolve_root("build", Path::new(WS)),
        PathBuf::from("/work/ws/build")
    );
    assert_eq!(resolve_root("/usr", Path::new(WS)), PathBuf::from("/usr"));
}
