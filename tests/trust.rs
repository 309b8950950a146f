//! Trust, driven through the real binary: a project's policy is obeyed by `call`, `run` and
//! `serve` only once a person trusted it (`toolgate trust`, or the y/N prompt at a terminal), as
//! committed (`--trust-git REV`), or as it stands when whoever starts toolgate says so
//! (`--trust-policy`). Every run here has its own trust folder (TOOLGATE_TRUST_DIR) and state
//! folder, and none inherits the suite's TOOLGATE_TRUST_POLICY (.cargo/config.toml).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A project `toolgate init` wrote elsewhere (trusted in another trust folder: here it is a
/// clone nobody trusted), with a command tool that prints its environment.
struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    trust_dir: PathBuf,
    state: PathBuf,
}

const ENV_DUMP: &str = r#"name: env_dump
version: 1
description: >-
  Print the environment the tool's process gets, one NAME=value line each. Use it to check what
  reaches a command tool.
effect: read_only
idempotency: pure
parameters:
  type: object
  properties: {}
  additionalProperties: false
result:
  type: object
  properties: {output: {type: string}, exit_code: {type: integer}}
  required: [output, exit_code]
errors:
  PROCESS_ERROR: env failed; nothing to retry.
output: {max_bytes: 16KiB, max_lines: 200}
timeout: 10s
sandbox: none
exec:
  command:
    argv: [env]
    env:
      inherit: [PATH, TOOLGATE_TRUST_POLICY, TOOLGATE_TRUST_GIT, TOOLGATE_TRUST_DIR]
      set:
        TOOLGATE_TRUST_POLICY: "1"
        MARKER: reached
"#;

const READ: &[&str] = &[
    "call",
    "read_file",
    "--args",
    r#"{"path": "toolgate.yaml", "end_line": 1}"#,
];

