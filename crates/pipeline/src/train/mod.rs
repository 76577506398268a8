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

mod holdout;
mod progress;
mod records;
mod replay;
#[cfg(test)]
mod tests;

use std::{
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use xq_data::{
    Batch, BatchConfig, DataCursor, PrefetchConfig, ValueTarget, WindowLoader, WindowManifest,
    WindowSize,
};
use xq_train::{HostBatch, LossWeights, StepMeans, StepStats, Trainer};

use xq_run::{
    ModelRef, RunDir,
    events::{Event, TrainEvent, TrainPhase, WarningAction, WarningWhat},
};

pub use self::progress::{HoldoutStats, Progress, StopReason, TrainProgress, TrainTarget};
use self::{
    progress::Plateau,
    records::{Supervised, SupervisedSource, load_supervised},
    replay::SelfplayData,
};
use crate::{
    config::train::{DataSection, TrainSection, ValueLabels},
    progress::{SharedObserver, StepView, Task, TaskProgress, Update},
};

/// The pre-trained network that `[train] policy_anchor` pulls the policy toward, in the
/// trainer's directory.
const POLICY_ANCHOR_FILE: &str = "policy-anchor.safetensors";

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
    /// Whether every [`TrainSession::train`] call ends with a self-play held-out look
    /// and a checkpoint (a phase of the sync loop, `xqz train`). A concurrent trainer's
    /// calls end whenever the data runs out, every few seconds: it keeps to
    /// `holdout_every` and `checkpoint_every`, and [`TrainSession::finish`] saves at the
    /// end.
    per_call_bookkeeping: bool,
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
            per_call_bookkeeping: true,
        })
    }

    /// Saves a checkpoint of the current step unless one is saved already: the end of a
    /// concurrent phase, whose calls do not save each time.
    ///
    /// # Errors
    /// The checkpoint cannot be written.
    pub fn finish(&mut self) -> Result<()> {
        let step = self.trainer.step_count();
        if step > 0 && self.last_saved.as_ref().is_none_or(|(s, _)| *s != step) {
            self.save()?;
        }
        Ok(())
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
            value: ValueTarget {
                q_ratio: self.cfg.data.q_ratio as f32,
                horizon: self.cfg.data.value_horizon as f32,
                share: self.cfg.data.selfplay_value_share as f32,
            },
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
            let anchor = if from_records {
                0.0
            } else {
                self.cfg.data.policy_anchor
            };
            if anchor > 0.0 && !self.trainer.has_policy_anchor() {
                let path = self.trainer.run_dir().join(POLICY_ANCHOR_FILE);
                self.trainer.anchor_policy(&path)?;
                self.obs.log(&format!(
                    "policy anchor: {} (weight {anchor})",
                    path.display()
                ));
            }
            self.trainer.set_anchor_weight(anchor);
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
        if self.per_call_bookkeeping
            && trained_selfplay
            && reason != StopReason::Stopped
            && self.cfg.data.holdout_every > 0
            && self.selfplay.held_out_step != Some(step)
        {
            self.holdout_selfplay()?;
        }
        if self.per_call_bookkeeping {
            self.finish()?;
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
/// `max_step` is reached, trains as far as the pacing allows and looks for new
/// self-play data every `poll`. Checkpoints and held-out looks keep to
/// `checkpoint_every` and `holdout_every` (a call ends whenever the data runs out, every
/// few seconds: saving and evaluating at each would cost more than the training), and
/// a checkpoint is saved at the end. One [`TrainSession`] serves the whole phase, opened when the first step is
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
            opened.per_call_bookkeeping = false;
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
    if let Some(s) = &mut session {
        s.finish()?;
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

/// Makes a fresh run's first network, when nothing else will: the trainer's freshly
/// initialised network (seeded by `[train] seed`) is saved as step 0, published and
/// accepted without a gate (there is nothing to gate it against). A run with
/// `[train.pretrain]` gets its first network from pre-training instead, and a run that
/// has a checkpoint or an accepted network already has one: `None` then.
///
/// Why: self-play's first generation used to be played by the uniform evaluator, whose
/// equal priors make every search alike, and a network trained on it learnt the colour
/// from the side-to-move plane (issue #45). A fresh network is what AlphaZero starts
/// from.
///
/// # Errors
/// The checkpoint or the model directories cannot be written.
pub fn publish_initial(
    run: &RunDir,
    cfg: &TrainSection,
    obs: &SharedObserver,
) -> Result<Option<ModelRef>> {
    let pretrains = cfg.data.pretrain.as_ref().is_some_and(|p| p.steps > 0);
    if pretrains
        || run.accepted()?.is_some()
        || !xq_train::checkpoint::list_checkpoints(&run.checkpoints_dir())?.is_empty()
    {
        return Ok(None);
    }
    let mut session = TrainSession::open(run, cfg, &[], obs)?;
    let path = session.save()?;
    let candidate = run.publish_candidate(&path, 0)?;
    let accepted = run.promote(&candidate, serde_json::json!({"reason": "initial"}))?;
    obs.log(&format!(
        "{} accepted: the freshly initialised network self-play starts from",
        accepted.name
    ));
    Ok(Some(accepted))
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
