//! Human literals in specs: durations (`5s`, `2m`, `1h30m`) and sizes (`32KiB`, `1MB`).

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// A duration written as `500ms`, `5s`, `2m`, `1h` (or combinations such as `1m30s`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DurationLit(pub Duration);

/// A byte size written as `4096`, `32KiB`, `1MiB`, `2GB`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SizeLit(pub u64);

/// Parses a duration literal; a bare number is refused because its unit would be a guess.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    if t.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("`{t}` has no unit; write e.g. `{t}s` or `{t}ms`"));
    }
    humantime::parse_duration(t)
        .map_err(|e| format!("`{t}` is not a duration ({e}); write e.g. `500ms`, `5s`, `2m`"))
}

/// Parses a size literal (binary units `KiB`/`MiB`/`GiB`, decimal `KB`/`MB`/`GB`, or bytes).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: u64 = num
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{t}` is not a size; write e.g. `4096`, `32KiB`, `1MiB`"))?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => {
            return Err(format!(
                "unknown size unit `{other}` in `{t}`; use B, KiB, MiB, GiB, KB, MB or GB"
            ));
        }
    };
    num.checked_mul(mult)
        .ok_or_else(|| format!("`{t}` is too large"))
}

impl<'de> Deserialize<'de> for DurationLit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = DurationLit;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as `5s`, `500ms` or `2m`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DurationLit, E> {
                parse_duration(v).map(DurationLit).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<DurationLit, E> {
                Err(E::custom(format!(
                    "`{v}` has no unit; write e.g. `{v}s` or `{v}ms`"
                )))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<DurationLit, E> {
                Err(E::custom(format!(
                    "`{v}` has no unit; write e.g. `{v}s` or `{v}ms`"
                )))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for SizeLit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SizeLit;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as `4096`, `32KiB` or `1MiB`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SizeLit, E> {
                parse_size(v).map(SizeLit).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SizeLit, E> {
                Ok(SizeLit(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SizeLit, E> {
                u64::try_from(v)
                    .map(SizeLit)
                    .map_err(|_| E::custom("a size cannot be negative"))
            }
        }
        d.deserialize_any(V)
    }
}

impl schemars::JsonSchema for DurationLit {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "A duration such as `500ms`, `5s`, `2m` or `1h30m`.",
            "pattern": "^\\s*([0-9]+\\s*(ns|us|ms|s|sec|m|min|h|hr|d)\\s*)+$"
        })
    }
}

impl schemars::JsonSchema for SizeLit {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Size".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A size in bytes, or with a unit: `32KiB`, `1MiB`, `2GB`.",
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "string", "pattern": "^[0-9_]+\\s*(B|KiB|MiB|GiB|KB|kB|MB|GB)?$"}
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert!(parse_duration("5").unwrap_err().contains("no unit"));
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("32KiB").unwrap(), 32 * 1024);
        assert_eq!(parse_size("1MB").unwrap(), 1_000_000);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("1_000").unwrap(), 1000);
        assert!(parse_size("3 parsecs").is_err());
        assert!(parse_size("99999999999999999999GiB").is_err());
    }
}
