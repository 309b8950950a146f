//! The closed vocabularies every stage shares: effects, idempotency classes, decisions, error
//! types, statuses and output formatters. Each is an enum with `as_str`/`parse`, never a string.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $text)] $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The spelling used in specs and on the wire.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// Parses the spec spelling.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)+ _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

vocabulary! {
    /// What running a tool can change, as a lattice from harmless to irreversible.
    Effect {
        /// Computes from its arguments only.
        Pure = "pure",
        /// Reads local state (files, repository) without changing it.
        ReadOnly = "read_only",
        /// Changes files inside the workspace.
        LocalWrite = "local_write",
        /// Starts processes whose effects are not known statically.
        ProcessExecution = "process_execution",
        /// Reads from the network.
        NetworkRead = "network_read",
        /// Writes to a network service.
        NetworkWrite = "network_write",
        /// Acts on the outside world (sends mail, creates orders).
        ExternalSideEffect = "external_side_effect",
        /// Deletes or irreversibly overwrites.
        Destructive = "destructive",
    }
}

impl Effect {
    /// The permission decision when neither the tool's rules nor toolgate.yaml's
    /// `defaults.permission` decide: reads run, changes ask.
    pub fn default_permission(self) -> Decision {
        match self {
            Effect::Pure | Effect::ReadOnly => Decision::Allow,
            Effect::LocalWrite
            | Effect::ProcessExecution
            | Effect::NetworkRead
            | Effect::NetworkWrite
            | Effect::ExternalSideEffect
            | Effect::Destructive => Decision::Ask,
        }
    }

    /// The idempotency a tool has when its spec declares none: only tools that change nothing
    /// are safe to repeat.
    pub fn default_idempotency(self) -> Idempotency {
        match self {
            Effect::Pure | Effect::ReadOnly | Effect::NetworkRead => Idempotency::Pure,
            Effect::LocalWrite
            | Effect::ProcessExecution
            | Effect::NetworkWrite
            | Effect::ExternalSideEffect
            | Effect::Destructive => Idempotency::NonIdempotent,
        }
    }

    /// The timeout a tool gets when neither it nor toolgate.yaml sets one.
    pub fn default_timeout(self) -> std::time::Duration {
        let secs = match self {
            Effect::Pure => 5,
            Effect::ReadOnly | Effect::LocalWrite => 30,
            Effect::NetworkRead
            | Effect::NetworkWrite
            | Effect::ExternalSideEffect
            | Effect::Destructive => 60,
            Effect::ProcessExecution => 300,
        };
        std::time::Duration::from_secs(secs)
    }

    /// Whether the tool leaves every environment unchanged (MCP `readOnlyHint`).
    pub fn is_read_only(self) -> bool {
        matches!(self, Effect::Pure | Effect::ReadOnly | Effect::NetworkRead)
    }

    /// Whether the tool reaches entities outside the machine (MCP `openWorldHint`).
    pub fn is_open_world(self) -> bool {
        matches!(
            self,
            Effect::NetworkRead | Effect::NetworkWrite | Effect::ExternalSideEffect
        )
    }

    /// Whether the effect cannot be described by declared resources alone, so the scheduler
    /// must treat an undeclared call as conflicting with everything.
    pub fn is_opaque(self) -> bool {
        matches!(
            self,
            Effect::ProcessExecution
                | Effect::ExternalSideEffect
                | Effect::NetworkWrite
                | Effect::Destructive
        )
    }
}

vocabulary! {
    /// A builtin tool the runtime implements (`exec: {builtin: NAME}`): the one list the spec
    /// resolver checks names against and the runtime dispatches on.
    Builtin {
        /// `read_file`
        ReadFile = "read_file",
        /// `search_files`
        SearchFiles = "search_files",
        /// `glob`
        Glob = "glob",
        /// `list_dir`
        ListDir = "list_dir",
        /// `write_file`
        WriteFile = "write_file",
        /// `apply_patch`
        ApplyPatch = "apply_patch",
        /// `read_artifact`
        ReadArtifact = "read_artifact",
        /// `echo`
        Echo = "echo",
    }
}

impl Builtin {
    /// Every builtin's spec name, in declaration order.
    pub fn names() -> Vec<&'static str> {
        Builtin::ALL.iter().map(|b| b.as_str()).collect()
    }
}

vocabulary! {
    /// The language of a handler the embedding program binds (`exec: {handler: rust}`).
    HandlerLanguage {
        /// A Rust function, bound through the generated crate or `Runtime::bind`.
        Rust = "rust",
    }
}

vocabulary! {
    /// Whether running a call twice has the effect of running it once.
    Idempotency {
        /// No side effect at all: always safe to repeat.
        Pure = "pure",
        /// Repeating has no further effect.
        Idempotent = "idempotent",
        /// Safe to repeat while a precondition holds (e.g. an expected content hash).
        ConditionallyIdempotent = "conditionally_idempotent",
        /// Repeating repeats the effect.
        NonIdempotent = "non_idempotent",
    }
}

