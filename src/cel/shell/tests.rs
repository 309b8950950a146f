//! The shell reading's tests: fixed cases, and properties over generated lines.

use super::*;
use proptest::prelude::*;

fn words(s: &str) -> Vec<String> {
    CommandLine::parse(s).expect("shallow line").words()
}

fn programs(s: &str) -> Vec<String> {
    CommandLine::parse(s).expect("shallow line").programs()
}

fn simple(s: &str) -> bool {
    CommandLine::parse(s).expect("shallow line").is_simple()
}

#[test]
fn quotes_and_escapes_are_removed() {
    assert_eq!(
        words(r#"git commit -m "a b" 'c d' e\ f"#),
        ["git", "commit", "-m", "a b", "c d", "e f"]
    );
    assert_eq!(words("  "), Vec::<String>::new());
    assert_eq!(words("cat ''"), ["cat", ""]);
    assert_eq!(
        words(r#"echo "a;b" 'c|d' e\;f"#),
        ["echo", "a;b", "c|d", "e;f"]
    );
}

#[test]
fn every_separator_splits() {
    for line in [
        "ls;rm x",
        "ls&rm x",
        "ls&&rm x",
        "ls|rm x",
        "ls||rm x",
        "ls|&rm x",
        "ls\nrm x",
        "ls\rrm x",
        "ls\r\nrm x",
        "(ls)rm x",
        "ls $(rm x)",
        "ls `rm x`",
        "ls \"$(rm x)\"",
        "ls \"`rm x`\"",
        "ls <(rm x)",
        "ls >(rm x)",
        "ls ${a:-$(rm x)}",
        "ls $((1+$(rm x)))",
    ] {
        let p = programs(line);
        assert!(p.contains(&"rm".to_owned()), "{line:?}: {p:?}");
        assert!(p.contains(&"ls".to_owned()), "{line:?}: {p:?}");
        assert!(!simple(line), "{line:?}");
        for w in words(line) {
            assert!(
                !w.contains([';', '&', '|', '(', ')', '\n', '\r', '`']),
                "{line:?}: {w:?}"
            );
        }
    }
}

#[test]
fn programs_skip_assignments_and_reserved_words() {
    assert_eq!(programs("A=1 B=2 make test"), ["make"]);
    assert_eq!(programs("if true; then rm -r x; fi"), ["true", "rm"]);
    assert_eq!(programs("{ ls; cat a; }"), ["ls", "cat"]);
    assert_eq!(programs("! grep x f"), ["grep"]);
    assert_eq!(programs("for f in a; do cat $f; done"), ["for", "cat"]);
    assert_eq!(programs("x=$(whoami)"), ["whoami"]);
    assert_eq!(
        programs("echo `echo \\`rm x\\``"),
        ["echo", "echo", "rm"],
        "an escaped backtick nests a substitution"
    );
}

#[test]
fn redirections_are_operators_and_their_targets_words() {
    assert_eq!(words("cat < .env"), ["cat", ".env"]);
    assert_eq!(words("cat<.env"), ["cat", ".env"]);
    assert_eq!(words("make 2>&1 >log"), ["make", "1", "log"]);
    assert!(!simple("ls > f"));
    assert!(!simple("ls 2>/dev/null"));
}

#[test]
fn simple_means_one_plain_command() {
    for yes in [
        "ls -la src",
        "cat 'a b'",
        "wc -l src/a.py",
        "echo \"x y\"",
        "pwd",
    ] {
        assert!(simple(yes), "{yes:?}");
    }
    for no in [
        "",
        "   ",
        "ls; rm x",
        "ls\ntouch x",
        "ls $(rm x)",
        "ls `rm x`",
        "ls > f",
        "cat ~/.ssh/id_rsa",
        "cat $HOME/x",
        "cat *.pem",
        "cat src/{a,b}",
        "cat $'\\x2eenv'",
        "A=1 ls",
        "LD_PRELOAD=x ls",
        "{ ls; }",
        "if ls; then :; fi",
        "ls # comment",
        "cat 'unterminated",
        "ls \\\n-la",
        "(ls)",
    ] {
        assert!(!simple(no), "{no:?}");
    }
}

#[test]
fn comments_end_at_the_line_break() {
    assert_eq!(programs("ls # ; rm x\ncat y"), ["ls", "cat"]);
    assert_eq!(words("echo a#b"), ["echo", "a#b"]);
}

#[test]
fn a_bad_substitution_in_quotes_hides_no_substitution() {
    // Found by `quotes_do_not_hide_substitutions`: the inner `{` was dropped from the text, so
    // `$` and the `(` read after the bad substitution stopped made a word holding `$(`.
    for line in ["\"${${(\"", " \"${${(\"", "\"${$\\(\"", "echo ${a{b}"] {
        for w in words(line) {
            assert!(!w.contains("$("), "{line:?} gave {w:?}");
        }
    }
    assert_eq!(words("echo ${a{b}c}"), ["echo", "${a{b}c}"]);
}

/// Every opener of a nested list, and what closes it.
const OPENERS: &[(&str, &str)] = &[
    ("(", ")"),
    ("$(", ")"),
    ("$((", "))"),
    // Backticks do not nest in themselves (the second closes the first); inside `$(` they do.
    ("`$(", ")`"),
    ("<(", ")"),
    ("${a:-$(", ")}"),
    ("\"$(", ")\""),
];

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    // 50,000 levels: far past the bound, and far past what the default 2 MiB test thread's
    // stack held before the bound.
    for (open, close) in OPENERS {
        let line = format!("{}ls{}", open.repeat(50_000), close.repeat(50_000));
        let err = CommandLine::parse(&line).expect_err(open);
        let ShellError::TooDeep { limit, offset } = err.clone();
        assert_eq!(limit, MAX_NESTING, "{open}");
        assert!(offset > 0 && offset < line.len(), "{open}: {offset}");
        assert!(err.to_string().contains("levels deep"), "{err}");
        // Unclosed, too.
        assert!(CommandLine::parse(&open.repeat(50_000)).is_err(), "{open}");
    }
    // `${` alone and plain backticks nest no list: read without recursion, and accepted.
    let braces = format!("{}x{}", "${".repeat(50_000), "}".repeat(50_000));
    assert!(CommandLine::parse(&braces).is_ok());
    assert!(CommandLine::parse(&"`".repeat(100_001)).is_ok());
}

#[test]
fn nesting_up_to_the_bound_is_read() {
    let depth = |open: &str, close: &str, n: usize| {
        CommandLine::parse(&format!("{}rm x{}", open.repeat(n), close.repeat(n)))
    };
    for (open, close) in [("(", ")"), ("$(", ")"), ("\"$(", ")\"")] {
        let ok = depth(open, close, MAX_NESTING).expect(open);
        assert!(ok.programs().contains(&"rm".to_owned()), "{open}");
        assert!(depth(open, close, MAX_NESTING + 1).is_err(), "{open}");
    }
}

/// Pieces of command lines, separators included.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z./-]{1,6}",
        Just(" ".to_owned()),
        Just("\t".to_owned()),
        prop::sample::select(vec![
            ";", "&", "&&", "|", "||", "|&", "\n", "\r", "(", ")", "`", "$(", "<(", ">(", "<", ">",
            ">>", "2>&1", "${", "}", "$", "~", "*",
        ])
        .prop_map(str::to_owned),
    ]
}

