//! A connection's artifacts as MCP resources, so that the client can read the full output of a
//! call whose view was cut even when the served tools do not include `read_artifact`.
//!
//! Every result that names artifacts links each one (a `resource_link` content block with a
//! `toolgate-artifact:blake3:…` URI); `resources/list` lists the artifacts this connection's
//! results named, `resources/templates/list` gives the URI template, and `resources/read`
//! reads one — whole up to [`READ_MAX_BYTES`], or the part a query asks for
//! (`?start_line=N&end_line=M`, `?offset=N&length=M`), redacted as the producing call's output
//! was. Only the caller's own artifacts are listed and readable — those a call of this
//! session, or of its principal when `serve --http` authenticated one, produced
//! ([`ArtifactStore::readable_by`]): content addresses are not secrets (the hash of a known
//! output), so knowing an id is not enough, and another caller's artifact is answered as one
//! that does not exist.

use std::collections::BTreeMap;
use std::sync::Mutex;

use rmcp::ErrorData;
use rmcp::model::{
    ContentBlock, MetaObject, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use serde_json::{Value, json};

use crate::runtime::ToolResult;
use crate::runtime::artifacts::{
    ArtifactError, ArtifactOwner, ArtifactRange, ArtifactRef, ArtifactStore, PartError, ReadLimits,
    URI_SCHEME, artifact_uri, parse_id, size_exact,
};

/// The RFC 6570 template of artifact URIs.
pub const URI_TEMPLATE: &str =
    "toolgate-artifact:{artifact_id}{?start_line,end_line,offset,length}";
/// Most bytes one `resources/read` returns (the rest is read with a range).
pub const READ_MAX_BYTES: u64 = 1 << 20;
/// Most lines one `resources/read` of a line range returns.
pub const READ_MAX_LINES: u64 = 100_000;
/// The `_meta` key of a read's range facts.
pub const PART_META_KEY: &str = "io.toolgate/artifact";

/// The artifacts one connection's results named.
#[derive(Debug, Default)]
pub struct ConnectionArtifacts {
    named: Mutex<BTreeMap<String, Linked>>,
}

/// An artifact a result named, and which call's output it holds.
#[derive(Clone, Debug)]
struct Linked {
    reference: ArtifactRef,
    tool: String,
    call_id: String,
}

impl ConnectionArtifacts {
    /// Records the artifacts a result names, and returns their resource links.
    pub fn record(&self, r: &ToolResult) -> Vec<ContentBlock> {
        let mut named = self
            .named
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        r.artifacts()
            .iter()
            .map(|a| {
                let linked = Linked {
                    reference: a.clone(),
                    tool: r.tool().to_owned(),
                    call_id: r.call_id().to_owned(),
                };
                let link = ContentBlock::resource_link(linked.resource());
                named.entry(a.id.clone()).or_insert(linked);
                link
            })
            .collect()
    }

    /// The artifacts this connection's results named that `owner` may read (a replayed
    /// result may name another caller's), as resources (blocking file work: call it off the
    /// async threads).
    pub fn list(&self, store: &ArtifactStore, owner: &ArtifactOwner) -> Vec<Resource> {
        let named: Vec<Linked> = self
            .named
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        named
            .iter()
            .filter(|l| store.readable_by(&l.reference.id, owner))
            .map(Linked::resource)
            .collect()
    }

    /// Reads a resource for `owner` (blocking file work: call it off the async threads).
    pub fn read(
        &self,
        store: &ArtifactStore,
        owner: &ArtifactOwner,
        uri: &str,
    ) -> Result<ReadResourceResult, ErrorData> {
        let (id, range) = parse_uri(uri)?;
        // Another caller's artifact and none at all get the same answer.
        let not_found = || {
            ErrorData::resource_not_found(
                format!(
                    "`{uri}`: no artifact {id} of this session (or its principal); only those are readable here"
                ),
                None,
            )
        };
        let limits = ReadLimits {
            max_bytes: READ_MAX_BYTES,
            max_lines: READ_MAX_LINES,
        };
        let asked = range.unwrap_or(ArtifactRange::Lines {
            start: 1,
            end: None,
        });
        let part = store
            .read_part_as(&id, owner, asked, limits)
            .map_err(|e| match e {
                PartError::PastEnd(m) => ErrorData::invalid_params(format!("`{uri}`: {m}"), None),
                PartError::Artifact(ArtifactError::NotFound(_)) => not_found(),
                PartError::Artifact(e) => {
                    ErrorData::resource_not_found(format!("`{uri}`: {e}"), None)
                }
            })?;
        let next = part.next().map(|r| range_uri(&id, r));
        let mut text = part.text.clone();
        // A whole artifact read without a range is its exact text; a part says where it lies.
        if range.is_some() || part.truncated {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&part.footer(&id));
            if let Some(n) = &next {
                text.push_str(&format!(" next: {n}"));
            }
            text.push('\n');
        }
        let mut meta = MetaObject::new();
        meta.insert(
            PART_META_KEY.to_owned(),
            json!({
                "start": part.start,
                "end": part.end,
                "unit": match asked { ArtifactRange::Lines { .. } => "lines", ArtifactRange::Bytes { .. } => "bytes" },
                "total_bytes": part.total_bytes,
                "total_lines": part.total_lines,
                "truncated": part.truncated,
                "next": next.map_or(Value::Null, Value::String),
            }),
        );
        let contents = ResourceContents::text(text, uri).with_meta(meta);
        Ok(ReadResourceResult::new(vec![contents]))
    }
}

