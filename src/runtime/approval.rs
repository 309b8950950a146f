//! Approvals: who answers an `ask`, what the answers mean, and what a session remembers.
//!
//! An [`Approver`] gets an [`ApprovalRequest`] and answers with an [`ApprovalOutcome`]:
//! allow-once, allow-for-session, deny, cancel or unavailable. Only the two allows grant, and
//! only the action asked about:
//!
//! - allow-once authorizes this call and remembers nothing;
//! - allow-for-session remembers a [`Grant`] bound to the tool and the *canonical form* of the
//!   call (tool + canonical JSON of its arguments), so a later identical call proceeds and any
//!   other call asks again;
//! - allow-for-session with an [`ApprovalScope`] — the lesson's approval card, listing the
//!   resources (files) a change may touch — remembers the card instead: a later call of the same
//!   tool, asked by the same rule, whose writes all lie on the card proceeds; one that writes
//!   anything else asks again. Cards apply only to `local_write` tools, whose resource keys name
//!   exactly what a call changes; for other effects a session grant stays exact.
//!
//! Deny, cancel, unavailable and an approver that does not answer within the context's
//! `approval_timeout_ms` never grant: silence is never consent.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use crate::ir::Effect;
use crate::policy::{DecisionSource, RuleOutcome};

/// What the approver is asked.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApprovalRequest {
    /// The session.
    pub session_id: String,
    /// The context (`interactive`, …).
    pub context: String,
    /// The call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its contract version.
    pub tool_version: u32,
    /// Its effect.
    pub effect: Effect,
    /// The arguments, canonical JSON.
    pub arguments: String,
    /// Why approval is needed (the asking rule's reason).
    pub reason: Option<String>,
    /// The rule that asked.
    pub asked_by: DecisionSource,
    /// Every rule and whether it matched.
    pub chain: Vec<RuleOutcome>,
    /// The card proposed for an allow-for-session: the resources this call writes. `None` when
    /// an allow-for-session grants only this exact call (a tool whose effect takes no cards, see
    /// `card_applies`, or one that declares no writes).
    pub proposed_scope: Option<ApprovalScope>,
}

/// An approval card: the resources (e.g. `file:src/auth/login.py`) a change may touch.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalScope {
    /// Resource keys a later call may write.
    pub writes: BTreeSet<String>,
}

/// An approver's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum ApprovalOutcome {
    /// Run this call; remember nothing.
    AllowOnce,
    /// Run this call, and later calls of the same canonical form (or inside the card).
    AllowForSession {
        /// The approved card, when the approval is for a set of files rather than one call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scope: Option<ApprovalScope>,
    },
    /// Do not run it.
    Deny {
        /// What the person said, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Stop: this call and the rest of the turn are cancelled.
    Cancel,
    /// Nobody could answer.
    Unavailable,
}

impl ApprovalOutcome {
    /// Its name in traces.
    pub fn as_str(&self) -> &'static str {
        match self {
            ApprovalOutcome::AllowOnce => "allow_once",
            ApprovalOutcome::AllowForSession { .. } => "allow_session",
            ApprovalOutcome::Deny { .. } => "deny",
            ApprovalOutcome::Cancel => "cancel",
            ApprovalOutcome::Unavailable => "unavailable",
        }
    }
}

/// The future an approver returns.
pub type ApprovalFuture<'a> = Pin<Box<dyn Future<Output = ApprovalOutcome> + Send + 'a>>;

/// Someone (or something) that can answer an `ask`: a terminal prompt, an MCP client's
/// elicitation, a chat UI.
pub trait Approver: Send + Sync {
    /// Asks; the runtime stops waiting after the context's timeout and counts that as
    /// unavailable.
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a>;

    /// Why this approver cannot ask about a request at all — it cannot show it in full (see
    /// `crate::runtime::question`) — checked before asking; `None` when it can. Such a call
    /// ends as APPROVAL_UNAVAILABLE with this reason, and nobody is asked.
    fn cannot_ask(&self, _request: &ApprovalRequest) -> Option<String> {
        None
    }
}

impl<A: Approver + ?Sized> Approver for std::sync::Arc<A> {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        (**self).request(request)
    }

    fn cannot_ask(&self, request: &ApprovalRequest) -> Option<String> {
        (**self).cannot_ask(request)
    }
}

/// An approver that answers with a closure (see [`approver_fn`]).
#[derive(Clone)]
pub struct ApproverFn<F>(F);

impl<F> std::fmt::Debug for ApproverFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApproverFn")
    }
}

/// An approver that decides with `decide`, at once (a policy function, a script).
///
/// ```
/// use toolgate::runtime::extend::{ApprovalOutcome, approver_fn};
///
/// let approver = approver_fn(|request| {
///     if request.tool == "read_file" {
///         ApprovalOutcome::AllowOnce
///     } else {
///         ApprovalOutcome::Deny { reason: Some("only reads are approved here".into()) }
///     }
/// });
/// # let _ = approver;
/// ```
pub fn approver_fn<F>(decide: F) -> ApproverFn<F>
where
    F: Fn(&ApprovalRequest) -> ApprovalOutcome + Send + Sync,
{
    ApproverFn(decide)
}

impl<F> Approver for ApproverFn<F>
where
    F: Fn(&ApprovalRequest) -> ApprovalOutcome + Send + Sync,
{
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        let outcome = (self.0)(request);
        Box::pin(async move { outcome })
    }
}

/// An approver that always gives the same answer (scripts, tests, `toolgate call --approve`).
#[derive(Clone, Debug)]
pub struct FixedApprover(pub ApprovalOutcome);

