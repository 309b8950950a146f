//! The verb table: every verb the linter and the compiler read in tool names and prose, with
//! what it says a tool does. Naming rules ask whether a word is a verb ([`is_verb`]) and
//! which verbs mean the same operation ([`synonyms`]); effect rules ask what the verb of a tool
//! name says ([`VerbClass::of`]); listing rules ask whether its object is a collection
//! ([`lists`]). One table answers all of them, so they cannot disagree about a word.
//!
//! Where the former lists disagreed (the naming rules' verbs, the effect rules' classes and the
//! naming rules' synonym groups), the table takes the union, and:
//! - a verb only the naming rules knew takes the class its meaning gives (`retrieve` reads,
//!   `import`, `restore`, `revert`, `lock` write, `invoke` runs, `share` and `subscribe` send;
//!   `kill`, `reboot`, `undo` and the like say nothing about effects, as `stop` and `restart`
//!   already did, and neither does `watch`, which observes or subscribes);
//! - a word only the effect rules knew that is as often a noun in names (`request` in
//!   `create_pull_request`, `shell`, `type`, `test`, `diff`) is a [`Verb::noun_too`]: a
//!   verb where a tool name's verb stands, but not a verb for [`is_verb`], which reads words
//!   anywhere in a name or a sentence (as the naming rules did before);
//! - every word of a synonym group is in the table (`make`, `obtain` and `change` gained a
//!   class; `new`, `store` and `tree` are nouns too).

use crate::ir::Effect;

/// What a verb says a tool does, ordered from mildest to strongest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum VerbClass {
    /// A verb that says nothing about effects (`convert`, `click`, `trigger`).
    Other,
    /// Reads (`get`, `list`, `search` ...).
    Read,
    /// Changes state (`create`, `update`, `set` ...).
    Write,
    /// Takes something away, often reversibly (`remove`, `unlink`).
    Remove,
    /// Acts outside the machine (`send`, `publish`, `deploy` ...).
    Send,
    /// Starts a program (`run`, `exec`, `shell` ...).
    Run,
    /// Deletes (`delete`, `drop`, `purge` ...).
    Delete,
}

/// One verb of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verb {
    /// The base form, lowercase.
    pub word: &'static str,
    /// What it says a tool does.
    pub class: VerbClass,
    /// Whether the word is as often a noun in names (`request`, `shell`): then it is a verb
    /// only where a tool name's verb stands.
    pub noun_too: bool,
}

const fn verb(word: &'static str, class: VerbClass) -> Verb {
    Verb {
        word,
        class,
        noun_too: false,
    }
}

const fn noun(word: &'static str, class: VerbClass) -> Verb {
    Verb {
        word,
        class,
        noun_too: true,
    }
}

use VerbClass::{Delete, Other, Read, Remove, Run, Send, Write};

