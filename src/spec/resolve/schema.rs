//! `parameters` and `result`: JSON Schemas checked against the 2020-12 meta-schema, with each
//! finding at the key it is about, and `required` names checked against `properties`.

use serde_json::{Value, json};

use crate::rule::Rule;
use crate::spec::ast::ToolSpec;
use crate::spec::yaml::{Node, NodeValue};

use super::did_you_mean;
use super::tool::ToolResolver;

impl ToolResolver<'_> {
    /// The parameter schema (an empty object schema when left out) and its compiled validator
    /// when it is valid.
    pub(super) fn parameters(&mut self, t: &ToolSpec) -> (Value, Option<jsonschema::Validator>) {
        match &t.parameters {
            Some(p) => {
                let v = self.check_schema(p, "parameters", true);
                (p.to_json(), v)
            }
            None => (
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
                None,
            ),
        }
    }

    /// The result schema, checked, when there is one.
    pub(super) fn result(&mut self, t: &ToolSpec) -> Option<Value> {
        t.result.as_ref().map(|r| {
            self.check_schema(r, "result", false);
            r.to_json()
        })
    }

    /// Checks a schema and returns its compiled validator when it is valid.
    fn check_schema(
        &mut self,
        node: &Node,
        key: &str,
        must_be_object: bool,
    ) -> Option<jsonschema::Validator> {
        let schema = node.to_json();
        if must_be_object {
            let ty = node.get("type");
            let is_object = ty.and_then(Node::as_str) == Some("object");
            if !is_object {
                let at = ty.map(|t| t.range).unwrap_or(node.range);
                self.diags.push(
                    self.error(Rule::InvalidJsonSchema, at, "`parameters` must be an object schema (`type: object`)",
                    )
                    .with_help("tool arguments are always a JSON object; put each argument under `properties`"),
                );
            }
        }
        if !node.is_map() {
            self.diags.push(self.error(
                Rule::InvalidJsonSchema,
                node.range,
                format!("`{key}` must be a JSON Schema mapping, not {}", node.kind()),
            ));
            return None;
        }
        let meta = jsonschema::draft202012::meta::validator();
        let mut reported = 0;
        for e in meta.iter_errors(&schema) {
            if reported >= 5 {
                break;
            }
            reported += 1;
            let ptr = e.instance_path().as_str().to_owned();
            let at = node.at_pointer(&ptr).map(|n| n.range).unwrap_or(node.range);
            self.diags.push(
                self.error(
                    Rule::InvalidJsonSchema,
                    at,
                    format!(
                        "`{key}{}` is not valid JSON Schema 2020-12: {}",
                        ptr,
                        e.masked()
                    ),
                )
                .with_help("see https://json-schema.org/draft/2020-12 for the keyword's form"),
            );
        }
        self.check_required(node);
        if reported > 0 {
            return None;
        }
        match jsonschema::draft202012::new(&schema) {
            Ok(v) => Some(v),
            Err(e) => {
                let ptr = e.schema_path().as_str().to_owned();
                let at = node.at_pointer(&ptr).map(|n| n.range).unwrap_or(node.range);
                self.diags.push(self.error(
                    Rule::InvalidJsonSchema,
                    at,
                    format!("`{key}` cannot be compiled: {}", e.masked()),
                ));
                None
            }
        }
    }

    /// `required` must only name declared properties (recursively).
    fn check_required(&mut self, node: &Node) {
        if let (Some(req), Some(props)) = (node.get("required"), node.get("properties")) {
            let declared: Vec<&str> = props
                .entries()
                .iter()
                .map(|(k, _)| k.name.as_str())
                .collect();
            for r in req.items() {
                if let Some(name) = r.as_str()
                    && !declared.contains(&name)
                {
                    self.diags.push(
                        self.error(
                            Rule::InvalidJsonSchema,
                            r.range,
                            format!("`required` names `{name}`, which is not under `properties`"),
                        )
                        .with_help(did_you_mean(name, &declared)),
                    );
                }
            }
        }
        if let NodeValue::Map(entries) = &node.value {
            for (_, v) in entries {
                match &v.value {
                    NodeValue::Map(_) => self.check_required(v),
                    NodeValue::Seq(items) => {
                        for i in items {
                            self.check_required(i);
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{errors, resolve_tool, text_at};
    use crate::rule::Rule;

    const TOOL: &str = "name: t
description: Write a note into the workspace's notes folder and return its path.
effect: local_write
exec: {handler: rust}
";

    fn schema_errors(tail: &str) -> Vec<(String, String)> {
        let r = resolve_tool(&format!("{TOOL}{tail}"));
        assert!(r.definitions().next().is_none());
        errors(&r, Rule::InvalidJsonSchema)
            .into_iter()
            .map(|d| (d.message.clone(), text_at(&r, d).to_owned()))
            .collect()
    }

    #[test]
    fn both_schemas_resolve_as_written() {
        let r = resolve_tool(&format!(
            "{TOOL}parameters: {{type: object, properties: {{path: {{type: string}}}}}}\nresult: {{type: array}}\n"
        ));
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        let def = r.definitions().next().unwrap();
        assert_eq!(
            def.parameters,
            serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}})
        );
        assert_eq!(def.result, Some(serde_json::json!({"type": "array"})));
    }

    #[test]
    fn parameters_must_be_an_object_schema_mapping() {
        assert_eq!(
            schema_errors("parameters: {type: array}\n"),
            [(
                "`parameters` must be an object schema (`type: object`)".to_owned(),
                "array".to_owned()
            )]
        );
        let got = schema_errors("result: [a]\n");
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0]
                .0
                .starts_with("`result` must be a JSON Schema mapping, not ")
        );
        assert_eq!(got[0].1, "[", "a flow sequence is located at its bracket");
    }

    #[test]
    fn a_meta_schema_violation_is_reported_at_the_keyword() {
        let got = schema_errors("parameters: {type: object, properties: {path: {type: strin}}}\n");
        assert!(!got.is_empty());
        assert!(
            got[0].0.starts_with(
                "`parameters/properties/path/type` is not valid JSON Schema 2020-12: "
            ),
            "{got:?}"
        );
        assert_eq!(got[0].1, "strin");
    }

    #[test]
    fn a_schema_the_validator_cannot_compile_is_an_error() {
        let got = schema_errors(
            "parameters: {type: object, properties: {path: {type: string, pattern: 'a(b'}}}\n",
        );
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].0.starts_with("`parameters` cannot be compiled: "),
            "{got:?}"
        );
    }

    #[test]
    fn required_names_are_checked_at_every_depth() {
        let got = schema_errors(
            "parameters:
  type: object
  properties:
    note: {type: object, properties: {title: {type: string}}, required: [titel]}
  required: [nots]
",
        );
        let messages: Vec<&str> = got.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            messages,
            [
                "`required` names `nots`, which is not under `properties`",
                "`required` names `titel`, which is not under `properties`"
            ]
        );
        assert_eq!(got[1].1, "titel");
    }
}
