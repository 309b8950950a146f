//! `TGK`: contracts toolgate cannot use. Resolution ([`crate::spec::resolve`]) finds these;
//! the files here hold their documentation. Their severity is fixed at error.

pub mod cel_syntax_error;
pub mod duplicate_tool_name;
pub mod invalid_contract;
pub mod invalid_json_schema;
pub mod invalid_rule_id;
pub mod permission_example_failed;
pub mod unknown_project_reference;
