//! Lifecycle hooks (chapter §40) for policy, audit, metrics and redaction.
//!
//! A [`Hook`] is called at named [`HookPoint`]s with a [`CallView`] — shared references only —
//! and a `&mut` [`Annotations`]; before projection it also gets `&mut` [`Redactions`]. A hook
//! never holds the call, the authorization or the result, so it cannot skip a stage, run a call
//! itself or forge a result. What it can do is bounded by the types:
//!
//! - note facts for the trace ([`Annotations::note`]);
//! - at [`HookPoint::BeforePermission`], make the decision stricter
//!   ([`Annotations::restrict`] with ask or deny; an allow restricts nothing, and a deny from
//!   the rules stays a deny);
//! - before projection, mask text the model should not see ([`Redactions`]).

use serde::Serialize;
use serde_json::Value;

use crate::ir::{Decision, Effect};
use crate::runtime::permission::{PermissionRecord, Restriction};
use crate::runtime::result::ToolResult;

/// Where in the pipeline a hook is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookPoint {
    /// Before lookup and validation (the raw call).
    BeforeValidate,
    /// After validation passed.
    AfterValidate,
    /// Before the permission decision; restrictions are honoured here.
    BeforePermission,
    /// After the decision (allowed or not).
    AfterPermission,
    /// Just before the backend runs (once per attempt).
    BeforeExecute,
    /// After the backend returned a success.
    AfterExecute,
    /// After a call ended without success (refused or failed).
    OnError,
    /// Before the model-facing projection is made; redactions are honoured here.
    BeforeProject,
    /// After the projection is made.
    AfterProject,
}

impl HookPoint {
    /// Every point, in pipeline order.
    pub const ALL: &'static [HookPoint] = &[
        HookPoint::BeforeValidate,
        HookPoint::AfterValidate,
        HookPoint::BeforePermission,
        HookPoint::AfterPermission,
        HookPoint::BeforeExecute,
        HookPoint::AfterExecute,
        HookPoint::OnError,
        HookPoint::BeforeProject,
        HookPoint::AfterProject,
    ];
}

/// What a hook sees of a call: references only.
#[derive(Clone, Copy, Debug)]
pub struct CallView<'a> {
    /// Where the hook is called.
    pub point: HookPoint,
    /// The session.
    pub session_id: &'a str,
    /// The context.
    pub context: &'a str,
    /// The call id.
    pub call_id: &'a str,
    /// The tool name as the model wrote it.
    pub tool: &'a str,
    /// The tool's effect, once the tool is known.
    pub effect: Option<Effect>,
    /// The arguments as the model wrote them; from `AfterValidate` on, with workspace path
    /// parameters resolved (symbolic links followed) — what the rules and the tool see.
    pub arguments: &'a Value,
    /// The permission record, once decided.
    pub permission: Option<&'a PermissionRecord>,
    /// The attempt (0 before execution).
    pub attempt: u32,
    /// The result, once normalized.
    pub result: Option<&'a ToolResult>,
    /// The projection text, at [`HookPoint::AfterProject`].
    pub projection: Option<&'a str>,
}

/// What hooks add to a call: notes for the trace, and restrictions for the permission stage.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Annotations {
    notes: Vec<(String, String)>,
    #[serde(skip)]
    restrictions: Vec<Restriction>,
}

impl Annotations {
    /// Records a fact in the call's trace.
    pub fn note(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.notes.push((key.into(), value.into()));
    }

    /// Asks for a stricter decision. Honoured at [`HookPoint::BeforePermission`] only; an
    /// allow is ignored, because a hook can tighten a decision but never loosen one.
    pub fn restrict(&mut self, decision: Decision, reason: impl Into<String>) {
        if decision > Decision::Allow {
            self.restrictions.push(Restriction {
                decision,
                reason: reason.into(),
            });
        }
    }

    /// The notes so far.
    pub fn notes(&self) -> &[(String, String)] {
        &self.notes
    }

    pub(crate) fn take_restrictions(&mut self) -> Vec<Restriction> {
        std::mem::take(&mut self.restrictions)
    }
}

/// Text to mask in what the model sees.
#[derive(Clone, Debug, Default)]
pub struct Redactions {
    literals: Vec<String>,
    patterns: Vec<regex::Regex>,
}

impl Redactions {
    /// Masks every occurrence of a string.
    pub fn literal(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() {
            self.literals.push(text);
        }
    }

    /// Masks every match of a regular expression.
    pub fn pattern(&mut self, re: regex::Regex) {
        self.patterns.push(re);
    }

    /// Whether there is nothing to mask.
    pub fn is_empty(&self) -> bool {
        self.literals.is_empty() && self.patterns.is_empty()
    }

    /// Applies every redaction to a text.
    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for l in &self.literals {
            if out.contains(l.as_str()) {
                out = out.replace(l.as_str(), crate::runtime::result::REDACTED);
            }
        }
        for p in &self.patterns {
            if p.is_match(&out) {
                out = p
                    .replace_all(&out, crate::runtime::result::REDACTED)
                    .into_owned();
            }
        }
        out
    }
}

/// A lifecycle hook.
pub trait Hook: Send + Sync {
    /// The points this hook wants (all by default).
    fn points(&self) -> &[HookPoint] {
        HookPoint::ALL
    }

    /// Called at each of [`Hook::points`] (by default, does nothing).
    fn on(&self, _view: &CallView<'_>, _annotations: &mut Annotations) {}

    /// Called at [`HookPoint::BeforeProject`] to mask text in the projection.
    fn redact(&self, _view: &CallView<'_>, _redactions: &mut Redactions) {}
}

impl<H: Hook + ?Sized> Hook for std::sync::Arc<H> {
    fn points(&self) -> &[HookPoint] {
        (**self).points()
    }

    fn on(&self, view: &CallView<'_>, annotations: &mut Annotations) {
        (**self).on(view, annotations);
    }

    fn redact(&self, view: &CallView<'_>, redactions: &mut Redactions) {
        (**self).redact(view, redactions);
    }
}

/// The hooks of a runtime, called in registration order.
#[derive(Clone, Default)]
pub(crate) struct HookSet {
    hooks: Vec<std::sync::Arc<dyn Hook>>,
}

impl HookSet {
    pub(crate) fn push(&mut self, hook: std::sync::Arc<dyn Hook>) {
        self.hooks.push(hook);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Calls every hook registered for the view's point.
    pub(crate) fn call(&self, view: &CallView<'_>, annotations: &mut Annotations) {
        for h in &self.hooks {
            if h.points().contains(&view.point) {
                h.on(view, annotations);
            }
        }
    }

    /// Collects redactions from every hook.
    pub(crate) fn redactions(&self, view: &CallView<'_>) -> Redactions {
        let mut r = Redactions::default();
        for h in &self.hooks {
            h.redact(view, &mut r);
        }
        r
    }
}