impl Project {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("project");
        let p = Project {
            root: root.clone(),
            trust_dir: tmp.path().join("trust"),
            state: tmp.path().join("state"),
            _tmp: tmp,
        };
        let elsewhere = p.trust_dir.with_file_name("someone-elses-trust");
        let out = p
            .command(&["init", "--dir", root.to_str().unwrap()])
            .env("TOOLGATE_TRUST_DIR", &elsewhere)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        p.write("tool-specs/env_dump.yaml", ENV_DUMP);
        p
    }

    fn canonical(&self) -> String {
        std::fs::canonicalize(&self.root)
            .unwrap()
            .display()
            .to_string()
    }

    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.root.join(rel), text).unwrap();
    }

    fn edit(&self, rel: &str, from: &str, to: &str) {
        let path = self.root.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{rel} has no {from:?}");
        std::fs::write(path, text.replace(from, to)).unwrap();
    }

    /// `toolgate ARGS` in the project, stdin not a terminal, no trust inherited.
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        c.args(args);
        self.environment(&mut c);
        c
    }

    /// The project's folder, its own trust and state folders, no trust inherited.
    fn environment(&self, c: &mut Command) {
        c.current_dir(self.root.parent().unwrap())
            .env("TOOLGATE_TRUST_DIR", &self.trust_dir)
            .env("XDG_STATE_HOME", &self.state)
            .env("NO_COLOR", "1")
            .env_remove("TOOLGATE_TRUST_POLICY")
            .env_remove("TOOLGATE_TRUST_GIT")
            .stdin(Stdio::null());
        if self.root.is_dir() {
            c.current_dir(&self.root);
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn git(&self, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(&self.root)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The last line of standard error: the one-line verdict after the detailed report.
fn verdict(out: &Output) -> String {
    text(&out.stderr)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_owned()
}

/// The lines of the report that name files (`│   name` under miette's message).
fn listed(out: &Output) -> Vec<String> {
    text(&out.stderr)
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("│"))
        .map(|l| l.trim().to_owned())
        .collect()
}

/// The files in the trust folder. A run that starts tools makes the folder itself (empty), so
/// that command tools find it masked rather than free to create; a record is a file in it.
fn records(p: &Project) -> Vec<String> {
    if p.trust_dir.exists() {
        all_files(&p.trust_dir)
    } else {
        Vec::new()
    }
}

fn all_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn an_untrusted_policy_is_refused_without_a_terminal_naming_its_files() {
    let p = Project::new();
    for context in [None, Some("ci"), Some("headless")] {
        let mut args = READ.to_vec();
        if let Some(c) = context {
            args.extend(["--context", c]);
        }
        let out = p.run(&args);
        assert_eq!(out.status.code(), Some(2), "{context:?}");
        assert_eq!(text(&out.stdout), "", "nothing ran");
        assert_eq!(
            listed(&out),
            vec![
                "tool-specs/env_dump.yaml",
                "tool-specs/read_file.yaml",
                "toolgate.yaml"
            ]
        );
        assert_eq!(
            verdict(&out),
            "toolgate: nothing ran: the policy is not trusted"
        );
    }
    // `run` and `serve` check at start-up too.
    let calls = p.root.join("calls.jsonl");
    std::fs::write(&calls, "{\"name\": \"env_dump\"}\n").unwrap();
    let out = p.run(&["run", "--calls", calls.to_str().unwrap()]);
    assert_eq!(
        (out.status.code(), verdict(&out)),
        (
            Some(2),
            "toolgate: nothing ran: the policy is not trusted".into()
        )
    );
    let out = p.run(&["serve"]);
    assert_eq!(
        (out.status.code(), verdict(&out)),
        (
            Some(2),
            "toolgate: nothing ran: the policy is not trusted".into()
        )
    );
    assert!(!p.trust_dir.exists(), "refusing records nothing");
}

#[test]
fn trusted_runs_an_edit_is_refused_and_revoke_forgets() {
    let p = Project::new();
    let root = p.canonical();
    let before = all_files(&p.root);
    let out = p.run(&["trust"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.starts_with(&format!("trusted {root} (3 file(s), policy ")),
        "{said}"
    );
    let out = p.run(&[READ, &["--context", "ci"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().next(), Some("read_file: success"));
    let status = p.run(&["trust", "status"]);
    assert_eq!(status.status.code(), Some(0));
    assert!(text(&status.stdout).starts_with(&format!("trusted: {root} (3 file(s), policy ")));

    // A tool (or anyone) edits a spec: the change is not obeyed.
    p.edit("tool-specs/read_file.yaml", "timeout: 5s", "timeout: 50s");
    p.write(
        "tool-specs/extra.yaml",
        ENV_DUMP.replace("env_dump", "env_dump2").as_str(),
    );
    std::fs::remove_file(p.root.join("tool-specs/env_dump.yaml")).unwrap();
    let out = p.run(&[READ, &["--context", "ci"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        listed(&out),
        vec![
            "changed: tool-specs/read_file.yaml",
            "added: tool-specs/extra.yaml",
            "removed: tool-specs/env_dump.yaml",
        ]
    );
    let status = p.run(&["trust", "show"]);
    assert_eq!(status.status.code(), Some(1));
    assert_eq!(
        text(&status.stdout),
        format!(
            "the policy of {root} changed since it was trusted:\n  changed: tool-specs/read_file.yaml\n  added: tool-specs/extra.yaml\n  removed: tool-specs/env_dump.yaml\n"
        )
    );

    let out = p.run(&["trust", "revoke"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), format!("revoked the trust of {root}\n"))
    );
    let status = p.run(&["trust", "status"]);
    assert_eq!(status.status.code(), Some(1));
    assert_eq!(
        text(&status.stdout),
        format!(
            "the policy of {root} has never been trusted; its files:\n  tool-specs/extra.yaml\n  tool-specs/read_file.yaml\n  toolgate.yaml\n"
        )
    );

    // Nothing of trust is written into the project; the records are in the trust folder.
    let mut after = all_files(&p.root);
    after.retain(|f| f != "tool-specs/extra.yaml");
    let mut expected = before;
    expected.retain(|f| f != "tool-specs/env_dump.yaml");
    assert_eq!(after, expected);
    let stored = all_files(&p.trust_dir);
    assert!(
        stored.iter().all(|f| f.starts_with("blobs/")),
        "revoked: no record left: {stored:?}"
    );
    assert_eq!(
        stored.len(),
        3,
        "the snapshot of the trusted files: {stored:?}"
    );
}

#[test]
fn init_trusts_what_it_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let p = Project {
        root: tmp.path().join("new"),
        trust_dir: tmp.path().join("trust"),
        state: tmp.path().join("state"),
        _tmp: tmp,
    };
    let out = p.run(&["init", "--dir", p.root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = p.run(&[READ, &["--context", "ci"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(p.run(&["trust", "status"]).status.code(), Some(0));
}

#[test]
fn the_record_is_keyed_by_the_project_and_holds_its_fingerprint() {
    let p = Project::new();
    assert_eq!(p.run(&["trust"]).status.code(), Some(0));
    let stored = all_files(&p.trust_dir);
    let records: Vec<&String> = stored
        .iter()
        .filter(|f| f.starts_with("projects/"))
        .collect();
    assert_eq!(records.len(), 1, "{stored:?}");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.trust_dir.join(records[0])).unwrap())
            .unwrap();
    assert_eq!(record["project"], p.canonical());
    let files: Vec<&str> = record["fingerprint"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        vec![
            "tool-specs/env_dump.yaml",
            "tool-specs/read_file.yaml",
            "toolgate.yaml"
        ]
    );
    let spec_hash = record["fingerprint"]["files"][1]["hash"].as_str().unwrap();
    assert_eq!(
        std::fs::read(p.trust_dir.join("blobs").join(spec_hash)).unwrap(),
        std::fs::read(p.root.join("tool-specs/read_file.yaml")).unwrap(),
        "the snapshot holds the trusted bytes"
    );
}

#[test]
fn trust_git_obeys_only_the_committed_policy() {
    let p = Project::new();
    p.git(&["init", "-q"]);
    p.git(&["add", "."]);
    p.git(&["commit", "-q", "-m", "policy"]);
    let out = p.run(&[READ, &["--context", "ci", "--trust-git", "HEAD"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = p
        .command(&[READ, &["--context", "ci"]].concat())
        .env("TOOLGATE_TRUST_GIT", "HEAD")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    p.edit("tool-specs/read_file.yaml", "timeout: 5s", "timeout: 50s");
    p.write(
        "tool-specs/extra.yaml",
        ENV_DUMP.replace("env_dump", "env_dump2").as_str(),
    );
    let out = p.run(&[READ, &["--context", "ci", "--trust-git", "HEAD"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        listed(&out),
        vec![
            "tool-specs/extra.yaml is not in HEAD",
            "tool-specs/read_file.yaml differs from HEAD",
        ]
    );
    assert_eq!(
        verdict(&out),
        "toolgate: nothing ran: the policy differs from HEAD (2 file(s))"
    );
    let out = p.run(&[READ, &["--trust-git", "no-such-rev"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        verdict(&out).contains("`no-such-rev` is not a revision"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        records(&p),
        Vec::<String>::new(),
        "--trust-git records nothing"
    );
}

#[test]
fn trust_policy_trusts_this_run_only_and_records_nothing() {
    let p = Project::new();
    let out = p.run(&[READ, &["--context", "ci", "--trust-policy"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = p
        .command(&[READ, &["--context", "ci"]].concat())
        .env("TOOLGATE_TRUST_POLICY", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(records(&p), Vec::<String>::new());
    let out = p.run(&[READ, &["--context", "ci"]].concat());
    assert_eq!(out.status.code(), Some(2), "the next run is not trusted");
    let out = p
        .command(&[READ, &["--context", "ci"]].concat())
        .env("TOOLGATE_TRUST_POLICY", "maybe")
        .output()
        .unwrap();
    assert_eq!(
        verdict(&out),
        "toolgate: TOOLGATE_TRUST_POLICY=\"maybe\": expected 1 (trust the policy as it stands) or 0"
    );
}

#[test]
fn no_trust_variable_reaches_a_command_tool() {
    let p = Project::new();
    let out = p
        .command(&["call", "env_dump", "--context", "ci", "--format", "json"])
        .env("TOOLGATE_TRUST_POLICY", "1")
        .env("TOOLGATE_TRUST_GIT", "HEAD")
        .env("TOOLGATE_TRUST_DIR", &p.trust_dir)
        .output()
        .unwrap();
    // As two variables, TOOLGATE_TRUST_POLICY is read first: this run is trusted as it stands.
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let env = result["structured"]["output"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    let mut names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
    names.sort();
    assert_eq!(names, vec!["MARKER", "PATH", "TOOLGATE_IDEMPOTENCY_KEY"]);
}

#[test]
fn without_a_trust_folder_the_error_says_how_to_set_one() {
    let p = Project::new();
    let out = p
        .command(&[READ, &["--context", "ci"]].concat())
        .env_remove("TOOLGATE_TRUST_DIR")
        .env_remove("HOME")
        .env_remove("XDG_STATE_HOME")
        .env("XDG_STATE_HOME", "relative")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        verdict(&out),
        "toolgate: no folder for trust records: set TOOLGATE_TRUST_DIR (or XDG_STATE_HOME, or HOME) to an absolute folder outside the workspace; or pass --trust-policy (the policy as it stands, for this run) or --trust-git REV"
    );
}

/// Runs toolgate on a terminal (a pty, through Python's `pty` module), answering `answer` to
/// the trust prompt; returns what the terminal showed and the exit code.
fn on_a_terminal(p: &Project, args: &[&str], answer: &str) -> (String, i32) {
    const DRIVER: &str = r#"
import os, pty, select, sys
answer = sys.argv[1].encode()
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
out = b""
sent = False
while True:
    try:
        ready, _, _ = select.select([fd], [], [], 60)
        if not ready:
            break
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if not sent and b"[y/N]" in out:
        os.write(fd, answer + b"\n")
        sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let mut py = Command::new("python3");
    p.environment(&mut py);
    py.args(["-c", DRIVER, answer, env!("CARGO_BIN_EXE_toolgate")])
        .args(args);
    let out = py.output().unwrap();
    (
        text(&out.stdout).replace("\r\n", "\n"),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn at_a_terminal_the_change_and_its_widening_are_shown_and_asked() {
    let p = Project::new();
    assert_eq!(p.run(&["trust"]).status.code(), Some(0));
    // The read_file spec drops its deny rule for repository internals: a widening.
    p.edit(
        "tool-specs/read_file.yaml",
        "    - id: no-repository-internals\n      deny: path.in_git_dir(args.path)\n      reason: Repository internals (any .git folder) are not read by the agent.\n",
        "    - id: everything\n      allow: \"true\"\n",
    );
    p.edit(
        "tool-specs/read_file.yaml",
        "    - {args: {path: .git/config}, expect: deny}\n",
        "",
    );
    let root = p.canonical();
    let shown = format!(
        "the policy of {root} changed since it was trusted:\n  changed: tool-specs/read_file.yaml\nWidened permissions:\n  TGD034 read_file permissions: a call the old contract decided `deny` is now `allow` in context `interactive`\n    witness (example, context interactive): {{\"path\":\".git/config\"}} — was deny, now allow\nTrust this policy and go on? [y/N] "
    );
    let (screen, code) = on_a_terminal(&p, READ, "n");
    assert_eq!(
        (screen, code),
        (
            format!("{shown}n\ntoolgate: nothing ran: the policy was not trusted\n"),
            2
        )
    );
    let (screen, code) = on_a_terminal(&p, READ, "y");
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.starts_with(&format!("{shown}y\ntrusted {root}\nread_file: success\n")),
        "{screen}"
    );
    // Trusted now: the next run asks nothing.
    let out = p.run(&[READ, &["--context", "ci"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // At a terminal but in `ci`, nobody is asked.
    p.edit("tool-specs/read_file.yaml", "timeout: 5s", "timeout: 50s");
    let (screen, code) = on_a_terminal(&p, &[READ, &["--context", "ci"]].concat(), "y");
    assert_eq!(code, 2);
    assert!(!screen.contains("[y/N]"), "{screen}");
}

#[test]
fn a_bundle_is_obeyed_as_committed_or_when_vouched_for() {
    let p = Project::new();
    let bundle = ["--bundle", "build/toolgate/bundle.json", "--context", "ci"];
    let out = p.run(&[READ, &bundle].concat());
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        verdict(&out),
        "toolgate: nothing ran: a --bundle run obeys its bundle only with --trust-git REV (the bundle as committed) or --trust-policy (whoever starts toolgate vouches for it)"
    );
    let out = p.run(&[READ, &bundle, &["--trust-policy"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    p.git(&["init", "-q"]);
    p.git(&["add", "."]);
    p.git(&["commit", "-q", "-m", "bundle"]);
    let out = p.run(&[READ, &bundle, &["--trust-git", "HEAD"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let file = p.root.join("build/toolgate/bundle.json");
    let mut text_now = std::fs::read_to_string(&file).unwrap();
    text_now.push('\n');
    std::fs::write(&file, text_now).unwrap();
    let out = p.run(&[READ, &bundle, &["--trust-git", "HEAD"]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        listed(&out),
        vec!["build/toolgate/bundle.json differs from HEAD"]
    );
}

/// A file name may hold an ESC sequence, a carriage return, a bidi override or a zero-width
/// space; the trust report names it with each escaped (`\u{…}`, as every approval prompt
/// does), so the file cannot hide among, or rename, the ones listed beside it.
#[test]
fn hidden_characters_in_a_file_name_are_shown_escaped() {
    let p = Project::new();
    let hostile = "tool-specs/a\u{1b}[2K\r\u{202e}lmay\u{200b}.yaml";
    p.write(
        hostile,
        &ENV_DUMP.replace("name: env_dump", "name: env_dump_two"),
    );
    let out = p.run(READ);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        listed(&out)
            .contains(&"tool-specs/a\\u{1b}[2K\\u{d}\\u{202e}lmay\\u{200b}.yaml".to_owned()),
        "{}",
        text(&out.stderr)
    );
    let stderr = text(&out.stderr);
    for c in ['\u{1b}', '\r', '\u{202e}', '\u{200b}'] {
        assert!(!stderr.contains(c), "{c:?} reached the terminal: {stderr}");
    }
}
