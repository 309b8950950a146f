//! The workspace boundary and the builtin file tools: `..`, absolute and symlink escapes are
//! refused; a symlink swapped in after validation cannot make an open escape; the builtins
//! return the shapes of their contracts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::{Fixture, Scripted, call, run1};
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::Session;
use toolgate::runtime::extend::ApprovalOutcome;
use toolgate::runtime::extend::{Annotations, CallView, Hook, HookPoint};

fn session() -> Session {
    Session::new("s", "interactive")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapes_are_refused_at_validation() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "SECRET\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), f.path().join("out")).unwrap();
    let rt = f.builder().build().unwrap();
    let cases = [
        (
            "out/secret.txt",
            "path: `out/secret.txt` leads outside the workspace through a symbolic link",
        ),
        (
            "../secret.txt",
            "The path must be relative and stay inside the workspace.",
        ),
        (
            "/etc/passwd",
            "The path must be relative and stay inside the workspace.",
        ),
    ];
    for (path, message) in cases {
        let r = run1(
            &rt,
            &session(),
            call("c", "read_file", json!({"path": path})),
        )
        .await;
        assert_eq!(
            (r.error_type(), r.summary()),
            (Some(ErrorType::SemanticValidationError), message),
            "{path}"
        );
        assert!(!r.projection().text.contains("SECRET"));
    }
    // list_dir and search_files guard their folder the same way.
    let r = run1(
        &rt,
        &session(),
        call("c", "list_dir", json!({"path": "out"})),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::SemanticValidationError));
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "search_files",
            json!({"pattern": "SECRET", "path": "out"}),
        ),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::SemanticValidationError));
    // The symlink itself is listed as a symlink, never followed.
    let r = run1(&rt, &session(), call("c", "list_dir", json!({}))).await;
    assert_eq!(
        r.structured().unwrap()["entries"],
        json!([{"name": "out", "kind": "symlink", "size": 0}])
    );
}

/// A hook that swaps a folder for a symlink to the outside just before execution.
struct Swapper {
    ws: std::path::PathBuf,
    outside: std::path::PathBuf,
}

impl Hook for Swapper {
    fn points(&self) -> &[HookPoint] {
        &[HookPoint::BeforeExecute]
    }

    fn on(&self, _view: &CallView<'_>, _a: &mut Annotations) {
        std::fs::rename(self.ws.join("sub"), self.ws.join("sub.old")).unwrap();
        std::os::unix::fs::symlink(&self.outside, self.ws.join("sub")).unwrap();
    }
}

