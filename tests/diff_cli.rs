//! `toolgate diff` as CI runs it: the real binary in a real git repository (old specs read from
//! git objects), against a folder and a bundle.json, every format, `--fail-on` and exit codes,
//! `explain TGDnnn`; and `--replay` over a journal the runtime recorded, which finds a widened
//! rule that only the recorded traffic exercises.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn toolgate(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const PROJECT: &str = "version: 1.0.0\nworkspace: .\nstate_dir: .toolgate\ntoolsets:\n  notes:\n    description: Notes.\n    tools: [save_note]\n";

const NOTE_V1: &str = "name: save_note
version: 1
description: Save a short note to the notes service and return its id.
effect: external_side_effect
idempotency: non_idempotent
parameters:
  type: object
  properties:
    text: {type: string, description: The note., maxLength: 1000}
  required: [text]
  additionalProperties: false
permissions:
  rules:
    - id: short-notes
      allow: \"size(args.text) <= 200\"
      reason: Short notes are harmless.
    - id: no-long-notes
      deny: \"size(args.text) > 40\"
      reason: Long notes go through review.
  examples:
    - {args: {text: hi}, expect: allow}
exec: {builtin: echo}
";

/// A project in a fresh git repository, specs under `contracts/` (a subfolder of the repo).
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    write(dir.path(), "contracts/toolgate.yaml", PROJECT);
    write(dir.path(), "contracts/tool-specs/save_note.yaml", NOTE_V1);
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "-q", "-m", "v1"]);
    dir
}

