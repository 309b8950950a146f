//! What names say: words of a tool or parameter name, the verb a tool name leads with, and the
//! parameter names that carry secrets, credentials, paths or page bounds. Shared by the effect
//! and runtime-policy rules; pure string functions with their own tests.

pub(crate) use crate::words::split_identifier as words;

pub(crate) use crate::words::verbs::VerbClass;

/// The verb a tool name is built around, and its class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ToolVerb {
    /// The verb as written (lowercase).
    pub word: String,
    /// What it says.
    pub class: VerbClass,
}

/// The verb of a tool name: its first word, else its second (after a namespace such as
/// `browser_` or `git_`), else its last (`issue_read`). A verb after `or`/`and`
/// (`get_or_create`, `find_and_replace`) counts too; the strongest wins.
pub(crate) fn tool_verb(name: &str) -> Option<ToolVerb> {
    let w = words(name);
    let last = w.len().checked_sub(1)?;
    let primary = [0, 1, last]
        .into_iter()
        .filter(|&i| i <= last)
        .find_map(|i| VerbClass::of(&w[i]).map(|class| (i, class)))?;
    let mut best = ToolVerb {
        word: w[primary.0].clone(),
        class: primary.1,
    };
    for pair in w.windows(2) {
        if (pair[0] == "or" || pair[0] == "and")
            && let Some(class) = VerbClass::of(&pair[1])
            && class > best.class
        {
            best = ToolVerb {
                word: pair[1].clone(),
                class,
            };
        }
    }
    Some(best)
}

/// Whether a tool name is built around a listing or searching verb.
pub(crate) fn is_search_like(name: &str) -> bool {
    tool_verb(name).is_some_and(|v| crate::words::verbs::lists(&v.word))
}

/// What a parameter name says it carries, when it is secret.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SecretKind {
    /// Authenticates the tool to a service (API keys, access tokens): belongs in the
    /// environment, never in the model's arguments.
    Credential,
    /// A secret or personal value the model may legitimately pass (a password to type into a
    /// form, a card number): must be redacted from logs and traces.
    Sensitive,
}

/// Words that turn `token` into a count or a page handle (`max_tokens`, `next_page_token`).
const NOT_SECRET_TOKEN: &[&str] = &[
    "max",
    "min",
    "count",
    "limit",
    "page",
    "next",
    "prev",
    "previous",
    "continuation",
    "cursor",
    "num",
    "number",
    "total",
    "usage",
    "budget",
    "estimate",
    "type",
    "kind",
    "input",
    "output",
    "completion",
    "prompt",
    "sync",
    "pagination",
    "offset",
    "length",
    "len",
    "id",
    "ids",
    "position",
    "index",
];

/// Words that make `auth` a setting rather than a secret (`auth_type`, `auth_url`).
const NOT_SECRET_AUTH: &[&str] = &[
    "type", "method", "mode", "scheme", "provider", "url", "uri", "endpoint", "server", "flow",
    "required", "enabled", "status", "kind",
];

/// Whether a parameter name says it holds a secret, and which kind.
pub(crate) fn secret_kind(name: &str) -> Option<SecretKind> {
    let w = words(name);
    let has = |s: &str| w.iter().any(|x| x == s);
    let has_any = |list: &[&str]| w.iter().any(|x| list.contains(&x.as_str()));
    let joined = w.concat();
    // Credentials first: a `client_secret` is a credential even though it contains `secret`.
    let key_credential =
        has("key") && has_any(&["api", "access", "secret", "private", "signing", "ssh"]);
    if key_credential
        || matches!(
            joined.as_str(),
            "apikey" | "apitoken" | "accesskey" | "secretkey" | "privatekey" | "clientsecret"
        )
        || (has("token") && !has_any(NOT_SECRET_TOKEN))
        || has_any(&["bearer", "authorization", "credential", "credentials"])
        || (has("auth") && !has_any(NOT_SECRET_AUTH))
        || (has("secret") && has("client"))
    {
        return Some(SecretKind::Credential);
    }
    let card = has("card") && has_any(&["number", "num", "credit", "cvv", "cvc"]);
    let ssn = has("ssn") || (has("social") && has("security"));
    if card
        || ssn
        || has_any(&[
            "password",
            "passwd",
            "passphrase",
            "secret",
            "cvv",
            "cvc",
            "otp",
            "totp",
            "cookie",
            "cookies",
        ])
    {
        return Some(SecretKind::Sensitive);
    }
    None
}

