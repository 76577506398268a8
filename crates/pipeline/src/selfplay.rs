//! `xqz selfplay --run DIR [--config FILE] [--games N] [--seed S]`: a self-play worker
//! writing chunks and PGN records into a run directory.
//!
//! The network is the run's accepted one (`models/accepted.json`, a pointer
//! `{"name", "path", …}` to a checkpoint sidecar); a run without one plays with the
//! uniform evaluator (the first generation, like AlphaZero's random initialisation).
//! The pointer is polled every `model_poll_seconds`, and a newly accepted network is
//! swapped in without restarting. Several workers, on several machines, can share one
//! run directory: each writes files named by its own id.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::{
    events::{Event, SelfplayEvent},
    run::RunConfig,
    rundir::RunDir,
};
use xq_nn::{Evaluator, UniformEvaluator};
use xq_selfplay::{
    ModelSource, Observer, PointerWatcher, ProgressMode, RunOptions, SelfplayConfig, Snapshot,
    content_hash, worker_id,
};

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Run directory: chunks go to DIR/data, PGN records to DIR/games.
    pub run: PathBuf,
    /// Config file whose [selfplay] section is used (default: DIR/config.toml if it
    /// exists, else the built-in defaults); the whole file is read and checked, as
    /// `xqz run` reads it.
    pub config: Option<PathBuf>,
    /// Games to play (default: until the process is stopped).
    pub games: Option<u64>,
    /// Seed of every random choice (default: drawn at random and recorded in
    /// DIR/workers/<worker>.toml, so workers sharing a run play different games).
    pub seed: Option<u64>,
    /// Print progress as plain log lines even on a terminal.
    pub log_lines: bool,
    /// No progress output, only the final summary.
    pub quiet: bool,
    /// Set by the binary's SIGTERM/SIGINT handler: the worker writes every finished
    /// game and exits, abandoning the games in progress ([`RunOptions::interrupt`]).
    pub interrupt: Option<Arc<std::sync::atomic::AtomicBool>>,
}

pub fn run(args: Options) -> Result<()> {
    let run_dir = RunDir::open(&args.run)?;
    let config_path = run_dir.config_for(args.config.as_deref());
    let config = match &config_path {
        Some(p) => RunConfig::load(p)?.selfplay,
        None => SelfplayConfig::default(),
    };

    let (evaluator, watcher) = load_accepted_evaluator(&run_dir, &config)?;

    let worker = worker_id();
    let seed = args.seed.unwrap_or_else(|| seed_from(&worker));
    let events = run_dir.clone();
    let event_worker = worker.clone();
    let options = RunOptions {
        run_dir: Some(args.run.clone()),
        games: args.games,
        seed,
        worker_id: Some(worker.clone()),
        progress: if args.quiet {
            ProgressMode::Quiet
        } else if args.log_lines {
            ProgressMode::Lines
        } else {
            ProgressMode::Auto
        },
        progress_interval_secs: 10.0,
        stop: None,
        interrupt: args.interrupt.clone(),
        deadline: None,
        observer: Some(Observer {
            every: Duration::from_secs(60),
            call: Arc::new({
                let tb = std::sync::Mutex::new(xq_train::logging::TbLogger::new(
                    args.run.join("logs/selfplay").join(&worker),
                ));
                move |s: &Snapshot| {
                    if let Err(e) = events.record(selfplay_event(&event_worker, s)) {
                        eprintln!("selfplay: warning: {e:#}");
                    }
                    if let Ok(mut tb) = tb.lock() {
                        log_tensorboard(&mut tb, s, s.games);
                    }
                }
            }),
        }),
    };
    if !args.quiet {
        eprintln!(
            "selfplay: worker {worker}, seed {seed}, network {}, {} games at once{}",
            evaluator.name(),
            config.parallel_games,
            config_path
                .as_ref()
                .map(|p| format!(", config {}", p.display()))
                .unwrap_or_default()
        );
    }
    let summary = xq_selfplay::run(&config, &options, evaluator, watcher)?;
    println!(
        "selfplay: worker {}: {}",
        summary.worker_id,
        summary.stats.line()
    );
    Ok(())
}

/// How self-play loads its networks: `[selfplay] threads` intra-op threads in each of
/// `[selfplay] eval_workers` copies (0 = one per core this process may use, and no more
/// than `max_batch`: a copy beyond it would never get a part of a batch).
pub fn evaluator_options(config: &SelfplayConfig) -> xq_train::EvaluatorOptions {
    let workers = match config.eval_workers {
        0 => std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(config.max_batch.max(1)),
        n => n,
    };
    xq_train::EvaluatorOptions {
        threads: config.threads,
        workers,
        ..xq_train::EvaluatorOptions::default()
    }
}

