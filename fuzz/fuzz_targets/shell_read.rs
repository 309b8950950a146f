//! The shell reader of permission rules (`toolgate::cel::shell`, behind `shell.commands`,
//! `shell.words` and `shell.is_simple`): the input is one command line. Every input must be
//! read or refused as too deep (`ShellError::TooDeep`), never panic or abort; a line the
//! reader calls simple has one program, its first word; and `shell_words` agrees with the
//! reader on which lines it refuses.
#![no_main]

mod stack;

use libfuzzer_sys::fuzz_target;
use toolgate::cel::functions::shell_words;
use toolgate::cel::shell::CommandLine;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    // On a thread's stack, as `serve` evaluates `shell.*` on a tokio worker.
    stack::on_thread_stack(|| read(line));
});

fn read(line: &str) {
    let parsed = CommandLine::parse(line);
    assert_eq!(
        parsed.is_ok(),
        shell_words(line).is_ok(),
        "shell_words refuses what the reader refuses: {line:?}"
    );
    // A line nested past the bound is refused, never read: nothing more to check.
    let Ok(parsed) = parsed else { return };
    let words = parsed.words();
    let programs = parsed.programs();
    if parsed.is_simple() {
        assert_eq!(programs.len(), 1, "a simple line has one program: {line:?}");
        assert_eq!(words.first(), programs.first(), "its program is its first word: {line:?}");
    }
}
