//! The chapter's experiment 7 (Crash + Idempotency), on the real binary.
//!
//! A non-idempotent tool (`append_line`) appends one line — its call's idempotency key — to a
//! file; an idempotent one (`touch_marker`) writes a marker file. Each round runs a batch of
//! calls with `toolgate run --session round-N` and `kill -9`s it at a random moment: half the
//! rounds kill only toolgate (a process crash: each exec shim gets its parent-death signal and
//! stops the command it started),
//! half freeze it and kill it with every process under it (a machine crash: what had not
//! happened never will). Then, as a harness would:
//!
//! 1. resubmit the same calls: recovery settles what the crash cut off; finished calls replay;
//!    every cut-off `append_line` must come back UNKNOWN_OUTCOME (never run again), every
//!    cut-off `touch_marker` must run again and succeed, nothing else may happen;
//! 2. a person checks the log for each uncertain call and settles it with
//!    `toolgate journal resolve --as succeeded|failed`;
//! 3. resubmit again: everything succeeds, and the log holds each round's keys exactly once.
//!
//! After every step the log must never contain a line twice. The seed comes from
//! `TOOLGATE_CRASH_SEED` (else the clock) and is printed, with the tally, on stdout
//! (`cargo test --test crash_recovery -- --nocapture`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Rounds with a kill (after one calibration round without).
const ROUNDS: usize = 32;
/// Calls per round; every fourth is `touch_marker`, the rest `append_line`.
const CALLS: usize = 48;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_toolgate")
}

/// A small deterministic generator (xorshift64*), so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct Lab {
    ws: tempfile::TempDir,
}

impl Lab {
    fn new() -> Self {
        let ws = tempfile::tempdir().unwrap();
        let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/durability");
        for f in ["toolgate.yaml", "append_line.yaml", "touch_marker.yaml"] {
            std::fs::copy(fixture.join(f), ws.path().join(f)).unwrap();
        }
        std::fs::create_dir(ws.path().join("markers")).unwrap();
        Lab { ws }
    }

    fn path(&self) -> &Path {
        self.ws.path()
    }

