//! The permission stage (chapter §10): capability is not permission.
//!
//! [`evaluate`] first asks the project's protected paths: a call whose resolved path argument
//! (or the literal prefix of a glob argument) is protected is denied, and no rule, session
//! grant, approver or hook can change that — the approver is never asked. Otherwise it runs the
//! tool's rules through [`CompiledPolicy`](crate::policy::CompiledPolicy) (deny > ask > allow,
//! strictest match, else the effect's default from toolgate.yaml) and folds in restrictions
//! hooks asked for — a hook can make a decision stricter, never looser. [`authorize`] then
//! settles it: allow runs; deny refuses with POLICY_DENIED; ask looks for a session [`Grant`],
//! then asks the [`Approver`] where the context has someone to ask. The only way to get an
//! [`AuthorizedCall`] — the one thing an executor accepts — is an allow out of [`authorize`].
//! Every decision keeps its rule chain in a [`PermissionRecord`].

use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::cel::Evaluator;
use crate::ir::{AskMode, ContextPolicy, Decision, ErrorType, Status, ToolDefinition};
use crate::policy::arguments::protected_decision;
use crate::policy::{DecisionSource, PolicyDecision, ProtectedPaths, Protection, RuleOutcome};
use crate::runtime::approval::{
    ApprovalOutcome, ApprovalRequest, ApprovalScope, Approver, Grant, GrantQuery, card_applies,
};
use crate::runtime::journal::Journal;
use crate::runtime::registry::CompiledTool;
use crate::runtime::scheduler::Footprint;
use crate::runtime::session::Session;
use crate::runtime::validate::CheckedCall;
use crate::runtime::workspace::{PathViolation, Workspace};

/// What the model is told after a protected path refused its call.
pub const PROTECTED_HINT: &str = "No tool may read or write a protected path, and no approval changes that. Do not retry it with another spelling or another tool; work without this file, or ask the user to handle it.";

/// A decision a hook asked for: it can only make the rules' decision stricter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restriction {
    /// Ask or deny (an allow restricts nothing).
    pub decision: Decision,
    /// Why, for the model and the approver.
    pub reason: String,
}

/// How an ask (or the lack of one) was settled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum Resolution {
    /// The policy decided alone (allow or deny).
    Policy,
    /// A session grant covered the call.
    SessionGrant {
        /// The grant.
        grant: Grant,
    },
    /// The approver answered.
    Approver {
        /// Its answer.
        outcome: ApprovalOutcome,
    },
    /// The approver did not answer in time.
    ApprovalTimeout {
        /// How long it had.
        timeout_ms: u64,
    },
    /// The context has nobody to ask (`ask: deny`), or no approver is configured.
    NobodyToAsk {
        /// The context.
        context: String,
    },
    /// The approver cannot show the whole request, so it was not asked.
    NotPresentable {
        /// Why.
        reason: String,
    },
    /// The caller cancelled while the approval was pending.
    Cancelled,
}

/// A permission decision with everything that produced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PermissionRecord {
    /// The decision of the rules (and hooks), before any approval.
    pub decision: Decision,
    /// The rule that decided, or the effect default.
    pub source: DecisionSource,
    /// The deciding rule's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Every rule, in spec order, and whether it matched.
    pub chain: Vec<RuleOutcome>,
    /// A stricter decision a hook asked for, when it changed the outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restricted_by: Option<Restriction>,
    /// How the decision was settled.
    pub resolution: Resolution,
    /// Whether the call may run.
    pub granted: bool,
}

/// The outcome of [`evaluate`]: the rules' decision and any hook restriction.
#[derive(Clone, Debug)]
pub struct PolicyEvaluation {
    decision: PolicyDecision,
    restricted_by: Option<Restriction>,
    /// Whether a rule's evaluation was cut off by its cost budget: the denial it caused is then
    /// answered as COST_LIMIT, not as a rule that said no.
    cut_off: bool,
}

impl PolicyEvaluation {
    /// The effective decision.
    pub fn decision(&self) -> Decision {
        self.restricted_by
            .as_ref()
            .map_or(self.decision.decision, |r| {
                r.decision.max(self.decision.decision)
            })
    }
}

/// A call the permission stage allowed. Its fields are private and it is built only here, so
/// holding one proves the call passed validation and permission; executors take it by value.
#[derive(Debug)]
pub struct AuthorizedCall {
    checked: CheckedCall,
    record: Arc<PermissionRecord>,
    attempt: u32,
}

impl AuthorizedCall {
    /// The contract.
    pub fn definition(&self) -> &ToolDefinition {
        &self.checked.tool.definition
    }

