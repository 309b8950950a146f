//! [`TerminalApprover`]: asks the person at the terminal — the request on stderr, the answer a
//! line on stdin.
//!
//! One reader thread, started at the first prompt, reads every line of the input for the life
//! of the process and hands them over a channel; each prompt takes the next line from it. A
//! prompt the runtime stops waiting for (the context's timeout, a cancel) therefore leaves no
//! reader behind to swallow the answer meant for the next prompt. Lines that arrived before a
//! prompt was shown — a late answer to a prompt that timed out, keys typed ahead — are discarded
//! when the next prompt starts: an answer only counts for the prompt it was typed at.
//!
//! The prompt shows every argument in full, escaped so that nothing in a value can hide part of
//! it ([`crate::runtime::question`]); a prompt longer than
//! [`question::MAX_QUESTION_BYTES`] is not shown, and the call ends as APPROVAL_UNAVAILABLE.

use std::io::{BufRead, Write};
use std::sync::{Mutex, OnceLock};

use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use crate::runtime::approval::{ApprovalFuture, ApprovalOutcome, ApprovalRequest, Approver};
use crate::runtime::question;

/// Input and output of the prompts.
type Input = Box<dyn BufRead + Send>;
type Output = Box<dyn Write + Send>;

/// Asks at a terminal (or any line-based input and output, for tests).
pub(crate) struct TerminalApprover {
    /// The input until the reader thread takes it, at the first prompt.
    input: Mutex<Option<Input>>,
    /// The lines the reader thread has read; the lock also keeps one prompt at a time.
    lines: OnceLock<tokio::sync::Mutex<UnboundedReceiver<String>>>,
    output: Mutex<Output>,
}

impl TerminalApprover {
    /// An approver reading answers from `input` and writing prompts to `output`.
    pub(crate) fn new(
        input: impl BufRead + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> Self {
        TerminalApprover {
            input: Mutex::new(Some(Box::new(input))),
            lines: OnceLock::new(),
            output: Mutex::new(Box::new(output)),
        }
    }

    /// The terminal: stdin and stderr.
    pub(crate) fn stdio() -> Self {
        TerminalApprover::new(std::io::BufReader::new(std::io::stdin()), std::io::stderr())
    }

    /// The channel of input lines, starting the reader thread on first use.
    fn lines(&self) -> &tokio::sync::Mutex<UnboundedReceiver<String>> {
        self.lines.get_or_init(|| {
            let (tx, rx) = unbounded_channel();
            let input = self.input.lock().ok().and_then(|mut i| i.take());
            if let Some(mut input) = input {
                // A plain thread, never joined: a read still blocked at exit must not hold the
                // process up. It ends at end of input, dropping the sender: later prompts then
                // see that nobody can answer.
                std::thread::spawn(move || {
                    let mut line = String::new();
                    loop {
                        line.clear();
                        match input.read_line(&mut line) {
                            Ok(0) | Err(_) => break,
                            Ok(_) => {
                                if tx.send(line.clone()).is_err() {
                                    break;
                                }
                            }
                        }
                    }
                });
            }
            tokio::sync::Mutex::new(rx)
        })
    }

    fn say(&self, text: &str) {
        if let Ok(mut out) = self.output.lock() {
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }
}

impl Approver for TerminalApprover {
    fn cannot_ask(&self, req: &ApprovalRequest) -> Option<String> {
        question::too_large(&prompt(req))
    }

    fn request<'a>(&'a self, req: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        let prompt = prompt(req);
        Box::pin(async move {
            let mut lines = self.lines().lock().await;
            // Whatever arrived before this prompt is shown was not typed as its answer.
            while lines.try_recv().is_ok() {}
            self.say(&prompt);
            let mut waiting = Waiting {
                approver: self,
                answered: false,
            };
            let outcome = match lines.recv().await {
                None => ApprovalOutcome::Unavailable,
                Some(line) => answer(&line, req),
            };
            waiting.answered = true;
            outcome
        })
    }
}

/// Tells the person when the runtime stops waiting for their answer (a timeout or a cancel
/// drops the prompt's future), so a late answer is not typed in the belief that it counts.
struct Waiting<'a> {
    approver: &'a TerminalApprover,
    answered: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.approver
                .say("\ntoolgate: no answer in time; the call was not approved\n");
        }
    }
}

