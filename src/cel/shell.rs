//! A reading of bash command lines for permission rules: the words, the program of every simple
//! command, and whether a line is one plain command ([`CommandLine::parse`]).
//!
//! The reading is conservative, never clever: it splits at every control operator — `;`, `&`,
//! `&&`, `|`, `||`, `|&`, line breaks (`\n` and `\r`), `(`, `)` — at redirections (`<`, `>` and
//! their forms), and at command and process substitutions (`$(…)`, `` `…` ``, `<(…)`, `>(…)`,
//! also inside double quotes), whose contents are read as command lines of their own. So no
//! separator ever survives inside a word, and a rule that inspects the words or the programs
//! sees every command bash would run. Quotes and backslashes are removed as bash removes them;
//! parameter, arithmetic, tilde, brace and pathname expansions are *not* performed, only noted
//! (a line with any of them is not [simple](CommandLine::is_simple)). Here-document bodies are
//! read as command lines too, which can only add programs to what a rule sees.
//!
//! Nesting is bounded: a line whose subshells and substitutions (`(`, `$(`, `$((`, `<(`, `>(`,
//! backticks, and those inside `${…}` or double quotes) open more than [`MAX_NESTING`] levels
//! deep is not read at all but refused with [`ShellError::TooDeep`], so hostile input cannot
//! exhaust the stack. A CEL call on such a line fails, and a permission rule that fails refuses
//! the call.

/// How many subshells and substitutions may be open at once. Real command lines nest a few
/// levels; the bound keeps the recursive reading far from the end of any thread's stack.
pub const MAX_NESTING: usize = 64;

/// A command line that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    /// Subshells and substitutions open more than [`MAX_NESTING`] levels deep.
    #[error(
        "the command line nests subshells or substitutions (`(`, `$(`, `$((`, backticks) more \
         than {limit} levels deep (at character {offset}); it is refused unread — split it or \
         nest less"
    )]
    TooDeep {
        /// The bound, [`MAX_NESTING`].
        limit: usize,
        /// Where (in characters from the start) the level past the bound opens.
        offset: usize,
    },
}

/// One word after quote removal, and what bash would still do to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    /// The text after quote and backslash removal.
    pub text: String,
    /// Whether bash would expand it further (`$`, `~`, `*?[`, braces, `$'…'`), so its text is
    /// not what the program receives.
    pub expands: bool,
}

/// Reserved words that stand before a command (`if true`, `then rm x`, `{ ls`, `! grep`,
/// `time make`) or close a compound one (`fi`, `done`, `}`): never the program itself. Other
/// reserved words (`for`, `case`, `select`, `function`, `coproc`) are reported as programs, so an
/// allow list that does not name them does not cover them.
pub const RESERVED_PREFIXES: &[&str] = &[
    "!", "{", "}", "if", "then", "else", "elif", "fi", "while", "until", "do", "done", "esac",
    "time",
];

/// One simple command: optional assignments, then the program and its arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Every word, assignments and reserved words included, in order.
    pub words: Vec<Word>,
}

impl SimpleCommand {
    /// The program: the first word after `NAME=value` assignments and the reserved words that
    /// open or close a compound command ([`RESERVED_PREFIXES`]). `None` for a command that is
    /// only assignments or such words (`fi`, `}`).
    pub fn program(&self) -> Option<&str> {
        let mut rest = self
            .words
            .iter()
            .skip_while(|w| is_assignment(&w.text))
            .map(|w| w.text.as_str());
        rest.find(|w| !RESERVED_PREFIXES.contains(w))
    }
}

/// A parsed command line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// Every simple command, substitutions' included, in the order they start.
    pub commands: Vec<SimpleCommand>,
    /// Control operators, redirections, substitutions, subshells and comments seen.
    pub operators: usize,
    /// A quote or substitution that never closes, or a line continuation.
    pub malformed: bool,
}

