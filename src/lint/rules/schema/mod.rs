//! `TGS`: argument and result schema design. Tool schemas should give the model one clear choice
//! per call: one operation per tool, closed sets as enums, bounded sizes, one stable result shape.
//!
//! `shape` answers questions about schema nodes, `prose` reads what descriptions say that
//! keywords should say, and `forbidden_pairs` finds arguments a `validate` rule forbids together.

pub mod constraint_only_in_prose;
pub mod delimited_string_list;
pub mod exclusive_boolean_flags;
pub mod free_form_exec_parameter;
pub mod free_form_object;
pub mod free_string_should_be_enum;
pub mod multi_action_tool;
pub mod mutually_exclusive_parameters;
pub mod open_object;
pub mod unbounded_array;
pub mod unbounded_string;
pub mod undeclared_result_schema;
pub mod unknown_schema_keyword;
pub mod unpredictable_default;
pub mod unstable_result_shape;

pub(crate) mod definitions;
pub(crate) mod exec_shapes;
pub(crate) mod forbidden_pairs;
pub(crate) mod hidden_operations;
pub(crate) mod prose;
pub(crate) mod result_kinds;
pub(crate) mod shape;

/// Parses a YAML snippet into a node for the schema readers' unit tests.
#[cfg(test)]
pub(crate) fn test_node(text: &str) -> crate::spec::yaml::Node {
    let f = crate::spec::source::SourceFile::new("t.yaml", text);
    crate::spec::yaml::parse(text, |l, c| f.offset_of(l, c)).expect("test YAML parses")
}
