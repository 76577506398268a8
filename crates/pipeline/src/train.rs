//! The train session: trains the run's network on its self-play data (paced to the
//! data, as KataGo does) and/or on PGN game records, resuming exactly from the newest
//! checkpoint. [`TrainSession`] is the loop; [`train_once`] is `xqz train`'s
//! invocation, [`train_until`] and [`train_concurrently`] are `xqz run`'s phases.
//!
//! # Data streams
//! Two sample streams feed the trainer, each a pure function of (seed, step, window)
//! (see xq-data's `batch` module):
//! - the **supervised** stream over PGN records (`--pgn`, or `[train.pretrain]` for the
//!   first `steps` steps of a new run), with a held-out split by game hash whose top-1
//!   move-prediction accuracy is logged as `holdout/policy_top1`;
//! - the **self-play** stream over the replay window of `RUN/data`.
//!
//! The held-out self-play games (`RUN/data/held-out`, `[selfplay] held_out_permille`)
//! are never trained on: their newest `holdout_max` positions are evaluated every
//! `holdout_every` steps and at the end of each call that trained on self-play data,
//! logged as `holdout_selfplay/*`, beside the records' `holdout/*`.
//!
//! Checkpoints go to `RUN/checkpoints` (xq-train), candidates to
//! `models/candidates/` every `candidate_every` steps and when pre-training ends,
//! TensorBoard scalars to `RUN/logs/train`, and a `train` event to `RUN/events.jsonl`
//! every `event_every` steps.
//!
//! Both cursors, the self-play window's manifest and the pre-training target are stored
//! in every checkpoint's sidecar (`data_cursor`), so a process killed at any moment and
//! started again continues from the last checkpoint with the same batches.
//!
//! # Pacing
//! The self-play stream takes at most `samples_per_position` samples per position in
//! the data directory: with `P` positions written, steps stop once
//! `samples + batch_size > P × samples_per_position`, and [`TrainTarget::Paced`] returns
//! (the run loop then plays more games) while [`TrainTarget::Steps`] polls for new data.
//! With `max_reuse`, the window is also kept to a share of the data small enough that
//! each position is drawn at most that many times in expectation (xq-data's `window`
//! module derives it): pacing alone bounds the samples per position *written*, not the
//! draws of one record, and a window holding all data draws its oldest records
//! `s·ln(N/n)` times.
//!
//! # Learning rate over the run
//! `lr_anneal = "cosine"` anneals the rate of self-play training from the trainer's
//! rate to `lr_anneal_final` of it over the run, by a [`Progress`] the caller gives (the run's
//! share of its wall-time budget or of `max_steps`): a short run's budget is known in
//! time, not in steps, so the trainer's step-based `schedule` cannot end with it. The
//! factor is set before every self-play step (and record step mixed into it) as the
//! trainer's rate scale, which multiplies its warmup and `schedule`; pre-training keeps
//! the plateau rule's scale. The `train` event's `lr` is the rate used, scale included.
//! A wall-clock progress makes the rate depend on timing, so only a step-based one
//! resumes bit for bit.

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use xq_core::Color;
use xq_data::{
    Batch, BatchConfig, ChunkMeta, DataCursor, LeafWdl, Outcome, PgnGame, PrefetchConfig,
    Prefetcher, SplitConfig, Window, WindowLoader, WindowManifest, WindowSize, assemble_range,
    games_to_chunks, read_pgn_files,
};
use xq_eval::adjudicate::{Adjudicator, Verdict, VerdictBy};
use xq_train::{HostBatch, LossWeights, StepMeans, StepStats, Trainer};

use xq_run::{
    ModelRef, RunDir,
    events::{
        Event, HoldoutEvent, HoldoutSplit, TrainEvent, TrainPhase, WarningAction, WarningWhat,
    },
};

use crate::{
    config::train::{DataSection, TrainSection, ValueLabels},
    progress::{SharedObserver, StepView, Task, TaskProgress, Update},
};

/// How far the run is, for `[train] lr_anneal`: a function from the run's step to
/// the fraction of the run done, in [0, 1].
#[derive(Clone)]
pub struct Progress(ProgressRule);

#[derive(Clone)]
enum ProgressRule {
    Constant,
    Steps(u64),
    Clock(Arc<dyn Fn() -> f64 + Send + Sync>),
}

impl Progress {
    /// Always at the start: the schedule stays at its full rate (`xqz train`, a run
    /// without a budget or step limit).
    pub fn constant() -> Progress {
        Progress(ProgressRule::Constant)
    }

    /// `step / max_steps`: a run bounded by its step count (0: no bound, always at the
    /// start, as `[run] max_steps = 0` means).
    pub fn steps(max_steps: u64) -> Progress {
        Progress(ProgressRule::Steps(max_steps))
    }

    /// Whatever `done` says, asked at every step, whatever the step: a run bounded by
    /// wall time (the budget's share spent). Values outside [0, 1] are clamped, NaN is
    /// taken as 0.
    pub fn clock(done: Arc<dyn Fn() -> f64 + Send + Sync>) -> Progress {
        Progress(ProgressRule::Clock(done))
    }

    /// The fraction of the run done at `step`, in [0, 1].
    pub fn fraction(&self, step: u64) -> f64 {
        let f = match &self.0 {
            ProgressRule::Constant | ProgressRule::Steps(0) => 0.0,
            ProgressRule::Steps(max) => step as f64 / *max as f64,
            ProgressRule::Clock(done) => done(),
        };
        if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) }
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            ProgressRule::Constant => f.write_str("Progress::constant()"),
            ProgressRule::Steps(n) => write!(f, "Progress::steps({n})"),
            ProgressRule::Clock(_) => f.write_str("Progress::clock(..)"),
        }
    }
}

/// How far one call of [`TrainSession::train`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrainTarget {
    /// Take this many more steps, waiting (polling every second) for self-play data when
    /// the pacing or `min_positions` holds training back.
    Steps(u64),
    /// Train as far as the pacing allows now (at most `max_steps` more steps when
    /// given), then return instead of waiting: for a run loop that interleaves
    /// self-play.
    Paced { max_steps: Option<u64> },
}

/// Why a call of [`TrainSession::train`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The target's steps were taken.
    Target,
    /// The pacing (or `min_positions`) needs more self-play data first.
    NeedData,
    /// The stop flag was raised.
    Stopped,
}

/// Where training stands after a call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainProgress {
    /// Optimiser steps of the run so far.
    pub step: u64,
    /// Steps taken by this call.
    pub steps_taken: u64,
    /// Training samples consumed by the run (both streams).
    pub samples: u64,
    /// Self-play samples consumed (the pacing's numerator).
    pub selfplay_samples: u64,
    /// Positions in the run's data directory at the last look.
    pub positions: u64,
    /// Positions in the current self-play window (0 before the first).
    pub window: u64,
    /// The newest checkpoint's sidecar, if one exists.
    pub checkpoint: Option<PathBuf>,
    /// Candidates published by this call.
    pub candidates: Vec<ModelRef>,
    /// The last held-out top-1 accuracy, when there is a held-out split.
    pub holdout_top1: Option<f64>,
    pub reason: StopReason,
}

/// Held-out evaluation result.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HoldoutStats {
    pub positions: u64,
    pub policy_top1: f64,
    pub policy_loss: f64,
    /// Over the positions with a value target; `None` when none has one.
    pub value_loss: Option<f64>,
    /// Expected top-1 accuracy of a uniform guess over the legal moves.
    pub uniform_top1: f64,
}

impl HoldoutStats {
    /// What pre-training's plateau rule watches: the policy loss plus `value_weight`
    /// (`[train.pretrain] value_weight`) times the value loss, the held-out form of the
    /// loss the record batches train.
    pub fn plateau_loss(&self, value_weight: f64) -> f64 {
        self.policy_loss + value_weight * self.value_loss.unwrap_or(0.0)
    }
}

/// How a training step's loss treats its batch, by the batch's source
/// (`Trainer::set_loss_scales`). Record batches (pre-training and mixed-in steps) weigh
/// their value loss by `[train.pretrain] value_weight` (1 without a pretrain section)
/// and train the network's value alone; self-play batches weigh their policy and value
/// losses by `[train] selfplay_policy_weight` and `selfplay_value_weight` and blend the
/// value with leaf quiescence at `[train] value_quiescence`.
fn loss_scales(data: &DataSection, from_records: bool) -> LossWeights {
    if from_records {
        LossWeights {
            value: data.pretrain.as_ref().map_or(1.0, |p| p.value_weight),
            ..LossWeights::PLAIN
        }
    } else {
        LossWeights {
            policy: data.selfplay_policy_weight,
            value: data.selfplay_value_weight,
            leaf: data.value_quiescence,
        }
    }
}

/// What the checkpoint sidecar's `data_cursor` holds for this command.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct SavedData {
    /// Steps of supervised pre-training the run started with.
    #[serde(default)]
    pretrain_steps: u64,
    #[serde(default)]
    supervised: Option<DataCursor>,
    #[serde(default)]
    selfplay: Option<DataCursor>,
    #[serde(default)]
    manifest: Option<WindowManifest>,
    /// Step of the last rescan that could adopt a new window: `refresh_every` counts
    /// from here, across sessions. Counted from each session's first step instead, the
    /// sync loop's sessions (one a phase) never adopted new data once a phase took fewer
    /// than `refresh_every` steps (the 2-hour run at 32c0657 trained its last 2,950
    /// steps on one window). 0 in checkpoints of earlier versions: adopt at once.
    #[serde(default)]
    window_step: u64,
    /// The pre-training plateau rule's state (`[train.pretrain] patience`).
    #[serde(default)]
    plateau: Plateau,
}

/// The pre-training plateau rule (`[train.pretrain] patience`): the best held-out loss
/// so far, the evaluations since it, and the rate's factor they have brought about.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Plateau {
    best: Option<f64>,
    since_best: u32,
    lr_scale: f64,
}

impl Default for Plateau {
    fn default() -> Plateau {
        Plateau {
            best: None,
            since_best: 0,
            lr_scale: 1.0,
        }
    }
}

