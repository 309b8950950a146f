#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Property tests over the loader and the whole check: whatever the text, loading, resolution
//! and linting return diagnostics — they never panic — and every diagnostic points inside the
//! file it names.

use std::path::PathBuf;

use proptest::prelude::*;
use toolgate::check::{CheckedProject, check_texts};

fn check_one(text: &str) -> CheckedProject {
    check_texts(&[(PathBuf::from("p.yaml"), text.to_owned())], None)
}

fn spans_are_inside_their_files(c: &CheckedProject) {
    for d in &c.diagnostics {
        let f = c
            .loaded
            .sources
            .get(d.span.source)
            .expect("diagnostic names a loaded file");
        assert!(d.span.start <= d.span.end, "{d:?}");
        assert!(
            (d.span.end as usize) <= f.text.len(),
            "{d:?} beyond {} bytes",
            f.text.len()
        );
        assert!(f.text.is_char_boundary(d.span.start as usize), "{d:?}");
    }
}

const KEYS: &[&str] = &[
    "name",
    "version",
    "title",
    "description",
    "effect",
    "idempotency",
    "parameters",
    "result",
    "validate",
    "permissions",
    "rules",
    "examples",
    "resources",
    "reads",
    "writes",
    "concurrency_group",
    "timeout",
    "retry",
    "output",
    "errors",
    "sandbox",
    "exec",
    "builtin",
    "command",
    "argv",
    "type",
    "properties",
    "required",
    "items",
    "enum",
    "maxItems",
    "maxLength",
    "additionalProperties",
    "oneOf",
    "anyOf",
    "$ref",
    "$defs",
    "id",
    "expr",
    "message",
    "deny",
    "allow",
    "ask",
    "args",
    "expect",
    "tools",
    "max_attempts",
    "on",
    "when",
    "each",
];

const SCALARS: &[&str] = &[
    "read_only",
    "pure",
    "destructive",
    "object",
    "string",
    "array",
    "integer",
    "5s",
    "32KiB",
    "true",
    "false",
    "null",
    "~",
    "-1",
    "0",
    "1.5",
    "'args.path'",
    "\"args.x.y == 1\"",
    "args.items.all(i, i > 0)",
    "path.matches_glob(args.path, ['**/.env'])",
    "{args.path}",
    "echo",
    "read_file",
    "RESOURCE_NOT_FOUND",
    "\"{{\"",
    "&a",
    "*a",
    "!!str x",
    "[",
    "]",
    "{",
    "}",
    "'",
    "\"",
    "\\",
    "#",
    "|",
    ">",
    "---",
    "\u{202e}",
];

fn value(depth: u32) -> BoxedStrategy<String> {
    let scalar = prop::sample::select(SCALARS).prop_map(str::to_owned);
    if depth == 0 {
        return scalar.boxed();
    }
    prop_oneof![
        3 => scalar,
        1 => prop::collection::vec(value(depth - 1), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
        2 => prop::collection::vec((prop::sample::select(KEYS), value(depth - 1)), 0..5)
            .prop_map(|kv| format!("{{{}}}", kv.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join(", "))),
    ]
    .boxed()
}

fn document() -> impl Strategy<Value = String> {
    prop::collection::vec((prop::sample::select(KEYS), value(3)), 0..12)
        .prop_map(|kv| kv.iter().map(|(k, v)| format!("{k}: {v}\n")).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        spans_are_inside_their_files(&check_one(&text));
    }

    #[test]
    fn spec_shaped_documents_never_panic(doc in document()) {
        spans_are_inside_their_files(&check_one(&doc));
    }

    #[test]
    fn mutations_of_a_real_spec_never_panic(
        cut in 0usize..3000,
        insert in prop::sample::select(SCALARS),
    ) {
        let base = include_str!("../tool-specs/apply_patch.yaml");
        let mut at = cut.min(base.len());
        while !base.is_char_boundary(at) { at -= 1; }
        let mutated = format!("{}{}{}", &base[..at], insert, &base[at..]);
        spans_are_inside_their_files(&check_one(&mutated));
    }
}
