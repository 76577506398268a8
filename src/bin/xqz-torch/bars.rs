//! The terminal UI of the training commands: indicatif bars for self-play, training and
//! the current match, in one `MultiProgress` with the log lines printed above them, so
//! bars of concurrent phases and log lines do not garble each other. Used when stderr
//! is a terminal that can redraw lines; otherwise the commands print plain lines
//! ([`Lines`]), and `--quiet` only warnings ([`Quiet`]). xq-pipeline reports through
//! [`RunObserver`]; xq-selfplay and xq-train print nothing.

use std::{
    io::IsTerminal,
    sync::Arc,
    time::{Duration, Instant},
};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use xq_pipeline::progress::{RunObserver, SharedObserver, StepView, Task, TaskProgress, Update};
use xq_rating::summary::MatchStatus;
use xq_run::now;
use xq_selfplay::Snapshot;

/// `xqz run`'s observer: bars on a terminal that can redraw lines, else time-stamped
/// log lines and self-play's status lines (a file, a pipe, `TERM=dumb`). A run's log
/// leaves training's per-step lines out: its `train` events hold them.
pub fn for_run() -> SharedObserver {
    if terminal() {
        Arc::new(Bars::new())
    } else {
        Arc::new(Lines {
            clock: true,
            steps: false,
        })
    }
}

/// A command's observer (`selfplay`, `train`): bars on a terminal, plain lines with
/// `--log-lines` or elsewhere, only warnings with `--quiet`.
pub fn for_command(quiet: bool, log_lines: bool) -> SharedObserver {
    if quiet {
        Arc::new(Quiet)
    } else if log_lines || !terminal() {
        Arc::new(Lines {
            clock: false,
            steps: true,
        })
    } else {
        Arc::new(Bars::new())
    }
}

fn terminal() -> bool {
    wants_bars(
        std::io::stderr().is_terminal(),
        std::env::var("TERM").ok().as_deref(),
    )
}

fn wants_bars(stderr_is_terminal: bool, term: Option<&str>) -> bool {
    stderr_is_terminal && term.is_none_or(|t| t != "dumb")
}

/// See the module documentation.
#[derive(Debug)]
struct Bars {
    multi: MultiProgress,
}

impl Bars {
    fn new() -> Bars {
        Bars {
            multi: MultiProgress::new(),
        }
    }
}

impl RunObserver for Bars {
    fn log(&self, line: &str) {
        let line = format!("[{}] {line}", clock_time(now()));
        if self.multi.println(&line).is_err() {
            eprintln!("{line}");
        }
    }

    fn warn(&self, line: &str) {
        self.log(line);
    }

    fn live(&self) -> bool {
        true
    }