#[test]
fn against_a_git_revision_reads_the_old_specs_from_git_objects() {
    let dir = repo();
    let project = dir.path().join("contracts");
    // Second commit: a required parameter, with the version bumps it needs.
    let v2 = NOTE_V1
        .replace("version: 1\n", "version: 2\n")
        .replace(
            "    text: {type: string, description: The note., maxLength: 1000}\n",
            "    text: {type: string, description: The note., maxLength: 1000}\n    topic: {type: string, description: The topic., maxLength: 50}\n",
        )
        .replace("required: [text]", "required: [text, topic]")
        .replace("{text: hi}", "{text: hi, topic: t}");
    write(&project, "tool-specs/save_note.yaml", &v2);
    write(
        &project,
        "toolgate.yaml",
        &PROJECT.replace("1.0.0", "2.0.0"),
    );
    git(dir.path(), &["commit", "-q", "-am", "v2"]);
    // The working tree equals HEAD: nothing changed.
    let (code, out, err) = toolgate(&project, &["diff", "--format", "concise"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("0 change(s)"), "{out}");
    // Against the first commit: the parameter, bumped properly, so no TGD045.
    let (code, out, err) = toolgate(
        &project,
        &["diff", "--against", "HEAD~1", "--format", "json"],
    );
    assert_eq!(code, 1, "{out}{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = doc["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["TGD010"], "{out}");
    assert_eq!(doc["required_bump"], "major");
    assert_eq!(doc["changes"][0]["levels"]["harness"], "major");
    // The checkout was not touched: the working tree still has v2.
    let now = std::fs::read_to_string(project.join("tool-specs/save_note.yaml")).unwrap();
    assert_eq!(now, v2);
    // An uncommitted edit that drops the deny rule: a widening, with a witness; the exit code
    // follows --fail-on.
    let v3 = v2.replace(
        "    - id: no-long-notes\n      deny: \"size(args.text) > 40\"\n      reason: Long notes go through review.\n",
        "",
    );
    write(&project, "tool-specs/save_note.yaml", &v3);
    let (code, out, _) = toolgate(&project, &["diff", "--format", "github"]);
    assert_eq!(
        code, 0,
        "a widening alone does not fail --fail-on breaking: {out}"
    );
    assert!(
        out.starts_with(
            "::warning file=tool-specs/save_note.yaml,line=1,title=TGD034 permission-widened::"
        ),
        "{out}"
    );
    let (code, _, _) = toolgate(&project, &["diff", "--fail-on", "widening"]);
    assert_eq!(code, 1);
    let (code, out, _) = toolgate(&project, &["diff", "--format", "sarif"]);
    assert_eq!(code, 0);
    let sarif: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(sarif["runs"][0]["results"][0]["ruleId"], "TGD034");
    // A revision that does not exist is a usage error.
    let (code, _, err) = toolgate(&project, &["diff", "--against", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("`nope`") && err.contains("revision"), "{err}");
}

#[test]
fn against_a_folder_and_a_bundle() {
    let dir = repo();
    let project = dir.path().join("contracts");
    let (code, _, err) = toolgate(&project, &["build", "--out", "../built"]);
    assert_eq!(code, 0, "{err}");
    // The generated crate's version is the contracts'.
    let manifest = std::fs::read_to_string(dir.path().join("built/rust/Cargo.toml")).unwrap();
    assert!(manifest.contains("version = \"1.0.0\""), "{manifest}");
    write(
        &project,
        "tool-specs/save_note.yaml",
        &NOTE_V1.replace("maxLength: 1000", "maxLength: 500"),
    );
    let old_copy = dir.path().join("old");
    write(&old_copy, "toolgate.yaml", PROJECT);
    write(&old_copy, "tool-specs/save_note.yaml", NOTE_V1);
    for against in ["../old", "../built/bundle.json"] {
        let (code, out, err) = toolgate(
            &project,
            &["diff", "--against", against, "--format", "concise"],
        );
        assert_eq!(code, 1, "{against}: {out}{err}");
        assert!(
            out.contains("TGD018 breaking save_note parameters.text.maxLength"),
            "{against}: {out}"
        );
        assert!(out.contains("TGD045"), "{against}: {out}");
    }
    let (code, out, _) = toolgate(&project, &["explain", "TGD018"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("# TGD018 bounds-tightened"), "{out}");
    assert!(out.contains("harness (semver): patch"), "{out}");
}

#[test]
fn replay_finds_a_widening_only_recorded_traffic_exercises() {
    let dir = repo();
    let project = dir.path().join("contracts");
    // The old contract also denies ticket references; a rule on a regular expression, which
    // no generated argument matches.
    let v1 = NOTE_V1.replace(
        "  examples:",
        "    - id: no-tickets\n      deny: \"args.text.matches('^ticket-[0-9]+$')\"\n      reason: Tickets live in the tracker.\n  examples:",
    );
    write(&project, "tool-specs/save_note.yaml", &v1);
    // Record traffic under the old contract: a ticket reference (denied) and a short note.
    for text in ["ticket-4711", "hi"] {
        let args = serde_json::json!({ "text": text }).to_string();
        let _ = toolgate(
            &project,
            &["call", "save_note", "--args", &args, "--context", "ci"],
        );
    }
    assert!(
        project.join(".toolgate/journal.db").is_file(),
        "the runtime recorded no journal"
    );
    // The new contract drops the ticket rule.
    write(&project, "tool-specs/save_note.yaml", NOTE_V1);
    let (code, out, err) = toolgate(
        &project,
        &[
            "diff",
            "--against",
            "../old",
            "--format",
            "json",
            "--fail-on",
            "widening",
        ],
    );
    assert_eq!(code, 2, "no ../old yet: {out}{err}");
    write(&dir.path().join("old"), "toolgate.yaml", PROJECT);
    write(&dir.path().join("old"), "tool-specs/save_note.yaml", &v1);
    let (code, out, err) = toolgate(
        &project,
        &[
            "diff",
            "--against",
            "../old",
            "--format",
            "json",
            "--fail-on",
            "widening",
        ],
    );
    assert_eq!(
        code, 0,
        "without the journal no witness is found: {out}{err}"
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["changes"].as_array().unwrap().len(), 0, "{out}");
    assert!(doc["calls_evaluated"]["generated"].as_u64().unwrap() > 0);
    let (code, out, err) = toolgate(
        &project,
        &[
            "diff",
            "--against",
            "../old",
            "--format",
            "json",
            "--fail-on",
            "widening",
            "--replay",
            ".toolgate/journal.db",
        ],
    );
    assert_eq!(code, 1, "{out}{err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    let c = &doc["changes"][0];
    assert_eq!(c["id"], "TGD034", "{out}");
    assert_eq!(c["witness"]["origin"], "journal");
    assert_eq!(c["witness"]["arguments"]["text"], "ticket-4711");
    assert_eq!(
        (c["witness"]["old"].as_str(), c["witness"]["new"].as_str()),
        (Some("deny"), Some("allow"))
    );
    assert_eq!(doc["calls_evaluated"]["journal"], 2);
}
