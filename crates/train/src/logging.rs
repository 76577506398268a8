//! TensorBoard scalars (tensorboard-rs) and human progress output: an indicatif bar on a
//! terminal, plain log lines otherwise (so `nohup` logs stay readable).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use tensorboard_rs::summary_writer::SummaryWriter;

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

/// Appends scalars to a TensorBoard event file in `dir`. The writer (and its file) is
/// created on the first scalar, so a run that never logs leaves no empty event file.
pub struct TbLogger {
    dir: PathBuf,
    writer: Option<SummaryWriter>,
}

impl std::fmt::Debug for TbLogger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TbLogger")
            .field("dir", &self.dir)
            .field("open", &self.writer.is_some())
            .finish()
    }
}

impl TbLogger {
    /// A logger writing into `dir` (created when the first scalar arrives).
    pub fn new(dir: impl Into<PathBuf>) -> TbLogger {
        TbLogger {
            dir: dir.into(),
            writer: None,
        }
    }

    /// The event directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Adds one scalar at `step`.
    pub fn scalar(&mut self, tag: &str, value: f64, step: u64) -> Result<(), TrainError> {
        if self.writer.is_none() {
            // tensorboard-rs panics when it cannot create the directory; create it here
            // so that failure is an error naming the path instead.
            std::fs::create_dir_all(&self.dir).map_err(|e| TrainError::io(&self.dir, e))?;
            self.writer = Some(SummaryWriter::new(&self.dir));
        }
        if let Some(w) = &mut self.writer {
            w.add_scalar(tag, value as f32, step as usize);
        }
        Ok(())
    }

    /// Asks the writer thread to flush (asynchronous; dropping the logger waits for it).
    pub fn flush(&mut self) {
        if let Some(w) = &mut self.writer {
            w.flush();
        }
    }
}

/// Progress output.
#[derive(Debug)]
pub(crate) struct ProgressOut {
    mode: Progress,
    bar: Option<ProgressBar>,
    started: Instant,
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
        }
    }

    /// Called after every step; `summary` is built only when something will print it.
    pub(crate) fn step(&self, step: u64, log_line: bool, summary: impl FnOnce() -> String) {
        match (&self.bar, self.mode) {
            (Some(bar), _) => {
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
            bar.abandon();
        }
    }
}
