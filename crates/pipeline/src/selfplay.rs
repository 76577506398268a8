//! Self-play in a run directory: a standalone worker (`xqz selfplay`) and the
//! self-play phases of `xqz run` are one [`play`] of a [`Session`], writing chunks
//! and PGN records, `selfplay` events and TensorBoard scalars, and reporting progress
//! to the caller's observer.
//!
//! The network is the run's accepted one: the pointer `models/accepted.json` names its
//! model directory (`{"name", "path", "step", "time"}`, the path relative to the run
//! directory). `xqz run` and a worker of a run that pre-trains wait for the first one
//! ([`Session::wait_for_network`]); a standalone worker in a run without any plays with
//! the uniform evaluator until one is accepted. The pointer is polled every
//! `model_poll_seconds`, and a newly accepted network is swapped in without
//! restarting. Several workers, on several machines, can share one run directory: each
//! writes files named by its own id.

use std::{
    path::Path,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering::SeqCst},
    },
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use xq_data::tensorboard::TbLogger;
use xq_eval::tactics::QuiescenceBlend;
use xq_nn::{Evaluator, LoadOptions, NetworkBackend, UniformEvaluator};
use xq_run::{
    RunDir,
    events::{Event, SelfplayEvent},
};
use xq_selfplay::{
    Book, ModelSource, NetworkPrior, PointerWatcher, ResignCalibration, RunOptions, SelfplayConfig,
    Snapshot, Summary, content_hash, worker_id,
};

use crate::backend::network_backend;
use crate::config::RunConfig;
use crate::progress::{SharedObserver, Task, TaskProgress, Update};

/// How often a live observer gets self-play's counters.
const LIVE_EVERY: Duration = Duration::from_millis(250);

/// Time between `selfplay` events (and TensorBoard points) of a session.
const EVENT_EVERY: Duration = Duration::from_secs(60);

/// The network a session starts with, and where newly accepted ones come from.
pub struct Network {
    pub evaluator: Box<dyn Evaluator>,
    pub watcher: Box<dyn ModelSource>,
    /// Where its networks are evaluated, `cpu` or `cuda:N`, for the `selfplay` events.
    pub device: String,
    /// The backend and precision its networks run with (`torch-bf16`, …), for the
    /// `selfplay` events: asked at each event, since `XQZ_BACKEND=auto` decides when
    /// the first network loads (`None` before, or from a backend that cannot say).
    pub inference: InferenceSource,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("evaluator", &self.evaluator.name())
            .field("device", &self.device)
            .field("inference", &(self.inference)())
            .finish_non_exhaustive()
    }
}

/// One self-play session: who plays, what and until when.
#[derive(Debug, Clone)]
pub struct Session {
    /// The worker's id: the prefix of its files and the `worker` of its events.
    pub worker: String,
    /// Seeds every game of the session.
    pub seed: u64,
    /// Games to play (`None`: until stopped).
    pub games: Option<u64>,
    /// Once raised, no new game starts; the games under way are finished.
    pub stop: Option<Arc<AtomicBool>>,
    /// Raised by a SIGTERM/SIGINT handler: every finished game is written and the games
    /// under way are abandoned at once (see `xq_selfplay::RunOptions::interrupt`).
    pub interrupt: Option<Arc<AtomicBool>>,
    /// When the games still under way are abandoned (a run's budget).
    pub deadline: Option<Instant>,
    /// Self-play games of the run before this session: the TensorBoard points of the
    /// session continue from there.
    pub games_before: u64,
    /// Time between progress reports to an observer that is not live (each a line).
    pub lines_every: Duration,
    /// The resignation calibration the previous session of this process ended with
    /// (`Summary::resign`): a sync `xqz run` carries it from one self-play phase to the
    /// next, so its window of played-out games spans generations. `None` starts from
    /// `[selfplay] resign_threshold`.
    pub resign: Option<ResignCalibration>,
    /// The opening book of `[selfplay] book_plies` ([`book`]); `None` starts every game
    /// from the starting position.
    pub book: Option<Arc<Book>>,
    /// Wait for the run's first accepted network instead of playing with the uniform
    /// evaluator ([`wait_for_network`]): set where a network is coming (`xqz run`
    /// makes one before self-play; a run with `[train.pretrain]` publishes one when
    /// pre-training ends), so that no training game is played by uniform search.
    pub wait_for_network: bool,
}

