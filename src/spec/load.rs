//! Finding and reading spec files and `toolgate.yaml`.
//!
//! Discovery: `--config FILE`, else `toolgate.yaml` in the current folder, else built-in
//! defaults with the current folder as project root. Spec files: the paths given on the command
//! line (files, folders or globs), else the project's `specs` globs (default
//! `tool-specs/**/*.yaml`). A file that cannot be read or parsed becomes a located load error;
//! the other files still load, so one bad file does not hide the rest.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSetBuilder};
use rayon::prelude::*;

use crate::diagnostic::{Diagnostic, Severity};
use crate::policy::spec_reach::{GlobRefusal, SpecReach};
use crate::spec::ast::ToolSpec;
use crate::spec::project_file::ProjectFile;
use crate::spec::source::{SourceId, SourceMap, Span, TextRange};
use crate::spec::yaml::{self, Spanned, YamlError};

/// The project file name looked for in the current folder.
pub const PROJECT_FILE: &str = "toolgate.yaml";
/// The spec glob used when toolgate.yaml names none.
pub const DEFAULT_SPEC_GLOB: &str = "tool-specs/**/*.{yaml,yml}";
/// Folder recursion limit when expanding globs.
const MAX_WALK_DEPTH: usize = 32;

/// The tools of one file, or why it could not be read as a spec.
type ParsedFile = Result<Vec<Spanned<ToolSpec>>, Vec<Diagnostic>>;

/// Where to load from.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Spec paths, folders or globs; empty means "the project's specs".
    pub paths: Vec<PathBuf>,
    /// An explicit project file.
    pub config: Option<PathBuf>,
    /// The folder relative paths are taken from.
    pub cwd: PathBuf,
}

/// One spec file's tools.
#[derive(Debug)]
pub struct SpecFile {
    /// The file.
    pub source: SourceId,
    /// Its tools, in file order.
    pub tools: Vec<Spanned<ToolSpec>>,
    /// For an imported tool list: what each tool carried beside its schema (same order).
    pub imported: Vec<crate::spec::import::ImportedTool>,
}

/// Everything loaded for one run.
#[derive(Debug)]
pub struct LoadedSpecs {
    /// Every file read (spec files and the project file).
    pub sources: SourceMap,
    /// The project folder (where toolgate.yaml is, or the current folder).
    pub root: PathBuf,
    /// The project file, when there is one.
    pub project: Option<(SourceId, ProjectFile)>,
    /// Spec files that parsed.
    pub files: Vec<SpecFile>,
    /// Load errors: files that could not be read or parsed.
    pub errors: Vec<Diagnostic>,
    /// Set when the files are imported tool lists rather than specs.
    pub import: Option<crate::spec::import::ImportFormat>,
}

/// A problem that stops loading altogether (usage errors).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The project file named by `--config` does not exist or cannot be read.
    #[error("cannot read project file {path}: {source}")]
    Config {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A spec path given on the command line does not exist and is not a glob.
    #[error("no such file or folder: {0}")]
    MissingPath(PathBuf),
    /// A glob is malformed.
    #[error("invalid glob `{pattern}`: {message}")]
    Glob {
        /// The pattern.
        pattern: String,
        /// Why.
        message: String,
    },
}

impl LoadedSpecs {
    /// Whether any file failed to load.
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Number of tools loaded.
    pub fn tool_count(&self) -> usize {
        self.files.iter().map(|f| f.tools.len()).sum()
    }

    /// An empty set with sources only (for imported tool lists).
    pub fn empty(root: PathBuf) -> Self {
        LoadedSpecs {
            sources: SourceMap::new(),
            root,
            project: None,
            files: Vec::new(),
            errors: Vec::new(),
            import: None,
        }
    }
}

