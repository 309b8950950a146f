//! [`LintSettings`]: which rules run at what severity, from toolgate.yaml and the command line.

use std::collections::{HashMap, HashSet};

use globset::{Glob, GlobMatcher};

use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::Target;
use crate::lint::codes::Rule;
use crate::lint::rule::Tier;
use crate::spec::project_file::ProjectFile;
use crate::spec::source::SourceId;

/// Tunable thresholds.
#[derive(Clone, Debug)]
pub struct LintOptions {
    /// Most tools one toolset should expose.
    pub max_tools: usize,
    /// Fewest words a tool description should have (0: no floor, the default).
    pub description_min_words: usize,
    /// Most characters a description may have.
    pub description_max_chars: usize,
    /// Highest CEL cost estimate accepted.
    pub cel_cost_budget: u64,
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            max_tools: 20,
            description_min_words: 0,
            description_max_chars: 1024,
            cel_cost_budget: crate::cel::DEFAULT_COST_BUDGET,
        }
    }
}

/// Rules opted into from the command line (`--preview`, `--select`), on top of toolgate.yaml.
#[derive(Clone, Debug, Default)]
pub struct RuleSelection {
    /// Every preview rule runs.
    pub preview: bool,
    /// These rules run, preview or not.
    pub select: Vec<Rule>,
}

/// The resolved linter configuration.
#[derive(Clone, Debug)]
pub struct LintSettings {
    severity: HashMap<Rule, Option<Severity>>,
    /// Whether preview rules run (`--preview`, `lint.preview`).
    preview: bool,
    /// Rules selected by name (`--select`, `lint.select`): they run even in preview.
    selected: HashSet<Rule>,
    per_file: Vec<(GlobMatcher, Vec<Rule>)>,
    /// Whether `# toolgate: ignore[...]` comments are honoured.
    pub inline_ignores: bool,
    /// Provider targets in use.
    pub targets: Vec<Target>,
    /// Thresholds.
    pub options: LintOptions,
}

impl Default for LintSettings {
    fn default() -> Self {
        LintSettings {
            severity: HashMap::new(),
            preview: false,
            selected: HashSet::new(),
            per_file: Vec::new(),
            inline_ignores: true,
            targets: vec![
                Target::OpenaiStrict,
                Target::Anthropic,
                Target::Gemini,
                Target::Mcp,
            ],
            options: LintOptions::default(),
        }
    }
}

impl LintSettings {
    /// The effective severity of a rule, `None` when it is off.
    pub fn severity_of(&self, rule: Rule) -> Option<Severity> {
        if rule.meta().is_contract() {
            return Some(Severity::Error);
        }
        match self.severity.get(&rule) {
            // An explicit severity turns a preview rule on, as naming it in `select` does.
            Some(s) => *s,
            None if rule.meta().tier() == Tier::Preview
                && !self.preview
                && !self.selected.contains(&rule) =>
            {
                None
            }
            None => Some(rule.meta().severity),
        }
    }

    /// The opt-ins in force, to check again with the same rules.
    pub fn selection(&self) -> RuleSelection {
        let mut select: Vec<Rule> = self.selected.iter().copied().collect();
        select.sort_by_key(|r| r.code());
        RuleSelection {
            preview: self.preview,
            select,
        }
    }

    /// Adds the command line's opt-ins; `lint.ignore` and `off` still win over `select`.
    pub fn apply_selection(&mut self, selection: &RuleSelection) {
        self.preview |= selection.preview;
        self.selected.extend(selection.select.iter().copied());
    }

    /// Whether a rule runs at all.
    pub fn enabled(&self, rule: Rule) -> bool {
        self.severity_of(rule).is_some()
    }

    /// Sets a rule's severity (`None` turns it off); contract rules cannot be changed.
    pub fn set(&mut self, rule: Rule, severity: Option<Severity>) {
        if !rule.meta().is_contract() {
            self.severity.insert(rule, severity);
        }
    }

    /// Whether a rule is turned off for a file by `per_file_ignores`.
    pub fn ignored_for(&self, rule: Rule, path: &str) -> bool {
        self.per_file
            .iter()
            .any(|(m, rules)| rules.contains(&rule) && m.is_match(path))
    }