impl Session {
    /// A standalone worker (`xqz selfplay`): a new worker id, the given seed or one
    /// derived from the id (so that workers sharing a run play different games), and
    /// a progress line every 10 s.
    pub fn worker(seed: Option<u64>) -> Session {
        let worker = worker_id();
        Session {
            seed: seed.unwrap_or_else(|| xq_core::hash::fnv1a(worker.as_bytes())),
            worker,
            games: None,
            stop: None,
            interrupt: None,
            deadline: None,
            games_before: 0,
            lines_every: Duration::from_secs(10),
            resign: None,
            book: None,
            wait_for_network: false,
        }
    }

    /// A self-play phase of `xqz run` with a generation's `seed`, after `games_before`
    /// games of the run: a progress line every 30 s, and no game before the run has a
    /// network.
    pub fn phase(seed: u64, games_before: u64) -> Session {
        Session {
            worker: format!("run-{}", worker_id()),
            seed,
            games: None,
            stop: None,
            interrupt: None,
            deadline: None,
            games_before,
            lines_every: Duration::from_secs(30),
            resign: None,
            book: None,
            wait_for_network: true,
        }
    }

    /// Whether the session is over before it played: stopped, interrupted or past its
    /// deadline.
    fn ended(&self) -> bool {
        let raised = |f: &Option<Arc<AtomicBool>>| f.as_ref().is_some_and(|f| f.load(SeqCst));
        raised(&self.stop)
            || raised(&self.interrupt)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// The opening book of `[selfplay] book_plies`: the training games of
/// `[train.pretrain] pgn`, split as pre-training splits them, so that the held-out
/// games stay unseen. Games that cannot be read are left out, as pre-training leaves
/// them out (and warns of them). `None` when `book_plies` is 0 (the config refuses
/// `book_plies` without `[train.pretrain]`).
///
/// # Errors
/// A PGN file that cannot be read.
pub fn book(config: &RunConfig) -> Result<Option<Arc<Book>>> {
    let pretrain = config.train.data.pretrain.as_ref();
    let Some(p) = pretrain.filter(|_| config.selfplay.book_plies > 0) else {
        return Ok(None);
    };
    let (games, _) = xq_data::read_pgn_files(&p.pgn).context("cannot read the opening book")?;
    let split = xq_data::SplitConfig {
        held_out_permille: p.held_out_permille,
        salt: 0,
    };
    let lines = games
        .into_iter()
        .filter(|g| !split.is_held_out(xq_data::game_hash(&g.start, &g.moves)))
        .map(|g| (g.start, g.moves))
        .collect();
    Ok(Some(Arc::new(
        Book::new(lines).context("cannot read the opening book")?,
    )))
}

/// How self-play loads its networks: `[selfplay] threads` intra-op threads in each of
/// `[selfplay] eval_workers` copies (0 = one per core this process may use), never more
/// copies than `max_batch`: a copy beyond it would never get a part of a batch. Its
/// batch is `max_batch`, which `XQZ_BACKEND=auto` measures at.
pub fn evaluator_options(config: &SelfplayConfig) -> xq_nn::LoadOptions {
    let workers = match config.eval_workers {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    xq_nn::LoadOptions {
        threads: config.threads,
        workers: workers.min(config.max_batch.max(1)),
        batch: config.max_batch,
        ..xq_nn::LoadOptions::default()
    }
}

/// `evaluator` with `[selfplay.search] leaf_quiescence` of quiescence mixed into its
/// values and priors ([`QuiescenceBlend`]), so that self-play's targets come from the
/// kind of search the exported player runs; unchanged at weight 0 (plain AlphaZero).
fn with_leaf_quiescence(evaluator: Box<dyn Evaluator>, weight: f32) -> Result<Box<dyn Evaluator>> {
    if weight == 0.0 {
        return Ok(evaluator);
    }
    Ok(Box::new(QuiescenceBlend::new(evaluator, weight)?))
}

/// The inverse of [`with_leaf_quiescence`]'s blend of the priors, when `config` builds
/// its Gumbel targets on the network's prior (`[selfplay.search.gumbel] target_prior =
/// "network"`); `None` when they are built on the searched prior.
pub fn network_prior(config: &SelfplayConfig) -> Option<NetworkPrior> {
    let search = &config.search;
    let weight = search.leaf_quiescence;
    (search.gumbel.target_prior == xq_mcts::TargetPrior::Network).then(|| {
        NetworkPrior::new(move |pos, moves, searched| {
            xq_eval::tactics::network_prior(pos, moves, searched, weight)
        })
    })
}

/// Loads the network the run's pointer names through `backend`.
fn load_accepted(
    run: &RunDir,
    backend: &dyn NetworkBackend,
    options: &LoadOptions,
) -> Result<Box<dyn Evaluator>> {
    let model = run
        .accepted()?
        .with_context(|| format!("{} names no network", run.pointer_path().display()))?;
    let path = run.model_path(&model);
    backend
        .load(&path, options)
        .with_context(|| format!("cannot load the accepted network {}", path.display()))
}

/// The run's accepted network (the uniform evaluator when there is none yet: a
/// standalone worker started before the run has one) and a watcher of the pointer that swaps in each newly accepted
/// network, each loaded as `config` says ([`evaluator_options`]) and searched with its
/// leaf quiescence. Every network of the session is loaded through the process's
/// backend ([`network_backend`]: `XQZ_BACKEND`, native on the CPU and libtorch with
/// CUDA by default), and the device the events name is its.
///
/// # Errors
/// If the pointer names a network that cannot be loaded, or `XQZ_BACKEND` names no
/// backend.
pub fn accepted_network(run: &RunDir, config: &SelfplayConfig) -> Result<Network> {
    let options = evaluator_options(config);
    let backend = network_backend()?;
    let weight = config.search.leaf_quiescence;
    let run_dir = run.clone();
    let pointer = run.pointer_path();
    let (evaluator, current): (Box<dyn Evaluator>, Option<u64>) = if pointer.is_file() {
        let current = content_hash(&pointer);
        (load_accepted(&run_dir, backend, &options)?, current)
    } else {
        (Box::new(UniformEvaluator), None)
    };
    let watcher = PointerWatcher::new(pointer, current, move |_: &Path| {
        load_accepted(&run_dir, backend, &options)
            .and_then(|ev| with_leaf_quiescence(ev, weight))
            .map_err(xq_selfplay::ModelError::new)
    });
    let device = backend.device_name(&options);
    Ok(Network {
        evaluator: with_leaf_quiescence(evaluator, weight)?,
        watcher: Box::new(watcher),
        device,
        inference: Box::new(move || backend.inference(&options)),
    })
}

/// Plays `session` with `network` into `run`: chunks, PGN records, a `selfplay` event
/// and TensorBoard points every minute and at the end, progress to `obs` (a
/// [`Task::Selfplay`], updated several times a second when `obs` is live, else every
/// [`Session::lines_every`]) and a warning for each network that could not be loaded.
///
/// # Errors
/// As `xq_selfplay::run`: a bad config, a failed evaluator, an unwritable run.
pub fn play(
    run: &RunDir,
    config: &SelfplayConfig,
    network: Network,
    session: Session,
    obs: &SharedObserver,
) -> Result<Summary> {
    let every = if obs.live() {
        LIVE_EVERY
    } else {
        session.lines_every
    };
    let observed = Arc::new(Observed {
        obs: obs.clone(),
        every,
        task: Mutex::new(Some(obs.begin(Task::Selfplay {
            games: session.games,
        }))),
        events: SelfplayEvents::new(
            run,
            &session.worker,
            &network.device,
            session.games_before,
            every,
        )
        .with_inference(network.inference),
    });
    let options = RunOptions {
        run_dir: Some(run.root().to_path_buf()),
        games: session.games,
        seed: session.seed,
        worker_id: Some(session.worker),
        stop: session.stop,
        interrupt: session.interrupt,
        deadline: session.deadline,
        observer: Some(observed.clone()),
        resign: session.resign,
        book: session.book,
        network_prior: network_prior(config),
    };
    let result = xq_selfplay::run(config, &options, network.evaluator, network.watcher);
    // The display ends with the session, not when the last handle goes.
    if let Ok(mut task) = observed.task.lock() {
        task.take();
    }
    Ok(result?)
}

/// One self-play phase of `xqz run` with the accepted network; says how many games
/// the deadline abandoned. Returns the phase's summary: its counters, and the
/// resignation calibration for the next phase.
///
/// # Errors
/// As [`accepted_network`] and [`play`].
pub fn phase(
    run: &RunDir,
    config: &SelfplayConfig,
    session: Session,
    obs: &SharedObserver,
) -> Result<Summary> {
    if session.wait_for_network && !wait_for_network(run, &session, obs) {
        return Ok(Summary {
            worker_id: session.worker,
            stats: Snapshot::default(),
            final_model: String::new(),
            resign: session
                .resign
                .unwrap_or_else(|| ResignCalibration::new(config)),
        });
    }
    let network = accepted_network(run, config)?;
    let summary = play(run, config, network, session, obs)?;
    if summary.stats.abandoned > 0 {
        obs.log(&format!(
            "selfplay: {} games in progress at the deadline abandoned",
            summary.stats.abandoned
        ));
    }
    Ok(summary)
}

/// How often [`wait_for_network`] looks for the accepted pointer.
const NETWORK_POLL: Duration = Duration::from_millis(200);

/// Waits until the run has an accepted network (its pointer exists); `false` when the
/// session was stopped, interrupted or ran out of time first. Logs once that it waits.
pub fn wait_for_network(run: &RunDir, session: &Session, obs: &SharedObserver) -> bool {
    let pointer = run.pointer_path();
    let mut said = false;
    while !pointer.is_file() {
        if session.ended() {
            return false;
        }
        if !said {
            obs.log("selfplay: waiting for the run's first accepted network");
            said = true;
        }
        std::thread::sleep(NETWORK_POLL);
    }
    true
}

/// What a session's worker reports, passed on: counters to the progress display and
/// the event log, networks that would not load to the warnings.
struct Observed {
    obs: SharedObserver,
    every: Duration,
    task: Mutex<Option<Box<dyn TaskProgress>>>,
    events: SelfplayEvents,
}

impl xq_selfplay::Observer for Observed {
    fn every(&self) -> Duration {
        self.every
    }

    fn progress(&self, s: &Snapshot) {
        if let Ok(mut task) = self.task.lock()
            && let Some(t) = task.as_mut()
        {
            t.update(Update::Selfplay(s));
        }
        self.events.observe(s, &self.obs);
    }

    fn finished(&self, s: &Snapshot) {
        self.events.finish(s, &self.obs);
    }

    fn model_skipped(&self, error: &str) {
        self.obs.warn(&format!(
            "selfplay: warning: cannot load the accepted model: {error}"
        ));
    }
}

/// The `selfplay` events and TensorBoard points of a session: one every
/// [`EVENT_EVERY`] from the worker's progress reports, and one with the final counters.
struct SelfplayEvents {
    run: RunDir,
    worker: String,
    /// Where the worker evaluates its networks.
    device: String,
    /// What runs them (`torch-bf16`, …), asked at each event.
    inference: Option<InferenceSource>,
    games_before: u64,
    /// The period of the progress reports (events are due when a report comes within
    /// half of it).
    every: Duration,
    state: Mutex<EventState>,
}

/// What a session's `selfplay` events ask for the backend and precision in use.
type InferenceSource = Box<dyn Fn() -> Option<xq_nn::Inference> + Send + Sync>;

struct EventState {
    tb: TbLogger,
    last: Instant,
    /// Games and positions of the last event.
    emitted: Option<(u64, u64)>,
    /// Wall time and evaluator time at the last event, for the recent busy share.
    busy_mark: (Duration, Duration),
}

impl SelfplayEvents {
    fn new(
        run: &RunDir,
        worker: &str,
        device: &str,
        games_before: u64,
        every: Duration,
    ) -> SelfplayEvents {
        SelfplayEvents {
            run: run.clone(),
            worker: worker.to_owned(),
            device: device.to_owned(),
            inference: None,
            games_before,
            every,
            state: Mutex::new(EventState {
                tb: TbLogger::new(run.selfplay_logs_dir(worker)),
                last: Instant::now(),
                emitted: None,
                busy_mark: (Duration::ZERO, Duration::ZERO),
            }),
        }
    }

    /// These events name the backend and precision `inference` reports.
    fn with_inference(mut self, inference: InferenceSource) -> SelfplayEvents {
        self.inference = Some(inference);
        self
    }

    fn observe(&self, s: &Snapshot, obs: &SharedObserver) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        if st.last.elapsed() + self.every / 2 >= EVENT_EVERY {
            self.emit(&mut st, s, obs);
        }
    }

    /// The final event, unless the last one already holds these counters.
    fn finish(&self, s: &Snapshot, obs: &SharedObserver) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        if st.emitted != Some((s.games, s.positions)) {
            self.emit(&mut st, s, obs);
        }
    }

    fn emit(&self, st: &mut EventState, s: &Snapshot, obs: &SharedObserver) {
        st.last = Instant::now();
        st.emitted = Some((s.games, s.positions));
        let (wall, busy) = st.busy_mark;
        let recent = busy_share(
            s.eval_busy.saturating_sub(busy),
            s.elapsed.saturating_sub(wall),
        );
        st.busy_mark = (s.elapsed, s.eval_busy);
        if let Err(e) = self.run.record(selfplay_event(
            &self.worker,
            &self.device,
            self.inference.as_ref().and_then(|f| f()),
            s,
            recent,
        )) {
            obs.warn(&format!("selfplay: warning: {e:#}"));
        }
        log_tensorboard(&mut st.tb, s, self.games_before + s.games, obs);
    }
}

/// The share of `wall` the evaluator was busy for `busy` of; `None` for no time.
fn busy_share(busy: Duration, wall: Duration) -> Option<f64> {
    (!wall.is_zero()).then(|| (busy.as_secs_f64() / wall.as_secs_f64()).min(1.0))
}

/// The fields of a `selfplay` event (ARCHITECTURE.md, "The run directory"): the
/// worker's counters so far (cumulative for that worker), and `recent`, the evaluator's
/// busy share since its previous event.
fn selfplay_event(
    worker: &str,
    device: &str,
    inference: Option<xq_nn::Inference>,
    s: &Snapshot,
    recent: Option<f64>,
) -> Event {
    Event::Selfplay(SelfplayEvent {
        worker: worker.to_owned(),
        seconds: s.elapsed.as_secs_f64(),
        games: s.games,
        positions: s.positions,
        records: s.records,
        average_length: if s.games > 0 {
            s.positions as f64 / s.games as f64
        } else {
            0.0
        },
        red_wins: s.red_wins,
        draws: s.draws,
        black_wins: s.black_wins,
        resignations: s.resignations,
        games_per_second: s.games_per_sec(),
        positions_per_second: s.positions_per_sec(),
        average_batch: s.avg_batch(),
        cache_hit_rate: s.cache_hit_rate(),
        evaluator_busy: s.evaluator_busy(),
        evaluator_busy_recent: recent,
        evaluations: s.evaluated,
        evaluations_per_second: s.evals_per_sec(),
        no_resign_games: s.no_resign_games,
        would_resign: s.would_resign,
        resign_false_positives: s.false_positives,
        resign_false_positive_rate: s.resign_false_positive_rate(),
        decided_positions: s.decided_positions,
        resign_threshold: Some(s.resign_threshold),
        model_swaps: s.model_swaps,
        held_out_games: s.held_out,
        device: Some(device.to_owned()),
        backend: inference.map(|i| i.to_string()),
    })
}

/// Writes a worker's counters as TensorBoard scalars (`selfplay/...`) at `step`
/// (games so far): game length, result split, resignation false positives, the
/// threshold in force and the share of positions soft resignation held decided, speed
/// and batching. A logging problem is a warning (once: the logger stops), never fatal.
fn log_tensorboard(tb: &mut TbLogger, s: &Snapshot, step: u64, obs: &SharedObserver) {
    #[allow(clippy::cast_precision_loss)]
    let share = |n: u64| {
        if s.games > 0 {
            n as f64 / s.games as f64
        } else {
            0.0
        }
    };
    #[allow(clippy::cast_precision_loss)]
    let length = if s.games > 0 {
        s.positions as f64 / s.games as f64
    } else {
        0.0
    };
    #[allow(clippy::cast_precision_loss)]
    let decided_share = if s.positions > 0 {
        s.decided_positions as f64 / s.positions as f64
    } else {
        0.0
    };
    let scalars = [
        ("selfplay/average_game_length", length),
        ("selfplay/red_win_share", share(s.red_wins)),
        ("selfplay/draw_share", share(s.draws)),
        ("selfplay/black_win_share", share(s.black_wins)),
        (
            "selfplay/resign_false_positive_rate",
            s.resign_false_positive_rate(),
        ),
        ("selfplay/resign_threshold", f64::from(s.resign_threshold)),
        ("selfplay/decided_position_share", decided_share),
        ("selfplay/positions_per_second", s.positions_per_sec()),
        ("selfplay/average_batch", s.avg_batch()),
        ("selfplay/cache_hit_rate", s.cache_hit_rate()),
        ("selfplay/evaluator_busy", s.evaluator_busy()),
    ];
    for (tag, value) in scalars {
        if let Err(e) = tb.scalar(tag, value, step) {
            obs.warn(&format!("selfplay: warning: TensorBoard: {e}"));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::testing::Recorder;

    #[test]
    fn the_book_is_the_pretraining_games_it_does_not_hold_out() {
        let dir = tempfile::tempdir().unwrap();
        let start = xq_core::Position::startpos();
        let mut text = String::new();
        for &red in start.legal_moves().iter().take(6) {
            let mut after = start.clone();
            after.play_unchecked(red);
            for &black in after.legal_moves().iter().take(4) {
                text.push_str(&format!("[Event \"t\"]\n\n1. {red} {black} *\n\n"));
            }
        }
        let pgn = dir.path().join("games.pgn");
        std::fs::write(&pgn, &text).unwrap();
        let config = |plies: u32| {
            RunConfig::parse(&format!(
                "[selfplay]\nbook_plies = {plies}\n[train.pretrain]\npgn = [{:?}]\n\
                 steps = 10\nheld_out_permille = 500\n",
                pgn.display().to_string()
            ))
            .unwrap()
        };
        let opened = book(&config(2)).unwrap().unwrap();
        // Pre-training's own split of the same games.
        let (games, _) = xq_data::read_pgn_files(std::slice::from_ref(&pgn)).unwrap();
        let meta = xq_data::ChunkMeta {
            encoding_version: 0,
            policy_index_version: 0,
            creator: "test".into(),
            seed: 0,
        };
        let split = xq_data::SplitConfig {
            held_out_permille: 500,
            salt: 0,
        };
        let data = xq_data::games_to_chunks(&games, &meta, &split).unwrap();
        assert!(!data.held_out.games.is_empty() && !data.train.games.is_empty());
        assert_eq!(opened.len(), data.train.games.len());
        for seed in 0..50 {
            let moves: Vec<_> = opened.opening(seed, 2).moves().collect();
            assert!(
                !data.held_out.games.iter().any(|g| g.moves == moves),
                "seed {seed}: a held-out game {moves:?}"
            );
        }
        assert!(
            book(&config(0)).unwrap().is_none(),
            "book_plies = 0: no book"
        );
    }

    #[test]
    fn self_play_evaluates_with_one_copy_of_the_network_per_usable_core_by_default() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let default = evaluator_options(&SelfplayConfig::default());
        assert_eq!((default.workers, default.threads), (cores.min(256), 1));
        let small_batches = evaluator_options(&SelfplayConfig {
            max_batch: 1,
            ..SelfplayConfig::default()
        });
        assert_eq!(small_batches.workers, 1);
        let set = evaluator_options(&SelfplayConfig {
            eval_workers: 3,
            threads: 2,
            ..SelfplayConfig::default()
        });
        assert_eq!((set.workers, set.threads), (3, 2));
        // A copy beyond the batch size would never get a part of a batch.
        let capped = evaluator_options(&SelfplayConfig {
            eval_workers: 8,
            max_batch: 2,
            ..SelfplayConfig::default()
        });
        assert_eq!(capped.workers, 2);
    }

    #[test]
    fn the_recent_busy_share_is_the_stretch_since_the_last_mark() {
        let ms = Duration::from_millis;
        assert_eq!(busy_share(ms(300), ms(1000)), Some(0.3));
        assert_eq!(busy_share(ms(10), ms(5)), Some(1.0), "capped at 1");
        assert_eq!(busy_share(ms(0), ms(0)), None);
    }

    /// Two games at a time, `max_plies` plies, 4 visits a full search and 2 a cheap one.
    fn small_config(max_plies: u32) -> SelfplayConfig {
        let mut config = SelfplayConfig {
            parallel_games: 2,
            max_plies,
            ..SelfplayConfig::default()
        };
        config.search.playout_cap.full_visits = 4;
        config.search.playout_cap.cheap_visits = 2;
        config
    }

    /// Two games of `config` with `network` into `run`, unobserved.
    fn play_two_games(run: &RunDir, config: &SelfplayConfig, network: Network) -> Summary {
        let (_recorder, obs) = Recorder::new(false);
        let session = Session {
            games: Some(2),
            ..Session::phase(3, 0)
        };
        play(run, config, network, session, &obs).unwrap()
    }

    #[test]
    fn a_session_reports_to_its_task_and_writes_events_and_tensorboard() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let config = small_config(8);
        let (recorder, obs) = Recorder::new(true);
        let session = Session {
            games: Some(2),
            ..Session::phase(7, 10)
        };
        let worker = session.worker.clone();
        let summary = play(
            &run,
            &config,
            accepted_network(&run, &config).unwrap(),
            session,
            &obs,
        )
        .unwrap();
        assert_eq!(summary.stats.games, 2);
        let lines = recorder.lines();
        assert_eq!(lines.first().unwrap(), "begin Selfplay { games: Some(2) }");
        assert_eq!(lines.last().unwrap(), "end Selfplay { games: Some(2) }");
        // The final counters are an event of the worker's.
        let log = run.events().unwrap();
        let last = log
            .events()
            .filter_map(|e| match e {
                Event::Selfplay(s) => Some(s),
                _ => None,
            })
            .next_back()
            .unwrap();
        assert_eq!((last.worker.as_str(), last.games), (worker.as_str(), 2));
        // The evaluator's work: evaluations (a move's search makes many) and its busy
        // share over the stretch since the previous event.
        assert!(last.evaluations > last.positions, "{last:?}");
        assert!(last.evaluations_per_second > 0.0, "{last:?}");
        assert!(
            last.evaluator_busy_recent
                .is_some_and(|b| (0.0..=1.0).contains(&b))
        );
        assert_eq!(last.resign_threshold, Some(config.resign_threshold));
        assert!(
            run.selfplay_logs_dir(&worker).is_dir(),
            "no TensorBoard points"
        );
    }

    #[test]
    fn self_play_searches_with_the_configured_leaf_quiescence_or_plain_without() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let mut config = small_config(6);
        assert_eq!(
            accepted_network(&run, &config).unwrap().evaluator.name(),
            "uniform"
        );
        config.search.leaf_quiescence = 0.5;
        let network = accepted_network(&run, &config).unwrap();
        assert_eq!(network.evaluator.name(), "uniform+quiescence(0.5)");
        let summary = play_two_games(&run, &config, network);
        assert_eq!(summary.stats.games, 2);
        assert_eq!(summary.final_model, "uniform+quiescence(0.5)");
    }

