//! Experiment 8: a 100 KB build log goes to the artifact store; the model gets a summary and
//! a reference, and can read any part of the log back.

use std::io::Write;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::Status;
use toolgate::runtime::ArtifactStore;
use toolgate::runtime::{Session, ToolCall, ToolResult, ToolRuntime};

use crate::lab::{self, BoxError, Lab, Scratch, ensure};

/// Modules the simulated build compiles: about 64 bytes of log each.
pub const MODULES: u64 = 1600;
/// Bytes per read_artifact page (the tool allows up to 64 KiB).
const PAGE: u64 = 32 * 1024;

/// What happened.
#[derive(Debug)]
pub struct Report {
    /// How the build call ended.
    pub status: Status,
    /// The build log the tool wrote to the workspace (its own copy).
    pub log: String,
    /// The artifact id the result names.
    pub artifact_id: Option<String>,
    /// The artifact's size, as the result says.
    pub artifact_size: u64,
    /// The text the model read for the build.
    pub text: String,
    /// The artifact's bytes, straight from the store.
    pub stored: Vec<u8>,
    /// The artifact read back page by page through read_artifact, as a model would.
    pub paged: String,
    /// read_artifact calls it took.
    pub pages: usize,
}

impl Report {
    /// Whether the experiment showed what it should.
    pub fn check(&self) -> Result<(), String> {
        ensure(self.status == Status::Success, || {
            format!("the build ended {:?}", self.status)
        })?;
        ensure(self.log.len() >= 90_000, || {
            format!("the log is only {} bytes", self.log.len())
        })?;
        ensure(
            self.artifact_id.is_some() && self.artifact_size == self.log.len() as u64,
            || {
                format!(
                    "the result names artifact {:?} of {} bytes for a {}-byte log",
                    self.artifact_id,
                    self.artifact_size,
                    self.log.len()
                )
            },
        )?;
        ensure(self.text.len() * 10 < self.log.len(), || {
            format!(
                "the model read {} bytes of a {}-byte log",
                self.text.len(),
                self.log.len()
            )
        })?;
        ensure(
            self.stored == self.log.as_bytes() && self.paged == self.log && self.pages > 1,
            || {
                format!(
                    "the artifact differs from the build log (store {} bytes, {} pages {} bytes)",
                    self.stored.len(),
                    self.pages,
                    self.paged.len()
                )
            },
        )
    }
}

async fn call(
    runtime: &ToolRuntime,
    session: &Session,
    call: ToolCall,
) -> Result<ToolResult, BoxError> {
    let exec = runtime
        .run(vec![call], session, CancellationToken::new())
        .await?;
    Ok(exec.results.into_iter().next().ok_or("no result")?)
}

/// Runs the experiment.
pub async fn run(lab: &Lab, out: &mut dyn Write) -> Result<Report, BoxError> {
    lab::header(
        out,
        8,
        "artifact",
        "build_project prints a ~100 KB log (and keeps a copy in build.log); the model reads only what the formatter chose, then pages through the artifact with read_artifact.",
    )?;
    let scratch = Scratch::new("exp8")?;
    let runtime = lab::builder(scratch.root(), &lab.shim)?.build()?;
    let session = Session::new("exp8", "interactive");

    writeln!(out, "model -> b1 build_project({{\"modules\": {MODULES}}})")?;
    let r = call(
        &runtime,
        &session,
        ToolCall::new("b1", "build_project", json!({"modules": MODULES})),
    )
    .await?;
    lab::model_sees(out, &r)?;
    let log = scratch.read("build.log")?;
    let artifact = r.artifacts().first();
    let artifact_id = artifact.map(|a| a.id.clone());
    let artifact_size = artifact.map_or(0, |a| a.size);
    let text = r.projection().text.clone();
    writeln!(
        out,
        "sizes: build log {} bytes ({} lines); what the model read {} bytes ({:.1}%)",
        log.len(),
        log.lines().count(),
        text.len(),
        100.0 * text.len() as f64 / log.len().max(1) as f64
    )?;

    let store = ArtifactStore::new(&lab::state_of(scratch.root()));
    let Some(id) = artifact_id.clone() else {
        lab::shows(out, "(no artifact was kept)")?;
        return Ok(Report {
            status: r.status(),
            log,
            artifact_id,
            artifact_size,
            text,
            stored: Vec::new(),
            paged: String::new(),
            pages: 0,
        });
    };
    let stored = store.get(&id)?;
    writeln!(
        out,
        "artifact {id}: {artifact_size} bytes in {}",
        store.root().display()
    )?;

    // What a model does next: look at the end of the log (one call), then, to show nothing
    // was lost, read the whole thing back in pages.
    let tail = ToolCall::new(
        "r1",
        "read_artifact",
        json!({"artifact_id": id, "start_line": MODULES - 1, "end_line": MODULES + 1}),
    );
    writeln!(
        out,
        "model -> r1 read_artifact(artifact_id, start_line {}, end_line {})",
        MODULES - 1,
        MODULES + 1
    )?;
    let r1 = call(&runtime, &session, tail).await?;
    lab::model_sees(out, &r1)?;

    let mut paged = String::new();
    let mut pages = 0;
    let mut offset = 0;
    while offset < artifact_size {
        let page = ToolCall::new(
            format!("page{pages}"),
            "read_artifact",
            json!({"artifact_id": id, "offset": offset, "length": PAGE}),
        );
        let r = call(&runtime, &session, page).await?;
        let text = r
            .structured()
            .and_then(|s| s["text"].as_str())
            .ok_or_else(|| format!("read_artifact page {pages}: {}", r.summary()))?;
        paged.push_str(text);
        pages += 1;
        offset += PAGE;
    }
    writeln!(
        out,
        "read back through read_artifact in {pages} pages of {PAGE} bytes: {} bytes, {} the build log",
        paged.len(),
        if paged == log {
            "equal to"
        } else {
            "DIFFERENT from"
        }
    )?;
    writeln!(
        out,
        "read from the store: {} bytes, {} the build log",
        stored.len(),
        if stored == log.as_bytes() {
            "equal to"
        } else {
            "DIFFERENT from"
        }
    )?;
    lab::shows(
        out,
        "a large output costs the context a summary, the head and tail and an artifact reference; the full log stays retrievable, byte for byte.",
    )?;
    Ok(Report {
        status: r.status(),
        log,
        artifact_id,
        artifact_size,
        text,
        stored,
        paged,
        pages,
    })
}