/// End to end: validation passes, the swap happens, the builtin refuses — the model never
/// sees the outside file, whether it reads or writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapped_symlink_race_is_refused_end_to_end() {
    for tool in ["read_file", "write_file"] {
        let f = Fixture::new();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("file.txt"), "SECRET\n").unwrap();
        f.write("sub/file.txt", "inside\n");
        let swapper = Arc::new(Swapper {
            ws: f.path().to_path_buf(),
            outside: outside.path().to_path_buf(),
        });
        let rt = f
            .builder()
            .hook(swapper)
            .approver(Scripted::new(ApprovalOutcome::AllowOnce))
            .build()
            .unwrap();
        let args = match tool {
            "read_file" => json!({"path": "sub/file.txt"}),
            _ => json!({"path": "sub/file.txt", "content": "pwned\n", "overwrite": true}),
        };
        let r = run1(&rt, &session(), call("c", tool, args)).await;
        assert_eq!(
            (r.status(), r.error_type()),
            (Status::SandboxViolation, Some(ErrorType::SandboxViolation)),
            "{tool}"
        );
        assert!(!r.projection().text.contains("SECRET"));
        assert_eq!(
            std::fs::read_to_string(outside.path().join("file.txt")).unwrap(),
            "SECRET\n"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_ranges_hash_and_truncation() {
    let f = Fixture::new();
    let text: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    f.write("big.txt", &text);
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "read_file",
            json!({"path": "big.txt", "start_line": 2, "end_line": 3}),
        ),
    )
    .await;
    let s = r.structured().unwrap();
    assert_eq!(s["content"], "     2\tline 2\n     3\tline 3\n");
    assert_eq!(
        s["content_hash"],
        blake3::hash(text.as_bytes()).to_hex().to_string()
    );
    assert_eq!(
        (
            s["start_line"].as_u64(),
            s["end_line"].as_u64(),
            s["total_lines"].as_u64()
        ),
        (Some(2), Some(3), Some(3000))
    );
    assert_eq!(s["truncated"], false);
    // No end_line: the byte limit (32 KiB) cuts first, and says where to continue.
    let r = run1(
        &rt,
        &session(),
        call("c", "read_file", json!({"path": "big.txt"})),
    )
    .await;
    let s = r.structured().unwrap();
    assert_eq!(s["truncated"], true);
    let end = s["end_line"].as_u64().unwrap();
    assert!(end < 3000);
    assert!(
        r.output()
            .unwrap()
            .contains(&format!("continue with start_line={}", end + 1))
    );
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "read_file",
            json!({"path": "big.txt", "start_line": 5000}),
        ),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::SemanticValidationError));
    let r = run1(
        &rt,
        &session(),
        call("c", "read_file", json!({"path": "missing.txt"})),
    )
    .await;
    assert_eq!(
        (r.error_type(), r.hint()),
        (
            Some(ErrorType::ResourceNotFound),
            Some("The file does not exist. Use search_files or glob to find the right path.")
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_and_glob_respect_ignore_files() {
    let f = Fixture::new();
    f.write(".gitignore", "build/\n*.log\n");
    f.write(
        "src/auth/login.py",
        "LOGIN_TIMEOUT = 5\nx = LOGIN_TIMEOUT\n",
    );
    f.write("src/app.py", "from auth import LOGIN_TIMEOUT\n");
    f.write("build/out.py", "LOGIN_TIMEOUT = 5\n");
    f.write("debug.log", "LOGIN_TIMEOUT\n");
    f.write(".hidden/x.py", "LOGIN_TIMEOUT\n");
    std::fs::write(f.path().join("bin.dat"), b"LOGIN_TIMEOUT\0\x01").unwrap();
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "search_files",
            json!({"pattern": "login_timeout", "case_sensitive": false}),
        ),
    )
    .await;
    assert_eq!(
        r.structured().unwrap(),
        &json!({"files": [{"path": "src/auth/login.py", "matches": 2}, {"path": "src/app.py", "matches": 1}], "total_files": 2, "truncated": false, "withheld": 0})
    );
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "search_files",
            json!({"pattern": "LOGIN", "glob": "src/auth/**", "max_results": 1}),
        ),
    )
    .await;
    assert_eq!(
        r.structured().unwrap()["files"],
        json!([{"path": "src/auth/login.py", "matches": 2}])
    );
    let r = run1(
        &rt,
        &session(),
        call("c", "search_files", json!({"pattern": "(unclosed"})),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::InvalidArguments));
    let r = run1(
        &rt,
        &session(),
        call("c", "glob", json!({"pattern": "**/*.py"})),
    )
    .await;
    assert_eq!(
        r.structured().unwrap(),
        &json!({"paths": ["src/app.py", "src/auth/login.py"], "truncated": false, "withheld": 0})
    );
    let r = run1(
        &rt,
        &session(),
        call("c", "glob", json!({"pattern": "src/*.py"})),
    )
    .await;
    assert_eq!(r.structured().unwrap()["paths"], json!(["src/app.py"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_file_and_apply_patch() {
    let f = Fixture::new();
    let rt = f
        .builder()
        .approver(Scripted::new(ApprovalOutcome::AllowOnce))
        .build()
        .unwrap();
    let s = session();
    let w = |args| call("w", "write_file", args);
    let r = run1(
        &rt,
        &s,
        w(json!({"path": "tests/t.py", "content": "a = 1\na = 1\n"})),
    )
    .await;
    let hash = blake3::hash(b"a = 1\na = 1\n").to_hex().to_string();
    assert_eq!(
        r.structured().unwrap(),
        &json!({"path": "tests/t.py", "bytes": 12, "content_hash": hash, "created": true})
    );
    // The same content again is harmless; other content needs overwrite.
    assert!(
        run1(
            &rt,
            &s,
            w(json!({"path": "tests/t.py", "content": "a = 1\na = 1\n"}))
        )
        .await
        .is_success()
    );
    let r = run1(&rt, &s, w(json!({"path": "tests/t.py", "content": "b\n"}))).await;
    assert_eq!(r.error_type(), Some(ErrorType::PreconditionFailed));
    let patch = |old: &str| {
        call(
            "p",
            "apply_patch",
            json!({"path": "tests/t.py", "expected_hash": hash, "edits": [{"old_text": old, "new_text": "b = 2"}]}),
        )
    };
    let r = run1(&rt, &s, patch("a = 1")).await;
    assert_eq!(r.error_type(), Some(ErrorType::SemanticValidationError));
    assert_eq!(
        r.summary(),
        "edit 1: old_text occurs 2 times in `tests/t.py`; include more surrounding text so it occurs once. Nothing was changed"
    );
    let r = run1(&rt, &s, patch("zzz")).await;
    assert_eq!(r.error_type(), Some(ErrorType::SemanticValidationError));
    let r = run1(&rt, &s, call("p", "apply_patch", json!({"path": "tests/t.py", "expected_hash": hash, "edits": [{"old_text": "a = 1\na", "new_text": "b = 2\na"}]}))).await;
    assert!(r.is_success(), "{}", r.projection().text);
    let st = r.structured().unwrap();
    assert_eq!(
        st["diff"],
        "--- a/tests/t.py\n+++ b/tests/t.py\n@@ -1,2 +1,2 @@\n-a = 1\n+b = 2\n a = 1\n"
    );
    assert_eq!(
        st["new_hash"],
        blake3::hash(b"b = 2\na = 1\n").to_hex().to_string()
    );
    assert_eq!(f.read("tests/t.py"), "b = 2\na = 1\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_output_becomes_an_artifact_that_read_artifact_pages() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let s = session();
    let text: String = (1..=500).map(|i| format!("log line {i}\n")).collect();
    let r = run1(&rt, &s, call("e", "echo", json!({"text": text}))).await;
    assert!(r.truncated());
    let artifact = r.artifacts()[0].clone();
    assert_eq!((artifact.size, artifact.lines), (text.len() as u64, 500));
    assert!(
        r.projection()
            .text
            .contains(&format!("Full output: artifact {}", artifact.id))
    );
    let r = run1(
        &rt,
        &s,
        call(
            "a",
            "read_artifact",
            json!({"artifact_id": artifact.id, "start_line": 499}),
        ),
    )
    .await;
    assert_eq!(
        r.structured().unwrap(),
        &json!({"text": "log line 499\nlog line 500\n", "start": 499, "end": 500, "total_bytes": text.len(), "total_lines": 500, "truncated": false})
    );
    let r = run1(
        &rt,
        &s,
        call(
            "a",
            "read_artifact",
            json!({"artifact_id": artifact.id, "offset": 0, "length": 9}),
        ),
    )
    .await;
    assert_eq!(r.structured().unwrap()["text"], "log line ");
    assert_eq!(r.structured().unwrap()["truncated"], true);
    let r = run1(
        &rt,
        &s,
        call(
            "a",
            "read_artifact",
            json!({"artifact_id": artifact.id, "offset": 0, "start_line": 1}),
        ),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::SemanticValidationError));
    let missing = format!("blake3:{}", "0".repeat(64));
    let r = run1(
        &rt,
        &s,
        call("a", "read_artifact", json!({"artifact_id": missing})),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::ResourceNotFound));
}

/// A link that stays inside the workspace is judged by what it leads to: `envlink -> .env` is
/// `.env` to the permission rules, the resource keys and the tool, and the model is told why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inside_links_are_judged_by_their_target() {
    let f = Fixture::new();
    f.write(".env", "API_KEY=SECRET\n");
    f.write("src/login.py", "TIMEOUT = 5\n");
    let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, f.path().join(at));
    link(".env", "envlink").unwrap();
    link("../.env", "src/up").unwrap();
    link("src", "alias").unwrap();
    let approver = Scripted::new(ApprovalOutcome::AllowOnce);
    let rt = f.builder().approver(approver.clone()).build().unwrap();
    let s = session();
    for path in ["envlink", "src/up", "./alias/../envlink"] {
        let r = run1(&rt, &s, call("c", "read_file", json!({"path": path}))).await;
        assert_eq!(
            (r.status(), r.error_type()),
            (Status::Denied, Some(ErrorType::PolicyDenied)),
            "{path}"
        );
        assert!(!r.projection().text.contains("SECRET"), "{path}");
        assert!(
            r.summary().ends_with("leads to `.env`."),
            "{path}: {}",
            r.summary()
        );
    }
    // Writes are judged the same way; the secret and the link stay as they were.
    let hash = blake3::hash(b"API_KEY=SECRET\n").to_hex().to_string();
    let r = run1(
        &rt,
        &s,
        call(
            "c",
            "apply_patch",
            json!({"path": "envlink", "expected_hash": hash, "edits": [{"old_text": "SECRET", "new_text": "x"}]}),
        ),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::PolicyDenied));
    let r = run1(
        &rt,
        &s,
        call(
            "c",
            "write_file",
            json!({"path": "envlink", "content": "x", "overwrite": true}),
        ),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::PolicyDenied));
    assert_eq!(f.read(".env"), "API_KEY=SECRET\n");
    assert!(f.path().join("envlink").is_symlink());
    assert_eq!(
        approver.asked(),
        0,
        "a denied call is never offered for approval"
    );

    // An allowed read through a link says which file it read.
    let r = run1(
        &rt,
        &s,
        call("c", "read_file", json!({"path": "alias/login.py"})),
    )
    .await;
    assert!(r.is_success(), "{}", r.projection().text);
    assert!(
        r.output()
            .unwrap()
            .contains("[src/login.py: lines 1-1 of 1")
    );
}

