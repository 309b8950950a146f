//! HTTP tools (`exec: {http: …}`) and the project's egress policy (`network:` in toolgate.yaml).

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A tool that is one HTTP request built from its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpSpec {
    /// The method, upper case (`GET`, `POST`, …).
    pub method: String,
    /// The URL: a literal scheme and host, and a path whose `{name}` placeholders are
    /// arguments, each percent-encoded as (part of) one path segment.
    pub url: String,
    /// Arguments sent as query parameters (absent ones are left out, lists repeat the name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query: Vec<String>,
    /// Request headers.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub headers: IndexMap<String, HttpHeader>,
    /// The JSON body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<HttpBody>,
    /// A JSON Pointer to the part of the response body the tool returns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<String>,
    /// Hosts the tool may reach besides the URL's (redirect targets), as names or `*.suffix`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
}

/// The value of one request header.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HttpHeader {
    /// A fixed value.
    Value(String),
    /// The value of an argument (left out when the argument is absent).
    Arg(String),
    /// A secret, redacted from everything the call records or returns.
    Secret {
        /// Where the secret is read from at call time.
        source: SecretSource,
        /// Text put before the secret (`Bearer `).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        prefix: String,
    },
}

/// Where a secret comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SecretSource {
    /// An environment variable of toolgate's process.
    Env(String),
    /// A file (relative to the project folder), its content less a final newline.
    File(String),
}

/// How the JSON request body is built from the arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HttpBody {
    /// An object of these arguments (absent ones left out).
    Fields(Vec<String>),
    /// One argument's value is the whole body.
    Arg(String),
}

impl HttpSpec {
    /// Whether the method changes nothing on the server (RFC 9110 safe methods).
    pub fn is_safe_method(&self) -> bool {
        matches!(self.method.as_str(), "GET" | "HEAD" | "OPTIONS")
    }

    /// The `{name}` placeholders of the URL's path, in order.
    pub fn path_params(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut rest = self.url.as_str();
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            match after.find('}') {
                Some(close) => {
                    out.push(&after[..close]);
                    rest = &after[close + 1..];
                }
                None => break,
            }
        }
        out
    }
}

/// The project's egress policy (`network:` in toolgate.yaml).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NetworkPolicy {
    /// Hosts every HTTP tool may reach, besides its own (names or `*.suffix`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Hosts that may resolve to loopback, private or link-local addresses (refused otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_private: Vec<String>,
    /// The proxy HTTP tools go through; proxies from the environment are never used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<String>,
}

impl NetworkPolicy {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.allow_private.is_empty() && self.proxy.is_none()
    }
}

/// Whether `host` matches a host pattern: a name (case-insensitive) or `*.suffix`, which
/// matches names below the suffix (not the suffix itself).
pub fn host_matches(pattern: &str, host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let pattern = pattern.trim_end_matches('.').to_ascii_lowercase();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let pattern = pattern.trim_start_matches('[').trim_end_matches(']');
    match pattern.strip_prefix("*.") {
        Some(suffix) => host
            .strip_suffix(suffix)
            .is_some_and(|head| head.ends_with('.') && head.len() > 1),
        None => pattern == host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        assert!(host_matches("api.example.com", "API.example.com."));
        assert!(host_matches("*.example.com", "a.b.example.com"));
        assert!(!host_matches("*.example.com", "example.com"));
        assert!(!host_matches("*.example.com", "evilexample.com"));
        assert!(!host_matches("example.com", "example.com.evil.net"));
        assert!(host_matches("::1", "[::1]"));
    }

    #[test]
    fn path_params_in_order() {
        let s = HttpSpec {
            method: "GET".into(),
            url: "https://x.test/repos/{owner}/{repo}/files/{name}.json".into(),
            query: vec![],
            headers: IndexMap::new(),
            body: None,
            pick: None,
            hosts: vec![],
        };
        assert_eq!(s.path_params(), ["owner", "repo", "name"]);
    }
}
