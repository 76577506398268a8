//! Counters shared by the worker's threads, their snapshots, and the progress display
//! (an indicatif line on a terminal, plain log lines otherwise).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The indicatif this crate draws with, for a caller that shows the self-play bar among
/// bars of its own (`xqz run` draws it from an [`Observer`](crate::Observer) into a
/// `MultiProgress`, with [`bar_style`] and [`bar_message`]).
pub use indicatif;

/// Live counters; every field only grows.
#[derive(Debug, Default)]
pub struct Counters {
    pub games: AtomicU64,
    /// Moves played (positions searched).
    pub positions: AtomicU64,
    /// Training records (full-search positions) of finished games.
    pub records: AtomicU64,
    pub chunks: AtomicU64,
    /// Evaluator calls and positions sent to it.
    pub batches: AtomicU64,
    pub evaluated: AtomicU64,
    /// Nanoseconds spent inside `Evaluator::evaluate`.
    pub eval_nanos: AtomicU64,
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
    pub batches: u64,
    pub evaluated: u64,
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
    pub model_swaps: u64,
    pub abandoned: u64,
}

impl Counters {
    pub fn snapshot(&self, since: Instant) -> Snapshot {
        let g = |a: &AtomicU64| a.load(Relaxed);
        Snapshot {
            elapsed: since.elapsed(),
            games: g(&self.games),
            positions: g(&self.positions),
            records: g(&self.records),
            chunks: g(&self.chunks),
            batches: g(&self.batches),
            evaluated: g(&self.evaluated),
            eval_busy: Duration::from_nanos(g(&self.eval_nanos)),
            leaves: g(&self.leaves),
            cache_hits: g(&self.cache_hits),
            red_wins: g(&self.red_wins),
            black_wins: g(&self.black_wins),
            draws: g(&self.draws),
            resignations: g(&self.resignations),
            no_resign_games: g(&self.no_resign_games),
            would_resign: g(&self.would_resign),
            false_positives: g(&self.false_positives),
            model_swaps: g(&self.model_swaps),
            abandoned: g(&self.abandoned),
        }
    }
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
            "games {} ({:.2}/s, +{} ={} -{}, {} resigned) | positions {} ({:.1}/s), records {} | \
             batch {:.1}, evaluator busy {:.0}%, cache hits {:.1}% | resign false positives {}/{}",
            self.games,
            self.games_per_sec(),
            self.red_wins,
            self.draws,
            self.black_wins,
            self.resignations,
            self.positions,
            self.positions_per_sec(),
            self.records,
            self.avg_batch(),
            100.0 * self.evaluator_busy(),
            100.0 * self.cache_hit_rate(),
            self.false_positives,
            self.would_resign,
        )
    }
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProgressMode {
    /// A bar on a terminal (stderr), else a log line every `interval`.
    #[default]
    Auto,
    /// Log lines only.
    Lines,
    /// Nothing.
    Quiet,
}

/// The style of the self-play bar: `prefix` before it (may be empty), a bar when the
/// number of games is known.
pub fn bar_style(prefix: &str, bounded: bool) -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template(&bar_template(prefix, bounded))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
}

fn bar_template(prefix: &str, bounded: bool) -> String {
    let template = if bounded {
        "{spinner} [{elapsed_precise}] {pos}/{len} games {bar:20} {msg}"
    } else {
        "{spinner} [{elapsed_precise}] {pos} games {msg}"
    };
    format!("{prefix}{template}")
}

/// The self-play bar's message: rates, batching, cache and resignation checks.
pub fn bar_message(s: &Snapshot) -> String {
    format!(
        "{:.2} games/s, {:.1} pos/s, batch {:.1}, busy {:.0}%, cache {:.0}%, resign FP {}/{}",
        s.games_per_sec(),
        s.positions_per_sec(),
        s.avg_batch(),
        100.0 * s.evaluator_busy(),
        100.0 * s.cache_hit_rate(),
        s.false_positives,
        s.would_resign
    )
}

/// Draws progress until `done` is set; used on a thread of its own.
pub(crate) fn show_progress(
    mode: ProgressMode,
    counters: &Counters,
    start: Instant,
    total_games: Option<u64>,
    interval: Duration,
    done: &std::sync::atomic::AtomicBool,
) {
    if mode == ProgressMode::Quiet {
        return;
    }
    let bar = (mode == ProgressMode::Auto && std::io::stderr().is_terminal()).then(|| {
        let bar = match total_games {
            Some(n) => indicatif::ProgressBar::new(n),
            None => indicatif::ProgressBar::new_spinner(),
        };
        bar.set_style(bar_style("", total_games.is_some()));
        bar
    });
    let mut last_line = Instant::now();
    let tick = Duration::from_millis(200).min(interval);
    while !done.load(Relaxed) {
        std::thread::sleep(tick);
        let s = counters.snapshot(start);
        match &bar {
            Some(b) => {
                b.set_position(s.games);
                b.set_message(bar_message(&s));
            }
            None => {
                if last_line.elapsed() >= interval {
                    last_line = Instant::now();
                    eprintln!("selfplay: {}", s.line());
                }
            }
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_templates_parse_and_the_message_names_the_rates() {
        for bounded in [false, true] {
            let t = bar_template("selfplay ", bounded);
            assert!(indicatif::ProgressStyle::with_template(&t).is_ok(), "{t}");
            assert!(t.starts_with("selfplay "));
        }
        let s = Snapshot {
            elapsed: Duration::from_secs(10),
            games: 5,
            positions: 400,
            ..Snapshot::default()
        };
        let m = bar_message(&s);
        assert!(
            m.contains("0.50 games/s") && m.contains("40.0 pos/s"),
            "{m}"
        );
    }
}
