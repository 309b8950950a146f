//! `read_file`: a range of numbered lines, the blake3 hash of the whole file (apply_patch's
//! `expected_hash`) and a truncation marker when the range or the byte limit cut the output.
//!
//! The file is opened race-free and vetted ([`Workspace::open_file`](crate::runtime::workspace::Workspace::open_file)):
//! protected files, `.git` internals and other names of protected files are refused
//! (POLICY_DENIED), FIFOs, sockets and devices too (without blocking). It is streamed: memory
//! holds one read buffer and the lines shown, however large the file or long its lines; files
//! above `budgets.read_file_size` are refused (OUTPUT_LIMIT), since hashing them all would take
//! the call's time.

use std::io::Read;

use serde::Deserialize;
use serde_json::{Value, json};

use super::lines::Lines;
use super::{
    BuiltinContext, Step, access_failure, checked, io_failure, parse_args, shown, to_usize,
    too_large,
};
use crate::ir::ErrorType;
use crate::runtime::exec::{ExecFailure, RawOutcome};
use crate::runtime::workspace::AccessError;

/// The most lines one call returns (the contract says 2000 after start_line).
const MAX_RANGE_LINES: u64 = 2000;
/// Room left under the byte limit for the footer the model reads.
const FOOTER_RESERVE: u64 = 512;
/// Lines left under the line limit for the footer (the range and hash, a long-line note, the
/// truncation note), so that the output policy never cuts it off.
const FOOTER_LINES: u64 = 3;

#[derive(Deserialize)]
struct Args {
    path: String,
    #[serde(default)]
    start_line: Option<u64>,
    #[serde(default)]
    end_line: Option<u64>,
}

