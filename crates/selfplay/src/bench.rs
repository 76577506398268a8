//! Self-play throughput, for `xqz bench selfplay`: positions/s, average batch size and
//! the share of wall time the evaluator is busy.

use xq_nn::Evaluator;

use crate::config::SelfplayConfig;
use crate::model::NoModelUpdates;
use crate::stats::Snapshot;
use crate::worker::{RunOptions, SelfplayError, run};

/// Plays `games` self-play games with `evaluator`, writing nothing, and returns the
/// counters: [`Snapshot::positions_per_sec`], [`Snapshot::avg_batch`],
/// [`Snapshot::evaluator_busy`], [`Snapshot::cache_hit_rate`] and the rest.
///
/// # Errors
/// As [`run`].
pub fn selfplay_throughput(
    config: &SelfplayConfig,
    evaluator: Box<dyn Evaluator>,
    games: u64,
    seed: u64,
) -> Result<Snapshot, SelfplayError> {
    let options = RunOptions {
        run_dir: None,
        games: Some(games),
        seed,
        worker_id: Some("bench".into()),
        ..RunOptions::default()
    };
    Ok(run(config, &options, evaluator, Box::new(NoModelUpdates))?.stats)
}

/// A one-line report of a throughput measurement.
pub fn report(s: &Snapshot) -> String {
    format!(
        "{} games, {} positions in {:.2} s: {:.1} positions/s, {:.0} evaluations/s, \
         average batch {:.1}, evaluator busy {:.1}% of wall time, cache hits {:.1}%",
        s.games,
        s.positions,
        s.elapsed.as_secs_f64(),
        s.positions_per_sec(),
        s.evals_per_sec(),
        s.avg_batch(),
        100.0 * s.evaluator_busy(),
        100.0 * s.cache_hit_rate()
    )
}
