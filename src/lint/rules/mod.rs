//! Every lint rule, by group, and the dispatch tables the visitor runs them from.
//!
//! A rule is one file: its [`RuleMeta`](crate::lint::rule::RuleMeta) (documentation included) and
//! a `check` function taking one typed node. Adding a rule means adding the file, a line in
//! [`crate::lint::codes`], a line in one table below, and its fixtures.

pub mod cel;
pub mod contract;
pub mod effect;
pub mod naming;
pub mod policy;
pub mod provider;
pub mod schema;

use crate::lint::codes::Rule;
use crate::lint::context::{LintContext, SchemaNode, ToolView};

/// A check over one tool.
pub(crate) type ToolCheck = fn(&mut LintContext, &ToolView);
/// A check over one schema node of a tool's `parameters` or `result`.
pub(crate) type SchemaCheck = fn(&mut LintContext, &ToolView, &SchemaNode);
/// A check over the whole tool set.
pub(crate) type SetCheck = fn(&mut LintContext, &[ToolView]);

/// Rules run once per tool.
pub(crate) const TOOL_CHECKS: &[(Rule, ToolCheck)] = &[
    (Rule::CelUnknownReference, cel::cel_unknown_reference::check),
    (Rule::CelUnknownFunction, cel::cel_unknown_function::check),
    (Rule::CelResultType, cel::cel_result_type::check),
    (Rule::CelUnboundedCost, cel::cel_unbounded_cost::check),
    (
        Rule::CelConstantCondition,
        cel::cel_constant_condition::check,
    ),
    (Rule::CelCostOverBudget, cel::cel_cost_over_budget::check),
    (
        Rule::EffectVerbMismatch,
        effect::effect_verb_mismatch::check,
    ),
    (Rule::RetryUnsafe, effect::retry_unsafe::check),
    (
        Rule::DestructiveWithoutSignal,
        effect::destructive_without_signal::check,
    ),
    (
        Rule::EffectIdempotencyContradiction,
        effect::effect_idempotency_contradiction::check,
    ),
    (
        Rule::ProcessWithoutSandbox,
        effect::process_without_sandbox::check,
    ),
    (Rule::MissingTimeout, policy::missing_timeout::check),
    (Rule::UnboundedOutput, policy::unbounded_output::check),
    (
        Rule::UntestedPermissionRule,
        policy::untested_permission_rule::check,
    ),
    (
        Rule::MissingPermissionRules,
        policy::missing_permission_rules::check,
    ),
    (
        Rule::UnactionableValidationMessage,
        policy::unactionable_validation_message::check,
    ),
    (Rule::MissingErrorHints, policy::missing_error_hints::check),
    (
        Rule::UndeclaredResources,
        policy::undeclared_resources::check,
    ),
    (
        Rule::UnpaginatedListOutput,
        policy::unpaginated_list_output::check,
    ),
    (
        Rule::AnthropicIncompatible,
        provider::anthropic_incompatible::check,
    ),
    (Rule::McpIncompatible, provider::mcp_incompatible::check),
    (
        Rule::OpenaiStrictIncompatible,
        provider::openai_strict_incompatible::check,
    ),
    (
        Rule::ConstraintDroppedByTarget,
        provider::constraint_dropped_by_target::check,
    ),
    (Rule::MultiActionTool, schema::multi_action_tool::check),
    (
        Rule::FreeFormExecParameter,
        schema::free_form_exec_parameter::check,
    ),
    (
        Rule::UnstableResultShape,
        schema::unstable_result_shape::check,
    ),
    (
        Rule::UndeclaredResultSchema,
        schema::undeclared_result_schema::check,
    ),
    (
        Rule::MutuallyExclusiveParameters,
        schema::mutually_exclusive_parameters::check,
    ),
    (
        Rule::ExclusiveBooleanFlags,
        schema::exclusive_boolean_flags::check,
    ),
    (Rule::ToolNameInvalid, naming::tool_name_invalid::check),
    (Rule::MissingDescription, naming::missing_description::check),
    (Rule::ThinDescription, naming::thin_description::check),
    (
        Rule::DescriptionTooLong,
        naming::description_too_long::check,
    ),
    (
        Rule::AmbiguousParameterName,
        naming::ambiguous_parameter_name::check,
    ),
    (Rule::HiddenCharacters, naming::hidden_characters::check),
    (
        Rule::UnguardedReaderAllow,
        effect::unguarded_reader_allow::check,
    ),
    (Rule::ClientNameAllow, policy::client_name_allow::check),
];

/// Rules run on every schema node.
pub(crate) const SCHEMA_CHECKS: &[(Rule, SchemaCheck)] = &[
    (
        Rule::SensitiveParameterUnmarked,
        effect::sensitive_parameter_unmarked::check,
    ),
    (
        Rule::RuntimeKnownParameter,
        effect::runtime_known_parameter::check,
    ),
    (
        Rule::GeminiIncompatible,
        provider::gemini_incompatible::check,
    ),
    (
        Rule::UnpredictableDefault,
        schema::unpredictable_default::check,
    ),
    (Rule::UnboundedArray, schema::unbounded_array::check),
    (Rule::UnboundedString, schema::unbounded_string::check),
    (
        Rule::FreeStringShouldBeEnum,
        schema::free_string_should_be_enum::check,
    ),
    (Rule::OpenObject, schema::open_object::check),
    (
        Rule::UnknownSchemaKeyword,
        schema::unknown_schema_keyword::check,
    ),
    (Rule::FreeFormObject, schema::free_form_object::check),
    (
        Rule::DelimitedStringList,
        schema::delimited_string_list::check,
    ),
    (
        Rule::ConstraintOnlyInProse,
        schema::constraint_only_in_prose::check,
    ),
    (
        Rule::ParameterDescriptionMissing,
        naming::parameter_description_missing::check,
    ),
];

/// Rules run once over all tools.
pub(crate) const SET_CHECKS: &[(Rule, SetCheck)] = &[
    (
        Rule::DeprecatedToolBesideSuccessor,
        naming::deprecated_tool_beside_successor::check,
    ),
    (
        Rule::DestructiveWithoutApproval,
        effect::destructive_without_approval::check,
    ),
    (
        Rule::UndeclaredResultSchema,
        schema::undeclared_result_schema::check_list,
    ),
    (Rule::TooManyTools, provider::too_many_tools::check),
    (
        Rule::StateFolderWritable,
        effect::state_folder_writable::check,
    ),
    (Rule::ToolNameCollision, naming::tool_name_collision::check),
    (Rule::InconsistentNaming, naming::inconsistent_naming::check),
    (Rule::OverlappingTools, naming::overlapping_tools::check),
    (
        Rule::BypassablePathPolicy,
        effect::bypassable_path_policy::check,
    ),
    (Rule::RepeatedDenyGlobs, policy::repeated_deny_globs::check),
    (
        Rule::DefaultProtectionExempted,
        policy::default_protection_exempted::check,
    ),
    (
        Rule::UnreadableCutOutput,
        policy::unreadable_cut_output::check,
    ),
    (Rule::RenamedKey, naming::renamed_key::check),
    (
        Rule::PolicyFileExempted,
        policy::policy_file_exempted::check,
    ),
];
