//! `serve.auth` and `serve.limits` of toolgate.yaml, checked and resolved into [`ServeAuth`] and
//! [`ServeLimits`].

use std::time::Duration;

use crate::diagnostic::Diagnostic;
use crate::ir::project::{JwksSource, ServeAuth, ServeLimits, TokenIssuer};
use crate::spec::literal::DurationLit;
use crate::spec::project_file::{ServeAuthAst, ServeLimitsAst};
use crate::spec::source::TextRange;
use crate::spec::yaml::Spanned;

/// How long fetched keys are kept when `refresh` does not say.
pub const DEFAULT_JWKS_REFRESH: Duration = Duration::from_secs(300);

/// Resolves `serve.auth`; `None` (with errors in `diags`) when it is unusable.
pub fn resolve(
    a: &Spanned<ServeAuthAst>,
    err: &impl Fn(TextRange, String) -> Diagnostic,
    diags: &mut Vec<Diagnostic>,
) -> Option<ServeAuth> {
    let before = diags.len();
    let resource = &a.value.resource;
    if let Some(why) = bad_uri(&resource.value, false) {
        diags.push(
            err(
                resource.range,
                format!("`serve.auth.resource` `{}` {why}", resource.value),
            )
            .with_help(
                "give the URL clients reach this server at, as tokens name it in `aud`: `https://tools.example.com/mcp`",
            ),
        );
    }
    if a.value.issuers.is_empty() {
        diags.push(
            err(
                a.range,
                "`serve.auth.issuers` is empty: no token could be accepted".to_owned(),
            )
            .with_help("add `- {issuer: https://auth.example.com, jwks_url: https://auth.example.com/.well-known/jwks.json}`"),
        );
    }
    let mut issuers = Vec::new();
    for i in &a.value.issuers {
        let iss = &i.value.issuer;
        if iss.value.trim().is_empty() {
            diags.push(err(iss.range, "an issuer identifier is empty".to_owned()));
        }
        let jwks = match (&i.value.jwks_url, &i.value.jwks_file) {
            (Some(u), None) => {
                if let Some(why) = bad_uri(&u.value, true) {
                    diags.push(
                        err(u.range, format!("`jwks_url` `{}` {why}", u.value)).with_help(
                            "keys are fetched over https:// (http:// only from a loopback host)",
                        ),
                    );
                }
                JwksSource::Url(u.value.clone())
            }
            (None, Some(f)) => JwksSource::File(f.value.clone()),
            (Some(_), Some(f)) => {
                diags.push(
                    err(
                        f.range,
                        format!("issuer `{}` has both `jwks_url` and `jwks_file`", iss.value),
                    )
                    .with_help("keep one: where this issuer's signing keys are"),
                );
                continue;
            }
            (None, None) => {
                diags.push(
                    err(
                        i.range,
                        format!("issuer `{}` says nowhere its keys are", iss.value),
                    )
                    .with_help(
                        "add `jwks_url: https://…/jwks.json` or `jwks_file: keys/jwks.json`",
                    ),
                );
                continue;
            }
        };
        let refresh = i
            .value
            .refresh
            .as_ref()
            .map_or(DEFAULT_JWKS_REFRESH, |r| r.value.0);
        issuers.push(TokenIssuer {
            issuer: iss.value.clone(),
            jwks,
            refresh_ms: u64::try_from(refresh.as_millis()).unwrap_or(u64::MAX),
        });
    }
    for s in a.value.scopes.iter().chain(&a.value.claims) {
        if s.value.is_empty() || s.value.contains(char::is_whitespace) {
            diags.push(err(
                s.range,
                format!(
                    "`{}` is not a scope or claim name: it is empty or has spaces",
                    s.value
                ),
            ));
        }
    }
    if diags.len() > before {
        return None;
    }
    Some(ServeAuth {
        resource: resource.value.clone(),
        issuers,
        scopes: a.value.scopes.iter().map(|s| s.value.clone()).collect(),
        claims: a.value.claims.iter().map(|s| s.value.clone()).collect(),
    })
}

