//! The escape suite's hostile workspace builds: secrets with markers, a repository with a
//! nested repository, a fake home outside the workspace.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::escape::{HostileWorkspace, WORKSPACE_SECRETS};

#[test]
fn the_hostile_workspace_holds_every_secret_and_two_repositories() {
    let ws = HostileWorkspace::new();
    for rel in WORKSPACE_SECRETS {
        assert!(ws.path().join(rel).is_file(), "{rel}");
    }
    assert!(ws.path().join(".git/HEAD").is_file());
    assert!(ws.path().join("vendor/lib/.git/HEAD").is_file());
    assert!(ws.home().join(".ssh/id_rsa").is_file());
    assert!(!ws.home().starts_with(ws.path()));
    let marker = &ws.secrets[0].marker;
    let leaked = std::panic::catch_unwind(|| ws.assert_no_secret("probe", marker));
    assert!(leaked.is_err(), "a marker in the text is reported");
    ws.assert_no_secret("probe", "nothing secret here");
}
