//! `xqz run`: the whole training loop in one resumable command.
//!
//! Self-play, training, gating, export and rating meet only through the run directory
//! (see ARCHITECTURE.md), so the loop is a scheduler of the same steps the separate
//! commands run:
//!
//! - **sync** mode (the default, best on a few CPU cores): play
//!   `games_per_generation` self-play games with the accepted network, train as far
//!   as the pacing allows, gate every new candidate; repeat.
//! - **concurrent** mode: a self-play thread and a training thread run all the time
//!   and the main thread gates candidates as they appear.
//!
//! Each accepted network is exported as a UCCI player and rated in short matches
//! against the fixed baselines. The loop stops when the budget (wall time across
//! restarts, games, training steps) is spent, then rates the best player in a longer
//! final match and prints a summary.
//!
//! The wall-time budget is a promise: the run ends by it, final match included. The
//! loop's phases end by the loop's deadline (the budget less the final reserve) and the
//! final match by the budget's end: training stops between steps, self-play abandons
//! the games still in progress (an unfinished game has no result to learn from),
//! matches start no pair that the time left cannot fit and discard the pairs the
//! deadline cuts (`xq_eval::matches::run_match_until`), and a gate cut before its
//! decision leaves the candidate pending. The final match's opponents share what is
//! left, each getting an equal part of the remaining time (what one leaves unused goes
//! to the next). Events and the summary say how many of the planned games were played
//! and why a match stopped early. Killing the process at any moment and running the
//! same command again resumes: finished games are in chunk files, the trainer resumes
//! from its last checkpoint, gating picks up pending candidates, and the wall time
//! spent is kept in `state.json`.
//!
//! Progress goes to a [`crate::progress::RunObserver`]: the binary draws bars on a
//! terminal (self-play games, training steps, the current gating or rating match) and
//! prints plain log lines otherwise.

use std::{
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use xq_eval::{
    matches::{MatchConfig, run_match_until},
    player::{Player, PlayerError},
    referee::GameSettings,
    spec::PlayerSpec,
};
use xq_selfplay::{Observer, ProgressMode, RunOptions, SelfplayConfig, Snapshot};

use crate::{
    config::{self, ConfigError},
    events::{Event, EventLog, RatingEvent},
    gate::{GateProgress, GateSection, gate_once, net_spec},
    progress::{SharedObserver, Task, TaskProgress, Update},
    rundir::{ModelRef, RunDir, write_atomic},
    selfplay::{load_accepted_evaluator, log_tensorboard, selfplay_event},
    train::{StepObserver, StepView, TrainSection, train_concurrently, train_until},
};

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The run's configuration (TOML; see configs/README.md).
    pub config: PathBuf,
    /// Run directory (default: `[run] dir` of the config).
    pub run: Option<PathBuf>,
}

/// How the phases share the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Sync,
    Concurrent,
}

/// The `[run]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Run directory when `--run` is not given (relative to the working directory).
    pub dir: Option<PathBuf>,
    /// Seeds self-play (each generation and worker derive their own seeds from it).
    pub seed: u64,
    pub mode: Mode,
    /// Wall-time budget in minutes, counted across restarts (0 = none).
    pub budget_minutes: f64,
    /// Stop after this many self-play games (0 = no limit).
    pub max_games: u64,
    /// Stop after this many training steps (0 = no limit).
    pub max_steps: u64,
    /// Self-play games between training phases (sync mode).
    pub games_per_generation: u64,
    /// Minutes kept back from the budget for the final rating match.
    pub final_reserve_minutes: f64,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            dir: None,
            seed: 1,
            mode: Mode::Sync,
            budget_minutes: 25.0,
            max_games: 0,
            max_steps: 0,
            games_per_generation: 32,
            final_reserve_minutes: 4.0,
        }
    }
}

/// The `[rating]` section: short matches of each accepted network against fixed
/// baselines, and the final match of the best player.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RatingSection {
    /// Player specifications of the baselines (see `xqz match --help`).
    pub opponents: Vec<String>,
    /// Games against each baseline after each promotion (0 = no rating).
    pub games: usize,
    /// MCTS visits per move of the network in rating games.
    pub visits: u32,
    /// Baselines of the final match of the best player.
    pub final_opponents: Vec<String>,
    /// Games against each final baseline at the end of the run (0 = none).
    pub final_games: usize,
    /// MCTS visits per move of the final match and the default of every exported
    /// player (default: `visits`). The short ratings after each promotion use `visits`
    /// to keep the loop's time for self-play; the final figure is the player users get.
    pub final_visits: Option<u32>,
    /// Weight in percent of the quiescence search mixed into every leaf
    /// ([`xq_eval::tactics`]) in the final match and in every exported player; 0 (the
    /// default) is the plain AlphaZero search. Training never uses it.
    pub final_quiescence: u8,
    pub time_control: String,
    pub concurrency: usize,
    pub openings: String,
    pub seed: u64,
}

impl Default for RatingSection {
    fn default() -> Self {
        RatingSection {
            opponents: vec!["random".into(), "greedy".into(), "alphabeta:depth=1".into()],
            games: 10,
            visits: 32,
            final_opponents: vec!["random".into(), "greedy".into()],
            final_games: 100,
            final_visits: None,
            final_quiescence: 0,
            time_control: "own".into(),
            concurrency: 2,
            openings: "builtin".into(),
            seed: 11,
        }
    }
}

/// The sections `xqz run` owns itself; `[selfplay]` and `[train]` are in [`RunConfig`],
/// typed by the crates they configure.
#[derive(Debug, Clone, Default)]
pub struct RunFile {
    pub run: RunSection,
    pub gate: GateSection,
    pub rating: RatingSection,
}