    /// The validated arguments.
    pub fn arguments(&self) -> &serde_json::Value {
        &self.checked.call.arguments
    }

    /// The model's call id.
    pub fn call_id(&self) -> &str {
        &self.checked.call.call_id
    }

    /// The decision that allowed it.
    pub fn permission(&self) -> &PermissionRecord {
        &self.record
    }

    /// The resources it reads and writes.
    pub fn footprint(&self) -> &Footprint {
        &self.checked.footprint
    }

    /// 1 for the first attempt.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The key the far side can deduplicate the call on (the spec's, else session and call id).
    pub fn idempotency_key(&self) -> &str {
        &self.checked.call_key
    }

    pub(crate) fn compiled(&self) -> &Arc<CompiledTool> {
        &self.checked.tool
    }

    pub(crate) fn checked(&self) -> &CheckedCall {
        &self.checked
    }

    /// The same authorization for the next attempt of a retry. Crate-private: only the
    /// pipeline's retry loop re-runs an authorized call.
    pub(crate) fn next_attempt(&self) -> AuthorizedCall {
        AuthorizedCall {
            checked: self.checked.clone(),
            record: self.record.clone(),
            attempt: self.attempt + 1,
        }
    }
}

/// A call the permission stage refused (or that was cancelled while waiting for approval).
#[derive(Clone, Debug)]
pub struct Refusal {
    /// Denied or cancelled.
    pub status: Status,
    /// POLICY_DENIED, USER_DENIED, APPROVAL_UNAVAILABLE or CANCELLED.
    pub error_type: ErrorType,
    /// What the model reads.
    pub message: String,
    /// The record.
    pub record: PermissionRecord,
    /// Set when the approver said cancel: the rest of the turn stops too.
    pub cancel_turn: bool,
    /// How the model can go on, when the refusal has a specific answer (a protected path).
    pub hint: Option<String>,
}

/// The runtime's judge of protected paths: the workspace's protected set, over the path as
/// written and over what it resolves to beneath the workspace root (symbolic links followed).
/// `path.protected` also answers true for a path it cannot follow safely: a link that leads
/// outside the workspace or nowhere.
#[derive(Clone, Debug)]
pub struct WorkspaceProtection(pub Arc<Workspace>);

impl WorkspaceProtection {
    /// The judge of a workspace, as `path.protected` and [`evaluate`] take it.
    pub fn shared(workspace: &Arc<Workspace>) -> Arc<dyn ProtectedPaths> {
        Arc::new(WorkspaceProtection(workspace.clone()))
    }
}

impl ProtectedPaths for WorkspaceProtection {
    fn protection(&self, path: &str) -> Option<Protection> {
        let set = self.0.protected();
        if let Some(p) = set.protection(path) {
            return Some(p);
        }
        let resolved = self.0.check(path).ok()?;
        set.protection(resolved.as_str())
    }

    fn protects(&self, path: &str) -> bool {
        self.protection(path).is_some()
            || matches!(
                self.0.check(path),
                Err(PathViolation::Symlink(_)
                    | PathViolation::BrokenLink(_)
                    | PathViolation::NotUtf8(_))
            )
    }
}

/// What [`authorize`] needs besides the call.
pub struct PermissionEnv<'a> {
    /// Who answers asks (none: nobody).
    pub approver: Option<&'a dyn Approver>,
    /// toolgate.yaml's contexts.
    pub contexts: &'a IndexMap<String, ContextPolicy>,
    /// The caller's cancellation.
    pub cancel: &'a CancellationToken,
    /// The journal, which may keep sessions' grants for other processes and hosts.
    pub journal: &'a dyn Journal,
}