/// Loads the project file and spec files.
pub fn load(opts: &LoadOptions) -> Result<LoadedSpecs, LoadError> {
    let mut sources = SourceMap::new();
    let mut errors = Vec::new();
    let cwd = if opts.cwd.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        opts.cwd.clone()
    };

    let (root, project_path) = match &opts.config {
        Some(p) => {
            let p = if p.is_absolute() {
                p.clone()
            } else {
                cwd.join(p)
            };
            if !p.is_file() {
                return Err(LoadError::Config {
                    path: p,
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "not found"),
                });
            }
            let root = p
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| cwd.clone());
            (root, Some(p))
        }
        None => {
            let p = cwd.join(PROJECT_FILE);
            (cwd.clone(), p.is_file().then_some(p))
        }
    };

    let mut project = None;
    if let Some(path) = project_path {
        let display = display_path(&path, &cwd);
        match read_source(&mut sources, &path, display) {
            Ok(id) => match parse_in::<ProjectFile>(&sources, id) {
                Ok(p) => project = Some((id, p)),
                Err(e) => errors.push(e),
            },
            Err(e) => errors.push(e),
        }
    }

    let files_to_read = if opts.paths.is_empty() {
        let reach = SpecReach::new(&root);
        match project.as_ref() {
            Some((id, p)) => match p.specs.as_ref() {
                Some(specs) => {
                    let globs = inside_globs(*id, &reach, &specs.value, &mut errors);
                    let at = globs
                        .iter()
                        .map(|g| (g.value.as_str(), Some(g.range.in_file(*id))));
                    inside_files(&reach, &root, at, &mut sources, &cwd, &mut errors)?
                }
                // The default glob has no entry: a file it reaches outside is reported at the
                // start of toolgate.yaml.
                None => {
                    let at = Some(file_start().in_file(*id));
                    let globs = std::iter::once((DEFAULT_SPEC_GLOB, at));
                    inside_files(&reach, &root, globs, &mut sources, &cwd, &mut errors)?
                }
            },
            None => {
                let globs = std::iter::once((DEFAULT_SPEC_GLOB, None));
                inside_files(&reach, &root, globs, &mut sources, &cwd, &mut errors)?
            }
        }
    } else {
        let mut out = Vec::new();
        for p in &opts.paths {
            let full = if p.is_absolute() {
                p.clone()
            } else {
                cwd.join(p)
            };
            if full.is_file() {
                out.push(full);
            } else if full.is_dir() {
                // A folder's own project files (this project's, or a nested one's) are not
                // tool specs; naming such a file explicitly still reads it as one.
                out.extend(expand_globs(&full, &["**/*.{yaml,yml}".to_owned()])?);
            } else if p.to_string_lossy().contains(['*', '?', '[', '{']) {
                out.extend(expand_globs(&cwd, &[p.to_string_lossy().into_owned()])?);
            } else {
                return Err(LoadError::MissingPath(p.clone()));
            }
        }
        out
    };

    let mut files = Vec::new();
    let mut read = Vec::new();
    let project_source = project.as_ref().map(|(id, _)| *id);
    for path in dedup(files_to_read) {
        if project_source.is_some_and(|id| {
            sources
                .get(id)
                .is_some_and(|f| same_file(&f.path, &path, &cwd))
        }) {
            continue;
        }
        let display = display_path(&path, &cwd);
        match read_source(&mut sources, &path, display) {
            Ok(id) => read.push(id),
            Err(e) => errors.push(e),
        }
    }
    // Files parse independently: in parallel, results in file order.
    let parsed: Vec<(SourceId, ParsedFile)> = read
        .par_iter()
        .map(|id| (*id, parse_spec_source(&sources, *id)))
        .collect();
    for (id, result) in parsed {
        match result {
            Ok(tools) => files.push(SpecFile {
                source: id,
                tools,
                imported: Vec::new(),
            }),
            Err(mut e) => errors.append(&mut e),
        }
    }

    Ok(LoadedSpecs {
        sources,
        root,
        project,
        files,
        errors,
        import: None,
    })
}

/// The `specs:` globs that stay inside the project ([`SpecReach`]); each refused one (absolute,
/// or climbing out with `..`) gets an error at its entry and is not expanded.
fn inside_globs<'g>(
    project: SourceId,
    reach: &SpecReach,
    globs: &'g [Spanned<String>],
    errors: &mut Vec<Diagnostic>,
) -> Vec<&'g Spanned<String>> {
    let mut kept = Vec::new();
    for g in globs {
        let what = match reach.check_glob(&g.value) {
            Ok(()) => {
                kept.push(g);
                continue;
            }
            Err(GlobRefusal::Absolute) => "is absolute".to_owned(),
            Err(GlobRefusal::ClimbsOut) => {
                format!("climbs out of `{}` with `..`", reach.boundary().display())
            }
        };
        errors.push(
            Diagnostic::new(
                None,
                Severity::Error,
                g.range.in_file(project),
                format!(
                    "the `specs` glob `{}` {what}: it would read files outside the project",
                    g.value
                ),
            )
            .with_help(
                "write globs relative to the folder of toolgate.yaml (e.g. \
                 `tool-specs/**/*.yaml`); `..` may reach only folders of the same \
                 repository, and never after a wildcard",
            ),
        );
    }
    kept
}

