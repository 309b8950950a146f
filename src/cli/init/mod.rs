//! `toolgate init`: a new project in the current folder — toolgate.yaml, a commented example
//! spec, the JSON Schemas for editor completion, a CI workflow, ignore entries, and the build
//! output that the workflow's `build --check` compares.
//!
//! Nothing that exists is overwritten: when any file init would write is there already, it
//! writes nothing and names the files. An existing `.gitignore` gets the missing entries appended.
//!
//! The templates' files are beside this one (`coding/`, `mcp-gateway/`, `http-api/`,
//! `common/`).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::emit::{self, BuildOptions, ListOptions};
use crate::spec::load::LoadOptions;

/// What the new project starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Template {
    /// A coding agent's file tool (the builtin read_file) in a `coding` toolset.
    Coding,
    /// toolgate in front of an upstream MCP server (the reference git server's git_status).
    McpGateway,
    /// A REST API as narrow HTTP tools (GitHub's "get an issue").
    HttpApi,
}

/// Arguments of `toolgate init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project to start.
    #[arg(long, value_enum, default_value = "coding")]
    pub template: Template,
    /// The folder to start it in (default: the current folder; created when missing).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

const GITIGNORE: &str = include_str!("common/gitignore");
const WORKFLOW: &str = include_str!("common/toolgate.yml");

/// The files of a template: (path relative to the project, text).
fn files(template: Template) -> Vec<(&'static str, String)> {
    let mut files: Vec<(&'static str, String)> = match template {
        Template::Coding => vec![
            (
                "toolgate.yaml",
                include_str!("coding/toolgate.yaml").to_owned(),
            ),
            (
                "tool-specs/read_file.yaml",
                include_str!("coding/read_file.yaml").to_owned(),
            ),
        ],
        Template::McpGateway => vec![
            (
                "toolgate.yaml",
                include_str!("mcp-gateway/toolgate.yaml").to_owned(),
            ),
            (
                "tool-specs/git/git_status.yaml",
                include_str!("mcp-gateway/git_status.yaml").to_owned(),
            ),
            (
                "tool-specs/read_artifact.yaml",
                include_str!("mcp-gateway/read_artifact.yaml").to_owned(),
            ),
        ],
        Template::HttpApi => vec![
            (
                "toolgate.yaml",
                include_str!("http-api/toolgate.yaml").to_owned(),
            ),
            (
                "tool-specs/http/get_issue.yaml",
                include_str!("http-api/get_issue.yaml").to_owned(),
            ),
            (
                "tool-specs/read_artifact.yaml",
                include_str!("http-api/read_artifact.yaml").to_owned(),
            ),
        ],
    };
    files.push(("toolgate.schema.json", crate::spec::schema::spec_schema()));
    files.push((
        "toolgate.project.schema.json",
        crate::spec::schema::project_schema(),
    ));
    files.push((".github/workflows/toolgate.yml", WORKFLOW.to_owned()));
    files
}

/// Runs `toolgate init`.
pub fn run(a: InitArgs) -> miette::Result<u8> {
    let cwd = std::env::current_dir()
        .map_err(|e| miette::miette!("cannot read the current folder: {e}"))?;
    let root = match &a.dir {
        Some(d) => cwd.join(d),
        None => cwd,
    };
    let files = files(a.template);
    let existing: Vec<&str> = files
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| root.join(p).symlink_metadata().is_ok())
        .collect();
    if !existing.is_empty() {
        return Err(miette::miette!(
            help = "init only starts new projects; move these away, or run it in an empty folder (--dir NEW)",
            "{} {} already in {}; nothing was written",
            existing.join(", "),
            if existing.len() == 1 {
                "exists"
            } else {
                "exist"
            },
            root.display()
        ));
    }
    for (path, text) in &files {
        write_new(&root.join(path), text)?;
        eprintln!("wrote {path}");
    }
    let added = ignore_entries(&root.join(".gitignore"))?;
    eprintln!(
        "{} .gitignore ({added})",
        if added == "created" {
            "wrote"
        } else {
            "updated"
        }
    );
    let out = build(&root)?;
    eprintln!("wrote {out} (the build output CI's `toolgate build --check` compares)");
    // The person who ran init wrote these files: their policy is trusted as written.
    super::trust::trust_new_project(&root);
    let next = match a.template {
        Template::Coding => {
            "toolgate call read_file --args '{\"path\": \"toolgate.yaml\", \"end_line\": 5}'"
        }
        Template::McpGateway => {
            "toolgate call git_status --args '{\"repo_path\": \".\"}'   # in a git repository, with mcp-server-git installed"
        }
        Template::HttpApi => {
            "toolgate call get_issue --args '{\"owner\": \"rust-lang\", \"repo\": \"rust\", \"issue_number\": 1}'   # needs the network"
        }
    };
    eprintln!(
        "\nNext:\n  toolgate lint\n  {next}\n  toolgate serve          # an MCP server on stdio, serving toolset `{}`",
        match a.template {
            Template::Coding => "coding",
            Template::McpGateway => "gateway",
            Template::HttpApi => "api",
        }
    );
    Ok(super::EXIT_OK)
}

/// Creates a file that must not exist (`create_new`: a file that appeared meanwhile is kept).
fn write_new(path: &Path, text: &str) -> miette::Result<()> {
    use std::io::Write;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| miette::miette!("cannot create {}: {e}", parent.display()))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| miette::miette!("cannot create {}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .map_err(|e| miette::miette!("cannot write {}: {e}", path.display()))
}

/// Creates `.gitignore`, or appends the entries it lacks; says which.
fn ignore_entries(path: &Path) -> miette::Result<&'static str> {
    let Ok(current) = std::fs::read_to_string(path) else {
        write_new(path, GITIGNORE)?;
        return Ok("created");
    };
    let have: Vec<&str> = current.lines().map(str::trim).collect();
    let missing: Vec<&str> = GITIGNORE
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty() && !have.contains(&l.trim()))
        .collect();
    if missing.is_empty() {
        return Ok("its entries were there");
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(GITIGNORE);
    std::fs::write(path, text)
        .map_err(|e| miette::miette!("cannot write {}: {e}", path.display()))?;
    Ok("entries appended")
}

/// Writes the build output (without the generated crate, as CI's `--no-rust` check expects).
fn build(root: &Path) -> miette::Result<String> {
    let checked = crate::check::check_specs(&LoadOptions {
        paths: Vec::new(),
        config: None,
        cwd: root.to_path_buf(),
    })
    .map_err(|e| miette::miette!("{e}"))?;
    let Some(bundle) = checked.bundle().filter(|_| !checked.has_load_errors()) else {
        eprint!(
            "{}",
            super::output::findings(&checked, super::output::Stream::Stderr)
        );
        return Err(miette::miette!(
            "the template does not lint clean here; please report this"
        ));
    };
    let options = BuildOptions {
        lists: ListOptions::for_project(&bundle.project),
        rust: None,
    };
    let out = root.join(super::build::DEFAULT_OUT);
    emit::write_build(&bundle, &options, &out).map_err(|e| miette::miette!("{e}"))?;
    Ok(super::build::DEFAULT_OUT.to_owned())
}
