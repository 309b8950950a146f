//! `TGP`: runtime policy completeness.

pub mod client_name_allow;
pub mod default_protection_exempted;
pub(crate) mod globs;
pub mod missing_error_hints;
pub mod missing_permission_rules;
pub mod missing_timeout;
pub mod policy_file_exempted;
pub mod repeated_deny_globs;
pub mod unactionable_validation_message;
pub mod unbounded_output;
pub mod undeclared_resources;
pub mod unpaginated_list_output;
pub mod unreadable_cut_output;
pub mod untested_permission_rule;
pub mod unused_suppression;