/// The files the kept `specs:` globs match that resolve inside the project; a file that a
/// symbolic link leads outside gets an error at the entry of the glob that matched it (each
/// glob comes with where it is written; one written nowhere, at the file itself), and is not
/// read.
fn inside_files<'g>(
    reach: &SpecReach,
    root: &Path,
    globs: impl IntoIterator<Item = (&'g str, Option<Span>)>,
    sources: &mut SourceMap,
    cwd: &Path,
    errors: &mut Vec<Diagnostic>,
) -> Result<Vec<PathBuf>, LoadError> {
    let mut out = Vec::new();
    for (glob, at) in globs {
        for file in expand_globs(root, &[glob.to_owned()])? {
            match reach.check_file(&file) {
                Ok(()) => out.push(file),
                Err(real) => errors.push(
                    Diagnostic::new(
                        None,
                        Severity::Error,
                        at.unwrap_or_else(|| {
                            let id = sources.add(display_path(&file, cwd), "");
                            Span::new(id, 0, 0)
                        }),
                        format!(
                            "the file `{}` the `specs` glob `{}` matches resolves outside the \
                             project, to `{}`: it is not read",
                            file.strip_prefix(root).unwrap_or(&file).display(),
                            glob,
                            real.display()
                        ),
                    )
                    .with_help(format!(
                        "a spec must be a file under `{}`: copy it in instead of linking to it",
                        reach.boundary().display()
                    )),
                ),
            }
        }
    }
    Ok(out)
}

/// Whether a file is named like a project file (`toolgate.yaml` or `toolgate.yml`).
fn is_project_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n == PROJECT_FILE || n == "toolgate.yml")
}

fn same_file(a: &Path, b: &Path, cwd: &Path) -> bool {
    let a = std::fs::canonicalize(cwd.join(a)).ok();
    let b = std::fs::canonicalize(b).ok();
    a.is_some() && a == b
}

fn dedup(mut paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    paths
}

fn display_path(path: &Path, cwd: &Path) -> PathBuf {
    path.strip_prefix(cwd)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Reads a file into the source map, refusing oversized files and invalid UTF-8 with a located
/// error.
pub fn read_source(
    sources: &mut SourceMap,
    path: &Path,
    display: PathBuf,
) -> Result<SourceId, Diagnostic> {
    let io_err = |sources: &mut SourceMap, msg: String| {
        let id = sources.add(display.clone(), "");
        Diagnostic::new(None, Severity::Error, Span::new(id, 0, 0), msg)
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            return Err(io_err(
                sources,
                format!("cannot read {}: {e}", display.display()),
            ));
        }
    };
    if meta.len() > yaml::MAX_FILE_BYTES as u64 {
        return Err(io_err(
            sources,
            format!(
                "{} is {} bytes; toolgate reads spec files of at most {} bytes",
                display.display(),
                meta.len(),
                yaml::MAX_FILE_BYTES
            ),
        )
        .with_help("split the file: one tool per file, or several files matched by a glob"));
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            return Err(io_err(
                sources,
                format!("cannot read {}: {e}", display.display()),
            ));
        }
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(sources.add(display, text)),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            // Offsets in the lossy text equal the original up to the first bad byte.
            let id = sources.add(display, lossy);
            Err(Diagnostic::new(
                None,
                Severity::Error,
                Span::new(id, valid, 1),
                "file is not valid UTF-8",
            )
            .with_help("save the file as UTF-8"))
        }
    }
}

/// Parses a loaded file as `T`, turning a YAML error into a located diagnostic.
pub fn parse_in<T: serde::de::DeserializeOwned>(
    sources: &SourceMap,
    id: SourceId,
) -> Result<T, Diagnostic> {
    let Some(file) = sources.get(id) else {
        return Err(Diagnostic::new(
            None,
            Severity::Error,
            Span::default(),
            "internal: unknown source",
        ));
    };
    yaml::parse::<T>(&file.text, |l, c| file.offset_of(l, c)).map_err(|e| yaml_diagnostic(id, e))
}

fn yaml_diagnostic(id: SourceId, e: YamlError) -> Diagnostic {
    Diagnostic::new(None, Severity::Error, e.range.in_file(id), e.message).with_help_opt(e.help)
}

