//! `TGE`: effect and safety consistency.

pub mod bypassable_path_policy;
pub mod destructive_without_approval;
pub mod destructive_without_signal;
pub mod effect_idempotency_contradiction;
pub mod effect_verb_mismatch;
pub(crate) mod names;
pub mod process_without_sandbox;
pub mod retry_unsafe;
pub mod runtime_known_parameter;
pub mod sensitive_parameter_unmarked;
pub mod state_folder_writable;
pub mod unguarded_reader_allow;
