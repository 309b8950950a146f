//! TGN005 thin-description.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::words::{
    self, expand, singular, split_identifier, tokens, word_count,
};
use crate::lint::rules::schema::prose::sentences;
use crate::lint::rules::schema::unstable_result_shape::quote;
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::ThinDescription,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tool descriptions a model cannot choose the tool by: demonstrations, templates, and restated names that say nothing.",
    explanation: r#"Smell: vague description.

## What it does
Reports a tool description that does not tell a model what the tool does or what comes back, in
one of three forms:

- **Meta talk.** Every sentence only says that the tool demonstrates, simulates or helps with
  something, or that it is "a tool for" or an example of something ("Demonstrates how annotations
  can be used"), never what it does for the caller.
- **An unfilled template.** The description still holds a placeholder such as `{WINDOW}`,
  `{{count}}` or `${LIMIT}`: the text the model reads is not the text its author meant.
- **A restated name that explains nothing.** A short description (twelve words or fewer) whose
  words are the name's own, led by a verb that says no particular thing ("Handle a dialog",
  "Trigger a request for sampling"), or built around a noun that names no particular thing
  ("View the contents of a subdirectory", "Get the project data").

What does not count: a short description whose verb and object make the job plain ("Delete a
file", "Close the page", "Switches branches"), even without "returns" or "use when"; a long
description, however it starts, once one sentence says what the tool does; an empty description
(TGN003). With `lint.options.description_min_words` set (0, off, by default), descriptions with
fewer words are reported too, as a house style.

## Why is this bad?
Models choose between tools by their descriptions. "Handle a dialog" does not say whether the
dialog is accepted or dismissed; "View the repository map" does not say what a map holds; a
demonstration's description says what its author wanted to show, not what a call returns. The
model guesses, or never calls the tool.

## Example
```yaml
name: view_outline
description: View the project outline.
```

Use instead:
```yaml
name: view_outline
description: >-
  List the top-level symbols (functions, types, constants) of every source file in the project,
  one file per line with its symbols. Use it to find where something is defined before reading
  files; for a file's full text use `read_file`.
```
"#,
};

/// Words that start a sentence about the tool rather than about what it does.
const META_STARTS: &[&str] = &[
    "demonstrates",
    "demonstrate",
    "demonstrating",
    "a demonstration",
    "a demo",
    "demo of",
    "an example",
    "example of",
    "example tool",
    "simulates",
    "helps with",
    "helps you",
    "a helper",
    "a tool for",
    "a tool to",
    "a tool that",
    "tool for",
    "tools for",
    "utility for",
    "a utility",
];
/// Verbs that say no particular thing happens.
const EMPTY_VERBS: &[&str] = &[
    "handle",
    "handles",
    "manage",
    "manages",
    "process",
    "processes",
    "trigger",
    "triggers",
    "perform",
    "performs",
    "do",
    "does",
    "deal",
    "deals",
    "invoke",
    "invokes",
];
/// Nouns that name no particular thing.
const EMPTY_NOUNS: &[&str] = &["content", "contents", "data", "stuff", "thing", "things"];
/// Words that add nothing to a restated name.
const FILLER: &[&str] = &[
    "specified",
    "given",
    "current",
    "currently",
    "new",
    "existing",
    "specific",
    "selected",
    "provided",
    "single",
    "multiple",
];

/// Reports descriptions a model cannot choose the tool by.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let desc = tool.description();
    let Some(d) = &tool.spec.value.description else {
        return;
    };
    if desc.trim().is_empty() {
        return;
    }
    if let Some(why) = vague(tool.name, desc) {
        let help = if why.contains("placeholder") {
            "fill in what the placeholder stands for where the list is built, and say what the tool does and returns"
        } else {
            "say what the tool does to what, what it returns, and when to use it rather than a similar tool"
        };
        ctx.report(
            tool.span(d.range),
            format!("the description of `{}` {why}", tool.name),
        )
        .help(help);
        return;
    }
    let min = ctx.settings.options.description_min_words;
    let n = word_count(desc);
    if min > 0 && n < min {
        ctx.report(
            tool.span(d.range),
            format!(
                "the description of `{}` has {n} words (at least {min} expected)",
                tool.name
            ),
        )
        .help("say what the tool does, when to use it rather than a similar tool, and what it returns");
    }
}

