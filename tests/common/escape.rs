//! The escape suite's hostile workspace: secrets where agents find them (`.env`, `keys/*.pem`,
//! an SSH key in the tree and in a fake home folder outside it, a nested repository's
//! credentials), each holding a unique marker, so that any route — a builtin, a process, a
//! link, an artifact — can be checked for a leak by searching what the model got for the
//! markers.

use std::path::{Path, PathBuf};
use std::process::Command;

use toolgate::runtime::{ToolResult, ToolRuntime};

use super::Fixture;

/// A secret planted in the workspace or the fake home folder.
#[derive(Clone, Debug)]
pub struct Secret {
    /// Where, relative to the workspace (or absolute, for the fake home).
    pub path: String,
    /// The marker in its content: it must never reach the model.
    pub marker: String,
}

/// A workspace holding secrets, a git repository with a nested repository, and a fake home
/// folder outside it.
pub struct HostileWorkspace {
    pub fixture: Fixture,
    /// A home folder outside the workspace with `~/.ssh/id_rsa` and `~/.aws/credentials`.
    pub home: tempfile::TempDir,
    pub secrets: Vec<Secret>,
}

/// The files of the hostile workspace that are protected by the default set, relative to the
/// workspace root.
pub const WORKSPACE_SECRETS: &[&str] = &[
    ".env",
    "config/.env.production",
    "keys/server.pem",
    "keys/id_rsa",
    "deploy/.aws/credentials",
    "vendor/lib/.env",
];

impl HostileWorkspace {
    pub fn new() -> Self {
        let fixture = Fixture::new();
        let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let tag = super::sandbox::unique("secret");
        let mut secrets = Vec::new();
        for rel in WORKSPACE_SECRETS {
            let marker = format!("TGSECRET-{}-{tag}", rel.replace(['/', '.'], "_"));
            fixture.write(rel, &format!("API_KEY={marker}\n"));
            secrets.push(Secret {
                path: (*rel).to_owned(),
                marker,
            });
        }
        for rel in [".ssh/id_rsa", ".aws/credentials"] {
            let marker = format!("TGSECRET-home-{}-{tag}", rel.replace(['/', '.'], "_"));
            let p = home.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, format!("-----BEGIN KEY-----\n{marker}\n")).unwrap();
            secrets.push(Secret {
                path: p.to_string_lossy().into_owned(),
                marker,
            });
        }
        fixture.write(
            "src/app.py",
            "import os\nAPI_KEY = os.environ.get('API_KEY')\n\ndef login(timeout=30):\n    return timeout\n",
        );
        fixture.write("README.md", "# app\n\nThe API_KEY comes from .env.\n");
        fixture.write(".gitignore", ".env\n*.pem\n");
        let ws = HostileWorkspace {
            fixture,
            home,
            secrets,
        };
        ws.git(&["init", "-q", "."]);
        ws.git(&["add", "src", "README.md", ".gitignore"]);
        ws.git(&["commit", "-q", "-m", "initial"]);
        let nested = ws.path().join("vendor/lib");
        std::fs::write(nested.join("lib.py"), "VALUE = 1\n").unwrap();
        git_in(&nested, &["init", "-q", "."]);
        git_in(&nested, &["add", "lib.py"]);
        git_in(&nested, &["commit", "-q", "-m", "nested"]);
        ws
    }

    pub fn path(&self) -> &Path {
        self.fixture.path()
    }

    /// The fake home folder (give it to command tools as `HOME`).
    pub fn home(&self) -> PathBuf {
        self.home.path().to_path_buf()
    }

    /// A runtime over the standard library and the runtime test fixtures in this workspace.
    pub fn runtime(&self) -> ToolRuntime {
        self.fixture.builder().build().unwrap()
    }

    /// Runs git in the workspace (with a fixed identity, no global config).
    pub fn git(&self, args: &[&str]) {
        git_in(self.path(), args);
    }

    /// Panics when any secret's marker appears in `text`, naming the route.
    pub fn assert_no_secret(&self, route: &str, text: &str) {
        for s in &self.secrets {
            assert!(
                !text.contains(&s.marker),
                "{route}: the secret of {} reached the model:\n{text}",
                s.path
            );
        }
    }

    /// Everything the model can get from a result: the projection, the structured result,
    /// the summary, and every artifact's content.
    pub fn assert_result_clean(&self, route: &str, rt: &ToolRuntime, r: &ToolResult) {
        let mut seen = serde_json::to_string(r).unwrap();
        seen.push_str(r.summary());
        for a in r.artifacts() {
            if let Ok(bytes) = rt.artifacts().get(&a.id) {
                seen.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
        self.assert_no_secret(route, &seen);
    }
}

/// Runs git in a folder with a fixed identity and no global or system configuration.
pub fn git_in(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