    #[test]
    fn targets_on_the_network_prior_undo_self_plays_own_blend() {
        let mut config = small_config(6);
        config.search.algorithm = xq_mcts::RootAlgorithm::Gumbel;
        config.search.leaf_quiescence = 0.5;
        assert!(
            network_prior(&config).is_none(),
            "searched prior by default"
        );
        config.search.gumbel.target_prior = xq_mcts::TargetPrior::Network;
        // The hook inverts the blend self-play's evaluator applies, at the config's
        // weight: a free chariot to take, so the blend moved prior onto it.
        let pos = xq_core::Position::from_fen("r3k4/9/9/p8/4r4/9/9/9/9/R2KR4 w - - 0 1").unwrap();
        let moves = pos.legal_moves();
        let history = [pos.clone()];
        let input = xq_nn::EvalInput {
            history: &history,
            moves: &moves,
        };
        let mut net = xq_nn::RandomEvaluator::new(4);
        let own = net.evaluate(&[input]).unwrap().remove(0).policy;
        let mut blend = with_leaf_quiescence(Box::new(net), 0.5).unwrap();
        let searched = blend.evaluate(&[input]).unwrap().remove(0).policy;
        assert_ne!(searched, own);
        let back = network_prior(&config).unwrap().of(&pos, &moves, &searched);
        for (a, b) in back.iter().zip(&own) {
            assert!((a - b).abs() < 1e-5, "{back:?} vs {own:?}");
        }
        // A whole self-play session records targets with it.
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let network = accepted_network(&run, &config).unwrap();
        let summary = play_two_games(&run, &config, network);
        assert_eq!(summary.stats.games, 2);
    }

