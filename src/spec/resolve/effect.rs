//! What a call does and how it may be repeated: `effect`, `idempotency` (class and key),
//! `timeout` and `retry`. What is left out comes from toolgate.yaml, then from the effect's own
//! defaults (methods of [`Effect`]).

use serde_json::Value;

use crate::ir::{Backoff, Effect, ErrorType, Idempotency, RetryPolicy};
use crate::spec::ast::{StringOr, ToolSpec};
use crate::spec::source::TextRange;
use crate::spec::yaml::Spanned;

use super::tool::ToolResolver;
use super::{CelRole, did_you_mean};

impl ToolResolver<'_> {
    /// The declared effect; a missing one is an error at `at` (imported lists, which cannot
    /// say, count as destructive).
    pub(super) fn effect(&mut self, t: &ToolSpec, name: &str, at: TextRange) -> Effect {
        match &t.effect {
            Some(e) => e.value,
            None if self.imported => Effect::Destructive,
            None => {
                self.contract(
                    at,
                    format!("tool `{name}` declares no `effect`"),
                    Some(format!(
                        "add `effect:` with one of {}; it drives permissions, scheduling and retries",
                        Effect::ALL.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")
                    )),
                );
                Effect::Destructive
            }
        }
    }

    /// The idempotency class (the effect's default when left out) and the key expression, if
    /// written; the key is compiled later, once the parameters are known.
    pub(super) fn idempotency<'t>(
        &mut self,
        t: &'t ToolSpec,
        effect: Effect,
    ) -> (Idempotency, Option<&'t Spanned<String>>) {
        let Some(s) = &t.idempotency else {
            return (effect.default_idempotency(), None);
        };
        match &s.value {
            StringOr::String(text) => match Idempotency::parse(text) {
                Some(i) => (i, None),
                None => {
                    let names: Vec<&str> = Idempotency::ALL.iter().map(|i| i.as_str()).collect();
                    self.contract(
                        s.range,
                        format!("unknown idempotency class `{text}`"),
                        Some(did_you_mean(text, &names)),
                    );
                    (Idempotency::NonIdempotent, None)
                }
            },
            StringOr::Map(m) => (m.class.value, m.key.as_ref()),
        }
    }

    /// `idempotency.key`, compiled as a string expression over the arguments.
    pub(super) fn idempotency_key(&mut self, key: &Spanned<String>, parameters: &Value) -> String {
        self.compile_site(CelRole::IdempotencyKey, key, parameters);
        key.value.clone()
    }

    /// The timeout in milliseconds (at least 1): the tool's, toolgate.yaml's, the effect's.
    pub(super) fn timeout_ms(&self, t: &ToolSpec, effect: Effect) -> u64 {
        let timeout = t
            .timeout
            .as_ref()
            .map(|t| t.value.0)
            .or(self.defaults.timeout)
            .unwrap_or_else(|| effect.default_timeout());
        (timeout.as_millis() as u64).max(1)
    }

    /// The retry policy: none when left out; three attempts by default, within a budget of
    /// `timeout × attempts` unless one is given.
    pub(super) fn retry(&mut self, t: &ToolSpec, timeout_ms: u64) -> RetryPolicy {
        let Some(r) = &t.retry else {
            return RetryPolicy::none(timeout_ms);
        };
        let r = &r.value;
        let max_attempts = r.max_attempts.as_ref().map(|m| m.value).unwrap_or(3).max(1);
        let mut on = Vec::new();
        if let Some(list) = &r.on {
            for e in &list.value {
                match ErrorType::parse(&e.value) {
                    Some(et) => on.push(et),
                    None => self.unknown_error_type(e.range, &e.value),
                }
            }
        }
        let mut backoff = Backoff::default();
        if let Some(b) = &r.backoff {
            if let Some(v) = &b.value.initial {
                backoff.initial_ms = v.value.0.as_millis() as u64;
            }
            if let Some(v) = &b.value.factor {
                if !(v.value.is_finite() && v.value >= 1.0) {
                    self.contract(
                        v.range,
                        "backoff `factor` must be a number of at least 1",
                        None,
                    );
                }
                backoff.factor = v.value;
            }
            if let Some(v) = &b.value.max {
                backoff.max_ms = v.value.0.as_millis() as u64;
            }
            if let Some(v) = &b.value.jitter {
                backoff.jitter = v.value;
            }
        }
        let budget_ms = r
            .budget
            .as_ref()
            .map(|b| b.value.0.as_millis() as u64)
            .unwrap_or_else(|| timeout_ms.saturating_mul(u64::from(max_attempts)));
        RetryPolicy {
            max_attempts,
            on,
            backoff,
            budget_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{errors, resolve_tool, resolve_with_project, text_at};
    use crate::ir::{Effect, ErrorType, Idempotency};
    use crate::rule::Rule;

    const TOOL: &str = "name: t
description: Write a note into the workspace's notes folder and return its path.
exec: {handler: rust}
parameters: {type: object, properties: {path: {type: string}}, required: [path]}
";

    #[test]
    fn defaults_come_from_the_effect() {
        let r = resolve_tool(&format!("{TOOL}effect: local_write\n"));
        let def = r.definitions().next().unwrap();
        assert_eq!(def.idempotency, Effect::LocalWrite.default_idempotency());
        assert_eq!(
            def.timeout_ms,
            Effect::LocalWrite.default_timeout().as_millis() as u64
        );
        assert_eq!(def.retry.max_attempts, 1);
        assert_eq!(def.idempotency_key, None);
    }

    #[test]
    fn toolgate_yaml_sets_the_timeout_before_the_effect_and_the_tool_before_both() {
        let r = resolve_with_project(
            &format!("{TOOL}effect: read_only\n"),
            "defaults: {timeout: 7s}\n",
        );
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        assert_eq!(r.definitions().next().unwrap().timeout_ms, 7000);
        let r = resolve_with_project(
            &format!("{TOOL}effect: read_only\ntimeout: 2s\n"),
            "defaults: {timeout: 7s}\n",
        );
        assert_eq!(r.definitions().next().unwrap().timeout_ms, 2000);
    }

    #[test]
    fn an_idempotency_key_is_compiled_as_a_string() {
        let r = resolve_tool(&format!(
            "{TOOL}effect: network_write\nidempotency: {{class: conditionally_idempotent, key: args.path}}\n"
        ));
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        let def = r.definitions().next().unwrap();
        assert_eq!(def.idempotency, Idempotency::ConditionallyIdempotent);
        assert_eq!(def.idempotency_key.as_deref(), Some("args.path"));
        assert_eq!(r.tools[0].cel[0].role, super::CelRole::IdempotencyKey);
    }

    #[test]
    fn an_unknown_idempotency_class_is_located_with_a_suggestion() {
        let r = resolve_tool(&format!("{TOOL}effect: pure\nidempotency: idempotnt\n"));
        let e = errors(&r, Rule::InvalidContract);
        assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
        assert_eq!(e[0].message, "unknown idempotency class `idempotnt`");
        assert_eq!(e[0].help.as_deref(), Some("did you mean `idempotent`?"));
        assert_eq!(text_at(&r, e[0]), "idempotnt");
    }

    #[test]
    fn retry_takes_its_defaults_and_refuses_unknown_errors_and_shrinking_backoff() {
        let r = resolve_tool(&format!(
            "{TOOL}effect: read_only\ntimeout: 1s\nretry: {{on: [TIMEOUT, NETWORK_ERROR]}}\n"
        ));
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        let retry = &r.definitions().next().unwrap().retry;
        assert_eq!(retry.max_attempts, 3);
        assert_eq!(retry.on, [ErrorType::Timeout, ErrorType::NetworkError]);
        assert_eq!(retry.budget_ms, 3000);

        let r = resolve_tool(&format!(
            "{TOOL}effect: read_only\nretry: {{on: [TIMOUT], backoff: {{factor: 0.5}}}}\n"
        ));
        let e = errors(&r, Rule::InvalidContract);
        let messages: Vec<&str> = e.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "unknown error type `TIMOUT`",
                "backoff `factor` must be a number of at least 1"
            ]
        );
        assert_eq!(e[0].help.as_deref(), Some("did you mean `TIMEOUT`?"));
        assert_eq!(text_at(&r, e[1]), "0.5");
    }
}