fn line() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..24).prop_map(|p| p.concat())
}

proptest! {
    /// Without quotes or backslashes, no separator survives inside a word.
    #[test]
    fn no_separator_survives_inside_a_word(s in line()) {
        for w in words(&s) {
            prop_assert!(
                !w.contains([';', '&', '|', '(', ')', '\n', '\r', '`', '<', '>']),
                "{:?} gave the word {:?}", s, w
            );
            prop_assert!(!w.contains("$("), "{:?} gave the word {:?}", s, w);
        }
    }

    /// Double quotes do not hide substitutions: no word holds `$(` or a backtick.
    #[test]
    fn quotes_do_not_hide_substitutions(s in line(), q in line()) {
        let s = format!("{s} \"{q}\"");
        for w in words(&s) {
            prop_assert!(!w.contains("$(") && !w.contains('`'), "{:?} gave {:?}", s, w);
        }
    }

    /// A line joined from simple commands with any separator is never simple, and every
    /// command's program is found.
    #[test]
    fn joined_commands_are_all_found(
        a in "[a-z]{1,8}",
        b in "[a-z]{1,8}",
        sep in prop::sample::select(vec![";", "&", "&&", "|", "||", "\n", "\r", " $(", " `", " <("]),
    ) {
        prop_assume!(!RESERVED_PREFIXES.contains(&a.as_str()));
        prop_assume!(!RESERVED_PREFIXES.contains(&b.as_str()));
        let line = format!("{a} x{sep}{b} y");
        let p = programs(&line);
        prop_assert!(p.contains(&a) && p.contains(&b), "{:?}: {:?}", line, p);
        prop_assert!(!simple(&line));
    }

    /// Arbitrary input never panics.
    #[test]
    fn arbitrary_input_is_read(s in "\\PC{0,64}") {
        if let Ok(c) = CommandLine::parse(&s) {
            let _ = (c.words(), c.programs(), c.is_simple());
        }
    }
}
