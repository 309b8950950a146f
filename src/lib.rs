//! toolgate: declarative contracts for the tools AI models call.
//!
//! A tool's contract — parameters, effect, idempotency, validation and permission rules, the
//! resources it touches, its budgets and output policy — is written once in YAML with CEL
//! expressions. toolgate lints those contracts ([`lint`]), resolves them into one intermediate
//! form ([`ir`]) and runs tool calls under them.
//!
//! The pipeline: [`spec`] loads YAML into a spanned AST and resolves it into the IR
//! ([`ir::ToolDefinition`]); [`lint`] judges the AST; [`check`] runs both in sequence.
//! [`cel`] compiles and statically checks expressions; [`policy`] decides permissions.

pub mod cel;
pub mod ir;
pub mod policy;
pub mod suggest;
pub mod words;

#[cfg(feature = "compiler")]
pub mod build_script;
/// The former path of [`build_script`], kept so existing `build.rs` files keep compiling.
#[cfg(feature = "compiler")]
#[doc(hidden)]
pub use build_script as build;
#[cfg(feature = "compiler")]
pub mod check;
#[cfg(feature = "compiler")]
pub mod diagnostic;
#[cfg(feature = "compiler")]
pub mod diff;
#[cfg(feature = "compiler")]
pub mod emit;
#[cfg(feature = "compiler")]
pub mod fix;
#[cfg(feature = "compiler")]
pub mod lint;
#[cfg(feature = "compiler")]
pub mod rule;
#[cfg(feature = "compiler")]
pub mod source;
#[cfg(feature = "compiler")]
pub mod spec;

#[cfg(feature = "runtime")]
pub mod runtime;

#[cfg(feature = "mcp")]
pub mod mcp;

#[cfg(feature = "lsp")]
pub mod lsp;

#[cfg(feature = "cli")]
pub mod cli;
