//! Tool specs: YAML with spans ([`yaml`]), the spec syntax tree ([`ast`]), the project file
//! ([`project_file`]), loading ([`load`]), tool lists imported from providers ([`import`]),
//! and resolution into the IR ([`resolve`]), a tool's names over time included.

pub mod ast;
pub mod cel_span;
pub mod http;
pub mod import;
pub mod literal;
pub mod load;
pub mod project;
pub mod project_file;
pub mod resolve;
pub mod schema;
pub mod serve_auth;
/// Source files and spans live below the diagnostics ([`crate::source`]); this path stays.
pub use crate::source;
pub mod suggest;
pub mod yaml;
