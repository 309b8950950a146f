//! What a call touches, for the scheduler: `resources.reads` and `resources.writes` (CEL
//! expressions over the arguments) and `concurrency_group`.

use serde_json::Value;

use crate::ir::{ConcurrencyGroup, ResourceSets};
use crate::spec::ast::{OneOrMany, StringOr, ToolSpec};
use crate::spec::yaml::Spanned;

use super::CelRole;
use super::tool::ToolResolver;

impl ToolResolver<'_> {
    /// The resource sets, each expression compiled for the resources slot.
    pub(super) fn resources(&mut self, t: &ToolSpec, parameters: &Value) -> ResourceSets {
        let mut resources = ResourceSets::default();
        let Some(res) = &t.resources else {
            return resources;
        };
        for (role, field) in [
            (CelRole::Reads, &res.value.reads),
            (CelRole::Writes, &res.value.writes),
        ] {
            let Some(field) = field else { continue };
            let exprs: Vec<Spanned<String>> = match &field.value {
                OneOrMany::One(s) => vec![Spanned::new(s.clone(), field.range)],
                OneOrMany::Many(items) => items.clone(),
            };
            for e in &exprs {
                self.compile_site(role.clone(), e, parameters);
            }
            let texts = exprs.into_iter().map(|e| e.value).collect();
            match role {
                CelRole::Reads => resources.reads = texts,
                _ => resources.writes = texts,
            }
        }
        resources
    }
}

/// The concurrency group: a name alone admits one call at a time; `max` below 1 counts as 1.
pub(super) fn concurrency_group(t: &ToolSpec) -> Option<ConcurrencyGroup> {
    t.concurrency_group.as_ref().map(|g| match &g.value {
        StringOr::String(s) => ConcurrencyGroup {
            name: s.clone(),
            max: 1,
        },
        StringOr::Map(m) => ConcurrencyGroup {
            name: m.name.value.clone(),
            max: m.max.as_ref().map(|m| m.value).unwrap_or(1).max(1),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::{HEAD, resolve_tool};
    use crate::ir::ConcurrencyGroup;

    #[test]
    fn one_expression_or_a_list_each_becomes_a_site() {
        let r = resolve_tool(&format!(
            "{HEAD}resources:\n  reads: \"[args.path]\"\n  writes: [\"[args.path]\", \"['notes/index.md']\"]\n"
        ));
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        let res = &r.definitions().next().unwrap().resources;
        assert_eq!(res.reads, ["[args.path]"]);
        assert_eq!(res.writes, ["[args.path]", "['notes/index.md']"]);
        let roles: Vec<_> = r.tools[0].cel.iter().map(|c| c.role.clone()).collect();
        use super::CelRole::{Reads, Writes};
        assert_eq!(roles, [Reads, Writes, Writes]);
    }

    #[test]
    fn a_concurrency_group_admits_at_least_one_call() {
        let group = |yaml: &str| {
            let r = resolve_tool(&format!("{HEAD}concurrency_group: {yaml}\n"));
            assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
            r.definitions().next().unwrap().concurrency_group.clone()
        };
        let g = |name: &str, max| {
            Some(ConcurrencyGroup {
                name: name.into(),
                max,
            })
        };
        assert_eq!(group("notes"), g("notes", 1));
        assert_eq!(group("{name: notes, max: 4}"), g("notes", 4));
        assert_eq!(group("{name: notes, max: 0}"), g("notes", 1));
        assert_eq!(group("{name: notes}"), g("notes", 1));
    }
}
