//! The spec loader, resolver and linter, and the diagnostics' renderers: the input is one spec
//! file's text, optionally followed by a NUL byte and the text of a `toolgate.yaml`. Every
//! input must give diagnostics, never a panic or an abort.
#![no_main]

use std::path::PathBuf;

mod stack;

use libfuzzer_sys::fuzz_target;
use toolgate::check::check_texts;
use toolgate::lint::report::{Summary, human, json};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The loader and resolver run on rayon's pool (2 MiB stacks, `stack::prepare`); the rest
    // on the main thread, as `toolgate lint` runs it.
    stack::prepare();
    let (spec, project) = match text.split_once('\0') {
        Some((spec, project)) => (spec, Some(project)),
        None => (text, None),
    };
    let checked = check_texts(&[(PathBuf::from("fuzz.yaml"), spec.to_owned())], project);
    let diags = &checked.diagnostics;
    let sources = &checked.loaded.sources;
    let summary = Summary::of(diags, 1, checked.loaded.tool_count());
    std::hint::black_box(human::render(diags, sources, human::Style::Plain, summary));
    std::hint::black_box(json::render(diags, sources, summary));
    std::hint::black_box(checked.bundle());
});
