//! How the training run reports what it is doing: a typed observer that the caller
//! implements. The `xqz` binary draws indicatif bars on a terminal; [`LogLines`] prints
//! time-stamped lines (files, pipes, CI logs); tests record the calls. The pipeline
//! itself never formats a bar or parses a status line back.

use std::sync::Arc;

use xq_eval::matches::MatchStatus;
use xq_selfplay::Snapshot;

use crate::train::StepView;

/// Receives the run's log lines and live progress.
pub trait RunObserver: Send + Sync {
    /// A line for the log (a phase started, a decision, a warning).
    fn log(&self, line: &str);

    /// Whether live progress is drawn: then the run asks for [`TaskProgress`] handles,
    /// calls them several times a second and keeps self-play's own status lines quiet.
    /// Without it, progress reaches the log as self-play's periodic lines and the
    /// phases' summaries.
    fn live(&self) -> bool;

    /// A task whose progress is drawn until the handle is dropped (only asked for when
    /// [`RunObserver::live`]).
    fn begin(&self, task: Task) -> Box<dyn TaskProgress>;
}

/// A long-running part of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// A self-play phase of `games` games, or until stopped.
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
    /// Self-play counters of the phase so far.
    Selfplay(&'a Snapshot),
    /// The trainer's latest step.
    Train(&'a StepView),
    /// A match after each finished pair.
    Match(&'a MatchStatus),
}

/// The observer handle the run's threads share.
pub type SharedObserver = Arc<dyn RunObserver>;

/// Time-stamped log lines on stderr, no live progress: for output that is a file or a
/// pipe, and for library callers that want nothing drawn.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogLines;

impl RunObserver for LogLines {
    fn log(&self, line: &str) {
        eprintln!("[{}] {line}", clock_time(crate::rundir::now()));
    }

    fn live(&self) -> bool {
        false
    }

    fn begin(&self, _task: Task) -> Box<dyn TaskProgress> {
        Box::new(NoProgress)
    }
}

/// A progress handle that draws nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl TaskProgress for NoProgress {
    fn update(&mut self, _update: Update<'_>) {}
}

/// `HH:MM:SS` (UTC) of a Unix time, the stamp of log lines.
pub fn clock_time(unix_secs: u64) -> String {
    let s = unix_secs % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_time_is_utc_hours_minutes_seconds() {
        assert_eq!(clock_time(0), "00:00:00");
        assert_eq!(clock_time(86_400 + 3_600 + 61), "01:01:01");
    }
}
