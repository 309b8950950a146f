//! `exec: {http: …}`: its syntax tree and its resolution into [`crate::ir::HttpSpec`].
//!
//! The resolver checks what can be checked before any call: a literal scheme and host (so the
//! tool's egress is known from the spec alone), placeholders only in the path, every argument
//! the request names declared in `parameters`, and a well-formed secret source.

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;

use crate::ir::{HttpBody, HttpHeader, HttpSpec, SecretSource};
use crate::spec::ast::StringOr;
use crate::spec::source::TextRange;
use crate::spec::yaml::Spanned;
use crate::suggest::did_you_mean;

/// The methods an HTTP tool may use.
pub const METHODS: &[&str] = &["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"];

/// `exec.http`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpExecAst {
    /// The method (`GET`, `POST`, `PUT`, `PATCH`, `DELETE`, `HEAD`, `OPTIONS`).
    pub method: Spanned<String>,
    /// The URL: literal scheme and host; `{name}` placeholders in the path are arguments,
    /// percent-encoded.
    pub url: Spanned<String>,
    /// Arguments sent as query parameters.
    #[serde(default)]
    pub query: Vec<Spanned<String>>,
    /// Request headers: a fixed value, `{arg: NAME}` or `{secret: {env: VAR} | {file: PATH},
    /// prefix: TEXT}`.
    #[serde(default)]
    pub headers: IndexMap<String, Spanned<StringOr<HeaderAst>>>,
    /// The JSON body: `{fields: [NAME, …]}` or `{arg: NAME}`.
    #[serde(default)]
    pub body: Option<Spanned<BodyAst>>,
    /// A JSON Pointer to the part of the response body the tool returns.
    #[serde(default)]
    pub pick: Option<Spanned<String>>,
    /// Further hosts the tool may reach (redirect targets): names or `*.suffix`.
    #[serde(default)]
    pub hosts: Vec<Spanned<String>>,
}

/// A header in long form.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeaderAst {
    /// The argument whose value is the header.
    #[serde(default)]
    pub arg: Option<Spanned<String>>,
    /// Where the secret value is read at call time.
    #[serde(default)]
    pub secret: Option<Spanned<SecretAst>>,
    /// Text before the secret (`"Bearer "`).
    #[serde(default)]
    pub prefix: Option<Spanned<String>>,
}

/// A secret's source: exactly one of `env` and `file`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretAst {
    /// An environment variable.
    #[serde(default)]
    pub env: Option<Spanned<String>>,
    /// A file, relative to the project folder.
    #[serde(default)]
    pub file: Option<Spanned<String>>,
}

/// The body in long form.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BodyAst {
    /// An object of these arguments.
    #[serde(default)]
    pub fields: Option<Vec<Spanned<String>>>,
    /// One argument's value is the whole body.
    #[serde(default)]
    pub arg: Option<Spanned<String>>,
}

/// A problem found while resolving: where, what, how to fix.
pub type Finding = (TextRange, String, Option<String>);

