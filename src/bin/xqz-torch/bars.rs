//! The terminal UI of `xqz run`: indicatif bars for self-play, training and the
//! current match, in one `MultiProgress` with the log lines printed above them, so bars
//! of concurrent phases and log lines do not garble each other. Used when stderr is a
//! terminal that can redraw lines; otherwise the run logs plain lines
//! ([`xq_pipeline::progress::LogLines`]).

use std::{
    io::IsTerminal,
    sync::Arc,
    time::{Duration, Instant},
};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use xq_eval::matches::MatchStatus;
use xq_pipeline::{
    progress::{LogLines, RunObserver, SharedObserver, Task, TaskProgress, Update, clock_time},
    rundir::now,
    train::StepView,
};
use xq_selfplay::stats::{bar_message, bar_style};

/// Bars on a terminal that can redraw lines, plain log lines otherwise (a file, a
/// pipe, `TERM=dumb`).
pub fn observer() -> SharedObserver {
    if wants_bars(
        std::io::stderr().is_terminal(),
        std::env::var("TERM").ok().as_deref(),
    ) {
        Arc::new(Bars {
            multi: MultiProgress::new(),
        })
    } else {
        Arc::new(LogLines)
    }
}

fn wants_bars(stderr_is_terminal: bool, term: Option<&str>) -> bool {
    stderr_is_terminal && term.is_none_or(|t| t != "dumb")
}

/// See the module documentation.
#[derive(Debug)]
struct Bars {
    multi: MultiProgress,
}

impl RunObserver for Bars {
    fn log(&self, line: &str) {
        let line = format!("[{}] {line}", clock_time(now()));
        if self.multi.println(&line).is_err() {
            eprintln!("{line}");
        }
    }

    fn live(&self) -> bool {
        true
    }

    fn begin(&self, task: Task) -> Box<dyn TaskProgress> {
        let (len, style) = match task {
            Task::Selfplay { games } => (games, bar_style("selfplay ", games.is_some())),
            Task::Train => (
                None,
                style("train    {spinner} [{elapsed_precise}] {bar:20} {msg}"),
            ),
            Task::Match { tag } => (None, match_style(tag)),
        };
        let bar = self.multi.add(match len {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        });
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(500));
        Box::new(Bar {
            bar,
            multi: self.multi.clone(),
            rate: Rate::default(),
        })
    }
}

/// A bar of the run's `MultiProgress`, cleared and removed when dropped.
struct Bar {
    bar: ProgressBar,
    multi: MultiProgress,
    rate: Rate,
}

impl TaskProgress for Bar {
    fn update(&mut self, update: Update<'_>) {
        match update {
            Update::Selfplay(s) => {
                self.bar.set_position(s.games);
                self.bar.set_message(bar_message(s));
            }
            Update::Train(v) => {
                let rate = self.rate.observe(v);
                self.bar.set_length(v.end.unwrap_or(v.step).max(v.step));
                self.bar.set_position(v.step);
                self.bar.set_message(train_message(v, rate));
            }
            Update::Match(s) => show_match(&self.bar, s),
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
        self.multi.remove(&self.bar);
    }
}

/// Training speed over the current stretch of steps: a pause (waiting for data, a
/// checkpoint) longer than [`Rate::PAUSE`] starts a new stretch.
#[derive(Default)]
struct Rate {
    origin: Option<(Instant, StepView)>,
    last: Option<Instant>,
}

impl Rate {
    const PAUSE: Duration = Duration::from_secs(5);

    /// Samples and steps per second, once two steps of a stretch are seen.
    fn observe(&mut self, v: &StepView) -> Option<(f64, f64)> {
        let now = Instant::now();
        if self.origin.is_none()
            || self
                .last
                .is_some_and(|l| now.duration_since(l) > Self::PAUSE)
        {
            self.origin = Some((now, *v));
        }
        self.last = Some(now);
        self.origin.and_then(|(t0, v0)| {
            let dt = now.duration_since(t0).as_secs_f64();
            (dt > 0.0 && v.step > v0.step).then(|| {
                (
                    v.samples.saturating_sub(v0.samples) as f64 / dt,
                    (v.step - v0.step) as f64 / dt,
                )
            })
        })
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// The bar of a gating or rating match: games played of those planned, and the
/// status line (score, Elo, LLR).
fn match_style(tag: &str) -> ProgressStyle {
    style(&format!(
        "{tag:<8} {{spinner}} [{{elapsed_precise}}] {{pos}}/{{len}} games {{bar:20}} {{msg}}"
    ))
}

fn show_match(bar: &ProgressBar, s: &MatchStatus) {
    let g = &s.games;
    bar.set_length(s.planned_games as u64);
    bar.set_position(g.wins + g.draws + g.losses);
    bar.set_message(s.line());
}

/// The training bar's message: step (of the stretch's end), samples/s, loss and the
/// time to the end of the stretch.
fn train_message(v: &StepView, rate: Option<(f64, f64)>) -> String {
    let mut s = match v.end {
        Some(e) => format!("step {}/{e}", v.step),
        None => format!("step {}", v.step),
    };
    if let Some((samples_per_sec, _)) = rate {
        s += &format!(", {samples_per_sec:.0} samples/s");
    }
    s += &format!(
        ", loss {:.3}, policy top-1 {:.1}%",
        v.total_loss,
        100.0 * v.policy_accuracy
    );
    if v.supervised {
        s += " (pre-training)";
    }
    if let (Some(e), Some((_, steps_per_sec))) = (v.end, rate)
        && steps_per_sec > 0.0
    {
        let left = e.saturating_sub(v.step) as f64 / steps_per_sec;
        s += &format!(", eta {}", fmt_duration(left));
    }
    s
}

fn fmt_duration(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_only_on_a_terminal_that_can_redraw() {
        assert!(wants_bars(true, Some("xterm-256color")));
        assert!(wants_bars(true, None));
        assert!(!wants_bars(true, Some("dumb")));
        assert!(!wants_bars(false, Some("xterm")));
    }

    #[test]
    fn every_match_bar_style_is_a_valid_template() {
        for tag in ["gate", "rating", "final"] {
            assert!(
                ProgressStyle::with_template(&format!(
                    "{tag:<8} {{spinner}} [{{elapsed_precise}}] {{pos}}/{{len}} games {{bar:20}} {{msg}}"
                ))
                .is_ok()
            );
        }
    }

    #[test]
    fn the_training_message_has_step_rate_and_eta() {
        let v = StepView {
            step: 100,
            samples: 1600,
            total_loss: 3.25,
            policy_accuracy: 0.125,
            supervised: false,
            end: Some(400),
        };
        assert_eq!(
            train_message(&v, Some((800.0, 2.0))),
            "step 100/400, 800 samples/s, loss 3.250, policy top-1 12.5%, eta 2m30s"
        );
        let v = StepView {
            end: None,
            supervised: true,
            ..v
        };
        assert_eq!(
            train_message(&v, None),
            "step 100, loss 3.250, policy top-1 12.5% (pre-training)"
        );
        assert_eq!(fmt_duration(59.4), "59s");
        assert_eq!(fmt_duration(3725.0), "1h02m");
    }
}
