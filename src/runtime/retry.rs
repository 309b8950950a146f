//! Automatic retries of transient failures (chapter §36–39), in the spirit of tower's
//! `retry::Policy` with a budget: a [`Retry`] object is asked after each failed attempt and
//! answers with a delay or a reason to stop.
//!
//! It retries only when every condition holds: the work may be repeated (pure or idempotent
//! idempotency class, or the call carries an idempotency key the far side deduplicates on);
//! the error type is one the tool's [`RetryPolicy`] lists; attempts remain; and the next attempt
//! can *start* inside the time budget. Delays grow exponentially (`initial × factor^(n−1)`,
//! capped at `max`), with full jitter when the policy asks for it, so retrying clients spread
//! out instead of hammering a struggling service in step. The model sees a result only once the
//! budget is spent (runtime recovery vs model recovery, §39).

use std::time::Duration;

use serde::Serialize;

use crate::ir::{ErrorType, Idempotency, RetryPolicy};

/// Why the retry loop stopped retrying.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The error type is not in the policy's `on` list.
    NotRetryable,
    /// Repeating the call could repeat its effect.
    NotRepeatable,
    /// `max_attempts` reached.
    AttemptsExhausted,
    /// The next attempt would start after the budget.
    BudgetExhausted,
}

/// The decision after a failed attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    /// Wait this long, then try again.
    After(Duration),
    /// Give the failure to the model.
    Stop(StopReason),
}

/// The retry policy object of one call.
#[derive(Clone, Debug)]
pub struct Retry {
    policy: RetryPolicy,
    repeatable: bool,
    attempts: u32,
}

impl Retry {
    /// The policy of a call: its tool's policy, its idempotency class, and whether it carries
    /// an idempotency key.
    pub fn new(policy: &RetryPolicy, idempotency: Idempotency, has_key: bool) -> Self {
        Retry {
            policy: policy.clone(),
            repeatable: idempotency.is_repeatable() || has_key,
            attempts: 1,
        }
    }

    /// Attempts made so far (1 after the first).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Decides after a failed attempt; `elapsed` is the time since the first attempt started.
    /// On `After`, the attempt count moves on.
    #[cfg(test)]
    pub fn after_failure(&mut self, error: ErrorType, elapsed: Duration) -> RetryDecision {
        self.after_failure_waiting(error, elapsed, None)
    }

    /// Like [`Retry::after_failure`], waiting at least `at_least` when the far side said how
    /// long to wait (`Retry-After`); a wait past the budget stops the retries.
    pub fn after_failure_waiting(
        &mut self,
        error: ErrorType,
        elapsed: Duration,
        at_least: Option<Duration>,
    ) -> RetryDecision {
        if !self.policy.on.contains(&error)
            || matches!(error, ErrorType::Cancelled | ErrorType::UnknownOutcome)
        {
            return RetryDecision::Stop(StopReason::NotRetryable);
        }
        if !self.repeatable {
            return RetryDecision::Stop(StopReason::NotRepeatable);
        }
        if self.attempts >= self.policy.max_attempts {
            return RetryDecision::Stop(StopReason::AttemptsExhausted);
        }
        let delay = self.delay(self.attempts).max(at_least.unwrap_or_default());
        if elapsed + delay >= Duration::from_millis(self.policy.budget_ms) {
            return RetryDecision::Stop(StopReason::BudgetExhausted);
        }
        self.attempts += 1;
        RetryDecision::After(delay)
    }

    /// The delay before attempt `n + 1`.
    fn delay(&self, n: u32) -> Duration {
        let b = &self.policy.backoff;
        let exp = i32::try_from(n.saturating_sub(1)).unwrap_or(i32::MAX);
        let factor = if b.factor.is_finite() && b.factor >= 1.0 {
            b.factor
        } else {
            1.0
        };
        let raw = (b.initial_ms as f64) * factor.powi(exp);
        let capped = if raw.is_finite() {
            raw.min(b.max_ms as f64)
        } else {
            b.max_ms as f64
        };
        let ms = capped.max(0.0) as u64;
        if b.jitter && ms > 0 {
            Duration::from_millis(rand::random_range(0..=ms))
        } else {
            Duration::from_millis(ms)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Backoff;

    fn policy(max_attempts: u32, jitter: bool) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            on: vec![ErrorType::NetworkError],
            backoff: Backoff {
                initial_ms: 100,
                factor: 2.0,
                max_ms: 300,
                jitter,
            },
            budget_ms: 10_000,
        }
    }

    #[test]
    fn exponential_capped_backoff() {
        let mut r = Retry::new(&policy(5, false), Idempotency::Idempotent, false);
        let z = Duration::ZERO;
        assert_eq!(
            r.after_failure(ErrorType::NetworkError, z),
            RetryDecision::After(Duration::from_millis(100))
        );
        assert_eq!(
            r.after_failure(ErrorType::NetworkError, z),
            RetryDecision::After(Duration::from_millis(200))
        );
        assert_eq!(
            r.after_failure(ErrorType::NetworkError, z),
            RetryDecision::After(Duration::from_millis(300))
        );
        assert_eq!(
            r.after_failure(ErrorType::NetworkError, z),
            RetryDecision::After(Duration::from_millis(300))
        );
        assert_eq!(
            r.after_failure(ErrorType::NetworkError, z),
            RetryDecision::Stop(StopReason::AttemptsExhausted)
        );
        assert_eq!(r.attempts(), 5);
    }

    #[test]
    fn jitter_stays_within_the_cap() {
        let mut r = Retry::new(&policy(50, true), Idempotency::Pure, false);
        for _ in 0..40 {
            match r.after_failure(ErrorType::NetworkError, Duration::ZERO) {
                RetryDecision::After(d) => assert!(d <= Duration::from_millis(300)),
                RetryDecision::Stop(s) => panic!("stopped: {s:?}"),
            }
        }
    }

    #[test]
    fn only_repeatable_work_on_listed_errors_within_budget() {
        let z = Duration::ZERO;
        let mut r = Retry::new(&policy(3, false), Idempotency::NonIdempotent, false);
        assert_eq!(
            r.after_failure(ErrorType::NetworkError, z),
            RetryDecision::Stop(StopReason::NotRepeatable)
        );
        let mut r = Retry::new(&policy(3, false), Idempotency::NonIdempotent, true);
        assert!(matches!(
            r.after_failure(ErrorType::NetworkError, z),
            RetryDecision::After(_)
        ));
        let mut r = Retry::new(&policy(3, false), Idempotency::Pure, false);
        assert_eq!(
            r.after_failure(ErrorType::ProcessError, z),
            RetryDecision::Stop(StopReason::NotRetryable)
        );
        assert_eq!(
            r.after_failure(ErrorType::NetworkError, Duration::from_millis(9_950)),
            RetryDecision::Stop(StopReason::BudgetExhausted)
        );
    }
}