/// A link as a write target: the write goes through it to the file it leads to (which the
/// rules and the approver saw), and the link stays a link. A link that leads nowhere is
/// refused: writing "through" it would replace the link instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_through_an_inside_link_reach_its_target() {
    let f = Fixture::new();
    f.write("src/a.py", "TIMEOUT = 5\n");
    std::os::unix::fs::symlink("src/a.py", f.path().join("a_link.py")).unwrap();
    std::os::unix::fs::symlink("src/missing.py", f.path().join("dangling.py")).unwrap();
    let approver = Scripted::new(ApprovalOutcome::AllowOnce);
    let rt = f.builder().approver(approver.clone()).build().unwrap();
    let s = session();
    let r = run1(
        &rt,
        &s,
        call(
            "w",
            "write_file",
            json!({"path": "a_link.py", "content": "TIMEOUT = 30\n", "overwrite": true}),
        ),
    )
    .await;
    assert!(r.is_success(), "{}", r.projection().text);
    assert_eq!(r.structured().unwrap()["path"], "src/a.py");
    assert_eq!(f.read("src/a.py"), "TIMEOUT = 30\n");
    assert!(f.path().join("a_link.py").is_symlink());
    let asked = approver.requests.lock().unwrap()[0].clone();
    assert!(
        asked.arguments.contains(r#""path":"src/a.py""#),
        "{}",
        asked.arguments
    );

    let hash = blake3::hash(b"TIMEOUT = 30\n").to_hex().to_string();
    let r = run1(
        &rt,
        &s,
        call(
            "p",
            "apply_patch",
            json!({"path": "a_link.py", "expected_hash": hash, "edits": [{"old_text": "30", "new_text": "60"}]}),
        ),
    )
    .await;
    assert!(r.is_success(), "{}", r.projection().text);
    assert_eq!(f.read("src/a.py"), "TIMEOUT = 60\n");
    assert!(f.path().join("a_link.py").is_symlink());

    let r = run1(
        &rt,
        &s,
        call(
            "d",
            "write_file",
            json!({"path": "dangling.py", "content": "x\n"}),
        ),
    )
    .await;
    assert_eq!(
        (r.error_type(), r.summary()),
        (
            Some(ErrorType::SemanticValidationError),
            "path: `dangling.py` is a symbolic link whose target does not exist"
        )
    );
    assert!(f.path().join("dangling.py").is_symlink());
    assert!(!f.path().join("src/missing.py").exists());
}