impl CommandLine {
    /// Reads a command line; [`ShellError::TooDeep`] past [`MAX_NESTING`] open levels.
    pub fn parse(line: &str) -> Result<CommandLine, ShellError> {
        let chars: Vec<char> = line.chars().collect();
        let mut out = CommandLine::default();
        let mut p = Parser {
            chars: &chars,
            pos: 0,
            depth: 0,
            too_deep: None,
            out: &mut out,
        };
        p.list(None);
        if let Some(offset) = p.too_deep {
            return Err(ShellError::TooDeep {
                limit: MAX_NESTING,
                offset,
            });
        }
        out.commands.retain(|c| !c.words.is_empty());
        Ok(out)
    }

    /// Every word of every command, in order.
    pub fn words(&self) -> Vec<String> {
        self.commands
            .iter()
            .flat_map(|c| c.words.iter().map(|w| w.text.clone()))
            .collect()
    }

    /// The program of every simple command, in order.
    pub fn programs(&self) -> Vec<String> {
        self.commands
            .iter()
            .filter_map(|c| c.program().map(str::to_owned))
            .collect()
    }

    /// Exactly one command with at least one word, and nothing else: no separator,
    /// redirection, substitution, subshell or comment, no word bash would expand, no
    /// assignment, no reserved word, nothing left open.
    pub fn is_simple(&self) -> bool {
        let [only] = self.commands.as_slice() else {
            return false;
        };
        self.operators == 0
            && !self.malformed
            && !only.words.is_empty()
            && only.words.iter().all(|w| !w.expands)
            && !is_assignment(&only.words[0].text)
            && only.program() == Some(only.words[0].text.as_str())
    }
}

/// `NAME=value` (or `NAME+=value`, `NAME[i]=value`) before a command.
fn is_assignment(w: &str) -> bool {
    let Some(eq) = w.find('=') else {
        return false;
    };
    let name = w[..eq].trim_end_matches('+');
    let name = name.split('[').next().unwrap_or(name);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Characters that end a word and start an operator when unquoted.
fn is_operator_char(c: char) -> bool {
    matches!(
        c,
        ';' | '&' | '|' | '(' | ')' | '<' | '>' | '\n' | '\r' | '`'
    )
}

/// Where a nested list ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Close {
    /// `)` of `$(…)`, `<(…)`, `>(…)` or a subshell.
    Paren,
    /// The closing backtick.
    Backtick,
}

