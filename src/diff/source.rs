//! The two sides of a diff: the working tree (the specs as `lint` finds them), a folder, a
//! `bundle.json`, or a git revision — read from git objects with the `git` command line
//! (`git ls-tree` for the file list, one `git cat-file --batch` for every file), without a
//! checkout. Each side is loaded and resolved exactly as `lint` and `build` do (lint rules are
//! not run: `toolgate lint` reports them).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

use globset::{GlobBuilder, GlobSetBuilder};

use crate::diagnostic::Severity;
use crate::ir::Bundle;
use crate::lint::LintSettings;
use crate::spec::ast::ToolSpec;
use crate::spec::load::{self, DEFAULT_SPEC_GLOB, LoadOptions, LoadedSpecs, PROJECT_FILE};
use crate::spec::project_file::ProjectFile;
use crate::spec::resolve::{self, ResolveOptions};

/// One version of the contracts, with where each tool is written (for annotations).
pub struct Side {
    /// What it resolved to.
    pub bundle: Bundle,
    /// Per tool: the spec file (as displayed) and the line of its name.
    pub locations: HashMap<String, (String, usize)>,
    /// How it was read, for the report (`HEAD`, `specs/`, `bundle.json`).
    pub label: String,
}

/// A side that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// Loading failed before any spec was read.
    #[error(transparent)]
    Load(#[from] load::LoadError),
    /// Some spec does not load or resolve.
    #[error("{label}: {count} error(s) in the specs, the first: {first}")]
    Invalid {
        /// Which side.
        label: String,
        /// How many errors.
        count: usize,
        /// The first, located.
        first: String,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// git failed or is missing.
    #[error("git {args}: {message}")]
    Git {
        /// The command's arguments.
        args: String,
        /// Its error output.
        message: String,
    },
}

/// Reads the specs as `lint` finds them (`opts`), labelled `label`.
pub fn from_specs(opts: &LoadOptions, label: &str) -> Result<Side, SourceError> {
    finish(load::load(opts)?, label)
}

/// Reads a `bundle.json` written by `toolgate build`.
pub fn from_bundle(path: &Path) -> Result<Side, SourceError> {
    let text = std::fs::read_to_string(path).map_err(|e| SourceError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let bundle = Bundle::from_json(&text).map_err(|e| SourceError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(Side {
        bundle,
        locations: HashMap::new(),
        label: path.display().to_string(),
    })
}

/// Reads the specs at a git revision: the same project file and spec selection as `opts`
/// names in the working tree, taken from the revision's tree.
pub fn from_git(rev: &str, opts: &LoadOptions) -> Result<Side, SourceError> {
    let cwd = absolute(&opts.cwd);
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let config = opts.config.as_ref().map(|c| cwd.join(c));
    let project_dir = config
        .as_ref()
        .and_then(|c| c.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| cwd.clone());
    let project_name = config
        .as_ref()
        .and_then(|c| c.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| PROJECT_FILE.to_owned());
    let top = PathBuf::from(git(&project_dir, &["rev-parse", "--show-toplevel"])?.trim());
    let top = std::fs::canonicalize(&top).unwrap_or(top);
    let project_dir = std::fs::canonicalize(&project_dir).unwrap_or(project_dir);
    let prefix = project_dir
        .strip_prefix(&top)
        .unwrap_or(Path::new(""))
        .to_path_buf();
    git(
        &top,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map_err(|_| SourceError::Git {
        args: format!("rev-parse {rev}"),
        message: format!(
            "`{rev}` is not a revision of the repository at {}",
            top.display()
        ),
    })?;
    let listing = git(&top, &["ls-tree", "-r", "-z", "--name-only", rev])?;
    let repo_paths: Vec<&str> = listing.split('\0').filter(|p| !p.is_empty()).collect();

    let project_repo_path = slash(&prefix.join(&project_name));
    let project_text = if repo_paths.contains(&project_repo_path.as_str()) {
        read_blobs(&top, rev, &[project_repo_path])?.pop()
    } else {
        None
    };
    let mut loaded = LoadedSpecs::empty(project_dir.clone());
    if let Some(text) = &project_text {
        let id = loaded.sources.add(PROJECT_FILE, text.as_str());
        match load::parse_in::<ProjectFile>(&loaded.sources, id) {
            Ok(p) => loaded.project = Some((id, p)),
            Err(e) => loaded.errors.push(e),
        }
    }
    // Which files: the paths given (relative to the working folder), else the project's globs.
    let patterns: Vec<(String, bool)> = if opts.paths.is_empty() {
        loaded
            .project
            .as_ref()
            .and_then(|(_, p)| p.specs.as_ref())
            .map(|s| s.value.iter().map(|g| (g.value.clone(), false)).collect())
            .unwrap_or_else(|| vec![(DEFAULT_SPEC_GLOB.to_owned(), false)])
    } else {
        opts.paths
            .iter()
            .map(|p| {
                let rel = relative(&project_dir, &cwd.join(p));
                let text = slash(&rel);
                let listed = repo_paths.contains(&slash(&prefix.join(&rel)).as_str());
                if p.to_string_lossy().contains(['*', '?', '[', '{']) {
                    (text, false)
                } else if listed {
                    (text, true)
                } else {
                    (
                        format!("{}/**/*.{{yaml,yml}}", text.trim_end_matches('/')),
                        false,
                    )
                }
            })
            .collect()
    };
    let mut set = GlobSetBuilder::new();
    for (p, _) in &patterns {
        let glob = GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|e| load::LoadError::Glob {
                pattern: p.clone(),
                message: e.kind().to_string(),
            })?;
        set.add(glob);
    }
    let set = set.build().map_err(|e| load::LoadError::Glob {
        pattern: String::new(),
        message: e.to_string(),
    })?;
    let literal: Vec<&str> = patterns
        .iter()
        .filter(|(_, l)| *l)
        .map(|(p, _)| p.as_str())
        .collect();
    let mut wanted = Vec::new();
    for path in &repo_paths {
        let rel = slash(&relative(&prefix, Path::new(path)));
        let is_project = rel.ends_with(PROJECT_FILE) || rel.ends_with("toolgate.yml");
        if literal.contains(&rel.as_str()) || (set.is_match(&rel) && !is_project) {
            wanted.push(((*path).to_owned(), rel));
        }
    }
    let texts = read_blobs(
        &top,
        rev,
        &wanted.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(),
    )?;
    for ((_, rel), text) in wanted.into_iter().zip(texts) {
        let (id, parsed) = load::load_text(&mut loaded.sources, PathBuf::from(rel), &text);
        match parsed {
            Ok(tools) => loaded.files.push(load::SpecFile {
                source: id,
                tools,
                imported: Vec::new(),
            }),
            Err(mut e) => loaded.errors.append(&mut e),
        }
    }
    finish(loaded, rev)
}

/// Resolves loaded specs into a side; any load or contract error stops the diff.
fn finish(loaded: LoadedSpecs, label: &str) -> Result<Side, SourceError> {
    let mut extra = Vec::new();
    let settings = LintSettings::from_project(
        loaded.project.as_ref().map(|(id, p)| (*id, p)),
        &[],
        &mut extra,
    );
    let resolution = resolve::resolve(
        &loaded,
        &ResolveOptions {
            cost_budget: settings.options.cel_cost_budget,
        },
    );
    let errors: Vec<_> = loaded
        .errors
        .iter()
        .chain(&resolution.diagnostics)
        .filter(|d| d.severity == Severity::Error)
        .collect();
    if let Some(first) = errors.first() {
        let place = loaded
            .sources
            .get(first.span.source)
            .map(|f| {
                let lc = f.line_column(first.span.start);
                format!("{}:{}:{}: ", f.display_path(), lc.line, lc.column)
            })
            .unwrap_or_default();
        return Err(SourceError::Invalid {
            label: label.to_owned(),
            count: errors.len(),
            first: format!("{place}{}", first.message),
        });
    }
    let mut locations = HashMap::new();
    for t in &resolution.tools {
        let (Some(def), Some(file)) = (&t.definition, loaded.sources.get(t.source)) else {
            continue;
        };
        let spec: Option<&ToolSpec> = loaded
            .files
            .get(t.file)
            .and_then(|f| f.tools.get(t.index))
            .map(|s| &s.value);
        let line = spec
            .and_then(|s| s.name.as_ref())
            .map(|n| file.line_column(n.range.start).line)
            .unwrap_or(1);
        locations.insert(def.name.clone(), (file.display_path(), line));
    }
    Ok(Side {
        bundle: Bundle::new(
            resolution.project.clone(),
            resolution.definitions().cloned().collect(),
        ),
        locations,
        label: label.to_owned(),
    })
}

/// Runs git in `dir` and returns its output.
fn git(dir: &Path, args: &[&str]) -> Result<String, SourceError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| SourceError::Git {
            args: args.join(" "),
            message: format!("cannot run git: {e}"),
        })?;
    if !out.status.success() {
        return Err(SourceError::Git {
            args: args.join(" "),
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    String::from_utf8(out.stdout).map_err(|e| SourceError::Git {
        args: args.join(" "),
        message: e.to_string(),
    })
}

/// Reads blobs `rev:path` with one `git cat-file --batch`.
fn read_blobs(top: &Path, rev: &str, paths: &[String]) -> Result<Vec<String>, SourceError> {
    let failed = |message: String| SourceError::Git {
        args: "cat-file --batch".into(),
        message,
    };
    let mut child = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("cannot run git: {e}")))?;
    let mut request = String::new();
    for p in paths {
        request.push_str(&format!("{rev}:{p}\n"));
    }
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| failed("no stdin".into()))?;
    // Write from another thread: git answers while it reads, and both pipes are bounded.
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let mut raw = Vec::new();
    child
        .stdout
        .take()
        .ok_or_else(|| failed("no stdout".into()))?
        .read_to_end(&mut raw)
        .map_err(|e| failed(e.to_string()))?;
    let _ = writer.join();
    let _ = child.wait();
    let mut out = Vec::with_capacity(paths.len());
    let mut rest = raw.as_slice();
    for p in paths {
        let nl = rest
            .iter()
            .position(|b| *b == b'\n')
            .ok_or_else(|| failed(format!("no answer for {p}")))?;
        let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
        rest = &rest[nl + 1..];
        let size: usize = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .filter(|_| !header.ends_with("missing"))
            .ok_or_else(|| failed(format!("{rev}:{p}: {header}")))?;
        let body = rest
            .get(..size)
            .ok_or_else(|| failed(format!("{rev}:{p} is cut short")))?;
        let text = String::from_utf8(body.to_vec()).map_err(|_| SourceError::Read {
            path: PathBuf::from(format!("{rev}:{p}")),
            message: "not UTF-8".into(),
        })?;
        out.push(text);
        rest = rest.get(size + 1..).unwrap_or(&[]);
    }
    Ok(out)
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// `path` relative to `base`, lexically (with `..` where it lies outside).
fn relative(base: &Path, path: &Path) -> PathBuf {
    let norm = |p: &Path| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in p.components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::Normal(s) => out.push(s.to_string_lossy().into_owned()),
                _ => {}
            }
        }
        out
    };
    let (b, p) = (norm(base), norm(path));
    let common = b.iter().zip(&p).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c);
    }
    out
}

fn slash(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}
