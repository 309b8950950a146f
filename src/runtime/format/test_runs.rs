//! `tests`: pass/fail/skip counts, the failing tests' names and the key lines of each failure,
//! read from the output of pytest, cargo test (libtest), cargo nextest, go test (`-v`), jest
//! and vitest. The runner is recognized by its summary line, so a wrapper script works too.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::json;

use super::{FormatInput, Formatted, clip};

/// Failures listed with their details.
const MAX_FAILURES: usize = 30;
/// Key lines kept per failure.
const MAX_DETAIL_LINES: usize = 12;
/// Bytes kept per failure.
const MAX_DETAIL_BYTES: usize = 1_500;

/// One failing test.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Failure {
    /// Its name as the runner prints it (a pytest node id, a Rust test path, …).
    pub name: String,
    /// The key lines: assertion, expected/actual, location.
    pub details: String,
}

/// What a runner reported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestReport {
    /// The runner recognized (`pytest`, `cargo`, `nextest`, `go`, `jest`, `vitest`).
    pub runner: &'static str,
    /// Passed tests.
    pub passed: u64,
    /// Failed tests (errors included).
    pub failed: u64,
    /// Skipped or ignored tests.
    pub skipped: u64,
    /// The failing tests.
    pub failures: Vec<Failure>,
}

impl TestReport {
    /// "2 failed, 3 passed, 1 skipped".
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.failed > 0 {
            parts.push(format!("{} failed", self.failed));
        }
        parts.push(format!("{} passed", self.passed));
        if self.skipped > 0 {
            parts.push(format!("{} skipped", self.skipped));
        }
        parts.join(", ")
    }
}

fn re(cell: &'static OnceLock<Option<Regex>>, src: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(src).ok()).as_ref()
}

macro_rules! regex {
    ($src:expr) => {{
        static CELL: OnceLock<Option<Regex>> = OnceLock::new();
        re(&CELL, $src)
    }};
}

/// "3 passed, 1 failed" style counts anywhere in a line: (number, word) pairs.
fn counts(line: &str) -> Vec<(u64, String)> {
    let Some(r) = regex!(r"(\d+) ([a-z]+)") else {
        return Vec::new();
    };
    r.captures_iter(line)
        .filter_map(|c| Some((c[1].parse().ok()?, c[2].to_owned())))
        .collect()
}

/// Removes ANSI colour codes.
fn plain(text: &str) -> String {
    match regex!(r"\x1b\[[0-9;?]*[A-Za-z]") {
        Some(r) => r.replace_all(text, "").into_owned(),
        None => text.to_owned(),
    }
}

/// Reads a runner's report from its output (`None`: no runner summary found).
pub fn parse(output: &str) -> Option<TestReport> {
    let text = plain(output);
    let lines: Vec<&str> = text.lines().collect();
    cargo(&lines)
        .or_else(|| nextest(&lines))
        .or_else(|| pytest(&lines))
        .or_else(|| jest(&lines))
        .or_else(|| vitest(&lines))
        .or_else(|| go(&lines))
}

/// Formats a test run.
pub fn format(input: &FormatInput<'_>) -> Formatted {
    let all = input.combined();
    let report = parse(&all);
    let code = input.shell_code();
    let (summary, failure) = match &report {
        Some(r) => {
            let s = r.summary();
            // Tests that ran and failed are what the caller asked to learn, not a failure of
            // the tool: the counts and failures are the result, and running the suite again
            // would only repeat them. A runner that reported no failing test and still
            // exited non-zero (a collection error, a crash, a signal) did fail.
            let ran_and_failed = r.failed > 0
                && input.signal.is_none()
                && input.exit_code.is_some_and(|c| (1..128).contains(&c));
            let failed = !input.succeeded() && !ran_and_failed;
            (s.clone(), failed.then_some(s))
        }
        None => {
            let s = "no test results in the output".to_owned();
            let f = input
                .exit_failure()
                .map(|m| format!("{m}; no test results in the output"));
            (s, f)
        }
    };
    let r = report.unwrap_or_default();
    let mut text = String::new();
    for f in &r.failures {
        text.push_str(&format!("FAILED {}\n", f.name));
        for l in f.details.lines() {
            text.push_str(&format!("    {l}\n"));
        }
    }
    if !text.is_empty() {
        text.push_str("--- output ---\n");
    }
    text.push_str(&all);
    Formatted {
        summary: Some(summary.clone()),
        structured: Some(json!({
            "command": input.command,
            "exit_code": code,
            "passed": r.passed,
            "failed": r.failed,
            "skipped": r.skipped,
            "failures": r.failures.iter().map(|f| json!({"name": f.name, "details": f.details})).collect::<Vec<_>>(),
            "summary": summary,
        })),
        text,
        failure,
        left_out: false,
    }
}

