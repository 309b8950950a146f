//! The model providers toolgate writes tool lists for and reads replies from, and each one's rule
//! for tool names.
//!
//! A contract's name is the one the runtime knows. A provider that rejects it (OpenAI and
//! Anthropic refuse `.` and `:`, Gemini a leading digit, all but MCP more than 64 characters)
//! gets a stable stand-in: [`Provider::tool_name`]. The emitters write that name into the lists
//! the model reads, and the runtime's provider adapters map a reply's names back through
//! [`ProviderNames`], built with the same function — one rule, used in both directions.
//!
//! The stand-in: every character the provider rejects becomes `_`, a leading `_` is added when
//! the first character may not start a name, and a name still too long keeps its first
//! characters and ends in `_` and 8 hex digits of the original's BLAKE3 hash, so two long names
//! sharing a prefix stay apart. Names two tools would share are refused by the emitters
//! ([`ProviderNames::collisions`]); the runtime never guesses between them.

use std::borrow::Cow;
use std::collections::HashMap;

/// A model provider's tool-calling format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Provider {
    /// OpenAI Chat Completions (`tools`, `tool_calls`, `role: tool` messages).
    OpenaiChat,
    /// OpenAI Responses (`function_call` and `function_call_output` items).
    OpenaiResponses,
    /// Anthropic Messages (`tool_use` and `tool_result` blocks).
    Anthropic,
    /// MCP (`tools/list`, `tools/call` and `CallToolResult`).
    Mcp,
    /// Google Gemini (`functionDeclarations`, `functionCall` and `functionResponse` parts).
    Gemini,
}

/// Which characters a provider accepts in a tool name, and how many.
struct NameRule {
    first: fn(char) -> bool,
    rest: fn(char) -> bool,
    max: usize,
    pattern: &'static str,
}

fn word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn word_or_dot(c: char) -> bool {
    word(c) || c == '.'
}

fn letter_or_underscore(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn gemini_rest(c: char) -> bool {
    word_or_dot(c) || c == ':'
}

/// OpenAI (both APIs) and Anthropic: `^[a-zA-Z0-9_-]{1,64}$`.
const OPENAI_ANTHROPIC: NameRule = NameRule {
    first: word,
    rest: word,
    max: 64,
    pattern: "^[a-zA-Z0-9_-]{1,64}$",
};
/// Gemini: a letter or `_` first, then letters, digits, `_ . : -`; 64 (the portable limit).
const GEMINI: NameRule = NameRule {
    first: letter_or_underscore,
    rest: gemini_rest,
    max: 64,
    pattern: "^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$",
};
/// MCP (2025-11-25, SEP-986): `^[A-Za-z0-9._-]{1,128}$`.
const MCP: NameRule = NameRule {
    first: word_or_dot,
    rest: word_or_dot,
    max: 128,
    pattern: "^[A-Za-z0-9._-]{1,128}$",
};

/// Hex digits of the hash a shortened name ends with.
const HASH_DIGITS: usize = 8;

impl Provider {
    /// Every provider, in the order of the files a build writes.
    pub const ALL: &'static [Provider] = &[
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Mcp,
        Provider::OpenaiChat,
        Provider::OpenaiResponses,
    ];

    /// The name used on the command line and in file names.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenaiChat => "openai-chat",
            Provider::OpenaiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
            Provider::Mcp => "mcp",
            Provider::Gemini => "gemini",
        }
    }

    /// Parses [`Provider::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        Provider::ALL.iter().copied().find(|t| t.as_str() == s)
    }

    fn rule(self) -> &'static NameRule {
        match self {
            Provider::OpenaiChat | Provider::OpenaiResponses | Provider::Anthropic => {
                &OPENAI_ANTHROPIC
            }
            Provider::Gemini => &GEMINI,
            Provider::Mcp => &MCP,
        }
    }

    /// The provider's rule for tool names, as a regular expression (for messages).
    pub fn name_pattern(self) -> &'static str {
        self.rule().pattern
    }

    /// Whether the provider accepts a tool name as it is.
    pub fn accepts_name(self, name: &str) -> bool {
        let rule = self.rule();
        let mut chars = name.chars();
        let Some(c) = chars.next() else {
            return false;
        };
        (rule.first)(c) && chars.all(rule.rest) && name.chars().count() <= rule.max
    }

    /// The name a contract is called by at this provider: the contract's own when the provider
    /// accepts it, else its stand-in (see the module docs).
    pub fn tool_name(self, name: &str) -> Cow<'_, str> {
        if self.accepts_name(name) {
            return Cow::Borrowed(name);
        }
        let rule = self.rule();
        let mut out: String = name
            .chars()
            .map(|c| if (rule.rest)(c) { c } else { '_' })
            .collect();
        match out.chars().next() {
            Some(c) if (rule.first)(c) => {}
            _ => out.insert(0, '_'),
        }
        if out.chars().count() > rule.max {
            let hash = blake3::hash(name.as_bytes()).to_hex();
            let keep = rule.max - HASH_DIGITS - 1;
            out = out.chars().take(keep).collect();
            out.push('_');
            out.push_str(&hash[..HASH_DIGITS]);
        }
        Cow::Owned(out)
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The names of a set of contracts at one provider, both ways.
#[derive(Clone, Debug)]
pub struct ProviderNames {
    provider: Provider,
    /// Stand-in → contract name, for the names the provider required to change.
    back: HashMap<String, String>,
    /// Provider names more than one contract would be called by, with those contracts.
    collisions: Vec<(String, Vec<String>)>,
}