/// Resolves `exec.http`, reporting contract problems to `report`.
pub fn resolve(h: &HttpExecAst, parameters: &Value, report: &mut dyn FnMut(Finding)) -> HttpSpec {
    let props: Vec<&str> = parameters
        .get("properties")
        .and_then(Value::as_object)
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let required: Vec<&str> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let arg = |name: &Spanned<String>, report: &mut dyn FnMut(Finding)| {
        if !props.contains(&name.value.as_str()) {
            report((
                name.range,
                format!("`{}` is not a parameter of this tool", name.value),
                Some(match did_you_mean(&name.value, props.iter().copied()) {
                    Some(d) => {
                        format!("{d} Arguments must be declared under `parameters.properties`.")
                    }
                    None => "declare it under `parameters.properties`".into(),
                }),
            ));
        }
    };

    let method = h.method.value.to_ascii_uppercase();
    if !METHODS.contains(&method.as_str()) {
        report((
            h.method.range,
            format!("unknown HTTP method `{}`", h.method.value),
            Some(format!("use one of {}", METHODS.join(", "))),
        ));
    }
    check_url(&h.url, report);
    let spec_url = HttpSpec {
        method: method.clone(),
        url: h.url.value.clone(),
        query: Vec::new(),
        headers: IndexMap::new(),
        body: None,
        pick: None,
        hosts: Vec::new(),
    };
    for p in spec_url.path_params() {
        let named = Spanned::new(p.to_owned(), h.url.range);
        arg(&named, report);
        if props.contains(&p) && !required.contains(&p) {
            report((
                h.url.range,
                format!("the path parameter `{p}` is not required"),
                Some(format!(
                    "a path segment cannot be left out: add `{p}` to `parameters.required`"
                )),
            ));
        }
    }
    for q in &h.query {
        arg(q, report);
    }
    let mut headers = IndexMap::new();
    for (name, v) in &h.headers {
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
        {
            report((
                v.range,
                format!("`{name}` is not a header name"),
                Some("header names are letters, digits, `-` and `_`".into()),
            ));
        }
        let header = match &v.value {
            StringOr::String(s) => HttpHeader::Value(s.clone()),
            StringOr::Map(m) => match (&m.arg, &m.secret) {
                (Some(a), None) if m.prefix.is_none() => {
                    arg(a, report);
                    HttpHeader::Arg(a.value.clone())
                }
                (None, Some(s)) => HttpHeader::Secret {
                    source: secret_source(s, report),
                    prefix: m
                        .prefix
                        .as_ref()
                        .map(|p| p.value.clone())
                        .unwrap_or_default(),
                },
                _ => {
                    report((
                        v.range,
                        format!(
                            "the header `{name}` is a text, `{{arg: NAME}}` or `{{secret: {{env: VAR}}, prefix: TEXT}}`"
                        ),
                        None,
                    ));
                    HttpHeader::Value(String::new())
                }
            },
        };
        headers.insert(name.clone(), header);
    }
    let body = h.body.as_ref().map(|b| {
        if matches!(method.as_str(), "GET" | "HEAD") {
            report((
                b.range,
                format!("a {method} request has no body"),
                Some("send the arguments as `query`, or use POST".into()),
            ));
        }
        match (&b.value.fields, &b.value.arg) {
            (Some(fields), None) => {
                for f in fields {
                    arg(f, report);
                }
                HttpBody::Fields(fields.iter().map(|f| f.value.clone()).collect())
            }
            (None, Some(a)) => {
                arg(a, report);
                HttpBody::Arg(a.value.clone())
            }
            _ => {
                report((
                    b.range,
                    "the body is either `{fields: [NAME, …]}` or `{arg: NAME}`".into(),
                    None,
                ));
                HttpBody::Fields(Vec::new())
            }
        }
    });
    if let Some(p) = &h.pick
        && !(p.value.is_empty() || p.value.starts_with('/'))
    {
        report((
            p.range,
            format!("`{}` is not a JSON Pointer", p.value),
            Some(format!("a JSON Pointer starts with `/`: `/{}`", p.value)),
        ));
    }
    for host in &h.hosts {
        if host.value.is_empty()
            || host.value.contains(['/', ':', '{', ' ']) && !host.value.starts_with('[')
        {
            report((
                host.range,
                format!("`{}` is not a host name", host.value),
                Some("write a name such as `uploads.example.com` or `*.example.com`".into()),
            ));
        }
    }
    HttpSpec {
        query: h.query.iter().map(|q| q.value.clone()).collect(),
        headers,
        body,
        pick: h.pick.as_ref().map(|p| p.value.clone()),
        hosts: h.hosts.iter().map(|s| s.value.clone()).collect(),
        ..spec_url
    }
}

fn secret_source(s: &Spanned<SecretAst>, report: &mut dyn FnMut(Finding)) -> SecretSource {
    match (&s.value.env, &s.value.file) {
        (Some(e), None) if !e.value.is_empty() => SecretSource::Env(e.value.clone()),
        (None, Some(f)) if !f.value.is_empty() => SecretSource::File(f.value.clone()),
        _ => {
            report((
                s.range,
                "a secret comes from exactly one of `env: VARIABLE` and `file: PATH`".into(),
                None,
            ));
            SecretSource::Env(String::new())
        }
    }
}

/// The URL must name its scheme and host literally; placeholders only in the path.
fn check_url(url: &Spanned<String>, report: &mut dyn FnMut(Finding)) {
    let u = &url.value;
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"));
    let Some(rest) = rest else {
        report((
            url.range,
            format!("`{u}` is not an http:// or https:// URL"),
            Some("write the whole URL, e.g. `https://api.example.com/items/{id}`".into()),
        ));
        return;
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    if authority.is_empty() || authority.contains(['{', '}', '@']) {
        report((
            url.range,
            format!("the host of `{u}` must be written literally"),
            Some("placeholders may only stand in the path; the host is what egress is checked against".into()),
        ));
    }
    let path = &rest[authority_end..];
    if let Some(q) = path.find(['?', '#'])
        && path[q..].contains(['{', '}'])
    {
        report((
            url.range,
            "placeholders may only stand in the path".into(),
            Some("send arguments as query parameters with `query: [NAME, …]`".into()),
        ));
    }
    let mut depth = 0i32;
    for c in path.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            break;
        }
    }
    if depth != 0 {
        report((
            url.range,
            format!("unbalanced braces in the path of `{u}`"),
            Some("a placeholder is `{name}`, the name of a parameter".into()),
        ));
    }
}

/// `network:` in toolgate.yaml.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkAst {
    /// Hosts every HTTP tool may reach besides its own: names or `*.suffix`.
    #[serde(default)]
    pub allow: Vec<Spanned<String>>,
    /// Hosts that may resolve to loopback, private or link-local addresses.
    #[serde(default)]
    pub allow_private: Vec<Spanned<String>>,
    /// The proxy HTTP tools go through (proxies from the environment are never used).
    #[serde(default)]
    pub proxy: Option<Spanned<String>>,
}

/// Resolves `network:`.
pub fn resolve_network(n: &NetworkAst) -> crate::ir::NetworkPolicy {
    crate::ir::NetworkPolicy {
        allow: n.allow.iter().map(|s| s.value.clone()).collect(),
        allow_private: n.allow_private.iter().map(|s| s.value.clone()).collect(),
        proxy: n.proxy.as_ref().map(|s| s.value.clone()),
    }
}
