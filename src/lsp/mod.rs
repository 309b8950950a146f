//! `toolgate lsp`: a language server over stdio.
//!
//! Built on rust-analyzer's `lsp-server` (a synchronous message loop over stdin/stdout) and
//! `lsp-types`, rather than `tower-lsp-server`: every request is answered from one in-memory state
//! by one thread, so an async runtime, `tower` services and shared-state locking would add
//! dependencies and indirection without a request that needs them. Editors get, for tool specs and
//! toolgate.yaml:
//!
//! - diagnostics as the user types: the open documents' text linted with the rest of the
//!   project from disk, so codes, spans and messages are `toolgate lint`'s ([`analysis`]);
//! - hover: a rule code's `explain` text, a key's documentation from the spec format's JSON
//!   Schema ([`hover`]);
//! - completion of keys and fixed values from that schema at the cursor's YAML path
//!   ([`completion`], [`yaml_path`], [`schema`]);
//! - code actions: suppress a finding with a reason ([`code_action`]).
//!
//! The loop handles one message at a time. A lint of the project follows a change, after every
//! message already waiting has been taken (a burst of keystrokes costs one lint), and always
//! before a request is answered.

pub mod analysis;
pub mod code_action;
pub mod completion;
pub mod diagnostics;
pub mod hover;
pub mod position;
pub mod schema;
pub mod yaml_path;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    LogMessage, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{CodeActionRequest, Completion, HoverRequest, Request as _};
use lsp_types::{
    CodeActionOptions, CodeActionProviderCapability, CompletionOptions, HoverProviderCapability,
    InitializeParams, LogMessageParams, MessageType, PublishDiagnosticsParams, SaveOptions,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, Uri,
};

use crate::lsp::analysis::{Analysis, Overlays};
use crate::lsp::schema::Schema;
use crate::spec::load::PROJECT_FILE;
use crate::spec::source::SourceFile;

/// Why the server stopped other than by the editor's `shutdown` and `exit`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LspError {
    /// The editor broke the protocol (for example, no `initialize` first).
    #[error("LSP protocol error: {0}")]
    Protocol(#[from] lsp_server::ProtocolError),
    /// The connection to the editor closed while a message was being sent.
    #[error("the editor closed the connection")]
    Disconnected,
    /// Reading stdin or writing stdout failed.
    #[error("cannot read from or write to the editor: {0}")]
    Io(#[from] std::io::Error),
    /// A message could not be encoded.
    #[error("cannot encode a message: {0}")]
    Json(#[from] serde_json::Error),
}

/// Serves the editor on stdin/stdout until it sends `shutdown` and `exit`.
pub fn run() -> Result<(), LspError> {
    let (connection, io_threads) = Connection::stdio();
    let params = connection.initialize(serde_json::to_value(capabilities())?)?;
    let params: InitializeParams = serde_json::from_value(params)?;
    let mut server = Server {
        connection,
        documents: HashMap::new(),
        analyses: HashMap::new(),
        workspace_folders: workspace_folders(&params),
        spec_schema: Schema::spec(),
        project_schema: Schema::project(),
    };
    server.serve()?;
    drop(server);
    io_threads.join()?;
    Ok(())
}

/// What this server offers.
fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        // The whole text on every change: spec files are small.
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..Default::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![":".into(), " ".into(), "{".into(), ",".into()]),
            ..Default::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![lsp_types::CodeActionKind::QUICKFIX]),
            ..Default::default()
        })),
        ..Default::default()
    }
}

/// An open document.
struct Document {
    path: PathBuf,
    text: String,
    version: i32,
}

struct Server {
    connection: Connection,
    documents: HashMap<Uri, Document>,
    /// The last lint of each project with an open document, by project folder.
    analyses: HashMap<PathBuf, Analysis>,
    workspace_folders: Vec<PathBuf>,
    spec_schema: Schema,
    project_schema: Schema,
}

