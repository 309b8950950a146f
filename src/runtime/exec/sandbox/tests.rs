//! `plan`: profiles against kernels with and without each feature.

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

use super::plan::{SandboxUnavailable, resolve_root};
use super::probe::{CgroupSupport, NamespaceSupport, PidsController};
use super::view::{HOST_SECRETS, ProtectSpec, ViewBase, ViewPlan};
use super::*;
use crate::ir::{ResourceLimits, SandboxProfile};
use crate::spec::project::builtin_profiles;

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
        namespaces: Some(NamespaceSupport {
            pid: true,
            user_namespace: false,
        }),
    }
}

fn bare_kernel() -> KernelFeatures {
    KernelFeatures {
        subreaper: true,
        ..KernelFeatures::default()
    }
}

fn workspace_write(best_effort: bool) -> SandboxProfile {
    let mut p = builtin_profiles()["workspace-write"].clone();
    p.best_effort = best_effort;
    p
}

const WS: &str = "/work/ws";

fn ctx<'a>(toolchains: &'a [PathBuf]) -> PlanContext<'a> {
    PlanContext {
        workspace: Path::new(WS),
        state_dir: Some(Path::new("/home/u/.local/state/toolgate/ws")),
        toolchains,
        protected: None,
        policy: None,
    }
}

fn system() -> Vec<PathBuf> {
    view::SYSTEM_FOLDERS.iter().map(PathBuf::from).collect()
}

