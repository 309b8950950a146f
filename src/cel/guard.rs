//! The pre-parse guard: refuses expressions whose shape alone could exhaust the parser's stack.
//!
//! The cel parser and every later walk over its tree (the checker, lint rules, the evaluator)
//! recurse once per tree level. Three shapes make levels: bracket nesting, runs of unary
//! operators, and chains, where each member step (`.a`), index (`[0]`), call (`f()`) or
//! left-associative operator (`+`, `==`, `in`, `?`) wraps everything before it in one more
//! node. `&&` and `||` are built as balanced trees, and a `,` starts a new argument, so they
//! end a chain. The guard reads the text once, outside string literals, and refuses the first
//! character at which any of the three passes its limit, with that character's position.

use super::SyntaxError;

/// Longest expression accepted (policies are one-liners; this bounds parser work).
pub const MAX_EXPRESSION_BYTES: usize = 16 * 1024;
/// Deepest bracket nesting accepted. The ANTLR-generated parser recurses per level, and
/// nesting is what made older versions blow up (cel-rust#305/#306); real rules nest a few levels.
pub const MAX_EXPRESSION_NESTING: usize = 32;
/// Deepest tree a chain of member steps, indexes, calls and operators may build, summed over
/// the open brackets (cel-go's parser stops at the same 250). A 5,000-step chain overflowed
/// an 8 MiB stack; 250 steps leave a 2 MiB worker thread wide room.
pub const MAX_CHAIN_DEPTH: usize = 250;

/// Refuses expressions whose shape alone could exhaust the parser, before parsing them.
pub fn guard(source: &str) -> Result<(), SyntaxError> {
    if source.len() > MAX_EXPRESSION_BYTES {
        return Err(SyntaxError {
            line: 1,
            column: 1,
            message: format!(
                "expression is {} bytes; at most {MAX_EXPRESSION_BYTES} are accepted",
                source.len()
            ),
        });
    }
    let chars: Vec<char> = source.chars().collect();
    let mut shape = Shape::default();
    let (mut line, mut column) = (1usize, 0usize);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        column += 1;
        if c == '\n' {
            line += 1;
            column = 0;
        }
        let at = |message: String| SyntaxError {
            line,
            column,
            message,
        };
        if c == '\'' || c == '"' {
            let raw = is_raw_prefix(&chars, i);
            let end = string_end(&chars, i, raw);
            // Positions inside the literal still advance the line and column.
            for &s in &chars[i + 1..end] {
                column += 1;
                if s == '\n' {
                    line += 1;
                    column = 0;
                }
            }
            shape.unary_run = 0;
            i = end;
            continue;
        }
        let next = chars.get(i + 1).copied();
        let mut width = 1;
        match c {
            '(' | '[' | '{' => {
                shape.step();
                shape.open();
            }
            ')' | ']' | '}' => shape.close(),
            ',' => shape.end_chain(),
            '&' | '|' if next == Some(c) => {
                shape.end_chain();
                width = 2;
            }
            '.' | '+' | '*' | '/' | '%' | '?' => shape.step(),
            '-' => shape.step(),
            '=' | '<' | '>' => {
                shape.step();
                if next == Some('=') {
                    width = 2;
                }
            }
            '!' if next == Some('=') => {
                shape.step();
                width = 2;
            }
            _ if is_ident_start(c) && (i == 0 || !is_ident(chars[i - 1])) => {
                let len = chars[i..].iter().take_while(|&&c| is_ident(c)).count();
                if chars[i..i + len] == ['i', 'n'] {
                    shape.step();
                }
                width = len;
            }
            _ => {}
        }
        shape.unary_run = if c == '!' && next != Some('=') || c == '-' {
            shape.unary_run + 1
        } else if c.is_whitespace() {
            shape.unary_run
        } else {
            0
        };
        if shape.max_nesting > MAX_EXPRESSION_NESTING || shape.unary_run > MAX_EXPRESSION_NESTING {
            return Err(at(format!(
                "expression nests deeper than {MAX_EXPRESSION_NESTING} levels"
            )));
        }
        if shape.chain_depth > MAX_CHAIN_DEPTH {
            return Err(at(format!(
                "expression chains more than {MAX_CHAIN_DEPTH} member steps, indexes, calls and \
                 operators in one operand; split it into several rules or use `all()`/`exists()`"
            )));
        }
        // Skip the rest of a two-character operator or an identifier; none holds a newline.
        column += width - 1;
        i += width;
    }
    Ok(())
}

