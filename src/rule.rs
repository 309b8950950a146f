//! Rule identity: every rule's stable code (`TGS001`), kebab name and group, below both the
//! resolver (which reports the contract rules, `TGK`) and the linter (which holds each rule's
//! check, severity and documentation: the linter's `RuleMeta`). Codes are never reused; a
//! renamed rule keeps its code.

macro_rules! registry {
    ($( $(#[$doc:meta])* $variant:ident => ($code:literal, $name:literal, $group:ident) ),+ $(,)?) => {
        /// Every rule.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Rule {
            $(
                #[doc = concat!("`", $code, "` ", $name, ".")]
                $variant
            ),+
        }

        impl Rule {
            /// Every rule, in code order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant),+];

            /// The rule's code (`TGS001`).
            pub fn code(self) -> &'static str {
                match self {
                    $(Rule::$variant => $code),+
                }
            }

            /// The rule's kebab-case name (`multi-action-tool`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Rule::$variant => $name),+
                }
            }

            /// The rule's group.
            pub fn group(self) -> Group {
                match self {
                    $(Rule::$variant => Group::$group),+
                }
            }
        }
    };
}

registry! {
    // Contract validity (resolution reports these).
    InvalidContract => ("TGK001", "invalid-contract", Contract),
    UnknownProjectReference => ("TGK002", "unknown-project-reference", Contract),
    InvalidJsonSchema => ("TGK003", "invalid-json-schema", Contract),
    CelSyntaxError => ("TGK004", "cel-syntax-error", Contract),
    PermissionExampleFailed => ("TGK005", "permission-example-failed", Contract),
    DuplicateToolName => ("TGK006", "duplicate-tool-name", Contract),
    InvalidRuleId => ("TGK007", "invalid-rule-id", Contract),
    // Schema design.
    MultiActionTool => ("TGS001", "multi-action-tool", Schema),
    FreeFormExecParameter => ("TGS002", "free-form-exec-parameter", Schema),
    UnstableResultShape => ("TGS003", "unstable-result-shape", Schema),
    MutuallyExclusiveParameters => ("TGS004", "mutually-exclusive-parameters", Schema),
    UnpredictableDefault => ("TGS005", "unpredictable-default", Schema),
    UnboundedArray => ("TGS006", "unbounded-array", Schema),
    UnboundedString => ("TGS007", "unbounded-string", Schema),
    FreeStringShouldBeEnum => ("TGS008", "free-string-should-be-enum", Schema),
    OpenObject => ("TGS009", "open-object", Schema),
    FreeFormObject => ("TGS010", "free-form-object", Schema),
    ExclusiveBooleanFlags => ("TGS011", "exclusive-boolean-flags", Schema),
    DelimitedStringList => ("TGS012", "delimited-string-list", Schema),
    UnknownSchemaKeyword => ("TGS013", "unknown-schema-keyword", Schema),
    // Naming.
    ToolNameInvalid => ("TGN001", "tool-name-invalid", Naming),
    ToolNameCollision => ("TGN002", "tool-name-collision", Naming),
    MissingDescription => ("TGN003", "missing-description", Naming),
    ParameterDescriptionMissing => ("TGN004", "parameter-description-missing", Naming),
    ThinDescription => ("TGN005", "thin-description", Naming),
    DescriptionTooLong => ("TGN006", "description-too-long", Naming),
    AmbiguousParameterName => ("TGN007", "ambiguous-parameter-name", Naming),
    HiddenCharacters => ("TGN008", "hidden-characters", Naming),
    InconsistentNaming => ("TGN009", "inconsistent-naming", Naming),
    OverlappingTools => ("TGN010", "overlapping-tools", Naming),
    // Effect and safety.
    EffectVerbMismatch => ("TGE001", "effect-verb-mismatch", Effect),
    DestructiveWithoutApproval => ("TGE002", "destructive-without-approval", Effect),
    RetryUnsafe => ("TGE003", "retry-unsafe", Effect),
    SensitiveParameterUnmarked => ("TGE004", "sensitive-parameter-unmarked", Effect),
    EffectIdempotencyContradiction => ("TGE005", "effect-idempotency-contradiction", Effect),
    RuntimeKnownParameter => ("TGE006", "runtime-known-parameter", Effect),
    ProcessWithoutSandbox => ("TGE007", "process-without-sandbox", Effect),
    StateFolderWritable => ("TGE008", "state-folder-writable", Effect),
    // Runtime policy.
    MissingTimeout => ("TGP001", "missing-timeout", Policy),
    UnboundedOutput => ("TGP002", "unbounded-output", Policy),
    UntestedPermissionRule => ("TGP003", "untested-permission-rule", Policy),
    MissingPermissionRules => ("TGP004", "missing-permission-rules", Policy),
    UnactionableValidationMessage => ("TGP005", "unactionable-validation-message", Policy),
    MissingErrorHints => ("TGP006", "missing-error-hints", Policy),
    UndeclaredResources => ("TGP007", "undeclared-resources", Policy),
    UnpaginatedListOutput => ("TGP008", "unpaginated-list-output", Policy),
    UnusedSuppression => ("TGP009", "unused-suppression", Policy),
    // CEL.
    CelUnknownReference => ("TGC001", "cel-unknown-reference", Cel),
    CelUnknownFunction => ("TGC002", "cel-unknown-function", Cel),
    CelResultType => ("TGC003", "cel-result-type", Cel),
    CelUnboundedCost => ("TGC004", "cel-unbounded-cost", Cel),
    CelConstantCondition => ("TGC005", "cel-constant-condition", Cel),
    CelCostOverBudget => ("TGC006", "cel-cost-over-budget", Cel),
    // Provider compatibility.
    OpenaiStrictIncompatible => ("TGV001", "openai-strict-incompatible", Provider),
    AnthropicIncompatible => ("TGV002", "anthropic-incompatible", Provider),
    GeminiIncompatible => ("TGV003", "gemini-incompatible", Provider),
    McpIncompatible => ("TGV004", "mcp-incompatible", Provider),
    TooManyTools => ("TGV005", "too-many-tools", Provider),
    ConstraintDroppedByTarget => ("TGV006", "constraint-dropped-by-target", Provider),
    // Containment. Rules are appended, not placed by group, so that the SARIF `ruleIndex` of
    // every earlier rule stays what it was.
    BypassablePathPolicy => ("TGE009", "bypassable-path-policy", Effect),
    UnguardedReaderAllow => ("TGE010", "unguarded-reader-allow", Effect),
    RepeatedDenyGlobs => ("TGP010", "repeated-deny-globs", Policy),
    DefaultProtectionExempted => ("TGP011", "default-protection-exempted", Policy),
    // Lint judgment on real tool lists.
    UndeclaredResultSchema => ("TGS014", "undeclared-result-schema", Schema),
    ConstraintOnlyInProse => ("TGS015", "constraint-only-in-prose", Schema),
    DestructiveWithoutSignal => ("TGE011", "destructive-without-signal", Effect),
    // Nothing cut is lost (appended likewise).
    UnreadableCutOutput => ("TGP012", "unreadable-cut-output", Policy),
    // Stable names (appended likewise).
    DeprecatedToolBesideSuccessor => ("TGN011", "deprecated-tool-beside-successor", Naming),
    // One name per concept (appended likewise).
    RenamedKey => ("TGN012", "renamed-key", Naming),
    // Policy files stay read-only (appended likewise).
    PolicyFileExempted => ("TGP013", "policy-file-exempted", Policy),
    // Unverified principal fields (appended likewise).
    ClientNameAllow => ("TGP014", "client-name-allow", Policy),
}

