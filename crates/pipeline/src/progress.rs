//! How the training run and its commands report what they are doing: a typed observer
//! that the caller implements. The `xqz-torch` binary draws indicatif bars on a
//! terminal and prints plain lines elsewhere; tests record the calls. The pipeline
//! itself never prints, formats a bar or parses a status line back.
//!
//! The crates below report as data too: xq-selfplay through its `Observer` (a
//! `Snapshot` every so often), xq-train in each step's `StepStats`, the gatekeeper's
//! match through `MatchStatus`. The pipeline turns them into [`Update`]s here.

use std::sync::Arc;

use xq_rating::summary::MatchStatus;
use xq_selfplay::Snapshot;

/// Receives the log lines, warnings and live progress of a run or a command.
pub trait RunObserver: Send + Sync {
    /// A line for the log (a phase started, a decision).
    fn log(&self, line: &str);

    /// A file skipped or repaired, a state ignored, a network that would not load:
    /// shown even where log lines are not (`--quiet` hides progress, never warnings).
    fn warn(&self, line: &str);

    /// Whether progress is drawn live: then self-play reports several times a second
    /// and `xqz run`'s matches are drawn as [`Task`]s. Otherwise self-play reports when
    /// a progress line is due, and a gating match logs its status after each pair.
    /// Training reports every step either way.
    fn live(&self) -> bool;

    /// A task whose progress is shown until the handle is dropped.
    fn begin(&self, task: Task) -> Box<dyn TaskProgress>;
}

/// A long-running part of a run or a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// A self-play session of `games` games, or until stopped.
    Selfplay { games: Option<u64> },
    /// Training steps.
    Train,
    /// A match: `gate`, `rating` (after a promotion) or `final`.
    Match { tag: &'static str },
}

/// One task's progress display.
pub trait TaskProgress: Send {
    fn update(&mut self, update: Update<'_>);
}

/// The state of a task.
#[derive(Debug, Clone, Copy)]
pub enum Update<'a> {
    /// Self-play counters of the session so far.
    Selfplay(&'a Snapshot),
    /// The trainer's latest step.
    Train(&'a StepView),
    /// A match after each finished pair.
    Match(&'a MatchStatus),
}

/// What a training task sees after every optimiser step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepView {
    /// Optimiser steps of the run so far.
    pub step: u64,
    /// Training samples consumed by the run (both streams).
    pub samples: u64,
    pub total_loss: f64,
    pub policy_accuracy: f64,
    /// Whether the step was on PGN records (pre-training).
    pub supervised: bool,
    /// The step where the current stretch ends as far as is known now: the call's
    /// target, the end of pre-training, or as far as the pacing allows with the data
    /// seen so far (`None` when nothing bounds it).
    pub end: Option<u64>,
    /// On the steps that end one of the trainer's logging intervals (`[train]
    /// log_every`): the means it wrote to TensorBoard, for a progress line.
    pub logged: Option<xq_train::Logged>,
}

/// The observer handle the run's threads share.
pub type SharedObserver = Arc<dyn RunObserver>;

#[cfg(test)]
pub(crate) mod testing {
    //! An observer that records what it is told, for the pipeline's tests.

    use std::sync::Mutex;

    use super::*;

    /// Records every call as a line: `log …`, `warn …`, `begin …`, `<task> …`, `end …`.
    #[derive(Debug, Default)]
    pub struct Recorder {
        pub lines: Mutex<Vec<String>>,
        /// Whether it says it draws live progress.
        pub live: bool,
        /// Every training step seen.
        pub steps: Mutex<Vec<StepView>>,
    }

    impl Recorder {
        /// A shared recorder and the observer handle that feeds it.
        pub fn new(live: bool) -> (Arc<Recorder>, SharedObserver) {
            let r = Arc::new(Recorder {
                live,
                ..Recorder::default()
            });
            (r.clone(), Arc::new(Observed(r)))
        }

        pub fn lines(&self) -> Vec<String> {
            self.lines.lock().unwrap().clone()
        }

        fn push(&self, line: String) {
            self.lines.lock().unwrap().push(line);
        }
    }

    struct Observed(Arc<Recorder>);

    impl RunObserver for Observed {
        fn log(&self, line: &str) {
            self.0.push(format!("log {line}"));
        }
        fn warn(&self, line: &str) {
            self.0.push(format!("warn {line}"));
        }
        fn live(&self) -> bool {
            self.0.live
        }
        fn begin(&self, task: Task) -> Box<dyn TaskProgress> {
            self.0.push(format!("begin {task:?}"));
            Box::new(RecordedTask(self.0.clone(), task))
        }
    }

    struct RecordedTask(Arc<Recorder>, Task);

    impl TaskProgress for RecordedTask {
        fn update(&mut self, update: Update<'_>) {
            let what = match update {
                Update::Train(v) => {
                    self.0.steps.lock().unwrap().push(*v);
                    format!("step {}", v.step)
                }
                Update::Selfplay(s) => format!("games {}", s.games),
                Update::Match(s) => s.line(),
            };
            self.0.push(format!("{:?} {what}", self.1));
        }
    }

    impl Drop for RecordedTask {
        fn drop(&mut self) {
            self.0.push(format!("end {:?}", self.1));
        }
    }
}