/// The sections serde reads straight into their owners' structs. `[train]` is not
/// among them: it mixes two structs' keys, and [`TrainSection::from_node`] splits it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Sections {
    #[serde(default)]
    run: RunSection,
    #[serde(default)]
    selfplay: SelfplayConfig,
    #[serde(default)]
    gate: GateSection,
    #[serde(default)]
    rating: RatingSection,
}

/// Everything a run needs, validated: the whole config file, parsed once. Every
/// command that reads a run's config (`xqz run`, `selfplay`, `train`, `gate`) reads it
/// through this, so an unknown section or key is refused by all of them alike.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub text: String,
    pub file: RunFile,
    pub selfplay: SelfplayConfig,
    pub train: TrainSection,
}

impl RunConfig {
    /// Reads and validates every section.
    ///
    /// # Errors
    /// The first problem, naming the file, the key path and (for bad TOML, unknown keys
    /// and values of the wrong type) the line.
    pub fn load(path: &Path) -> Result<RunConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::read(&e).locate("", Some(path)))?;
        let mut cfg = RunConfig::parse_file(&text, Some(path))?;
        // Pre-training files are named relative to the config file.
        cfg.train
            .resolve_paths(path.parent().unwrap_or(Path::new(".")));
        Ok(cfg)
    }

    /// The config of a command working on `run`: the file given on its command line,
    /// else the run's copy (`config.toml`), else the built-in defaults.
    ///
    /// # Errors
    /// As [`RunConfig::load`].
    pub fn for_run(run: &RunDir, given: Option<&Path>) -> Result<RunConfig> {
        match run.config_for(given) {
            Some(path) => RunConfig::load(&path),
            None => RunConfig::parse(""),
        }
    }

    /// Parses and validates config text (errors give lines, not a file name).
    ///
    /// # Errors
    /// As [`RunConfig::load`].
    pub fn parse(text: &str) -> Result<RunConfig> {
        RunConfig::parse_file(text, None)
    }

    fn parse_file(text: &str, file: Option<&Path>) -> Result<RunConfig> {
        RunConfig::read(text).map_err(|e| e.locate(text, file).into())
    }

    fn read(text: &str) -> Result<RunConfig, ConfigError> {
        let mut root = config::parse(text)?;
        let train = root.get_mut().remove("train");
        let span = root.span();
        let sections: Sections = config::deserialize(
            toml::Spanned::new(span, toml::de::DeValue::Table(root.into_inner())),
            "",
        )?;
        sections
            .selfplay
            .validate()
            .map_err(|e| ConfigError::invalid(e.to_string()))?;
        let train = match train {
            Some(node) => TrainSection::from_node(node)?,
            None => TrainSection::default(),
        };
        let file = RunFile {
            run: sections.run,
            gate: sections.gate,
            rating: sections.rating,
        };
        let invalid =
            |what: &str, e: &dyn std::fmt::Display| ConfigError::invalid(format!("{what}: {e}"));
        for o in &file.rating.opponents {
            o.parse::<PlayerSpec>()
                .map_err(|e| invalid("[rating] opponents", &e))?;
        }
        for o in &file.rating.final_opponents {
            o.parse::<PlayerSpec>()
                .map_err(|e| invalid("[rating] final_opponents", &e))?;
        }
        file.rating
            .time_control
            .parse::<xq_eval::clock::TimeControl>()
            .map_err(|e| invalid("[rating] time_control", &e))?;
        file.gate
            .time_control
            .parse::<xq_eval::clock::TimeControl>()
            .map_err(|e| invalid("[gate] time_control", &e))?;
        if file.rating.final_quiescence > 100 {
            return Err(ConfigError::invalid(
                "[rating] final_quiescence must be a percentage, 0-100",
            ));
        }
        if file.rating.visits == 0 || file.rating.final_visits == Some(0) {
            return Err(ConfigError::invalid(
                "[rating] visits and final_visits must be at least 1",
            ));
        }
        if file.run.games_per_generation == 0 {
            return Err(ConfigError::invalid(
                "[run] games_per_generation must be at least 1",
            ));
        }
        let non_negative = |x: f64| x.is_finite() && x >= 0.0;
        if !non_negative(file.run.budget_minutes) || !non_negative(file.run.final_reserve_minutes) {
            return Err(ConfigError::invalid(
                "[run] budget_minutes and final_reserve_minutes must be non-negative",
            ));
        }
        Ok(RunConfig {
            text: text.to_owned(),
            file,
            selfplay: sections.selfplay,
            train,
        })
    }
}

/// What `state.json` keeps across restarts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RunState {
    /// Seconds of wall time spent in earlier invocations.
    elapsed_seconds: f64,
    /// Self-play games finished.
    games: u64,
    /// Self-play generations started (seeds each generation differently).
    generations: u64,
    /// Whether the final rating was done.
    finished: bool,
}