impl Approver for FixedApprover {
    fn request<'a>(&'a self, _request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        let outcome = self.0.clone();
        Box::pin(async move { outcome })
    }
}

/// A remembered allow-for-session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Grant {
    /// Exactly this call again.
    Exact {
        /// The tool.
        tool: String,
        /// Its canonical arguments.
        arguments: String,
    },
    /// Calls of this tool, asked by the same rule, writing only resources on the card.
    Card {
        /// The tool.
        tool: String,
        /// The rule whose ask the card answers.
        asked_by: DecisionSource,
        /// The card.
        scope: ApprovalScope,
    },
}

/// What a session has been granted.
#[derive(Clone, Debug, Default)]
pub struct GrantBook {
    grants: Vec<Grant>,
}

/// A call as the grant book sees it.
#[derive(Clone, Copy, Debug)]
pub struct GrantQuery<'a> {
    /// The tool.
    pub tool: &'a str,
    /// Its effect.
    pub effect: Effect,
    /// Canonical arguments.
    pub arguments: &'a str,
    /// The rule that asked.
    pub asked_by: &'a DecisionSource,
    /// The resources the call writes.
    pub writes: &'a BTreeSet<String>,
}

impl GrantBook {
    /// Every grant, oldest first.
    pub fn grants(&self) -> &[Grant] {
        &self.grants
    }

    /// The grant that covers a call, if any.
    pub fn covering(&self, q: &GrantQuery<'_>) -> Option<&Grant> {
        self.grants.iter().find(|g| match g {
            Grant::Exact { tool, arguments } => tool == q.tool && arguments == q.arguments,
            Grant::Card {
                tool,
                asked_by,
                scope,
            } => {
                tool == q.tool
                    && asked_by == q.asked_by
                    && card_applies(q.effect)
                    && !q.writes.is_empty()
                    && q.writes.is_subset(&scope.writes)
            }
        })
    }

    /// Adds grants recorded elsewhere (the session's grants in a shared journal); those it has
    /// already are not added twice. Returns how many were new.
    pub fn adopt(&mut self, grants: impl IntoIterator<Item = Grant>) -> usize {
        let before = self.grants.len();
        for grant in grants {
            if !self.grants.contains(&grant) {
                self.grants.push(grant);
            }
        }
        self.grants.len() - before
    }

    /// Records an allow-for-session for the call asked about. A card is kept only where cards
    /// apply (see the module docs); otherwise the grant is the exact call.
    pub fn remember(&mut self, q: &GrantQuery<'_>, scope: Option<ApprovalScope>) -> Grant {
        let grant = match scope {
            Some(scope) if card_applies(q.effect) && !scope.writes.is_empty() => Grant::Card {
                tool: q.tool.to_owned(),
                asked_by: q.asked_by.clone(),
                scope,
            },
            _ => Grant::Exact {
                tool: q.tool.to_owned(),
                arguments: q.arguments.to_owned(),
            },
        };
        if !self.grants.contains(&grant) {
            self.grants.push(grant.clone());
        }
        grant
    }
}

/// Whether an allow-for-session of a tool with this effect can be a card. Cards name files;
/// only tools that change nothing but declared local resources can be trusted to stay inside
/// one. For any other effect the session grant is the exact call.
pub fn card_applies(effect: Effect) -> bool {
    effect == Effect::LocalWrite
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query<'a>(
        args: &'a str,
        writes: &'a BTreeSet<String>,
        asked_by: &'a DecisionSource,
        effect: Effect,
    ) -> GrantQuery<'a> {
        GrantQuery {
            tool: "apply_patch",
            effect,
            arguments: args,
            asked_by,
            writes,
        }
    }

    #[test]
    fn exact_grant_covers_only_the_same_call() {
        let rule = DecisionSource::Rule { id: "r".into() };
        let w = BTreeSet::from(["file:a".to_owned()]);
        let mut book = GrantBook::default();
        book.remember(&query("{\"x\":1}", &w, &rule, Effect::LocalWrite), None);
        assert!(
            book.covering(&query("{\"x\":1}", &w, &rule, Effect::LocalWrite))
                .is_some()
        );
        assert!(
            book.covering(&query("{\"x\":2}", &w, &rule, Effect::LocalWrite))
                .is_none()
        );
    }

    #[test]
    fn card_covers_files_on_it_and_nothing_else() {
        let rule = DecisionSource::Rule { id: "r".into() };
        let card = ApprovalScope {
            writes: BTreeSet::from(["file:a".to_owned(), "file:b".to_owned()]),
        };
        let a = BTreeSet::from(["file:a".to_owned()]);
        let c = BTreeSet::from(["file:c".to_owned()]);
        let mut book = GrantBook::default();
        book.remember(
            &query("1", &a, &rule, Effect::LocalWrite),
            Some(card.clone()),
        );
        assert!(
            book.covering(&query("2", &a, &rule, Effect::LocalWrite))
                .is_some()
        );
        assert!(
            book.covering(&query("3", &c, &rule, Effect::LocalWrite))
                .is_none()
        );
        let other = DecisionSource::Default;
        assert!(
            book.covering(&query("2", &a, &other, Effect::LocalWrite))
                .is_none()
        );
        // A command tool's card would say nothing about what the command does: exact only.
        let mut book = GrantBook::default();
        let g = book.remember(&query("1", &a, &rule, Effect::ProcessExecution), Some(card));
        assert!(matches!(g, Grant::Exact { .. }));
    }
}
