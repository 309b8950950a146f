//! Compiles `tool-specs/` into `OUT_DIR/tools.rs` and `OUT_DIR/bundle.json`; a contract with a
//! lint error fails the build with the lint report.

fn main() -> Result<(), toolgate::build_script::BuildError> {
    toolgate::build_script::Builder::new()
        .specs("tool-specs")
        .compile()?;
    Ok(())
}
