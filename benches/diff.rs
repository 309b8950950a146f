#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(missing_docs)]
//! `toolgate diff` over 1,000 tools of which 5% changed, against `lint` of the same specs, and
//! the same diff replaying 100,000 calls recorded in a real SQLite journal. Run with
//! `cargo bench --bench diff`.
//!
//! The two versions are real folders; the 50 changed tools cover five kinds of change (a bound
//! loosened, an optional parameter, a deny rule narrowed, the effect raised, the description).
//! The replay reads the journal (`JournalReader::recorded_calls`) inside the measurement.

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolgate::check;
use toolgate::diff::{self, DiffOptions, RecordedCall, source};
use toolgate::runtime::extend::{AuditEntry, Journal};
use toolgate::runtime::{JournalReader, SqliteJournal};
use toolgate::spec::load::LoadOptions;

const TOOLS: usize = 1000;
const CHANGED_EVERY: usize = 20; // 5%
const CALLS: usize = 100_000;

fn spec(i: usize) -> String {
    let write = i.is_multiple_of(3);
    let (effect, decision) = if write {
        ("local_write", "ask")
    } else {
        ("read_only", "allow")
    };
    format!(
        r#"name: tool_{i:04}
version: 1
description: >-
  Read or change the records of folder {i} of the workspace that match the given path, and
  return the matching entries with their sizes.
effect: {effect}
idempotency: idempotent
parameters:
  type: object
  properties:
    path: {{type: string, description: Workspace-relative path of the record., minLength: 1, maxLength: 4096}}
    limit: {{type: integer, description: Most entries to return., minimum: 1, maximum: 500, default: 50}}
    tags:
      type: array
      description: Only entries with every one of these tags.
      maxItems: 20
      items: {{type: string, maxLength: 64}}
  required: [path]
  additionalProperties: false
permissions:
  rules:
    - id: no-internals
      deny: "path.in_git_dir(args.path) || args.path.startsWith('private/')"
      reason: Repository internals and private records are off limits.
    - id: records
      {decision}: "args.path.startsWith('data/')"
      reason: Records live under data/.
  examples:
    - {{args: {{path: data/r.json}}, expect: {decision}}}
    - {{args: {{path: private/r.json}}, expect: deny}}
timeout: {t}s
exec: {{builtin: echo}}
"#,
        t = 5 + i % 20
    )
}

/// The changed version of a spec: one of five kinds of change, by index.
fn changed(i: usize, text: &str) -> String {
    match (i / CHANGED_EVERY) % 5 {
        0 => text.replace("maxLength: 4096", "maxLength: 8192"),
        1 => text.replace(
            "    tags:\n",
            "    order: {type: string, description: Sort order., enum: [asc, desc]}\n    tags:\n",
        ),
        2 => text.replace(
            " || args.path.startsWith('private/')",
            " || args.path.startsWith('private/r')",
        ),
        3 => text
            .replace("effect: read_only", "effect: local_write")
            .replace(
                "effect: local_write\nidempotency",
                "effect: destructive\nidempotency",
            ),
        _ => text.replace("Read or change", "Read, or change,"),
    }
}

fn write_side(dir: &Path, new: bool) {
    let specs = dir.join("tool-specs");
    std::fs::create_dir_all(&specs).unwrap();
    std::fs::write(dir.join("toolgate.yaml"), "version: 1.0.0\nworkspace: .\n").unwrap();
    for i in 0..TOOLS {
        let text = spec(i);
        let text = if new && i.is_multiple_of(CHANGED_EVERY) {
            changed(i, &text)
        } else {
            text
        };
        std::fs::write(specs.join(format!("tool_{i:04}.yaml")), text).unwrap();
    }
}

/// A journal of `CALLS` audited calls spread over every tool (one in fifty under private/).
fn write_journal(path: &Path) {
    let journal = SqliteJournal::open(path).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for n in 0..CALLS {
        // The audit queue drops what it cannot hold (a runtime never waits for it): flush often.
        if n % 1000 == 999 {
            rt.block_on(journal.flush()).unwrap();
        }
        let tool = format!("tool_{:04}", n % TOOLS);
        let folder = if n.is_multiple_of(50) {
            "private/notes"
        } else {
            "data"
        };
        let trace = json!({
            "call_id": format!("c{n}"), "session_id": format!("s{}", n / 100),
            "context": "interactive", "tool": tool, "tool_version": 1,
            "arguments_hash": "h", "effect": "read_only", "permission": null,
            "scheduler_batch": 0, "runtime": "builtin", "sandbox_profile": null,
            "protections": [], "operation_id": null, "idempotency_key": null,
            "start_time": "2026-12-01T00:00:00Z", "end_time": "2026-12-01T00:00:00Z",
            "duration_us": 10, "status": "success", "error_type": null, "retry_count": 0,
            "exit_code": null, "output_size": 2, "artifact_ids": [], "replayed": false,
            "annotations": [],
        });
        journal.audit(AuditEntry {
            trace: serde_json::from_value(trace).unwrap(),
            arguments: json!({"path": format!("{folder}/r{n}.json"), "limit": 1 + n % 500}),
            summary: "ok".into(),
            idempotency_key: None,
        });
    }
    rt.block_on(journal.flush()).unwrap();
}

fn opts(dir: &Path) -> LoadOptions {
    LoadOptions {
        paths: vec![],
        config: None,
        cwd: dir.to_path_buf(),
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    write_side(&old, false);
    write_side(&new, true);
    let journal = dir.path().join("journal.db");
    write_journal(&journal);
    // What the diff finds (printed once, outside the measurement).
    let read = |dir: &Path| source::from_specs(&opts(dir), "side").unwrap();
    let calls: Vec<RecordedCall> = recorded(&journal);
    assert_eq!(calls.len(), CALLS);
    let d = diff::diff(
        &read(&old).bundle,
        &read(&new).bundle,
        &DiffOptions { replay: &calls },
    );
    let mut by_kind = std::collections::BTreeMap::new();
    for ch in &d.changes {
        *by_kind.entry(ch.kind.id()).or_insert(0usize) += 1;
    }
    eprintln!(
        "{} changes {by_kind:?}; calls evaluated {:?}",
        d.changes.len(),
        d.calls_evaluated
    );

    let mut g = c.benchmark_group("1000-tools-5pct-changed");
    g.sample_size(10);
    g.bench_function("lint", |b| {
        b.iter(|| check::check_specs(&opts(&new)).unwrap())
    });
    g.bench_function("diff", |b| {
        b.iter(|| {
            let (o, n) = (read(&old), read(&new));
            diff::diff(&o.bundle, &n.bundle, &DiffOptions::default())
        })
    });
    g.bench_function("diff+replay-100k", |b| {
        b.iter(|| {
            let (o, n) = (read(&old), read(&new));
            let calls = recorded(&journal);
            diff::diff(&o.bundle, &n.bundle, &DiffOptions { replay: &calls })
        })
    });
    g.finish();
}

/// The journal's calls, as `toolgate diff --replay` reads them.
fn recorded(path: &Path) -> Vec<RecordedCall> {
    JournalReader::open(path)
        .unwrap()
        .recorded_calls()
        .unwrap()
        .into_iter()
        .map(|r| RecordedCall {
            tool: r.tool,
            arguments: serde_json::from_str(&r.arguments).unwrap(),
            context: r.context,
        })
        .collect()
}

criterion_group!(benches, bench);
criterion_main!(benches);