impl RunState {
    fn load(run: &RunDir) -> Result<RunState> {
        let path = run.root().join(xq_data::layout::STATE_FILE);
        match std::fs::read_to_string(&path) {
            Ok(t) => {
                serde_json::from_str(&t).with_context(|| format!("corrupt {}", path.display()))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RunState::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    fn save(&self, run: &RunDir) -> Result<()> {
        write_atomic(
            &run.root().join(xq_data::layout::STATE_FILE),
            serde_json::to_string_pretty(self)?.as_bytes(),
        )
    }
}

/// The budget, measured from this invocation's start plus earlier invocations.
struct Budget {
    start: Instant,
    before: f64,
    limit: Option<f64>,
    reserve: f64,
}

impl Budget {
    fn elapsed(&self) -> f64 {
        self.before + self.start.elapsed().as_secs_f64()
    }

    /// Seconds left for the loop (the final match's reserve excluded).
    fn loop_left(&self) -> Option<f64> {
        self.limit.map(|l| l - self.reserve - self.elapsed())
    }

    fn loop_spent(&self) -> bool {
        self.loop_left().is_some_and(|s| s <= 0.0)
    }

    /// The instant `seconds_left` from now (none without a budget; now when spent).
    fn at(seconds_left: Option<f64>) -> Option<Instant> {
        seconds_left.map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)))
    }

    /// When the loop's phases must be over.
    fn loop_deadline(&self) -> Option<Instant> {
        Budget::at(self.loop_left())
    }

    /// When the whole run, final match included, must be over.
    fn end(&self) -> Option<Instant> {
        Budget::at(self.limit.map(|l| l - self.elapsed()))
    }
}

/// Time between `selfplay` events (and TensorBoard points) of a self-play phase.
const SELFPLAY_EVENT_EVERY: Duration = Duration::from_secs(60);

/// How often the self-play observer is called: often enough for live progress, or
/// just for the `selfplay` events.
fn observe_every(live: bool) -> Duration {
    if live {
        Duration::from_millis(250)
    } else {
        SELFPLAY_EVENT_EVERY
    }
}

/// The training progress, from the trainer's step observer: begun on the first step
/// (a training call that has nothing to do shows nothing) and ended when the observer
/// is dropped with its session. `None` without live progress.
fn train_observer(obs: &SharedObserver) -> Option<StepObserver> {
    if !obs.live() {
        return None;
    }
    let obs = obs.clone();
    let mut task: Option<Box<dyn TaskProgress>> = None;
    Some(Box::new(move |v: &StepView| {
        task.get_or_insert_with(|| obs.begin(Task::Train))
            .update(Update::Train(v));
    }))
}

/// Copies the config into the run on first start; later starts must use the same
/// config (or one that differs only in the budget), so a run stays explainable.
fn record_config(obs: &SharedObserver, run: &RunDir, cfg: &RunConfig) -> Result<()> {
    let path = run.config_path();
    if path.exists() {
        let old = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if old != cfg.text {
            obs.log(&format!(
                "note: {} differs from the given config; the given one is used and copied over",
                path.display()
            ));
        } else {
            return Ok(());
        }
    }
    write_atomic(&path, cfg.text.as_bytes())
}

/// Which rating a match belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The short rating after each promotion.
    Promotion,
    /// The final match of the best player.
    Final,
}

impl RatingSection {
    /// Visits of the final match and of exported players.
    pub fn final_visits(&self) -> u32 {
        self.final_visits.unwrap_or(self.visits)
    }

    /// Opponents, games a pairing, visits and the event tag of a stage.
    fn plan(&self, stage: Stage) -> (&[String], usize, u32, &'static str) {
        match stage {
            Stage::Promotion => (&self.opponents, self.games, self.visits, "rating"),
            Stage::Final => (
                &self.final_opponents,
                self.final_games,
                self.final_visits(),
                "final",
            ),
        }
    }
}

