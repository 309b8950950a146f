#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(missing_docs)]
//! `toolgate lint` over 1,000 generated specs, against just parsing the same YAML files, in
//! one run; and lint of one spec with 20,000 parameters, with and without the human report
//! (the rules and the renderer must stay near-linear in parameters: the goal is under 2 s).
//! Run with `cargo bench --bench lint`.
//!
//! Each spec is distinct (names, parameters, descriptions and rules vary, drawn from a fixed
//! seed) and uses what real contracts use: validation and permission rules with examples,
//! resources, output policy, error hints. They are written to a temporary folder so both
//! measurements read real files.

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate::check;
use toolgate::spec::load::{self, LoadOptions};

const SPECS: usize = 1000;

const WORDS: &[&str] = &[
    "account",
    "archive",
    "batch",
    "branch",
    "bucket",
    "build",
    "cache",
    "channel",
    "cluster",
    "column",
    "comment",
    "commit",
    "config",
    "contact",
    "container",
    "cursor",
    "dataset",
    "deployment",
    "device",
    "document",
    "domain",
    "draft",
    "event",
    "export",
    "feature",
    "field",
    "folder",
    "form",
    "gateway",
    "graph",
    "group",
    "image",
    "index",
    "invoice",
    "issue",
    "job",
    "label",
    "layer",
    "ledger",
    "lesson",
    "library",
    "license",
    "link",
    "log",
    "machine",
    "member",
    "message",
    "metric",
    "model",
    "module",
    "note",
    "order",
    "package",
    "page",
    "payment",
    "pipeline",
    "plan",
    "policy",
    "project",
    "queue",
    "record",
    "region",
    "release",
    "report",
    "request",
    "review",
    "role",
    "route",
    "rule",
    "sample",
    "schedule",
    "schema",
    "segment",
    "server",
    "service",
    "sheet",
    "shipment",
    "snapshot",
    "source",
    "space",
    "stage",
    "step",
    "store",
    "stream",
    "subscription",
    "table",
    "tag",
    "task",
    "team",
    "template",
    "ticket",
    "topic",
    "trace",
    "track",
    "version",
    "volume",
    "webhook",
    "widget",
    "workflow",
    "zone",
];
const READS: &[&str] = &[
    "get", "list", "search", "find", "show", "describe", "count", "inspect",
];
const WRITES: &[&str] = &[
    "create", "update", "rename", "archive", "label", "tag", "move", "attach",
];

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| self.pick(WORDS))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn spec(i: usize, rng: &mut Rng) -> String {
    let write = i.is_multiple_of(3);
    let verb = if write {
        rng.pick(WRITES)
    } else {
        rng.pick(READS)
    };
    let noun = rng.pick(WORDS);
    let name = format!("{verb}_{noun}_{i}");
    let (a, b, c) = (
        format!("{}_path", rng.pick(WORDS)),
        format!("{}_count", rng.pick(WORDS)),
        format!("{}_tags", rng.pick(WORDS)),
    );
    let effect = if write { "local_write" } else { "read_only" };
    let idempotency = if write { "idempotent" } else { "pure" };
    let desc = format!(
        "{verb} the {noun} records of the workspace that match the given {a}, {}. Returns the matching {noun} entries with their {}. Use it when {}.",
        rng.words(6),
        rng.words(3),
        rng.words(5)
    );
    let decision = if write { "ask" } else { "allow" };
    let resources = if write { "writes" } else { "reads" };
    format!(
        r#"name: {name}
version: {v}
description: >-
  {desc}
effect: {effect}
idempotency: {idempotency}
parameters:
  type: object
  properties:
    {a}:
      type: string
      description: Workspace-relative path of the {noun} file, e.g. data/{noun}.json.
      minLength: 1
      maxLength: 4096
    {b}:
      type: integer
      description: Most {noun} entries to return.
      minimum: 1
      maximum: 500
      default: 50
    {c}:
      type: array
      description: Only entries carrying every one of these tags.
      maxItems: 20
      items: {{type: string, maxLength: 64, description: A tag such as {t}.}}
  required: [{a}]
  additionalProperties: false
result:
  type: object
  properties:
    entries: {{type: array, items: {{type: string}}, description: The matching entries.}}
    truncated: {{type: boolean, description: True when more entries matched than the limit.}}
  required: [entries, truncated]
  additionalProperties: false
validate:
  - id: path-inside-workspace
    expr: path.within_workspace(args.{a})
    message: {a} must be relative and stay inside the workspace.
    hint: Use a path such as data/{noun}.json.
  - id: tags-lowercase
    expr: "!has(args.{c}) || args.{c}.all(t, t.lowerAscii() == t)"
    message: Every entry of {c} must be lower case.
    hint: Write tags such as {t}.
permissions:
  rules:
    - id: no-repository-internals
      deny: "path.in_git_dir(args.{a})"
      reason: Repository internals are off limits (secrets are protected by toolgate.yaml).
    - id: data-folder
      {decision}: "!path.in_git_dir(args.{a})"
      reason: Everything else in the workspace is {noun} data.
  examples:
    - {{args: {{{a}: data/{noun}.json}}, expect: {decision}}}
    - {{args: {{{a}: config/.env}}, expect: deny}}
resources:
  {resources}: "'file:' + path.normalize(args.{a})"
timeout: {timeout}s
output: {{formatter: json, max_bytes: 16KiB, max_lines: 300}}
errors:
  RESOURCE_NOT_FOUND: The {noun} file does not exist. List the folder to find it.
exec: {{builtin: echo}}
"#,
        v = 1 + i % 3,
        t = rng.pick(WORDS),
        timeout = 5 + i % 20,
    )
}

