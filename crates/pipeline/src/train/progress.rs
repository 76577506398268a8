//! How far the run and a call of [`TrainSession::train`](super::TrainSession::train)
//! go, what a call returns, and the pre-training plateau rule.

use std::{path::PathBuf, sync::Arc};

use serde::{Deserialize, Serialize};
use xq_run::ModelRef;

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

/// How far one call of [`TrainSession::train`](super::TrainSession::train) goes.
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

/// Why a call of [`TrainSession::train`](super::TrainSession::train) returned.
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
    /// The value loss of the best constant guess: the entropy of the positions' mean
    /// value target (win, draw, loss). A value head that judges nothing about the
    /// position scores this, not ln 3, when the results are not evenly split.
    pub constant_value_loss: Option<f64>,
}

impl HoldoutStats {
    /// What pre-training's plateau rule watches: the policy loss plus `value_weight`
    /// (`[train.pretrain] value_weight`) times the value loss, the held-out form of the
    /// loss the record batches train.
    pub fn plateau_loss(&self, value_weight: f64) -> f64 {
        self.policy_loss + value_weight * self.value_loss.unwrap_or(0.0)
    }
}

/// The pre-training plateau rule (`[train.pretrain] patience`): the best held-out loss
/// so far, the evaluations since it, and the rate's factor they have brought about.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(super) struct Plateau {
    pub(super) best: Option<f64>,
    pub(super) since_best: u32,
    pub(super) lr_scale: f64,
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
    pub(super) fn observe(&mut self, loss: f64, patience: u32, lr_drop: f64) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plateau_watches_policy_plus_the_weighted_value_loss() {
        let h = HoldoutStats {
            positions: 10,
            policy_top1: 0.2,
            policy_loss: 2.5,
            value_loss: Some(1.2),
            uniform_top1: 0.03,
            constant_value_loss: None,
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
}
