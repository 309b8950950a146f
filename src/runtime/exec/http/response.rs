//! Reading a response: the status as an error type, `Retry-After`, the server's own message.

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::ir::ErrorType;

/// The error type of a status; `None` for success (2xx).
///
/// 400/422 are the model's arguments; 401/403 the service refusing the caller
/// (POLICY_DENIED); 404/410 a missing resource; 409/412 a conflict with the resource's current
/// state (PRECONDITION_FAILED); 429 RATE_LIMITED; 502/503/504 a transient NETWORK_ERROR;
/// 408 TIMEOUT; other 4xx are refused arguments; other 5xx a failure of the service.
pub fn error_type(status: StatusCode) -> Option<ErrorType> {
    let code = status.as_u16();
    Some(match code {
        200..=299 => return None,
        400 | 422 => ErrorType::InvalidArguments,
        401 | 403 => ErrorType::PolicyDenied,
        404 | 410 => ErrorType::ResourceNotFound,
        408 => ErrorType::Timeout,
        409 | 412 => ErrorType::PreconditionFailed,
        429 => ErrorType::RateLimited,
        502..=504 => ErrorType::NetworkError,
        400..=499 => ErrorType::InvalidArguments,
        _ => ErrorType::RuntimeException,
    })
}

/// `Retry-After`: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let v = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// The longest server message quoted to the model.
const MESSAGE_CHARS: usize = 1_000;

/// What the server said about an error: a JSON error body's message (`message`, `error`,
/// `detail`, `title`, `error.message`, `errors`), else the start of the body as text.
pub fn server_message(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        let pick = |v: &Value| -> Option<String> {
            for key in ["message", "error_description", "detail", "error", "title"] {
                match v.get(key) {
                    Some(Value::String(s)) if !s.is_empty() => return Some(s.clone()),
                    Some(Value::Object(o)) => {
                        if let Some(Value::String(s)) = o.get("message") {
                            return Some(s.clone());
                        }
                    }
                    _ => {}
                }
            }
            None
        };
        let mut msg = pick(&v).unwrap_or_default();
        if let Some(errs) = v.get("errors").filter(|e| !e.is_null()) {
            let e = serde_json::to_string(errs).unwrap_or_default();
            msg = if msg.is_empty() {
                e
            } else {
                format!("{msg} {e}")
            };
        }
        if msg.is_empty() {
            msg = v.to_string();
        }
        return cut(&msg);
    }
    cut(String::from_utf8_lossy(body).trim())
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(MESSAGE_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        let t = |c: u16| error_type(StatusCode::from_u16(c).unwrap());
        assert_eq!(t(200), None);
        assert_eq!(t(204), None);
        assert_eq!(t(400), Some(ErrorType::InvalidArguments));
        assert_eq!(t(422), Some(ErrorType::InvalidArguments));
        assert_eq!(t(401), Some(ErrorType::PolicyDenied));
        assert_eq!(t(403), Some(ErrorType::PolicyDenied));
        assert_eq!(t(404), Some(ErrorType::ResourceNotFound));
        assert_eq!(t(409), Some(ErrorType::PreconditionFailed));
        assert_eq!(t(412), Some(ErrorType::PreconditionFailed));
        assert_eq!(t(429), Some(ErrorType::RateLimited));
        assert_eq!(t(503), Some(ErrorType::NetworkError));
        assert_eq!(t(500), Some(ErrorType::RuntimeException));
    }

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
    }

    #[test]
    fn messages() {
        assert_eq!(
            server_message(br#"{"message": "title is required", "errors": [{"field": "title"}]}"#),
            r#"title is required [{"field":"title"}]"#
        );
        assert_eq!(server_message(br#"{"error": {"message": "bad"}}"#), "bad");
        assert_eq!(server_message(b"  plain text\n"), "plain text");
    }
}