    #[test]
    fn a_live_observer_is_told_often_and_one_that_prints_lines_once_a_line() {
        assert!(LIVE_EVERY < Duration::from_secs(1));
        assert!(Session::worker(None).lines_every < EVENT_EVERY);
        let (s1, s2) = (Session::worker(None), Session::worker(Some(5)));
        assert_ne!(s1.worker, s2.worker);
        assert_eq!(s2.seed, 5);
        assert_eq!(s1.seed, xq_core::hash::fnv1a(s1.worker.as_bytes()));
        assert!(Session::phase(1, 0).worker.starts_with("run-"));
    }

    #[test]
    fn selfplay_events_come_periodically_and_once_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let (recorder, obs) = Recorder::new(false);
        let events = |every, last| {
            let e = SelfplayEvents::new(&run, "w", "cpu", 0, every);
            e.state.lock().unwrap().last = last;
            e
        };
        let now = Instant::now();
        let a_minute_ago = now.checked_sub(EVENT_EVERY).unwrap();
        let snap = |games| Snapshot {
            games,
            positions: 10 * games,
            ..Snapshot::default()
        };
        let selfplay = || -> Vec<SelfplayEvent> {
            let log = run.events().unwrap();
            log.events()
                .filter_map(|e| match e {
                    Event::Selfplay(s) => Some(s.clone()),
                    _ => None,
                })
                .collect()
        };
        let count = || selfplay().len();
        // Live: reports come often; events only every minute, and at the end.
        let e = events(LIVE_EVERY, now);
        e.observe(&snap(1), &obs);
        e.observe(&snap(2), &obs);
        assert_eq!(count(), 0);
        e.finish(&snap(3), &obs);
        assert_eq!(count(), 1);
        // Lines every 30 s: the report a minute after the last event is one; the end
        // is not written twice.
        let e = events(Duration::from_secs(30), a_minute_ago);
        e.observe(&snap(4), &obs);
        assert_eq!(count(), 2);
        e.finish(&snap(4), &obs);
        assert_eq!(count(), 2);
        assert_eq!(selfplay().pop().unwrap().games, 4);
        assert!(recorder.lines().is_empty(), "{:?}", recorder.lines());
    }

    #[test]
    fn selfplay_events_name_the_backend_in_use_when_they_are_written() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let (_recorder, obs) = Recorder::new(false);
        let chosen = Arc::new(Mutex::new(None));
        let source = chosen.clone();
        let e = SelfplayEvents::new(&run, "w", "cpu", 0, LIVE_EVERY)
            .with_inference(Box::new(move || *source.lock().unwrap()));
        let snap = |games| Snapshot {
            games,
            positions: 10 * games,
            ..Snapshot::default()
        };
        // Before the first network is loaded the choice is not made: no field.
        e.finish(&snap(1), &obs);
        *chosen.lock().unwrap() = Some(xq_nn::Inference::TORCH_BF16);
        e.finish(&snap(2), &obs);
        let backends: Vec<Option<String>> = run
            .events()
            .unwrap()
            .events()
            .filter_map(|e| match e {
                Event::Selfplay(s) => Some(s.backend.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(backends, [None, Some("torch-bf16".to_owned())]);
    }
}