/// Keeps the key lines of a failure block, bounded.
fn key_lines<'a>(block: impl Iterator<Item = &'a str>, keep: impl Fn(&str) -> bool) -> String {
    let picked: Vec<&str> = block
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && keep(l))
        .take(MAX_DETAIL_LINES)
        .collect();
    clip(&picked.join("\n"), MAX_DETAIL_BYTES).to_owned()
}

/// Adds a failure (once per name, up to the limit).
fn push_failure(out: &mut Vec<Failure>, name: &str, details: String) {
    if out.len() < MAX_FAILURES && !out.iter().any(|f| f.name == name) {
        out.push(Failure {
            name: name.to_owned(),
            details,
        });
    }
}

fn pytest(lines: &[&str]) -> Option<TestReport> {
    let summary = regex!(r"^=+ (.*) in [\d.]+m?s(?: \([^)]*\))? =+$")?;
    let last = lines.iter().rev().find_map(|l| summary.captures(l))?;
    let mut r = TestReport {
        runner: "pytest",
        ..TestReport::default()
    };
    for (n, word) in counts(&last[1]) {
        match word.as_str() {
            "passed" | "xpassed" => r.passed += n,
            "failed" | "error" | "errors" => r.failed += n,
            "skipped" | "xfailed" => r.skipped += n,
            _ => {}
        }
    }
    // Failure sections: `____ test_name ____` up to the next section or `====` line.
    let header = regex!(r"^_{3,} (.+?) _{3,}$")?;
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if let Some(c) = header.captures(lines[i]) {
            let title = c[1].to_owned();
            let end = lines[i + 1..]
                .iter()
                .position(|l| header.is_match(l) || l.starts_with("=="))
                .map_or(lines.len(), |p| i + 1 + p);
            let details = key_lines(lines[i + 1..end].iter().copied(), |l| {
                l.starts_with("E ") || is_location(l)
            });
            sections.push((title, details));
            i = end;
        } else {
            i += 1;
        }
    }
    let failed = regex!(r"^(?:FAILED|ERROR) (\S+)")?;
    for l in lines {
        if let Some(c) = failed.captures(l) {
            let id = &c[1];
            let last = id.rsplit("::").next().unwrap_or(id);
            let details = sections
                .iter()
                .find(|(t, _)| t.rsplit('.').next() == Some(last) || t.ends_with(last))
                .map(|(_, d)| d.clone())
                .unwrap_or_default();
            push_failure(&mut r.failures, id, details);
        }
    }
    Some(r)
}

/// A `path/file.py:12: AssertionError`-style location line.
fn is_location(l: &str) -> bool {
    regex!(r"^\S+:\d+: \S").is_some_and(|r| r.is_match(l))
}

fn cargo(lines: &[&str]) -> Option<TestReport> {
    let result = regex!(
        r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured; \d+ filtered out"
    )?;
    let mut r = TestReport {
        runner: "cargo",
        ..TestReport::default()
    };
    let mut found = false;
    for l in lines {
        if let Some(c) = result.captures(l) {
            found = true;
            r.passed += c[1].parse::<u64>().unwrap_or(0);
            r.failed += c[2].parse::<u64>().unwrap_or(0);
            r.skipped += c[3].parse::<u64>().unwrap_or(0);
        }
    }
    if !found {
        return None;
    }
    let failed = regex!(r"^test (\S+) \.\.\. FAILED$")?;
    let section = regex!(r"^---- (\S+) stdout ----$")?;
    for l in lines {
        if let Some(c) = failed.captures(l) {
            let name = &c[1];
            let start = lines
                .iter()
                .position(|x| section.captures(x).is_some_and(|s| &s[1] == name));
            let details = start
                .map(|s| {
                    let end = lines[s + 1..]
                        .iter()
                        .position(|x| x.starts_with("---- ") || *x == "failures:")
                        .map_or(lines.len(), |p| s + 1 + p);
                    key_lines(lines[s + 1..end].iter().copied(), |x| {
                        !x.starts_with("note: run with `RUST_BACKTRACE")
                    })
                })
                .unwrap_or_default();
            push_failure(&mut r.failures, name, details);
        }
    }
    Some(r)
}