impl Plateau {
    /// Takes a held-out loss; returns whether pre-training should end (the loss has not
    /// improved `patience` times in a row). Each evaluation without improvement
    /// multiplies the rate by `lr_drop`.
    fn observe(&mut self, loss: f64, patience: u32, lr_drop: f64) -> bool {
        if self.best.is_none_or(|b| loss < b) {
            self.best = Some(loss);
            self.since_best = 0;
            return false;
        }
        self.since_best += 1;
        self.lr_scale *= lr_drop;
        self.since_best >= patience
    }
}

/// The PGN records a session trains on or evaluates: files, held-out share, and how
/// records without a result get a value target.
#[derive(Debug, Clone, PartialEq)]
struct SupervisedSource {
    files: Vec<PathBuf>,
    held_out_permille: u32,
    labels: Option<Adjudicator>,
}

/// The PGN records, split.
struct Supervised {
    train: Arc<Window>,
    held_out: Window,
    prefetcher: Option<Prefetcher>,
}

/// The self-play side: the loader of `RUN/data`, the window in use and its stream.
struct SelfplayData {
    loader: WindowLoader,
    window: Option<Arc<Window>>,
    prefetcher: Option<Prefetcher>,
    /// Positions in the data directory at the last refresh.
    positions: u64,
    /// No compaction before this (set for a while after one failed).
    compact_after: Option<Instant>,
    /// The loader of the held-out games (`RUN/data/held-out`): their newest
    /// `holdout_max` positions, evaluated and never trained on. Never compacted: a
    /// worker holds out one game in twenty, so their files stay few.
    held_out: WindowLoader,
    /// The step of the last evaluation of the held-out games.
    held_out_step: Option<u64>,
}

/// The interval of one `train` event: the step means (record batches mixed into
/// self-play training are counted apart, their losses left out) and the time spent
/// waiting for data.
struct EventInterval {
    means: StepMeans,
    waited: Duration,
}

impl EventInterval {
    fn new() -> EventInterval {
        EventInterval {
            means: StepMeans::new(),
            waited: Duration::ZERO,
        }
    }
}

/// A trainer bound to a run directory, kept open across calls so the run loop can
/// alternate training and self-play without reloading the network.
pub struct TrainSession {
    run: RunDir,
    cfg: TrainSection,
    trainer: Trainer,
    saved: SavedData,
    /// Train only on PGN records (`xqz train --pgn`), never on self-play data.
    supervised_only: bool,
    /// The supervised data's source, loaded on first use (a resumed run past its
    /// pre-training only needs it for held-out evaluation).
    supervised_files: Option<SupervisedSource>,
    supervised: Option<Supervised>,
    selfplay: SelfplayData,
    last_saved: Option<(u64, PathBuf)>,
    last_candidate: u64,
    interval: EventInterval,
    holdout_top1: Option<f64>,
    /// The run's progress, which `[train] lr_anneal` anneals the self-play rate over.
    progress: Progress,
    obs: SharedObserver,
    /// The training display, begun at the first step and ended with the session.
    task: Option<Box<dyn TaskProgress>>,
}

/// Reports a file the session skipped or a saved state it ignored: a `warning` event
/// in the run's log, and a warning line to the observer.
fn warn(run: &RunDir, obs: &SharedObserver, event: Event) {
    obs.warn(&run.warn(event));
}

impl std::fmt::Debug for TrainSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrainSession")
            .field("run", &self.run)
            .field("step", &self.trainer.step_count())
            .finish_non_exhaustive()
    }
}

fn chunk_meta() -> ChunkMeta {
    ChunkMeta {
        encoding_version: xq_nn::encode::ENCODING_VERSION,
        policy_index_version: xq_nn::policy::POLICY_INDEX_VERSION,
        creator: format!("xqz train {}", env!("CARGO_PKG_VERSION")),
        seed: 0,
    }
}

/// The records [`load_supervised`] loaded in this process, one entry per run directory
/// and source, with the files' sizes and modification times they were read at. A sync
/// `xqz run` opens a train session every generation; reading, labelling and splitting
/// the master games again each time cost about 4 s a generation on 2 cores (and
/// repeated each warning in the run's log). Another run directory loads afresh, so
/// its log gets its own warnings.
type LoadedRecords = (
    PathBuf,
    SupervisedSource,
    Vec<Option<FileStamp>>,
    Arc<Window>,
    Window,
);
type FileStamp = (u64, std::time::SystemTime);
static LOADED: std::sync::Mutex<Vec<LoadedRecords>> = std::sync::Mutex::new(Vec::new());

/// A file's size and modification time, to tell whether it changed since it was read.
fn stamp(path: &Path) -> Option<FileStamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// The PGN records of `source`, from [`LOADED`] when the same files, unchanged, were
/// loaded the same way before in this process.
fn load_supervised(
    source: &SupervisedSource,
    run: &RunDir,
    obs: &SharedObserver,
) -> Result<Supervised> {
    let stamps: Vec<Option<FileStamp>> = source.files.iter().map(|f| stamp(f)).collect();
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let entry = loaded
        .iter()
        .position(|(root, s, ..)| root == run.root() && s == source);
    if let Some((_, _, st, train, held_out)) = entry.map(|i| &loaded[i])
        && *st == stamps
        && stamps.iter().all(Option::is_some)
    {
        return Ok(Supervised {
            train: Arc::clone(train),
            held_out: held_out.clone(),
            prefetcher: None,
        });
    }
    let records = read_supervised(source, run, obs)?;
    let fresh = (
        run.root().to_path_buf(),
        source.clone(),
        stamps,
        Arc::clone(&records.train),
        records.held_out.clone(),
    );
    match entry {
        Some(i) => loaded[i] = fresh,
        None => loaded.push(fresh),
    }
    Ok(records)
}

/// Reads, labels and splits the PGN records of `source`; one warning per file with
/// unreadable games.
fn read_supervised(
    source: &SupervisedSource,
    run: &RunDir,
    obs: &SharedObserver,
) -> Result<Supervised> {
    let split = SplitConfig {
        held_out_permille: source.held_out_permille,
        salt: 0,
    };
    let (mut games, skipped) = read_pgn_files(&source.files).context("cannot load PGN records")?;
    if let Some(adjudicator) = source.labels {
        label_games(&mut games, adjudicator, obs)?;
    }
    let data = games_to_chunks(&games, &chunk_meta(), &split).context("cannot load PGN records")?;
    // One warning per file (a collection may hold thousands of bad games), naming the
    // first game's problem.
    let mut by_file: Vec<(&Path, usize, &xq_data::SkippedGame)> = Vec::new();
    for game in &skipped {
        match by_file.iter_mut().find(|(p, ..)| *p == game.path.as_path()) {
            Some((_, n, _)) => *n += 1,
            None => by_file.push((&game.path, 1, game)),
        }
    }
    for (path, n, first) in by_file {
        warn(
            run,
            obs,
            Event::file_warning(
                WarningWhat::PgnGame,
                path,
                WarningAction::Skipped,
                format!("{n} game(s) cannot be read, the first: {}", first.error),
            ),
        );
    }
    let train = Window::from_chunk("pgn-train", data.train);
    let held_out = Window::from_chunk("pgn-held-out", data.held_out);
    if train.is_empty() {
        bail!(
            "the PGN files hold no trainable positions ({} games skipped)",
            skipped.len()
        );
    }
    obs.log(&format!(
        "PGN records: {} training positions, {} held-out positions",
        train.len(),
        held_out.len()
    ));
    Ok(Supervised {
        train: Arc::new(train),
        held_out,
        prefetcher: None,
    })
}

