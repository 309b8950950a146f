//! From what a process did to the attempt's [`RawOutcome`]: secret values redacted, the
//! tool's formatter applied, and the failure classified — setup, a stop, the sandbox (an
//! rlimit's signal, the process cap; a memory or open-files limit, a Landlock, signal or
//! network refusal told apart by its message) or the formatter's verdict.

use crate::ir::{ErrorType, OutputPolicy};
use crate::runtime::artifacts::ArtifactRedaction;
use crate::runtime::exec::command::CommandRequest;
use crate::runtime::exec::sandbox::{self, Protection, SandboxPlan};
use crate::runtime::exec::spawn::Spawned;
use crate::runtime::exec::spawn::{STDERR_MEDIA_TYPE, STDOUT_MEDIA_TYPE};
use crate::runtime::exec::{HeldStream, OutputSource, RawOutcome};
use crate::runtime::format::{self, FormatInput};
use crate::runtime::output::Redactor;

/// Markers of an access the sandbox refused, by the protection that refuses it: the words
/// that must all be on one line, tried in this order.
const DENIAL_MARKERS: &[(Protection, &[&str])] = &[
    (Protection::Landlock, &["Permission denied"]),
    (Protection::Landlock, &["EACCES"]),
    // A refused `kill` says "Operation not permitted" too: the signal scope, not the network.
    (
        Protection::SignalScope,
        &["kill", "Operation not permitted"],
    ),
    (Protection::SignalScope, &["kill", "EPERM"]),
    // In a PID namespace a process outside the sandbox does not exist.
    (Protection::PidNamespace, &["kill", "No such process"]),
    (Protection::PidNamespace, &["kill", "ESRCH"]),
    // The view's system folders, its read-only workspace and `.git`, its masks.
    (Protection::MountNamespace, &["Read-only file system"]),
    (Protection::MountNamespace, &["EROFS"]),
    (Protection::NoNetwork, &["Operation not permitted"]),
    (Protection::NoNetwork, &["EPERM"]),
    (
        Protection::AbstractSocketScope,
        &["Operation not permitted"],
    ),
    (Protection::AbstractSocketScope, &["EPERM"]),
];

/// The first output line that shows a protection in force refusing an access.
fn sandbox_denial<'a>(text: &'a str, protections: &[Protection]) -> Option<(Protection, &'a str)> {
    text.lines().find_map(|l| {
        DENIAL_MARKERS
            .iter()
            .find(|(p, words)| protections.contains(p) && words.iter().all(|w| l.contains(w)))
            .map(|(p, _)| (*p, l.trim()))
    })
}

/// The absolute paths a line names: runs starting with `/` after the line's start, a space,
/// a quote, a parenthesis or a colon, up to a colon, a quote or white space.
fn absolute_paths(line: &str) -> impl Iterator<Item = &str> {
    let starts = line.char_indices().filter(move |(i, c)| {
        *c == '/'
            && line[..*i]
                .chars()
                .next_back()
                .is_none_or(|p| p.is_whitespace() || "'\"`(:=".contains(p))
    });
    starts.map(move |(i, _)| {
        let rest = &line[i..];
        let end = rest
            .find(|c: char| c.is_whitespace() || ":'\"`),".contains(c))
            .unwrap_or(rest.len());
        &rest[..end]
    })
}

/// The first output line where a path the tool's view does not show was not found: the file
/// may well exist on the host, but not in the sandbox.
fn outside_view<'a>(text: &'a str, plan: &SandboxPlan) -> Option<&'a str> {
    text.lines()
        .find(|l| {
            l.contains("No such file or directory")
                && absolute_paths(l).any(|p| !plan.shows(std::path::Path::new(p)))
        })
        .map(str::trim)
}

