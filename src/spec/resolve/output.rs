//! `output`: the formatter, the limits on what the model sees, what is kept when output is cut,
//! redaction, and `external_reference` (which field of the structured result names what a call
//! made).

use crate::ir::{FormatterKind, OutputKeep, OutputPolicy};
use crate::spec::ast::{ExecAst, ToolSpec};
use crate::spec::yaml::Spanned;

use super::did_you_mean;
use super::tool::ToolResolver;

impl ToolResolver<'_> {
    /// The output policy; what the tool leaves out comes from toolgate.yaml's defaults. The
    /// formatter defaults to `bash` for a command tool, `json` for a tool with a `result`
    /// schema, `text` otherwise.
    pub(super) fn output(&mut self, t: &ToolSpec, has_result: bool) -> OutputPolicy {
        let o = t.output.as_ref().map(|o| &o.value);
        let default_formatter = self.defaults.formatter.unwrap_or(match &t.exec {
            Some(e) if matches!(e.value, ExecAst::Command(_)) => FormatterKind::Bash,
            _ if has_result => FormatterKind::Json,
            _ => FormatterKind::Text,
        });
        let keep = o
            .and_then(|o| o.keep.as_ref())
            .map_or(OutputKeep::HeadTail, |k| k.value);
        let mut redact = Vec::new();
        if let Some(list) = o.and_then(|o| o.redact.as_ref()) {
            for r in &list.value {
                if let Err(e) = crate::ir::tool::compile_redaction(&r.value) {
                    self.contract(
                        r.range,
                        format!("`redact` pattern is not a valid regular expression: {e}"),
                        None,
                    );
                }
                redact.push(r.value.clone());
            }
        }
        let external_reference = o
            .and_then(|o| o.external_reference.as_ref())
            .and_then(|p| self.check_external_reference(t, p));
        OutputPolicy {
            formatter: o
                .and_then(|o| o.formatter.as_ref())
                .map(|f| f.value)
                .unwrap_or(default_formatter),
            max_bytes: o
                .and_then(|o| o.max_bytes.as_ref())
                .map(|v| v.value.0)
                .unwrap_or(self.defaults.max_bytes),
            max_lines: o
                .and_then(|o| o.max_lines.as_ref())
                .map(|v| v.value)
                .unwrap_or(self.defaults.max_lines),
            keep,
            artifact_threshold: o
                .and_then(|o| o.artifact_threshold.as_ref())
                .map(|v| v.value.0)
                .unwrap_or(self.defaults.artifact_threshold),
            redact,
            redact_secrets: o
                .and_then(|o| o.redact_secrets.as_ref())
                .map(|v| v.value)
                .unwrap_or(true),
            external_reference,
        }
    }

    /// Checks `output.external_reference`: a JSON Pointer to a property the `result` schema
    /// declares.
    fn check_external_reference(&mut self, t: &ToolSpec, p: &Spanned<String>) -> Option<String> {
        let Some(result) = &t.result else {
            self.contract(
                p.range,
                "`external_reference` points into the structured result, but the tool has no `result` schema",
                Some("add a `result` schema that declares the field, or remove `external_reference`".into()),
            );
            return None;
        };
        if !p.value.starts_with('/') {
            self.contract(
                p.range,
                format!(
                    "`external_reference` must be a JSON Pointer such as `/id`, not `{}`",
                    p.value
                ),
                Some(format!("write `/{}`", p.value.trim_start_matches('/'))),
            );
            return None;
        }
        let mut node = result;
        for token in p.value[1..].split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            let props = node.get("properties");
            match props.and_then(|props| props.get(&token)) {
                Some(next) => node = next,
                None => {
                    let names: Vec<&str> = props
                        .map(|props| {
                            props
                                .entries()
                                .iter()
                                .map(|(k, _)| k.name.as_str())
                                .collect()
                        })
                        .unwrap_or_default();
                    let help = if names.is_empty() {
                        "point at a property the `result` schema declares".to_owned()
                    } else {
                        did_you_mean(&token, &names)
                    };
                    self.contract(
                        p.range,
                        format!("`external_reference` names `{token}`, which the `result` schema does not declare"),
                        Some(help),
                    );
                    return None;
                }
            }
        }
        Some(p.value.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{HEAD, errors, resolve_tool, resolve_with_project, text_at};
    use crate::ir::{FormatterKind, OutputKeep};
    use crate::rule::Rule;

    const RESULT: &str = "result:
  type: object
  properties: {ticket: {type: object, properties: {id: {type: string}}}}
";

    #[test]
    fn the_policy_takes_the_tool_then_toolgate_yaml_then_the_defaults() {
        let r = resolve_with_project(
            &format!(
                "{HEAD}{RESULT}output: {{max_lines: 10, keep: tail, external_reference: /ticket/id}}\n"
            ),
            "defaults: {output: {max_bytes: 1KiB}}\n",
        );
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        let o = &r.definitions().next().unwrap().output;
        assert_eq!(o.formatter, FormatterKind::Json);
        assert_eq!((o.max_bytes, o.max_lines), (1024, 10));
        assert_eq!(o.keep, OutputKeep::Tail);
        assert!(o.redact_secrets);
        assert_eq!(o.external_reference.as_deref(), Some("/ticket/id"));
    }

    #[test]
    fn a_command_tool_formats_as_bash_and_a_plain_one_as_text() {
        let r = resolve_tool(
            "name: t\ndescription: Show the status.\neffect: read_only\nexec: {command: {argv: [git, status]}}\n",
        );
        assert_eq!(
            r.definitions().next().unwrap().output.formatter,
            FormatterKind::Bash
        );
        let r = resolve_tool(HEAD);
        assert_eq!(
            r.definitions().next().unwrap().output.formatter,
            FormatterKind::Text
        );
    }

    #[test]
    fn a_redact_pattern_must_compile() {
        let r = resolve_tool(&format!(
            "{HEAD}output: {{redact: ['token=\\\\w+', 'a(b']}}\n"
        ));
        let e = errors(&r, Rule::InvalidContract);
        assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
        assert!(
            e[0].message
                .starts_with("`redact` pattern is not a valid regular expression: "),
            "{}",
            e[0].message
        );
        assert_eq!(text_at(&r, e[0]), "'a(b'");
    }

    #[test]
    fn an_external_reference_must_point_at_a_declared_result_property() {
        let message = |tail: &str| {
            let r = resolve_tool(&format!("{HEAD}{tail}"));
            let e = errors(&r, Rule::InvalidContract);
            assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
            (e[0].message.clone(), e[0].help.clone().unwrap_or_default())
        };
        let (m, h) = message("output: {external_reference: /id}\n");
        assert_eq!(
            m,
            "`external_reference` points into the structured result, but the tool has no `result` schema"
        );
        assert!(h.starts_with("add a `result` schema"));
        let (m, h) = message(&format!(
            "{RESULT}output: {{external_reference: ticket/id}}\n"
        ));
        assert_eq!(
            m,
            "`external_reference` must be a JSON Pointer such as `/id`, not `ticket/id`"
        );
        assert_eq!(h, "write `/ticket/id`");
        let (m, h) = message(&format!(
            "{RESULT}output: {{external_reference: /ticket/ids}}\n"
        ));
        assert_eq!(
            m,
            "`external_reference` names `ids`, which the `result` schema does not declare"
        );
        assert_eq!(h, "did you mean `id`?");
        let (_, h) = message(&format!(
            "{RESULT}output: {{external_reference: /ticket/id/x}}\n"
        ));
        assert_eq!(h, "point at a property the `result` schema declares");
    }
}
