//! [`LintContext`] and the typed views rules receive: [`ToolView`], [`SchemaNode`].

use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::{Effect, ProjectConfig, Target, ToolDefinition};
use crate::lint::codes::Rule;
use crate::lint::config::LintSettings;
use crate::spec::ast::ToolSpec;
pub use crate::spec::import::ImportFormat;
use crate::spec::project_file::ProjectFile;
use crate::spec::resolve::ResolvedTool;
use crate::spec::source::{SourceFile, SourceId, SourceMap, Span, TextRange};
use crate::spec::yaml::{Key, Node, Spanned};

/// Where a tool under lint came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A toolgate spec.
    Spec,
    /// An imported tool list (`--from`).
    Imported(ImportFormat),
}

/// One tool as rules see it.
pub struct ToolView<'a> {
    /// The file it is written in.
    pub source: SourceId,
    /// That file.
    pub file: &'a SourceFile,
    /// The spanned spec.
    pub spec: &'a Spanned<ToolSpec>,
    /// Resolution results (CEL sites, example runs).
    pub resolved: &'a ResolvedTool,
    /// The definition when the contract is valid.
    pub def: Option<&'a ToolDefinition>,
    /// Where it came from.
    pub origin: Origin,
    /// Its name (empty when missing).
    pub name: &'a str,
    /// The declared effect, or the one MCP annotations imply for imported tools.
    pub effect: Option<Effect>,
    /// MCP annotations of an imported tool.
    pub annotations: Option<&'a serde_json::Value>,
    /// The provider type of an imported provider-defined tool (`bash_20250124`).
    pub native: Option<&'a str>,
}

impl ToolView<'_> {
    /// A range of this tool's file as a span.
    pub fn span(&self, r: TextRange) -> Span {
        r.in_file(self.source)
    }

    /// The span of the tool's name (or of the whole tool when it has none).
    pub fn name_span(&self) -> Span {
        self.span(
            self.spec
                .value
                .name
                .as_ref()
                .map(|n| n.range)
                .unwrap_or(self.spec.range),
        )
    }

    /// The tool's description text (empty when missing).
    pub fn description(&self) -> &str {
        self.spec
            .value
            .description
            .as_ref()
            .map(|d| d.value.as_str())
            .unwrap_or("")
    }

    /// The `parameters` schema node.
    pub fn parameters(&self) -> Option<&Node> {
        self.spec.value.parameters.as_ref()
    }

    /// Top-level properties with whether each is required.
    pub fn properties(&self) -> Vec<(&Key, &Node, bool)> {
        let Some(p) = self.parameters() else {
            return Vec::new();
        };
        let required: Vec<&str> = p
            .get("required")
            .map(|r| r.items().iter().filter_map(Node::as_str).collect())
            .unwrap_or_default();
        p.get("properties")
            .map(|props| {
                props
                    .entries()
                    .iter()
                    .map(|(k, v)| (k, v, required.contains(&k.name.as_str())))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the tool is a toolgate spec (not an imported list).
    pub fn is_spec(&self) -> bool {
        self.origin == Origin::Spec
    }

    /// Whether the tool comes from an imported list in this format.
    pub fn is_imported_from(&self, format: ImportFormat) -> bool {
        self.origin == Origin::Imported(format)
    }
}

/// Which schema a node belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaRole {
    /// `parameters`.
    Parameters,
    /// `result`.
    Result,
}

/// One schema node met while walking `parameters` or `result`.
pub struct SchemaNode<'a> {
    /// The schema.
    pub node: &'a Node,
    /// Which schema it belongs to.
    pub role: SchemaRole,
    /// JSON pointer of the node inside that schema.
    pub pointer: String,
    /// Nesting depth in objects/arrays (the root is 0).
    pub depth: usize,
    /// When the node is a property: its key and whether its parent requires it.
    pub property: Option<(&'a Key, bool)>,
}

impl SchemaNode<'_> {
    /// The `type` keyword as a list of type names.
    pub fn types(&self) -> Vec<&str> {
        match self.node.get("type") {
            Some(t) => match t.as_str() {
                Some(s) => vec![s],
                None => t.items().iter().filter_map(Node::as_str).collect(),
            },
            None => Vec::new(),
        }
    }

    /// Whether the node's `type` includes `t`.
    pub fn is_type(&self, t: &str) -> bool {
        self.types().contains(&t)
    }

    /// The node's description.
    pub fn description(&self) -> &str {
        self.node
            .get("description")
            .and_then(Node::as_str)
            .unwrap_or("")
    }

    /// The property name, when the node is one.
    pub fn property_name(&self) -> Option<&str> {
        self.property.map(|(k, _)| k.name.as_str())
    }
}

/// What rules report into.
pub struct LintContext<'a> {
    /// Every loaded file.
    pub sources: &'a SourceMap,
    /// The settings.
    pub settings: &'a LintSettings,
    /// Project settings (targets, defaults, toolsets).
    pub project: &'a ProjectConfig,
    /// toolgate.yaml as written (with spans), when there is one: rules that must tell "set in
    /// the project file" from "filled by a built-in default" read it.
    pub project_file: Option<(SourceId, &'a ProjectFile)>,
    rule: Option<Rule>,
    findings: Vec<Diagnostic>,
}

impl<'a> LintContext<'a> {
    /// A context with no findings.
    pub fn new(
        sources: &'a SourceMap,
        settings: &'a LintSettings,
        project: &'a ProjectConfig,
    ) -> Self {
        LintContext {
            sources,
            settings,
            project,
            project_file: None,
            rule: None,
            findings: Vec::new(),
        }
    }

    /// Gives rules the project file as written.
    pub fn with_project_file(mut self, file: Option<(SourceId, &'a ProjectFile)>) -> Self {
        self.project_file = file;
        self
    }

    /// A context over the same inputs with no findings (for checking tools in parallel).
    pub fn fork(&self) -> LintContext<'a> {
        LintContext {
            sources: self.sources,
            settings: self.settings,
            project: self.project,
            project_file: self.project_file,
            rule: None,
            findings: Vec::new(),
        }
    }

    /// Takes over another context's findings.
    pub fn absorb(&mut self, findings: Vec<Diagnostic>) {
        self.findings.extend(findings);
    }

    /// Sets the rule whose findings follow.
    pub fn set_rule(&mut self, rule: Rule) {
        self.rule = Some(rule);
    }

    /// Reports a finding of the current rule at `span`; returns it for help and labels.
    pub fn report(&mut self, span: Span, message: impl Into<String>) -> &mut Diagnostic {
        let rule = self.rule.unwrap_or(Rule::InvalidContract);
        let severity = self.settings.severity_of(rule).unwrap_or(Severity::Info);
        self.findings
            .push(Diagnostic::new(Some(rule.code()), severity, span, message));
        let last = self.findings.len() - 1;
        &mut self.findings[last]
    }

    /// Whether a provider target is in use.
    pub fn targets(&self, t: Target) -> bool {
        self.settings.targets.contains(&t)
    }

    /// The findings so far.
    pub fn into_findings(self) -> Vec<Diagnostic> {
        self.findings
    }
}
