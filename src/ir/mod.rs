//! The intermediate form: resolved tool contracts and project settings, with no spans.
//!
//! [`crate::spec`] produces it; the emitters, the generated crates and the runtime consume it.

pub mod bundle;
pub mod http;
pub mod project;
pub mod provider;
pub mod template;
pub mod tool;
pub mod vocab;

pub use bundle::{Bundle, BundleError};
pub use http::{HttpBody, HttpHeader, HttpSpec, NetworkPolicy, SecretSource};
pub use project::{
    AskMode, Budgets, ContextPolicy, McpServer, ProjectConfig, ProtectPolicy, ProtectedPath,
    ResourceLimits, SandboxProfile, ServeAuth, ServeConfig, ServeLimits, ServerEnv, Target,
    Toolset,
};
pub use provider::{Provider, ProviderNames};
pub use tool::{
    ArgvElement, Backoff, CommandSpec, ConcurrencyGroup, Deprecation, EnvSpec, ExecSpec,
    OutputKeep, OutputPolicy, PermissionExample, PermissionPolicy, PermissionRule, ResourceSets,
    RetryPolicy, ToolDefinition, ValidationRule,
};
pub use vocab::{
    Builtin, Decision, Effect, ErrorType, FormatterKind, HandlerLanguage, Idempotency, Status,
};
