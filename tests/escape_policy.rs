//! The escape suite, the policy itself: every route by which a tool could rewrite the policy that
//! governs the next call — a `pytest.py` that `run_tests` runs, `write_file`, `apply_patch` of a
//! new spec, a link swapped in, `git checkout` of an old toolgate.yaml, the trust store — in a
//! project that is its own workspace, driven through the real binary in context `ci`.
//!
//! Every run here checks trust for real (TOOLGATE_TRUST_POLICY removed, the project trusted by
//! `toolgate trust` into a trust folder of its own), so each route ends with the same question:
//! is the trusted fingerprint unchanged (`toolgate trust status`) — or, where a tool could change
//! it, is the changed policy refused by the next call, naming the file? And no secret marker
//! reached what the tools printed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// The same rewrite kept lint-clean (the widened default would fail bash's own permission
/// examples, and a policy with lint errors never runs at all): a longer timeout, and bash's
/// sandbox taken away.
const REWRITE_LINT_CLEAN: &str = r#"
import pathlib
for rel, old, new in [
    ("toolgate.yaml", "  timeout: 30s", "  timeout: 10m"),
    ("tool-specs/bash.yaml", "sandbox: workspace-write", "sandbox: none"),
]:
    p = pathlib.Path(rel)
    text = p.read_text()
    assert old in text, rel
    p.write_text(text.replace(old, new))
    print(rel, "rewritten")
"#;

/// A project that is its own workspace: `toolgate init`'s, with the standard library's
/// write_file, apply_patch (their reviews turned into `allow` rules: nothing asks, so only the
/// policy-file refusal stands between them and the files), run_tests and bash, a `.env` secret,
/// two git commits, trusted.
struct PolicyProject {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    trust_dir: PathBuf,
    state: PathBuf,
    marker: String,
}

/// What the issue's `pytest.py` did: widen the defaults and take bash's sandbox away.
const REWRITE_POLICY: &str = r#"
import pathlib
for rel, old, new in [
    ("toolgate.yaml", "defaults:\n", "defaults:\n  permissions: {process_execution: allow}\n"),
    ("tool-specs/bash.yaml", "sandbox: workspace-write", "sandbox: none"),
]:
    p = pathlib.Path(rel)
    try:
        p.write_text(p.read_text().replace(old, new))
        print(rel, "rewritten")
    except OSError as e:
        print(rel, "refused", e.errno)
"#;

impl PolicyProject {
    fn new(run_tests_sandbox: &str) -> Self {
        let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let root = tmp
            .path()
            .join("project")
            .canonicalize()
            .unwrap_or_else(|_| {
                std::fs::create_dir_all(tmp.path().join("project")).unwrap();
                tmp.path().join("project").canonicalize().unwrap()
            });
        let marker = format!("TGSECRET-policy-{}", std::process::id());
        let p = PolicyProject {
            trust_dir: root.join(".trust"),
            state: tmp.path().join("state"),
            root,
            marker,
            _tmp: tmp,
        };
        let init = p
            .command(&["init", "--dir", p.root.to_str().unwrap()])
            .env("TOOLGATE_TRUST_DIR", p.root.with_file_name("elsewhere"))
            .output()
            .unwrap();
        assert!(init.status.success(), "{}", text(&init.stderr));
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tool-specs");
        for name in ["write_file", "apply_patch", "run_tests", "bash"] {
            let mut spec = std::fs::read_to_string(repo.join(format!("{name}.yaml"))).unwrap();
            if matches!(name, "write_file" | "apply_patch") {
                spec = spec
                    .replace("      ask: ", "      allow: ")
                    .replace("expect: ask", "expect: allow");
            }
            if name == "run_tests" {
                spec = spec.replace(
                    "sandbox: workspace-write",
                    &format!("sandbox: {run_tests_sandbox}"),
                );
            }
            p.write(&format!("tool-specs/{name}.yaml"), &spec);
        }
        p.write(".env", &format!("API_KEY={}\n", p.marker));
        p.write("src/app.py", "TIMEOUT = 5\n");
        p.write(".gitignore", ".env\n.trust\nbuild\n");
        let old = p.read("toolgate.yaml").replace(
            "defaults:\n",
            "defaults:\n  permissions: {process_execution: allow}\n",
        );
        p.write("toolgate.yaml", &old);
        p.git(&["init", "-q", "."]);
        p.git(&["add", "-A"]);
        p.git(&["commit", "-q", "-m", "an old, lenient policy"]);
        p.write(
            "toolgate.yaml",
            &old.replace("  permissions: {process_execution: allow}\n", ""),
        );
        p.git(&["commit", "-q", "-am", "the policy as trusted"]);
        let trusted = p.run(&["trust"]);
        assert!(trusted.status.success(), "{}", text(&trusted.stderr));
        p
    }