/// Why a description says nothing a model can choose by, if it does not.
fn vague(name: &str, desc: &str) -> Option<String> {
    let all = sentences(desc);
    if !all.is_empty()
        && all.iter().all(|s| {
            let l = s.to_ascii_lowercase();
            META_STARTS.iter().any(|m| l.starts_with(m))
        })
    {
        return Some(format!(
            "only says what it demonstrates or is for (\"{}\"), not what it does or returns",
            quote(&all[0])
        ));
    }
    if let Some(p) = placeholder(desc) {
        return Some(format!(
            "holds an unfilled template placeholder (`{p}`): the model reads the template, not the text meant"
        ));
    }
    if word_count(desc) > 12 {
        return None;
    }
    let norm = |w: &str| singular(expand(w)).to_owned();
    let name_words: Vec<String> = split_identifier(name).iter().map(|w| norm(w)).collect();
    let content: Vec<String> = tokens(desc)
        .into_iter()
        .filter(|w| !words::is_stop_word(w))
        .collect();
    let lead = content.first()?.clone();
    let extras = content
        .iter()
        .filter(|w| {
            !name_words.contains(&norm(w))
                && !FILLER.contains(&w.as_str())
                && !EMPTY_NOUNS.contains(&w.as_str())
        })
        .count();
    let empty_verb = EMPTY_VERBS.contains(&lead.as_str()) && name_words.contains(&norm(&lead));
    let empty_noun = content.iter().find(|w| EMPTY_NOUNS.contains(&w.as_str()));
    let says_result = content.iter().any(|w| {
        matches!(
            w.as_str(),
            "return" | "returns" | "returning" | "output" | "outputs"
        )
    });
    if says_result {
        return None;
    }
    if empty_verb && extras <= 2 {
        return Some(format!(
            "restates its name around a verb that says no particular thing (\"{}\")",
            quote(desc.trim())
        ));
    }
    if let Some(noun) = empty_noun
        && extras <= 1
    {
        return Some(format!(
            "restates its name, and \"{noun}\" names no particular thing (\"{}\")",
            quote(desc.trim())
        ));
    }
    None
}

/// A template placeholder left in text: `{WINDOW}`, `{{count}}`, `${LIMIT}`.
fn placeholder(desc: &str) -> Option<&str> {
    let bytes = desc.as_bytes();
    let mut i = 0;
    while let Some(found) = desc[i..].find('{') {
        let start = i + found;
        i = start + 1;
        let double = bytes.get(start + 1) == Some(&b'{');
        let inner_start = if double { start + 2 } else { start + 1 };
        let Some(len) = desc[inner_start..].find('}') else {
            break;
        };
        let inner = &desc[inner_start..inner_start + len];
        let ident = !inner.is_empty()
            && inner.len() <= 40
            && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && inner
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic());
        let closes = !double || bytes.get(inner_start + len + 1) == Some(&b'}');
        let shouted = inner.chars().all(|c| !c.is_ascii_lowercase());
        let dollar = start > 0 && bytes[start - 1] == b'$';
        if ident && closes && (double || shouted || dollar) {
            let end = inner_start + len + if double { 2 } else { 1 };
            let from = if dollar { start - 1 } else { start };
            return desc.get(from..end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vague_descriptions() {
        assert!(vague("show_banner", "Demonstrates how banners can be styled.").is_some());
        assert!(vague("page_up", "moves the view up {PAGE} lines").is_some());
        assert!(vague("greet", "Says hello to {{name}}.").is_some());
        assert!(vague("modal_handle", "Handle a modal").is_some());
        assert!(
            vague(
                "trigger_sync_request",
                "Trigger a Request from the Client for Sync"
            )
            .is_some()
        );
        assert!(vague("view_outline", "View the project outline data").is_some());
        assert!(vague("view_folder", "View the contents of a folder").is_some());
    }

    #[test]
    fn plain_descriptions() {
        assert_eq!(vague("delete_file", "Delete a file"), None);
        assert_eq!(vague("page_close", "Close the page"), None);
        assert_eq!(vague("checkout", "Switches branches"), None);
        assert_eq!(vague("view_photo", "view an image file"), None);
        assert_eq!(
            vague(
                "get_user_profile",
                "Get detailed profile information for a user"
            ),
            None
        );
        assert_eq!(vague("render_city_map", "Render the city map"), None);
        assert_eq!(
            vague(
                "simulate_build",
                "Simulates a build. Demonstrates progress events. If `fail` is true, the build fails at step 2."
            ),
            None
        );
        assert_eq!(
            vague(
                "get_details",
                "Returns the details of a ticket: title, state, assignee."
            ),
            None
        );
        assert_eq!(
            vague("chart", "Renders `data` as a chart {\"type\": \"bar\"}."),
            None
        );
        assert_eq!(
            vague("run_shell", "Perform a shell command and return its output"),
            None
        );
    }
}