pub(super) fn run(args: &Value, cx: &BuiltinContext) -> Step<RawOutcome> {
    let a: Args = parse_args(args, "read_file")?;
    let p = checked(cx, &a.path)?;
    let file = cx.workspace.open_file(p.as_str()).map_err(|e| match e {
        AccessError::IsAFolder { .. } => ExecFailure::new(
            ErrorType::SemanticValidationError,
            format!(
                "`{}` is a folder; use list_dir to see what is in it",
                a.path
            ),
        ),
        e => access_failure(e, "nothing was read"),
    })?;
    let cap = cx.workspace.file_limits().read;
    if file.size() > cap {
        return Err(too_large(
            p.as_str(),
            file.size(),
            cap,
            "read_file",
            "read_file_size",
            "Search it with search_files, or read a part with a command tool.",
        ));
    }
    let start = a.start_line.unwrap_or(1).max(1);
    let max_lines = MAX_RANGE_LINES.min(cx.output.max_lines.saturating_sub(FOOTER_LINES).max(1));
    let last_wanted = a
        .end_line
        .unwrap_or(u64::MAX)
        .min(start.saturating_add(max_lines - 1));
    let budget = to_usize(cx.output.max_bytes.saturating_sub(FOOTER_RESERVE).max(256));

    // One more byte than the cap: a file that grows past it while being read is refused too.
    let source = file.into_file().take(cap.saturating_add(1));
    let mut lines = Lines::new(source, budget, true, cx.cancel.clone());
    let mut content = String::new();
    let (mut n, mut last_shown) = (0u64, 0u64);
    let mut full = false;
    let mut long_line: Option<u64> = None;
    loop {
        let keep = !full && (start..=last_wanted).contains(&(n + 1));
        let Some(line) = lines.next_line(keep).map_err(|e| io_failure(&e, &a.path))? else {
            break;
        };
        n += 1;
        if !keep {
            continue;
        }
        let text = String::from_utf8_lossy(line.bytes);
        let numbered = format!("{n:>6}\t{text}\n");
        if content.len() + numbered.len() <= budget && !line.cut {
            content.push_str(&numbered);
            last_shown = n;
            continue;
        }
        // A line longer than the whole budget is shown in part when it comes first, so the
        // model can always move on; otherwise the output ends before it.
        if content.is_empty() {
            let mut cut = numbered;
            let mut end = budget.min(cut.len()).saturating_sub(1);
            while !cut.is_char_boundary(end) {
                end -= 1;
            }
            cut.truncate(end);
            cut.push('\n');
            content = cut;
            last_shown = n;
            long_line = Some(n);
        }
        full = true;
    }
    if lines.bytes_read() > cap {
        return Err(too_large(
            p.as_str(),
            lines.bytes_read(),
            cap,
            "read_file",
            "read_file_size",
            "It grew while it was read; read it again later, or with a command tool.",
        ));
    }
    let hash = lines
        .finish()
        .map_err(|e| io_failure(&e, &a.path))?
        .unwrap_or_default();
    let total = n;
    if start > total && total > 0 {
        return Err(ExecFailure::new(
            ErrorType::SemanticValidationError,
            format!(
                "start_line {start} is past the end of `{}`, which has {total} lines",
                a.path
            ),
        ));
    }
    let end = if last_shown == 0 {
        start - 1
    } else {
        last_shown
    };
    let asked_end = a.end_line.unwrap_or(total).min(total);
    let truncated = end < asked_end || long_line.is_some();
    let path = shown(&p).to_owned();
    let mut text = content.clone();
    let range = if total == 0 {
        "empty file".to_owned()
    } else {
        format!("lines {start}-{end} of {total}")
    };
    text.push_str(&format!("[{path}: {range}; content_hash {hash}]\n"));
    if let Some(l) = long_line {
        text.push_str(&format!(
            "[line {l} is longer than this tool shows at once; only its start is shown]\n"
        ));
    }
    if end < asked_end {
        text.push_str(&format!(
            "[truncated: lines {}-{asked_end} not shown; continue with start_line={}]\n",
            end + 1,
            end + 1
        ));
    }
    let structured = json!({
        "content": content,
        "content_hash": hash,
        "start_line": start,
        "end_line": end,
        "total_lines": total,
        "truncated": truncated,
    });
    let mut out = RawOutcome::success(structured, text).with_summary(format!("{path}: {range}"));
    out.truncated = truncated;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::Builtin;
    use super::super::testing::{Tree, run};
    use crate::ir::ErrorType;
    use serde_json::json;

    fn refusal(t: &Tree, path: &str) -> (ErrorType, String) {
        let r = run(&t.cx, Builtin::ReadFile, json!({"path": path}));
        assert!(r.structured.is_none() && r.text.is_none(), "{path}: {r:?}");
        r.failure.unwrap()
    }

    /// Below the permission stage: protected files, `.git` internals at any depth and another
    /// name (a hard link) of `.env` are refused by the builtin itself.
    #[test]
    fn protected_targets_are_refused() {
        let t = Tree::new();
        for path in [
            ".env",
            "keys/server.pem",
            "keys/id_rsa",
            ".git/config",
            "vendor/lib/.git/config",
            "vendor/lib/.env",
        ] {
            let (ty, message) = refusal(&t, path);
            assert_eq!(ty, ErrorType::PolicyDenied, "{path}: {message}");
            assert!(message.ends_with("; nothing was read"), "{message}");
            assert!(!message.contains(Tree::SECRET));
        }
        assert_eq!(
            refusal(&t, "notes.txt"),
            (
                ErrorType::PolicyDenied,
                "`notes.txt` is another name (a hard link) of a protected file (`.env`): Secrets are never readable or writable by tools; nothing was read".to_owned()
            )
        );
        let ok = run(&t.cx, Builtin::ReadFile, json!({"path": "src/app.py"}));
        assert!(ok.failure.is_none(), "{ok:?}");
    }

    /// A FIFO returns at once with a clear error instead of blocking the call.
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let t = Tree::new();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            t.path("pipe"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert_eq!(
            refusal(&t, "pipe"),
            (
                ErrorType::SemanticValidationError,
                "`pipe` is a FIFO (named pipe), not a regular file; nothing was read".to_owned()
            )
        );
    }

    /// Files above `budgets.read_file_size` are refused; a line longer than the output budget
    /// is shown in part, so the model can move on.
    #[test]
    fn size_cap_and_long_lines() {
        let mut t = Tree::new();
        let mut ws = crate::runtime::workspace::Workspace::open(t.dir.path()).unwrap();
        ws = ws.with_file_limits(crate::runtime::workspace::FileLimits {
            read: 1000,
            search: 1000,
            edit: 1000,
        });
        t.cx.workspace = std::sync::Arc::new(ws);
        std::fs::write(t.path("big.txt"), "x".repeat(1001)).unwrap();
        assert_eq!(
            refusal(&t, "big.txt"),
            (
                ErrorType::OutputLimit,
                "`big.txt` is 1001 bytes; read_file works on files up to 1000 bytes (budgets.read_file_size in toolgate.yaml). Search it with search_files, or read a part with a command tool.".to_owned()
            )
        );
        std::fs::write(t.path("long.txt"), format!("{}\nsecond\n", "y".repeat(900))).unwrap();
        t.cx.output.max_bytes = 700;
        let r = run(&t.cx, Builtin::ReadFile, json!({"path": "long.txt"}));
        let s = r.structured.unwrap();
        assert_eq!(
            (
                s["start_line"].clone(),
                s["end_line"].clone(),
                s["truncated"].clone()
            ),
            (json!(1), json!(1), json!(true))
        );
        // The budget is the byte limit less room for the footer, at least 256 bytes.
        assert!(s["content"].as_str().unwrap().len() <= 257);
        assert!(
            r.text.unwrap().contains(
                "[line 1 is longer than this tool shows at once; only its start is shown]"
            )
        );
        let r = run(
            &t.cx,
            Builtin::ReadFile,
            json!({"path": "long.txt", "start_line": 2}),
        );
        assert_eq!(r.structured.unwrap()["content"], "     2\tsecond\n");
    }
}