/// Rates `model` against each opponent of `stage` by `deadline`, which the opponents
/// share equally (see the module's documentation); appends `rating` events.
fn rate(
    obs: &SharedObserver,
    run: &RunDir,
    model: &ModelRef,
    r: &RatingSection,
    stage: Stage,
    deadline: Option<Instant>,
) -> Result<()> {
    let (opponents, games, visits, tag) = r.plan(stage);
    if games == 0 {
        return Ok(());
    }
    let mut me = net_spec(run, model, visits);
    let quiescence = match stage {
        Stage::Promotion => 0,
        Stage::Final => r.final_quiescence,
    };
    if let PlayerSpec::Net { quiescence_pct, .. } = &mut me {
        *quiescence_pct = quiescence;
    }
    let time_control = r.time_control.parse()?;
    let openings = xq_eval::openings::from_spec(&r.openings, r.seed)
        .with_context(|| format!("[rating] openings {:?}", r.openings))?;
    let mut tb = xq_train::logging::TbLogger::new(run.logs_dir().join("rating"));
    for (k, opponent) in opponents.iter().enumerate() {
        let spec: PlayerSpec = opponent.parse()?;
        let share = deadline.map(|d| {
            let now = Instant::now();
            let left = opponents.len() - k;
            now + d.saturating_duration_since(now) / u32::try_from(left).unwrap_or(u32::MAX)
        });
        let config = MatchConfig {
            games,
            concurrency: r.concurrency.max(1),
            settings: GameSettings {
                time_control,
                ..GameSettings::default()
            },
            openings: openings.clone(),
            sprt: None,
            seed: r.seed ^ model.step,
            pgn_out: Some(run.matches_dir().join(format!(
                "{tag}-{}-vs-{}.pgn",
                model.name,
                sanitize(opponent)
            ))),
            event: format!("{tag} {} vs {opponent}", model.name),
        };
        let build_a = || -> Result<Box<dyn Player>, PlayerError> { me.build() };
        let build_b = || -> Result<Box<dyn Player>, PlayerError> { spec.build() };
        let mut task = obs.live().then(|| obs.begin(Task::Match { tag }));
        let report = run_match_until(&build_a, &build_b, &config, share, &mut |s| {
            if let Some(t) = &mut task {
                t.update(Update::Match(s));
            }
        })?;
        drop(task);
        obs.log(&format!("{tag}: {}", report.status.line()));
        if let Some(cut) = report.cutoff {
            obs.log(&format!(
                "{tag}: {} of {} planned games played ({}; {} of cut pairs discarded)",
                report.games.len(),
                report.status.planned_games,
                cut.describe(),
                match report.discarded_games {
                    1 => "1 game".to_owned(),
                    n => format!("{n} games"),
                }
            ));
        }
        run.record(Event::Rating(RatingEvent {
            model: model.name.clone(),
            opponent: opponent.clone(),
            step: Some(model.step),
            is_final: stage == Stage::Final,
            visits,
            quiescence,
            result: report.summary(),
        }))?;
        if let (Some(e), "rating") = (report.status.elo.filter(|e| e.elo.is_finite()), tag) {
            tb.scalar(
                &format!("rating/elo_vs_{}", sanitize(opponent)),
                e.elo,
                model.step,
            )?;
        }
        if let Some(score) = report.status.games.score() {
            tb.scalar(
                &format!("{tag}/score_vs_{}", sanitize(opponent)),
                score,
                model.step,
            )?;
        }
    }
    Ok(())
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Exports and rates a newly accepted network.
fn after_promotion(
    obs: &SharedObserver,
    run: &RunDir,
    cfg: &RunConfig,
    model: &ModelRef,
    deadline: Option<Instant>,
) -> Result<()> {
    let binary = std::env::current_exe().context("cannot find the running xqz binary")?;
    let out = run.players_dir().join(&model.name);
    if !out.exists() {
        let summary = crate::export::export_player(&crate::export::ExportOptions {
            run: run.root().to_path_buf(),
            model: Some(model.name.clone()),
            out: Some(out.clone()),
            binary,
            settings: xq_eval::net::NetSettings {
                visits: cfg.file.rating.final_visits(),
                leaf_quiescence: f32::from(cfg.file.rating.final_quiescence) / 100.0,
                ..xq_eval::net::NetSettings::default()
            },
            name: None,
            force: false,
        })?;
        run.record(Event::Export {
            model: Some(model.name.clone()),
            step: Some(model.step),
            path: run.relative(&summary.out),
        })?;
        obs.log(&format!("exported {} to {}", model.name, out.display()));
    }
    let r = &cfg.file.rating;
    rate(obs, run, model, r, Stage::Promotion, deadline)?;
    Ok(())
}

/// Gates the newest pending candidate (older pending ones are recorded as superseded),
/// once: in concurrent mode new candidates keep arriving, and the caller checks the
/// budget between calls. Gating, export and rating end by `deadline`.
fn gate_pending(
    obs: &SharedObserver,
    run: &RunDir,
    cfg: &RunConfig,
    deadline: Option<Instant>,
) -> Result<()> {
    // Live, the status after each pair moves the match's display instead of being
    // logged; the last one is logged when the match is over.
    let mut task: Option<Box<dyn TaskProgress>> = None;
    let mut last_status: Option<String> = None;
    let decision = gate_once(run, &cfg.file.gate, deadline, &mut |p| match p {
        GateProgress::Match(status) if obs.live() => {
            task.get_or_insert_with(|| obs.begin(Task::Match { tag: "gate" }))
                .update(Update::Match(status));
            last_status = Some(format!("gate: {}", status.line()));
        }
        GateProgress::Match(status) => obs.log(&format!("gate: {}", status.line())),
        GateProgress::Note(line) => {
            if let Some(s) = last_status.take() {
                obs.log(&s);
            }
            task = None;
            obs.log(line);
        }
    });
    drop(task);
    if let Some(s) = last_status {
        obs.log(&s);
    }
    if decision? == Some(true)
        && let Some(m) = run.accepted()?
    {
        // Export and rating only report on the network; their failure (a busy disk,
        // an opponent engine that will not start) must not stop training.
        if let Err(e) = after_promotion(obs, run, cfg, &m, deadline) {
            obs.log(&format!(
                "warning: export or rating of {} failed: {e:#}",
                m.name
            ));
            run.record(Event::Warning {
                model: Some(m.name.clone()),
                message: format!("{e:#}"),
                what: Some(crate::events::WarningWhat::Model),
                path: None,
                action: None,
            })?;
        }
    }
    Ok(())
}

/// The `selfplay` events and TensorBoard points of a self-play phase: one every
/// [`SELFPLAY_EVENT_EVERY`] from the observer, and one with the final counters.
struct SelfplayEvents {
    obs: SharedObserver,
    run: RunDir,
    worker: String,
    games_before: u64,
    /// The observer's period (events are due when a call comes within half of it).
    observe_every: Duration,
    state: Mutex<EventState>,
}

struct EventState {
    tb: xq_train::logging::TbLogger,
    last: Instant,
    /// Games and positions of the last event.
    emitted: Option<(u64, u64)>,
    latest: Option<Snapshot>,
}

impl SelfplayEvents {
    fn observe(&self, s: &Snapshot) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        st.latest = Some(s.clone());
        if st.last.elapsed() + self.observe_every / 2 >= SELFPLAY_EVENT_EVERY {
            self.emit(&mut st, s);
        }
    }

    /// The final event: the phase's summary, or the last counters seen when it failed.
    fn finish(&self, s: Option<&Snapshot>) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        let Some(s) = s.cloned().or_else(|| st.latest.clone()) else {
            return;
        };
        if st.emitted != Some((s.games, s.positions)) {
            self.emit(&mut st, &s);
        }
    }

    fn emit(&self, st: &mut EventState, s: &Snapshot) {
        st.last = Instant::now();
        st.emitted = Some((s.games, s.positions));
        if let Err(e) = self.run.record(selfplay_event(&self.worker, s)) {
            self.obs.log(&format!("selfplay: warning: {e:#}"));
        }
        log_tensorboard(&mut st.tb, s, self.games_before + s.games);
    }
}