/// The prompt: what is asked, and what each answer grants — `s` grants the proposed card where
/// the call has one, and otherwise only this exact call.
pub(crate) fn prompt(req: &ApprovalRequest) -> String {
    let tool = question::shown(&req.tool);
    let mut p = format!("\ntoolgate: {tool} ({}) needs approval", req.effect);
    if let Some(r) = &req.reason {
        p.push_str(&format!(": {}", question::shown(r)));
    }
    p.push_str(&format!("\n  {}\n", question::ARGUMENTS_HEADING));
    for line in question::arguments(&req.arguments).lines() {
        p.push_str(&format!("  {line}\n"));
    }
    match &req.proposed_scope {
        Some(card) => {
            let keys: Vec<String> = card.writes.iter().map(|k| question::shown(k)).collect();
            p.push_str(&format!(
                "  for the session: {tool} may change {} without asking again\n",
                keys.join(", ")
            ));
        }
        None => p.push_str(&format!(
            "  for the session: this exact {tool} call (same arguments) runs without asking again\n"
        )),
    }
    p.push_str("Allow? [o]nce, for the [s]ession, [d]eny, [c]ancel: ");
    p
}

/// A typed answer; anything unrecognised denies.
fn answer(line: &str, req: &ApprovalRequest) -> ApprovalOutcome {
    match line.trim().to_ascii_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => ApprovalOutcome::AllowOnce,
        "s" | "session" => ApprovalOutcome::AllowForSession {
            scope: req.proposed_scope.clone(),
        },
        "c" | "cancel" => ApprovalOutcome::Cancel,
        _ => ApprovalOutcome::Deny { reason: None },
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::io::Read;
    use std::sync::{Arc, mpsc};
    use std::time::Duration;

    use super::*;
    use crate::ir::Effect;
    use crate::policy::DecisionSource;
    use crate::runtime::approval::ApprovalScope;

    /// Input the test types into. Every `read` says so on `reads` first, so the test knows
    /// when the reader has handed on everything typed so far and waits for more.
    struct Keyboard {
        typed: mpsc::Receiver<Vec<u8>>,
        reads: mpsc::Sender<()>,
    }

    impl Read for Keyboard {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let _ = self.reads.send(());
            match self.typed.recv() {
                Ok(bytes) => {
                    let n = bytes.len().min(buf.len());
                    buf[..n].copy_from_slice(&bytes[..n]);
                    Ok(n)
                }
                Err(_) => Ok(0),
            }
        }
    }

    /// The screen: everything the approver wrote.
    #[derive(Clone, Default)]
    struct Screen(Arc<Mutex<Vec<u8>>>);

    impl Write for Screen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Screen {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }

        /// Waits until `n` prompts have been shown.
        async fn prompts(&self, n: usize) {
            while self.text().matches("Allow?").count() < n {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }

    struct Terminal {
        approver: Arc<TerminalApprover>,
        screen: Screen,
        keys: mpsc::Sender<Vec<u8>>,
        reads: mpsc::Receiver<()>,
    }

    impl Terminal {
        fn new() -> Self {
            let (keys, typed) = mpsc::channel();
            let (read_tx, reads) = mpsc::channel();
            let screen = Screen::default();
            let input = std::io::BufReader::new(Keyboard {
                typed,
                reads: read_tx,
            });
            Terminal {
                approver: Arc::new(TerminalApprover::new(input, screen.clone())),
                screen,
                keys,
                reads,
            }
        }

        /// Types a line and waits until the reader has passed it on (it reads again).
        fn type_line(&self, line: &str) {
            self.keys.send(line.as_bytes().to_vec()).unwrap();
            self.reader_waits();
        }

        /// Waits until the reader asks for more input (bounded, so a broken reader fails the
        /// test instead of hanging it).
        fn reader_waits(&self) {
            self.reads
                .recv_timeout(Duration::from_secs(20))
                .expect("the reader reads again");
        }

        /// A prompt, asked on its own task.
        fn ask(&self, req: ApprovalRequest) -> tokio::task::JoinHandle<ApprovalOutcome> {
            let a = self.approver.clone();
            tokio::spawn(async move { a.request(&req).await })
        }
    }

    fn request(tool: &str, effect: Effect, card: Option<&str>) -> ApprovalRequest {
        ApprovalRequest {
            session_id: "s".into(),
            context: "interactive".into(),
            call_id: "c".into(),
            tool: tool.into(),
            tool_version: 1,
            effect,
            arguments: "{}".into(),
            reason: None,
            asked_by: DecisionSource::Default,
            chain: Vec::new(),
            proposed_scope: card.map(|k| ApprovalScope {
                writes: BTreeSet::from([k.to_owned()]),
            }),
        }
    }

    fn bash() -> ApprovalRequest {
        request("bash", Effect::ProcessExecution, None)
    }

    /// The runtime's timeout drops a prompt; the answer typed at the next prompt answers it
    /// (a reader left over from the first prompt used to swallow it).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn after_a_timed_out_prompt_the_next_answer_counts() {
        let t = Terminal::new();
        let req = bash();
        let first = tokio::time::timeout(Duration::from_millis(50), t.approver.request(&req));
        assert!(first.await.is_err(), "nothing was typed");
        assert!(t.screen.text().contains("no answer in time"));
        let second = t.ask(bash());
        t.screen.prompts(2).await;
        t.type_line("o\n");
        let got = tokio::time::timeout(Duration::from_secs(20), second).await;
        assert_eq!(got.unwrap().unwrap(), ApprovalOutcome::AllowOnce);
    }

    /// A late answer to a prompt that timed out does not answer the next one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_late_answer_does_not_answer_the_next_prompt() {
        let t = Terminal::new();
        let req = bash();
        let first = tokio::time::timeout(Duration::from_millis(50), t.approver.request(&req));
        assert!(first.await.is_err());
        t.reader_waits(); // the reader started at the first prompt
        t.type_line("o\n"); // too late for the first prompt
        let second = t.ask(bash());
        t.screen.prompts(2).await;
        t.type_line("d\n");
        let got = tokio::time::timeout(Duration::from_secs(20), second).await;
        assert_eq!(
            got.unwrap().unwrap(),
            ApprovalOutcome::Deny { reason: None }
        );
    }

    /// Answers in order, one per prompt; at end of input nobody can answer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_and_end_of_input() {
        let t = Terminal::new();
        let card = request("apply_patch", Effect::LocalWrite, Some("file:src/a.py"));
        let p = t.ask(card.clone());
        t.screen.prompts(1).await;
        t.type_line("s\n");
        assert_eq!(
            p.await.unwrap(),
            ApprovalOutcome::AllowForSession {
                scope: card.proposed_scope.clone()
            }
        );
        let p = t.ask(bash());
        t.screen.prompts(2).await;
        drop(t.keys);
        assert_eq!(p.await.unwrap(), ApprovalOutcome::Unavailable);
    }

    /// Every argument in full, escaped; a prompt past 64 KiB is not shown at all.
    #[test]
    fn the_prompt_shows_every_argument_in_full_or_nothing() {
        let mut req = bash();
        let command = format!("ls{}\r\u{1b}[1Aecho ok\nrm -rf x", " ".repeat(4000));
        req.arguments = serde_json::json!({ "command": command }).to_string();
        let p = prompt(&req);
        assert!(
            p.contains(concat!(
                "    command = string of 4023 characters in 2 lines:\n",
                "      1 │ \"ls⟪4000 spaces⟫\\r\\u{1b}[1Aecho ok\"\n",
                "      2 │ \"rm -rf x\"\n",
            )),
            "{p}"
        );
        assert_eq!(TerminalApprover::stdio().cannot_ask(&req), None);
        req.arguments = serde_json::json!({ "command": "q".repeat(70_000) }).to_string();
        assert!(TerminalApprover::stdio().cannot_ask(&req).is_some());
    }

    /// ESC sequences, carriage returns, a bidi override and a zero-width space show as `\u{…}`
    /// wherever they are: in an argument, in the reason, in a card's key.
    #[test]
    fn hidden_characters_are_escaped_everywhere_in_the_prompt() {
        let hostile = "ok\u{1b}[2K\r\u{202e}txt\u{200b}";
        let mut req = request(
            "write_file",
            Effect::LocalWrite,
            Some(&format!("file:{hostile}")),
        );
        req.reason = Some(format!("rule says {hostile}"));
        req.arguments = serde_json::json!({ "path": hostile }).to_string();
        let p = prompt(&req);
        let escaped = "ok\\u{1b}[2K\\u{d}\\u{202e}txt\\u{200b}";
        assert!(
            p.contains(&format!("needs approval: rule says {escaped}\n")),
            "{p}"
        );
        assert!(
            p.contains("    path = \"ok\\u{1b}[2K\\r\\u{202e}txt\\u{200b}\" (12 characters)\n"),
            "{p}"
        );
        assert!(
            p.contains(&format!("may change file:{escaped} without")),
            "{p}"
        );
        for c in ['\u{1b}', '\r', '\u{202e}', '\u{200b}'] {
            assert!(!p.contains(c), "{c:?} reached the terminal: {p}");
        }
    }

    /// What `s` grants is what the prompt says: the card for a local write, else this exact call.
    #[test]
    fn the_prompt_says_what_a_session_approval_grants() {
        let card = prompt(&request(
            "apply_patch",
            Effect::LocalWrite,
            Some("file:src/a.py"),
        ));
        assert!(
            card.contains(
                "for the session: apply_patch may change file:src/a.py without asking again"
            ),
            "{card}"
        );
        let exact = prompt(&bash());
        assert!(
            exact.contains(
                "for the session: this exact bash call (same arguments) runs without asking again"
            ),
            "{exact}"
        );
        assert!(!exact.contains("tree:"), "{exact}");
    }
}
