//! Stopping a running search from another thread: the `stop` flag and a deadline
//! that `ponderhit` can set after the search started.

use std::{
    sync::atomic::{AtomicBool, AtomicU64, Ordering},
    time::{Duration, Instant},
};

/// Shared between a search and whoever may stop it. Searches poll
/// [`SearchControl::should_stop`] every few hundred nodes.
#[derive(Debug)]
pub struct SearchControl {
    start: Instant,
    stop: AtomicBool,
    /// Milliseconds after `start`; `u64::MAX` for none.
    deadline_ms: AtomicU64,
}

impl Default for SearchControl {
    fn default() -> Self {
        SearchControl::new(None)
    }
}

impl SearchControl {
    /// A control whose clock starts now, with an optional time budget.
    pub fn new(budget: Option<Duration>) -> SearchControl {
        let c = SearchControl {
            start: Instant::now(),
            stop: AtomicBool::new(false),
            deadline_ms: AtomicU64::new(u64::MAX),
        };
        c.set_budget_from_now(budget);
        c
    }

    /// Sets (or clears) the deadline to `budget` from now.
    pub fn set_budget_from_now(&self, budget: Option<Duration>) {
        let ms = match budget {
            Some(b) => (self.start.elapsed() + b)
                .as_millis()
                .min(u64::MAX as u128 - 1) as u64,
            None => u64::MAX,
        };
        self.deadline_ms.store(ms, Ordering::SeqCst);
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Stop requested or deadline passed.
    pub fn should_stop(&self) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            return true;
        }
        let d = self.deadline_ms.load(Ordering::Relaxed);
        d != u64::MAX && self.start.elapsed().as_millis() as u64 >= d
    }

    /// Time since the search started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}
