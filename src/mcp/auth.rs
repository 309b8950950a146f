//! `serve --http` as an OAuth 2.1 resource server (MCP authorization, 2025-06-18): bearer JWTs
//! checked against the issuers of toolgate.yaml's `serve.auth`.
//!
//! A token is accepted when its header names an asymmetric algorithm (RS*, PS*, ES*, EdDSA —
//! `none` and the HMAC family are refused, so a public key can never be used as a shared
//! secret), its `iss` is a configured issuer, its signature verifies with one of that issuer's
//! keys (a JWK Set from a file or a URL, kept for `refresh` and fetched again at once — at most
//! every [`FORCED_REFRESH_GAP`] — when a token names a key id it does not hold), its `aud` names
//! this server's resource URI (RFC 8707), it has not expired and is already valid (`exp`
//! required, `nbf` checked when present, [`LEEWAY_SECS`] of clock skew), and it grants every
//! scope `serve.auth.scopes` lists.
//!
//! A refusal is an HTTP answer: 401 with `WWW-Authenticate: Bearer resource_metadata="…"` (and
//! `error="invalid_token"` when a token was sent), or 403 with `error="insufficient_scope"` and
//! the scopes needed. The challenge is printable ASCII and never quotes what the unverified token
//! says (its `iss`, `kid`): those go only into the JSON body, escaped.
//!
//! Keys are refreshed off the request path: a request that finds them older than `refresh` starts
//! one background fetch (single flight; a failure is tried again after a backoff of 1 s doubling
//! to [`MAX_REFRESH_BACKOFF`]) and goes on with the keys in hand (stale while revalidating). Only
//! a token naming a key id the server does not hold waits for a fetch, at most one every
//! [`FORCED_REFRESH_GAP`]. The token stays here: the principal it names goes on, the token itself
//! reaches neither the tools nor the upstream MCP servers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use crate::ir::project::{JwksSource, ServeAuth, TokenIssuer};
use crate::runtime::Principal;

/// Seconds of clock skew allowed on `exp` and `nbf`.
pub const LEEWAY_SECS: u64 = 30;
/// The shortest time between two fetches forced by an unknown key id.
pub const FORCED_REFRESH_GAP: Duration = Duration::from_secs(30);
/// How long a JWKS fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest JWK Set read or fetched.
const MAX_JWKS_BYTES: u64 = 1024 * 1024;
/// The longest wait before a failed background refresh is tried again.
pub const MAX_REFRESH_BACKOFF: Duration = Duration::from_secs(300);

/// Keys that cannot be loaded.
#[derive(Debug, thiserror::Error)]
#[error("cannot load the signing keys of issuer `{issuer}` from {from}: {why}")]
pub struct KeysError {
    issuer: String,
    from: String,
    why: String,
}

/// Why a request was not let in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// No bearer token (401, no error code).
    Missing,
    /// A token that is not accepted (401 `invalid_token`): why, in full (it may quote the
    /// unverified token: the body's `error_description`), and a description of the same that
    /// names nothing from the token (the challenge's).
    Invalid {
        /// Why, for the body.
        why: String,
        /// Why, for the `WWW-Authenticate` header: server-side words only.
        public: String,
    },
    /// A valid token without the scopes needed (403 `insufficient_scope`): the scopes needed.
    InsufficientScope(Vec<String>),
}

impl Refusal {
    /// The HTTP status.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Missing | Refusal::Invalid { .. } => 401,
            Refusal::InsufficientScope(_) => 403,
        }
    }

    /// The `WWW-Authenticate` header (RFC 6750 §3, RFC 9728 §5.1): printable ASCII whatever
    /// the configuration says (anything else becomes `?`), so it is never dropped.
    pub fn challenge(&self, metadata_url: &str, required: &[String]) -> String {
        let quoted = |s: &str| s.replace(['"', '\\'], "'");
        let header = match self {
            Refusal::Missing if required.is_empty() => {
                format!("Bearer resource_metadata=\"{metadata_url}\"")
            }
            Refusal::Missing => format!(
                "Bearer resource_metadata=\"{metadata_url}\", scope=\"{}\"",
                required.join(" ")
            ),
            Refusal::Invalid { public, .. } => format!(
                "Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{metadata_url}\"",
                quoted(public)
            ),
            Refusal::InsufficientScope(scopes) => format!(
                "Bearer error=\"insufficient_scope\", scope=\"{}\", error_description=\"the token lacks a scope this server requires\", resource_metadata=\"{metadata_url}\"",
                scopes.join(" ")
            ),
        };
        header
            .chars()
            .map(|c| {
                if c == ' ' || c.is_ascii_graphic() {
                    c
                } else {
                    '?'
                }
            })
            .collect()
    }

    /// What the body says.
    pub fn message(&self) -> String {
        match self {
            Refusal::Missing => "a bearer token is required (Authorization: Bearer …)".to_owned(),
            Refusal::Invalid { why, .. } => format!("the bearer token is not accepted: {why}"),
            Refusal::InsufficientScope(s) => {
                format!("the bearer token lacks the scopes {}", s.join(" "))
            }
        }
    }
}

