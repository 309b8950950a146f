//! `TGP`: runtime policy completeness.

pub mod missing_error_hints;
pub mod missing_permission_rules;
pub mod missing_timeout;
pub mod unactionable_validation_message;
pub mod unbounded_output;
pub mod undeclared_resources;
pub mod unpaginated_list_output;
pub mod untested_permission_rule;
pub mod unused_suppression;