    fn begin(&self, task: Task) -> Box<dyn TaskProgress> {
        let (len, style) = match task {
            Task::Selfplay { games } => (games, selfplay_style(games.is_some())),
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

/// Plain lines on stderr, for a file, a pipe or `--log-lines`: the log (time-stamped
/// when `clock`), self-play's status line at each report, and with `steps` the
/// trainer's line at the end of each of its logging intervals.
#[derive(Debug, Clone, Copy)]
struct Lines {
    clock: bool,
    steps: bool,
}

impl RunObserver for Lines {
    fn log(&self, line: &str) {
        if self.clock {
            eprintln!("[{}] {line}", clock_time(now()));
        } else {
            eprintln!("{line}");
        }
    }

    fn warn(&self, line: &str) {
        self.log(line);
    }

    fn live(&self) -> bool {
        false
    }

    fn begin(&self, task: Task) -> Box<dyn TaskProgress> {
        match task {
            Task::Selfplay { .. } => Box::new(SelfplayLines),
            Task::Train if self.steps => Box::new(TrainLines {
                started: Instant::now(),
            }),
            // A match's status is logged after each pair by the gatekeeper's caller.
            Task::Train | Task::Match { .. } => Box::new(Nothing),
        }
    }
}

/// Warnings only (`--quiet` hides progress, never warnings).
#[derive(Debug, Clone, Copy)]
struct Quiet;

impl RunObserver for Quiet {
    fn log(&self, _line: &str) {}

    fn warn(&self, line: &str) {
        eprintln!("{line}");
    }

    fn live(&self) -> bool {
        false
    }

    fn begin(&self, _task: Task) -> Box<dyn TaskProgress> {
        Box::new(Nothing)
    }
}

/// A task shown as nothing.
struct Nothing;

impl TaskProgress for Nothing {
    fn update(&mut self, _update: Update<'_>) {}
}

/// Self-play's status line at each report.
struct SelfplayLines;

impl TaskProgress for SelfplayLines {
    fn update(&mut self, update: Update<'_>) {
        if let Update::Selfplay(s) = update {
            eprintln!("selfplay: {}", s.line());
        }
    }
}

/// The trainer's line at the end of each of its logging intervals.
struct TrainLines {
    started: Instant,
}

impl TaskProgress for TrainLines {
    fn update(&mut self, update: Update<'_>) {
        if let Update::Train(v) = update
            && let Some(line) = train_line(v, self.started.elapsed())
        {
            eprintln!("{line}");
        }
    }
}

/// `[   12.3s] step 100 loss … lr … samples/s`: the means of the trainer's logging
/// interval that ended with `v`, if one did.
fn train_line(v: &StepView, elapsed: Duration) -> Option<String> {
    let l = v.logged?;
    let m = l.means;
    Some(format!(
        "[{:>8.1}s] step {} loss {:.4} (p {:.4} v {:.4}) top1 {:.3} lr {:.2e} {:.0} samples/s",
        elapsed.as_secs_f64(),
        v.step,
        m.total_loss,
        m.policy_loss,
        m.value_loss,
        m.policy_accuracy,
        l.lr,
        l.samples_per_second
    ))
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
                self.bar.set_message(selfplay_message(s));
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

/// The self-play bar: a bar when the number of games is known.
fn selfplay_style(bounded: bool) -> ProgressStyle {
    style(&selfplay_template(bounded))
}

fn selfplay_template(bounded: bool) -> String {
    let template = if bounded {
        "{spinner} [{elapsed_precise}] {pos}/{len} games {bar:20} {msg}"
    } else {
        "{spinner} [{elapsed_precise}] {pos} games {msg}"
    };
    format!("selfplay {template}")
}

/// The self-play bar's message: rates, batching, cache and resignation checks.
fn selfplay_message(s: &Snapshot) -> String {
    format!(
        "{:.2} games/s, {:.1} pos/s, batch {:.1}, busy {:.0}%, cache {:.0}%, resign FP {}/{}",
        s.games_per_sec(),
        s.positions_per_sec(),
        s.avg_batch(),
        100.0 * s.evaluator_busy(),
        100.0 * s.cache_hit_rate(),
        s.false_positives,
        s.would_resign
    )
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

/// `HH:MM:SS` (UTC) of a Unix time, the stamp of log lines.
fn clock_time(unix_secs: u64) -> String {
    let s = unix_secs % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
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
    fn clock_time_is_utc_hours_minutes_seconds() {
        assert_eq!(clock_time(0), "00:00:00");
        assert_eq!(clock_time(86_400 + 3_600 + 61), "01:01:01");
    }

    #[test]
    fn the_selfplay_bar_templates_parse_and_the_message_names_the_rates() {
        for bounded in [false, true] {
            let t = selfplay_template(bounded);
            assert!(ProgressStyle::with_template(&t).is_ok(), "{t}");
            assert!(t.starts_with("selfplay "));
        }
        let s = Snapshot {
            elapsed: Duration::from_secs(10),
            games: 5,
            positions: 400,
            ..Snapshot::default()
        };
        let m = selfplay_message(&s);
        assert!(
            m.contains("0.50 games/s") && m.contains("40.0 pos/s"),
            "{m}"
        );
    }

    #[test]
    fn the_trainer_line_comes_at_the_end_of_its_logging_intervals_only() {
        let v = StepView {
            step: 20,
            samples: 320,
            total_loss: 3.0,
            policy_accuracy: 0.5,
            supervised: false,
            end: None,
            logged: None,
        };
        assert_eq!(train_line(&v, Duration::from_secs(1)), None);
        let logged = xq_train::Logged {
            means: xq_train::Means {
                total_loss: 3.25,
                policy_loss: 2.5,
                value_loss: 0.75,
                policy_accuracy: 0.125,
                ..xq_train::Means::default()
            },
            lr: 0.02,
            samples_per_second: 812.4,
        };
        let v = StepView {
            logged: Some(logged),
            ..v
        };
        assert_eq!(
            train_line(&v, Duration::from_millis(12_345)).unwrap(),
            "[    12.3s] step 20 loss 3.2500 (p 2.5000 v 0.7500) top1 0.125 lr 2.00e-2 812 samples/s"
        );
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
            logged: None,
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