/// Decides a call: a protected path argument denies first (before the rules, and nothing
/// overrides it); otherwise the rules, where a rule that fails to evaluate denies — a broken
/// deny rule must never let a call through. `args` are the call's arguments with paths
/// resolved; `protected` judges them (a [`WorkspaceProtection`] at run time).
pub fn evaluate(
    tool: &CompiledTool,
    args: &serde_json::Value,
    ev: Option<&Evaluator<'_>>,
    protected: &dyn ProtectedPaths,
    restrictions: Vec<Restriction>,
) -> PolicyEvaluation {
    let def = &tool.definition;
    if let Some((decision, _)) =
        protected_decision(args, &tool.path_params, &tool.glob_params, protected)
    {
        let decision = match ev {
            Some(ev) => tool.policy.explain_protected(decision, ev),
            None => decision,
        };
        return PolicyEvaluation {
            decision,
            restricted_by: None,
            cut_off: false,
        };
    }
    let default = def.permissions.default;
    let mut cut_off = false;
    let decision = match ev {
        Some(ev) if !def.permissions.rules.is_empty() => {
            tool.policy.decide(ev).unwrap_or_else(|e| {
                cut_off = e.source.is_budget();
                PolicyDecision {
                    decision: Decision::Deny,
                    source: DecisionSource::Rule { id: e.id.clone() },
                    reason: Some(format!(
                        "permission rule `{}` could not be evaluated ({}), so the call is refused",
                        e.id, e.source
                    )),
                    // The rules up to the one that failed, that one marked with its error.
                    chain: e.chain,
                }
            })
        }
        _ => PolicyDecision {
            decision: default,
            source: DecisionSource::Default,
            reason: None,
            chain: Vec::new(),
        },
    };
    let restricted_by = restrictions
        .into_iter()
        .filter(|r| r.decision > decision.decision)
        .max_by_key(|r| r.decision);
    PolicyEvaluation {
        decision,
        restricted_by,
        cut_off,
    }
}

/// The session's grant that covers a call: from the session, else (when the journal shares
/// grants) from what other processes and hosts recorded for the session, which the session then
/// keeps. A journal that cannot be read grants nothing: the call is asked about.
async fn covering_grant(
    session: &Session,
    query: &GrantQuery<'_>,
    journal: &dyn Journal,
) -> Option<Grant> {
    if let Some(grant) = session.book(|b| b.covering(query).cloned()) {
        return Some(grant);
    }
    if !journal.shares_grants() {
        return None;
    }
    let recorded = journal.grants(session.id()).await.ok()?;
    session.book(|b| {
        b.adopt(recorded);
        b.covering(query).cloned()
    })
}