/// Resolves `serve.limits`: each limit given replaces its default; a bad one (zero, negative,
/// out of range) is an error at its place, and its default stands.
pub fn resolve_limits(
    l: &Spanned<ServeLimitsAst>,
    err: &impl Fn(TextRange, String) -> Diagnostic,
    diags: &mut Vec<Diagnostic>,
) -> ServeLimits {
    let mut out = ServeLimits::default();
    let a = &l.value;
    let mut duration = |v: &Option<Spanned<DurationLit>>,
                        name: &str,
                        min: Duration,
                        max: Duration,
                        slot: &mut u64| {
        let Some(v) = v else { return };
        let d = v.value.0;
        if d < min || d > max {
            diags.push(
                err(
                    v.range,
                    format!(
                        "`serve.limits.{name}` is {}, outside {} to {}",
                        humantime::format_duration(d),
                        humantime::format_duration(min),
                        humantime::format_duration(max)
                    ),
                )
                .with_help(format!(
                    "write a duration in that range, or leave `{name}` out for its default ({})",
                    humantime::format_duration(Duration::from_millis(*slot))
                )),
            );
            return;
        }
        *slot = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    };
    let hour = Duration::from_secs(3600);
    duration(
        &a.header_timeout,
        "header_timeout",
        Duration::from_millis(100),
        Duration::from_secs(600),
        &mut out.header_timeout_ms,
    );
    duration(
        &a.body_timeout,
        "body_timeout",
        Duration::from_millis(100),
        hour,
        &mut out.body_timeout_ms,
    );
    duration(
        &a.session_idle,
        "session_idle",
        Duration::from_secs(1),
        Duration::from_secs(24 * 3600),
        &mut out.session_idle_ms,
    );
    let mut count = |v: &Option<Spanned<i64>>, name: &str, slot: &mut u32| {
        let Some(v) = v else { return };
        match u32::try_from(v.value) {
            Ok(n) if (1..=1_000_000).contains(&n) => *slot = n,
            _ => diags.push(
                err(
                    v.range,
                    format!(
                        "`serve.limits.{name}` is {}, not a count from 1 to 1000000",
                        v.value
                    ),
                )
                .with_help(format!(
                    "write a whole number of at least 1, or leave `{name}` out for its default ({slot})"
                )),
            ),
        }
    };
    count(&a.connections, "connections", &mut out.connections);
    count(&a.sessions, "sessions", &mut out.sessions);
    count(
        &a.sessions_per_principal,
        "sessions_per_principal",
        &mut out.sessions_per_principal,
    );
    if out.sessions_per_principal > out.sessions
        && let Some(v) = &a.sessions_per_principal
    {
        diags.push(
            err(
                v.range,
                format!(
                    "`serve.limits.sessions_per_principal` ({}) is more than `sessions` ({})",
                    out.sessions_per_principal, out.sessions
                ),
            )
            .with_help("one principal can never hold more sessions than the server; lower it or raise `sessions`"),
        );
    }
    out
}

/// Why a URI cannot be a resource URI (or, with `fetch`, a JWKS URL), if it cannot.
pub fn bad_uri(uri: &str, fetch: bool) -> Option<&'static str> {
    let rest = if let Some(r) = uri.strip_prefix("https://") {
        r
    } else if let Some(r) = uri.strip_prefix("http://") {
        if fetch && !is_loopback_authority(r.split('/').next().unwrap_or("")) {
            return Some("is plain http:// to a host that is not loopback");
        }
        r
    } else {
        return Some("is not an https:// (or http://) URL");
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() {
        return Some("has no host");
    }
    if uri.contains('#') {
        return Some("has a fragment, which a resource URI must not have");
    }
    None
}

/// Whether a URL's `host[:port]` is a loopback host.
pub fn is_loopback_authority(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(r) => r.split(']').next().unwrap_or(""),
        None => authority.split(':').next().unwrap_or(""),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_and_jwks_urls() {
        assert_eq!(bad_uri("https://tools.example.com/mcp", false), None);
        assert_eq!(bad_uri("http://127.0.0.1:8080/mcp", false), None);
        assert!(bad_uri("ftp://x", false).is_some());
        assert!(bad_uri("https:///mcp", false).is_some());
        assert!(bad_uri("https://x/mcp#a", false).is_some());
        assert_eq!(bad_uri("http://localhost:9/jwks.json", true), None);
        assert_eq!(bad_uri("http://[::1]:9/jwks.json", true), None);
        assert!(bad_uri("http://idp.example.com/jwks.json", true).is_some());
    }
}
