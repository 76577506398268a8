//! TensorBoard tags of the trainer (the writer is [`xq_run::tensorboard::TbLogger`])
//! and human progress output: an indicatif bar on a terminal, plain log lines otherwise
//! (so `nohup` logs stay readable).

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use xq_run::tensorboard::TbError;

use crate::error::TrainError;

/// TensorBoard tags written by the trainer.
pub mod tags {
    pub const POLICY_LOSS: &str = "loss/policy";
    pub const VALUE_LOSS: &str = "loss/value";
    pub const TOTAL_LOSS: &str = "loss/total";
    pub const POLICY_ACCURACY: &str = "accuracy/policy_top1";
    pub const VALUE_ACCURACY: &str = "accuracy/value";
    pub const LEARNING_RATE: &str = "train/learning_rate";
    pub const GRAD_NORM: &str = "train/grad_norm";
    pub const SAMPLES_PER_SEC: &str = "train/samples_per_sec";
    pub const WINDOW_SIZE: &str = "data/window_size";
    /// Share of wall time the trainer waited for batches (see `Trainer::add_data_wait`).
    pub const DATA_WAIT: &str = "data/wait_fraction";
}

/// How the trainer reports progress to a human.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Progress {
    /// A bar when stderr is a terminal, log lines otherwise.
    #[default]
    Auto,
    /// An indicatif bar on stderr.
    Bar,
    /// A plain line on stderr every `log_every` steps.
    Lines,
    /// Nothing (tests, library use).
    Off,
}

/// A TensorBoard file the trainer cannot write is an I/O error naming it, kept by the
/// trainer until its caller asks (`Trainer::take_tensorboard_failure`).
impl From<TbError> for TrainError {
    fn from(e: TbError) -> TrainError {
        TrainError::io(e.path, e.source)
    }
}

/// Progress output.
#[derive(Debug)]
pub(crate) struct ProgressOut {
    mode: Progress,
    bar: Option<ProgressBar>,
    started: Instant,
    /// Whether a step was shown: a bar that never moved (replaced by
    /// `Trainer::set_progress` right after opening) is cleared, not left on screen.
    moved: std::cell::Cell<bool>,
}

impl ProgressOut {
    pub(crate) fn new(mode: Progress, total_steps: u64, start_step: u64) -> ProgressOut {
        let mode = match mode {
            Progress::Auto if std::io::stderr().is_terminal() => Progress::Bar,
            Progress::Auto => Progress::Lines,
            m => m,
        };
        let bar = (mode == Progress::Bar).then(|| {
            let bar = if total_steps > 0 {
                ProgressBar::new(total_steps)
            } else {
                ProgressBar::no_length()
            };
            let template = if total_steps > 0 {
                "{elapsed_precise} [{bar:30}] step {pos}/{len} eta {eta} {msg}"
            } else {
                "{elapsed_precise} step {pos} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_position(start_step);
            bar
        });
        ProgressOut {
            mode,
            bar,
            started: Instant::now(),
            moved: std::cell::Cell::new(false),
        }
    }

    /// Called after every step; `summary` is built only when something will print it.
    pub(crate) fn step(&self, step: u64, log_line: bool, summary: impl FnOnce() -> String) {
        match (&self.bar, self.mode) {
            (Some(bar), _) => {
                self.moved.set(true);
                bar.set_position(step);
                if log_line {
                    bar.set_message(summary());
                }
            }
            (None, Progress::Lines) if log_line => {
                eprintln!(
                    "[{:>8.1}s] step {step} {}",
                    self.started.elapsed().as_secs_f64(),
                    summary()
                );
            }
            _ => {}
        }
    }

    pub(crate) fn println(&self, line: &str) {
        match (&self.bar, self.mode) {
            (Some(bar), _) => bar.println(line),
            (None, Progress::Lines) => eprintln!("{line}"),
            _ => {}
        }
    }
}

impl Drop for ProgressOut {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            if self.moved.get() {
                bar.abandon();
            } else {
                bar.finish_and_clear();
            }
        }
    }
}