/// Gives each game without a result one from `adjudicator` (xq-eval's `adjudicate`
/// rule), on rayon's pool, and says how the verdicts fell. Deterministic: each game's
/// verdict depends on that game alone.
fn label_games(
    games: &mut [PgnGame],
    adjudicator: Adjudicator,
    obs: &SharedObserver,
) -> Result<()> {
    use rayon::prelude::*;
    let started = Instant::now();
    let verdicts: Vec<Verdict> = games
        .par_iter_mut()
        .filter(|g| g.result.is_none())
        .map(|g| {
            let v = adjudicator
                .judge(&g.start, &g.moves)
                .with_context(|| format!("cannot label the PGN game at line {}", g.line))?;
            g.result = Some(Outcome::of_winner(v.winner));
            Ok(v)
        })
        .collect::<Result<_>>()?;
    let n = verdicts.len();
    if n == 0 {
        return Ok(());
    }
    let (mut red, mut draws, mut black, mut by_rules) = (0, 0, 0, 0);
    for v in &verdicts {
        match v.winner {
            Some(Color::Red) => red += 1,
            Some(Color::Black) => black += 1,
            None => draws += 1,
        }
        by_rules += usize::from(matches!(v.by, VerdictBy::Rules(_)));
    }
    obs.log(&format!(
        "value labels for {n} PGN games without a result (alpha-beta depth {}, margin {} cp): \
         {red} red wins, {draws} draws, {black} black wins ({by_rules} ended by the rules), {:.1} s",
        adjudicator.depth,
        adjudicator.margin_cp,
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

impl TrainSession {
    /// Opens the run's trainer: resumes from the newest checkpoint in `RUN/checkpoints`
    /// (its data cursors and window manifest included) or starts a new network.
    /// `pgn` (non-empty) trains on those records only, as `xqz train --pgn` does;
    /// otherwise the run's self-play data is used, after `[train.pretrain]` on a new run.
    /// Log lines, warnings and every step (a [`Task::Train`]) go to `obs`.
    ///
    /// # Errors
    /// A checkpoint that contradicts the config, unreadable PGN files, an unwritable run.
    pub fn open(
        run: &RunDir,
        cfg: &TrainSection,
        pgn: &[PathBuf],
        obs: &SharedObserver,
    ) -> Result<TrainSession> {
        let fresh = xq_train::checkpoint::list_checkpoints(&run.checkpoints_dir())?.is_empty();
        let mut trainer = Trainer::open(run.root(), cfg.trainer.clone())
            .with_context(|| format!("cannot open the trainer of {}", run.root().display()))?;
        trainer.set_tensorboard_dir(run.train_logs_dir());
        let checkpoint = || {
            xq_train::checkpoint::list_checkpoints(&run.checkpoints_dir())
                .ok()
                .and_then(|mut c| c.pop())
                .map_or_else(|| run.checkpoints_dir(), |(_, p)| p)
        };
        if !fresh {
            obs.log(&format!(
                "resumed {} at step {}",
                checkpoint().display(),
                trainer.step_count()
            ));
        }
        let mut saved: SavedData = match trainer.data_cursor() {
            Some(v) => serde_json::from_value(v.clone()).unwrap_or_else(|e| {
                warn(
                    run,
                    obs,
                    Event::file_warning(
                        WarningWhat::Checkpoint,
                        checkpoint(),
                        WarningAction::Ignored,
                        format!(
                            "its data cursor cannot be read ({e}); the data streams start afresh"
                        ),
                    ),
                );
                SavedData::default()
            }),
            None => SavedData::default(),
        };
        let supervised_only = !pgn.is_empty();
        if !supervised_only && trainer.step_count() < saved.pretrain_steps {
            trainer.set_lr_scale(saved.plateau.lr_scale);
        }
        let mut supervised = None;
        let supervised_files = if supervised_only {
            let p = cfg.data.pretrain.as_ref();
            let source = SupervisedSource {
                files: pgn.to_vec(),
                held_out_permille: p.map_or(50, |p| p.held_out_permille),
                labels: p
                    .map_or_else(ValueLabels::default, |p| p.value_labels)
                    .adjudicator(),
            };
            // Loaded now: the PGN files are the only data, so errors should come first.
            supervised = Some(load_supervised(&source, run, obs)?);
            Some(source)
        } else if let Some(p) = &cfg.data.pretrain {
            if fresh {
                saved.pretrain_steps = p.steps;
            }
            Some(SupervisedSource {
                files: p.pgn.clone(),
                held_out_permille: p.held_out_permille,
                labels: p.value_labels.adjudicator(),
            })
        } else {
            None
        };
        let mut selfplay = SelfplayData {
            loader: WindowLoader::new(run.data_dir(), cfg.data.window.size())
                .with_reuse_cap(cfg.data.reuse_cap()?),
            window: None,
            prefetcher: None,
            positions: 0,
            compact_after: None,
            held_out: WindowLoader::new(
                run.selfplay_held_out_dir(),
                WindowSize::Fixed(cfg.data.holdout_max.max(1)),
            ),
            held_out_step: None,
        };
        if !supervised_only && let Some(m) = &saved.manifest {
            match selfplay.loader.load_manifest(m) {
                Ok(w) => selfplay.window = Some(Arc::new(w)),
                Err(e) => warn(
                    run,
                    obs,
                    Event::file_warning(
                        WarningWhat::Checkpoint,
                        checkpoint(),
                        WarningAction::Ignored,
                        format!("its replay window cannot be rebuilt ({e}); using the newest data"),
                    ),
                ),
            }
        }
        let step = trainer.step_count();
        let last_saved = xq_train::checkpoint::list_checkpoints(&run.checkpoints_dir())?
            .pop()
            .filter(|(s, _)| *s == step);
        Ok(TrainSession {
            run: run.clone(),
            cfg: cfg.clone(),
            last_candidate: step,
            trainer,
            saved,
            supervised_only,
            supervised_files,
            supervised,
            selfplay,
            last_saved,
            interval: EventInterval::new(),
            holdout_top1: None,
            progress: Progress::constant(),
            obs: obs.clone(),
            task: None,
        })
    }

    /// Optimiser steps of the run so far.
    pub fn step(&self) -> u64 {
        self.trainer.step_count()
    }

    /// Sets the run's progress that `[train] lr_anneal` anneals self-play training
    /// over ([`Progress::constant`] until set).
    pub fn set_progress(&mut self, progress: Progress) {
        self.progress = progress;
    }

    /// The step where the current stretch ends, as far as is known now (see
    /// [`StepView::end`]); `target_end` is the end of the call's target.
    fn stretch_end(&self, target_end: Option<u64>) -> Option<u64> {
        let step = self.trainer.step_count();
        let known = if self.supervised_only {
            None
        } else if self.in_pretrain() {
            Some(self.saved.pretrain_steps)
        } else {
            let d = &self.cfg.data;
            let used = self.saved.selfplay.map_or(0, |c| c.samples) as f64;
            let allowed = self.selfplay.positions as f64 * d.samples_per_position;
            let left = ((allowed - used) / d.batch_size.max(1) as f64)
                .floor()
                .max(0.0) as u64;
            // Mixed-in record steps come on top: one in every `mix_every`.
            let mixed = self
                .mix_every()
                .filter(|&every| every > 1)
                .map_or(0, |every| left / (every - 1));
            Some(step + left + mixed)
        };
        match (known, target_end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn batch_config(&self, seed: u64) -> BatchConfig {
        BatchConfig {
            batch_size: self.cfg.data.batch_size,
            encoder: self.cfg.trainer.net.encoder(),
            mirror: self.cfg.data.mirror,
            seed,
            q_ratio: self.cfg.data.q_ratio as f32,
            leaf_wdl: None,
        }
    }

    fn prefetch_config(&self) -> PrefetchConfig {
        PrefetchConfig {
            depth: self.cfg.data.prefetch,
            threads: self.cfg.data.data_threads,
        }
    }

    /// `[train.pretrain] mix_every` where record steps are mixed into self-play
    /// training: with PGN records, and not in `xqz train --pgn`.
    fn mix_every(&self) -> Option<u64> {
        let every = self.cfg.data.pretrain.as_ref().map_or(0, |p| p.mix_every);
        (!self.supervised_only && every > 0 && self.has_supervised()).then_some(every)
    }

    /// Whether the next step after pre-training is one of `[train.pretrain] mix_every`.
    fn mix_due(&self) -> bool {
        self.mix_every()
            .is_some_and(|every| (self.trainer.step_count() + 1).is_multiple_of(every))
    }

    /// The record steps mixed into self-play training among steps `from + 1 ..= to`:
    /// the multiples of `mix_every` after pre-training ([`Self::mix_due`]). Derived from
    /// the step numbers, so a `train` event counts its whole interval however the
    /// loop's pauses and a resume cut it.
    fn record_steps_in(&self, from: u64, to: u64) -> u64 {
        let from = from.max(self.saved.pretrain_steps);
        self.mix_every()
            .map_or(0, |every| (to / every).saturating_sub(from / every))
    }

    fn in_pretrain(&self) -> bool {
        self.supervised_only || self.trainer.step_count() < self.saved.pretrain_steps
    }

    /// Whether PGN records are configured (so a held-out split can exist).
    fn has_supervised(&self) -> bool {
        self.supervised_files.is_some()
    }

    /// Loads the PGN records on first use.
    fn ensure_supervised(&mut self) -> Result<&mut Supervised> {
        if self.supervised.is_none() {
            let source = self
                .supervised_files
                .as_ref()
                .context("no PGN records configured")?;
            self.supervised = Some(load_supervised(source, &self.run, &self.obs)?);
        }
        self.supervised.as_mut().context("no PGN records loaded")
    }

    /// The next supervised batch.
    fn supervised_batch(&mut self) -> Result<Batch> {
        let bcfg = self.batch_config(self.cfg.trainer.seed ^ 0x5eed_0001);
        let pcfg = self.prefetch_config();
        let saved = self.saved.supervised;
        let sup = self.ensure_supervised()?;
        if sup.prefetcher.is_none() {
            let cursor = match saved {
                Some(c) => DataCursor {
                    window_fingerprint: sup.train.fingerprint(),
                    ..c
                },
                None => DataCursor::start(bcfg.seed, &sup.train),
            };
            sup.prefetcher = Some(Prefetcher::new(Arc::clone(&sup.train), bcfg, cursor, pcfg)?);
        }
        let p = sup
            .prefetcher
            .as_mut()
            .context("no supervised prefetcher")?;
        let before = p.wait_time();
        let batch = p.next_batch()?;
        let waited = p.wait_time() - before;
        let cursor = p.cursor();
        self.interval.waited += waited;
        self.saved.supervised = Some(cursor);
        Ok(batch)
    }

    /// Rescans `RUN/data`; adopts the new window when `adopt` (or when there is none).
    fn refresh(&mut self, adopt: bool) -> Result<()> {
        let (window, report) = self
            .selfplay
            .loader
            .refresh()
            .with_context(|| format!("cannot read {}", self.run.data_dir().display()))?;
        self.warn_skipped(report.skipped);
        self.warn_removed(&report.removed);
        self.selfplay.positions = report.total_records;
        self.compact(&window, report.target);
        let changed = self
            .selfplay
            .window
            .as_ref()
            .is_none_or(|w| w.fingerprint() != window.fingerprint());
        if adopt {
            self.saved.window_step = self.trainer.step_count();
        }
        if (adopt || self.selfplay.window.is_none()) && changed && !window.is_empty() {
            self.selfplay.window = Some(Arc::new(window));
            self.selfplay.prefetcher = None;
        }
        Ok(())
    }

    /// A `warning` event (and warning line) for each temporary a rescan removed.
    fn warn_removed(&self, removed: &[PathBuf]) {
        for path in removed {
            warn(
                &self.run,
                &self.obs,
                Event::file_warning(
                    WarningWhat::Chunk,
                    path,
                    WarningAction::Removed,
                    "the temporary file of a write cut short (over an hour old)",
                ),
            );
        }
    }

    /// A `warning` event (and warning line) for each chunk that could not be read.
    fn warn_skipped(&self, skipped: Vec<xq_data::ChunkFileError>) {
        for e in skipped {
            warn(
                &self.run,
                &self.obs,
                Event::file_warning(
                    WarningWhat::Chunk,
                    &e.path,
                    WarningAction::Skipped,
                    e.source.to_string(),
                ),
            );
        }
    }

    /// Merges old chunks (`[train] compact_files`), so a long run's rescans stay cheap:
    /// those behind twice the window `target` and behind every chunk of `fresh` (the
    /// window just scanned), of the window in use and of the saved manifest, which must
    /// stay loadable by name. A failure is a warning and pauses compaction for ten
    /// minutes; an unreadable old chunk is a warning once.
    fn compact(&mut self, fresh: &Window, target: u64) {
        const PAUSE: Duration = Duration::from_secs(600);
        let files = self.cfg.data.compact_files;
        if files < 2
            || self
                .selfplay
                .compact_after
                .is_some_and(|t| Instant::now() < t)
        {
            return;
        }
        let mut protect: HashSet<String> = fresh.chunks().iter().map(|c| c.name.clone()).collect();
        if let Some(w) = &self.selfplay.window {
            protect.extend(w.chunks().iter().map(|c| c.name.clone()));
        }
        if let Some(m) = &self.saved.manifest {
            protect.extend(m.chunks.iter().map(|c| c.name.clone()));
        }
        match self
            .selfplay
            .loader
            .compact(target.saturating_mul(2), files, &protect)
        {
            Ok(c) => {
                self.warn_skipped(c.skipped);
                if c.written > 0 {
                    self.obs.log(&format!(
                        "data: {} old chunk files merged into {} ({} positions)",
                        c.merged_files, c.written, c.records
                    ));
                }
            }
            Err(e) => {
                self.selfplay.compact_after = Some(Instant::now() + PAUSE);
                warn(
                    &self.run,
                    &self.obs,
                    Event::file_warning(
                        WarningWhat::Chunk,
                        self.run.data_dir(),
                        WarningAction::Skipped,
                        format!("chunk compaction paused for ten minutes: {e}"),
                    ),
                );
            }
        }
    }

    /// Whether the pacing and `min_positions` allow another self-play step.
    fn selfplay_allowed(&self) -> bool {
        let used = self.saved.selfplay.map_or(0, |c| c.samples);
        self.selfplay.window.is_some() && self.cfg.data.pacing_allows(used, self.selfplay.positions)
    }

    fn selfplay_batch(&mut self) -> Result<Batch> {
        let bcfg = BatchConfig {
            // What the value loss blends with (`[train] value_quiescence`).
            leaf_wdl: (self.cfg.data.value_quiescence > 0.0)
                .then_some(xq_eval::tactics::quiescence_wdl as LeafWdl),
            ..self.batch_config(self.cfg.trainer.seed ^ 0x5eed_0002)
        };
        let pcfg = self.prefetch_config();
        let window = Arc::clone(
            self.selfplay
                .window
                .as_ref()
                .context("no self-play window")?,
        );
        if self.selfplay.prefetcher.is_none() {
            // A new window continues the stream's step count under its own fingerprint.
            let cursor = match self.saved.selfplay {
                Some(c) => DataCursor {
                    window_fingerprint: window.fingerprint(),
                    ..c
                },
                None => DataCursor::start(bcfg.seed, &window),
            };
            self.selfplay.prefetcher =
                Some(Prefetcher::new(Arc::clone(&window), bcfg, cursor, pcfg)?);
            self.saved.manifest = Some(window.manifest());
            self.trainer.set_window_size(window.len());
        }
        let p = self
            .selfplay
            .prefetcher
            .as_mut()
            .context("no self-play prefetcher")?;
        let before = p.wait_time();
        let batch = p.next_batch()?;
        self.interval.waited += p.wait_time() - before;
        self.saved.selfplay = Some(p.cursor());
        Ok(batch)
    }

    /// Trains towards `target`; checks `stop` between steps. Saves a checkpoint before
    /// returning (when steps were taken since the last), so the run loop can hand the
    /// machine to self-play and a kill loses nothing.
    ///
    /// # Errors
    /// Unreadable data directory, a diverged loss, unwritable checkpoints or events.
    pub fn train(&mut self, target: TrainTarget, stop: &AtomicBool) -> Result<TrainProgress> {
        let start = self.trainer.step_count();
        let limit = match target {
            TrainTarget::Steps(n) => Some(n),
            TrainTarget::Paced { max_steps } => max_steps,
        };
        let mut candidates = Vec::new();
        let mut waiting_logged = false;
        let mut trained_selfplay = false;
        self.interval = EventInterval::new();
        let reason = loop {
            if stop.load(Ordering::Relaxed) {
                break StopReason::Stopped;
            }
            if limit.is_some_and(|n| self.trainer.step_count() - start >= n) {
                break StopReason::Target;
            }
            let supervised = self.in_pretrain();
            // A record batch: pre-training, or a mixed-in step after it.
            let mut from_records = supervised;
            let batch = if supervised {
                self.supervised_batch()?
            } else {
                let step = self.trainer.step_count();
                let due =
                    step.saturating_sub(self.saved.window_step) >= self.cfg.data.refresh_every;
                if due || self.selfplay.window.is_none() {
                    self.refresh(true)?;
                }
                if !self.selfplay_allowed() {
                    self.refresh(false)?;
                }
                if !self.selfplay_allowed() {
                    if matches!(target, TrainTarget::Paced { .. }) {
                        break StopReason::NeedData;
                    }
                    if !waiting_logged {
                        self.obs.log(&format!(
                            "waiting for self-play data ({} positions; min_positions {}, samples_per_position {})",
                            self.selfplay.positions,
                            self.cfg.data.min_positions,
                            self.cfg.data.samples_per_position
                        ));
                        waiting_logged = true;
                    }
                    // Sleep in short slices so the stop flag is seen quickly.
                    for _ in 0..10 {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    continue;
                }
                waiting_logged = false;
                if self.mix_due() {
                    from_records = true;
                    self.supervised_batch()?
                } else {
                    self.selfplay_batch()?
                }
            };
            if !supervised {
                let fraction = self.progress.fraction(self.trainer.step_count());
                self.trainer.set_lr_scale(self.cfg.data.lr_factor(fraction));
            }
            self.trainer
                .set_loss_scales(loss_scales(&self.cfg.data, from_records));
            let stats = {
                let host = HostBatch::from_data(&batch)?;
                self.trainer.step(&host)?
            };
            self.recycle(batch, from_records);
            trained_selfplay |= !from_records;
            self.after_step(&stats, supervised, from_records, &mut candidates)?;
            let view = StepView {
                step: stats.step,
                samples: self.trainer.samples_seen(),
                total_loss: stats.total_loss,
                policy_accuracy: stats.policy_accuracy,
                supervised,
                end: self.stretch_end(limit.map(|n| start + n)),
                logged: stats.logged,
            };
            let obs = &self.obs;
            self.task
                .get_or_insert_with(|| obs.begin(Task::Train))
                .update(Update::Train(&view));
        };
        let step = self.trainer.step_count();
        // At least one look per call that trained on self-play data, so a run whose
        // calls are shorter than `holdout_every` still has the curve; a stop (a
        // deadline) is not kept waiting for it.
        if trained_selfplay
            && reason != StopReason::Stopped
            && self.cfg.data.holdout_every > 0
            && self.selfplay.held_out_step != Some(step)
        {
            self.holdout_selfplay()?;
        }
        if self.last_saved.as_ref().is_none_or(|(s, _)| *s != step) && step > 0 {
            self.save()?;
        }
        Ok(TrainProgress {
            step,
            steps_taken: step - start,
            samples: self.trainer.samples_seen(),
            selfplay_samples: self.saved.selfplay.map_or(0, |c| c.samples),
            positions: self.selfplay.positions,
            window: self.selfplay.window.as_ref().map_or(0, |w| w.len()),
            checkpoint: self.last_saved.as_ref().map(|(_, p)| p.clone()),
            candidates,
            holdout_top1: self.holdout_top1,
            reason,
        })
    }

    /// The stream that produced `batch` takes its buffers back.
    fn recycle(&mut self, batch: Batch, supervised: bool) {
        if supervised {
            if let Some(p) = self.supervised.as_ref().and_then(|s| s.prefetcher.as_ref()) {
                p.recycle(batch);
            }
        } else if let Some(p) = &self.selfplay.prefetcher {
            p.recycle(batch);
        }
    }

    fn save(&mut self) -> Result<PathBuf> {
        self.trainer
            .set_data_cursor(serde_json::to_value(&self.saved)?);
        let path = self
            .trainer
            .save_checkpoint()
            .context("cannot write a checkpoint")?;
        self.last_saved = Some((self.trainer.step_count(), path.clone()));
        Ok(path)
    }

    /// Turns the trainer's TensorBoard failure (a full disk), if any, into a warning:
    /// the curves stop, training goes on.
    fn warn_if_tensorboard_stopped(&mut self) {
        if let Some(e) = self.trainer.take_tensorboard_failure() {
            warn(
                &self.run,
                &self.obs,
                Event::file_warning(
                    WarningWhat::Tensorboard,
                    self.run.train_logs_dir(),
                    WarningAction::Stopped,
                    format!("TensorBoard logging stopped: {e}"),
                ),
            );
        }
    }

    /// Bookkeeping after a step: events, held-out evaluation, checkpoints, candidates.
    /// `supervised`: a pre-training step; `from_records`: any step on the PGN records
    /// (mixed-in ones after pre-training are counted apart, so the self-play losses
    /// in the events stay the self-play losses).
    fn after_step(
        &mut self,
        s: &StepStats,
        supervised: bool,
        from_records: bool,
        candidates: &mut Vec<ModelRef>,
    ) -> Result<()> {
        self.warn_if_tensorboard_stopped();
        let d = &self.cfg.data;
        let (event_every, holdout_every, candidate_every) =
            (d.event_every, d.holdout_every, d.candidate_every);
        let step = s.step;
        let iv = &mut self.interval;
        if from_records && !supervised {
            iv.means.add_samples(s.samples);
        } else {
            iv.means.add(s);
        }
        if event_every > 0 && step.is_multiple_of(event_every) {
            let record_steps = self.record_steps_in(step - event_every, step);
            let iv = &self.interval;
            let wall = iv.means.elapsed().as_secs_f64().max(1e-9);
            let m = iv.means.means();
            let finite = |x: f64| x.is_finite().then_some(x);
            self.run.record(Event::Train(TrainEvent {
                step,
                samples: self.trainer.samples_seen(),
                policy_loss: finite(m.policy_loss),
                value_loss: finite(m.value_loss),
                total_loss: finite(m.total_loss),
                policy_accuracy: finite(m.policy_accuracy),
                value_accuracy: finite(m.value_accuracy),
                lr: finite(s.lr),
                grad_norm: finite(m.grad_norm),
                samples_per_second: finite(iv.means.samples_per_second()),
                window: self.selfplay.window.as_ref().map_or(0, |w| w.len()),
                data_wait_share: finite((iv.waited.as_secs_f64() / wall).min(1.0)),
                phase: if supervised {
                    TrainPhase::Supervised
                } else {
                    TrainPhase::Selfplay
                },
                record_steps,
                device: Some(xq_train::device_name(self.trainer.device())),
                extra: Default::default(),
            }))?;
            self.interval = EventInterval::new();
        }
        let plateau_evaluated = supervised && !self.supervised_only && self.plateau_step(step)?;
        let pretrain_done = !self.supervised_only
            && self.saved.pretrain_steps > 0
            && step == self.saved.pretrain_steps;
        if pretrain_done {
            self.trainer.set_lr_scale(1.0);
        }
        let holdout_due = holdout_every > 0 && step.is_multiple_of(holdout_every);
        if (holdout_due || pretrain_done)
            && !plateau_evaluated
            && self.has_supervised()
            && !self.ensure_supervised()?.held_out.is_empty()
        {
            self.holdout()?;
        }
        if holdout_due && !self.supervised_only {
            self.holdout_selfplay()?;
        }
        if self.trainer.checkpoint_due() {
            self.save()?;
        }
        if (candidate_every > 0 && step.is_multiple_of(candidate_every) || pretrain_done)
            && step > self.last_candidate
        {
            let path = match &self.last_saved {
                Some((s, p)) if *s == step => p.clone(),
                _ => self.save()?,
            };
            let m = self.run.publish_candidate(&path, step)?;
            self.obs.log(&format!("candidate {} published", m.name));
            self.last_candidate = step;
            candidates.push(m);
        }
        Ok(())
    }

    /// The pre-training plateau rule at `step` of pre-training: a held-out evaluation
    /// every `eval_every` steps when `patience` is set, the rate lowered on a plateau,
    /// and pre-training ended here after `patience` of them. Returns whether it
    /// evaluated.
    fn plateau_step(&mut self, step: u64) -> Result<bool> {
        let Some(p) = self.cfg.data.pretrain.as_ref() else {
            return Ok(false);
        };
        let (patience, lr_drop, every, value_weight) =
            (p.patience, p.lr_drop, p.eval_every, p.value_weight);
        if patience == 0
            || every == 0
            || !step.is_multiple_of(every)
            || step >= self.saved.pretrain_steps
            || self.ensure_supervised()?.held_out.is_empty()
        {
            return Ok(false);
        }
        let h = self.holdout()?;
        let end = self
            .saved
            .plateau
            .observe(h.plateau_loss(value_weight), patience, lr_drop);
        self.trainer.set_lr_scale(self.saved.plateau.lr_scale);
        if end {
            self.obs.log(&format!(
                "pre-training ends at step {step} of at most {}: the held-out loss has not \
                 improved on {:.4} for {patience} evaluations",
                self.saved.pretrain_steps,
                self.saved.plateau.best.unwrap_or(f64::NAN)
            ));
            self.saved.pretrain_steps = step;
        } else if self.saved.plateau.since_best > 0 {
            self.obs.log(&format!(
                "step {step}: held-out loss on a plateau, pre-training rate × {:.3}",
                self.saved.plateau.lr_scale
            ));
        }
        Ok(true)
    }

    /// Loss and top-1 move-prediction accuracy of the EMA network on the held-out PGN
    /// split (its first `holdout_max` positions), logged to TensorBoard as `holdout/*`.
    ///
    /// # Errors
    /// No held-out split, or a failed forward pass.
    pub fn holdout(&mut self) -> Result<HoldoutStats> {
        if !self.has_supervised() {
            bail!("no PGN records: no held-out split");
        }
        self.ensure_supervised()?;
        let sup = self.supervised.as_ref().context("no PGN records loaded")?;
        let Some(h) = evaluate_window(&mut self.trainer, &self.cfg, &sup.held_out)? else {
            bail!("the held-out split is empty");
        };
        self.holdout_top1 = Some(h.policy_top1);
        self.record_holdout(HoldoutSplit::Records, "holdout", "held-out", &h)?;
        Ok(h)
    }

    /// The same evaluation on the newest `holdout_max` positions of the held-out
    /// self-play games (`RUN/data/held-out`, rescanned now), logged to TensorBoard as
    /// `holdout_selfplay/*`. `None` while there are none: a run that has not held out
    /// a game yet, or one with `[selfplay] held_out_permille = 0`.
    ///
    /// # Errors
    /// A held-out directory that cannot be listed, or a failed forward pass.
    pub fn holdout_selfplay(&mut self) -> Result<Option<HoldoutStats>> {
        self.selfplay.held_out_step = Some(self.trainer.step_count());
        let (window, report) = match self.selfplay.held_out.refresh() {
            Ok(found) => found,
            // Workers create it with their first output.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("cannot read {}", self.run.selfplay_held_out_dir().display())
                });
            }
        };
        self.warn_skipped(report.skipped);
        self.warn_removed(&report.removed);
        let Some(h) = evaluate_window(&mut self.trainer, &self.cfg, &window)? else {
            return Ok(None);
        };
        self.record_holdout(
            HoldoutSplit::Selfplay,
            "holdout_selfplay",
            "held-out self-play",
            &h,
        )?;
        Ok(Some(h))
    }

    /// Logs a held-out evaluation: TensorBoard scalars `TAG/*`, a line naming the
    /// split as `name`, and a `holdout` event.
    fn record_holdout(
        &mut self,
        split: HoldoutSplit,
        tag: &str,
        name: &str,
        h: &HoldoutStats,
    ) -> Result<()> {
        self.trainer
            .log_scalar(&format!("{tag}/policy_top1"), h.policy_top1);
        self.trainer
            .log_scalar(&format!("{tag}/policy_loss"), h.policy_loss);
        if let Some(v) = h.value_loss {
            self.trainer.log_scalar(&format!("{tag}/value_loss"), v);
        }
        self.warn_if_tensorboard_stopped();
        let step = self.trainer.step_count();
        self.obs.log(&format!(
            "step {step}: {name} top-1 {:.3} (uniform {:.3}) policy loss {:.3} value loss {} on {} positions",
            h.policy_top1,
            h.uniform_top1,
            h.policy_loss,
            h.value_loss.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}")),
            h.positions
        ));
        self.run.record(Event::Holdout(HoldoutEvent {
            step,
            split,
            positions: h.positions,
            policy_loss: h.policy_loss,
            value_loss: h.value_loss,
            policy_top1: h.policy_top1,
        }))?;
        Ok(())
    }
}

/// Mean losses and top-1 move-prediction accuracy of `trainer`'s EMA network on the
/// first `holdout_max` positions of `window` (every held-out split's one loop); `None`
/// when it is empty. The value loss is a mean over the positions with a value target.
fn evaluate_window(
    trainer: &mut Trainer,
    cfg: &TrainSection,
    window: &Window,
) -> Result<Option<HoldoutStats>> {
    let n = window.len().min(cfg.data.holdout_max.max(1));
    if n == 0 {
        return Ok(None);
    }
    let encoder = cfg.trainer.net.encoder();
    let size = cfg.data.batch_size as u64;
    let mut batch = Batch::new(cfg.data.batch_size, &encoder);
    let (mut top1, mut pl, mut uniform) = (0.0, 0.0, 0.0);
    let (mut vl, mut valued) = (0.0, 0.0);
    let mut start = 0;
    while start < n {
        let end = (start + size).min(n);
        assemble_range(window, &encoder, start..end, &mut batch)?;
        let host = HostBatch::from_data(&batch)?;
        let e = trainer.evaluate(&host)?;
        let k = e.samples as f64;
        top1 += e.policy_accuracy * k;
        pl += e.policy_loss * k;
        let v = batch
            .has_value
            .iter()
            .take(e.samples)
            .filter(|&&x| x > 0.0)
            .count() as f64;
        vl += e.value_loss * v;
        valued += v;
        for row in batch.legal.rows() {
            let legal = row.iter().filter(|&&x| x != 0).count().max(1);
            uniform += 1.0 / legal as f64;
        }
        start = end;
    }
    let nf = n as f64;
    Ok(Some(HoldoutStats {
        positions: n,
        policy_top1: top1 / nf,
        policy_loss: pl / nf,
        value_loss: (valued > 0.0).then(|| vl / valued),
        uniform_top1: uniform / nf,
    }))
}

/// One training phase of the run loop: opens the run's trainer (resuming from its
/// newest checkpoint), runs `[train.pretrain]` first on a new run, then trains on the
/// self-play data as far as the pacing allows, up to step `max_step` when given; saves a
/// checkpoint and returns the run's step count. Returns early, with a checkpoint, when
/// `stop` is raised. `progress` is the run's, for `[train] lr_anneal`. `obs` gets the
/// session's lines and steps (as [`TrainSession::open`]). A loop that trains while
/// self-play runs uses [`train_concurrently`] instead (no reload of the network and
/// window per call).
///
/// # Errors
/// As [`TrainSession::open`] and [`TrainSession::train`].
pub fn train_until(
    run: &RunDir,
    cfg: &TrainSection,
    max_step: Option<u64>,
    progress: &Progress,
    stop: &AtomicBool,
    obs: &SharedObserver,
) -> Result<u64> {
    if stop.load(Ordering::Relaxed) || !may_train(run, cfg, max_step)? {
        return current_step(run);
    }
    let mut session = TrainSession::open(run, cfg, &[], obs)?;
    session.set_progress(progress.clone());
    let max_steps = max_step.map(|m| m.saturating_sub(session.step()));
    if max_steps == Some(0) {
        return Ok(session.step());
    }
    Ok(session.train(TrainTarget::Paced { max_steps }, stop)?.step)
}

/// The training side of a concurrent run loop: until `stop` is raised or step
/// `max_step` is reached, trains as far as the pacing allows, saves a checkpoint when
/// the data runs out (as [`train_until`] does), and looks for new self-play data every
/// `poll`. One [`TrainSession`] serves the whole phase, opened when the first step is
/// possible (before that only the cheap look of [`may_train`] runs), so the network,
/// the optimiser and the replay window are loaded once, and `obs` sees one training
/// task for the phase. `progress` is the run's, for `[train] lr_anneal`. Returns the
/// run's step count.
///
/// # Errors
/// As [`TrainSession::open`] and [`TrainSession::train`].
pub fn train_concurrently(
    run: &RunDir,
    cfg: &TrainSection,
    max_step: Option<u64>,
    progress: &Progress,
    stop: &AtomicBool,
    poll: Duration,
    obs: &SharedObserver,
) -> Result<u64> {
    let mut session: Option<TrainSession> = None;
    let mut step = current_step(run)?;
    while !stop.load(Ordering::SeqCst) && max_step.is_none_or(|m| step < m) {
        if session.is_none() && may_train(run, cfg, max_step)? {
            let mut opened = TrainSession::open(run, cfg, &[], obs)?;
            opened.set_progress(progress.clone());
            session = Some(opened);
        }
        if let Some(s) = &mut session {
            let max_steps = max_step.map(|m| m.saturating_sub(s.step()));
            step = s.train(TrainTarget::Paced { max_steps }, stop)?.step;
            if max_step.is_some_and(|m| step >= m) {
                break;
            }
        }
        // Wait for more self-play data, in short slices so `stop` is seen quickly.
        let until = Instant::now() + poll;
        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(poll.min(Duration::from_millis(100)));
        }
    }
    Ok(step)
}

/// A cheap look (checkpoint sidecar and chunk headers, no network, no chunk bodies)
/// at whether [`train_until`] could take a step now, so a loop polling it does not
/// load the trainer and its window while the pacing says no.
fn may_train(run: &RunDir, cfg: &TrainSection, max_step: Option<u64>) -> Result<bool> {
    let newest = xq_train::checkpoint::list_checkpoints(&run.checkpoints_dir())?.pop();
    let (step, saved) = match &newest {
        Some((step, path)) => {
            let sc = xq_train::checkpoint::Sidecar::read(path)?;
            let saved: SavedData = sc
                .data_cursor
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default();
            (*step, saved)
        }
        None => (0, SavedData::default()),
    };
    if max_step.is_some_and(|m| step >= m) {
        return Ok(false);
    }
    let pretraining = match newest {
        None => cfg.data.pretrain.as_ref().is_some_and(|p| p.steps > 0),
        Some(_) => step < saved.pretrain_steps,
    };
    if pretraining {
        return Ok(true);
    }
    let mut positions = 0u64;
    let dir = run.data_dir();
    for entry in
        std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))?
    {
        let path = entry?.path();
        if xq_data::io::is_chunk_file(&path)
            && let Ok(h) = xq_data::read_chunk_header(&path)
        {
            positions += u64::from(h.records);
        }
    }
    let used = saved.selfplay.map_or(0, |c| c.samples);
    Ok(cfg.data.pacing_allows(used, positions))
}

