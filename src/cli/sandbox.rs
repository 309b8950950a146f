//! `toolgate sandbox`: what this kernel offers the sandbox, and what each sandbox profile of
//! the project puts in force here (or why it would refuse to run).

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use crate::check;
use crate::runtime::exec::sandbox::{self, probe};
use crate::spec::load::LoadOptions;

/// Arguments of `toolgate sandbox`.
#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// The project file (default: ./toolgate.yaml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The workspace the roots are resolved against (default: the project's).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: super::call::OutputFormat,
}

/// Prints the probe and every profile's plan.
pub fn run(a: SandboxArgs) -> miette::Result<u8> {
    let cwd = std::env::current_dir().map_err(|e| miette::miette!("{e}"))?;
    let checked = check::check_specs(&LoadOptions {
        paths: Vec::new(),
        config: a.config.clone(),
        cwd,
    })
    .map_err(|e| miette::miette!("{e}"))?;
    let project = &checked.resolution.project;
    let workspace = a
        .workspace
        .clone()
        .unwrap_or_else(|| checked.loaded.root.join(&project.workspace));
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let kernel = probe();
    let plans: Vec<_> = project
        .sandbox_profiles
        .iter()
        .map(|(name, p)| {
            let ctx = sandbox::PlanContext::new(&workspace);
            (name, sandbox::plan(Some((name, p)), &ctx, kernel))
        })
        .collect();
    let text = match a.format {
        super::call::OutputFormat::Json => {
            let profiles: serde_json::Map<_, _> = plans
                .iter()
                .map(|(name, plan)| {
                    let v = match plan {
                        Ok(p) => json!({"protections": p.protections, "missing": p.missing}),
                        Err(e) => json!({"refuses": e.to_string()}),
                    };
                    ((*name).clone(), v)
                })
                .collect();
            let v = json!({"kernel": kernel, "workspace": workspace, "profiles": profiles});
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
        super::call::OutputFormat::Text => {
            let mut t = String::from("kernel:\n");
            let abi = kernel
                .landlock_abi
                .map_or("not available".to_owned(), |v| format!("ABI {v}"));
            t.push_str(&format!("  landlock: {abi}\n"));
            t.push_str(&format!("  seccomp filters: {}\n", yes(kernel.seccomp)));
            match &kernel.cgroup {
                Some(c) => t.push_str(&format!(
                    "  cgroup v2: {} (cgroup.kill: {}; controllers for leaves: {})\n",
                    c.v2_parent.display(),
                    yes(c.kill),
                    if c.controllers.is_empty() {
                        "none".to_owned()
                    } else {
                        c.controllers.join(" ")
                    }
                )),
                None => t.push_str("  cgroup v2: not writable\n"),
            }
            let pids = match &kernel.pids {
                Some(sandbox::PidsController::V2) => "cgroup v2".to_owned(),
                Some(sandbox::PidsController::V1(p)) => format!("cgroup v1 at {}", p.display()),
                None => "not available".to_owned(),
            };
            t.push_str(&format!("  process cap (pids controller): {pids}\n"));
            t.push_str(&format!("workspace: {}\nprofiles:\n", workspace.display()));
            for (name, plan) in &plans {
                match plan {
                    Ok(p) => {
                        let list: Vec<&str> = p.protections.iter().map(|x| x.as_str()).collect();
                        t.push_str(&format!("  {name}: {}\n", list.join(", ")));
                        if !p.missing.is_empty() {
                            t.push_str(&format!(
                                "    best effort, without: {}\n",
                                p.missing.join(", ")
                            ));
                        }
                    }
                    Err(e) => t.push_str(&format!("  {name}: REFUSES TO RUN: {e}\n")),
                }
            }
            t
        }
    };
    super::print(&text)?;
    Ok(if plans.iter().any(|(_, p)| p.is_err()) {
        super::EXIT_FINDINGS
    } else {
        super::EXIT_OK
    })
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}
