//! `exec` and `sandbox`: which backend runs the tool — a builtin, a Rust handler, an upstream
//! MCP server's tool, or a process (argv templates, cwd, stdin, environment) — and the sandbox
//! profile it runs in. Names of builtins, MCP servers and profiles must exist.

use serde_json::Value;

use crate::ir::{ArgvElement, CommandSpec, EnvSpec, ExecSpec, HandlerLanguage};
use crate::spec::ast::{ExecAst, StringOr, ToolSpec};
use crate::spec::source::TextRange;
use crate::spec::yaml::Spanned;

use super::tool::ToolResolver;
use super::{CelRole, did_you_mean};

impl ToolResolver<'_> {
    /// The backend; a missing `exec` is an error at `at` (imported lists, which have none,
    /// count as handlers).
    pub(super) fn exec(
        &mut self,
        t: &ToolSpec,
        name: &str,
        at: TextRange,
        parameters: &Value,
    ) -> ExecSpec {
        match &t.exec {
            Some(e) => self.resolve_exec(e, parameters),
            None if self.imported => ExecSpec::Handler {
                language: HandlerLanguage::Rust,
            },
            None => {
                self.contract(
                    at,
                    format!("tool `{name}` has no `exec`"),
                    Some("add `exec:` with one of `builtin: NAME`, `command: {argv: [...]}`, `mcp: {server, tool}`, `handler: rust`".into()),
                );
                ExecSpec::Handler {
                    language: HandlerLanguage::Rust,
                }
            }
        }
    }

    /// The sandbox profile's name, which toolgate.yaml (or the builtin set) must define.
    pub(super) fn sandbox(&mut self, t: &ToolSpec) -> Option<String> {
        t.sandbox.as_ref().map(|s| {
            if !self.project.sandbox_profiles.contains_key(&s.value) {
                let names: Vec<&str> = self
                    .project
                    .sandbox_profiles
                    .keys()
                    .map(String::as_str)
                    .collect();
                self.reference(
                    s.range,
                    format!("unknown sandbox profile `{}`", s.value),
                    Some(format!(
                        "{} Profiles are defined under `sandbox_profiles` in toolgate.yaml.",
                        did_you_mean(&s.value, &names)
                    )),
                );
            }
            s.value.clone()
        })
    }

    fn resolve_exec(&mut self, e: &Spanned<ExecAst>, parameters: &Value) -> ExecSpec {
        match &e.value {
            ExecAst::Builtin(name) => {
                if crate::ir::Builtin::parse(&name.value).is_none() {
                    self.reference(
                        name.range,
                        format!("unknown builtin tool `{}`", name.value),
                        Some(did_you_mean(&name.value, &crate::ir::Builtin::names())),
                    );
                }
                ExecSpec::Builtin {
                    name: name.value.clone(),
                }
            }
            ExecAst::Handler(lang) => ExecSpec::Handler {
                language: lang.value,
            },
            ExecAst::Http(h) => ExecSpec::Http(crate::spec::http::resolve(
                h,
                parameters,
                &mut |(r, m, help)| self.contract(r, m, help),
            )),
            ExecAst::Mcp(m) => {
                if !self.project.mcp_servers.contains_key(&m.server.value) {
                    let names: Vec<&str> = self
                        .project
                        .mcp_servers
                        .keys()
                        .map(String::as_str)
                        .collect();
                    self.reference(
                        m.server.range,
                        format!("unknown MCP server `{}`", m.server.value),
                        Some(format!(
                            "{} Declare it under `mcp_servers` in toolgate.yaml.",
                            did_you_mean(&m.server.value, &names)
                        )),
                    );
                }
                ExecSpec::Mcp {
                    server: m.server.value.clone(),
                    tool: m.tool.value.clone(),
                }
            }
            ExecAst::Command(c) => {
                if c.argv.value.is_empty() {
                    self.contract(
                        c.argv.range,
                        "`argv` is empty",
                        Some("the first element is the program, e.g. `argv: [git, status]`".into()),
                    );
                }
                let mut argv = Vec::new();
                for el in &c.argv.value {
                    match &el.value {
                        StringOr::String(s) => {
                            self.check_template(&Spanned::new(s.clone(), el.range), parameters);
                            argv.push(ArgvElement::Template(s.clone()));
                        }
                        StringOr::Map(m) => match (&m.when, &m.value, &m.each) {
                            (Some(when), Some(value), None) => {
                                self.compile_site(CelRole::ArgvWhen, when, parameters);
                                self.check_template(value, parameters);
                                argv.push(ArgvElement::When {
                                    when: when.value.clone(),
                                    value: value.value.clone(),
                                });
                            }
                            (None, None, Some(each)) => {
                                self.compile_site(CelRole::ArgvEach, each, parameters);
                                argv.push(ArgvElement::Each(each.value.clone()));
                            }
                            _ => self.contract(
                                el.range,
                                "an argv element mapping is either `{when: CEL, value: TEMPLATE}` or `{each: CEL}`",
                                None,
                            ),
                        },
                    }
                }
                if let Some(cwd) = &c.cwd {
                    self.check_template(cwd, parameters);
                }
                if let Some(stdin) = &c.stdin {
                    self.compile_site(CelRole::Stdin, stdin, parameters);
                }
                let env = c
                    .env
                    .as_ref()
                    .map(|env| {
                        for v in env.value.set.values() {
                            self.check_template(v, parameters);
                        }
                        EnvSpec {
                            inherit: env.value.inherit.iter().map(|s| s.value.clone()).collect(),
                            set: env
                                .value
                                .set
                                .iter()
                                .map(|(k, v)| (k.clone(), v.value.clone()))
                                .collect(),
                            secret: env.value.secret.iter().map(|s| s.value.clone()).collect(),
                        }
                    })
                    .unwrap_or_default();
                ExecSpec::Command(CommandSpec {
                    argv,
                    cwd: c.cwd.as_ref().map(|s| s.value.clone()),
                    env,
                    stdin: c.stdin.as_ref().map(|s| s.value.clone()),
                    shell: c.shell.as_ref().is_some_and(|s| s.value),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{errors, offset, resolve_tool, resolve_with_project, text_at};
    use crate::ir::{ArgvElement, ExecSpec};
    use crate::rule::Rule;

    const TOOL: &str = "name: t
description: Show one file's history.
effect: read_only
parameters: {type: object, properties: {path: {type: string}, all: {type: boolean}}, required: [path]}
";

    #[test]
    fn a_command_tool_resolves_argv_cwd_stdin_and_env() {
        let r = resolve_tool(&format!(
            "{TOOL}exec:
  command:
    argv: [git, log, {{when: args.all, value: --all}}, {{each: '[args.path]'}}]
    cwd: '{{args.path}}'
    stdin: args.path
    env: {{inherit: [HOME], set: {{PAGER: cat}}, secret: [TOKEN]}}
"
        ));
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        let ExecSpec::Command(c) = &r.definitions().next().unwrap().exec else {
            panic!("not a command");
        };
        assert_eq!(
            c.argv,
            [
                ArgvElement::Template("git".into()),
                ArgvElement::Template("log".into()),
                ArgvElement::When {
                    when: "args.all".into(),
                    value: "--all".into()
                },
                ArgvElement::Each("[args.path]".into()),
            ]
        );
        assert_eq!(c.cwd.as_deref(), Some("{args.path}"));
        assert_eq!(c.stdin.as_deref(), Some("args.path"));
        assert_eq!(c.env.inherit, ["HOME"]);
        assert_eq!(c.env.set.get("PAGER").map(String::as_str), Some("cat"));
        assert_eq!(c.env.secret, ["TOKEN"]);
        assert!(!c.shell);
    }

    #[test]
    fn an_empty_argv_and_a_mixed_argv_mapping_are_contract_errors() {
        let r = resolve_tool(&format!("{TOOL}exec: {{command: {{argv: []}}}}\n"));
        let e = errors(&r, Rule::InvalidContract);
        assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
        assert_eq!(e[0].message, "`argv` is empty");
        assert_eq!(e[0].span.start, offset(&r, "[]"));

        let r = resolve_tool(&format!(
            "{TOOL}exec: {{command: {{argv: [git, {{when: args.all, each: '[args.path]'}}]}}}}\n"
        ));
        let e = errors(&r, Rule::InvalidContract);
        assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
        assert!(
            e[0].message
                .starts_with("an argv element mapping is either")
        );
        assert_eq!(e[0].span.start, offset(&r, "{when: args.all"));
    }

    #[test]
    fn an_unknown_builtin_is_a_located_reference_error_with_a_suggestion() {
        let r = resolve_tool(&format!("{TOOL}exec: {{builtin: read_fil}}\n"));
        let e = errors(&r, Rule::UnknownProjectReference);
        assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
        assert_eq!(e[0].message, "unknown builtin tool `read_fil`");
        assert_eq!(e[0].help.as_deref(), Some("did you mean `read_file`?"));
        assert_eq!(text_at(&r, e[0]), "read_fil");
        assert!(r.definitions().next().is_none());
    }

    #[test]
    fn mcp_servers_and_sandbox_profiles_must_be_declared() {
        let project = "mcp_servers:\n  github: {command: [github-mcp]}\n";
        let r = resolve_with_project(
            &format!(
                "{TOOL}exec: {{mcp: {{server: github, tool: list_issues}}}}\nsandbox: workspace-read\n"
            ),
            project,
        );
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        assert_eq!(
            r.definitions().next().unwrap().exec,
            ExecSpec::Mcp {
                server: "github".into(),
                tool: "list_issues".into()
            }
        );

        let r = resolve_with_project(
            &format!(
                "{TOOL}exec: {{mcp: {{server: githb, tool: list_issues}}}}\nsandbox: workspace-reed\n"
            ),
            project,
        );
        let e = errors(&r, Rule::UnknownProjectReference);
        let got: Vec<(&str, &str, &str)> = e
            .iter()
            .map(|d| {
                (
                    d.message.as_str(),
                    d.help.as_deref().unwrap_or(""),
                    text_at(&r, d),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "unknown sandbox profile `workspace-reed`",
                    "did you mean `workspace-read`? Profiles are defined under `sandbox_profiles` in toolgate.yaml.",
                    "workspace-reed"
                ),
                (
                    "unknown MCP server `githb`",
                    "did you mean `github`? Declare it under `mcp_servers` in toolgate.yaml.",
                    "githb"
                ),
            ]
        );
    }
}
