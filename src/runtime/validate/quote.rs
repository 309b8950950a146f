//! Bounded quoting of the model's arguments in refusals: a validation error names the offending
//! value by a short, elided prefix and its length, never the value itself, so a 100 MB argument
//! gets a refusal of a few hundred bytes (as pydantic-core quotes at most a short prefix).

use serde_json::Value;

/// Characters of an offending value a refusal quotes before eliding the rest.
pub const QUOTED_CHARS: usize = 80;
/// Unknown properties a refusal names before counting the rest.
pub const NAMED_PROPERTIES: usize = 10;
/// Schema errors a refusal lists before counting the rest.
pub const LISTED_ERRORS: usize = 20;

/// The value as a refusal quotes it: its JSON text when at most [`QUOTED_CHARS`] characters,
/// else that many characters, `…`, and the whole text's length.
pub fn quoted_value(value: &Value) -> String {
    match value {
        Value::String(s) => elide(
            &Value::String(clip(s, QUOTED_CHARS + 2)).to_string(),
            s.chars().count(),
            "characters",
        ),
        Value::Array(items) if compact_len_over(value) => {
            format!("an array of {} items", items.len())
        }
        Value::Object(map) if compact_len_over(value) => {
            format!("an object of {} properties", map.len())
        }
        other => other.to_string(),
    }
}

/// A comma-separated list of at most [`NAMED_PROPERTIES`] names, each clipped, and how many more.
pub fn named_list(names: &[String]) -> String {
    let mut out: Vec<String> = names
        .iter()
        .take(NAMED_PROPERTIES)
        .map(|n| {
            elide(
                &Value::String(clip(n, QUOTED_CHARS + 2)).to_string(),
                n.chars().count(),
                "characters",
            )
        })
        .collect();
    if names.len() > NAMED_PROPERTIES {
        out.push(format!("and {} more", names.len() - NAMED_PROPERTIES));
    }
    out.join(", ")
}

fn clip(s: &str, chars: usize) -> String {
    s.chars().take(chars).collect()
}

/// `text` cut to [`QUOTED_CHARS`] characters with `…` and the original length when it was longer.
fn elide(text: &str, len: usize, unit: &str) -> String {
    if text.chars().count() <= QUOTED_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(QUOTED_CHARS).collect();
    format!("{head}… ({len} {unit})")
}

/// Whether the value's compact JSON text passes [`QUOTED_CHARS`], found without writing all of it.
fn compact_len_over(value: &Value) -> bool {
    struct Budget(usize);
    impl std::io::Write for Budget {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if buf.len() > self.0 {
                return Err(std::io::Error::other("over"));
            }
            self.0 -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Budget(QUOTED_CHARS), value).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_values_are_quoted_whole() {
        assert_eq!(quoted_value(&json!("ls -l")), r#""ls -l""#);
        assert_eq!(quoted_value(&json!(42)), "42");
        assert_eq!(quoted_value(&json!([1, 2])), "[1,2]");
    }

    #[test]
    fn long_values_are_an_elided_prefix_and_their_length() {
        let long = "x".repeat(100_000_000 / 100);
        let q = quoted_value(&json!(long));
        assert_eq!(
            q,
            format!("\"{}… (1000000 characters)", "x".repeat(QUOTED_CHARS - 1))
        );
        let items: Vec<u32> = (0..50_000).collect();
        assert_eq!(quoted_value(&json!(items)), "an array of 50000 items");
    }

    #[test]
    fn unknown_properties_are_named_up_to_the_limit() {
        let names: Vec<String> = (0..20_000).map(|i| format!("p{i}")).collect();
        let said = named_list(&names);
        assert_eq!(
            said,
            r#""p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", and 19990 more"#
        );
    }
}
