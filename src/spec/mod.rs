//! Tool specs: YAML with spans ([`yaml`]), the spec syntax tree ([`ast`]), the project file
//! ([`project_file`]), loading ([`load`]), tool lists imported from providers ([`import`]),
//! resolution into the IR ([`resolve`]) and a tool's names over time ([`lifecycle`]).

pub mod ast;
pub mod cel_span;
pub mod import;
pub mod lifecycle;
pub mod literal;
pub mod load;
pub mod project;
pub mod project_file;
pub mod resolve;
pub mod schema;
pub mod serve_auth;
pub mod source;
pub mod suggest;
pub mod yaml;