    /// Reads the `lint` section of toolgate.yaml; unknown rule ids and bad values become
    /// diagnostics (contract errors in the project file).
    pub fn from_project(
        project: Option<(SourceId, &ProjectFile)>,
        targets: &[Target],
        diags: &mut Vec<Diagnostic>,
    ) -> Self {
        let mut s = LintSettings {
            targets: targets.to_vec(),
            ..LintSettings::default()
        };
        let Some((id, pf)) = project else { return s };
        let Some(lint) = &pf.lint else { return s };
        let lint = &lint.value;
        let bad = |range: crate::spec::source::TextRange, msg: String, help: String| {
            Diagnostic::new(
                Some(Rule::InvalidContract.code()),
                Severity::Error,
                range.in_file(id),
                msg,
            )
            .with_help(help)
        };
        for (key, sev) in &lint.severity {
            let Some(rule) = Rule::find(key) else {
                diags.push(bad(
                    sev.range,
                    format!("unknown rule `{key}` in `lint.severity`"),
                    unknown_rule_help(key),
                ));
                continue;
            };
            let value = match sev.value.as_str() {
                "off" => None,
                other => match Severity::parse(other) {
                    Some(v) => Some(v),
                    None => {
                        diags.push(bad(
                            sev.range,
                            format!("unknown severity `{other}`"),
                            "use error, warning, info or off".into(),
                        ));
                        continue;
                    }
                },
            };
            if rule.meta().is_contract() {
                diags.push(bad(
                    sev.range,
                    format!(
                        "`{}` reports invalid contracts; its severity cannot be changed",
                        rule.code()
                    ),
                    "fix the contract instead".into(),
                ));
                continue;
            }
            s.set(rule, value);
        }
        for r in &lint.ignore {
            match Rule::find(&r.value) {
                Some(rule) if rule.meta().is_contract() => diags.push(bad(
                    r.range,
                    format!(
                        "`{}` reports invalid contracts and cannot be ignored",
                        rule.code()
                    ),
                    "fix the contract instead".into(),
                )),
                Some(rule) => s.set(rule, None),
                None => diags.push(bad(
                    r.range,
                    format!("unknown rule `{}` in `lint.ignore`", r.value),
                    unknown_rule_help(&r.value),
                )),
            }
        }
        if let Some(b) = &lint.preview {
            s.preview = b.value;
        }
        for r in &lint.select {
            match Rule::find(&r.value) {
                Some(rule) => {
                    s.selected.insert(rule);
                }
                None => diags.push(bad(
                    r.range,
                    format!("unknown rule `{}` in `lint.select`", r.value),
                    unknown_rule_help(&r.value),
                )),
            }
        }
        for (pattern, rules) in &lint.per_file_ignores {
            let matcher = match Glob::new(pattern) {
                Ok(g) => g.compile_matcher(),
                Err(e) => {
                    diags.push(bad(
                        rules.range,
                        format!("invalid glob `{pattern}`: {}", e.kind()),
                        "use globs such as `tool-specs/legacy/**`".into(),
                    ));
                    continue;
                }
            };
            let mut list = Vec::new();
            for r in &rules.value {
                match Rule::find(&r.value) {
                    Some(rule) => list.push(rule),
                    None => diags.push(bad(
                        r.range,
                        format!("unknown rule `{}`", r.value),
                        unknown_rule_help(&r.value),
                    )),
                }
            }
            s.per_file.push((matcher, list));
        }
        if let Some(b) = &lint.inline_ignores {
            s.inline_ignores = b.value;
        }
        if let Some(o) = &lint.options {
            let o = &o.value;
            if let Some(v) = &o.max_tools {
                s.options.max_tools = v.value;
            }
            if let Some(v) = &o.description_min_words {
                s.options.description_min_words = v.value;
            }
            if let Some(v) = &o.description_max_chars {
                s.options.description_max_chars = v.value;
            }
            if let Some(v) = &o.cel_cost_budget {
                s.options.cel_cost_budget = v.value;
            }
        }
        s
    }
}

/// "did you mean" over rule codes and names.
pub fn unknown_rule_help(key: &str) -> String {
    let names: Vec<&str> = Rule::ALL
        .iter()
        .flat_map(|r| [r.meta().code(), r.meta().name()])
        .collect();
    match crate::suggest::did_you_mean(key, names.iter().copied()) {
        Some(s) => format!("{s} (`toolgate rules` lists them)"),
        None => "`toolgate rules` lists every rule".into(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::check::check_texts;
    use crate::lint::Rule;

    /// A tool whose `path` parameter has no description: TGN004 (a preview rule) finds it.
    const SPEC: &str = "name: read_notes\ndescription: Read one note of the notebook and return its text with numbered lines.\neffect: read_only\nparameters:\n  type: object\n  properties:\n    path: {type: string, maxLength: 200}\n  required: [path]\n  additionalProperties: false\nexec: {builtin: read_file}\n";

    fn fires(project: Option<&str>) -> bool {
        let files = [(PathBuf::from("tool-specs/read_notes.yaml"), SPEC.to_owned())];
        let checked = check_texts(&files, project);
        let stray: Vec<_> = checked
            .diagnostics
            .iter()
            .filter(|d| d.code == Some(Rule::InvalidContract.code()))
            .collect();
        assert!(stray.is_empty(), "the project file is valid: {stray:?}");
        checked
            .diagnostics
            .iter()
            .any(|d| d.code == Some(Rule::ParameterDescriptionMissing.code()))
    }

    #[test]
    fn preview_rules_run_only_when_opted_in() {
        assert!(!fires(None), "preview rules are off by default");
        assert!(fires(Some("lint:\n  preview: true\n")));
        assert!(fires(Some("lint:\n  select: [TGN004]\n")));
        assert!(fires(Some(
            "lint:\n  select: [parameter-description-missing]\n"
        )));
        assert!(fires(Some("lint:\n  severity: {TGN004: info}\n")));
        assert!(!fires(Some("lint:\n  preview: true\n  ignore: [TGN004]\n")));
        assert!(!fires(Some(
            "lint:\n  select: [TGN004]\n  ignore: [TGN004]\n"
        )));
    }

    #[test]
    fn an_unknown_selected_rule_is_reported() {
        let files = [(PathBuf::from("tool-specs/read_notes.yaml"), SPEC.to_owned())];
        let checked = check_texts(&files, Some("lint:\n  select: [TGN999]\n"));
        assert!(
            checked
                .diagnostics
                .iter()
                .any(|d| d.message.contains("unknown rule `TGN999` in `lint.select`"))
        );
    }
}
