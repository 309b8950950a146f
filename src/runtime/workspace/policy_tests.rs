//! The builtins' side of policy files: no write through [`Workspace::lock_folder_of`] reaches
//! a file the loaded policy is read from, under any name, while reading them stays allowed.

use std::path::Path;
use std::sync::Arc;

use super::access::AccessError;
use super::{Workspace, WorkspacePath};
use crate::ir::ErrorType;
use crate::policy::{PolicyFileReason, PolicyFiles};

/// A project that is its own workspace, with a state folder and a trust store inside (so that
/// the builtins could reach them if nothing stopped them).
fn project() -> (tempfile::TempDir, Workspace) {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().canonicalize().unwrap();
    for (rel, text) in [
        ("toolgate.yaml", "specs: [\"tool-specs/**/*.yaml\"]\n"),
        ("tool-specs/bash.yaml", "name: bash\n"),
        ("tool-specs/notes.md", "not a spec\n"),
        ("src/app.py", "print()\n"),
    ] {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::create_dir_all(root.join(".state/trust")).unwrap();
    let policy = PolicyFiles::new(
        &root,
        Some(Path::new("toolgate.yaml")),
        &["tool-specs/**/*.yaml".to_owned()],
        &[],
    )
    .unwrap()
    .with_trust_dir(Some(&root.join(".state/trust")))
    .with_state_dir(&root.join(".state"));
    let ws = Workspace::open(&root)
        .unwrap()
        .with_policy_files(Arc::new(policy));
    (d, ws)
}

fn write(ws: &Workspace, rel: &str) -> Result<(), AccessError> {
    let p = WorkspacePath(rel.to_owned());
    let lock = ws.lock_folder_of(&p, true)?;
    lock.open_existing(ws)?;
    lock.replace(b"pwned\n", None).map_err(|e| AccessError::Io {
        path: rel.to_owned(),
        source: e,
    })
}

#[test]
fn every_policy_file_is_refused_for_writing_naming_it_and_why() {
    let (d, ws) = project();
    let root = d.path().canonicalize().unwrap();
    let before: Vec<_> = ["toolgate.yaml", "tool-specs/bash.yaml"]
        .iter()
        .map(|r| std::fs::read(root.join(r)).unwrap())
        .collect();
    for (rel, reason) in [
        ("toolgate.yaml", PolicyFileReason::ProjectFile),
        ("tool-specs/bash.yaml", PolicyFileReason::SpecFile),
        (
            "tool-specs/new/added.yaml",
            PolicyFileReason::SpecGlob {
                glob: "tool-specs/**/*.yaml".to_owned(),
            },
        ),
        (".state/journal.db", PolicyFileReason::StateDir),
        (".state/trust/projects/x.json", PolicyFileReason::TrustDir),
    ] {
        let e = write(&ws, rel).unwrap_err();
        assert_eq!(e.error_type(), ErrorType::PolicyDenied, "{rel}: {e}");
        match &e {
            AccessError::PolicyFile { path, reason: r } => {
                assert_eq!((path.as_str(), r), (rel, &reason));
            }
            other => panic!("{rel}: {other}"),
        }
        assert!(
            e.to_string()
                .starts_with(&format!("`{rel}` is a policy file"))
        );
    }
    assert_eq!(
        write(&ws, "toolgate.yaml").unwrap_err().to_string(),
        "`toolgate.yaml` is a policy file (the project file): tools cannot change the policy that governs them; edit it yourself and run `toolgate trust`"
    );
    // Nothing was written or created.
    for (r, b) in ["toolgate.yaml", "tool-specs/bash.yaml"]
        .iter()
        .zip(&before)
    {
        assert_eq!(&std::fs::read(root.join(r)).unwrap(), b, "{r}");
    }
    assert!(!root.join("tool-specs/new").exists());
    assert!(!root.join(".state/journal.db").exists());
    // Other files, a non-spec beside the specs included, stay writable; policy files readable.
    write(&ws, "src/app.py").unwrap();
    write(&ws, "tool-specs/notes.md").unwrap();
    ws.open_file("toolgate.yaml").unwrap();
}

/// Another name of a policy file: a symbolic link to it, or a hard link made before or after
/// start-up (the opened file's identity is compared, not only the name).
#[test]
fn links_to_policy_files_are_refused() {
    let (d, ws) = project();
    let root = d.path().canonicalize().unwrap();
    std::os::unix::fs::symlink("../toolgate.yaml", root.join("src/link.yaml")).unwrap();
    std::fs::hard_link(root.join("toolgate.yaml"), root.join("src/hard.yaml")).unwrap();
    for rel in ["src/link.yaml", "src/hard.yaml"] {
        let e = write(&ws, rel).unwrap_err();
        assert!(
            matches!(
                e,
                AccessError::PolicyFile {
                    reason: PolicyFileReason::ProjectFile,
                    ..
                }
            ),
            "{rel}: {e}"
        );
    }
    // A hard link of a spec that appears between the check and the open.
    let p = WorkspacePath("src/late.yaml".to_owned());
    let lock = ws.lock_folder_of(&p, true).unwrap();
    std::fs::hard_link(
        root.join("tool-specs/bash.yaml"),
        root.join("src/late.yaml"),
    )
    .unwrap();
    let e = lock.open_existing(&ws).unwrap_err();
    assert!(
        matches!(
            e,
            AccessError::PolicyFile {
                reason: PolicyFileReason::SpecFile,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("toolgate.yaml")).unwrap(),
        "specs: [\"tool-specs/**/*.yaml\"]\n"
    );
}

/// A workspace without a policy (a library user's own) is not affected.
#[test]
fn without_policy_files_nothing_extra_is_refused() {
    let (d, _) = project();
    let ws = Workspace::open(d.path()).unwrap();
    write(&ws, "toolgate.yaml").unwrap();
}
