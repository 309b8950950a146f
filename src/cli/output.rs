//! How findings are shown: the one text renderer `lint`, `build`, `export`, `call`, `run` and
//! `serve` share, and when it uses colour.
//!
//! Colour follows the conventions most command-line tools read (as the `anstream` crate does):
//! `NO_COLOR` set and not empty turns it off; otherwise `CLICOLOR_FORCE` set and not `0` turns it
//! on; otherwise `CLICOLOR=0` or `TERM=dumb` turns it off; otherwise it is on when the stream is
//! a terminal. Without colour the view is the same: source lines, labels, help.

use std::ffi::OsString;
use std::io::IsTerminal;

use crate::check::CheckedProject;
use crate::lint::report::{Summary, human};

/// Where the text goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// The colour-related environment and whether the stream is a terminal.
#[derive(Debug, Default)]
struct ColorEnv {
    no_color: Option<OsString>,
    clicolor_force: Option<OsString>,
    clicolor: Option<OsString>,
    term: Option<OsString>,
    terminal: bool,
}

impl ColorEnv {
    fn read(stream: Stream) -> Self {
        ColorEnv {
            no_color: std::env::var_os("NO_COLOR"),
            clicolor_force: std::env::var_os("CLICOLOR_FORCE"),
            clicolor: std::env::var_os("CLICOLOR"),
            term: std::env::var_os("TERM"),
            terminal: match stream {
                Stream::Stdout => std::io::stdout().is_terminal(),
                Stream::Stderr => std::io::stderr().is_terminal(),
            },
        }
    }

    fn color(&self) -> bool {
        let set = |v: &Option<OsString>| v.as_ref().is_some_and(|v| !v.is_empty());
        if set(&self.no_color) {
            return false;
        }
        if set(&self.clicolor_force) && self.clicolor_force.as_deref() != Some("0".as_ref()) {
            return true;
        }
        if self.clicolor.as_deref() == Some("0".as_ref())
            || self.term.as_deref() == Some("dumb".as_ref())
        {
            return false;
        }
        self.terminal
    }
}

/// Whether text written to `stream` gets colour.
pub(crate) fn use_color(stream: Stream) -> bool {
    ColorEnv::read(stream).color()
}

/// The full view (boxes, with colour when `stream` should have it).
pub(crate) fn full_style(stream: Stream) -> human::Style {
    if use_color(stream) {
        human::Style::Color
    } else {
        human::Style::Plain
    }
}

/// The project's findings in the full view, then the summary line.
pub(crate) fn findings(checked: &CheckedProject, stream: Stream) -> String {
    let summary = Summary::of(
        &checked.diagnostics,
        checked.loaded.files.len(),
        checked.loaded.tool_count(),
    );
    human::render(
        &checked.diagnostics,
        &checked.loaded.sources,
        full_style(stream),
        summary,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)], terminal: bool) -> ColorEnv {
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        };
        ColorEnv {
            no_color: get("NO_COLOR"),
            clicolor_force: get("CLICOLOR_FORCE"),
            clicolor: get("CLICOLOR"),
            term: get("TERM"),
            terminal,
        }
    }

    #[test]
    fn colour_follows_the_terminal_and_the_conventions() {
        type Case<'a> = (&'a [(&'a str, &'a str)], bool, bool);
        let cases: &[Case] = &[
            (&[], true, true),
            (&[], false, false),
            (&[("NO_COLOR", "1")], true, false),
            (&[("NO_COLOR", "")], true, true),
            (&[("CLICOLOR_FORCE", "1")], false, true),
            (&[("CLICOLOR_FORCE", "0")], false, false),
            (&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")], false, false),
            (&[("CLICOLOR", "0")], true, false),
            (&[("TERM", "dumb")], true, false),
            (&[("TERM", "dumb"), ("CLICOLOR_FORCE", "1")], false, true),
        ];
        for (pairs, terminal, want) in cases {
            assert_eq!(
                env(pairs, *terminal).color(),
                *want,
                "{pairs:?}, terminal {terminal}"
            );
        }
    }
}