impl ProviderNames {
    /// The provider names of these contracts.
    pub fn new<'a>(provider: Provider, names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut by_provider_name: HashMap<String, Vec<String>> = HashMap::new();
        let mut back = HashMap::new();
        for name in names {
            let called = provider.tool_name(name);
            let owners = by_provider_name.entry(called.to_string()).or_default();
            if !owners.iter().any(|o| o == name) {
                owners.push(name.to_owned());
            }
            if let Cow::Owned(stand_in) = called {
                back.insert(stand_in, name.to_owned());
            }
        }
        let mut collisions: Vec<(String, Vec<String>)> = by_provider_name
            .into_iter()
            .filter(|(_, owners)| owners.len() > 1)
            .map(|(n, mut owners)| {
                owners.sort();
                (n, owners)
            })
            .collect();
        collisions.sort();
        // A name that stands for two tools maps back to neither: the call is refused as an
        // unknown tool naming both, rather than run against a guess.
        for (n, _) in &collisions {
            back.remove(n);
        }
        ProviderNames {
            provider,
            back,
            collisions,
        }
    }

    /// The provider.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The contract a name in a reply stands for: the stand-in's contract, else the name as
    /// written (an exact contract name, or one the runtime will report as unknown).
    pub fn contract_name<'a>(&'a self, called: &'a str) -> &'a str {
        self.back.get(called).map_or(called, String::as_str)
    }

    /// The name a contract is called by at the provider.
    pub fn provider_name<'a>(&self, contract: &'a str) -> Cow<'a, str> {
        self.provider.tool_name(contract)
    }

    /// Whether any contract is called by another name at the provider.
    pub fn renames_any(&self) -> bool {
        !self.back.is_empty()
    }

    /// Provider names that more than one contract would be called by, each with its contracts
    /// (sorted); a list holding them cannot be sent to the provider.
    pub fn collisions(&self) -> &[(String, Vec<String>)] {
        &self.collisions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_names_stay() {
        for p in Provider::ALL {
            assert_eq!(p.tool_name("read_file"), "read_file");
            assert!(matches!(p.tool_name("read_file"), Cow::Borrowed(_)));
        }
        assert_eq!(Provider::Mcp.tool_name("files.read"), "files.read");
        assert_eq!(Provider::Gemini.tool_name("files:read"), "files:read");
    }

    #[test]
    fn rejected_characters_and_starts_are_replaced() {
        assert_eq!(Provider::OpenaiChat.tool_name("files.read"), "files_read");
        assert_eq!(
            Provider::Anthropic.tool_name("weather:alerts"),
            "weather_alerts"
        );
        assert_eq!(Provider::Mcp.tool_name("weather:alerts"), "weather_alerts");
        assert_eq!(Provider::Gemini.tool_name("3day_outlook"), "_3day_outlook");
        assert_eq!(Provider::Gemini.tool_name("météo"), "m_t_o");
        assert_eq!(Provider::OpenaiResponses.tool_name(""), "_");
    }

    #[test]
    fn long_names_keep_a_prefix_and_a_hash() {
        let a = format!("{}_alpha", "x".repeat(70));
        let b = format!("{}_beta", "x".repeat(70));
        let (na, nb) = (
            Provider::OpenaiChat.tool_name(&a),
            Provider::OpenaiChat.tool_name(&b),
        );
        assert_eq!(na.chars().count(), 64);
        assert_ne!(na, nb);
        assert!(Provider::OpenaiChat.accepts_name(&na));
        assert_eq!(
            na,
            Provider::Anthropic.tool_name(&a),
            "same rule, same name"
        );
        // MCP takes 128.
        assert_eq!(Provider::Mcp.tool_name(&a), a);
    }

    #[test]
    fn every_stand_in_is_accepted_and_stable() {
        let names = [
            "a.b",
            "1x",
            "",
            "x y z",
            &"é".repeat(100),
            "ok-name",
            "a:b.c",
        ];
        for p in Provider::ALL {
            for n in names {
                let once = p.tool_name(n);
                assert!(p.accepts_name(&once), "{p} {n:?} -> {once:?}");
                assert_eq!(p.tool_name(&once), once, "a stand-in is its own name");
            }
        }
    }

    #[test]
    fn names_map_back_unless_two_tools_share_one() {
        let names = ProviderNames::new(Provider::OpenaiChat, ["docs.search", "read_file"]);
        assert_eq!(names.contract_name("docs_search"), "docs.search");
        assert_eq!(names.contract_name("read_file"), "read_file");
        assert_eq!(names.contract_name("nope"), "nope");
        assert!(names.renames_any());
        assert!(names.collisions().is_empty());

        let clash = ProviderNames::new(Provider::OpenaiChat, ["a.b", "a:b", "a_b"]);
        assert_eq!(
            clash.collisions(),
            [(
                "a_b".to_owned(),
                vec!["a.b".to_owned(), "a:b".to_owned(), "a_b".to_owned()]
            )]
        );
        assert_eq!(clash.contract_name("a_b"), "a_b");
        let none = ProviderNames::new(Provider::Mcp, ["read_file"]);
        assert!(!none.renames_any());
    }
}
