//! [`Bundle`]: the resolved IR of a whole project, as written to `bundle.json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ir::project::ProjectConfig;
use crate::ir::tool::ToolDefinition;

/// The bundle format version; bumped when a reader of an older version would misread it.
pub const BUNDLE_FORMAT: u32 = 1;

/// Every resolved tool of a project plus the project settings, with a content hash.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bundle {
    /// [`BUNDLE_FORMAT`] of the writer.
    pub format: u32,
    /// blake3 of the canonical JSON of `project` and `tools`, hex.
    pub content_hash: String,
    /// Project settings.
    pub project: ProjectConfig,
    /// Tools, sorted by name.
    pub tools: Vec<ToolDefinition>,
}

/// A bundle that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// The JSON does not parse as a bundle.
    #[error("bundle is not valid: {0}")]
    Parse(#[from] serde_json::Error),
    /// Written by an incompatible toolgate.
    #[error(
        "bundle format {found} is not supported (this toolgate reads format {BUNDLE_FORMAT}); rebuild it with `toolgate build`"
    )]
    Format {
        /// The format found.
        found: u32,
    },
    /// The content does not match its hash.
    #[error(
        "bundle content hash mismatch (expected {expected}, computed {computed}); the file was edited or corrupted — rebuild it with `toolgate build`"
    )]
    Hash {
        /// Recorded hash.
        expected: String,
        /// Hash of the content.
        computed: String,
    },
}

impl Bundle {
    /// Builds a bundle, sorting tools by name and computing the hash.
    pub fn new(project: ProjectConfig, mut tools: Vec<ToolDefinition>) -> Self {
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let content_hash = content_hash(&project, &tools);
        Bundle {
            format: BUNDLE_FORMAT,
            content_hash,
            project,
            tools,
        }
    }

    /// Parses and verifies a bundle.
    pub fn from_json(text: &str) -> Result<Self, BundleError> {
        let bundle: Bundle = serde_json::from_str(text)?;
        if bundle.format != BUNDLE_FORMAT {
            return Err(BundleError::Format {
                found: bundle.format,
            });
        }
        let computed = content_hash(&bundle.project, &bundle.tools);
        if computed != bundle.content_hash {
            return Err(BundleError::Hash {
                expected: bundle.content_hash,
                computed,
            });
        }
        Ok(bundle)
    }

    /// The tool with this name.
    pub fn tool(&self, name: &str) -> Option<&ToolDefinition> {
        self.tools.iter().find(|t| t.name == name)
    }
}

fn content_hash(project: &ProjectConfig, tools: &[ToolDefinition]) -> String {
    let mut hasher = blake3::Hasher::new();
    // serde_json output is deterministic for these types (ordered maps, author key order).
    let project = serde_json::to_vec(project).unwrap_or_default();
    let tools = serde_json::to_vec(tools).unwrap_or_default();
    hasher.update(&project);
    hasher.update(b"\n");
    hasher.update(&tools);
    hasher.finalize().to_hex().to_string()
}