/// Turns what the process did into the attempt's outcome.
pub(crate) fn outcome(
    req: &CommandRequest,
    plan: &SandboxPlan,
    output: &OutputPolicy,
    s: Spawned,
) -> RawOutcome {
    let redactor = Redactor {
        secrets: false,
        patterns: &[],
        literals: &req.secret_values,
    };
    let stdout = redactor.text(&s.stdout.captured.text());
    let stderr = redactor.text(&s.stderr.captured.text());
    let hash = s.stdout.captured.hash.to_hex().to_string();
    let input = FormatInput {
        command: &req.display,
        exit_code: s.exit_code,
        signal: s.signal,
        stdout: &stdout,
        stderr: &stderr,
        stdout_complete: s.stdout.captured.omitted() == 0,
        stderr_complete: s.stderr.captured.omitted() == 0,
        stdout_lines: s.stdout.captured.lines,
        stdout_hash: &hash,
        max_bytes: output.max_bytes,
        max_lines: output.max_lines,
    };
    let f = format::format(output.formatter, &input);
    let mut notes = Vec::new();
    for (name, c) in [
        ("stdout", &s.stdout.captured),
        ("stderr", &s.stderr.captured),
    ] {
        if let Some(e) = &c.spill_error {
            notes.push(format!("the full {name} could not be kept: {e}"));
        }
    }
    if s.leftovers > 0 {
        notes.push(format!(
            "{} process{} it left running {} killed",
            s.leftovers,
            if s.leftovers == 1 { "" } else { "es" },
            if s.leftovers == 1 { "was" } else { "were" }
        ));
    }
    let failure = classify(req, plan, &s, f.failure.clone(), &f.text);
    let truncated = s.stdout.captured.omitted() + s.stderr.captured.omitted() > 0 || f.left_out;
    let mut summary = f.summary;
    if !notes.is_empty() {
        let base = summary.unwrap_or_else(|| format!("`{}` ran", req.display));
        summary = Some(format!("{base} ({})", notes.join("; ")));
    }
    let redact = ArtifactRedaction {
        secrets: output.redact_secrets,
        patterns: output.redact.clone(),
        literals: req.secret_values.clone(),
    };
    let mut held = Vec::new();
    let mut artifacts = Vec::new();
    for (stream, media_type) in [(s.stdout, STDOUT_MEDIA_TYPE), (s.stderr, STDERR_MEDIA_TYPE)] {
        let c = stream.captured;
        match stream.artifact {
            Some(a) => artifacts.push(a),
            // Whole in head and tail, and not refused by a budget: kept if the view is cut.
            None if c.spill_error.is_none() && c.omitted() == 0 && c.total > 0 => {
                let mut bytes = c.head;
                bytes.extend_from_slice(&c.tail);
                held.push(HeldStream {
                    bytes,
                    media_type,
                    redact: redact.clone(),
                });
            }
            None => {}
        }
    }
    RawOutcome {
        failure,
        summary,
        structured: f.structured,
        text: Some(f.text),
        exit_code: s.exit_code,
        truncated,
        artifacts,
        protections: s.protections,
        source: OutputSource::Streams {
            held,
            left_out: f.left_out,
        },
        retry_after: None,
    }
}