#[test]
fn workspace_write_on_a_full_kernel_uses_everything() {
    let tc = [PathBuf::from("/home/u/.cargo")];
    let p = plan(
        Some(("workspace-write", &workspace_write(false))),
        &ctx(&tc),
        &full_kernel(),
    )
    .unwrap();
    let mut hide: Vec<PathBuf> = HOST_SECRETS.iter().map(PathBuf::from).collect();
    hide.extend(
        view::TOOLCHAIN_SECRETS
            .iter()
            .map(|n| PathBuf::from("/home/u/.cargo").join(n)),
    );
    let mut read = system();
    read.push("/home/u/.cargo".into());
    read.sort();
    assert_eq!(
        p,
        SandboxPlan {
            profile: Some("workspace-write".into()),
            read_roots: vec![PathBuf::from("/")],
            write_roots: vec![
                PathBuf::from(WS),
                PathBuf::from("/tmp"),
                PathBuf::from("/dev")
            ],
            landlock: true,
            deny_network: true,
            deny_mount: true,
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
            view: Some(ViewPlan {
                base: ViewBase::Empty,
                read,
                write: vec![PathBuf::from(WS)],
                private_tmp: Some(true),
                tmp_size: Some(4 << 30),
                fresh_proc: true,
                workspace: PathBuf::from(WS),
                protect: ProtectSpec::of(
                    &crate::policy::ProtectedSet::new(&crate::ir::ProtectPolicy::default())
                        .unwrap()
                ),
                state_dir: Some("/home/u/.local/state/toolgate/ws".into()),
                hide,
                git_read_only: true,
                policy_read_only: vec![],
                user_namespace: false,
            }),
            pid_namespace: true,
            best_effort: false,
            protections: vec![
                Protection::ProcessGroup,
                Protection::Subreaper,
                Protection::CgroupKill,
                Protection::MountNamespace,
                Protection::PidNamespace,
                Protection::PrivateTmp,
                Protection::ProtectedMasked,
                Protection::GitReadOnly,
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
    assert!(p.shows(Path::new("/usr/bin/git")) && p.shows(Path::new("/work/ws/src")));
    assert!(!p.shows(Path::new("/home/u/.ssh/id_rsa")) && !p.shows(Path::new("/run/x.sock")));
    assert_eq!(p.writable_trees(), vec![PathBuf::from(WS)]);
}

#[test]
fn workspace_read_binds_the_workspace_read_only_and_writes_only_tmp() {
    let p = plan(
        Some((
            "workspace-read",
            &builtin_profiles()["workspace-read"].clone(),
        )),
        &ctx(&[]),
        &full_kernel(),
    )
    .unwrap();
    let v = p.view.as_ref().unwrap();
    assert!(v.read.contains(&PathBuf::from(WS)) && v.write.is_empty());
    assert!(!v.workspace_writable());
    assert_eq!(
        p.write_roots,
        vec![PathBuf::from("/tmp"), PathBuf::from("/dev")]
    );
    assert_eq!(p.writable_trees(), Vec::<PathBuf>::new());
    assert!(p.has(Protection::GitReadOnly));
}

#[test]
fn a_profile_reading_the_root_starts_from_the_hosts_root_read_only() {
    let tight = SandboxProfile {
        read: vec!["/".into()],
        write: vec!["{workspace}".into(), "/dev/null".into(), "/tmp".into()],
        network: false,
        best_effort: false,
        limits: ResourceLimits::default(),
    };
    let p = plan(Some(("tight", &tight)), &ctx(&[]), &full_kernel()).unwrap();
    let v = p.view.as_ref().unwrap();
    assert_eq!(
        (v.base, v.read.clone(), v.write.clone(), v.private_tmp),
        (
            ViewBase::HostReadOnly,
            vec![],
            vec![PathBuf::from(WS)],
            Some(true)
        )
    );
    // The host's /tmp is under the private one: a state folder there is not writable.
    assert_eq!(p.writable_trees(), vec![PathBuf::from(WS)]);
}

#[test]
fn landlock_before_abi_6_runs_without_scopes_and_says_so() {
    let mut k = full_kernel();
    k.landlock_abi = Some(5);
    // Not best effort, and still runs: scopes are the kernel's, like Landlock's newer rights.
    let p = plan(
        Some(("workspace-write", &workspace_write(false))),
        &ctx(&[]),
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
fn a_missing_feature_fails_closed() {
    let e = plan(
        Some(("workspace-write", &workspace_write(false))),
        &ctx(&[]),
        &bare_kernel(),
    )
    .unwrap_err();
    assert_eq!(
        e,
        SandboxUnavailable {
            profile: "workspace-write".into(),
            missing: vec![
                "mount and PID namespaces (the view, and the masks of protected files)".into(),
                "Landlock (read-only and writable roots)".into(),
                "seccomp (the no-network filter)".into(),
                "the cgroup pids controller (the process cap)".into(),
            ],
        }
    );
    assert!(e.to_string().contains("refusing to run unsandboxed"));
    // Namespaces alone missing (no PID namespace) is enough to refuse.
    let mut k = full_kernel();
    k.namespaces = Some(NamespaceSupport {
        pid: false,
        user_namespace: true,
    });
    let e = plan(
        Some(("workspace-write", &workspace_write(false))),
        &ctx(&[]),
        &k,
    )
    .unwrap_err();
    assert_eq!(e.missing.len(), 1);
}

#[test]
fn best_effort_runs_with_what_there_is_and_says_so() {
    let p = plan(
        Some(("ws", &workspace_write(true))),
        &ctx(&[]),
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
    assert_eq!(p.missing.len(), 4);
    assert!(!p.landlock && !p.deny_network && p.read_roots.is_empty() && p.view.is_none());
    // Without the view a best-effort profile's /tmp is the host's.
    assert_eq!(p.writable_trees(), vec![PathBuf::from("/")]);
    let mut k = bare_kernel();
    k.landlock_abi = Some(7);
    let p = plan(Some(("ws", &workspace_write(true))), &ctx(&[]), &k).unwrap();
    assert!(p.writable_trees().contains(&PathBuf::from("/tmp")));
}

#[test]
fn pids_on_v2_need_the_v2_leaf() {
    let mut k = full_kernel();
    k.pids = Some(PidsController::V2);
    let p = plan(Some(("ws", &workspace_write(false))), &ctx(&[]), &k).unwrap();
    assert_eq!(
        p.cgroup,
        CgroupPlan {
            v2_parent: Some("/sys/fs/cgroup/unified".into()),
            v1_pids_parent: None,
            pids_max: Some(512),
        }
    );
    k.cgroup = None;
    assert!(plan(Some(("ws", &workspace_write(false))), &ctx(&[]), &k).is_err());
}

#[test]
fn none_and_no_profile_mask_and_contain() {
    let none = builtin_profiles()["none"].clone();
    let p = plan(Some(("none", &none)), &ctx(&[]), &bare_kernel()).unwrap();
    assert_eq!(
        (
            p.protections.clone(),
            p.landlock,
            p.deny_network,
            p.deny_mount
        ),
        (
            vec![Protection::ProcessGroup, Protection::Subreaper],
            false,
            false,
            false
        )
    );
    assert_eq!(
        p.missing,
        vec!["a mount namespace (the masks of protected files)".to_owned()]
    );
    for profile in [Some(("none", &none)), None] {
        let p = plan(profile, &ctx(&[]), &full_kernel()).unwrap();
        assert_eq!(
            p.protections,
            vec![
                Protection::ProcessGroup,
                Protection::Subreaper,
                Protection::CgroupKill,
                Protection::MountNamespace,
                Protection::ProtectedMasked,
            ]
        );
        let v = p.view.as_ref().unwrap();
        assert_eq!(
            (v.base, v.private_tmp, v.fresh_proc, p.pid_namespace),
            (ViewBase::HostWritable, None, false, false)
        );
        assert_eq!(p.writable_trees(), vec![PathBuf::from("/")]);
    }
    assert_eq!(plan(None, &ctx(&[]), &full_kernel()).unwrap().profile, None);
}

#[test]
fn a_user_namespace_is_planned_when_toolgate_may_not_mount() {
    let mut k = full_kernel();
    k.namespaces = Some(NamespaceSupport {
        pid: true,
        user_namespace: true,
    });
    let p = plan(Some(("ws", &workspace_write(false))), &ctx(&[]), &k).unwrap();
    assert!(p.view.unwrap().user_namespace);
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

/// The loaded policy's files and spec folders are planned read-only and the trust store hidden,
/// under every profile that gets a view — `none` too, which writes everything else.
#[test]
fn policy_files_are_planned_read_only_and_the_trust_store_hidden() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("tool-specs")).unwrap();
    std::fs::write(root.join("toolgate.yaml"), "specs: []\n").unwrap();
    std::fs::write(root.join("tool-specs/bash.yaml"), "name: bash\n").unwrap();
    let trust = root.join("../trust");
    let policy = crate::policy::PolicyFiles::new(&root, None, &[], &[])
        .unwrap()
        .with_trust_dir(Some(&trust));
    let none = builtin_profiles()["none"].clone();
    for profile in [
        Some(("none", &none)),
        Some(("workspace-write", &workspace_write(false))),
        None,
    ] {
        let c = PlanContext {
            workspace: &root,
            policy: Some(&policy),
            ..ctx(&[])
        };
        let p = plan(profile, &c, &full_kernel()).unwrap();
        let v = p.view.unwrap();
        assert_eq!(
            v.policy_read_only,
            vec![root.join("tool-specs"), root.join("toolgate.yaml")],
            "{profile:?}"
        );
        assert!(v.hide.contains(&policy.trust_dir().unwrap().to_path_buf()));
    }
}