/// Loads the network the run's pointer names, on the backend `XQZ_BACKEND` chooses
/// (`auto`: native on the CPU, libtorch with CUDA); a native evaluator splits each
/// batch over `options.workers` threads, as libtorch's copies do.
fn load_accepted(run: &RunDir, options: xq_train::EvaluatorOptions) -> Result<Box<dyn Evaluator>> {
    let model = run
        .accepted()?
        .with_context(|| format!("{} names no network", run.pointer_path().display()))?;
    let path = run.model_path(&model);
    let context = || format!("cannot load the accepted network {}", path.display());
    if xq_native::BackendChoice::from_env()?.is_native(xq_train::cuda_available) {
        // One thread per evaluator copy: each evaluates its part of every batch.
        let ev = xq_native::NativeEvaluator::load(&path, options.workers).with_context(context)?;
        return Ok(Box::new(ev));
    }
    let ev = xq_train::TorchEvaluator::load(&path, options).with_context(context)?;
    Ok(Box::new(ev))
}

/// The run's accepted network (the uniform evaluator when there is none yet: the
/// first generation) and a watcher of the pointer that swaps in each newly accepted
/// network, each loaded as `config` says ([`evaluator_options`]).
///
/// # Errors
/// If the pointer names a network that cannot be loaded.
pub fn load_accepted_evaluator(
    run: &RunDir,
    config: &SelfplayConfig,
) -> Result<(Box<dyn Evaluator>, Box<dyn ModelSource>)> {
    let options = evaluator_options(config);
    let run_dir = run.clone();
    let pointer = run.pointer_path();
    let (evaluator, current): (Box<dyn Evaluator>, Option<u64>) = if pointer.is_file() {
        let current = content_hash(&pointer);
        (load_accepted(&run_dir, options)?, current)
    } else {
        (Box::new(UniformEvaluator), None)
    };
    let watcher = PointerWatcher::new(pointer, current, move |_: &Path| {
        load_accepted(&run_dir, options).map_err(|e| format!("{e:#}"))
    });
    Ok((evaluator, Box::new(watcher)))
}

/// The fields of a `selfplay` event (ARCHITECTURE.md, "The run directory"): the
/// worker's counters so far (cumulative for that worker).
pub fn selfplay_event(worker: &str, s: &Snapshot) -> Event {
    Event::Selfplay(SelfplayEvent {
        worker: worker.to_owned(),
        seconds: s.elapsed.as_secs_f64(),
        games: s.games,
        positions: s.positions,
        records: s.records,
        average_length: if s.games > 0 {
            s.positions as f64 / s.games as f64
        } else {
            0.0
        },
        red_wins: s.red_wins,
        draws: s.draws,
        black_wins: s.black_wins,
        resignations: s.resignations,
        games_per_second: s.games_per_sec(),
        positions_per_second: s.positions_per_sec(),
        average_batch: s.avg_batch(),
        cache_hit_rate: s.cache_hit_rate(),
        evaluator_busy: s.evaluator_busy(),
        no_resign_games: s.no_resign_games,
        would_resign: s.would_resign,
        resign_false_positives: s.false_positives,
        resign_false_positive_rate: s.resign_false_positive_rate(),
        model_swaps: s.model_swaps,
    })
}

/// Writes a worker's counters as TensorBoard scalars (`selfplay/...`) at `step`
/// (games so far): game length, result split, resignation false positives, speed and
/// batching. Logging problems are reported, never fatal.
pub fn log_tensorboard(tb: &mut xq_train::logging::TbLogger, s: &Snapshot, step: u64) {
    #[allow(clippy::cast_precision_loss)]
    let share = |n: u64| {
        if s.games > 0 {
            n as f64 / s.games as f64
        } else {
            0.0
        }
    };
    #[allow(clippy::cast_precision_loss)]
    let length = if s.games > 0 {
        s.positions as f64 / s.games as f64
    } else {
        0.0
    };
    let scalars = [
        ("selfplay/average_game_length", length),
        ("selfplay/red_win_share", share(s.red_wins)),
        ("selfplay/draw_share", share(s.draws)),
        ("selfplay/black_win_share", share(s.black_wins)),
        (
            "selfplay/resign_false_positive_rate",
            s.resign_false_positive_rate(),
        ),
        ("selfplay/positions_per_second", s.positions_per_sec()),
        ("selfplay/average_batch", s.avg_batch()),
        ("selfplay/cache_hit_rate", s.cache_hit_rate()),
        ("selfplay/evaluator_busy", s.evaluator_busy()),
    ];
    for (tag, value) in scalars {
        if let Err(e) = tb.scalar(tag, value, step) {
            eprintln!("selfplay: warning: TensorBoard: {e}");
            return;
        }
    }
}

/// A seed for a worker started without `--seed`: a hash of its unique id.
fn seed_from(worker: &str) -> u64 {
    xq_core::hash::fnv1a(worker.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_play_evaluates_with_one_copy_of_the_network_per_usable_core_by_default() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let default = evaluator_options(&SelfplayConfig::default());
        assert_eq!((default.workers, default.threads), (cores.min(256), 1));
        let small_batches = evaluator_options(&SelfplayConfig {
            max_batch: 1,
            ..SelfplayConfig::default()
        });
        assert_eq!(small_batches.workers, 1);
        let set = evaluator_options(&SelfplayConfig {
            eval_workers: 3,
            threads: 2,
            ..SelfplayConfig::default()
        });
        assert_eq!((set.workers, set.threads), (3, 2));
    }
}
