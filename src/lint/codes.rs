//! The rule registry: the only table from code to rule. Codes are never reused; a renamed rule
//! keeps its code.

use crate::lint::rule::RuleMeta;
use crate::lint::rules;

macro_rules! registry {
    ($( $variant:ident => $meta:path ),+ $(,)?) => {
        /// Every lint rule.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Rule {
            $(
                #[doc = concat!("See [`", stringify!($meta), "`].")]
                $variant
            ),+
        }

        impl Rule {
            /// Every rule, in code order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),+];

            /// The rule's metadata.
            pub fn meta(self) -> &'static RuleMeta {
                match self {
                    $(Rule::$variant => &$meta),+
                }
            }
        }
    };
}

registry! {
    // Contract validity (resolution reports these).
    InvalidContract => rules::contract::invalid_contract::META,
    UnknownProjectReference => rules::contract::unknown_project_reference::META,
    InvalidJsonSchema => rules::contract::invalid_json_schema::META,
    CelSyntaxError => rules::contract::cel_syntax_error::META,
    PermissionExampleFailed => rules::contract::permission_example_failed::META,
    DuplicateToolName => rules::contract::duplicate_tool_name::META,
    InvalidRuleId => rules::contract::invalid_rule_id::META,
    // Schema design.
    MultiActionTool => rules::schema::multi_action_tool::META,
    FreeFormExecParameter => rules::schema::free_form_exec_parameter::META,
    UnstableResultShape => rules::schema::unstable_result_shape::META,
    MutuallyExclusiveParameters => rules::schema::mutually_exclusive_parameters::META,
    UnpredictableDefault => rules::schema::unpredictable_default::META,
    UnboundedArray => rules::schema::unbounded_array::META,
    UnboundedString => rules::schema::unbounded_string::META,
    FreeStringShouldBeEnum => rules::schema::free_string_should_be_enum::META,
    OpenObject => rules::schema::open_object::META,
    FreeFormObject => rules::schema::free_form_object::META,
    ExclusiveBooleanFlags => rules::schema::exclusive_boolean_flags::META,
    DelimitedStringList => rules::schema::delimited_string_list::META,
    UnknownSchemaKeyword => rules::schema::unknown_schema_keyword::META,
    // Naming.
    ToolNameInvalid => rules::naming::tool_name_invalid::META,
    ToolNameCollision => rules::naming::tool_name_collision::META,
    MissingDescription => rules::naming::missing_description::META,
    ParameterDescriptionMissing => rules::naming::parameter_description_missing::META,
    ThinDescription => rules::naming::thin_description::META,
    DescriptionTooLong => rules::naming::description_too_long::META,
    AmbiguousParameterName => rules::naming::ambiguous_parameter_name::META,
    HiddenCharacters => rules::naming::hidden_characters::META,
    InconsistentNaming => rules::naming::inconsistent_naming::META,
    OverlappingTools => rules::naming::overlapping_tools::META,
    // Effect and safety.
    EffectVerbMismatch => rules::effect::effect_verb_mismatch::META,
    DestructiveWithoutApproval => rules::effect::destructive_without_approval::META,
    RetryUnsafe => rules::effect::retry_unsafe::META,
    SensitiveParameterUnmarked => rules::effect::sensitive_parameter_unmarked::META,
    EffectIdempotencyContradiction => rules::effect::effect_idempotency_contradiction::META,
    RuntimeKnownParameter => rules::effect::runtime_known_parameter::META,
    ProcessWithoutSandbox => rules::effect::process_without_sandbox::META,
    StateFolderWritable => rules::effect::state_folder_writable::META,
    // Runtime policy.
    MissingTimeout => rules::policy::missing_timeout::META,
    UnboundedOutput => rules::policy::unbounded_output::META,
    UntestedPermissionRule => rules::policy::untested_permission_rule::META,
    MissingPermissionRules => rules::policy::missing_permission_rules::META,
    UnactionableValidationMessage => rules::policy::unactionable_validation_message::META,
    MissingErrorHints => rules::policy::missing_error_hints::META,
    UndeclaredResources => rules::policy::undeclared_resources::META,
    UnpaginatedListOutput => rules::policy::unpaginated_list_output::META,
    UnusedSuppression => rules::policy::unused_suppression::META,
    // CEL.
    CelUnknownReference => rules::cel::cel_unknown_reference::META,
    CelUnknownFunction => rules::cel::cel_unknown_function::META,
    CelResultType => rules::cel::cel_result_type::META,
    CelUnboundedCost => rules::cel::cel_unbounded_cost::META,
    CelConstantCondition => rules::cel::cel_constant_condition::META,
    CelCostOverBudget => rules::cel::cel_cost_over_budget::META,
    // Provider compatibility.
    OpenaiStrictIncompatible => rules::provider::openai_strict_incompatible::META,
    AnthropicIncompatible => rules::provider::anthropic_incompatible::META,
    GeminiIncompatible => rules::provider::gemini_incompatible::META,
    McpIncompatible => rules::provider::mcp_incompatible::META,
    TooManyTools => rules::provider::too_many_tools::META,
    ConstraintDroppedByTarget => rules::provider::constraint_dropped_by_target::META,
    // Containment. Rules are appended, not placed by group, so that the SARIF `ruleIndex` of
    // every earlier rule stays what it was.
    BypassablePathPolicy => rules::effect::bypassable_path_policy::META,
    UnguardedReaderAllow => rules::effect::unguarded_reader_allow::META,
    RepeatedDenyGlobs => rules::policy::repeated_deny_globs::META,
    DefaultProtectionExempted => rules::policy::default_protection_exempted::META,
    // Lint judgment on real tool lists.
    UndeclaredResultSchema => rules::schema::undeclared_result_schema::META,
    ConstraintOnlyInProse => rules::schema::constraint_only_in_prose::META,
    DestructiveWithoutSignal => rules::effect::destructive_without_signal::META,
    // Nothing cut is lost (appended likewise).
    UnreadableCutOutput => rules::policy::unreadable_cut_output::META,
    // Stable names (appended likewise).
    DeprecatedToolBesideSuccessor => rules::naming::deprecated_tool_beside_successor::META,
}

impl Rule {
    /// The rule's code (`TGS001`).
    pub fn code(self) -> &'static str {
        self.meta().code
    }

    /// The rule with this code or name (case-insensitive code).
    pub fn find(key: &str) -> Option<Rule> {
        Rule::ALL
            .iter()
            .copied()
            .find(|r| r.meta().code.eq_ignore_ascii_case(key) || r.meta().name == key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_and_names_are_unique_and_well_formed() {
        let mut codes = HashSet::new();
        let mut names = HashSet::new();
        for r in Rule::ALL {
            let m = r.meta();
            assert!(codes.insert(m.code), "duplicate code {}", m.code);
            assert!(names.insert(m.name), "duplicate name {}", m.name);
            assert!(
                m.code.starts_with(m.group.prefix()),
                "{} is not in group {:?}",
                m.code,
                m.group
            );
            assert_eq!(m.code.len(), 6, "{}", m.code);
            assert!(
                m.name.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}",
                m.name
            );
            assert!(
                m.purpose.ends_with('.'),
                "{}: purpose is one sentence ending in a period",
                m.code
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
