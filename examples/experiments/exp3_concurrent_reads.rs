//! Experiment 3: three reads in one turn run as one parallel batch.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::runtime::{Session, ToolCall};

use crate::lab::{self, BoxError, Lab, Scratch, ensure};

/// How long one `slow_cat` sleeps before it reads (its spec: `sleep 0.4`).
pub const SLEEP: Duration = Duration::from_millis(400);

/// What happened.
#[derive(Debug)]
pub struct Report {
    /// The batches of the three-read turn (call indexes).
    pub batches: Vec<Vec<usize>>,
    /// Wall time of the one turn with three reads.
    pub parallel: Duration,
    /// Wall time of three turns with one read each.
    pub serial: Duration,
    /// Whether every read succeeded and returned its file.
    pub all_read: bool,
}

impl Report {
    /// Whether the experiment showed what it should. The timing check is an ordering with a
    /// wide margin: three sleeps in a row take at least 3 × SLEEP, so a parallel turn that
    /// beats that bound overlapped its reads, however loaded the machine.
    pub fn check(&self) -> Result<(), String> {
        ensure(self.batches == [vec![0, 1, 2]], || {
            format!("the reads were planned as {:?}", self.batches)
        })?;
        ensure(self.all_read, || "a read failed".into())?;
        ensure(self.serial >= SLEEP * 3, || {
            format!("serial took {:?}, less than three sleeps", self.serial)
        })?;
        ensure(
            self.parallel < SLEEP * 3 && self.parallel < self.serial,
            || {
                format!(
                    "parallel {:?} is not faster than three sleeps in a row ({:?}); serial {:?}",
                    self.parallel,
                    SLEEP * 3,
                    self.serial
                )
            },
        )
    }
}

/// Runs the experiment.
pub async fn run(lab: &Lab, out: &mut dyn Write) -> Result<Report, BoxError> {
    lab::header(
        out,
        3,
        "concurrent reads",
        "reads a.txt, b.txt and c.txt with slow_cat (a read-only command tool that pauses 400 ms) in one turn, then one per turn.",
    )?;
    let scratch = Scratch::new("exp3")?;
    let files = ["a.txt", "b.txt", "c.txt"];
    for f in files {
        scratch.write(f, &format!("contents of {f}\n"))?;
    }
    let runtime = lab::builder(scratch.root(), &lab.shim)?.build()?;
    let session = Session::new("exp3", "interactive");
    let read = |id: String, f: &str| ToolCall::new(id, "slow_cat", json!({"path": f}));

    // One untimed call first: the kernel probe and the first shim start are paid once per
    // process and would otherwise be charged to whichever side runs first.
    runtime
        .run(
            vec![read("warm-up".into(), "a.txt")],
            &session,
            CancellationToken::new(),
        )
        .await?;

    let calls = files
        .iter()
        .enumerate()
        .map(|(i, f)| read(format!("p{}", i + 1), f))
        .collect();
    let t = Instant::now();
    let exec = runtime
        .run(calls, &session, CancellationToken::new())
        .await?;
    let parallel = t.elapsed();
    writeln!(out, "one turn, three reads:")?;
    lab::indented(out, "  ", &exec.plan.to_string())?;
    let mut all_read = exec.results.len() == files.len();
    for (r, f) in exec.results.iter().zip(files) {
        all_read &= r.is_success() && r.projection().text.contains(&format!("contents of {f}"));
    }
    if let Some(r) = exec.results.first() {
        lab::model_sees(out, r)?;
    }

    let t = Instant::now();
    for (i, f) in files.iter().enumerate() {
        let exec = runtime
            .run(
                vec![read(format!("s{}", i + 1), f)],
                &session,
                CancellationToken::new(),
            )
            .await?;
        all_read &= exec.results.iter().all(|r| r.is_success());
    }
    let serial = t.elapsed();

    writeln!(
        out,
        "wall time: parallel {} ms, serial (three turns) {} ms, serial/parallel = {:.2}",
        parallel.as_millis(),
        serial.as_millis(),
        serial.as_secs_f64() / parallel.as_secs_f64().max(1e-9)
    )?;
    lab::shows(
        out,
        "read-only calls with disjoint footprints share one batch, so a turn of N slow reads costs about one read, not N.",
    )?;
    Ok(Report {
        batches: exec.plan.batches.clone(),
        parallel,
        serial,
        all_read,
    })
}