/// One self-play phase of `games` games (or until `stop`), with the accepted network;
/// the games still in progress at `deadline` are abandoned.
#[allow(clippy::too_many_arguments)]
fn selfplay_phase(
    obs: &SharedObserver,
    run: &RunDir,
    cfg: &RunConfig,
    games: Option<u64>,
    games_before: u64,
    seed: u64,
    stop: Option<Arc<AtomicBool>>,
    deadline: Option<Instant>,
) -> Result<Snapshot> {
    let (evaluator, watcher) = load_accepted_evaluator(run, &cfg.selfplay)?;
    let worker = format!("run-{}", xq_selfplay::worker_id());
    let live = obs.live();
    let events = Arc::new(SelfplayEvents {
        obs: obs.clone(),
        run: run.clone(),
        worker: worker.clone(),
        games_before,
        observe_every: observe_every(live),
        state: Mutex::new(EventState {
            tb: xq_train::logging::TbLogger::new(run.logs_dir().join("selfplay")),
            last: Instant::now(),
            emitted: None,
            latest: None,
        }),
    });
    let task = live.then(|| Mutex::new(obs.begin(Task::Selfplay { games })));
    let task = Arc::new(task);
    let options = RunOptions {
        run_dir: Some(run.root().to_path_buf()),
        games,
        seed,
        worker_id: Some(worker),
        // Live, the run draws self-play's progress; otherwise the worker logs its own
        // status lines.
        progress: if live {
            ProgressMode::Quiet
        } else {
            ProgressMode::Lines
        },
        progress_interval_secs: 30.0,
        stop,
        interrupt: None,
        deadline,
        observer: Some(Observer {
            every: observe_every(live),
            call: Arc::new({
                let events = events.clone();
                let task = task.clone();
                move |s: &Snapshot| {
                    if let Some(Ok(mut t)) = task.as_ref().as_ref().map(Mutex::lock) {
                        t.update(Update::Selfplay(s));
                    }
                    events.observe(s);
                }
            }),
        }),
    };
    let result = xq_selfplay::run(&cfg.selfplay, &options, evaluator, watcher);
    drop(options);
    drop(task);
    events.finish(result.as_ref().ok().map(|s| &s.stats));
    let stats = result?.stats;
    if stats.abandoned > 0 {
        obs.log(&format!(
            "selfplay: {} games in progress at the deadline abandoned",
            stats.abandoned
        ));
    }
    Ok(stats)
}

