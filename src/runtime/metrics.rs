//! Metrics (chapter §42): per tool and status, a call counter and a latency histogram; per tool,
//! retries and error types. [`Metrics::snapshot`] gives a plain value to export or print.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

use crate::ir::{ErrorType, Status};

/// Upper bounds of the latency buckets, in microseconds (the last bucket is unbounded).
pub const LATENCY_BUCKETS_US: &[u64] = &[
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000, 30_000_000, 60_000_000,
];

#[derive(Clone, Debug, Default)]
struct Series {
    count: u64,
    sum_us: u64,
    buckets: Vec<u64>,
}

#[derive(Debug, Default)]
struct State {
    /// By tool, then status: a call of a tool seen before allocates nothing.
    calls: BTreeMap<String, BTreeMap<Status, Series>>,
    errors: BTreeMap<(String, ErrorType), u64>,
    retries: BTreeMap<String, u64>,
}

/// Live counters of a runtime.
#[derive(Debug, Default)]
pub struct Metrics {
    state: Mutex<State>,
}

/// One (tool, status) series.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallSeries {
    /// The tool.
    pub tool: String,
    /// The status.
    pub status: Status,
    /// Calls.
    pub count: u64,
    /// Total latency, microseconds.
    pub sum_us: u64,
    /// Calls per bucket: (upper bound in µs, or `None` for the last, count).
    pub buckets: Vec<(Option<u64>, u64)>,
}

/// A copy of every counter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MetricsSnapshot {
    /// Calls and latency per tool and status.
    pub calls: Vec<CallSeries>,
    /// Failures per tool and error type.
    pub errors: Vec<(String, ErrorType, u64)>,
    /// Retries per tool.
    pub retries: Vec<(String, u64)>,
}

impl MetricsSnapshot {
    /// The number of calls of a tool with a status.
    pub fn count(&self, tool: &str, status: Status) -> u64 {
        self.calls
            .iter()
            .find(|s| s.tool == tool && s.status == status)
            .map_or(0, |s| s.count)
    }
}

impl Metrics {
    /// Records one finished call.
    pub fn record(
        &self,
        tool: &str,
        status: Status,
        error: Option<ErrorType>,
        latency: Duration,
        retries: u32,
    ) {
        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        let bucket = LATENCY_BUCKETS_US
            .iter()
            .position(|b| us <= *b)
            .unwrap_or(LATENCY_BUCKETS_US.len());
        let mut s = match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        let by_status = match s.calls.get_mut(tool) {
            Some(b) => b,
            None => s.calls.entry(tool.to_owned()).or_default(),
        };
        let series = by_status.entry(status).or_default();
        if series.buckets.is_empty() {
            series.buckets = vec![0; LATENCY_BUCKETS_US.len() + 1];
        }
        series.count += 1;
        series.sum_us = series.sum_us.saturating_add(us);
        series.buckets[bucket] += 1;
        if let Some(e) = error {
            *s.errors.entry((tool.to_owned(), e)).or_default() += 1;
        }
        if retries > 0 {
            *s.retries.entry(tool.to_owned()).or_default() += u64::from(retries);
        }
    }

    /// A copy of every counter.
    pub fn snapshot(&self) -> MetricsSnapshot {
        let s = match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        MetricsSnapshot {
            calls: s
                .calls
                .iter()
                .flat_map(|(tool, by_status)| by_status.iter().map(move |(s, x)| (tool, s, x)))
                .map(|(tool, status, series)| CallSeries {
                    tool: tool.clone(),
                    status: *status,
                    count: series.count,
                    sum_us: series.sum_us,
                    buckets: series
                        .buckets
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (LATENCY_BUCKETS_US.get(i).copied(), *c))
                        .collect(),
                })
                .collect(),
            errors: s
                .errors
                .iter()
                .map(|((t, e), c)| (t.clone(), *e, *c))
                .collect(),
            retries: s.retries.iter().map(|(t, c)| (t.clone(), *c)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_buckets() {
        let m = Metrics::default();
        m.record("a", Status::Success, None, Duration::from_micros(70), 0);
        m.record(
            "a",
            Status::Error,
            Some(ErrorType::ProcessError),
            Duration::from_secs(100),
            2,
        );
        let s = m.snapshot();
        assert_eq!(s.count("a", Status::Success), 1);
        assert_eq!(s.calls[0].buckets[1], (Some(100), 1));
        assert_eq!(s.calls[1].buckets.last(), Some(&(None, 1)));
        assert_eq!(s.errors, vec![("a".into(), ErrorType::ProcessError, 1)]);
        assert_eq!(s.retries, vec![("a".into(), 2)]);
    }
}
