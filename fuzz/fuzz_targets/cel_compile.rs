//! The CEL guard, parser and checker: the input is one expression's text, compiled as a
//! contract's `validate` rule would be and checked against a fixed parameter schema in every
//! slot. An expression the checker bounds to a small cost is evaluated too, against fixed
//! arguments, so toolgate's functions (`path.*`, `shell.*`, ...) see what the parser let
//! through. Every input must give an error or a value, never a panic or an abort.
#![no_main]

use std::sync::LazyLock;

mod stack;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolgate::cel::check::{Slot, check};
use toolgate::cel::{Bindings, Evaluator, compile};

/// Far below the linter's default, so that no single run spends seconds evaluating.
const EVAL_COST: u64 = 5_000;

static PARAMETERS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "maxLength": 4000},
            "path": {"type": "string"},
            "paths": {"type": "array", "items": {"type": "string"}},
            "count": {"type": "integer", "minimum": 0},
            "ratio": {"type": "number"},
            "force": {"type": "boolean"},
            "mode": {"type": "string", "enum": ["fast", "safe"]},
            "edits": {"type": "array", "items": {
                "type": "object",
                "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
                "required": ["old", "new"]
            }},
            "obj": {"type": "object", "additionalProperties": {"type": "string"}}
        },
        "required": ["command"],
        "additionalProperties": false
    })
});

static ARGS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "command": "ls -la src && cat 'a b' | wc -l",
        "path": "src/../.env",
        "paths": ["src/main.rs", "/etc/passwd", "~/.ssh/id_rsa", ".git/config"],
        "count": 3,
        "ratio": 0.5,
        "force": false,
        "mode": "safe",
        "edits": [{"old": "a", "new": "b"}],
        "obj": {"a": "x", "b": "y"}
    })
});

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    // On a thread's stack, as the linter (rayon) and `serve` (tokio) compile and evaluate.
    stack::on_thread_stack(|| run(source));
});

fn run(source: &str) {
    let Ok(program) = compile(source) else {
        return;
    };
    let mut cheap = false;
    for slot in [Slot::Condition, Slot::Resources, Slot::List, Slot::String, Slot::Text] {
        let analysis = check(&program, &PARAMETERS, slot, 1_000_000);
        cheap |= analysis.problems.is_empty() && analysis.cost.is_some_and(|c| c <= EVAL_COST);
    }
    if !cheap {
        return;
    }
    let bindings = Bindings {
        args: &ARGS,
        tool_name: "fuzz",
        tool_effect: "read_only",
        tool_version: 1,
        context: "interactive",
        workspace: "/workspace",
    };
    if let Ok(ev) = Evaluator::new(&bindings) {
        let _ = std::hint::black_box(ev.value(&program));
    }
}