/// Runs the loop; returns when the budget is spent.
fn run_loop(obs: &SharedObserver, run: &RunDir, cfg: &RunConfig) -> Result<()> {
    let r = &cfg.file.run;
    let mut state = RunState::load(run)?;
    let budget = Budget {
        start: Instant::now(),
        before: state.elapsed_seconds,
        limit: (r.budget_minutes > 0.0).then_some(r.budget_minutes * 60.0),
        reserve: if cfg.file.rating.final_games > 0 {
            r.final_reserve_minutes * 60.0
        } else {
            0.0
        },
    };
    obs.log(&format!(
        "run {}: {:.1} of {} minutes spent, {} games so far, mode {:?}",
        run.root().display(),
        budget.elapsed() / 60.0,
        if r.budget_minutes > 0.0 {
            format!("{:.1}", r.budget_minutes)
        } else {
            "unlimited".into()
        },
        state.games,
        r.mode
    ));
    // A merge of old chunks cut short by a kill is finished now, even when the budget
    // leaves nothing to train (the trainer's window would otherwise finish it).
    let finished = xq_data::compact::finish_interrupted(&run.data_dir())?;
    if finished > 0 {
        obs.log(&format!(
            "data: {finished} merge(s) of old chunks cut short by a kill were finished"
        ));
    }
    // Candidates left from an interrupted run are gated first.
    gate_pending(obs, run, cfg, budget.loop_deadline())?;
    let games_left =
        |state: &RunState| (r.max_games > 0).then(|| r.max_games.saturating_sub(state.games));
    let steps_spent = |step: u64| r.max_steps > 0 && step >= r.max_steps;
    let mut step = crate::train::current_step(run)?;
    match r.mode {
        Mode::Sync => {
            while !budget.loop_spent() && games_left(&state) != Some(0) && !steps_spent(step) {
                // Train as far as the pacing allows (supervised pre-training first on a
                // fresh run, if configured), then gate what the trainer proposed.
                let stop = Arc::new(AtomicBool::new(false));
                let max = (r.max_steps > 0).then_some(r.max_steps);
                step = with_deadline(&stop, budget.loop_left(), || {
                    train_until(run, &cfg.train, max, &stop, train_observer(obs), &mut |l| {
                        obs.log(l)
                    })
                })?;
                gate_pending(obs, run, cfg, budget.loop_deadline())?;
                state.elapsed_seconds = budget.elapsed();
                state.save(run)?;
                if budget.loop_spent() || steps_spent(step) {
                    break;
                }
                // Self-play one generation with the accepted network.
                let n = games_left(&state)
                    .map_or(r.games_per_generation, |g| g.min(r.games_per_generation));
                let seed = r
                    .seed
                    .wrapping_mul(1_000_003)
                    .wrapping_add(state.generations);
                state.generations += 1;
                state.save(run)?;
                let deadline = budget.loop_deadline();
                let before = state.games;
                let s = selfplay_phase(obs, run, cfg, Some(n), before, seed, None, deadline)?;
                state.games += s.games;
                state.elapsed_seconds = budget.elapsed();
                state.save(run)?;
            }
        }
        Mode::Concurrent => {
            let stop = Arc::new(AtomicBool::new(false));
            let seed = r
                .seed
                .wrapping_mul(1_000_003)
                .wrapping_add(state.generations);
            state.generations += 1;
            state.save(run)?;
            thread::scope(|scope| -> Result<()> {
                let sp_stop = Some(stop.clone());
                let games = games_left(&state);
                let before = state.games;
                let deadline = budget.loop_deadline();
                let selfplay = scope.spawn(move || {
                    selfplay_phase(obs, run, cfg, games, before, seed, sp_stop, deadline)
                });
                let tr_stop = stop.clone();
                let max = (r.max_steps > 0).then_some(r.max_steps);
                // One trainer for the whole phase: it trains as far as the pacing
                // allows, saves a checkpoint, and looks for new data every 2 s.
                let trainer = scope.spawn(move || -> Result<u64> {
                    train_concurrently(
                        run,
                        &cfg.train,
                        max,
                        &tr_stop,
                        Duration::from_secs(2),
                        train_observer(obs),
                        &mut |l| obs.log(l),
                    )
                });
                let mut result = Ok(());
                while !budget.loop_spent() && !selfplay.is_finished() && !trainer.is_finished() {
                    if let Err(e) = gate_pending(obs, run, cfg, budget.loop_deadline()) {
                        result = Err(e);
                        break;
                    }
                    state.elapsed_seconds = budget.elapsed();
                    state.save(run)?;
                    thread::sleep(Duration::from_secs(5));
                }
                stop.store(true, Ordering::SeqCst);
                let s = selfplay
                    .join()
                    .map_err(|_| anyhow::anyhow!("self-play thread panicked"))??;
                step = trainer
                    .join()
                    .map_err(|_| anyhow::anyhow!("training thread panicked"))??;
                state.games += s.games;
                result
            })?;
            gate_pending(obs, run, cfg, budget.loop_deadline())?;
        }
    }
    state.elapsed_seconds = budget.elapsed();
    state.save(run)?;
    if !state.finished {
        if let Some(best) = run.accepted()? {
            obs.log(&format!(
                "final rating of {} ({} games per opponent, {} visits a move)",
                best.name,
                cfg.file.rating.final_games,
                cfg.file.rating.final_visits()
            ));
            let r = &cfg.file.rating;
            rate(obs, run, &best, r, Stage::Final, budget.end())?;
        }
        state.finished = true;
    }
    state.elapsed_seconds = budget.elapsed();
    state.save(run)?;
    summary(run, &state, step)
}

/// Runs `f` with `stop` set when `seconds_left` run out.
fn with_deadline<T>(
    stop: &Arc<AtomicBool>,
    seconds_left: Option<f64>,
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    let Some(left) = seconds_left else { return f() };
    let done = Arc::new(AtomicBool::new(false));
    let (stop2, done2) = (stop.clone(), done.clone());
    let deadline = Instant::now() + Duration::from_secs_f64(left.max(0.0));
    let watchdog = thread::spawn(move || {
        while !done2.load(Ordering::SeqCst) {
            if Instant::now() >= deadline {
                stop2.store(true, Ordering::SeqCst);
                return;
            }
            thread::sleep(Duration::from_millis(200));
        }
    });
    let out = f();
    done.store(true, Ordering::SeqCst);
    let _ = watchdog.join();
    out
}

fn summary(run: &RunDir, state: &RunState, step: u64) -> Result<()> {
    let log = run.events()?;
    let accepted = log
        .events()
        .filter(|e| matches!(e, Event::Promote { .. }))
        .count();
    println!("run {} finished", run.root().display());
    println!(
        "  {:.1} minutes, {} self-play games, {} positions, {} training steps, {} accepted networks",
        state.elapsed_seconds / 60.0,
        state.games,
        selfplay_positions(&log),
        step,
        accepted
    );
    for e in log.events() {
        let Event::Rating(r) = e else { continue };
        let games = match r.result.cutoff {
            Some(cut) => format!(
                "{} of {} games, {}",
                r.result.games,
                r.result.planned_games,
                cut.describe()
            ),
            None => format!("{} games", r.result.games),
        };
        println!(
            "  {} {} vs {}: score {} ({games}), Elo {} [{}, {}]",
            if r.is_final { "final " } else { "rating" },
            r.model,
            r.opponent,
            r.result
                .score
                .map_or("-".into(), |s| format!("{:.1}%", 100.0 * s)),
            fmt_elo(r.result.elo),
            fmt_elo(r.result.elo_lower),
            fmt_elo(r.result.elo_upper),
        );
    }
    match run.accepted()? {
        Some(m) => println!(
            "  best player: {}",
            run.players_dir().join(&m.name).display()
        ),
        None => println!("  no network was accepted yet"),
    }
    Ok(())
}

/// Self-play positions of the whole run: each worker's events carry its running
/// totals, so the last value of each worker is summed.
fn selfplay_positions(log: &EventLog) -> u64 {
    let mut last = std::collections::BTreeMap::<&str, u64>::new();
    for e in log.events() {
        if let Event::Selfplay(s) = e {
            let v = last.entry(&s.worker).or_default();
            *v = (*v).max(s.positions);
        }
    }
    last.values().sum()
}