/// The step of the run's newest checkpoint (0 when it has none).
///
/// # Errors
/// If the checkpoint directory cannot be read.
pub fn current_step(run: &RunDir) -> Result<u64> {
    Ok(
        xq_train::checkpoint::list_checkpoints(&run.checkpoints_dir())?
            .pop()
            .map_or(0, |(s, _)| s),
    )
}

/// What one `xqz train` invocation did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trained {
    pub progress: TrainProgress,
    /// The held-out evaluation at the end, when the PGN records have a held-out split.
    pub holdout: Option<HoldoutStats>,
}

/// `xqz train`: `steps` more optimiser steps (on self-play data waiting, and saying
/// so, whenever the pacing holds training back), or without `steps` as far as the
/// pacing allows now. With `pgn` files it trains on those records only, by default
/// `[train.pretrain] steps` (or 1000) steps, and ends with the held-out evaluation.
/// The session's lines and steps go to `obs`.
///
/// # Errors
/// As [`TrainSession::open`], [`TrainSession::train`] and [`TrainSession::holdout`].
pub fn train_once(
    run: &RunDir,
    cfg: &TrainSection,
    steps: Option<u64>,
    pgn: &[PathBuf],
    obs: &SharedObserver,
) -> Result<Trained> {
    let mut session = TrainSession::open(run, cfg, pgn, obs)?;
    let target = match (steps, pgn.is_empty()) {
        (Some(n), _) => TrainTarget::Steps(n),
        (None, false) => TrainTarget::Steps(cfg.data.pretrain.as_ref().map_or(1000, |p| p.steps)),
        (None, true) => TrainTarget::Paced { max_steps: None },
    };
    let progress = session.train(target, &AtomicBool::new(false))?;
    let holdout = if session
        .supervised
        .as_ref()
        .is_some_and(|s| !s.held_out.is_empty())
    {
        Some(session.holdout()?)
    } else {
        None
    };
    Ok(Trained { progress, holdout })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{config::train::PretrainSection, progress::testing::Recorder};

    /// An observer that drops everything.
    fn quiet() -> SharedObserver {
        Recorder::new(false).1
    }

    fn tiny() -> TrainSection {
        crate::config::RunConfig::parse(
            r#"
            [train]
            batch_size = 16
            device = "cpu"
            threads = 1
            log_every = 0
            min_positions = 50
            checkpoint_every = 0
            event_every = 0
            [train.net]
            blocks = 1
            channels = 8
            history = 2
            value_channels = 2
            value_hidden = 8
            "#,
        )
        .unwrap()
        .train
    }

    #[test]
    fn record_batches_get_the_pretrain_value_weight_and_self_play_batches_their_own() {
        let data = crate::config::RunConfig::parse(
            "[train]\nvalue_quiescence = 0.75\n[train.pretrain]\npgn = [\"x.pgn\"]\nsteps = 10\nvalue_weight = 0.25\n[selfplay.search]\nleaf_quiescence = 0.75\n",
        )
        .unwrap()
        .train
        .data;
        let weights = |policy, value, leaf| LossWeights {
            policy,
            value,
            leaf,
        };
        assert_eq!(loss_scales(&data, true), weights(1.0, 0.25, 0.0));
        assert_eq!(loss_scales(&data, false), weights(1.0, 1.0, 0.75));
        // Without a pretrain section (`xqz train --pgn`) records weigh the value by 1.
        let plain = tiny().data;
        assert_eq!(loss_scales(&plain, true), LossWeights::PLAIN);
        assert_eq!(loss_scales(&plain, false), LossWeights::PLAIN);
        // Self-play's own weights leave the records' weights as they were.
        for (keys, selfplay) in [
            ("selfplay_value_weight = 0", weights(1.0, 0.0, 0.0)),
            ("selfplay_policy_weight = 0", weights(0.0, 1.0, 0.0)),
        ] {
            let data = crate::config::RunConfig::parse(&format!(
                "[train]\n{keys}\n[train.pretrain]\npgn = [\"x.pgn\"]\nsteps = 10\nvalue_weight = 0.25\n"
            ))
            .unwrap()
            .train
            .data;
            assert_eq!(loss_scales(&data, false), selfplay, "{keys}");
            assert_eq!(loss_scales(&data, true), weights(1.0, 0.25, 0.0), "{keys}");
        }
    }

    #[test]
    fn the_plateau_watches_policy_plus_the_weighted_value_loss() {
        let h = HoldoutStats {
            positions: 10,
            policy_top1: 0.2,
            policy_loss: 2.5,
            value_loss: Some(1.2),
            uniform_top1: 0.03,
        };
        assert!((h.plateau_loss(0.25) - 2.8).abs() < 1e-12);
        assert!((h.plateau_loss(1.0) - 3.7).abs() < 1e-12);
        let no_value = HoldoutStats {
            value_loss: None,
            ..h
        };
        assert_eq!(no_value.plateau_loss(1.0), 2.5);
    }

    #[test]
    fn the_plateau_lowers_the_rate_and_ends_after_patience_evaluations_without_improvement() {
        let mut p = Plateau::default();
        // (held-out loss, ends pre-training, rate factor after it)
        let steps = [
            (3.0, false, 1.0),
            (2.5, false, 1.0),
            (2.6, false, 0.5),
            (2.4, false, 0.5),
            (2.4, false, 0.25),
            (2.45, true, 0.125),
        ];
        for (i, (loss, ends, scale)) in steps.into_iter().enumerate() {
            assert_eq!(p.observe(loss, 2, 0.5), ends, "evaluation {i}");
            assert_eq!(p.lr_scale, scale, "evaluation {i}");
        }
        assert_eq!(p.best, Some(2.4));
    }

    /// The first `n` games of the master collection in a file of their own.
    fn master_games(dir: &Path, n: usize) -> PathBuf {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/hu_ronghua_1391_iccs.pgn"
        ))
        .unwrap();
        let games: Vec<&str> = text.split("[Event ").skip(1).take(n).collect();
        let path = dir.join("masters.pgn");
        std::fs::write(&path, format!("[Event {}", games.join("[Event "))).unwrap();
        path
    }

    #[test]
    fn pretraining_labels_records_without_a_result_and_ends_on_a_held_out_plateau() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path().join("run")).unwrap();
        let mut cfg = tiny();
        cfg.data.pretrain = Some(PretrainSection {
            pgn: vec![master_games(dir.path(), 40)],
            steps: 400,
            held_out_permille: 250,
            mix_every: 0,
            value_labels: ValueLabels {
                depth: 2,
                margin_cp: 180,
            },
            eval_every: 1,
            patience: 1,
            lr_drop: 0.5,
            value_weight: 1.0,
        });
        // A rate this high cannot improve the held-out loss every step.
        cfg.trainer.lr = 0.5;
        cfg.trainer.ema_decay = 0.0;
        cfg.trainer.warmup_steps = 0;
        let (recorder, obs) = Recorder::new(false);
        let mut session = TrainSession::open(&run, &cfg, &[], &obs).unwrap();
        // Paced: once pre-training ends there is no self-play data, and the call returns.
        let done = session
            .train(
                TrainTarget::Paced {
                    max_steps: Some(400),
                },
                &AtomicBool::new(false),
            )
            .unwrap();
        assert_eq!(done.reason, StopReason::NeedData);
        let lines = recorder.lines();
        assert!(
            lines
                .iter()
                .any(|l| l.contains("value labels for 40 PGN games")),
            "{lines:?}"
        );
        let ended = lines
            .iter()
            .find(|l| l.contains("pre-training ends at step"))
            .unwrap_or_else(|| panic!("pre-training ran its 400 steps: {lines:?}"));
        let log = run.events().unwrap();
        let holdouts: Vec<&HoldoutEvent> = log
            .records
            .iter()
            .filter_map(|r| match &r.event {
                Event::Holdout(h) => Some(h),
                _ => None,
            })
            .collect();
        assert!(!holdouts.is_empty(), "{ended}");
        for h in &holdouts {
            assert_eq!(h.split, HoldoutSplit::Records);
            assert!(h.value_loss.is_some_and(f64::is_finite), "{h:?}");
        }
        let end = holdouts.last().unwrap().step;
        assert!(end < 400 && session.step() == end, "{ended}");
    }

    #[test]
    fn records_are_read_and_labelled_once_per_run_until_their_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path().join("run")).unwrap();
        let pgn = master_games(dir.path(), 6);
        let source = SupervisedSource {
            files: vec![pgn.clone()],
            held_out_permille: 0,
            labels: ValueLabels {
                depth: 1,
                margin_cp: 180,
            }
            .adjudicator(),
        };
        let loads = |run: &RunDir| {
            let (recorder, obs) = Recorder::new(false);
            let records = load_supervised(&source, run, &obs).unwrap();
            let read = recorder.lines().iter().any(|l| l.contains("PGN records"));
            (records.train.len(), read)
        };
        let (positions, read) = loads(&run);
        assert!(read);
        assert_eq!(loads(&run), (positions, false), "read again");
        // Another run directory reads afresh (its log gets its own warnings).
        let other = RunDir::open(dir.path().join("other")).unwrap();
        assert_eq!(loads(&other), (positions, true));
        assert_eq!(loads(&run), (positions, false), "each run keeps its own");
        // A changed file is read again.
        let fewer = master_games(&dir.path().join("other"), 3);
        std::fs::rename(fewer, &pgn).unwrap();
        let (changed, read) = loads(&run);
        assert!(read && changed < positions, "{changed} of {positions}");
    }

    #[test]
    fn records_without_labels_have_no_held_out_value_loss() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path().join("run")).unwrap();
        let mut cfg = tiny();
        cfg.data.pretrain = Some(PretrainSection {
            pgn: vec![master_games(dir.path(), 20)],
            steps: 2,
            held_out_permille: 500,
            mix_every: 0,
            value_labels: ValueLabels {
                depth: 0,
                margin_cp: 180,
            },
            eval_every: 0,
            patience: 0,
            lr_drop: 1.0,
            value_weight: 1.0,
        });
        let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
        session
            .train(TrainTarget::Steps(2), &AtomicBool::new(false))
            .unwrap();
        assert_eq!(session.holdout().unwrap().value_loss, None);
    }

    /// One chunk of seeded random games (no MCTS: uniform visit targets over the legal
    /// moves) in `RUN/data`, without value targets.
    fn random_games(run: &RunDir, games: usize, seed: u64) -> usize {
        random_games_in(&run.data_dir(), games, seed, None)
    }

    /// The same, drawn, in `RUN/data/held-out`: the games a worker holds out.
    fn held_out_games(run: &RunDir, games: usize, seed: u64) -> usize {
        random_games_in(
            &run.selfplay_held_out_dir(),
            games,
            seed,
            Some(Outcome::Draw),
        )
    }

    /// One chunk of `games` seeded random games of `result` in `dir`; returns its
    /// records.
    fn random_games_in(dir: &Path, games: usize, seed: u64, result: Option<Outcome>) -> usize {
        let mut rng = xq_core::hash::SplitMix64::new(seed);
        let mut next = |n: usize| rng.below(n as u64) as usize;
        let mut chunk = xq_data::Chunk::new(chunk_meta());
        for _ in 0..games {
            let start = xq_core::Position::startpos();
            let mut pos = start.clone();
            let mut moves = Vec::new();
            for _ in 0..40 {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let m = legal[next(legal.len())];
                moves.push(m);
                pos.play_unchecked(m);
            }
            xq_data::supervised::add_game(&mut chunk, &start, &moves, result).unwrap();
        }
        xq_data::ChunkWriter::new(dir, "t")
            .unwrap()
            .write(&chunk)
            .unwrap();
        chunk.records.len()
    }

    #[test]
    fn held_out_selfplay_games_are_evaluated_once_a_call_trains_and_none_is_no_error() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let mut cfg = tiny();
        cfg.data.samples_per_position = 0.5;
        let selfplay_holdouts = || -> Vec<HoldoutEvent> {
            run.events()
                .unwrap()
                .events()
                .filter_map(|e| match e {
                    Event::Holdout(h) if h.split == HoldoutSplit::Selfplay => Some(h.clone()),
                    _ => None,
                })
                .collect()
        };
        let p1 = random_games(&run, 2, 1) as u64;
        let stop = AtomicBool::new(false);
        let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
        let paced = TrainTarget::Paced { max_steps: None };
        // No held-out game yet (not even their directory): nothing to evaluate.
        let first = session.train(paced, &stop).unwrap();
        assert!(first.steps_taken > 0);
        assert!(selfplay_holdouts().is_empty());
        let held_out = held_out_games(&run, 2, 9) as u64;
        let p2 = random_games(&run, 2, 2) as u64;
        let second = session.train(paced, &stop).unwrap();
        assert!(second.steps_taken > 0);
        let h = selfplay_holdouts();
        assert_eq!(h.len(), 1, "one evaluation at the end of the call: {h:?}");
        assert_eq!((h[0].step, h[0].positions), (second.step, held_out));
        assert!(
            h[0].policy_loss.is_finite() && h[0].policy_loss > 0.0,
            "{h:?}"
        );
        assert!(h[0].value_loss.is_some_and(f64::is_finite), "{h:?}");
        // The replay window never saw them.
        assert_eq!((first.positions, second.positions), (p1, p1 + p2));
    }

    #[test]
    fn progress_is_the_share_of_steps_or_of_the_clock_within_zero_and_one() {
        let steps = Progress::steps(4);
        assert_eq!(
            [0, 2, 4, 9].map(|s| steps.fraction(s)),
            [0.0, 0.5, 1.0, 1.0]
        );
        assert_eq!(Progress::steps(0).fraction(7), 0.0);
        assert_eq!(Progress::constant().fraction(1_000), 0.0);
        for (done, want) in [(0.25, 0.25), (1.5, 1.0), (-1.0, 0.0), (f64::NAN, 0.0)] {
            let clock = Progress::clock(Arc::new(move || done));
            assert_eq!(clock.fraction(3), want, "{done}");
        }
    }

    #[test]
    fn the_self_play_rate_is_its_share_of_lr_annealed_by_the_runs_progress() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let mut cfg = tiny();
        cfg.trainer.warmup_steps = 0;
        cfg.trainer.lr = 0.1;
        cfg.data.event_every = 1;
        cfg.data.lr_anneal = crate::config::train::LrAnneal::Cosine;
        cfg.data.lr_anneal_final = 0.2;
        cfg.data.selfplay_lr_scale = 0.5;
        random_games(&run, 4, 1);
        let stop = AtomicBool::new(false);
        let step = train_until(&run, &cfg, Some(4), &Progress::steps(4), &stop, &quiet()).unwrap();
        assert_eq!(step, 4);
        let lrs: Vec<f64> = run
            .events()
            .unwrap()
            .events()
            .filter_map(|e| match e {
                Event::Train(t) => t.lr,
                _ => None,
            })
            .collect();
        // Step k (1-based) is taken k − 1 quarters of the way through.
        let want: Vec<f64> = (0..4)
            .map(|k| 0.1 * cfg.data.lr_factor(f64::from(k) / 4.0))
            .collect();
        assert_eq!(lrs.len(), 4, "{lrs:?}");
        assert!(
            lrs.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-12),
            "{lrs:?} {want:?}"
        );
        // The first step at half of `lr`, the last above half of its final share.
        assert!((lrs[0] - 0.05).abs() < 1e-12, "{lrs:?}");
        assert!(lrs[3] < lrs[0] && lrs[3] > 0.05 * cfg.data.lr_anneal_final);
    }

    #[test]
    fn max_reuse_caps_the_self_play_window_at_its_share_of_the_data() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let mut cfg = tiny();
        cfg.data.samples_per_position = 0.5;
        cfg.data.max_reuse = Some(1.0);
        let positions = random_games(&run, 4, 1) as u64;
        let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
        let p = session
            .train(
                TrainTarget::Paced { max_steps: None },
                &AtomicBool::new(false),
            )
            .unwrap();
        let cap = xq_data::ReuseCap::new(0.5, 1.0).unwrap();
        assert!(p.steps_taken > 0);
        assert_eq!(p.positions, positions);
        assert_eq!(p.window, cap.size(positions));
        assert!(p.window < positions, "{} of {positions}", p.window);
    }

    #[test]
    fn train_until_stops_at_the_step_limit_and_the_next_call_continues() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        random_games(&run, 4, 1);
        let stop = AtomicBool::new(false);
        let cfg = tiny();
        assert_eq!(current_step(&run).unwrap(), 0);
        assert_eq!(
            train_until(&run, &cfg, Some(3), &Progress::constant(), &stop, &quiet()).unwrap(),
            3
        );
        assert_eq!(current_step(&run).unwrap(), 3);
        assert_eq!(
            train_until(&run, &cfg, Some(5), &Progress::constant(), &stop, &quiet()).unwrap(),
            5
        );
        // A raised stop flag returns at once, keeping the step count.
        stop.store(true, Ordering::Relaxed);
        assert_eq!(
            train_until(&run, &cfg, None, &Progress::constant(), &stop, &quiet()).unwrap(),
            5
        );
    }

    /// The sync loop opens a session a phase. `refresh_every` counts from the step the
    /// window was adopted, in whichever session: phases of fewer steps than it still
    /// train on new data (counted from each session's start, such phases trained on
    /// their first window for the rest of the run).
    #[test]
    fn phases_shorter_than_refresh_every_still_adopt_new_data() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let mut cfg = tiny();
        cfg.data.samples_per_position = 0.5;
        cfg.data.event_every = 1;
        cfg.data.refresh_every = 4;
        let stop = AtomicBool::new(false);
        let mut written = 0;
        let mut phases = Vec::new();
        for seed in 1..=8 {
            written += random_games(&run, 2, seed) as u64;
            let before = current_step(&run).unwrap();
            let after =
                train_until(&run, &cfg, None, &Progress::constant(), &stop, &quiet()).unwrap();
            phases.push(after - before);
        }
        assert!(
            phases.iter().all(|&n| n > 0 && n < cfg.data.refresh_every),
            "steps a phase: {phases:?}"
        );
        let windows: Vec<u64> = run
            .events()
            .unwrap()
            .events()
            .filter_map(|e| match e {
                Event::Train(t) => Some(t.window),
                _ => None,
            })
            .collect();
        let (first, last) = (windows[0], *windows.last().unwrap());
        // The last adoption came at most `refresh_every` steps (two phases' data) ago.
        assert!(
            last > first && last * 2 >= written,
            "windows {windows:?} of {written} positions"
        );
    }

    #[test]
    fn a_session_returns_when_the_pacing_needs_data_and_continues_when_it_arrives() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let mut cfg = tiny();
        cfg.data.samples_per_position = 0.5;
        let p1 = random_games(&run, 2, 1) as u64;
        let stop = AtomicBool::new(false);
        let mut s = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
        let a = s
            .train(TrainTarget::Paced { max_steps: None }, &stop)
            .unwrap();
        assert_eq!(a.reason, StopReason::NeedData);
        assert_eq!(a.step, p1 / 2 / 16);
        assert_eq!(a.selfplay_samples, a.step * 16);
        assert_eq!(a.positions, p1);
        let p2 = random_games(&run, 2, 2) as u64;
        let b = s
            .train(TrainTarget::Paced { max_steps: None }, &stop)
            .unwrap();
        assert_eq!(b.step, (p1 + p2) / 2 / 16);
        assert_eq!(
            b.checkpoint,
            Some(
                run.checkpoints_dir()
                    .join(format!("ckpt-{:010}.json", b.step))
            )
        );
        // train_until's cheap look agrees: no step until more data arrives.
        drop(s);
        assert!(!may_train(&run, &cfg, None).unwrap());
        assert_eq!(
            train_until(&run, &cfg, None, &Progress::constant(), &stop, &quiet()).unwrap(),
            b.step
        );
        random_games(&run, 2, 3);
        assert!(may_train(&run, &cfg, None).unwrap());
        assert!(!may_train(&run, &cfg, Some(b.step)).unwrap());
        assert!(
            train_until(&run, &cfg, None, &Progress::constant(), &stop, &quiet()).unwrap() > b.step
        );
    }

    #[test]
    fn record_steps_are_mixed_in_after_pretraining_without_counting_against_the_pacing() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let master = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/hu_ronghua_1391_iccs.pgn"
        ))
        .unwrap();
        let cut = master.match_indices("[Event").nth(30).unwrap().0;
        let pgn = dir.path().join("few.pgn");
        std::fs::write(&pgn, &master[..cut]).unwrap();
        let mut cfg = tiny();
        cfg.data.samples_per_position = 0.5;
        cfg.data.event_every = 8;
        cfg.data.pretrain = Some(PretrainSection {
            pgn: vec![pgn],
            steps: 4,
            held_out_permille: 0,
            mix_every: 3,
            value_labels: ValueLabels::default(),
            eval_every: 0,
            patience: 0,
            lr_drop: 1.0,
            value_weight: 1.0,
        });
        let positions = random_games(&run, 2, 1) as u64;
        let selfplay_steps = positions / 2 / 16;
        let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
        let stop = AtomicBool::new(false);
        let p = session
            .train(TrainTarget::Paced { max_steps: None }, &stop)
            .unwrap();
        assert_eq!(p.reason, StopReason::NeedData);
        // Steps 1-4 pre-train; after that every third step (6, 9, …) is on records.
        let record_steps = |step: u64| (step / 3).saturating_sub(1);
        assert_eq!(p.selfplay_samples, selfplay_steps * 16);
        assert_eq!(
            p.step - 4 - record_steps(p.step),
            selfplay_steps,
            "step {}",
            p.step
        );
        assert!(record_steps(p.step) >= 1, "no record step was mixed in");
        // The first event after a new session (the sync loop opens one a phase) counts
        // the record steps of its whole interval, the cut session's included.
        assert!(
            p.step < 8,
            "the first session must end inside the first interval"
        );
        drop(session);
        random_games(&run, 4, 2);
        let mut session = TrainSession::open(&run, &cfg, &[], &quiet()).unwrap();
        session
            .train(TrainTarget::Paced { max_steps: None }, &stop)
            .unwrap();
        let events: Vec<(u64, u64)> = run
            .events()
            .unwrap()
            .events()
            .filter_map(|e| match e {
                Event::Train(t) if t.phase == TrainPhase::Selfplay => {
                    Some((t.step, t.record_steps))
                }
                _ => None,
            })
            .collect();
        let last = events.last().unwrap().0;
        assert!(
            events.iter().any(|(step, _)| *step > p.step),
            "no event after the resume at step {}: {events:?}",
            p.step
        );
        assert_eq!(
            events.iter().map(|(_, n)| n).sum::<u64>(),
            record_steps(last),
            "{events:?}"
        );
    }

    #[test]
    fn the_observer_sees_every_step_and_where_the_pacing_ends() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let mut cfg = tiny();
        cfg.data.samples_per_position = 0.5;
        cfg.trainer.log_every = 2;
        let p = random_games(&run, 2, 1) as u64;
        let stop = AtomicBool::new(false);
        let (recorder, obs) = Recorder::new(false);
        let step = train_until(&run, &cfg, None, &Progress::constant(), &stop, &obs).unwrap();
        assert_eq!(step, p / 2 / 16);
        let seen = recorder.steps.lock().unwrap().clone();
        assert_eq!(
            seen.iter().map(|v| v.step).collect::<Vec<_>>(),
            (1..=step).collect::<Vec<_>>()
        );
        assert!(seen.iter().all(|v| !v.supervised && v.end == Some(step)));
        assert_eq!(seen.last().unwrap().samples, step * 16);
        // The trainer's logging intervals end every `log_every` steps.
        assert!(
            seen.iter()
                .all(|v| v.logged.is_some() == v.step.is_multiple_of(2)),
            "{seen:?}"
        );
        // One task, begun at the first step and ended with the session.
        let lines = recorder.lines();
        assert_eq!(lines.first().unwrap(), "begin Train");
        assert_eq!(lines.last().unwrap(), "end Train");
        // A step limit bounds the stretch too.
        random_games(&run, 4, 2);
        let (recorder, obs) = Recorder::new(false);
        let limit = step + 2;
        train_until(&run, &cfg, Some(limit), &Progress::constant(), &stop, &obs).unwrap();
        assert!(
            recorder
                .steps
                .lock()
                .unwrap()
                .iter()
                .all(|v| v.end == Some(limit))
        );
    }

    #[test]
    fn a_resumed_session_says_where_it_resumed_and_warnings_go_to_the_observer() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let cfg = tiny();
        random_games(&run, 4, 1);
        let stop = AtomicBool::new(false);
        train_until(&run, &cfg, Some(2), &Progress::constant(), &stop, &quiet()).unwrap();
        std::fs::write(run.data_dir().join("bad-00000001.xqc"), b"not a chunk").unwrap();
        let (recorder, obs) = Recorder::new(false);
        train_until(&run, &cfg, Some(3), &Progress::constant(), &stop, &obs).unwrap();
        let lines = recorder.lines();
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("log resumed ") && l.ends_with(" at step 2")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("warn ") && l.contains("bad-00000001.xqc")),
            "{lines:?}"
        );
    }

    #[test]
    fn the_concurrent_phase_keeps_one_session_and_trains_as_data_arrives() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let mut cfg = tiny();
        cfg.data.samples_per_position = 0.5;
        let stop = AtomicBool::new(false);
        let (recorder, obs) = Recorder::new(false);
        let steps = || -> Vec<u64> {
            recorder
                .steps
                .lock()
                .unwrap()
                .iter()
                .map(|v| v.step)
                .collect()
        };
        let wait_for = |n: u64| {
            let t = Instant::now();
            while steps().last().copied().unwrap_or(0) < n {
                assert!(t.elapsed() < Duration::from_secs(60), "no step {n}");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        let step = std::thread::scope(|scope| {
            let h = scope.spawn(|| {
                train_concurrently(
                    &run,
                    &cfg,
                    None,
                    &Progress::constant(),
                    &stop,
                    Duration::from_millis(50),
                    &obs,
                )
            });
            // No data yet: it waits without opening a trainer.
            std::thread::sleep(Duration::from_millis(300));
            assert!(steps().is_empty());
            let p1 = random_games(&run, 2, 1) as u64;
            wait_for(p1 / 2 / 16);
            // Caught up with the data: a checkpoint is saved, as train_until does.
            let t = Instant::now();
            while current_step(&run).unwrap() < p1 / 2 / 16 {
                assert!(t.elapsed() < Duration::from_secs(60), "no checkpoint");
                std::thread::sleep(Duration::from_millis(20));
            }
            let p2 = random_games(&run, 2, 2) as u64;
            wait_for((p1 + p2) / 2 / 16);
            stop.store(true, Ordering::SeqCst);
            h.join().unwrap().unwrap()
        });
        // Every step seen once, in order: one session (and one task) for the phase.
        assert_eq!(steps(), (1..=step).collect::<Vec<_>>());
        let tasks = recorder.lines();
        let begun = tasks.iter().filter(|l| *l == "begin Train").count();
        assert_eq!(begun, 1, "{tasks:?}");
        assert_eq!(current_step(&run).unwrap(), step);
        // With a step limit it returns at the limit, from the same checkpoint.
        random_games(&run, 8, 3);
        let limit = step + 3;
        let stop = AtomicBool::new(false);
        let end = train_concurrently(
            &run,
            &cfg,
            Some(limit),
            &Progress::constant(),
            &stop,
            Duration::from_millis(50),
            &quiet(),
        )
        .unwrap();
        assert_eq!(end, limit);
        assert_eq!(current_step(&run).unwrap(), limit);
    }
}
