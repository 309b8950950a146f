//! `toolgate schema`: the JSON Schema of the spec format, for editor completion.

use clap::Args;

/// Arguments of `toolgate schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Print the schema of toolgate.yaml instead of a tool spec.
    #[arg(long)]
    pub project: bool,
}

/// Prints the spec format's JSON Schema.
pub fn run(a: SchemaArgs) -> miette::Result<u8> {
    let text = if a.project {
        crate::spec::schema::project_schema()
    } else {
        crate::spec::schema::spec_schema()
    };
    super::print(&text)?;
    Ok(super::EXIT_OK)
}