impl Rule {
    /// The rule with this code or name (case-insensitive code).
    pub fn find(key: &str) -> Option<Rule> {
        Rule::ALL
            .iter()
            .copied()
            .find(|r| r.code().eq_ignore_ascii_case(key) || r.name() == key)
    }

    /// Whether the rule reports an invalid contract (fixed severity, cannot be suppressed).
    pub fn is_contract(self) -> bool {
        self.group() == Group::Contract
    }
}

/// The rule groups, each with a code letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    /// `TGK`: the contract is invalid; toolgate cannot use it. Not configurable.
    Contract,
    /// `TGS`: argument and result schema design.
    Schema,
    /// `TGN`: names and descriptions.
    Naming,
    /// `TGE`: effect and safety consistency.
    Effect,
    /// `TGP`: runtime policy completeness.
    Policy,
    /// `TGC`: CEL expressions that cannot be checked or bounded.
    Cel,
    /// `TGV`: provider compatibility.
    Provider,
}

impl Group {
    /// Every group.
    pub const ALL: &'static [Group] = &[
        Group::Contract,
        Group::Schema,
        Group::Naming,
        Group::Effect,
        Group::Policy,
        Group::Cel,
        Group::Provider,
    ];

    /// The group's name.
    pub fn name(self) -> &'static str {
        match self {
            Group::Contract => "contract",
            Group::Schema => "schema-design",
            Group::Naming => "naming",
            Group::Effect => "effect-safety",
            Group::Policy => "runtime-policy",
            Group::Cel => "cel",
            Group::Provider => "provider",
        }
    }

    /// The code prefix (`TGS`).
    pub fn prefix(self) -> &'static str {
        match self {
            Group::Contract => "TGK",
            Group::Schema => "TGS",
            Group::Naming => "TGN",
            Group::Effect => "TGE",
            Group::Policy => "TGP",
            Group::Cel => "TGC",
            Group::Provider => "TGV",
        }
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
            assert!(codes.insert(r.code()), "duplicate code {}", r.code());
            assert!(names.insert(r.name()), "duplicate name {}", r.name());
            assert!(
                r.code().starts_with(r.group().prefix()),
                "{} is not in group {:?}",
                r.code(),
                r.group()
            );
            assert_eq!(r.code().len(), 6, "{}", r.code());
            assert!(
                r.name().chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}",
                r.name()
            );
            assert_eq!(Rule::find(r.name()), Some(*r));
            assert_eq!(Rule::find(&r.code().to_ascii_lowercase()), Some(*r));
        }
    }
}