fn generate(dir: &Path) {
    let out = dir.join("tool-specs");
    std::fs::create_dir_all(&out).expect("mkdir");
    let mut rng = Rng(0x5EED);
    for i in 0..SPECS {
        std::fs::write(out.join(format!("tool_{i:04}.yaml")), spec(i, &mut rng))
            .expect("write spec");
    }
}

fn bench(c: &mut Criterion) {
    // `TOOLGATE_BENCH_SPECS=DIR cargo bench --bench lint` writes the specs to DIR and stops, for
    // profiling the CLI on the same input.
    if let Some(dir) = std::env::var_os("TOOLGATE_BENCH_SPECS") {
        generate(Path::new(&dir));
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    generate(dir.path());
    let opts = LoadOptions {
        paths: vec![PathBuf::from("tool-specs")],
        config: None,
        cwd: dir.path().to_path_buf(),
    };
    // What lint says about the generated specs (printed once, outside the measurement).
    let once = check::check_specs(&opts).expect("check");
    let mut counts = std::collections::BTreeMap::new();
    for d in &once.diagnostics {
        counts
            .entry(d.code.unwrap_or("load-error"))
            .or_insert((0usize, d.message.clone()))
            .0 += 1;
    }
    eprintln!(
        "{} tools; findings by rule (count, first message):",
        once.loaded.tool_count()
    );
    for (code, (n, msg)) in &counts {
        eprintln!("  {code} {n}: {msg}");
    }
    let mut g = c.benchmark_group("1000-specs");
    g.sample_size(10);
    // The baseline: read each file and parse its YAML (with spans), one after another.
    let files: Vec<PathBuf> =
        load::expand_globs(dir.path(), &["tool-specs/*.yaml".to_owned()]).expect("glob");
    g.bench_function("parse", |b| {
        b.iter(|| {
            let mut nodes = 0usize;
            for f in &files {
                let text = std::fs::read_to_string(f).expect("read");
                let node: toolgate::spec::yaml::Node =
                    toolgate::spec::yaml::parse(&text, |_, _| None).expect("parse");
                nodes += node.entries().len();
            }
            nodes
        })
    });
    g.bench_function("load", |b| {
        b.iter(|| {
            let loaded = load::load(&opts).expect("load");
            assert_eq!(loaded.tool_count(), SPECS);
            loaded
        })
    });
    g.bench_function("lint", |b| {
        b.iter(|| {
            let checked = check::check_specs(&opts).expect("check");
            // 1,000 tools in one list is over OpenAI's 128-tool limit (TGV005); nothing else may be an error.
            let errors = checked
                .diagnostics
                .iter()
                .filter(|d| {
                    d.severity == toolgate::diagnostic::Severity::Error && d.code != Some("TGV005")
                })
                .count();
            assert_eq!(errors, 0);
            checked
        })
    });
    g.finish();
}

/// Parameters of the one wide spec.
const WIDE: usize = 20_000;

/// One spec with `n` optional string parameters, each described, some with cue words the
/// prose rules read ("only the first", "instead of").
fn wide_spec(n: usize) -> String {
    let mut s = String::from(
        "name: wide\ndescription: Look up records by many optional filters; returns the matching records.\n\
         effect: read_only\nidempotency: pure\nparameters:\n  type: object\n  properties:\n",
    );
    for i in 0..n {
        let w = WORDS[i % WORDS.len()];
        let other = WORDS[(i * 7) % WORDS.len()];
        let extra = match i % 50 {
            0 => " Returns only the first N records.",
            25 => " Returns only the last N records.",
            10 => " Use it instead of the query filter.",
            _ => "",
        };
        s.push_str(&format!(
            "    p{i}_{w}: {{type: string, maxLength: 100, description: \"The {w} filter number {i}, matched exactly against the {other} field.{extra}\"}}\n"
        ));
    }
    s.push_str("  additionalProperties: false\nexec: {builtin: read_file}\n");
    s
}

fn bench_wide(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("tool-specs")).expect("mkdir");
    std::fs::write(dir.path().join("tool-specs/wide.yaml"), wide_spec(WIDE)).expect("write");
    let opts = LoadOptions {
        paths: vec![PathBuf::from("tool-specs")],
        config: None,
        cwd: dir.path().to_path_buf(),
    };
    let mut g = c.benchmark_group("20000-parameters");
    g.sample_size(10);
    g.bench_function("lint", |b| {
        b.iter(|| {
            let checked = check::check_specs(&opts).expect("check");
            assert_eq!(checked.loaded.tool_count(), 1);
            checked
        })
    });
    g.bench_function("lint+human", |b| {
        b.iter(|| {
            let checked = check::check_specs(&opts).expect("check");
            toolgate::lint::report::human::render_findings(
                &checked.diagnostics,
                &checked.loaded.sources,
                toolgate::lint::report::human::Style::Plain,
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench, bench_wide);
criterion_main!(benches);