impl Idempotency {
    /// Whether a retry or re-run is safe without further evidence.
    pub fn is_repeatable(self) -> bool {
        matches!(self, Idempotency::Pure | Idempotency::Idempotent)
    }
}

vocabulary! {
    /// A permission outcome; ordered so that the strictest of several matches is the `max`.
    Decision {
        /// Run without asking.
        Allow = "allow",
        /// Ask an approver first.
        Ask = "ask",
        /// Refuse.
        Deny = "deny",
    }
}

vocabulary! {
    /// Why a tool call did not succeed: each type calls for a different recovery.
    ErrorType {
        /// The model named a tool that does not exist.
        UnknownTool = "UNKNOWN_TOOL",
        /// The arguments do not match the parameter schema.
        InvalidArguments = "INVALID_ARGUMENTS",
        /// The arguments are well-formed but break a semantic rule or the path policy.
        SemanticValidationError = "SEMANTIC_VALIDATION_ERROR",
        /// A policy rule refused the call.
        PolicyDenied = "POLICY_DENIED",
        /// A person refused the call.
        UserDenied = "USER_DENIED",
        /// Approval was needed and nobody could give it.
        ApprovalUnavailable = "APPROVAL_UNAVAILABLE",
        /// The execution budget ran out.
        Timeout = "TIMEOUT",
        /// Someone stopped the call.
        Cancelled = "CANCELLED",
        /// The sandbox blocked an operation.
        SandboxViolation = "SANDBOX_VIOLATION",
        /// The process failed (non-zero exit, crashed, could not start).
        ProcessError = "PROCESS_ERROR",
        /// A network request failed.
        NetworkError = "NETWORK_ERROR",
        /// A remote service asked the caller to slow down.
        RateLimited = "RATE_LIMITED",
        /// A file or object named in the arguments does not exist.
        ResourceNotFound = "RESOURCE_NOT_FOUND",
        /// A precondition in the arguments (such as an expected hash) no longer holds.
        PreconditionFailed = "PRECONDITION_FAILED",
        /// The output exceeded what the tool may return.
        OutputLimit = "OUTPUT_LIMIT",
        /// The arguments were too large for the tool's CEL rules to be evaluated within their
        /// runtime cost budget (steps, bytes built, the call's timeout).
        CostLimit = "COST_LIMIT",
        /// The scheduler could not place the call.
        SchedulingConflict = "SCHEDULING_CONFLICT",
        /// The tool's implementation failed unexpectedly.
        RuntimeException = "RUNTIME_EXCEPTION",
        /// The call may or may not have taken effect.
        UnknownOutcome = "UNKNOWN_OUTCOME",
        /// An upstream MCP server failed the call, or answered in a way toolgate cannot read
        /// (its own error type, if it named one, is in the message: never toolgate's verdict).
        UpstreamError = "UPSTREAM_ERROR",
    }
}

vocabulary! {
    /// How a call ended.
    Status {
        /// It ran and did what was asked.
        Success = "success",
        /// It ran, or was refused before running, and failed.
        Error = "error",
        /// Its budget ran out.
        Timeout = "timeout",
        /// It was stopped.
        Cancelled = "cancelled",
        /// Permission was refused.
        Denied = "denied",
        /// The sandbox blocked it.
        SandboxViolation = "sandbox_violation",
        /// Nobody knows whether it took effect.
        UnknownOutcome = "unknown_outcome",
    }
}

vocabulary! {
    /// The per-tool output formatter that turns raw output into what the model reads.
    FormatterKind {
        /// Plain text, bounded head and tail.
        Text = "text",
        /// Shell commands: command, exit code, head/tail with an omitted-lines marker.
        Bash = "bash",
        /// Test runners: counts, failed names and the key lines of each failure.
        Tests = "tests",
        /// Search results: match and file counts, top matches.
        Grep = "grep",
        /// File contents: range, hash, truncation marker.
        ReadFile = "read_file",
        /// Diffs: files, hunks and +/- stats.
        GitDiff = "git_diff",
        /// `git status --porcelain --branch`: the branch line and the changed files.
        GitStatus = "git_status",
        /// Structured JSON results.
        Json = "json",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictest_decision_is_max() {
        assert_eq!(
            [Decision::Allow, Decision::Deny, Decision::Ask]
                .into_iter()
                .max(),
            Some(Decision::Deny)
        );
    }

    #[test]
    fn vocabulary_round_trips() {
        for e in ErrorType::ALL {
            assert_eq!(ErrorType::parse(e.as_str()), Some(*e));
        }
        assert!(Effect::ReadOnly < Effect::Destructive);
    }
}