fn nextest(lines: &[&str]) -> Option<TestReport> {
    let summary = regex!(r"^\s*Summary \[[^\]]*\] (.*)$")?;
    let last = lines.iter().rev().find_map(|l| summary.captures(l))?;
    let mut r = TestReport {
        runner: "nextest",
        ..TestReport::default()
    };
    for (n, word) in counts(&last[1]) {
        match word.as_str() {
            "passed" => r.passed += n,
            "failed" | "timed" => r.failed += n,
            "skipped" => r.skipped += n,
            _ => {}
        }
    }
    let fail = regex!(r"^\s*(?:FAIL|TIMEOUT) \[[^\]]*\] (.+)$")?;
    for l in lines {
        if let Some(c) = fail.captures(l) {
            let name = c[1].trim();
            let start = lines
                .iter()
                .position(|x| x.contains("--- STD") && x.contains(name));
            let details = start
                .map(|s| {
                    key_lines(
                        lines[s + 1..]
                            .iter()
                            .copied()
                            .take_while(|x| !x.contains("--- STD")),
                        |x| !x.starts_with("note: run with `RUST_BACKTRACE"),
                    )
                })
                .unwrap_or_default();
            push_failure(&mut r.failures, name, details);
        }
    }
    Some(r)
}

fn jest(lines: &[&str]) -> Option<TestReport> {
    let tests = regex!(r"^Tests:\s+(.*)\d+ total")?;
    let last = lines.iter().rev().find_map(|l| tests.captures(l))?;
    let mut r = TestReport {
        runner: "jest",
        ..TestReport::default()
    };
    for (n, word) in counts(&last[1]) {
        match word.as_str() {
            "passed" => r.passed += n,
            "failed" => r.failed += n,
            "skipped" | "todo" => r.skipped += n,
            _ => {}
        }
    }
    let bullet = regex!(r"^\s*● (.+)$")?;
    for (i, l) in lines.iter().enumerate() {
        if let Some(c) = bullet.captures(l) {
            let name = c[1].trim();
            if name == "Test suite failed to run" {
                continue;
            }
            let block = lines[i + 1..]
                .iter()
                .copied()
                .take_while(|x| !bullet.is_match(x) && !x.starts_with("Test Suites:"));
            let details = key_lines(block.map(str::trim_start), |t| {
                !t.starts_with("at ") || t.contains(".test.") || t.contains(".spec.")
            });
            push_failure(&mut r.failures, name, details);
        }
    }
    Some(r)
}

fn vitest(lines: &[&str]) -> Option<TestReport> {
    let tests = regex!(r"^\s*Tests\s+(.*)\(\d+\)\s*$")?;
    let last = lines.iter().rev().find_map(|l| tests.captures(l))?;
    let mut r = TestReport {
        runner: "vitest",
        ..TestReport::default()
    };
    for (n, word) in counts(&last[1]) {
        match word.as_str() {
            "passed" => r.passed += n,
            "failed" => r.failed += n,
            "skipped" | "todo" => r.skipped += n,
            _ => {}
        }
    }
    let fail = regex!(r"^\s*FAIL\s+(.+ > .+)$")?;
    for (i, l) in lines.iter().enumerate() {
        if let Some(c) = fail.captures(l) {
            let block = lines[i + 1..]
                .iter()
                .copied()
                .take_while(|x| !fail.is_match(x) && !x.contains('⎯'));
            push_failure(&mut r.failures, c[1].trim(), key_lines(block, |_| true));
        }
    }
    Some(r)
}

fn go(lines: &[&str]) -> Option<TestReport> {
    let verdict = regex!(r"^--- (PASS|FAIL|SKIP): (\S+)")?;
    let end = regex!(r"^(?:ok|FAIL|PASS)\b")?;
    if !lines.iter().any(|l| verdict.is_match(l) || end.is_match(l)) {
        return None;
    }
    let mut r = TestReport {
        runner: "go",
        ..TestReport::default()
    };
    let mut last_run = 0;
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("=== RUN ") {
            last_run = i;
        }
        let Some(c) = verdict.captures(l) else {
            continue;
        };
        match &c[1] {
            "PASS" => r.passed += 1,
            "SKIP" => r.skipped += 1,
            _ => {
                r.failed += 1;
                // Log lines come between `=== RUN` and the verdict (and indented after it).
                let before = lines[last_run + 1..i].iter().copied();
                let after = lines[i + 1..]
                    .iter()
                    .copied()
                    .take_while(|x| x.starts_with("    "));
                let details = key_lines(before.chain(after), |x| {
                    x.starts_with("    ") && !x.trim_start().starts_with("---")
                });
                let details = details
                    .lines()
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join("\n");
                push_failure(&mut r.failures, &c[2], details);
            }
        }
    }
    Some(r)
}

#[cfg(test)]
#[path = "test_runs_samples.rs"]
mod samples;