/// The running shape of an expression: nesting, unary runs and chain length per open bracket.
#[derive(Default)]
struct Shape {
    /// Chain steps at each open bracket level, outermost first (the top level is implicit).
    levels: Vec<usize>,
    /// Steps at the current (innermost) level.
    current: usize,
    /// Steps summed over every open level: the depth of the tree path being read.
    chain_depth: usize,
    /// Deepest bracket nesting seen.
    max_nesting: usize,
    /// Unary operators in a row.
    unary_run: usize,
}

impl Shape {
    fn step(&mut self) {
        self.current += 1;
        self.chain_depth += 1;
    }

    fn open(&mut self) {
        self.levels.push(self.current);
        self.current = 0;
        self.max_nesting = self.max_nesting.max(self.levels.len());
    }

    fn close(&mut self) {
        self.chain_depth -= self.current;
        // An unbalanced `)` is the parser's to report; the guard only keeps its count sane.
        self.current = self.levels.pop().unwrap_or(0);
    }

    fn end_chain(&mut self) {
        self.chain_depth -= self.current;
        self.current = 0;
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether the quote at `i` opens a raw string (`r'…'`, `br'…'`, `rb'…'`), where a backslash
/// escapes nothing: reading it as an escape would let the rest of the expression hide from the
/// guard inside what it takes for a string.
fn is_raw_prefix(chars: &[char], i: usize) -> bool {
    let prefix: String = chars[..i]
        .iter()
        .rev()
        .take_while(|&&c| is_ident(c))
        .collect::<String>()
        .to_ascii_lowercase();
    // Reversed, so `br` reads `rb`.
    matches!(prefix.as_str(), "r" | "rb" | "br")
}

/// The index just past the string literal whose opening quote is at `start` (or the end of the
/// text when it is unterminated); `'''` and `"""` open triple-quoted strings.
fn string_end(chars: &[char], start: usize, raw: bool) -> usize {
    let q = chars[start];
    let triple = chars.get(start + 1) == Some(&q) && chars.get(start + 2) == Some(&q);
    let mut i = start + if triple { 3 } else { 1 };
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && !raw {
            i += 2;
            continue;
        }
        if c == q {
            if !triple {
                return i + 1;
            }
            if chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q) {
                return i + 3;
            }
        }
        i += 1;
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::compile;

    #[test]
    fn shapes_that_exhaust_parsers_are_refused_early() {
        let motif = "!!(!!!!!!(!!!!(((((!!(!!(!!!!((";
        let e = compile(&(motif.repeat(8) + "1")).unwrap_err();
        assert!(e[0].message.contains("nests deeper"), "{e:?}");
        assert!(compile(&"x".repeat(MAX_EXPRESSION_BYTES + 1)).is_err());
        // Brackets inside strings do not count.
        assert!(compile(&format!("'{}' == 'x'", "(".repeat(100))).is_ok());
    }

    #[test]
    fn long_flat_expressions_parse_without_overflowing_the_stack() {
        let chain = vec!["args.x == 1"; 1000].join(" && ");
        assert!(chain.len() < MAX_EXPRESSION_BYTES);
        let r = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || compile(&chain).is_ok())
            .unwrap()
            .join();
        assert!(matches!(r, Ok(true)), "{r:?}");
    }

    fn refused_at(expr: &str) -> (usize, usize, String) {
        let e = guard(expr).unwrap_err();
        (e.line, e.column, e.message)
    }