struct Parser<'a> {
    chars: &'a [char],
    pos: usize,
    /// Nested lists open now (the top level is 0).
    depth: usize,
    /// Where the list past [`MAX_NESTING`] opened; once set, the reading stops.
    too_deep: Option<usize>,
    out: &'a mut CommandLine,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    /// Reads commands until `close` (consumed) or the end of input.
    fn list(&mut self, close: Option<Close>) {
        if close.is_some() {
            if self.depth >= MAX_NESTING {
                // Every loop of the reading ends at the end of input, so jumping there unwinds
                // the recursion without another level.
                self.too_deep.get_or_insert(self.pos);
                self.pos = self.chars.len();
                return;
            }
            self.depth += 1;
        }
        self.list_inner(close);
        if close.is_some() {
            self.depth -= 1;
        }
    }

    /// [`Parser::list`] once the level is counted.
    fn list_inner(&mut self, close: Option<Close>) {
        let mut current = SimpleCommand::default();
        // Where `current` goes, so that commands are listed in the order they start even when
        // a substitution inside one of its words adds commands first.
        let mut slot = self.reserve();
        loop {
            let Some(c) = self.peek() else {
                if close.is_some() {
                    self.out.malformed = true;
                }
                break;
            };
            match c {
                ' ' | '\t' => self.pos += 1,
                ')' if close == Some(Close::Paren) => {
                    self.pos += 1;
                    break;
                }
                '`' if close == Some(Close::Backtick) => {
                    self.pos += 1;
                    break;
                }
                '#' => {
                    // A comment runs to the end of the line.
                    self.out.operators += 1;
                    while self.peek().is_some_and(|c| c != '\n' && c != '\r') {
                        self.pos += 1;
                    }
                }
                '\\' if matches!(self.peek_at(1), Some('\n')) => {
                    // A line continuation joins two lines; bash drops it.
                    self.out.malformed = true;
                    self.pos += 2;
                }
                '\\' if matches!(self.peek_at(1), Some('`')) => {
                    // An escaped backtick nests a substitution inside backticks; read it as
                    // a substitution wherever it is (at worst a rule sees more commands).
                    self.pos += 1;
                }
                c if is_operator_char(c) => {
                    self.operator(c);
                    self.finish(slot, std::mem::take(&mut current));
                    slot = self.reserve();
                }
                _ => {
                    if let Some(w) = self.word() {
                        current.words.push(w);
                    }
                }
            }
        }
        self.finish(slot, current);
    }

    /// Reads one operator (at least one character), descending into what it opens.
    fn operator(&mut self, c: char) {
        self.out.operators += 1;
        let next = self.peek_at(1);
        match (c, next) {
            ('<' | '>', Some('(')) => {
                // Process substitution.
                self.pos += 2;
                self.list(Some(Close::Paren));
            }
            ('(', _) => {
                // A subshell (or `((`, read the same way).
                self.pos += 1;
                self.list(Some(Close::Paren));
            }
            ('`', _) => {
                self.pos += 1;
                self.list(Some(Close::Backtick));
            }
            (';' | '&' | '|' | '<' | '>', _) => {
                // `;;`, `&&`, `||`, `|&`, `>>`, `<<`, `<<<`, `>&`, `<&`, `&>`, `>|`, `<>`: one
                // operator, however many of these characters form it.
                while self
                    .peek()
                    .is_some_and(|c| matches!(c, ';' | '&' | '|' | '<' | '>'))
                {
                    self.pos += 1;
                }
            }
            _ => self.pos += 1,
        }
    }

    /// Reads one word, stopping at unquoted whitespace or an operator character. `None` when
    /// there is none: a redirection's file descriptor (`2>`), or nothing before a separator.
    fn word(&mut self) -> Option<Word> {
        let mut w = Word::default();
        let start = self.pos;
        let mut quoted = false;
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' => break,
                c if is_operator_char(c) => break,
                '\\' if self.peek_at(1) == Some('`') => {
                    // See `list`: the backtick is read as a substitution.
                    self.pos += 1;
                    break;
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => {
                            self.out.malformed = true;
                            self.pos += 1;
                        }
                        Some(n) => {
                            w.text.push(n);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '\'' => {
                    quoted = true;
                    self.pos += 1;
                    self.single_quoted(&mut w);
                }
                '"' => {
                    quoted = true;
                    self.pos += 1;
                    self.double_quoted(&mut w);
                }
                '$' => self.dollar(&mut w, false),
                '~' if self.pos == start => {
                    w.expands = true;
                    w.text.push(c);
                    self.pos += 1;
                }
                '*' | '?' | '[' | '{' | '}' => {
                    // Pathname and brace expansion. A lone `{` or `}` is a reserved word.
                    let alone = self.pos == start
                        && self
                            .peek_at(1)
                            .is_none_or(|n| n == ' ' || n == '\t' || is_operator_char(n));
                    if !(alone && matches!(c, '{' | '}')) {
                        w.expands = true;
                    }
                    w.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        // A redirection's file descriptor (`2>`) belongs to the operator, not to the words.
        let fd = self.peek().is_some_and(|c| c == '<' || c == '>')
            && self.pos > start
            && self.chars[start..self.pos].iter().all(char::is_ascii_digit);
        let nothing = w.text.is_empty() && !quoted && !w.expands;
        (!fd && !nothing).then_some(w)
    }

    /// After the opening `'`: everything up to the next `'` is literal.
    fn single_quoted(&mut self, w: &mut Word) {
        loop {
            match self.peek() {
                None => {
                    self.out.malformed = true;
                    return;
                }
                Some('\'') => {
                    self.pos += 1;
                    return;
                }
                Some(c) => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// After the opening `"`: literal except `\` before `$`, `` ` ``, `"`, `\` and a line
    /// break, and `$…` and backticks, which still expand and substitute.
    fn double_quoted(&mut self, w: &mut Word) {
        loop {
            match self.peek() {
                None => {
                    self.out.malformed = true;
                    return;
                }
                Some('"') => {
                    self.pos += 1;
                    return;
                }
                Some('\\') => match self.peek_at(1) {
                    Some('`') => {
                        // Read as a substitution, as outside quotes (see `list`).
                        self.pos += 1;
                    }
                    Some(n @ ('$' | '"' | '\\')) => {
                        w.text.push(n);
                        self.pos += 2;
                    }
                    Some('\n') => {
                        self.out.malformed = true;
                        self.pos += 2;
                    }
                    _ => {
                        w.text.push('\\');
                        self.pos += 1;
                    }
                },
                Some('`') => {
                    self.out.operators += 1;
                    w.expands = true;
                    self.pos += 1;
                    self.list(Some(Close::Backtick));
                }
                Some('$') => self.dollar(w, true),
                Some(c) => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// At a `$`: a substitution (read as a command list), `${…}`, `$'…'`, `$"…"`, a
    /// parameter, or a literal `$`.
    fn dollar(&mut self, w: &mut Word, quoted: bool) {
        match self.peek_at(1) {
            Some('(') => {
                // `$(…)` and `$((…))`: both read as command lists (arithmetic can hold
                // substitutions too).
                self.out.operators += 1;
                w.expands = true;
                self.pos += 2;
                self.list(Some(Close::Paren));
            }
            Some('{') => {
                w.expands = true;
                w.text.push_str("${");
                self.pos += 2;
                self.braced_parameter(w);
            }
            Some('\'') if !quoted => {
                // ANSI-C quoting: escapes make it something else than it reads.
                w.expands = true;
                self.pos += 2;
                self.single_quoted(w);
            }
            Some('"') if !quoted => {
                // Locale translation: a double-quoted string.
                w.expands = true;
                self.pos += 2;
                self.double_quoted(w);
            }
            Some(c) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                w.expands = true;
                w.text.push('$');
                self.pos += 1;
            }
            _ => {
                // A `$` before nothing expandable is literal.
                w.text.push('$');
                self.pos += 1;
            }
        }
    }

    /// After `${`: up to the matching `}`, with substitutions inside read as command lists.
    fn braced_parameter(&mut self, w: &mut Word) {
        let mut depth = 1usize;
        loop {
            match self.peek() {
                None => {
                    self.out.malformed = true;
                    return;
                }
                Some('}') => {
                    // Inner braces stay in the text: dropping them could join a `$` before
                    // one with a `(` after the reading stops, a word that looks like `$(`.
                    self.pos += 1;
                    w.text.push('}');
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                Some('{') => {
                    depth += 1;
                    w.text.push('{');
                    self.pos += 1;
                }
                Some('`') => {
                    self.out.operators += 1;
                    self.pos += 1;
                    self.list(Some(Close::Backtick));
                }
                Some('$') if self.peek_at(1) == Some('(') => {
                    self.out.operators += 1;
                    self.pos += 2;
                    self.list(Some(Close::Paren));
                }
                Some('\\') => {
                    // Kept as written (`\(` stays two characters), for the reason above.
                    w.text.extend(self.chars[self.pos..].iter().take(2));
                    self.pos += 2;
                }
                Some(c) if is_operator_char(c) => {
                    // bash refuses the line ("bad substitution"); a separator still separates.
                    self.out.malformed = true;
                    return;
                }
                Some(c) => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// A place for the next command in the output, so commands are listed in start order.
    fn reserve(&mut self) -> usize {
        self.out.commands.push(SimpleCommand::default());
        self.out.commands.len() - 1
    }

    /// Puts a finished command in its place (empty ones are dropped at the end).
    fn finish(&mut self, slot: usize, cmd: SimpleCommand) {
        if let Some(s) = self.out.commands.get_mut(slot) {
            *s = cmd;
        }
    }
}

#[cfg(test)]
mod tests;