/// Parses a spec file: one tool, or `tools: [...]`.
pub fn parse_spec_source(
    sources: &SourceMap,
    id: SourceId,
) -> Result<Vec<Spanned<ToolSpec>>, Vec<Diagnostic>> {
    let Some(file) = sources.get(id) else {
        return Err(Vec::new());
    };
    let has_content = file
        .text
        .lines()
        .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#') && l.trim() != "---");
    if !has_content {
        return Err(vec![Diagnostic::new(None, Severity::Error, Span::new(id, 0, 0), "file holds no tool")
            .with_help("write a tool contract (`name`, `description`, `effect`, `parameters`, `exec`, ...) or remove the file")]);
    }
    let doc: Spanned<ToolSpec> = parse_in(sources, id).map_err(|e| vec![e])?;
    let Some(list) = &doc.value.tools else {
        return Ok(vec![doc]);
    };
    let mut errors = Vec::new();
    if doc.value.has_tool_keys() {
        errors.push(
            Diagnostic::new(
                None,
                Severity::Error,
                list.range.in_file(id),
                "a file with `tools:` may not set other keys beside it",
            )
            .with_help("move the other keys into one of the tools, or give the tool its own file"),
        );
    }
    for t in &list.value {
        if let Some(nested) = &t.value.tools {
            errors.push(Diagnostic::new(
                None,
                Severity::Error,
                nested.range.in_file(id),
                "`tools:` cannot be nested inside a tool",
            ));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let Some(tools) = doc.value.tools else {
        return Ok(Vec::new());
    };
    Ok(tools.value)
}

impl ToolSpec {
    /// Whether any tool key (anything but `tools`) is set.
    pub fn has_tool_keys(&self) -> bool {
        self.name.is_some()
            || self.version.is_some()
            || self.title.is_some()
            || self.aliases.is_some()
            || self.deprecated.is_some()
            || self.description.is_some()
            || self.effect.is_some()
            || self.idempotency.is_some()
            || self.parameters.is_some()
            || self.result.is_some()
            || self.validate.is_some()
            || self.permissions.is_some()
            || self.resources.is_some()
            || self.concurrency_group.is_some()
            || self.timeout.is_some()
            || self.retry.is_some()
            || self.output.is_some()
            || self.errors.is_some()
            || self.sandbox.is_some()
            || self.exec.is_some()
    }
}

/// Expands globs relative to `base` into sorted file paths. `*` matches within one folder and
/// `**` across folders; brace alternatives are supported (`*.{yaml,yml}`); files named like a
/// project file are skipped unless named literally. The walk starts at each glob's literal
/// prefix and never follows symlinks.
pub fn expand_globs(base: &Path, globs: &[String]) -> Result<Vec<PathBuf>, LoadError> {
    let mut out = Vec::new();
    for pattern in globs {
        // As in a shell, `*` stays within one folder; `**` crosses folders.
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| LoadError::Glob {
                pattern: pattern.clone(),
                message: e.kind().to_string(),
            })?;
        let mut set = GlobSetBuilder::new();
        set.add(glob);
        let set = set.build().map_err(|e| LoadError::Glob {
            pattern: pattern.clone(),
            message: e.to_string(),
        })?;
        let prefix: PathBuf = Path::new(pattern)
            .components()
            .take_while(|c| {
                !c.as_os_str()
                    .to_string_lossy()
                    .contains(['*', '?', '[', '{'])
            })
            .collect();
        let start = base.join(&prefix);
        if start.is_file() {
            out.push(start);
            continue;
        }
        walk(&start, 0, &mut |p: &Path| {
            // A project file a pattern happens to match (a nested project's) is not a spec.
            if let Ok(rel) = p.strip_prefix(base)
                && set.is_match(rel)
                && !is_project_file(p)
            {
                out.push(p.to_path_buf());
            }
        });
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(dir: &Path, depth: usize, f: &mut dyn FnMut(&Path)) {
    if depth > MAX_WALK_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let Ok(ft) = e.file_type() else { continue };
        let path = e.path();
        if ft.is_dir() {
            walk(&path, depth + 1, f);
        } else if ft.is_file() {
            f(&path);
        }
    }
}

/// Loads spec text that is not on disk (tests, benchmarks, imported lists).
pub fn load_text(
    sources: &mut SourceMap,
    path: impl Into<PathBuf>,
    text: &str,
) -> (SourceId, Result<Vec<Spanned<ToolSpec>>, Vec<Diagnostic>>) {
    let id = sources.add(path, text);
    let r = parse_spec_source(sources, id);
    (id, r)
}

/// Loads specs given as text (tests, benchmarks, editors): `files` are (path, text) pairs,
/// `project` the text of a toolgate.yaml.
pub fn load_texts(files: &[(PathBuf, String)], project: Option<&str>) -> LoadedSpecs {
    let mut loaded = LoadedSpecs::empty(PathBuf::from("."));
    if let Some(text) = project {
        let id = loaded.sources.add(PROJECT_FILE, text);
        match parse_in(&loaded.sources, id) {
            Ok(p) => loaded.project = Some((id, p)),
            Err(e) => loaded.errors.push(e),
        }
    }
    for (path, text) in files {
        let (id, parsed) = load_text(&mut loaded.sources, path.clone(), text);
        match parsed {
            Ok(tools) => loaded.files.push(SpecFile {
                source: id,
                tools,
                imported: Vec::new(),
            }),
            Err(mut e) => loaded.errors.append(&mut e),
        }
    }
    loaded
}

/// A zero-length range at the start of a file (for file-level diagnostics).
pub fn file_start() -> TextRange {
    TextRange::new(0, 0)
}

#[cfg(test)]
mod tests;
