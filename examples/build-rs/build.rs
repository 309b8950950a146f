//! Compiles `tool-specs/` into `OUT_DIR/tools.rs` and `OUT_DIR/bundle.json`; a contract with a
//! lint error fails the build with the lint report.

fn main() -> Result<(), toolgate::build::BuildError> {
    toolgate::build::Builder::new()
        .specs("tool-specs")
        .compile()?;
    Ok(())
}
