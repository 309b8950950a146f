//! Building one request from a call's arguments: path values percent-encoded into their
//! segment, query values as pairs, the body as JSON built from argument values, headers from
//! the spec (secrets read at call time). Nothing is pasted into a string the server parses.

use std::path::Path;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use crate::ir::{ErrorType, HttpBody, HttpHeader, HttpSpec, SecretSource};
use crate::runtime::exec::ExecFailure;

/// What a path value may leave unencoded: RFC 3986 unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A request ready to send, and the secret values it carries (to redact wherever they appear).
#[derive(Debug)]
pub struct Prepared {
    /// The method.
    pub method: reqwest::Method,
    /// The URL with path and query filled in.
    pub url: reqwest::Url,
    /// The headers (secrets marked sensitive).
    pub headers: HeaderMap,
    /// The JSON body.
    pub body: Option<Vec<u8>>,
    /// Secret values, for redaction.
    pub secrets: Vec<String>,
}

fn invalid(message: impl Into<String>) -> ExecFailure {
    ExecFailure::new(ErrorType::InvalidArguments, message)
}

/// The text of a scalar argument (`None` when absent or null).
fn scalar(args: &Value, name: &str) -> Result<Option<String>, ExecFailure> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(Value::Bool(b)) => Ok(Some(b.to_string())),
        Some(other) => Err(invalid(format!(
            "`{name}` must be a string, number or boolean here, not {}",
            kind(other)
        ))),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The URL with each `{name}` replaced by the argument, percent-encoded as segment text.
pub fn url(spec: &HttpSpec, args: &Value) -> Result<reqwest::Url, ExecFailure> {
    let mut out = String::with_capacity(spec.url.len() + 32);
    let mut rest = spec.url.as_str();
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return Err(ExecFailure::new(
                ErrorType::RuntimeException,
                format!("unbalanced braces in `{}`", spec.url),
            ));
        };
        let name = &after[..close];
        let value = scalar(args, name)?
            .ok_or_else(|| invalid(format!("`{name}` is needed for the URL's path")))?;
        // `.` and `..` are dot segments even when encoded (URL parsers resolve `%2e%2e` too),
        // and an empty segment changes which resource the path names.
        if value.is_empty() || value == "." || value == ".." {
            return Err(invalid(format!(
                "`{name}` cannot be `{value}`: it would change the path rather than name a resource"
            )));
        }
        out.extend(utf8_percent_encode(&value, SEGMENT));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    let mut url = reqwest::Url::parse(&out).map_err(|e| {
        ExecFailure::new(
            ErrorType::RuntimeException,
            format!("`{}` is not a URL: {e}", spec.url),
        )
    })?;
    let mut pairs: Vec<(String, String)> = Vec::new();
    for name in &spec.query {
        match args.get(name) {
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let wrapped = Value::Object(Map::from_iter([(name.clone(), item.clone())]));
                    if let Some(v) = scalar(&wrapped, name)
                        .map_err(|e| invalid(format!("item {i} of {}", e.message)))?
                    {
                        pairs.push((name.clone(), v));
                    }
                }
            }
            _ => {
                if let Some(v) = scalar(args, name)? {
                    pairs.push((name.clone(), v));
                }
            }
        }
    }
    if !pairs.is_empty() {
        url.query_pairs_mut().extend_pairs(pairs);
    }
    Ok(url)
}