/// Settles a decision into an authorized call or a refusal.
pub async fn authorize(
    checked: CheckedCall,
    evaluation: PolicyEvaluation,
    session: &Session,
    env: PermissionEnv<'_>,
) -> Result<AuthorizedCall, Box<Refusal>> {
    let effective = evaluation.decision();
    let PolicyEvaluation {
        decision,
        restricted_by,
        cut_off,
    } = evaluation;
    let reason = restricted_by
        .as_ref()
        .map(|r| r.reason.clone())
        .or(decision.reason.clone());
    let record = |resolution: Resolution, granted: bool| PermissionRecord {
        decision: effective,
        source: decision.source.clone(),
        reason: reason.clone(),
        chain: decision.chain.clone(),
        restricted_by: restricted_by.clone(),
        resolution,
        granted,
    };
    let def = &checked.tool.definition;
    let because = reason
        .as_deref()
        .map(|r| format!(" ({})", r.trim_end_matches('.')))
        .unwrap_or_default();
    match effective {
        Decision::Allow => return Ok(allowed(checked, record(Resolution::Policy, true))),
        // Denied because a rule could not be evaluated over these arguments: fail closed, but
        // say so, since the caller can fix it by sending less.
        Decision::Deny if cut_off => {
            return Err(Box::new(Refusal {
                status: crate::runtime::result::status_for(ErrorType::CostLimit),
                error_type: ErrorType::CostLimit,
                message: format!("{} was refused{because}.", def.name),
                record: record(Resolution::Policy, false),
                cancel_turn: false,
                hint: None,
            }));
        }
        Decision::Deny => {
            let (message, hint) = match (&restricted_by, &decision.source) {
                (None, DecisionSource::Protected { .. }) => (
                    format!(
                        "{} was denied: {}",
                        def.name,
                        reason.as_deref().unwrap_or("a protected path")
                    ),
                    Some(PROTECTED_HINT.to_owned()),
                ),
                (Some(_), _) => (
                    format!("{} was denied by a policy hook{because}.", def.name),
                    None,
                ),
                (None, source) => (
                    format!(
                        "{} was denied by {}{because}.",
                        def.name,
                        source.describe(def.effect)
                    ),
                    None,
                ),
            };
            return Err(Box::new(Refusal {
                status: Status::Denied,
                error_type: ErrorType::PolicyDenied,
                message,
                record: record(Resolution::Policy, false),
                cancel_turn: false,
                hint,
            }));
        }
        Decision::Ask => {}
    }

    let query = GrantQuery {
        tool: &def.name,
        effect: def.effect,
        arguments: &checked.canonical_args,
        asked_by: &decision.source,
        writes: &checked.footprint.writes,
    };
    if let Some(grant) = covering_grant(session, &query, env.journal).await {
        return Ok(allowed(
            checked,
            record(Resolution::SessionGrant { grant }, true),
        ));
    }

    let unavailable = |resolution: Resolution, why: String| {
        Box::new(Refusal {
            status: Status::Denied,
            error_type: ErrorType::ApprovalUnavailable,
            message: format!(
                "{} needs approval{because} {why}, so the call was not run.",
                def.name
            ),
            record: record(resolution, false),
            cancel_turn: false,
            hint: None,
        })
    };
    let context = session.context();
    let policy = env
        .contexts
        .get(context)
        .filter(|c| c.ask == AskMode::Prompt);
    let (Some(policy), Some(approver)) = (policy, env.approver) else {
        let why = if env
            .contexts
            .get(context)
            .is_some_and(|c| c.ask == AskMode::Prompt)
        {
            "but no approver is connected".to_owned()
        } else {
            format!("but nobody can approve in the `{context}` context")
        };
        return Err(unavailable(
            Resolution::NobodyToAsk {
                context: context.to_owned(),
            },
            why,
        ));
    };

    let request = ApprovalRequest {
        session_id: session.id().to_owned(),
        context: context.to_owned(),
        call_id: checked.call.call_id.clone(),
        tool: def.name.clone(),
        tool_version: def.version,
        effect: def.effect,
        arguments: checked.canonical_args.clone(),
        reason: reason.clone(),
        asked_by: decision.source.clone(),
        chain: decision.chain.clone(),
        proposed_scope: (card_applies(def.effect) && !checked.footprint.writes.is_empty()).then(
            || ApprovalScope {
                writes: checked.footprint.writes.clone(),
            },
        ),
    };
    if let Some(why) = approver.cannot_ask(&request) {
        return Err(unavailable(
            Resolution::NotPresentable {
                reason: why.clone(),
            },
            format!("but {why}"),
        ));
    }
    let timeout = Duration::from_millis(policy.approval_timeout_ms);
    let answer = tokio::select! {
        biased;
        _ = env.cancel.cancelled() => None,
        answer = tokio::time::timeout(timeout, approver.request(&request)) => Some(answer),
    };
    let outcome = match answer {
        None => {
            return Err(Box::new(Refusal {
                status: Status::Cancelled,
                error_type: ErrorType::Cancelled,
                message: format!("{} was cancelled while waiting for approval", def.name),
                record: record(Resolution::Cancelled, false),
                cancel_turn: true,
                hint: None,
            }));
        }
        Some(Err(_elapsed)) => {
            return Err(unavailable(
                Resolution::ApprovalTimeout {
                    timeout_ms: policy.approval_timeout_ms,
                },
                format!(
                    "but nobody answered within {}",
                    humantime::format_duration(timeout)
                ),
            ));
        }
        Some(Ok(outcome)) => outcome,
    };
    let resolution = Resolution::Approver {
        outcome: outcome.clone(),
    };
    match outcome {
        ApprovalOutcome::AllowOnce => Ok(allowed(checked, record(resolution, true))),
        ApprovalOutcome::AllowForSession { scope } => {
            let grant = session.book(|b| b.remember(&query, scope));
            if env.journal.shares_grants() {
                // Failing to share a grant is safe: this session keeps it, and another process
                // or host resuming the session asks again rather than assuming it.
                let _ = env.journal.remember_grant(session.id(), &grant).await;
            }
            Ok(allowed(checked, record(resolution, true)))
        }
        ApprovalOutcome::Deny { reason: said } => Err(Box::new(Refusal {
            status: Status::Denied,
            error_type: ErrorType::UserDenied,
            message: match said {
                Some(s) => format!("The user denied this {} call: {s}", def.name),
                None => format!("The user denied this {} call", def.name),
            },
            record: record(resolution, false),
            cancel_turn: false,
            hint: None,
        })),
        ApprovalOutcome::Cancel => Err(Box::new(Refusal {
            status: Status::Cancelled,
            error_type: ErrorType::Cancelled,
            message: format!(
                "The user cancelled this {} call and the rest of the turn",
                def.name
            ),
            record: record(resolution, false),
            cancel_turn: true,
            hint: None,
        })),
        ApprovalOutcome::Unavailable => Err(unavailable(
            resolution,
            "but the approver could not get an answer".to_owned(),
        )),
    }
}

fn allowed(checked: CheckedCall, record: PermissionRecord) -> AuthorizedCall {
    AuthorizedCall {
        checked,
        record: Arc::new(record),
        attempt: 1,
    }
}