/// The failure of an attempt: setup, a stop, the sandbox, or the formatter's verdict.
fn classify(
    req: &CommandRequest,
    plan: &SandboxPlan,
    s: &Spawned,
    verdict: Option<String>,
    text: &str,
) -> Option<(ErrorType, String)> {
    if let Some(f) = &s.setup_failure {
        return Some(f.clone());
    }
    let violation = |m: String| Some((ErrorType::SandboxViolation, m));
    // A limit's signal, or a shell's 128 + signal for a child it killed.
    let signal = s
        .signal
        .or_else(|| s.exit_code.filter(|c| *c > 128).map(|c| c - 128));
    if let Some(limit) = signal.and_then(|sig| sandbox::exceeded(&plan.rlimits, sig)) {
        return violation(format!(
            "`{}` exceeded {limit} and was stopped",
            req.display
        ));
    }
    // Reaching the cap is the violation, however the tool ended: a fork bomb's first
    // process often exits at once and leaves the bomb running.
    if s.forks_refused > 0 {
        return violation(format!(
            "`{}` reached the process cap of {} ({} fork{} refused)",
            req.display,
            plan.cgroup.pids_max.unwrap_or(0),
            s.forks_refused,
            if s.forks_refused == 1 {
                " was"
            } else {
                "s were"
            }
        ));
    }
    if s.stopped {
        return Some((
            ErrorType::ProcessError,
            format!("`{}` was stopped", req.display),
        ));
    }
    let verdict = verdict?;
    if s.protections.contains(&Protection::ResourceLimits)
        && let Some((limit, line)) = sandbox::refused(&plan.rlimits, text)
    {
        return violation(format!(
            "`{}` failed at {limit} of its sandbox: {line}",
            req.display
        ));
    }
    if s.protections.contains(&Protection::MountNamespace)
        && let Some(line) = outside_view(text, plan)
    {
        return violation(format!(
            "the sandbox blocked a file access outside the sandbox's roots: {line}"
        ));
    }
    if let Some((p, line)) = sandbox_denial(text, &s.protections) {
        let what = match p {
            Protection::NoNetwork => "a network access (no network in this sandbox)",
            Protection::SignalScope | Protection::PidNamespace => {
                "a signal to a process outside the tool's sandbox"
            }
            Protection::AbstractSocketScope => {
                "a connection to an abstract Unix socket outside the tool's sandbox"
            }
            _ => "a file access outside the sandbox's roots",
        };
        return violation(format!("the sandbox blocked {what}: {line}"));
    }
    Some((ErrorType::ProcessError, verdict))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_denials_of_protections_in_force() {
        let text = "ok\nbash: /etc/x: Permission denied\n";
        assert_eq!(
            sandbox_denial(text, &[Protection::Landlock]),
            Some((Protection::Landlock, "bash: /etc/x: Permission denied"))
        );
        assert_eq!(sandbox_denial(text, &[Protection::NoNetwork]), None);
        let kill = "bash: line 1: kill: (4242) - Operation not permitted";
        let both = [Protection::NoNetwork, Protection::SignalScope];
        assert_eq!(
            sandbox_denial(kill, &both),
            Some((Protection::SignalScope, kill))
        );
        let socket = "PermissionError: [Errno 1] Operation not permitted";
        assert_eq!(
            sandbox_denial(socket, &both),
            Some((Protection::NoNetwork, socket))
        );
        assert_eq!(
            sandbox_denial(socket, &[Protection::AbstractSocketScope]),
            Some((Protection::AbstractSocketScope, socket))
        );
        let esrch = "bash: line 1: kill: (4242) - No such process";
        assert_eq!(
            sandbox_denial(esrch, &[Protection::PidNamespace]),
            Some((Protection::PidNamespace, esrch))
        );
        let erofs = "touch: cannot touch '.git/hooks/x': Read-only file system";
        assert_eq!(
            sandbox_denial(erofs, &[Protection::MountNamespace]),
            Some((Protection::MountNamespace, erofs))
        );
    }

    #[test]
    fn finds_absolute_paths_in_messages() {
        fn paths(l: &str) -> Vec<&str> {
            absolute_paths(l).collect()
        }
        assert_eq!(
            paths("cat: /work/x/secret.txt: No such file or directory"),
            vec!["/work/x/secret.txt"]
        );
        assert_eq!(
            paths("FileNotFoundError: [Errno 2] No such file or directory: '/root/.ssh/id_rsa'"),
            vec!["/root/.ssh/id_rsa"]
        );
        assert_eq!(paths("a/b and c/d"), Vec::<&str>::new());
        assert_eq!(paths("bash: line 1: /a b: x"), vec!["/a"]);
    }
}