    #[test]
    fn chains_past_the_limit_are_refused_at_the_step_that_passes_it() {
        for (expr, column) in [
            // `args.obj` is one step; the dot of the 250th `.a` is the 251st.
            (format!("args.obj{} == 1", ".a".repeat(5000)), 9 + 2 * 249),
            (format!("args.obj{} == 1", "[0]".repeat(5000 / 2)), 0),
            (format!("args.obj{} == 1", ".f()".repeat(5000 / 2)), 0),
            (format!("1{} == 1", " + 1".repeat(5000 / 2)), 0),
            (format!("true{}", " ? 1 : true".repeat(1000)), 0),
            (format!("1{}", " in [1]".repeat(1000)), 0),
        ] {
            let (line, col, message) = refused_at(&expr);
            assert_eq!(line, 1, "{expr:.40}");
            assert!(
                message.starts_with("expression chains more than 250"),
                "{message}"
            );
            if column > 0 {
                assert_eq!(col, column, "{expr:.40}: {message}");
            }
        }
    }

    #[test]
    fn chains_inside_arguments_add_to_the_call_they_are_in() {
        // 200 steps outside and 100 inside the call: one path 300 deep.
        let expr = format!("args{}.f(args{})", ".a".repeat(200), ".b".repeat(100));
        assert!(guard(&expr).is_err());
        // Separate arguments and `&&` operands are separate paths.
        let expr = format!("f(args{0}, args{0})", ".a".repeat(200));
        assert!(guard(&expr).is_ok());
        let expr = vec![format!("args{} == 1", ".a".repeat(200)); 5].join(" && ");
        assert!(guard(&expr).is_ok());
        // A closed bracket's inner chain no longer counts.
        let expr = format!("f(args{}){}", ".a".repeat(200), ".b".repeat(200));
        assert!(guard(&expr).is_ok());
    }

    #[test]
    fn string_literals_cannot_hide_a_chain() {
        let chain = ".a".repeat(5000);
        for expr in [
            format!("r'\\' + args{chain} == r'\\'"),
            format!("'''x'y''' + args{chain} == 1"),
            format!("\"\"\"x\"y\"\"\" + args{chain} == 1"),
            format!("'\\'' + args{chain} == 1"),
        ] {
            assert!(guard(&expr).is_err(), "{expr:.40}");
        }
        // A long chain written inside a string is text, not a chain.
        assert!(guard(&format!("args.s == '{chain}'")).is_ok());
        assert!(guard(&format!("args.s == r'{chain}'")).is_ok());
    }

    #[test]
    fn positions_count_lines_inside_and_outside_strings() {
        let expr = format!("'a\nb' ==\n  args{}", ".a".repeat(300));
        let (line, column, _) = refused_at(&expr);
        assert_eq!((line, column), (3, 7 + 2 * 249));
    }

    /// The longest accepted member chain compiles and evaluates on a 2 MiB thread, the stack of a
    /// tokio worker, in a debug build.
    #[test]
    fn the_deepest_accepted_chain_runs_on_a_worker_stack() {
        // `args.obj` and `==` are two steps.
        let expr = format!("args.obj{} == 1", ".a".repeat(MAX_CHAIN_DEPTH - 2));
        assert!(guard(&expr).is_ok(), "{:?}", guard(&expr));
        let r = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || {
                let program = compile(&expr).map_err(|e| format!("{e:?}"))?;
                let args = serde_json::json!({"obj": {"a": 1}});
                let b = crate::cel::Bindings {
                    args: &args,
                    tool_name: "t",
                    tool_effect: "pure",
                    tool_version: 1,
                    context: "ci",
                    workspace: "/w",
                };
                let ev = crate::cel::Evaluator::new(&b).map_err(|e| e.to_string())?;
                // `obj.a.a` is a missing key: an evaluation error, reached without overflow.
                Ok::<_, String>(ev.condition(&program).is_err())
            })
            .unwrap()
            .join();
        assert!(matches!(r, Ok(Ok(true))), "{r:?}");
    }
}
