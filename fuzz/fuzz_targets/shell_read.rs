//! The shell reader of permission rules (`toolgate::cel::shell`, behind `shell.commands`,
//! `shell.words` and `shell.is_simple`): the input is one command line. Every input must be
//! read, never panic or abort; and a line the reader calls simple has one program, its first
//! word.
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
    let words = parsed.words();
    let programs = parsed.programs();
    if parsed.is_simple() {
        assert_eq!(programs.len(), 1, "a simple line has one program: {line:?}");
        assert_eq!(words.first(), programs.first(), "its program is its first word: {line:?}");
    }
    std::hint::black_box(shell_words(line));
}