/// Prepares the whole request.
pub fn prepare(
    spec: &HttpSpec,
    args: &Value,
    idempotency_key: &str,
    project_root: &Path,
) -> Result<Prepared, ExecFailure> {
    let method = reqwest::Method::from_bytes(spec.method.as_bytes()).map_err(|_| {
        ExecFailure::new(
            ErrorType::RuntimeException,
            format!("`{}` is not an HTTP method", spec.method),
        )
    })?;
    let url = url(spec, args)?;
    let mut headers = HeaderMap::new();
    let mut secrets = Vec::new();
    for (name, h) in &spec.headers {
        let hname = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            ExecFailure::new(
                ErrorType::RuntimeException,
                format!("`{name}` is not a header name"),
            )
        })?;
        let (text, sensitive) = match h {
            HttpHeader::Value(v) => (v.clone(), false),
            HttpHeader::Arg(a) => match scalar(args, a)? {
                Some(v) => (v, false),
                None => continue,
            },
            HttpHeader::Secret { source, prefix } => {
                let secret = read_secret(source, name, project_root)?;
                let text = format!("{prefix}{secret}");
                secrets.push(secret);
                (text, true)
            }
        };
        let mut value = HeaderValue::from_str(&text).map_err(|_| {
            invalid(format!(
                "the value of the header `{name}` has characters a header cannot carry"
            ))
        })?;
        value.set_sensitive(sensitive);
        headers.insert(hname, value);
    }
    // The key the far side deduplicates on: stable across this call's retries and recovery.
    if !spec.is_safe_method()
        && !headers.contains_key("idempotency-key")
        && let Ok(v) = HeaderValue::from_str(idempotency_key)
    {
        headers.insert("idempotency-key", v);
    }
    let body = match &spec.body {
        None => None,
        Some(b) => {
            let value = match b {
                HttpBody::Arg(a) => args.get(a).cloned().unwrap_or(Value::Null),
                HttpBody::Fields(fields) => Value::Object(
                    fields
                        .iter()
                        .filter_map(|f| args.get(f).map(|v| (f.clone(), v.clone())))
                        .collect(),
                ),
            };
            headers
                .entry(reqwest::header::CONTENT_TYPE)
                .or_insert(HeaderValue::from_static("application/json"));
            Some(serde_json::to_vec(&value).map_err(|e| {
                ExecFailure::new(ErrorType::RuntimeException, format!("the body: {e}"))
            })?)
        }
    };
    headers
        .entry(reqwest::header::ACCEPT)
        .or_insert(HeaderValue::from_static("application/json, */*;q=0.5"));
    Ok(Prepared {
        method,
        url,
        headers,
        body,
        secrets,
    })
}

/// Reads a secret at call time. Its absence is the deployment's fault, not the model's.
fn read_secret(
    source: &SecretSource,
    header: &str,
    project_root: &Path,
) -> Result<String, ExecFailure> {
    let missing = |what: String| {
        ExecFailure::new(
            ErrorType::RuntimeException,
            format!(
                "the secret of the header `{header}` is missing: {what}; the tool cannot authenticate until it is provided"
            ),
        )
    };
    match source {
        SecretSource::Env(var) => match std::env::var(var) {
            Ok(v) if !v.is_empty() => Ok(v),
            _ => Err(missing(format!(
                "the environment variable `{var}` is not set"
            ))),
        },
        SecretSource::File(path) => {
            let p = project_root.join(path);
            match std::fs::read_to_string(&p) {
                Ok(v) => {
                    let v = v.trim_end_matches(['\n', '\r']).to_owned();
                    if v.is_empty() {
                        Err(missing(format!("the file `{path}` is empty")))
                    } else {
                        Ok(v)
                    }
                }
                Err(e) => Err(missing(format!("the file `{path}` cannot be read ({e})"))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use indexmap::IndexMap;
    use serde_json::json;

    fn spec(url: &str, query: &[&str]) -> HttpSpec {
        HttpSpec {
            method: "GET".into(),
            url: url.into(),
            query: query.iter().map(|s| (*s).to_owned()).collect(),
            headers: IndexMap::new(),
            body: None,
            pick: None,
            hosts: vec![],
        }
    }

    #[test]
    fn path_values_are_encoded_by_position() {
        let s = spec(
            "https://api.test/repos/{owner}/{repo}/issues",
            &["labels", "page"],
        );
        let u = url(
            &s,
            &json!({"owner": "a/../b", "repo": "x?y#z", "labels": ["bug", "p 1"], "page": 2}),
        )
        .unwrap();
        assert_eq!(
            u.as_str(),
            "https://api.test/repos/a%2F..%2Fb/x%3Fy%23z/issues?labels=bug&labels=p+1&page=2"
        );
        assert_eq!(u.host_str(), Some("api.test"));
    }

    #[test]
    fn dot_segments_and_objects_are_refused() {
        let s = spec("https://api.test/files/{name}", &["q"]);
        for bad in ["..", ".", ""] {
            let e = url(&s, &json!({"name": bad})).unwrap_err();
            assert_eq!(e.error_type, ErrorType::InvalidArguments, "{bad}");
        }
        let e = url(&s, &json!({"name": "x", "q": {"a": 1}})).unwrap_err();
        assert_eq!(e.error_type, ErrorType::InvalidArguments);
    }

    #[test]
    fn body_is_built_from_values() {
        let mut s = spec("https://api.test/items", &[]);
        s.method = "POST".into();
        s.body = Some(HttpBody::Fields(vec![
            "title".into(),
            "tags".into(),
            "gone".into(),
        ]));
        let p = prepare(
            &s,
            &json!({"title": "a\"}, \"admin\": true, {\"", "tags": ["x"]}),
            "key-1",
            Path::new("."),
        )
        .unwrap();
        let body: Value = serde_json::from_slice(&p.body.unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"title": "a\"}, \"admin\": true, {\"", "tags": ["x"]})
        );
        assert_eq!(p.headers["idempotency-key"], "key-1");
    }
}
