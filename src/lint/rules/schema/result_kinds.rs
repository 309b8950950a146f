//! Which argument chooses the kind of result: a selector (`method`, `action`, or any string enum
//! whose values are verb phrases) whose values return different kinds of thing — one item
//! (`get`), a list (`list`, `get_comments`), a list of another thing (`list_runs` beside
//! `list_jobs`), or only a confirmation (`set`, `close`).
//!
//! The kind is read from the value itself, with the one verb table: a reading verb with a
//! singular object returns one item, a listing verb or a plural object returns a list, a
//! changing verb returns a confirmation. A selector only of changing verbs (`create`, `update`,
//! `delete`) is not reported: every value answers with the same kind, a confirmation.

use crate::lint::context::ToolView;
use crate::lint::rules::naming::words::{is_stop_word, singular, split_identifier};
use crate::lint::rules::schema::multi_action_tool::is_selector_name;
use crate::lint::rules::schema::{prose, shape};
use crate::spec::yaml::{Key, Node};
use crate::words::verbs::{self, VerbClass};

/// What one value of a selector returns.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ResultKind {
    /// One item of the named thing (`get`, `get_issue`).
    One(String),
    /// A list of the named thing (`list`, `get_comments`).
    Many(String),
    /// Only word that the change was made (`set`, `close`, `delete_run`).
    Confirmation,
}

impl ResultKind {
    fn describe(&self) -> String {
        match self {
            ResultKind::One(o) if o.is_empty() => "one item".to_owned(),
            ResultKind::One(o) => format!("one {o}"),
            ResultKind::Many(o) if o.is_empty() => "a list".to_owned(),
            ResultKind::Many(o) => format!("a list of {o}s"),
            ResultKind::Confirmation => "a confirmation".to_owned(),
        }
    }
}

/// A selector whose values return different kinds of result.
pub(crate) struct KindSwitch<'a> {
    /// The selecting parameter.
    pub key: &'a Key,
    /// Two values with different kinds, each with what it returns (`get` → "one item").
    pub examples: [(String, String); 2],
}

/// The first selector among a tool's top-level properties whose values return different kinds.
pub(crate) fn kind_switch<'a>(tool: &'a ToolView) -> Option<KindSwitch<'a>> {
    let props = tool.parameters()?.get("properties")?;
    for (key, node) in props.entries() {
        if shape::single_type(node).is_some_and(|t| t != "string") {
            continue;
        }
        let named = is_selector_name(&key.name);
        let mut values = shape::closed_values(node);
        // Values listed only in prose count for a parameter named like a selector.
        if values.is_empty() && named {
            let desc = node.get("description").and_then(Node::as_str).unwrap_or("");
            values = prose::listed_values(desc, &[]);
        }
        if values.len() < 2 {
            continue;
        }
        let kinds: Vec<(&String, ResultKind)> = values
            .iter()
            .filter_map(|v| kind_of(v).map(|k| (v, k)))
            .collect();
        // An enum not named like a selector must be made of verb phrases to be one.
        if !named && kinds.len() < values.len() {
            continue;
        }
        if let Some(examples) = differing(&kinds) {
            return Some(KindSwitch { key, examples });
        }
    }
    None
}

/// Two reading values that return different kinds: one item and a list, or lists of different
/// things. A read beside changes (`view` beside `create`) is the multi-action smell (TGS001):
/// each change answers with a confirmation, and that alone is not a result changing kind.
fn differing(kinds: &[(&String, ResultKind)]) -> Option<[(String, String); 2]> {
    let mut reads = kinds
        .iter()
        .filter(|(_, k)| !matches!(k, ResultKind::Confirmation));
    let (read_value, read_kind) = reads.next()?;
    let (other_value, other_kind) = reads.find(|(_, k)| k != read_kind)?;
    Some([
        ((*read_value).clone(), read_kind.describe()),
        ((*other_value).clone(), other_kind.describe()),
    ])
}

/// What a value returns, read from its verb and its object; `None` when its first word is not a
/// verb of the table, or a verb that says nothing about what it does.
fn kind_of(value: &str) -> Option<ResultKind> {
    let words = split_identifier(value);
    let (verb, rest) = words.split_first()?;
    let class = VerbClass::of(verb)?;
    let object: Vec<&str> = rest
        .iter()
        .map(String::as_str)
        .filter(|w| !is_stop_word(w))
        .collect();
    match class {
        VerbClass::Read => {
            let last = object.last().copied().unwrap_or("");
            let plural = !last.is_empty() && singular(last) != last;
            let mut thing: Vec<&str> = object.clone();
            if let Some(l) = thing.last_mut() {
                *l = singular(l);
            }
            let thing = thing.join(" ");
            if verbs::lists(verb) || plural {
                Some(ResultKind::Many(thing))
            } else {
                Some(ResultKind::One(thing))
            }
        }
        VerbClass::Other => None,
        _ => Some(ResultKind::Confirmation),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(values: &[&str]) -> Option<[(String, String); 2]> {
        let owned: Vec<String> = values.iter().map(|v| (*v).to_owned()).collect();
        let k: Vec<(&String, ResultKind)> = owned
            .iter()
            .filter_map(|v| kind_of(v).map(|k| (v, k)))
            .collect();
        differing(&k)
    }

    #[test]
    fn values_returning_different_kinds() {
        let [a, b] = kinds(&["get", "get_members", "get_owner"]).expect("one vs list");
        assert_eq!(a, ("get".to_owned(), "one item".to_owned()));
        assert_eq!(
            b,
            ("get_members".to_owned(), "a list of members".to_owned())
        );
        assert!(
            kinds(&["list_boards", "list_board_cards"]).is_some(),
            "lists of different things"
        );
        assert!(kinds(&["fetch_page", "search"]).is_some());
    }

    #[test]
    fn values_returning_one_kind() {
        assert!(
            kinds(&["create", "update", "delete"]).is_none(),
            "all confirmations"
        );
        assert!(
            kinds(&["show", "rename", "remove"]).is_none(),
            "one read beside changes is TGS001's"
        );
        assert!(
            kinds(&["list", "search"]).is_none(),
            "both lists of the same"
        );
        assert!(kinds(&["left_click", "double_click", "scroll"]).is_none());
        assert!(kinds(&["slice", "indentation"]).is_none(), "no verbs");
    }
}