    fn write(&self, rel: &str, content: &str) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    /// `toolgate ARGS` in the project: its own trust and state folders, trust not inherited.
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        c.args(args)
            .current_dir(self.root.parent().unwrap())
            .env("TOOLGATE_TRUST_DIR", &self.trust_dir)
            .env("XDG_STATE_HOME", &self.state)
            .env("NO_COLOR", "1")
            .env_remove("TOOLGATE_TRUST_POLICY")
            .env_remove("TOOLGATE_TRUST_GIT")
            .stdin(Stdio::null());
        if self.root.join("toolgate.yaml").exists() {
            c.current_dir(&self.root);
        }
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn git(&self, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    }

    /// One call in context `ci`: its exit code and JSON result (`Value::Null` when it printed
    /// none, as when trust refuses), checked for the secret.
    fn call(&self, route: &str, tool: &str, args: Value) -> (Option<i32>, Value) {
        let out = self.run(&[
            "call",
            tool,
            "--args",
            &args.to_string(),
            "--context",
            "ci",
            "--format",
            "json",
        ]);
        self.assert_no_secret(route, &out);
        let result = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), result)
    }

    fn assert_no_secret(&self, route: &str, out: &Output) {
        for stream in [&out.stdout, &out.stderr] {
            assert!(
                !text(stream).contains(&self.marker),
                "{route}: the secret reached the output:\n{}",
                text(stream)
            );
        }
    }

    /// The blake3 of every policy file, by path: what the trust record fingerprints.
    fn fingerprint(&self) -> Vec<(String, String)> {
        let mut out = vec![(
            "toolgate.yaml".to_owned(),
            hash(&self.root.join("toolgate.yaml")),
        )];
        let specs = self.root.join("tool-specs");
        let mut names: Vec<_> = std::fs::read_dir(&specs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for n in names {
            out.push((format!("tool-specs/{n}"), hash(&specs.join(&n))));
        }
        out
    }

    /// The policy is the one trusted: the files hash as before and `toolgate trust status`
    /// agrees.
    fn assert_policy_kept(&self, route: &str, before: &[(String, String)]) {
        assert_eq!(self.fingerprint(), before, "{route}: a policy file changed");
        let status = self.run(&["trust", "status"]);
        assert_eq!(
            status.status.code(),
            Some(0),
            "{route}: {}",
            text(&status.stdout)
        );
    }

    /// Writes a `pytest.py` into the project and has `run_tests` (allowed without asking) run
    /// it; returns what it printed.
    fn run_pytest(&self, route: &str, script: &str) -> String {
        self.write("pytest.py", script);
        let (code, r) = self.call(route, "run_tests", json!({"runner": "pytest"}));
        assert_eq!(code, Some(0), "{route}: {r}");
        r.to_string()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn hash(p: &Path) -> String {
    blake3::hash(&std::fs::read(p).unwrap())
        .to_hex()
        .to_string()
}

/// The refusal a builtin gives for a policy file: DENIED / POLICY_DENIED, naming it and why.
fn assert_policy_denied(route: &str, (code, r): &(Option<i32>, Value), path: &str, why: &str) {
    assert_eq!(*code, Some(1), "{route}: {r}");
    assert_eq!(
        (r["status"].as_str(), r["error_type"].as_str()),
        (Some("denied"), Some("POLICY_DENIED")),
        "{route}: {r}"
    );
    let summary = r["summary"].as_str().unwrap();
    assert!(
        summary.starts_with(&format!("`{path}` is a policy file ({why}")),
        "{route}: {summary}"
    );
}

/// Route (a): the issue's `pytest.py`, run by `run_tests`, rewrites toolgate.yaml and bash's
/// spec. Under the project's `workspace-write` profile and under `sandbox: none` alike the
/// files are bound read-only in the process's view, so the writes fail and the trusted policy
/// stands; the next call runs as before.
#[test]
fn a_test_file_cannot_rewrite_the_policy_under_any_profile() {
    for profile in ["workspace-write", "none"] {
        let p = PolicyProject::new(profile);
        let before = p.fingerprint();
        let route = format!("pytest.py under {profile}");
        let printed = p.run_pytest(&route, REWRITE_POLICY);
        p.assert_policy_kept(&route, &before);
        assert!(
            printed.contains("toolgate.yaml refused")
                && printed.contains("tool-specs/bash.yaml refused"),
            "{route}: {printed}"
        );
        let (code, r) = p.call(&route, "read_file", json!({"path": "src/app.py"}));
        assert_eq!((code, r["status"].as_str()), (Some(0), Some("success")));
    }
}

/// What holds where no mount can stop a command tool (`sandbox: none` on a kernel without mount
/// namespaces, or a process that escapes its view): the policy is rewritten, as the issue's
/// `pytest.py` did (kept lint-clean), outside toolgate's reach — and the next `toolgate call` in `ci` refuses it
/// before anything runs, naming both changed files.
#[test]
fn a_policy_rewritten_behind_the_mounts_is_refused_by_the_next_call() {
    let p = PolicyProject::new("none");
    let script = std::env::temp_dir().join(format!("rewrite-{}.py", std::process::id()));
    std::fs::write(&script, REWRITE_LINT_CLEAN).unwrap();
    let out = Command::new("python3")
        .arg(&script)
        .current_dir(&p.root)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&script);
    assert!(
        text(&out.stdout).contains("toolgate.yaml rewritten"),
        "{}",
        text(&out.stderr)
    );
    let out = p.run(&[
        "call",
        "bash",
        "--args",
        r#"{"command": "echo reached"}"#,
        "--context",
        "ci",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(text(&out.stdout), "", "nothing ran");
    for f in ["toolgate.yaml", "tool-specs/bash.yaml"] {
        assert!(stderr.contains(f), "{f} is not named:\n{stderr}");
    }
    assert!(stderr.contains("the policy is not trusted"), "{stderr}");
    p.assert_no_secret("rewritten behind the mounts", &out);
}

/// Routes (b) and (c): write_file of toolgate.yaml and of a spec, and a new spec file matching
/// `specs:` by write_file or apply_patch — each refused by name, even though the project's own
/// rules allow the writes; nothing is written or created.
#[test]
fn builtins_refuse_policy_files_and_new_specs() {
    let p = PolicyProject::new("workspace-write");
    let before = p.fingerprint();
    let glob = "matched by the project's `specs:` glob `tool-specs/**/*.yaml`";
    for (route, tool, args, path, why) in [
        (
            "write_file toolgate.yaml",
            "write_file",
            json!({"path": "toolgate.yaml", "content": "specs: []\n", "overwrite": true}),
            "toolgate.yaml",
            "the project file",
        ),
        (
            "write_file a spec",
            "write_file",
            json!({"path": "tool-specs/bash.yaml", "content": "name: bash\n", "overwrite": true}),
            "tool-specs/bash.yaml",
            "a tool spec the project loads",
        ),
        (
            "write_file a new spec",
            "write_file",
            json!({"path": "tool-specs/extra/shell.yaml", "content": "name: shell\n"}),
            "tool-specs/extra/shell.yaml",
            glob,
        ),
        (
            "apply_patch a new spec",
            "apply_patch",
            json!({"path": "tool-specs/new.yaml", "expected_hash": "0".repeat(64),
                   "edits": [{"old_text": "a", "new_text": "b"}]}),
            "tool-specs/new.yaml",
            glob,
        ),
        (
            "apply_patch toolgate.yaml",
            "apply_patch",
            json!({"path": "toolgate.yaml", "expected_hash": hash(&p.root.join("toolgate.yaml")),
                   "edits": [{"old_text": "defaults:", "new_text": "defaults:\n  permissions: {process_execution: allow}"}]}),
            "toolgate.yaml",
            "the project file",
        ),
    ] {
        assert_policy_denied(route, &p.call(route, tool, args), path, why);
        p.assert_policy_kept(route, &before);
    }
    assert!(!p.root.join("tool-specs/extra").exists());
    // The allow rules do work on other files: only policy files are held back.
    let (code, r) = p.call(
        "write_file src",
        "write_file",
        json!({"path": "src/new.py", "content": "X = 1\n"}),
    );
    assert_eq!(
        (code, r["status"].as_str()),
        (Some(0), Some("success")),
        "{r}"
    );
}

/// Route (d): a link swapped for toolgate.yaml. A command tool cannot rename a link (or
/// anything) over it, nor drop a new spec into the spec folder; a builtin given a link that
/// leads to toolgate.yaml refuses it as the policy file it is.
#[test]
fn a_link_swapped_for_the_policy_changes_nothing() {
    let p = PolicyProject::new("workspace-write");
    let before = p.fingerprint();
    let printed = p.run_pytest(
        "swap by a command tool",
        r#"
import os, pathlib
pathlib.Path("evil.yaml").write_text("specs: []\n")
os.symlink("evil.yaml", "swap.tmp")
for step, f in [
    ("rename", lambda: os.rename("swap.tmp", "toolgate.yaml")),
    ("unlink", lambda: os.unlink("tool-specs/bash.yaml")),
    ("new", lambda: pathlib.Path("tool-specs/new.yaml").write_text("name: x\n")),
    ("link", lambda: os.symlink("../evil.yaml", "tool-specs/linked.yaml")),
]:
    try:
        f()
        print(step, "done")
    except OSError as e:
        print(step, "refused", e.errno)
"#,
    );
    p.assert_policy_kept("swap by a command tool", &before);
    for step in ["rename", "unlink", "new", "link"] {
        assert!(
            printed.contains(&format!("{step} refused")),
            "{step}: {printed}"
        );
    }
    // The builtin route: a link (made as a command tool could) that leads to toolgate.yaml.
    std::os::unix::fs::symlink("../toolgate.yaml", p.root.join("src/policy.yaml")).unwrap();
    let route = "write_file through a link";
    let r = p.call(
        route,
        "write_file",
        json!({"path": "src/policy.yaml", "content": "specs: []\n", "overwrite": true}),
    );
    // Paths are resolved before the builtin runs: the refusal names the file the link leads to.
    assert_policy_denied(route, &r, "toolgate.yaml", "the project file");
    p.assert_policy_kept(route, &before);
}

/// Route (e): `git checkout` of an old, lenient toolgate.yaml by a command tool (and the same
/// bytes through `git show` and a redirection): the file is read-only in the view.
#[test]
fn git_cannot_check_out_an_old_policy() {
    let p = PolicyProject::new("workspace-write");
    let before = p.fingerprint();
    let printed = p.run_pytest(
        "git checkout",
        r#"
import subprocess
for argv in (["git", "checkout", "HEAD~1", "--", "toolgate.yaml"],
             ["sh", "-c", "git show HEAD~1:toolgate.yaml > toolgate.yaml"]):
    r = subprocess.run(argv, capture_output=True, text=True)
    print(argv[1], "exit", r.returncode, r.stderr.strip().replace("\n", " "))
"#,
    );
    p.assert_policy_kept("git checkout", &before);
    assert!(!printed.contains("checkout exit 0"), "{printed}");
    assert!(!p.read("toolgate.yaml").contains("process_execution: allow"));
}

/// Route (f): the trust store (here inside the workspace, so that a builtin can name it) and the
/// state folder (outside it, so beyond every path argument): write_file reaches neither.
#[test]
fn builtins_cannot_write_the_trust_store_or_the_state_folder() {
    let p = PolicyProject::new("workspace-write");
    let before = p.fingerprint();
    let records: Vec<PathBuf> = std::fs::read_dir(p.trust_dir.join("projects"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(records.len(), 1);
    let record = records[0]
        .strip_prefix(&p.root)
        .unwrap()
        .display()
        .to_string();
    let saved = std::fs::read(&records[0]).unwrap();
    for path in [record.as_str(), ".trust/projects/forged.json"] {
        let route = format!("write_file {path}");
        let r = p.call(
            &route,
            "write_file",
            json!({"path": path, "content": "{}", "overwrite": true}),
        );
        assert_policy_denied(&route, &r, path, "inside the trust store");
    }
    assert_eq!(std::fs::read(&records[0]).unwrap(), saved);
    assert!(!p.trust_dir.join("projects/forged.json").exists());
    let state = p.state.join("toolgate");
    let route = "write_file into the state folder";
    let (code, r) = p.call(
        route,
        "write_file",
        json!({"path": state.join("journal.db").display().to_string(), "content": "x", "overwrite": true}),
    );
    assert_ne!(r["status"].as_str(), Some("success"), "{route}: {r}");
    assert_eq!(code, Some(1), "{route}: {r}");
    p.assert_policy_kept(route, &before);
}