impl Server {
    fn serve(&mut self) -> Result<(), LspError> {
        // Documents changed since the last lint. Messages already waiting are taken before
        // linting, so a burst of keystrokes costs one lint; a request always sees every change
        // before it.
        let mut changed: Vec<PathBuf> = Vec::new();
        loop {
            let message = match self.connection.receiver.try_recv() {
                Ok(m) => m,
                Err(_) => {
                    self.relint(&mut changed)?;
                    match self.connection.receiver.recv() {
                        Ok(m) => m,
                        Err(_) => return Ok(()), // the editor went away
                    }
                }
            };
            match message {
                Message::Request(req) => {
                    self.relint(&mut changed)?;
                    if self.connection.handle_shutdown(&req)? {
                        return Ok(());
                    }
                    let response = self.request(req);
                    self.send(response.into())?;
                }
                Message::Notification(n) => {
                    if n.method == "exit" {
                        return Ok(());
                    }
                    changed.extend(self.notification(n)?);
                }
                Message::Response(_) => {}
            }
        }
    }

    // --- requests ---------------------------------------------------------------------------

    fn request(&self, req: Request) -> Response {
        let id = req.id.clone();
        let result = match req.method.as_str() {
            HoverRequest::METHOD => {
                serde_json::from_value(req.params).map(|p| serde_json::to_value(self.hover(p)))
            }
            Completion::METHOD => {
                serde_json::from_value(req.params).map(|p| serde_json::to_value(self.completion(p)))
            }
            CodeActionRequest::METHOD => serde_json::from_value(req.params)
                .map(|p| serde_json::to_value(self.code_actions(p))),
            _ => {
                return Response::new_err(
                    id,
                    ErrorCode::MethodNotFound as i32,
                    format!("toolgate lsp does not handle {}", req.method),
                );
            }
        };
        match result {
            Ok(Ok(value)) => Response::new_ok(id, value),
            Ok(Err(e)) | Err(e) => {
                Response::new_err(id, ErrorCode::InvalidParams as i32, e.to_string())
            }
        }
    }

    fn hover(&self, p: lsp_types::HoverParams) -> Option<lsp_types::Hover> {
        let doc_pos = p.text_document_position_params;
        let doc = self.documents.get(&doc_pos.text_document.uri)?;
        let file = SourceFile::new(&doc.path, doc.text.as_str());
        let offset = position::offset(&doc.text, doc_pos.position);
        let findings: Vec<&crate::diagnostic::Diagnostic> = self
            .analysis_of(&doc.path)
            .and_then(|a| {
                let (id, _) = a.source_of(&doc.path)?;
                Some(a.diagnostics_in(id).collect())
            })
            .unwrap_or_default();
        hover::hover(&file, offset, self.schema_for(&doc.path), &findings)
    }

    fn completion(&self, p: lsp_types::CompletionParams) -> Option<lsp_types::CompletionResponse> {
        let doc_pos = p.text_document_position;
        let doc = self.documents.get(&doc_pos.text_document.uri)?;
        let file = SourceFile::new(&doc.path, doc.text.as_str());
        let offset = position::offset(&doc.text, doc_pos.position);
        let items = completion::complete(&file, offset, self.schema_for(&doc.path));
        Some(lsp_types::CompletionResponse::Array(items))
    }

    fn code_actions(&self, p: lsp_types::CodeActionParams) -> Vec<lsp_types::CodeActionOrCommand> {
        let uri = p.text_document.uri;
        let Some(doc) = self.documents.get(&uri) else {
            return Vec::new();
        };
        let Some(analysis) = self.analysis_of(&doc.path) else {
            return Vec::new();
        };
        code_action::code_actions(analysis, &self.overlays(), &doc.path, &uri, p.range)
    }

    // --- notifications: the open documents ----------------------------------------------------