/// A link that appears after validation, inside the workspace, is not followed: the builtin
/// was handed the path the rules judged, and that path now leads elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_that_appears_after_validation_is_refused() {
    struct LinkToEnv(std::path::PathBuf);
    impl Hook for LinkToEnv {
        fn points(&self) -> &[HookPoint] {
            &[HookPoint::BeforeExecute]
        }
        fn on(&self, _view: &CallView<'_>, _a: &mut Annotations) {
            std::fs::remove_file(self.0.join("notes.txt")).unwrap();
            std::os::unix::fs::symlink(".env", self.0.join("notes.txt")).unwrap();
        }
    }
    let f = Fixture::new();
    f.write(".env", "API_KEY=SECRET\n");
    f.write("notes.txt", "hello\n");
    let rt = f
        .builder()
        .hook(Arc::new(LinkToEnv(f.path().to_path_buf())))
        .build()
        .unwrap();
    let r = run1(
        &rt,
        &session(),
        call("c", "read_file", json!({"path": "notes.txt"})),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::SandboxViolation));
    assert!(!r.projection().text.contains("SECRET"));
    assert!(
        r.summary().contains("now leads to `.env`"),
        "{}",
        r.summary()
    );
}

/// glob through a linked folder lists the files there by their resolved paths.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_through_an_inside_link() {
    let f = Fixture::new();
    f.write("src/a.py", "x\n");
    std::os::unix::fs::symlink("src", f.path().join("alias")).unwrap();
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call("c", "glob", json!({"pattern": "alias/*.py"})),
    )
    .await;
    assert_eq!(r.structured().unwrap()["paths"], json!(["src/a.py"]));
}