/// Every verb, sorted by word (base forms only, so `closed` or `created` are not verbs).
const VERBS: &[Verb] = &[
    verb("add", Write),
    verb("analyze", Other),
    verb("append", Write),
    verb("apply", Other),
    verb("approve", Other),
    verb("archive", Write),
    verb("ask", Other),
    verb("assign", Write),
    verb("attach", Write),
    noun("bash", Run),
    verb("build", Other),
    verb("calculate", Other),
    verb("cancel", Other),
    noun("capture", Other),
    verb("cat", Read),
    verb("change", Write),
    verb("check", Other),
    verb("checkout", Write),
    verb("clear", Other),
    verb("click", Other),
    verb("clone", Write),
    verb("close", Other),
    verb("commit", Write),
    verb("compare", Other),
    verb("compile", Other),
    verb("compute", Other),
    verb("connect", Other),
    verb("convert", Other),
    verb("copy", Write),
    verb("count", Other),
    verb("create", Write),
    verb("delete", Delete),
    verb("deploy", Send),
    verb("describe", Read),
    verb("destroy", Delete),
    verb("detach", Write),
    noun("diff", Other),
    verb("disable", Write),
    verb("disconnect", Other),
    verb("download", Other),
    verb("drag", Other),
    verb("drop", Delete),
    verb("echo", Other),
    verb("edit", Write),
    noun("email", Send),
    verb("enable", Write),
    verb("erase", Delete),
    verb("eval", Other),
    verb("evaluate", Other),
    verb("exec", Run),
    verb("execute", Run),
    verb("export", Other),
    verb("fetch", Read),
    verb("fill", Other),
    verb("find", Read),
    verb("finish", Other),
    verb("fork", Write),
    noun("format", Other),
    verb("generate", Other),
    verb("get", Read),
    noun("glob", Read),
    verb("grep", Read),
    noun("handle", Other),
    verb("hide", Other),
    verb("hover", Other),
    verb("import", Write),
    verb("insert", Write),
    verb("inspect", Read),
    verb("install", Write),
    verb("invite", Send),
    verb("invoke", Run),
    verb("kill", Other),
    verb("lint", Other),
    verb("list", Read),
    verb("load", Other),
    verb("lock", Write),
    noun("login", Other),
    noun("logout", Other),
    verb("lookup", Read),
    verb("ls", Read),
    verb("make", Write),
    verb("mark", Write),
    verb("merge", Send),
    verb("mkdir", Write),
    verb("modify", Write),
    verb("mount", Write),
    verb("move", Write),
    verb("navigate", Other),
    noun("new", Write),
    verb("notify", Send),
    verb("obtain", Read),
    verb("open", Other),
    verb("parse", Other),
    verb("patch", Write),
    verb("plan", Other),
    verb("poll", Other),
    verb("post", Send),
    verb("press", Other),
    verb("publish", Send),
    verb("purge", Delete),
    verb("push", Send),
    verb("put", Write),
    verb("query", Read),
    verb("read", Read),
    verb("reboot", Other),
    verb("redo", Other),
    verb("refresh", Other),
    verb("reject", Other),
    verb("reload", Other),
    verb("remove", Remove),
    verb("rename", Write),
    verb("render", Other),
    verb("reopen", Other),
    verb("replace", Write),
    noun("reply", Send),
    noun("request", Other),
    verb("rerun", Other),
    verb("reset", Other),
    verb("resize", Other),
    verb("resolve", Other),
    verb("restart", Other),
    verb("restore", Write),
    verb("retrieve", Read),
    verb("retry", Other),
    verb("revert", Write),
    noun("review", Other),
    verb("rm", Remove),
    verb("run", Run),
    verb("save", Write),
    verb("scroll", Other),
    verb("search", Read),
    verb("select", Other),
    verb("send", Send),
    verb("set", Write),
    noun("sh", Run),
    verb("share", Send),
    noun("shell", Run),
    verb("show", Read),
    verb("simulate", Other),
    verb("spawn", Run),
    verb("start", Other),
    verb("stop", Other),
    noun("store", Write),
    verb("submit", Other),
    verb("subscribe", Send),
    noun("sum", Other),
    verb("summarize", Other),
    verb("sync", Other),
    verb("take", Other),
    verb("terminate", Other),
    noun("test", Other),
    verb("think", Other),
    verb("toggle", Write),
    noun("track", Other),
    verb("translate", Other),
    noun("tree", Read),
    verb("trigger", Other),
    verb("truncate", Delete),
    noun("type", Other),
    verb("undo", Other),
    verb("uninstall", Remove),
    verb("unlink", Remove),
    verb("unlock", Write),
    verb("unsubscribe", Send),
    verb("update", Write),
    verb("upload", Write),
    verb("upsert", Write),
    verb("validate", Other),
    verb("view", Read),
    verb("wait", Other),
    verb("watch", Other),
    verb("wipe", Delete),
    verb("write", Write),
];