impl Linked {
    fn resource(&self) -> Resource {
        let a = &self.reference;
        let what = if a.is_whole() {
            format!(
                "The full {} of {} (call {})",
                a.part(),
                self.tool,
                self.call_id
            )
        } else {
            format!(
                "The start of the {} of {} (call {}); the other {} were not kept (an artifact budget was reached)",
                a.part(),
                self.tool,
                self.call_id,
                size_exact(a.dropped)
            )
        };
        Resource::new(artifact_uri(&a.id), format!("{} {}", self.tool, a.part()))
            .with_description(format!("{what}: {} bytes, {} lines.", a.size, a.lines))
            .with_mime_type("text/plain")
            .with_size(a.size)
    }
}

/// The resource template of artifacts.
pub fn template() -> ResourceTemplate {
    ResourceTemplate::new(URI_TEMPLATE, "artifact")
        .with_title("Artifact")
        .with_description(
            "The full output of a call of this connection whose output was cut, by its id \
             (blake3:…); whole up to 1 MiB, or a part: start_line/end_line (1-based) or \
             offset/length (bytes).",
        )
        .with_mime_type("text/plain")
}

/// The URI of a part of an artifact.
fn range_uri(id: &str, range: ArtifactRange) -> String {
    let base = artifact_uri(id);
    match range {
        ArtifactRange::Lines { start, end: None } => format!("{base}?start_line={start}"),
        ArtifactRange::Lines {
            start,
            end: Some(e),
        } => format!("{base}?start_line={start}&end_line={e}"),
        ArtifactRange::Bytes {
            offset,
            length: None,
        } => format!("{base}?offset={offset}"),
        ArtifactRange::Bytes {
            offset,
            length: Some(l),
        } => format!("{base}?offset={offset}&length={l}"),
    }
}

/// The artifact id and the range a URI names (`None`: the whole artifact).
fn parse_uri(uri: &str) -> Result<(String, Option<ArtifactRange>), ErrorData> {
    let bad = |why: String| ErrorData::invalid_params(format!("`{uri}`: {why}"), None);
    let rest = uri
        .strip_prefix(URI_SCHEME)
        .and_then(|r| r.strip_prefix(':'))
        .ok_or_else(|| bad(format!("not a {URI_SCHEME}: URI")))?;
    let (id, query) = rest.split_once('?').unwrap_or((rest, ""));
    // A template expanded by a client percent-encodes the id's colon.
    let id = id.replace("%3A", ":").replace("%3a", ":");
    if parse_id(&id).is_none() {
        return Err(bad(format!(
            "`{id}` is not an artifact id (blake3: followed by 64 lowercase hex characters)"
        )));
    }
    let mut params = BTreeMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if !matches!(k, "start_line" | "end_line" | "offset" | "length") {
            return Err(bad(format!(
                "unknown parameter `{k}` (start_line, end_line, offset, length)"
            )));
        }
        let n: u64 = v
            .parse()
            .map_err(|_| bad(format!("`{k}` must be a whole number, not `{v}`")))?;
        params.insert(k, n);
    }
    let lines = params.contains_key("start_line") || params.contains_key("end_line");
    let bytes = params.contains_key("offset") || params.contains_key("length");
    let range = match (lines, bytes) {
        (true, true) => {
            return Err(bad(
                "give a line range (start_line/end_line) or a byte range (offset/length), not both"
                    .to_owned(),
            ));
        }
        (true, false) => {
            let start = params.get("start_line").copied().unwrap_or(1);
            let end = params.get("end_line").copied();
            if start == 0 || end.is_some_and(|e| e < start) {
                return Err(bad(
                    "lines are 1-based and end_line must not be before start_line".to_owned(),
                ));
            }
            Some(ArtifactRange::Lines { start, end })
        }
        (false, true) => {
            let length = params.get("length").copied();
            if length == Some(0) {
                return Err(bad("length must be at least 1".to_owned()));
            }
            Some(ArtifactRange::Bytes {
                offset: params.get("offset").copied().unwrap_or(0),
                length,
            })
        }
        (false, false) => None,
    };
    Ok((id, range))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_an_artifact_and_a_part() {
        let id = format!("blake3:{}", "a".repeat(64));
        assert_eq!(parse_uri(&artifact_uri(&id)).unwrap(), (id.clone(), None));
        assert_eq!(
            parse_uri(&format!("{}?start_line=3&end_line=9", artifact_uri(&id))).unwrap(),
            (
                id.clone(),
                Some(ArtifactRange::Lines {
                    start: 3,
                    end: Some(9)
                })
            )
        );
        let encoded = format!("toolgate-artifact:blake3%3A{}?offset=5", "a".repeat(64));
        assert_eq!(
            parse_uri(&encoded).unwrap(),
            (
                id.clone(),
                Some(ArtifactRange::Bytes {
                    offset: 5,
                    length: None
                })
            )
        );
        for bad in [
            "file:///etc/passwd".to_owned(),
            "toolgate-artifact:blake3:../../x".to_owned(),
            format!("{}?start_line=1&offset=2", artifact_uri(&id)),
            format!("{}?lines=1", artifact_uri(&id)),
            format!("{}?start_line=0", artifact_uri(&id)),
        ] {
            assert!(parse_uri(&bad).is_err(), "{bad}");
        }
        assert_eq!(
            range_uri(
                &id,
                ArtifactRange::Lines {
                    start: 5,
                    end: None
                }
            ),
            format!("{}?start_line=5", artifact_uri(&id))
        );
    }
}
