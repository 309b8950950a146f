//! `echo`: `{text} → {text}`. Pure and instant: benchmarks measure the pipeline with it.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Step, parse_args};
use crate::runtime::exec::RawOutcome;

#[derive(Deserialize)]
struct Args {
    text: String,
}

pub(super) fn run(args: &Value) -> Step<RawOutcome> {
    let a: Args = parse_args(args, "echo")?;
    Ok(RawOutcome::success(json!({ "text": a.text }), a.text).with_summary("echoed"))
}