/// Groups of verbs that mean the same operation to a model choosing a tool (`list` is in two).
const SYNONYMS: &[&[&str]] = &[
    &["fetch", "get", "load", "obtain", "read", "retrieve"],
    &["find", "list", "lookup", "query", "search"],
    &["list", "ls", "tree"],
    &["delete", "destroy", "erase", "remove"],
    &["add", "create", "make", "new"],
    &["change", "edit", "modify", "patch", "update"],
    &["put", "save", "store", "write"],
    &["exec", "execute", "invoke", "run"],
];

/// Verbs whose object is a collection (`list_files`, `search_issues`, `grep`): what they return
/// can grow without bound, and the object keeps its plural.
const LISTING: &[&str] = &[
    "find", "glob", "grep", "list", "lookup", "ls", "query", "search",
];

/// Every verb of the table, sorted by word (for the tests that check its readers).
#[cfg(test)]
pub fn all() -> &'static [Verb] {
    VERBS
}

/// The table's entry for a lowercase word.
pub fn lookup(word: &str) -> Option<&'static Verb> {
    VERBS
        .binary_search_by(|v| v.word.cmp(word))
        .ok()
        .and_then(|i| VERBS.get(i))
}

/// Whether a lowercase word is a verb wherever it stands (in a name or a sentence); words that
/// are as often nouns are not.
pub fn is_verb(word: &str) -> bool {
    lookup(word).is_some_and(|v| !v.noun_too)
}

/// Whether two different lowercase words are synonymous verbs (or listing forms: `list`, `ls`,
/// `tree`).
pub fn synonyms(a: &str, b: &str) -> bool {
    a != b && SYNONYMS.iter().any(|g| g.contains(&a) && g.contains(&b))
}

/// Whether a verb's object is a collection (`list`, `search`, `grep` ...).
pub fn lists(word: &str) -> bool {
    LISTING.contains(&word)
}

impl VerbClass {
    /// The class of a lowercase word where a tool name's verb stands, `None` when the word is
    /// not in the table.
    pub fn of(word: &str) -> Option<VerbClass> {
        lookup(word).map(|v| v.class)
    }

    /// Whether a tool named with this verb and declaring `effect` says two different things;
    /// `sandboxed` tells whether the tool runs under a sandbox profile.
    /// A `pure` tool never contradicts its verb: it computes from its arguments, so its verb
    /// names the computation (`add_numbers`, `create_uuid`, `remove_duplicates`).
    pub fn contradicts(self, effect: Effect, sandboxed: bool) -> bool {
        if effect == Effect::Pure {
            return false;
        }
        match self {
            VerbClass::Other => false,
            VerbClass::Read => matches!(
                effect,
                Effect::LocalWrite
                    | Effect::NetworkWrite
                    | Effect::ExternalSideEffect
                    | Effect::Destructive
            ),
            VerbClass::Write | VerbClass::Remove | VerbClass::Send => effect.is_read_only(),
            VerbClass::Run => effect.is_read_only() && !sandboxed,
            VerbClass::Delete => effect != Effect::Destructive,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_every_relation_names_its_verbs() {
        assert!(VERBS.windows(2).all(|w| w[0].word < w[1].word));
        for word in SYNONYMS.iter().flat_map(|g| g.iter()).chain(LISTING) {
            assert!(lookup(word).is_some(), "`{word}` is not in the verb table");
        }
    }

    #[test]
    fn verbs_classes_and_synonyms() {
        assert!(is_verb("delete"));
        assert!(!is_verb("closed"));
        assert_eq!(VerbClass::of("retrieve"), Some(VerbClass::Read));
        assert_eq!(VerbClass::of("wipe"), Some(VerbClass::Delete));
        assert_eq!(VerbClass::of("closed"), None);
        // A noun too: a tool name's verb, not a verb inside `create_pull_request`.
        assert_eq!(VerbClass::of("request"), Some(VerbClass::Other));
        assert!(!is_verb("request"));
        assert!(synonyms("get", "fetch"));
        assert!(synonyms("remove", "delete"));
        assert!(!synonyms("get", "get"));
        assert!(!synonyms("get", "delete"));
        assert!(lists("grep") && !lists("get"));
    }
}
