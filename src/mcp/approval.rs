//! [`ElicitationApprover`]: `ask` decisions answered by the MCP client, through elicitation.
//!
//! When a connection's client declared the `elicitation` capability (form mode) during
//! `initialize`, the connection is registered here, by its id, with its peer; a call's question
//! goes to the connection the call came in on (its call id names it), so a session id shared by
//! several connections (`serve --session ID`) changes nothing. An `ask` then
//! sends `elicitation/create` with a one-field form — `decision`: `allow_once`,
//! `allow_session` or `deny`, and an optional `reason` — and maps the answer:
//!
//! | client's answer | outcome |
//! |---|---|
//! | accept, `allow_once` | allow-once |
//! | accept, `allow_session` | allow-for-session (with the proposed approval card, if any) |
//! | accept, `deny` (or anything else) | deny, with the given reason |
//! | decline | deny |
//! | cancel | cancel (the turn stops) |
//! | a JSON-RPC error, a closed connection, no registered peer | unavailable |
//!
//! The question shows every argument in full, escaped (`crate::runtime::question`); one that
//! would be longer than `question::MAX_QUESTION_BYTES` is not sent (the call ends as
//! APPROVAL_UNAVAILABLE, saying why) — never cut with an ellipsis. The runtime stops waiting
//! after the context's `approval_timeout` (unavailable); the elicitation is then withdrawn with
//! `notifications/cancelled`.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, RequestId, ServerRequest,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::runtime::approval::{ApprovalFuture, ApprovalOutcome, ApprovalRequest, Approver};
use crate::runtime::question;

/// Asks MCP clients, by session, through `elicitation/create`.
#[derive(Default)]
pub struct ElicitationApprover {
    peers: Mutex<HashMap<String, Peer<RoleServer>>>,
}

impl std::fmt::Debug for ElicitationApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitationApprover")
            .field("sessions", &self.with_peers(|p| p.len()))
            .finish()
    }
}

impl ElicitationApprover {
    /// An approver with no sessions.
    pub fn new() -> Self {
        ElicitationApprover::default()
    }

    /// Routes questions to a connection's client: those of the calls the connection made (`key`
    /// is its connection id, which starts their call ids), or of a session (`key` is a session
    /// id, for an embedding whose connections are its sessions).
    pub fn register(&self, key: &str, peer: Peer<RoleServer>) {
        self.with_peers(|p| p.insert(key.to_owned(), peer));
    }

    /// Forgets a connection (it closed), or a session.
    pub fn unregister(&self, key: &str) {
        self.with_peers(|p| p.remove(key));
    }

    /// The client a question goes to: the connection whose call asks, else the session's.
    fn peer_for(&self, req: &ApprovalRequest) -> Option<Peer<RoleServer>> {
        self.with_peers(|p| {
            crate::mcp::server::connection_of(&req.call_id)
                .and_then(|c| p.get(c))
                .or_else(|| p.get(&req.session_id))
                .cloned()
        })
    }

    fn with_peers<T>(&self, f: impl FnOnce(&mut HashMap<String, Peer<RoleServer>>) -> T) -> T {
        let mut guard = match self.peers.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }
}

impl Approver for ElicitationApprover {
    fn cannot_ask(&self, req: &ApprovalRequest) -> Option<String> {
        question::too_large(&question(req))
    }

    fn request<'a>(&'a self, req: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        let peer = self.peer_for(req);
        Box::pin(async move {
            let Some(peer) = peer else {
                return ApprovalOutcome::Unavailable;
            };
            let Ok(schema) = serde_json::from_value::<ElicitationSchema>(form()) else {
                return ApprovalOutcome::Unavailable;
            };
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: question(req),
                requested_schema: schema,
            };
            let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
            let handle = match peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await
            {
                Ok(h) => h,
                Err(e) => {
                    tracing::warn!(error = %e, "elicitation could not be sent");
                    return ApprovalOutcome::Unavailable;
                }
            };
            let mut guard = Withdraw {
                peer: Some(peer),
                id: handle.id.clone(),
            };
            let answer = handle.await_response().await;
            guard.peer = None;
            match answer {
                Ok(ClientResult::ElicitResult(r)) => outcome(&r, req),
                Ok(_) => ApprovalOutcome::Unavailable,
                Err(e) => {
                    tracing::warn!(error = %e, "elicitation failed");
                    ApprovalOutcome::Unavailable
                }
            }
        })
    }
}

/// Withdraws an elicitation nobody waits for any more (the approval timed out).
struct Withdraw {
    peer: Option<Peer<RoleServer>>,
    id: RequestId,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let note = CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the approval timed out".to_owned()),
        );
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let _ = peer.notify_cancelled(note).await;
            });
        }
    }
}

/// The form: one decision, and an optional reason.
fn form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "description": "Allow this call once, allow it for the rest of the session, or deny it.",
                "oneOf": [
                    {"const": "allow_once", "title": "Allow once"},
                    {"const": "allow_session", "title": "Allow for this session"},
                    {"const": "deny", "title": "Deny"}
                ]
            },
            "reason": {
                "type": "string",
                "title": "Reason",
                "description": "Why (optional; the model is told when you deny)."
            }
        },
        "required": ["decision"]
    })
}