/// Checks bearer tokens for one resource.
pub struct TokenVerifier {
    auth: ServeAuth,
    issuers: HashMap<String, IssuerKeys>,
}

impl std::fmt::Debug for TokenVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenVerifier")
            .field("resource", &self.auth.resource)
            .field("issuers", &self.issuers.len())
            .finish()
    }
}

impl TokenVerifier {
    /// A verifier with every issuer's keys loaded (`root`: the project folder, which
    /// `jwks_file` is relative to).
    pub fn load(auth: &ServeAuth, root: &Path) -> Result<Self, KeysError> {
        let mut issuers = HashMap::new();
        for i in &auth.issuers {
            let keys = IssuerKeys::new(i, root);
            let loaded = keys.source.load(&i.issuer)?;
            keys.store(loaded);
            issuers.insert(i.issuer.clone(), keys);
        }
        Ok(TokenVerifier {
            auth: auth.clone(),
            issuers,
        })
    }

    /// The configuration checked against.
    pub fn auth(&self) -> &ServeAuth {
        &self.auth
    }

    /// The principal of an `Authorization` header's value, or why there is none (blocking: a
    /// key refresh may read a file or fetch a URL).
    pub fn verify(&self, authorization: Option<&str>) -> Result<Principal, Refusal> {
        let Some(value) = authorization else {
            return Err(Refusal::Missing);
        };
        let token = match value.split_once(' ') {
            Some((scheme, t)) if scheme.eq_ignore_ascii_case("bearer") && !t.trim().is_empty() => {
                t.trim()
            }
            _ => return Err(Refusal::Missing),
        };
        let header = jsonwebtoken::decode_header(token).map_err(|e| {
            invalid(
                format!(
                    "its header is not a JWS header with a supported `alg` ({e}); `none` is never accepted"
                ),
                "its header is not a JWS header with a supported `alg`; `none` is never accepted",
            )
        })?;
        if !is_asymmetric(header.alg) {
            return Err(Refusal::Invalid {
                why: format!(
                    "`alg` {:?} is not accepted: tokens must be signed with a public-key algorithm",
                    header.alg
                ),
                public: format!(
                    "`alg` {:?} is not accepted: tokens must be signed with a public-key algorithm",
                    header.alg
                ),
            });
        }
        // Which issuer's keys to try: read `iss` before the signature is checked; the
        // signature and `iss` are both verified below.
        let claimed: Value =
            jsonwebtoken::dangerous::insecure_decode_claims(token).map_err(|e| {
                invalid(
                    format!("its claims are not readable: {e}"),
                    "its claims are not readable",
                )
            })?;
        let iss = claimed.get("iss").and_then(Value::as_str).unwrap_or("");
        let Some(keys) = self.issuers.get(iss) else {
            return Err(invalid(
                format!("issuer `{iss}` is not one this server accepts"),
                "its issuer is not one this server accepts",
            ));
        };
        let candidates = keys.candidates(header.kid.as_deref(), header.alg);
        if candidates.is_empty() {
            return Err(Refusal::Invalid {
                why: match &header.kid {
                    Some(kid) => format!("issuer `{iss}` has no key `{kid}` for {:?}", header.alg),
                    None => format!("issuer `{iss}` has no key for {:?}", header.alg),
                },
                public: format!(
                    "its issuer has no key of the token's key id for {:?}",
                    header.alg
                ),
            });
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_audience(&[&self.auth.resource]);
        validation.set_issuer(&[iss]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let mut last = None;
        let mut claims = None;
        for key in &candidates {
            match jsonwebtoken::decode::<Map<String, Value>>(token, key, &validation) {
                Ok(data) => {
                    claims = Some(data.claims);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let Some(claims) = claims else {
            use jsonwebtoken::errors::ErrorKind;
            let (why, public) = match last.as_ref().map(|e| e.kind()) {
                Some(ErrorKind::ExpiredSignature) => ("it has expired".to_owned(), None),
                Some(ErrorKind::ImmatureSignature) => {
                    ("it is not valid yet (nbf)".to_owned(), None)
                }
                Some(ErrorKind::InvalidAudience) => (
                    format!(
                        "its audience is not this server's resource `{}`",
                        self.auth.resource
                    ),
                    None,
                ),
                Some(ErrorKind::InvalidSignature) => {
                    ("its signature does not verify".to_owned(), None)
                }
                Some(ErrorKind::MissingRequiredClaim(c)) => {
                    (format!("it has no `{c}` claim"), None)
                }
                Some(other) => (format!("{other:?}"), Some("it is not accepted")),
                None => ("no key verified it".to_owned(), None),
            };
            let public = public.map_or_else(|| why.clone(), str::to_owned);
            return Err(Refusal::Invalid { why, public });
        };
        // A principal is its `sub`: an empty one would make every such token one principal.
        if claims
            .get("sub")
            .and_then(Value::as_str)
            .is_none_or(|s| s.trim().is_empty())
        {
            return Err(invalid(
                "its `sub` claim is empty or not a string".to_owned(),
                "its `sub` claim is empty or not a string",
            ));
        }
        let principal = principal_of(&claims, &self.auth.claims);
        let missing: Vec<String> = self
            .auth
            .scopes
            .iter()
            .filter(|s| !principal.scopes.contains(s))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(Refusal::InsufficientScope(self.auth.scopes.clone()));
        }
        Ok(principal)
    }
}

/// An `invalid_token` refusal: `why` for the body, `public` (no token fields) for the challenge.
fn invalid(why: String, public: &str) -> Refusal {
    Refusal::Invalid {
        why,
        public: public.to_owned(),
    }
}

/// The principal a verified token's claims name.
fn principal_of(claims: &Map<String, Value>, chosen: &[String]) -> Principal {
    let s = |k: &str| claims.get(k).and_then(Value::as_str).unwrap_or("");
    let mut scopes: Vec<String> = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    scopes.dedup();
    let client = match s("client_id") {
        "" => s("azp"),
        c => c,
    };
    Principal {
        issuer: s("iss").to_owned(),
        subject: s("sub").to_owned(),
        scopes,
        client: client.to_owned(),
        client_name: String::new(),
        claims: chosen
            .iter()
            .filter_map(|c| claims.get(c).map(|v| (c.clone(), v.clone())))
            .collect(),
    }
}

fn is_asymmetric(alg: Algorithm) -> bool {
    !matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

/// One issuer's keys, and when they were loaded.
struct IssuerKeys {
    source: Arc<KeysSource>,
    refresh: Duration,
    state: Arc<Mutex<KeysState>>,
}

struct KeysState {
    set: Arc<JwkSet>,
    loaded_at: Instant,
    forced_at: Option<Instant>,
    /// A fetch is under way (single flight: nobody starts another).
    fetching: bool,
    /// Background refreshes failed in a row, and when the next may start.
    failures: u32,
    retry_at: Option<Instant>,
}

fn lock(state: &Mutex<KeysState>) -> std::sync::MutexGuard<'_, KeysState> {
    match state.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// How long after `failures` failed refreshes in a row the next may start: 1 s, doubling, at
/// most [`MAX_REFRESH_BACKOFF`] (and never longer than the refresh interval).
fn backoff(failures: u32, refresh: Duration) -> Duration {
    let secs = 1u64 << failures.saturating_sub(1).min(16);
    Duration::from_secs(secs)
        .min(MAX_REFRESH_BACKOFF)
        .min(refresh.max(Duration::from_secs(1)))
}

impl IssuerKeys {
    fn new(i: &TokenIssuer, root: &Path) -> Self {
        let source = match &i.jwks {
            JwksSource::Url(u) => KeysSource::Url(u.clone()),
            JwksSource::File(f) => KeysSource::File(root.join(f)),
        };
        IssuerKeys {
            source: Arc::new(source),
            refresh: Duration::from_millis(i.refresh_ms),
            state: Arc::new(Mutex::new(KeysState {
                set: Arc::new(JwkSet { keys: Vec::new() }),
                loaded_at: Instant::now(),
                forced_at: None,
                fetching: false,
                failures: 0,
                retry_at: None,
            })),
        }
    }

    fn store(&self, set: JwkSet) {
        store(&self.state, set);
    }

    /// The keys that may have signed a token with this key id and algorithm. Keys older than
    /// `refresh` are used as they are while one background fetch replaces them; only a key id
    /// the set lacks waits for a fetch (at most one per [`FORCED_REFRESH_GAP`], and none while
    /// another fetch is under way).
    fn candidates(&self, kid: Option<&str>, alg: Algorithm) -> Vec<DecodingKey> {
        let now = Instant::now();
        let (mut set, force) = {
            let mut s = lock(&self.state);
            let unknown = kid.is_some_and(|k| s.set.find(k).is_none());
            let may_force = s
                .forced_at
                .is_none_or(|t| now.duration_since(t) >= FORCED_REFRESH_GAP);
            let force = unknown && may_force && !s.fetching;
            let stale = now.duration_since(s.loaded_at) >= self.refresh
                && s.retry_at.is_none_or(|t| now >= t);
            if force {
                s.forced_at = Some(now);
                s.fetching = true;
            } else if stale && !s.fetching {
                s.fetching = true;
                self.refresh_in_background();
            }
            (s.set.clone(), force)
        };
        if force {
            let loaded = self.source.load("");
            finish_fetch(&self.state, loaded, self.refresh);
            set = lock(&self.state).set.clone();
        }
        set.keys
            .iter()
            .filter(|k| kid.is_none() || k.common.key_id.as_deref() == kid)
            .filter(|k| usable_for(k, alg))
            .filter_map(|k| DecodingKey::from_jwk(k).ok())
            .collect()
    }

    /// Fetches the keys on a thread of its own (the caller set `fetching`).
    fn refresh_in_background(&self) {
        let (source, state, refresh) = (self.source.clone(), self.state.clone(), self.refresh);
        let spawned = std::thread::Builder::new()
            .name("toolgate-jwks".into())
            .spawn(move || {
                let loaded = source.load("");
                finish_fetch(&state, loaded, refresh);
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the JWKS refresh; keeping the keys loaded before");
            let mut s = lock(&self.state);
            s.fetching = false;
            s.failures = s.failures.saturating_add(1);
            s.retry_at = Some(Instant::now() + backoff(s.failures, refresh));
        }
    }
}

fn store(state: &Mutex<KeysState>, set: JwkSet) {
    let mut s = lock(state);
    s.set = Arc::new(set);
    s.loaded_at = Instant::now();
}

/// Ends a fetch: new keys replace the old; a failure keeps them and backs off.
fn finish_fetch(state: &Mutex<KeysState>, loaded: Result<JwkSet, KeysError>, refresh: Duration) {
    match loaded {
        Ok(fresh) => {
            store(state, fresh);
            let mut s = lock(state);
            s.fetching = false;
            s.failures = 0;
            s.retry_at = None;
        }
        Err(e) => {
            let mut s = lock(state);
            s.fetching = false;
            s.failures = s.failures.saturating_add(1);
            let wait = backoff(s.failures, refresh);
            s.retry_at = Some(Instant::now() + wait);
            // Keep the keys in hand: a failed refresh must not lock everyone out.
            tracing::warn!(error = %e, retry_in = ?wait, "JWKS refresh failed; keeping the keys loaded before");
        }
    }
}

/// Whether a JWK may verify a signature of `alg`: a signing key (not `use: enc`), whose `alg`,
/// when it names one, is that algorithm.
fn usable_for(k: &Jwk, alg: Algorithm) -> bool {
    use jsonwebtoken::jwk::PublicKeyUse;
    if matches!(k.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return false;
    }
    if matches!(
        k.algorithm,
        jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
    ) {
        return false;
    }
    match k.common.key_algorithm {
        None => true,
        Some(ka) => Algorithm::try_from(ka).ok() == Some(alg),
    }
}

enum KeysSource {
    Url(String),
    File(PathBuf),
}

impl KeysSource {
    fn describe(&self) -> String {
        match self {
            KeysSource::Url(u) => u.clone(),
            KeysSource::File(p) => p.display().to_string(),
        }
    }

    fn load(&self, issuer: &str) -> Result<JwkSet, KeysError> {
        let fail = |why: String| KeysError {
            issuer: issuer.to_owned(),
            from: self.describe(),
            why,
        };
        let text = match self {
            KeysSource::File(p) => {
                let meta = std::fs::metadata(p).map_err(|e| fail(e.to_string()))?;
                if meta.len() > MAX_JWKS_BYTES {
                    return Err(fail(format!("it is larger than {MAX_JWKS_BYTES} bytes")));
                }
                std::fs::read_to_string(p).map_err(|e| fail(e.to_string()))?
            }
            KeysSource::Url(u) => {
                let agent: ureq::Agent = ureq::Agent::config_builder()
                    .timeout_global(Some(FETCH_TIMEOUT))
                    .build()
                    .into();
                let mut resp = agent.get(u).call().map_err(|e| fail(e.to_string()))?;
                resp.body_mut()
                    .with_config()
                    .limit(MAX_JWKS_BYTES)
                    .read_to_string()
                    .map_err(|e| fail(e.to_string()))?
            }
        };
        let set: JwkSet = serde_json::from_str(&text)
            .map_err(|e| fail(format!("it is not a JWK Set ({{\"keys\": [...]}}): {e}")))?;
        Ok(set)
    }
}

/// The RFC 9728 metadata URL of a resource: `/.well-known/oauth-protected-resource` inserted
/// between the host and the path.
pub fn metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("https", resource));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let path = path.trim_end_matches('/');
    format!("{scheme}://{authority}/.well-known/oauth-protected-resource{path}")
}

/// The path of a resource URI (`/mcp` when it has none).
pub fn resource_path(resource: &str) -> String {
    let rest = resource.split_once("://").map_or(resource, |(_, r)| r);
    let path = rest
        .find('/')
        .map_or("", |i| &rest[i..])
        .split(['?', '#'])
        .next()
        .unwrap_or("")
        .trim_end_matches('/');
    if path.is_empty() {
        "/mcp".to_owned()
    } else {
        path.to_owned()
    }
}

/// The protected resource metadata document (RFC 9728 §2).
pub fn metadata(auth: &ServeAuth, extra_scopes: &[String]) -> Value {
    let mut scopes: Vec<String> = auth.scopes.clone();
    for s in extra_scopes {
        if !scopes.contains(s) {
            scopes.push(s.clone());
        }
    }
    serde_json::json!({
        "resource": auth.resource,
        "authorization_servers": auth.issuers.iter().map(|i| i.issuer.clone()).collect::<Vec<_>>(),
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "toolgate",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_insert_the_well_known_path() {
        assert_eq!(
            metadata_url("https://tools.example.com/mcp"),
            "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
        assert_eq!(resource_path("https://h/a/mcp/"), "/a/mcp");
        assert_eq!(resource_path("https://h"), "/mcp");
    }

    #[test]
    fn challenges_name_the_metadata_and_the_error() {
        let m = "https://h/.well-known/oauth-protected-resource/mcp";
        assert_eq!(
            Refusal::Missing.challenge(m, &[]),
            format!("Bearer resource_metadata=\"{m}\"")
        );
        let c = Refusal::InsufficientScope(vec!["a".into(), "b".into()]).challenge(m, &[]);
        assert!(
            c.starts_with("Bearer error=\"insufficient_scope\", scope=\"a b\""),
            "{c}"
        );
        let c = invalid("it has \"expired\"".into(), "it has \"expired\"").challenge(m, &[]);
        assert!(c.contains("error_description=\"it has 'expired'\""), "{c}");
        // Whatever the words, the header is printable ASCII.
        let c = invalid(String::new(), "bad\r\nX-Injected: 1\u{202e}\t").challenge(m, &[]);
        assert!(
            c.contains("error_description=\"bad??X-Injected: 1??\""),
            "{c}"
        );
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let claims: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "iss": "i", "sub": "s", "scope": "a b", "azp": "cli", "team": "x"
        }))
        .unwrap();
        let p = principal_of(&claims, &["team".to_owned(), "absent".to_owned()]);
        assert_eq!(p.scopes, vec!["a", "b"]);
        assert_eq!(p.client, "cli");
        assert_eq!(p.claims.len(), 1);
        let claims: Map<String, Value> =
            serde_json::from_value(serde_json::json!({"scp": ["x"]})).unwrap();
        assert_eq!(principal_of(&claims, &[]).scopes, vec!["x"]);
    }
}