fn fmt_elo(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:+.0}"),
        _ => "-".into(),
    }
}

/// `xqz run`: the loop, reporting to `obs`.
///
/// # Errors
/// A bad config, an unusable run directory, or a phase that failed.
pub fn run(args: Options, obs: SharedObserver) -> Result<()> {
    let cfg = RunConfig::load(&args.config)?;
    let dir = match (&args.run, &cfg.file.run.dir) {
        (Some(d), _) => d.clone(),
        (None, Some(d)) => d.clone(),
        (None, None) => bail!(
            "no run directory: give --run DIR or set [run] dir in {}",
            args.config.display()
        ),
    };
    let run = RunDir::open(&dir)?;
    record_config(&obs, &run, &cfg)?;
    run_loop(&obs, &run, &cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_run_config_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut loaded = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".toml") || name.starts_with("tournament-") {
                continue;
            }
            let cfg = RunConfig::load(&path).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert!(cfg.file.rating.final_quiescence <= 100, "{name}");
            loaded += 1;
        }
        assert!(loaded >= 6, "{loaded} configs");
    }

    #[test]
    fn final_quiescence_is_a_percentage() {
        let cfg = RunConfig::parse("[rating]\nfinal_quiescence = 75\n").unwrap();
        assert_eq!(cfg.file.rating.final_quiescence, 75);
        assert_eq!(
            RunConfig::parse("").unwrap().file.rating.final_quiescence,
            0
        );
        let err = RunConfig::parse("[rating]\nfinal_quiescence = 101\n").unwrap_err();
        assert!(err.to_string().contains("final_quiescence"), "{err}");
    }

    #[test]
    fn the_final_match_uses_final_visits_and_promotion_ratings_use_visits() {
        let cfg = RunConfig::parse("[rating]\nvisits = 24\nfinal_visits = 200\n").unwrap();
        let r = &cfg.file.rating;
        assert_eq!(r.plan(Stage::Promotion).2, 24);
        assert_eq!(r.plan(Stage::Final).2, 200);
        assert_eq!(r.final_visits(), 200);
        let cfg = RunConfig::parse("[rating]\nvisits = 24\n").unwrap();
        assert_eq!(
            cfg.file.rating.plan(Stage::Final).2,
            24,
            "defaults to visits"
        );
        let err = RunConfig::parse("[rating]\nfinal_visits = 0\n").unwrap_err();
        assert!(err.to_string().contains("final_visits"), "{err}");
    }

    #[test]
    fn every_shipped_config_is_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            // Tournament files (`tournament-*.toml`) are `xqz tournament`'s, not runs.
            let tournament = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("tournament-"));
            if path.extension().is_some_and(|e| e == "toml") && !tournament {
                let cfg =
                    RunConfig::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
                if let Some(p) = &cfg.train.data.pretrain {
                    for f in &p.pgn {
                        assert!(
                            f.exists(),
                            "{}: pre-training file {} is missing",
                            path.display(),
                            f.display()
                        );
                    }
                }
                n += 1;
            }
        }
        assert!(n >= 4, "only {n} configs");
    }

    #[test]
    fn unknown_keys_are_named_in_every_section() {
        for (text, needle) in [
            ("[run]\nbudget_minuts = 3\n", "budget_minuts"),
            ("[runn]\n", "runn"),
            ("[selfplay]\nparalel_games = 3\n", "paralel_games"),
            ("[train]\nlerning_rate = 0.1\n", "lerning_rate"),
            ("[gate]\nvisit = 3\n", "visit"),
            ("[rating]\nopponents = [\"randm\"]\n", "randm"),
            ("[run]\ngames_per_generation = 0\n", "games_per_generation"),
            ("[gate]\ntime_control = \"fast\"\n", "time_control"),
        ] {
            let e = format!("{:#}", RunConfig::parse(text).unwrap_err());
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn live_progress_is_observed_often_and_plain_lines_once_an_event() {
        assert!(observe_every(true) < Duration::from_secs(1));
        assert_eq!(observe_every(false), SELFPLAY_EVENT_EVERY);
        let lines: SharedObserver = Arc::new(crate::progress::LogLines);
        assert!(train_observer(&lines).is_none());
    }

    /// A live observer that records what the run reports.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    struct RecordedTask(Arc<Recorder>, Task);

    impl crate::progress::RunObserver for Arc<Recorder> {
        fn log(&self, line: &str) {
            self.0.lock().unwrap().push(format!("log {line}"));
        }
        fn live(&self) -> bool {
            true
        }
        fn begin(&self, task: Task) -> Box<dyn TaskProgress> {
            self.0.lock().unwrap().push(format!("begin {task:?}"));
            Box::new(RecordedTask(self.clone(), task))
        }
    }

    impl TaskProgress for RecordedTask {
        fn update(&mut self, update: Update<'_>) {
            let what = match update {
                Update::Train(v) => format!("step {}", v.step),
                Update::Selfplay(s) => format!("games {}", s.games),
                Update::Match(s) => s.line(),
            };
            self.0
                .0
                .lock()
                .unwrap()
                .push(format!("{:?} {what}", self.1));
        }
    }

    impl Drop for RecordedTask {
        fn drop(&mut self) {
            self.0.0.lock().unwrap().push(format!("end {:?}", self.1));
        }
    }

    #[test]
    fn training_progress_reaches_a_live_observer_as_typed_updates() {
        let recorder = Arc::new(Recorder::default());
        let obs: SharedObserver = Arc::new(recorder.clone());
        let mut observe = train_observer(&obs).expect("a live observer gets training progress");
        assert!(
            recorder.0.lock().unwrap().is_empty(),
            "begun on the first step only"
        );
        for step in [1, 2] {
            observe(&StepView {
                step,
                samples: 16 * step,
                total_loss: 1.0,
                policy_accuracy: 0.5,
                supervised: false,
                end: Some(4),
            });
        }
        drop(observe);
        assert_eq!(
            *recorder.0.lock().unwrap(),
            ["begin Train", "Train step 1", "Train step 2", "end Train"]
        );
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_key_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        for (text, want) in [
            (
                "[run]\nseed = 2\n\n[runn]\nseed = 3\n",
                "config.toml:4: unknown section [runn]",
            ),
            (
                "[run]\nbudget_minuts = 3\n",
                "config.toml:2: [run] unknown key \"budget_minuts\" (did you mean \"budget_minutes\"?)",
            ),
            (
                "[selfplay]\nmax_batch = 8\n[selfplay.search]\nc_puct = 3\n",
                "config.toml:4: [selfplay.search] unknown key \"c_puct\"",
            ),
            (
                "[selfplay]\nparallel_games = \"many\"\n",
                "config.toml:2: selfplay.parallel_games: invalid type: string \"many\"",
            ),
            (
                "[gate]\nvisit = 3\n",
                "config.toml:2: [gate] unknown key \"visit\"",
            ),
            (
                "[rating]\nopponents = [\"random\", 3]\n",
                "config.toml:2: rating.opponents[1]: invalid type: integer `3`",
            ),
            (
                "[run]\nmode = \"fast\"\n",
                "config.toml:2: run.mode: unknown variant `fast`",
            ),
            ("[run]\nseed = \n", "config.toml:2: "),
            (
                "[selfplay]\nmax_batch = 0\n",
                "config.toml: selfplay.max_batch must be",
            ),
            (
                "[train]\nlr = 0.0\n",
                "config.toml: [train] lr must be a positive number",
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = RunConfig::load(&path).unwrap_err().to_string();
            let err = err
                .strip_prefix(&format!("{}", dir.path().display()))
                .unwrap_or(&err);
            assert!(err.starts_with(&format!("/{want}")), "{text:?}: {err}");
            assert!(!err.contains('\n'), "{text:?}: multi-line {err:?}");
        }
    }

    #[test]
    fn every_command_reads_the_whole_file_given_or_the_runs_copy() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path().join("run")).unwrap();
        // No file anywhere: the defaults.
        let cfg = RunConfig::for_run(&run, None).unwrap();
        assert_eq!(cfg.selfplay, SelfplayConfig::default());
        // The run's copy, whole: a section the command does not use is still checked.
        std::fs::write(run.config_path(), "[selfplay]\nparallel_games = 3\n").unwrap();
        assert_eq!(
            RunConfig::for_run(&run, None)
                .unwrap()
                .selfplay
                .parallel_games,
            3
        );
        std::fs::write(
            run.config_path(),
            "[train]\nbatch_size = 8\n[gate]\nvisit = 3\n",
        )
        .unwrap();
        let err = RunConfig::for_run(&run, None).unwrap_err().to_string();
        assert!(err.contains("[gate] unknown key \"visit\""), "{err}");
        // A file given on the command line wins over the run's copy.
        let given = dir.path().join("given.toml");
        std::fs::write(&given, "[gate]\nvisits = 7\n").unwrap();
        let cfg = RunConfig::for_run(&run, Some(&given)).unwrap();
        assert_eq!(cfg.file.gate.visits, 7);
        let err = RunConfig::for_run(&run, Some(&dir.path().join("missing.toml")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing.toml: cannot read config"), "{err}");
    }

    #[test]
    fn selfplay_events_come_periodically_and_once_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let events = |observe_every, last| SelfplayEvents {
            obs: Arc::new(crate::progress::LogLines),
            run: run.clone(),
            worker: "w".into(),
            games_before: 0,
            observe_every,
            state: Mutex::new(EventState {
                tb: xq_train::logging::TbLogger::new(run.logs_dir().join("selfplay")),
                last,
                emitted: None,
                latest: None,
            }),
        };
        let now = Instant::now();
        let a_minute_ago = now.checked_sub(SELFPLAY_EVENT_EVERY).unwrap();
        let snap = |games| Snapshot {
            games,
            positions: 10 * games,
            ..Snapshot::default()
        };
        let selfplay = || -> Vec<crate::events::SelfplayEvent> {
            let log = run.events().unwrap();
            log.events()
                .filter_map(|e| match e {
                    Event::Selfplay(s) => Some(s.clone()),
                    _ => None,
                })
                .collect()
        };
        let count = || selfplay().len();
        // Bars: the observer comes often; events only every minute, and at the end.
        let e = events(observe_every(true), now);
        e.observe(&snap(1));
        e.observe(&snap(2));
        assert_eq!(count(), 0);
        e.finish(Some(&snap(3)));
        assert_eq!(count(), 1);
        // Lines: every observer call (once a minute) is an event; the end is not
        // written twice.
        let e = events(observe_every(false), a_minute_ago);
        e.observe(&snap(4));
        assert_eq!(count(), 2);
        e.finish(Some(&snap(4)));
        assert_eq!(count(), 2);
        // A failed phase still records the last counters seen.
        let e = events(observe_every(true), now);
        e.observe(&snap(5));
        e.finish(None);
        assert_eq!(count(), 3);
        let last = selfplay().pop().unwrap();
        assert_eq!(last.games, 5);
    }
}
