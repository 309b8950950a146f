//! The lint's side of the rule registry: each rule's check, severity and documentation. Rule
//! identity (code, name, group) is [`crate::rule`], below the resolver and the linter alike.

use crate::lint::rule::RuleMeta;
use crate::lint::rules;
pub use crate::rule::Rule;

impl Rule {
    /// The rule's check, severity and documentation.
    pub fn meta(self) -> &'static RuleMeta {
        match self {
            // Contract validity (resolution reports these).
            Rule::InvalidContract => &rules::contract::invalid_contract::META,
            Rule::UnknownProjectReference => &rules::contract::unknown_project_reference::META,
            Rule::InvalidJsonSchema => &rules::contract::invalid_json_schema::META,
            Rule::CelSyntaxError => &rules::contract::cel_syntax_error::META,
            Rule::PermissionExampleFailed => &rules::contract::permission_example_failed::META,
            Rule::DuplicateToolName => &rules::contract::duplicate_tool_name::META,
            Rule::InvalidRuleId => &rules::contract::invalid_rule_id::META,
            // Schema design.
            Rule::MultiActionTool => &rules::schema::multi_action_tool::META,
            Rule::FreeFormExecParameter => &rules::schema::free_form_exec_parameter::META,
            Rule::UnstableResultShape => &rules::schema::unstable_result_shape::META,
            Rule::MutuallyExclusiveParameters => {
                &rules::schema::mutually_exclusive_parameters::META
            }
            Rule::UnpredictableDefault => &rules::schema::unpredictable_default::META,
            Rule::UnboundedArray => &rules::schema::unbounded_array::META,
            Rule::UnboundedString => &rules::schema::unbounded_string::META,
            Rule::FreeStringShouldBeEnum => &rules::schema::free_string_should_be_enum::META,
            Rule::OpenObject => &rules::schema::open_object::META,
            Rule::FreeFormObject => &rules::schema::free_form_object::META,
            Rule::ExclusiveBooleanFlags => &rules::schema::exclusive_boolean_flags::META,
            Rule::DelimitedStringList => &rules::schema::delimited_string_list::META,
            Rule::UnknownSchemaKeyword => &rules::schema::unknown_schema_keyword::META,
            // Naming.
            Rule::ToolNameInvalid => &rules::naming::tool_name_invalid::META,
            Rule::ToolNameCollision => &rules::naming::tool_name_collision::META,
            Rule::MissingDescription => &rules::naming::missing_description::META,
            Rule::ParameterDescriptionMissing => {
                &rules::naming::parameter_description_missing::META
            }
            Rule::ThinDescription => &rules::naming::thin_description::META,
            Rule::DescriptionTooLong => &rules::naming::description_too_long::META,
            Rule::AmbiguousParameterName => &rules::naming::ambiguous_parameter_name::META,
            Rule::HiddenCharacters => &rules::naming::hidden_characters::META,
            Rule::InconsistentNaming => &rules::naming::inconsistent_naming::META,
            Rule::OverlappingTools => &rules::naming::overlapping_tools::META,
            // Effect and safety.
            Rule::EffectVerbMismatch => &rules::effect::effect_verb_mismatch::META,
            Rule::DestructiveWithoutApproval => &rules::effect::destructive_without_approval::META,
            Rule::RetryUnsafe => &rules::effect::retry_unsafe::META,
            Rule::SensitiveParameterUnmarked => &rules::effect::sensitive_parameter_unmarked::META,
            Rule::EffectIdempotencyContradiction => {
                &rules::effect::effect_idempotency_contradiction::META
            }
            Rule::RuntimeKnownParameter => &rules::effect::runtime_known_parameter::META,
            Rule::ProcessWithoutSandbox => &rules::effect::process_without_sandbox::META,
            Rule::StateFolderWritable => &rules::effect::state_folder_writable::META,
            // Runtime policy.
            Rule::MissingTimeout => &rules::policy::missing_timeout::META,
            Rule::UnboundedOutput => &rules::policy::unbounded_output::META,
            Rule::UntestedPermissionRule => &rules::policy::untested_permission_rule::META,
            Rule::MissingPermissionRules => &rules::policy::missing_permission_rules::META,
            Rule::UnactionableValidationMessage => {
                &rules::policy::unactionable_validation_message::META
            }
            Rule::MissingErrorHints => &rules::policy::missing_error_hints::META,
            Rule::UndeclaredResources => &rules::policy::undeclared_resources::META,
            Rule::UnpaginatedListOutput => &rules::policy::unpaginated_list_output::META,
            Rule::UnusedSuppression => &rules::policy::unused_suppression::META,
            // CEL.
            Rule::CelUnknownReference => &rules::cel::cel_unknown_reference::META,
            Rule::CelUnknownFunction => &rules::cel::cel_unknown_function::META,
            Rule::CelResultType => &rules::cel::cel_result_type::META,
            Rule::CelUnboundedCost => &rules::cel::cel_unbounded_cost::META,
            Rule::CelConstantCondition => &rules::cel::cel_constant_condition::META,
            Rule::CelCostOverBudget => &rules::cel::cel_cost_over_budget::META,
            // Provider compatibility.
            Rule::OpenaiStrictIncompatible => &rules::provider::openai_strict_incompatible::META,
            Rule::AnthropicIncompatible => &rules::provider::anthropic_incompatible::META,
            Rule::GeminiIncompatible => &rules::provider::gemini_incompatible::META,
            Rule::McpIncompatible => &rules::provider::mcp_incompatible::META,
            Rule::TooManyTools => &rules::provider::too_many_tools::META,
            Rule::ConstraintDroppedByTarget => &rules::provider::constraint_dropped_by_target::META,
            // Containment. Rules are appended, not placed by group, so that the SARIF `ruleIndex` of
            // every earlier rule stays what it was.
            Rule::BypassablePathPolicy => &rules::effect::bypassable_path_policy::META,
            Rule::UnguardedReaderAllow => &rules::effect::unguarded_reader_allow::META,
            Rule::RepeatedDenyGlobs => &rules::policy::repeated_deny_globs::META,
            Rule::DefaultProtectionExempted => &rules::policy::default_protection_exempted::META,
            Rule::PolicyFileExempted => &rules::policy::policy_file_exempted::META,
            // Lint judgment on real tool lists.
            Rule::UndeclaredResultSchema => &rules::schema::undeclared_result_schema::META,
            Rule::ConstraintOnlyInProse => &rules::schema::constraint_only_in_prose::META,
            Rule::DestructiveWithoutSignal => &rules::effect::destructive_without_signal::META,
            // Nothing cut is lost (appended likewise).
            Rule::UnreadableCutOutput => &rules::policy::unreadable_cut_output::META,
            // Stable names (appended likewise).
            Rule::DeprecatedToolBesideSuccessor => {
                &rules::naming::deprecated_tool_beside_successor::META
            }
            // One name per concept (appended likewise).
            Rule::RenamedKey => &rules::naming::renamed_key::META,
            Rule::ClientNameAllow => &rules::policy::client_name_allow::META,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_meta_is_its_rules_and_states_its_purpose() {
        for r in Rule::ALL {
            let m = r.meta();
            assert_eq!(m.rule, *r);
            assert!(
                m.purpose.ends_with('.'),
                "{}: purpose is one sentence ending in a period",
                r.code()
            );
        }
    }

    #[test]
    fn every_rule_is_documented() {
        for r in Rule::ALL {
            let doc = r.meta().explanation;
            for heading in ["## What it does", "## Why is this bad?", "## Example"] {
                assert!(doc.contains(heading), "{} lacks `{heading}`", r.code());
            }
            assert!(
                doc.contains("Use instead:"),
                "{} lacks `Use instead:`",
                r.code()
            );
        }
    }
}
