//! The bounds every `toolgate import` holds, whatever it reads: a document (or an upstream's
//! `tools/list`) past one of them stops the import with an error that says which bound, where,
//! and the `--limit NAME=N` that raises it — never by running out of memory.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// One bound `--limit NAME=N` can set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitName {
    /// Bytes of the document read (or of the upstream's whole `tools/list` answer).
    Document,
    /// Schema nodes the import visits, over the whole import.
    Nodes,
    /// Nesting of one schema, counted in JSON values.
    Depth,
    /// Tools (operations) imported.
    Tools,
    /// Bytes of all spec files written together.
    Output,
    /// Seconds an MCP server has to answer `tools/list`.
    Timeout,
}

impl LimitName {
    const ALL: [(&'static str, LimitName); 6] = [
        ("document", LimitName::Document),
        ("nodes", LimitName::Nodes),
        ("depth", LimitName::Depth),
        ("tools", LimitName::Tools),
        ("output", LimitName::Output),
        ("timeout", LimitName::Timeout),
    ];

    /// The name on the command line.
    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, n)| *n == self)
            .map_or("?", |(s, _)| s)
    }
}

/// Parses one `--limit NAME=N` (`N` may end in `KiB`, `MiB` or `GiB` for the byte bounds).
pub fn parse_limit(s: &str) -> Result<(LimitName, u64), String> {
    let names = || {
        LimitName::ALL
            .iter()
            .map(|(s, _)| *s)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (key, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=N; the names are {}", names()))?;
    let name = LimitName::ALL
        .iter()
        .find(|(k, _)| *k == key.trim())
        .map(|(_, n)| *n)
        .ok_or_else(|| format!("unknown limit `{key}`; the names are {}", names()))?;
    let value = value.trim();
    let (digits, unit) = match value.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => value.split_at(i),
        None => (value, ""),
    };
    let scale: u64 = match unit {
        "" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => return Err(format!("`{other}` is not a unit; use KiB, MiB or GiB")),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{value}` is not a whole number"))?;
    let n = n
        .checked_mul(scale)
        .ok_or_else(|| format!("`{value}` is too large"))?;
    if n == 0 {
        return Err(format!("the `{key}` limit must be above 0"));
    }
    Ok((name, n))
}

/// The bounds of one import.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImportLimits {
    /// Most bytes read from the document (or the upstream's answers).
    pub document_bytes: u64,
    /// Most schema nodes visited.
    pub nodes: u64,
    /// Deepest schema nesting.
    pub depth: usize,
    /// Most tools imported.
    pub tools: usize,
    /// Most bytes of spec files written.
    pub output_bytes: u64,
    /// How long an MCP server has to list its tools.
    pub timeout: Duration,
}

impl Default for ImportLimits {
    fn default() -> Self {
        ImportLimits {
            document_bytes: 32 << 20,
            nodes: 2_000_000,
            // The spec loader reads YAML 64 levels deep; a schema sits two below the top.
            depth: 48,
            tools: 2_000,
            output_bytes: 64 << 20,
            timeout: Duration::from_secs(30),
        }
    }
}

impl ImportLimits {
    /// The defaults with the `--limit`s given applied, later ones winning.
    pub fn with(given: &[(LimitName, u64)]) -> Self {
        let mut l = ImportLimits::default();
        for (name, n) in given {
            let as_usize = usize::try_from(*n).unwrap_or(usize::MAX);
            match name {
                LimitName::Document => l.document_bytes = *n,
                LimitName::Nodes => l.nodes = *n,
                LimitName::Depth => l.depth = as_usize,
                LimitName::Tools => l.tools = as_usize,
                LimitName::Output => l.output_bytes = *n,
                LimitName::Timeout => l.timeout = Duration::from_secs(*n),
            }
        }
        l
    }
}

/// The message of a bound passed: `what` is past the limit of `limit`, and how to raise it.
pub fn over(what: &str, name: LimitName, limit: u64) -> String {
    format!(
        "{what}: over the {} limit of {limit} (raise it with `--limit {}=N`)",
        name.as_str(),
        name.as_str()
    )
}

/// Reads a document as UTF-8, refusing it before reading when it is larger than the limit.
pub fn read_bounded(path: &Path, limits: &ImportLimits) -> Result<String, String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    // Read one byte past the limit: a file that grows while read is caught as well.
    file.take(limits.document_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > limits.document_bytes {
        return Err(over(
            &format!(
                "{} is larger than {} bytes",
                path.display(),
                limits.document_bytes
            ),
            LimitName::Document,
            limits.document_bytes,
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "{}: not UTF-8 (at byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Counts the nodes of a schema against the shared budget and checks its depth; on a bound
/// passed, says where (a JSON pointer below the schema) and which bound.
pub struct Walk<'l> {
    limits: &'l ImportLimits,
    /// Nodes visited so far over the whole import.
    pub visited: u64,
}

impl<'l> Walk<'l> {
    /// A budget of the limits' size, nothing spent.
    pub fn new(limits: &'l ImportLimits) -> Self {
        Walk { limits, visited: 0 }
    }

    /// Spends one node at `depth`; `at` names the place for the message (empty when the
    /// caller locates it).
    pub fn step(&mut self, depth: usize, at: &dyn Fn() -> String) -> Result<(), String> {
        let at = || {
            let a = at();
            if a.is_empty() { a } else { format!("{a}: ") }
        };
        self.visited += 1;
        if self.visited > self.limits.nodes {
            return Err(over(
                &format!(
                    "{}the import visited more than {} schema nodes",
                    at(),
                    self.limits.nodes
                ),
                LimitName::Nodes,
                self.limits.nodes,
            ));
        }
        if depth > self.limits.depth {
            return Err(over(
                &format!(
                    "{}a schema nested deeper than {} levels",
                    at(),
                    self.limits.depth
                ),
                LimitName::Depth,
                self.limits.depth as u64,
            ));
        }
        Ok(())
    }

    /// A bound for counting what a schema would grow to: twice the nodes limit.
    pub fn cap(&self) -> u64 {
        self.limits.nodes.saturating_mul(2)
    }

    /// Walks a whole JSON value (an upstream's or a list's schema): its nodes and depth.
    pub fn value(&mut self, v: &Value, at: &str) -> Result<(), String> {
        self.walk(v, 0, at, &mut String::new())
    }

    fn walk(&mut self, v: &Value, depth: usize, at: &str, ptr: &mut String) -> Result<(), String> {
        {
            let here: &str = ptr;
            self.step(depth, &|| {
                format!("{at} at `{}`", if here.is_empty() { "/" } else { here })
            })?;
        }
        let len = ptr.len();
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    ptr.push('/');
                    ptr.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    self.walk(x, depth + 1, at, ptr)?;
                    ptr.truncate(len);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    ptr.push('/');
                    ptr.push_str(&i.to_string());
                    self.walk(x, depth + 1, at, ptr)?;
                    ptr.truncate(len);
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Refuses more tools than the limit.
pub fn check_tools(count: usize, what: &str, limits: &ImportLimits) -> Result<(), String> {
    if count > limits.tools {
        return Err(over(
            &format!("{what} has {count} tools"),
            LimitName::Tools,
            limits.tools as u64,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn limits_parse_with_units_and_refuse_the_rest() {
        assert_eq!(parse_limit("tools=10"), Ok((LimitName::Tools, 10)));
        assert_eq!(parse_limit("output=2MiB"), Ok((LimitName::Output, 2 << 20)));
        assert_eq!(
            parse_limit("tool=1"),
            Err("unknown limit `tool`; the names are document, nodes, depth, tools, output, timeout".into())
        );
        assert_eq!(
            parse_limit("depth=0"),
            Err("the `depth` limit must be above 0".into())
        );
        assert_eq!(
            parse_limit("depth=3MB"),
            Err("`MB` is not a unit; use KiB, MiB or GiB".into())
        );
        let l = ImportLimits::with(&[(LimitName::Tools, 5), (LimitName::Tools, 7)]);
        assert_eq!(l.tools, 7);
    }

    #[test]
    fn a_walk_names_the_pointer_past_the_depth() {
        let limits = ImportLimits {
            depth: 2,
            ..ImportLimits::default()
        };
        let mut w = Walk::new(&limits);
        let e = w
            .value(
                &json!({"properties": {"a/b": {"type": "string"}}}),
                "tool `t`",
            )
            .unwrap_err();
        assert_eq!(
            e,
            "tool `t` at `/properties/a~1b/type`: a schema nested deeper than 2 levels: over the depth limit of 2 (raise it with `--limit depth=N`)"
        );
    }
}
