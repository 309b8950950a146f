//! A runtime from the specs: load, resolve and lint, and refuse while any diagnostic is an error,
//! so the runtime never runs a contract the linter rejects.
//!
//! The functions are [`RuntimeBuilder`]'s, so `RuntimeBuilder::from_specs` reads as it always
//! has; they live on the compiler side so that the runtime never depends on the compiler.

use crate::check::{CheckedProject, check_specs};
use crate::diagnostic::Severity;
use crate::runtime::RuntimeBuilder;
use crate::spec::load::{LoadError, LoadOptions};

/// Why a runtime could not be made from the specs.
#[derive(Debug, thiserror::Error)]
pub enum SpecsError {
    /// The specs could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The `specs:` globs do not compile.
    #[error(transparent)]
    Policy(#[from] crate::policy::SpecGlobError),
    /// The linter reports errors: the runtime never runs a contract the linter rejects.
    #[error("the specs have {} lint error(s); run `toolgate lint`. First: {}", .0.len(), .0.first().map(String::as_str).unwrap_or(""))]
    Lint(Vec<String>),
}

impl RuntimeBuilder {
    /// A runtime for a checked project: refuses while any diagnostic is an error.
    pub fn from_checked(checked: &CheckedProject) -> Result<Self, SpecsError> {
        let Some(bundle) = checked.bundle() else {
            let errors = checked
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(|d| match d.code {
                    Some(code) => format!("{code}: {}", d.message),
                    None => d.message.clone(),
                })
                .collect();
            return Err(SpecsError::Lint(errors));
        };
        let policy = crate::policy::PolicyFiles::of(&checked.loaded)?;
        Ok(RuntimeBuilder::from_bundle(bundle, &checked.loaded.root).policy_files(policy))
    }

    /// A runtime straight from the specs (load, resolve, lint; refuses on lint errors).
    pub fn from_specs(opts: &LoadOptions) -> Result<Self, SpecsError> {
        let checked = check_specs(opts)?;
        RuntimeBuilder::from_checked(&checked)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::check::check_texts;

    #[test]
    fn a_project_with_a_contract_error_makes_no_runtime() {
        let checked = check_texts(
            &[(
                PathBuf::from("t.yaml"),
                "name: t\ndescription: Echo the text.\neffect: pure\nexec: {builtin: ech}\n"
                    .to_owned(),
            )],
            None,
        );
        let Err(SpecsError::Lint(errors)) = RuntimeBuilder::from_checked(&checked) else {
            panic!("a contract error must refuse the runtime");
        };
        assert_eq!(errors, ["TGK002: unknown builtin tool `ech`"]);
    }

    #[test]
    fn a_missing_spec_folder_is_a_load_error() {
        let dir = tempfile::tempdir().unwrap();
        let got = RuntimeBuilder::from_specs(&LoadOptions {
            paths: vec![dir.path().join("missing")],
            config: None,
            cwd: dir.path().to_path_buf(),
        });
        assert!(matches!(got, Err(SpecsError::Load(_))), "{got:?}");
    }
}