/// Words that make a file-ish name a value rather than a path (`file_text`, `file_type`).
const NOT_A_PATH: &[&str] = &[
    "text", "content", "contents", "data", "body", "type", "types", "size", "count", "pattern",
    "patterns", "glob", "format", "mode", "encoding",
];

/// Whether a parameter name says it holds a file or directory path.
pub(crate) fn is_path_like(name: &str) -> bool {
    let w = words(name);
    let pathish = w.iter().any(|x| {
        matches!(
            x.as_str(),
            "path"
                | "paths"
                | "file"
                | "files"
                | "filename"
                | "filepath"
                | "filepaths"
                | "dir"
                | "dirs"
                | "directory"
                | "directories"
                | "folder"
                | "dirpath"
        )
    });
    pathish && !w.iter().any(|x| NOT_A_PATH.contains(&x.as_str()))
}

/// Whether a parameter name bounds how much a call returns (`limit`, `max_results`, `page`,
/// `cursor`, `offset`, `head`).
pub(crate) fn is_page_bound(name: &str) -> bool {
    let w = words(name);
    if w.first().is_some_and(|f| f == "max" || f == "maximum") || name == "n" {
        return true;
    }
    w.iter().any(|x| {
        matches!(
            x.as_str(),
            "limit"
                | "page"
                | "pages"
                | "cursor"
                | "offset"
                | "after"
                | "before"
                | "top"
                | "first"
                | "skip"
                | "head"
                | "tail"
                | "count"
                | "pagination"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Effect;

    #[test]
    fn splits_snake_kebab_and_camel_case() {
        assert_eq!(words("get_file_contents"), ["get", "file", "contents"]);
        assert_eq!(
            words("get-annotated-message"),
            ["get", "annotated", "message"]
        );
        assert_eq!(words("getHTTPStatus"), ["get", "http", "status"]);
        assert_eq!(words("perPage"), ["per", "page"]);
        assert_eq!(words("admin.tools.list"), ["admin", "tools", "list"]);
        assert_eq!(words("ipv4Address"), ["ipv4", "address"]);
    }

    /// The effect rules and the naming rules read one table: a tool name's verb has the table's
    /// class, and a word is a verb inside names exactly when the table says it is not a noun
    /// too.
    #[test]
    fn the_effect_and_naming_rules_read_the_one_verb_table() {
        for v in crate::words::verbs::all() {
            let name = format!("{}_widgets", v.word);
            assert_eq!(
                tool_verb(&name),
                Some(ToolVerb {
                    word: v.word.to_owned(),
                    class: v.class
                }),
                "{name}"
            );
            assert_eq!(
                crate::lint::rules::naming::words::is_verb(v.word),
                !v.noun_too,
                "{}",
                v.word
            );
        }
    }

    #[test]
    fn finds_the_verb_first_second_or_last() {
        let v = |n: &str| tool_verb(n).map(|v| (v.word, v.class));
        assert_eq!(
            v("delete_branch"),
            Some(("delete".into(), VerbClass::Delete))
        );
        assert_eq!(v("issue_read"), Some(("read".into(), VerbClass::Read)));
        assert_eq!(v("file_delete"), Some(("delete".into(), VerbClass::Delete)));
        assert_eq!(v("git_commit"), Some(("commit".into(), VerbClass::Write)));
        assert_eq!(
            v("browser_pdf_save"),
            Some(("save".into(), VerbClass::Write))
        );
        assert_eq!(v("getUser"), Some(("get".into(), VerbClass::Read)));
        assert_eq!(
            v("mark_all_notifications_read"),
            Some(("mark".into(), VerbClass::Write))
        );
        assert_eq!(
            v("get_or_create_label"),
            Some(("create".into(), VerbClass::Write))
        );
        assert_eq!(
            v("single_find_and_replace"),
            Some(("replace".into(), VerbClass::Write))
        );
        assert_eq!(v("browser_click"), Some(("click".into(), VerbClass::Other)));
        assert_eq!(v("sql_db_list_tables"), None);
        assert_eq!(v(""), None);
    }

    #[test]
    fn verb_and_effect_contradictions() {
        assert!(VerbClass::Read.contradicts(Effect::Destructive, false));
        assert!(!VerbClass::Read.contradicts(Effect::NetworkRead, false));
        assert!(!VerbClass::Read.contradicts(Effect::ProcessExecution, false));
        assert!(VerbClass::Write.contradicts(Effect::ReadOnly, false));
        assert!(!VerbClass::Write.contradicts(Effect::Destructive, false));
        assert!(VerbClass::Delete.contradicts(Effect::LocalWrite, false));
        assert!(!VerbClass::Delete.contradicts(Effect::Destructive, false));
        assert!(VerbClass::Run.contradicts(Effect::ReadOnly, false));
        assert!(!VerbClass::Run.contradicts(Effect::ReadOnly, true));
        assert!(!VerbClass::Write.contradicts(Effect::Pure, false));
        assert!(!VerbClass::Delete.contradicts(Effect::Pure, false));
    }

    #[test]
    fn secrets_without_false_alarms() {
        use SecretKind::*;
        for (name, kind) in [
            ("password", Some(Sensitive)),
            ("db_passwd", Some(Sensitive)),
            ("client_secret", Some(Credential)),
            ("secret", Some(Sensitive)),
            ("api_key", Some(Credential)),
            ("apiKey", Some(Credential)),
            ("apikey", Some(Credential)),
            ("access_key", Some(Credential)),
            ("private_key", Some(Credential)),
            ("token", Some(Credential)),
            ("access_token", Some(Credential)),
            ("authToken", Some(Credential)),
            ("auth", Some(Credential)),
            ("Authorization", Some(Credential)),
            ("credentials", Some(Credential)),
            ("ssn", Some(Sensitive)),
            ("card_number", Some(Sensitive)),
            ("cvv", Some(Sensitive)),
            ("max_tokens", None),
            ("maxTokens", None),
            ("max_output_tokens", None),
            ("token_count", None),
            ("page_token", None),
            ("next_page_token", None),
            ("nextPageToken", None),
            ("cursor", None),
            ("author", None),
            ("auth_type", None),
            ("key", None),
            ("keys", None),
            ("monkey", None),
            ("tokenizer", None),
            ("passage", None),
            ("secretary_name", None),
        ] {
            assert_eq!(secret_kind(name), kind, "{name}");
        }
    }

    #[test]
    fn paths_and_page_bounds() {
        for p in [
            "path",
            "file_path",
            "filePath",
            "filepath",
            "dir",
            "dirPath",
            "directory_path",
            "filename",
            "paths",
        ] {
            assert!(is_path_like(p), "{p}");
        }
        for p in ["file_text", "profile", "content", "file_type", "pattern"] {
            assert!(!is_path_like(p), "{p}");
        }
        for p in [
            "limit",
            "max_results",
            "maxResults",
            "perPage",
            "page_size",
            "cursor",
            "offset",
            "max_count",
            "head",
            "n",
        ] {
            assert!(is_page_bound(p), "{p}");
        }
        for p in ["query", "path", "pattern", "recursive"] {
            assert!(!is_page_bound(p), "{p}");
        }
    }
}
