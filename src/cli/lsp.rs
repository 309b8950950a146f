//! `toolgate lsp`: the language server (src/lsp/), over stdio.

use clap::Args;

/// Arguments of `toolgate lsp`.
#[derive(Debug, Args)]
pub struct LspArgs {
    /// Accepted for editors that pass it; stdio is the only transport.
    #[arg(long)]
    pub stdio: bool,
}

/// Serves one editor until it shuts the server down.
pub fn run(_a: LspArgs) -> miette::Result<u8> {
    crate::lsp::run().map_err(|e| miette::miette!("{e}"))?;
    Ok(super::EXIT_OK)
}
