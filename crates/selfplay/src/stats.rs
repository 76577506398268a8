//! Counters shared by the worker's threads, their snapshots, and the [`Observer`] a
//! caller sees them through. This crate draws and prints nothing; the binaries turn
//! snapshots into bars or log lines.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Live counters; every field only grows.
#[derive(Debug, Default)]
pub struct Counters {
    pub games: AtomicU64,
    /// Moves played (positions searched).
    pub positions: AtomicU64,
    /// Training records (full-search positions) of finished games.
    pub records: AtomicU64,
    pub chunks: AtomicU64,
    /// Games written to the held-out chunks (`held_out_permille`) instead of `data/`.
    pub held_out: AtomicU64,
    /// Evaluator calls and positions sent to it.
    pub batches: AtomicU64,
    pub evaluated: AtomicU64,
    /// Nanoseconds spent inside the evaluator (`Evaluator::evaluate` or a network's
    /// `RawEvaluator::forward_packed` and the copy of its rows), summed over the servers.
    pub eval_nanos: AtomicU64,
    /// Evaluation servers (`servers`; 0 is read as 1).
    pub servers: AtomicU64,
    /// Leaf requests, and those answered from the cache or by another request of
    /// the same batch.
    pub leaves: AtomicU64,
    pub cache_hits: AtomicU64,
    pub red_wins: AtomicU64,
    pub black_wins: AtomicU64,
    pub draws: AtomicU64,
    pub resignations: AtomicU64,
    /// Games played with resignation disabled.
    pub no_resign_games: AtomicU64,
    /// Of those, games where a resignation would have happened, and where it would
    /// have been wrong.
    pub would_resign: AtomicU64,
    pub false_positives: AtomicU64,
    /// Moves searched while soft resignation held the game decided (`resign_soft`).
    pub decided_positions: AtomicU64,
    pub model_swaps: AtomicU64,
    /// Games under way at the deadline, abandoned unwritten.
    pub abandoned: AtomicU64,
}

/// A consistent-enough copy of the counters with derived rates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub elapsed: Duration,
    pub games: u64,
    pub positions: u64,
    pub records: u64,
    pub chunks: u64,
    pub held_out: u64,
    pub batches: u64,
    pub evaluated: u64,
    /// Time inside the evaluator, averaged over the servers: with several, each one's
    /// busy share, not their sum.
    pub eval_busy: Duration,
    pub leaves: u64,
    pub cache_hits: u64,
    pub red_wins: u64,
    pub black_wins: u64,
    pub draws: u64,
    pub resignations: u64,
    pub no_resign_games: u64,
    pub would_resign: u64,
    pub false_positives: u64,
    pub decided_positions: u64,
    pub model_swaps: u64,
    pub abandoned: u64,
    /// The resignation threshold new games start with: `resign_threshold`, or the
    /// calibrated one ([`crate::resign`]).
    pub resign_threshold: f32,
}

impl Counters {
    /// The counters now, with the resignation threshold in force.
    pub fn snapshot(&self, since: Instant, resign_threshold: f32) -> Snapshot {
        let g = |a: &AtomicU64| a.load(Relaxed);
        Snapshot {
            elapsed: since.elapsed(),
            games: g(&self.games),
            positions: g(&self.positions),
            records: g(&self.records),
            chunks: g(&self.chunks),
            held_out: g(&self.held_out),
            batches: g(&self.batches),
            evaluated: g(&self.evaluated),
            eval_busy: Duration::from_nanos(g(&self.eval_nanos) / g(&self.servers).max(1)),
            leaves: g(&self.leaves),
            cache_hits: g(&self.cache_hits),
            red_wins: g(&self.red_wins),
            black_wins: g(&self.black_wins),
            draws: g(&self.draws),
            resignations: g(&self.resignations),
            no_resign_games: g(&self.no_resign_games),
            would_resign: g(&self.would_resign),
            false_positives: g(&self.false_positives),
            decided_positions: g(&self.decided_positions),
            model_swaps: g(&self.model_swaps),
            abandoned: g(&self.abandoned),
            resign_threshold,
        }
    }
}

/// How a caller follows a worker. The worker prints and draws nothing: what it counts
/// and what it skips reach the caller here, which turns them into progress bars, log
/// lines, events and warnings.
pub trait Observer: Send + Sync {
    /// Time between [`Observer::progress`] calls.
    fn every(&self) -> Duration;

    /// The counters so far, every [`Observer::every`] while games are played.
    fn progress(&self, s: &Snapshot);

    /// The final counters, once at the end, also of a run that failed (its games
    /// written so far are in them).
    fn finished(&self, s: &Snapshot);

    /// A network the [`ModelSource`](crate::model::ModelSource) offered that could not be loaded (`error` says
    /// why): the worker plays on with the network it has, and asks the source again at
    /// its next poll.
    fn model_skipped(&self, error: &str);
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

impl Snapshot {
    fn secs(&self) -> f64 {
        self.elapsed.as_secs_f64().max(1e-9)
    }
    pub fn games_per_sec(&self) -> f64 {
        self.games as f64 / self.secs()
    }
    pub fn positions_per_sec(&self) -> f64 {
        self.positions as f64 / self.secs()
    }
    /// Positions the evaluator was asked for, per second.
    pub fn evals_per_sec(&self) -> f64 {
        self.evaluated as f64 / self.secs()
    }
    pub fn avg_batch(&self) -> f64 {
        ratio(self.evaluated, self.batches)
    }
    pub fn cache_hit_rate(&self) -> f64 {
        ratio(self.cache_hits, self.leaves)
    }
    /// Share of wall time spent inside the evaluator.
    pub fn evaluator_busy(&self) -> f64 {
        (self.eval_busy.as_secs_f64() / self.secs()).min(1.0)
    }
    /// Would-be resignations that were wrong, among games with resignation disabled
    /// that had one.
    pub fn resign_false_positive_rate(&self) -> f64 {
        ratio(self.false_positives, self.would_resign)
    }

    /// One status line.
    pub fn line(&self) -> String {
        format!(
            "games {} ({:.2}/s, +{} ={} -{}, {} resigned) | positions {} ({:.1}/s), records {}, decided {} | \
             batch {:.1}, evaluator busy {:.0}%, cache hits {:.1}% | resign false positives {}/{} \
             (threshold {:.3})",
            self.games,
            self.games_per_sec(),
            self.red_wins,
            self.draws,
            self.black_wins,
            self.resignations,
            self.positions,
            self.positions_per_sec(),
            self.records,
            self.decided_positions,
            self.avg_batch(),
            100.0 * self.evaluator_busy(),
            100.0 * self.cache_hit_rate(),
            self.false_positives,
            self.would_resign,
            self.resign_threshold,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_rates_are_per_second_of_wall_time_and_zero_when_nothing_was_counted() {
        let s = Snapshot {
            elapsed: Duration::from_secs(10),
            games: 5,
            positions: 400,
            ..Snapshot::default()
        };
        assert_eq!(s.games_per_sec(), 0.5);
        assert_eq!(s.positions_per_sec(), 40.0);
        assert_eq!((s.avg_batch(), s.cache_hit_rate()), (0.0, 0.0));
        assert!(s.line().starts_with("games 5 (0.50/s"), "{}", s.line());
    }
}