    fn toolgate(&self, args: &[&str]) -> Output {
        Command::new(bin())
            .args(args)
            .current_dir(self.path())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn write_calls(&self, round: usize) -> String {
        let name = format!("calls-{round}.jsonl");
        let mut text = String::new();
        for i in 1..=CALLS {
            let tool = if i % 4 == 0 {
                "touch_marker"
            } else {
                "append_line"
            };
            text.push_str(&format!(
                "{{\"name\": \"{tool}\", \"arguments\": {{\"n\": \"{i}\"}}}}\n"
            ));
        }
        std::fs::write(self.path().join(&name), text).unwrap();
        name
    }

    fn start_run(&self, calls: &str, session: &str) -> Child {
        Command::new(bin())
            .args(["run", "--calls", calls, "--session", session])
            .current_dir(self.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// `toolgate run --format json`: the results by call id.
    fn run(&self, calls: &str, session: &str) -> (BTreeMap<String, Value>, String) {
        let o = self.toolgate(&[
            "run",
            "--calls",
            calls,
            "--session",
            session,
            "--format",
            "json",
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "toolgate run failed: {stderr}"
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let results = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["call_id"].as_str().unwrap().to_owned(), r.clone()))
            .collect();
        (results, stderr)
    }

    /// The operations of a session (and status), as `toolgate journal list --operations` lists
    /// them: what ran or may have, without the calls answered from the journal.
    fn list(&self, session: &str, status: Option<&str>) -> Vec<Value> {
        let mut args = vec![
            "journal",
            "list",
            "--operations",
            "--session",
            session,
            "--format",
            "json",
        ];
        if let Some(s) = status {
            args.extend(["--status", s]);
        }
        let o = self.toolgate(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice::<Value>(&o.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    fn log_lines(&self) -> Vec<String> {
        match std::fs::read_to_string(self.path().join("log")) {
            Ok(t) => t.lines().map(str::to_owned).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Panics when a line was written twice; returns the lines.
    fn no_duplicates(&self, when: &str) -> BTreeSet<String> {
        let lines = self.log_lines();
        let mut seen = BTreeSet::new();
        for l in &lines {
            assert!(seen.insert(l.clone()), "{when}: `{l}` was written twice");
        }
        seen
    }

    /// Waits until no process works in the workspace any more (orphaned commands finish).
    fn wait_for_orphans(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !processes_in(self.path()).is_empty() {
            assert!(
                Instant::now() < deadline,
                "orphaned commands did not finish"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Processes whose working folder is `dir`.
fn processes_in(dir: &Path) -> Vec<i32> {
    let dir = dir.canonicalize().unwrap();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if std::fs::read_link(e.path().join("cwd")).is_ok_and(|c| c == dir) {
            out.push(pid);
        }
    }
    out
}

/// Waits until every thread of `pid` is stopped (or gone), as SIGSTOP takes effect per thread.
fn wait_until_stopped(pid: i32) {
    let stopped = || {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return true;
        };
        tasks.flatten().all(|t| {
            std::fs::read_to_string(t.path().join("stat")).map_or(true, |s| {
                s.rsplit(')')
                    .next()
                    .and_then(|rest| rest.split_whitespace().next())
                    .is_none_or(|state| matches!(state, "T" | "t" | "Z" | "X"))
            })
        })
    };
    for _ in 0..2000 {
        if stopped() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("toolgate ({pid}) did not stop within 2 s of SIGSTOP");
}

/// Every descendant of `pid` (by parent pid).
fn descendants(pid: i32) -> Vec<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<i32>().ok());
        if let Some(pp) = ppid {
            children.entry(pp).or_default().push(p);
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for c in children.get(&p).into_iter().flatten() {
            out.push(*c);
            todo.push(*c);
        }
    }
    out
}

fn signal(pid: i32, sig: rustix::process::Signal) {
    if let Some(p) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(p, sig);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Crash {
    /// `kill -9` of toolgate alone.
    Process,
    /// toolgate frozen, then it and every process under it killed.
    Machine,
}

/// The tally printed at the end.
#[derive(Default, Debug)]
struct Tally {
    kills: BTreeMap<&'static str, usize>,
    calls: usize,
    finished_before_kill: usize,
    replayed: usize,
    cut_off_appends: usize,
    cut_off_markers: usize,
    unknown_outcome: usize,
    resolved_succeeded: usize,
    resolved_failed: usize,
    lines: usize,
}

fn status(r: &Value) -> (&str, bool) {
    (
        r["status"].as_str().unwrap_or(""),
        r["replayed"].as_bool().unwrap_or(false),
    )
}

#[test]
fn crashes_never_run_an_action_twice_nor_lose_one() {
    let seed = std::env::var("TOOLGATE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        })
        | 1;
    println!("crash test seed: {seed} (TOOLGATE_CRASH_SEED={seed} repeats it)");
    let mut rng = Rng(seed);
    let lab = Lab::new();
    let mut tally = Tally::default();

    // Calibration: one round without a kill shows how long a run takes.
    let calls = lab.write_calls(0);
    let started = Instant::now();
    let (results, _) = lab.run(&calls, "round-0");
    let full_run = started.elapsed();
    assert_eq!(results.len(), CALLS);
    assert!(results.values().all(|r| status(r) == ("success", false)));
    lab.no_duplicates("calibration");
    println!("calibration: {CALLS} calls in {full_run:?}");

    for round in 1..=ROUNDS {
        let session = format!("round-{round}");
        let calls = lab.write_calls(round);
        let crash = if round % 2 == 0 {
            Crash::Process
        } else {
            Crash::Machine
        };
        let delay = Duration::from_micros(rng.below(full_run.as_micros() as u64 + 1));
        let lines_before = lab.log_lines().len();

        // The run, killed at a random moment.
        let mut child = lab.start_run(&calls, &session);
        std::thread::sleep(delay);
        let pid = i32::try_from(child.id()).unwrap();
        let kind = if child.try_wait().unwrap().is_some() {
            "the run had finished"
        } else {
            match crash {
                Crash::Process => {
                    signal(pid, rustix::process::Signal::KILL);
                    "process crash (kill -9 toolgate)"
                }
                Crash::Machine => {
                    // Everything stops at once: toolgate must not see its children die (and
                    // record their end) before it stops itself, so wait until every one of
                    // its threads has stopped.
                    signal(pid, rustix::process::Signal::STOP);
                    wait_until_stopped(pid);
                    for d in descendants(pid) {
                        signal(d, rustix::process::Signal::KILL);
                    }
                    signal(pid, rustix::process::Signal::KILL);
                    "machine crash (kill -9 toolgate and its children)"
                }
            }
        };
        child.wait().unwrap();
        *tally.kills.entry(kind).or_default() += 1;
        lab.no_duplicates("after the kill");
        let finished_before: BTreeSet<String> = lab
            .list(&session, None)
            .iter()
            .filter(|o| o["status"] == "success")
            .map(|o| o["call_id"].as_str().unwrap().to_owned())
            .collect();
        let cut_off: BTreeMap<String, String> = lab
            .list(&session, Some("started"))
            .iter()
            .map(|o| {
                (
                    o["call_id"].as_str().unwrap().to_owned(),
                    o["tool"].as_str().unwrap().to_owned(),
                )
            })
            .collect();

        // 1. Resubmit: recovery settles the cut-off calls; finished ones replay.
        let (results, stderr) = lab.run(&calls, &session);
        assert_eq!(results.len(), CALLS, "{stderr}");
        lab.no_duplicates("after the resubmission");
        for (id, r) in &results {
            let tool = r["tool"].as_str().unwrap();
            let expected = match (cut_off.contains_key(id), tool) {
                (true, "append_line") => ("unknown_outcome", false),
                (true, _) => ("success", false),
                (false, _) if finished_before.contains(id) => ("success", true),
                (false, _) => ("success", false),
            };
            assert_eq!(status(r), expected, "round {round}, {id} ({tool}): {r}");
            if status(r) == ("unknown_outcome", false) {
                let p = r["projection"].as_str().unwrap();
                assert!(p.contains("this may have happened"), "{p}");
            }
        }
        let cut_appends = cut_off.values().filter(|t| *t == "append_line").count();
        tally.calls += CALLS;
        tally.finished_before_kill += finished_before.len();
        tally.replayed += results.values().filter(|r| status(r).1).count();
        tally.cut_off_appends += cut_appends;
        tally.cut_off_markers += cut_off.len() - cut_appends;
        tally.unknown_outcome += results
            .values()
            .filter(|r| r["status"] == "unknown_outcome")
            .count();

        // 2. A person checks the log and settles each uncertain call.
        lab.wait_for_orphans();
        let lines = lab.no_duplicates("after the orphans finished");
        let uncertain = lab.list(&session, Some("unknown_outcome"));
        assert_eq!(uncertain.len(), cut_appends, "round {round}");
        for op in &uncertain {
            let key = format!("{session}:{}", op["call_id"].as_str().unwrap());
            let (verdict, note) = if lines.contains(&key) {
                tally.resolved_succeeded += 1;
                ("succeeded", "its line is in the log")
            } else {
                tally.resolved_failed += 1;
                ("failed", "its line is not in the log")
            };
            let o = lab.toolgate(&[
                "journal",
                "resolve",
                op["operation_id"].as_str().unwrap(),
                "--as",
                verdict,
                "--note",
                note,
            ]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
        }

        // 3. Resubmit again: every call succeeds; every line is there exactly once.
        let (results, stderr) = lab.run(&calls, &session);
        assert!(
            results.values().all(|r| r["status"] == "success"),
            "round {round}: {stderr}"
        );
        let lines = lab.no_duplicates("after the final resubmission");
        for i in (1..=CALLS).filter(|i| i % 4 != 0) {
            let key = format!("{session}:call-{i}");
            assert!(lines.contains(&key), "round {round}: {key} was lost");
        }
        for i in (1..=CALLS).filter(|i| i % 4 == 0) {
            let marker = std::fs::read_to_string(lab.path().join(format!("markers/{i}"))).unwrap();
            assert_eq!(marker.trim(), format!("{session}:call-{i}"));
        }
        let written_this_round = lab.log_lines().len() - lines_before;
        assert_eq!(written_this_round, CALLS - CALLS / 4, "round {round}");
        tally.lines += written_this_round;
    }
    let runs = std::fs::read_to_string(lab.path().join("runs.log")).unwrap();
    let mut marker_runs: HashMap<&str, usize> = HashMap::new();
    for l in runs.lines() {
        *marker_runs.entry(l).or_default() += 1;
    }
    let rerun_markers = marker_runs.values().filter(|n| **n > 1).count();
    println!("crash test: {ROUNDS} rounds, {} calls", tally.calls);
    for (kind, n) in &tally.kills {
        println!("  kills: {n} × {kind}");
    }
    println!(
        "  finished before the kill (replayed on resubmission): {} ({} replayed)",
        tally.finished_before_kill, tally.replayed
    );
    println!(
        "  cut off by the kill: {} append_line (all UNKNOWN_OUTCOME: {}), {} touch_marker (all re-ran and succeeded; {} marker keys ran more than once)",
        tally.cut_off_appends, tally.unknown_outcome, tally.cut_off_markers, rerun_markers
    );
    println!(
        "  settled by a person: {} succeeded (line found), {} failed (no line; ran on the next resubmission)",
        tally.resolved_succeeded, tally.resolved_failed
    );
    println!(
        "  log: {} lines, each key exactly once; duplicates 0; lost 0",
        tally.lines
    );
    assert_eq!(tally.unknown_outcome, tally.cut_off_appends);
}
