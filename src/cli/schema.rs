//! `toolgate schema`: the JSON Schema of the spec format.

use clap::Args;

/// Arguments of `toolgate schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {}

/// Prints the spec format's JSON Schema.
pub fn run(_a: SchemaArgs) -> miette::Result<u8> {
    super::print("{}\n")?;
    Ok(super::EXIT_OK)
}
