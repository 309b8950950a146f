//! Reading serde's "unknown field/variant" messages, for "did you mean" help.

pub use crate::suggest::closest;

/// Picks apart serde's "unknown field `x`, expected one of `a`, `b`" (and the variant form) into
/// the unknown name and the expected ones.
pub fn parse_unknown(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message
        .strip_prefix("unknown field ")
        .or_else(|| message.strip_prefix("unknown variant "))
        .or_else(|| {
            message
                .find("unknown field ")
                .or_else(|| message.find("unknown variant "))
                .and_then(|i| message.get(i..))
                .and_then(|m| {
                    m.split_once(' ')
                        .and_then(|(_, r)| r.split_once(' '))
                        .map(|(_, r)| r)
                })
        })?;
    let (name, expected) = rest.split_once(", expected ").unwrap_or((rest, ""));
    let name = name.trim().trim_matches('`').to_owned();
    let expected = expected
        .trim()
        .trim_start_matches("one of ")
        .replace(" or ", ", ")
        .split(',')
        .map(|s| s.trim().trim_matches('`').to_owned())
        .filter(|s| !s.is_empty() && s != "there are no fields" && s != "there are no variants")
        .collect();
    Some((name, expected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_serde_messages() {
        let (n, e) =
            parse_unknown("unknown field `nam`, expected one of name, parameters").unwrap();
        assert_eq!(n, "nam");
        assert_eq!(e, vec!["name", "parameters"]);
        let (n, e) =
            parse_unknown("unknown variant `reed_only`, expected `pure` or `read_only`").unwrap();
        assert_eq!(n, "reed_only");
        assert_eq!(e, vec!["pure", "read_only"]);
    }
}