/// What the person is asked: the tool, why, every argument in full, and what a session
/// approval covers.
fn question(req: &ApprovalRequest) -> String {
    let tool = question::shown(&req.tool);
    let mut q = format!("toolgate: {tool} ({}) needs approval", req.effect);
    if let Some(r) = &req.reason {
        q.push_str(&format!(": {}", question::shown(r)));
    }
    q.push_str(&format!("\n{}\n", question::ARGUMENTS_HEADING));
    q.push_str(&question::arguments(&req.arguments));
    if let Some(card) = &req.proposed_scope {
        let keys: Vec<String> = card.writes.iter().map(|k| question::shown(k)).collect();
        q.push_str(&format!(
            "for the session, this approves changes to: {}",
            keys.join(", ")
        ));
    }
    q.trim_end().to_owned()
}

/// The client's answer as an approval outcome.
fn outcome(r: &ElicitResult, req: &ApprovalRequest) -> ApprovalOutcome {
    let field = |k: &str| {
        r.content
            .as_ref()
            .and_then(|c| c.get(k))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    match r.action {
        ElicitationAction::Accept => match field("decision").as_deref() {
            Some("allow_once") => ApprovalOutcome::AllowOnce,
            Some("allow_session") => ApprovalOutcome::AllowForSession {
                scope: req.proposed_scope.clone(),
            },
            Some(_) | None => ApprovalOutcome::Deny {
                reason: field("reason").filter(|s| !s.trim().is_empty()),
            },
        },
        ElicitationAction::Decline => ApprovalOutcome::Deny {
            reason: Some("declined in the MCP client".to_owned()),
        },
        ElicitationAction::Cancel => ApprovalOutcome::Cancel,
        // A future action this build does not know: nobody consented.
        _ => ApprovalOutcome::Unavailable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Effect;
    use crate::policy::DecisionSource;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            session_id: "s".into(),
            context: "interactive".into(),
            call_id: "c".into(),
            tool: "write_file".into(),
            tool_version: 1,
            effect: Effect::LocalWrite,
            arguments: "{\"path\":\"a\"}".into(),
            reason: Some("writes files".into()),
            asked_by: DecisionSource::Default,
            chain: Vec::new(),
            proposed_scope: None,
        }
    }

    fn answer(action: ElicitationAction, content: Option<Value>) -> ApprovalOutcome {
        let mut r = ElicitResult::new(action);
        r.content = content;
        outcome(&r, &request())
    }

    #[test]
    fn answers_map_to_outcomes() {
        use ElicitationAction::*;
        let table = [
            (
                answer(Accept, Some(json!({"decision": "allow_once"}))),
                ApprovalOutcome::AllowOnce,
            ),
            (
                answer(Accept, Some(json!({"decision": "allow_session"}))),
                ApprovalOutcome::AllowForSession { scope: None },
            ),
            (
                answer(Accept, Some(json!({"decision": "deny", "reason": "no"}))),
                ApprovalOutcome::Deny {
                    reason: Some("no".into()),
                },
            ),
            (answer(Accept, None), ApprovalOutcome::Deny { reason: None }),
            (
                answer(Decline, None),
                ApprovalOutcome::Deny {
                    reason: Some("declined in the MCP client".into()),
                },
            ),
            (answer(Cancel, None), ApprovalOutcome::Cancel),
        ];
        for (got, want) in table {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn the_question_shows_a_long_command_in_full() {
        let command = format!("ls{}\nrm -rf ~/x {}", " ".repeat(2500), "y".repeat(2486));
        assert_eq!(command.chars().count(), 5000);
        let mut req = request();
        req.tool = "bash".into();
        req.effect = Effect::ProcessExecution;
        req.reason = None;
        req.arguments = serde_json::json!({ "command": command }).to_string();
        assert_eq!(
            question(&req),
            format!(
                concat!(
                    "toolgate: bash (process_execution) needs approval\n",
                    "arguments, each in full (strings quoted, \\u{{hex}} a hidden character, ⟪N spaces⟫ a run of spaces):\n",
                    "  command = string of 5000 characters in 2 lines:\n",
                    "    1 │ \"ls⟪2500 spaces⟫\"\n",
                    "    2 │ \"rm -rf ~/x {}\"",
                ),
                "y".repeat(2486)
            )
        );
        assert_eq!(ElicitationApprover::new().cannot_ask(&req), None);
    }

    /// The tool name, the reason and a card's keys are escaped like the arguments.
    #[test]
    fn hidden_characters_in_the_reason_and_card_are_escaped() {
        let mut req = request();
        req.reason = Some("policy\u{1b}[8m hidden\r\u{202e}\u{200b}".into());
        req.proposed_scope = Some(crate::runtime::approval::ApprovalScope {
            writes: std::collections::BTreeSet::from(["file:a\u{202e}b".to_owned()]),
        });
        let q = question(&req);
        assert!(
            q.starts_with(
                "toolgate: write_file (local_write) needs approval: policy\\u{1b}[8m hidden\\u{d}\\u{202e}\\u{200b}\n"
            ),
            "{q}"
        );
        assert!(
            q.ends_with("this approves changes to: file:a\\u{202e}b"),
            "{q}"
        );
    }

    #[test]
    fn a_question_past_64_kib_is_not_asked() {
        let mut req = request();
        req.arguments = serde_json::json!({ "content": "z".repeat(100 * 1024) }).to_string();
        let why = ElicitationApprover::new().cannot_ask(&req).unwrap();
        assert!(
            why.starts_with("the approval question would be 102"),
            "{why}"
        );
    }

    #[test]
    fn the_form_is_a_valid_elicitation_schema() {
        assert!(serde_json::from_value::<ElicitationSchema>(form()).is_ok());
    }
}
