//! [`Principal`]: who is calling — an authenticated caller of `toolgate serve --http`, as its
//! bearer token named it.
//!
//! Rules see it as the CEL variable `principal` (`principal.subject`, `principal.scopes`,
//! `principal.claims`, `principal.client`, …); a session without one (stdio, `call`, `run`, an
//! embedding harness) shows rules the anonymous principal, whose fields are empty strings, an
//! empty list and an empty map, so that expressions on it evaluate instead of failing.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// An authenticated caller.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Principal {
    /// The token's issuer (`iss`).
    pub issuer: String,
    /// The token's subject (`sub`).
    pub subject: String,
    /// The scopes the token grants (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// The OAuth client the token was issued to (`client_id`, else `azp`), or empty.
    pub client: String,
    /// The name the MCP client gave in `initialize` (`clientInfo.name`), or empty.
    pub client_name: String,
    /// The token's claims the project chose to show rules (`serve.auth.claims`).
    pub claims: Map<String, Value>,
}

impl Principal {
    /// The name journals and traces record: `subject@issuer`.
    pub fn id(&self) -> String {
        format!("{}@{}", self.subject, self.issuer)
    }

    /// Whether the token grants every one of these scopes.
    pub fn has_scopes<'a>(&self, wanted: impl IntoIterator<Item = &'a String>) -> bool {
        wanted.into_iter().all(|w| self.scopes.contains(w))
    }

    /// The value of CEL's `principal` for this caller.
    pub fn cel_value(&self) -> Value {
        json!({
            "authenticated": true,
            "issuer": self.issuer,
            "subject": self.subject,
            "id": self.id(),
            "scopes": self.scopes,
            "client": self.client,
            "client_name": self.client_name,
            "claims": self.claims,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_and_authenticated_values_have_the_same_fields() {
        let p = Principal {
            issuer: "https://idp".into(),
            subject: "alice".into(),
            scopes: vec!["tools:read".into()],
            ..Principal::default()
        };
        let a = p.cel_value();
        let b = crate::cel::anonymous_principal();
        let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>());
        assert_eq!(keys(&a), keys(&b));
        assert_eq!(a["id"], "alice@https://idp");
        assert!(p.has_scopes(&["tools:read".to_owned()]));
        assert!(!p.has_scopes(&["tools:read".to_owned(), "tools:write".to_owned()]));
    }
}