    /// Applies a notification; returns the document it changed, if any.
    fn notification(&mut self, n: Notification) -> Result<Option<PathBuf>, LspError> {
        let changed = match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let p: lsp_types::DidOpenTextDocumentParams = serde_json::from_value(n.params)?;
                let Some(path) = file_path(&p.text_document.uri) else {
                    return Ok(None);
                };
                let doc = Document {
                    path: path.clone(),
                    text: p.text_document.text,
                    version: p.text_document.version,
                };
                self.documents.insert(p.text_document.uri, doc);
                path
            }
            DidChangeTextDocument::METHOD => {
                let p: lsp_types::DidChangeTextDocumentParams = serde_json::from_value(n.params)?;
                let Some(doc) = self.documents.get_mut(&p.text_document.uri) else {
                    return Ok(None);
                };
                // Full sync: the last change holds the whole text.
                if let Some(change) = p.content_changes.into_iter().last() {
                    doc.text = change.text;
                }
                doc.version = p.text_document.version;
                doc.path.clone()
            }
            DidSaveTextDocument::METHOD => {
                let p: lsp_types::DidSaveTextDocumentParams = serde_json::from_value(n.params)?;
                match self.documents.get(&p.text_document.uri) {
                    Some(doc) => doc.path.clone(),
                    None => return Ok(None),
                }
            }
            DidCloseTextDocument::METHOD => {
                let p: lsp_types::DidCloseTextDocumentParams = serde_json::from_value(n.params)?;
                let Some(doc) = self.documents.remove(&p.text_document.uri) else {
                    return Ok(None);
                };
                self.publish(p.text_document.uri, Vec::new(), None)?;
                doc.path
            }
            _ => return Ok(None),
        };
        Ok(Some(changed))
    }

    /// Lints the projects of the changed documents again (each once) and publishes the findings
    /// of every open document in them (a change to one file can add or remove findings in
    /// another).
    fn relint(&mut self, changed: &mut Vec<PathBuf>) -> Result<(), LspError> {
        let mut roots: Vec<PathBuf> = changed
            .drain(..)
            .map(|path| analysis::project_root(&path, &self.workspace_folders))
            .collect();
        roots.sort();
        roots.dedup();
        for root in roots {
            self.relint_project(root)?;
        }
        Ok(())
    }

    fn relint_project(&mut self, root: PathBuf) -> Result<(), LspError> {
        let analysis = match Analysis::run(&root, &self.overlays()) {
            Ok(a) => a,
            Err(e) => {
                self.analyses.remove(&root);
                return self.log(format!(
                    "toolgate: cannot load the project in {}: {e}",
                    root.display()
                ));
            }
        };
        let mut publish = Vec::new();
        for (uri, doc) in &self.documents {
            if analysis::project_root(&doc.path, &self.workspace_folders) != root {
                continue;
            }
            let diagnostics = match analysis.source_of(&doc.path) {
                Some((id, file)) => analysis
                    .diagnostics_in(id)
                    .map(|d| diagnostics::to_lsp(d, file, uri))
                    .collect(),
                None => Vec::new(), // not one of the project's specs
            };
            publish.push((uri.clone(), diagnostics, doc.version));
        }
        self.analyses.insert(root, analysis);
        for (uri, diagnostics, version) in publish {
            self.publish(uri, diagnostics, Some(version))?;
        }
        Ok(())
    }

    // --- helpers ----------------------------------------------------------------------------

    fn overlays(&self) -> Overlays {
        self.documents
            .values()
            .map(|d| (d.path.clone(), d.text.clone()))
            .collect()
    }

    fn analysis_of(&self, path: &Path) -> Option<&Analysis> {
        self.analyses
            .get(&analysis::project_root(path, &self.workspace_folders))
    }

    /// toolgate.yaml's schema for the project file, the spec schema for everything else.
    fn schema_for(&self, path: &Path) -> &Schema {
        if path.file_name().is_some_and(|n| n == PROJECT_FILE) {
            &self.project_schema
        } else {
            &self.spec_schema
        }
    }

    fn publish(
        &self,
        uri: Uri,
        diagnostics: Vec<lsp_types::Diagnostic>,
        version: Option<i32>,
    ) -> Result<(), LspError> {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(Notification::new(PublishDiagnostics::METHOD.to_owned(), params).into())
    }

    fn log(&self, message: String) -> Result<(), LspError> {
        let params = LogMessageParams {
            typ: MessageType::WARNING,
            message,
        };
        self.send(Notification::new(LogMessage::METHOD.to_owned(), params).into())
    }

    fn send(&self, message: Message) -> Result<(), LspError> {
        self.connection
            .sender
            .send(message)
            .map_err(|_| LspError::Disconnected)
    }
}

/// The workspace folders the editor opened (the deprecated `rootUri` when it sends no list).
fn workspace_folders(params: &InitializeParams) -> Vec<PathBuf> {
    match &params.workspace_folders {
        Some(folders) => folders.iter().filter_map(|f| file_path(&f.uri)).collect(),
        #[allow(deprecated)]
        None => params.root_uri.iter().filter_map(file_path).collect(),
    }
}

/// The local path of a `file:` URI.
fn file_path(uri: &Uri) -> Option<PathBuf> {
    if !uri.scheme()?.as_str().eq_ignore_ascii_case("file") {
        return None;
    }
    let path = uri.path().as_estr().decode().into_string().ok()?;
    Some(PathBuf::from(path.into_owned()))
}
