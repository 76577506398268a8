//! The worker: search threads stepping groups of games, the evaluation server on the
//! calling thread, a writer thread, a model watcher and the caller's [`Observer`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use xq_core::Color;
use xq_data::{Chunk, ChunkMeta, ChunkWriter, NewRecord, SplitConfig, game_hash, quantize_policy};
use xq_mcts::SearchError;
use xq_nn::encode::EncoderConfig;
use xq_nn::{EvalError, Evaluation, Evaluator};

use crate::book::Book;
use crate::cache::{EvalCache, eval_key};
use crate::config::SelfplayConfig;
use crate::game::{
    FinishedGame, GameState, NetworkPrior, Step, Termination, game_seed, no_network_prior,
};
use crate::model::ModelSource;
use crate::pgn::{PgnContext, game_pgn, today};
use crate::resign::{Calibrator, ResignCalibration};
use crate::server::{Request, ServerShared, ToGroup, ToServer, copies, serve, watch_models};
use crate::stats::{Counters, Observer, Snapshot};

/// Why a self-play run stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum SelfplayError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("search failed: {0}")]
    Search(#[from] SearchError),
    #[error("evaluator failed: {0}")]
    Eval(#[from] EvalError),
    #[error(transparent)]
    Writer(#[from] xq_data::WriterError),
    #[error("cannot write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("bad training record: {0}")]
    Record(#[from] xq_data::RecordError),
    #[error("a worker thread panicked")]
    Panic,
}

/// How to run (besides the [`SelfplayConfig`]).
#[derive(Clone, Default)]
pub struct RunOptions {
    /// The run directory (chunks to `data/`, those of held-out games to
    /// `data/held-out/`, PGN to `games/`); `None` writes nothing (benchmarks).
    pub run_dir: Option<PathBuf>,
    /// Games to play; `None` plays until `stop` is set.
    pub games: Option<u64>,
    /// Seeds every game (game `i` gets a seed derived from this and `i`).
    pub seed: u64,
    /// The worker id (file name prefix); `None` makes a unique one ([`worker_id`]).
    pub worker_id: Option<String>,
    /// When set, no new game starts; games in progress are finished and written.
    pub stop: Option<Arc<AtomicBool>>,
    /// When the run must be over (a training run's budget): games still in progress
    /// then are abandoned, unwritten (counted in [`Snapshot::abandoned`]). An unfinished
    /// game has no result to train the value head on, and finishing it could take
    /// minutes of searches.
    pub deadline: Option<Instant>,
    /// When set (a scheduler's SIGTERM: `scancel`, pre-emption), the run ends as at
    /// the deadline: games in progress are abandoned and counted, every finished game
    /// is written. Unlike `stop`, it does not wait for the games in progress, which
    /// could take longer than the scheduler's grace period before SIGKILL.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Sees the counters as the games are played, and the networks skipped.
    pub observer: Option<Arc<dyn Observer>>,
    /// The resignation calibration a previous run of this worker ended with
    /// ([`Summary::resign`]), carried on so that the window of played-out games spans
    /// runs (a sync `xqz run`'s self-play phases); `None` starts from the config's.
    pub resign: Option<ResignCalibration>,
    /// The opening book games start from ([`SelfplayConfig::book_plies`]); `None`
    /// starts every game from the starting position.
    pub book: Option<Arc<Book>>,
    /// The inverse of the evaluator's blend, which Gumbel targets built on the
    /// network's prior need (`[selfplay.search.gumbel] target_prior = "network"`); a run
    /// whose config asks for it without one is refused.
    pub network_prior: Option<NetworkPrior>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("run_dir", &self.run_dir)
            .field("games", &self.games)
            .field("seed", &self.seed)
            .field("worker_id", &self.worker_id)
            .field("deadline", &self.deadline)
            .field("resign", &self.resign)
            .field("book", &self.book.as_ref().map(|b| b.len()))
            .field("network_prior", &self.network_prior.is_some())
            .finish_non_exhaustive()
    }
}

/// What a finished run did.
#[derive(Debug, Clone)]
pub struct Summary {
    pub worker_id: String,
    pub stats: Snapshot,
    /// The name of the evaluator that played the last game.
    pub final_model: String,
    /// The resignation calibration at the end, every finished game in it: for the
    /// next run ([`RunOptions::resign`]).
    pub resign: ResignCalibration,
}

/// A worker id unique across machines: `<host>-<pid>-<random>`, restricted to the
/// characters file names allow everywhere.
pub fn worker_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    let host: String = hostname()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!(
        "{}-{}-{:06x}",
        if host.is_empty() { "host" } else { &host },
        std::process::id(),
        h.finish() & 0xff_ffff
    )
}

/// This machine's name (Linux `/proc`, else `$HOSTNAME`, else `host`).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "host".into())
}

/// Plays self-play games with `evaluator` (moved to the calling thread's evaluation
/// server) until `options.games` are done or `options.stop` is set, picking up new
/// networks from `models` at move boundaries.
///
/// # Errors
/// A bad configuration, an evaluator failure, or an output that cannot be written
/// (unwritable run directory, full disk); games in progress are then abandoned, and
/// every file already written stays complete.
pub fn run(
    config: &SelfplayConfig,
    options: &RunOptions,
    mut evaluator: Box<dyn Evaluator>,
    models: Box<dyn ModelSource>,
) -> Result<Summary, SelfplayError> {
    config.validate()?;
    if config.search.gumbel.target_prior == xq_mcts::TargetPrior::Network
        && options.network_prior.is_none()
    {
        return Err(no_network_prior().into());
    }
    let worker = options.worker_id.clone().unwrap_or_else(worker_id);
    let output = match &options.run_dir {
        Some(dir) => Some(Output::open(dir, &worker, config, options)?),
        None => None,
    };

    let counters = Counters::default();
    // A run's start is a generation boundary: the threshold is calibrated from the
    // carried window here, and again at each network swap (the server's).
    let resign = Calibrator::new(
        options
            .resign
            .clone()
            .unwrap_or_else(|| ResignCalibration::new(config)),
    );
    let start = Instant::now();
    let threads = config.search_threads.min(config.parallel_games);
    let servers = config.servers.clamp(1, threads);
    let model_name = evaluator.name();
    let encoder = evaluator.raw().map(|raw| raw.encoder());
    let evaluators = copies(evaluator, servers).map_err(|e| {
        SelfplayError::Eval(EvalError::BadInput(format!("servers = {servers}: {e}")))
    })?;
    counters.servers.store(servers as u64, Relaxed);
    // Each server has its own cache: a server that has swapped in a new network must
    // not read evaluations that another server's games made with the old one.
    let caches: Vec<Mutex<EvalCache>> = (0..servers)
        .map(|_| Mutex::new(EvalCache::new(config.cache_size / servers)))
        .collect();
    let swap_pending: Vec<AtomicBool> = (0..servers).map(|_| AtomicBool::new(false)).collect();
    let abort = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let never = AtomicBool::new(false);
    let stop: &AtomicBool = options.stop.as_deref().unwrap_or(&never);
    let interrupt: &AtomicBool = options.interrupt.as_deref().unwrap_or(&never);

    // Search thread g asks server g mod servers, as its group number g / servers there.
    let mut to_servers = Vec::with_capacity(servers);
    let mut server_rxs = Vec::with_capacity(servers);
    let mut model_txs = Vec::with_capacity(servers);
    let mut model_rxs = Vec::with_capacity(servers);
    for _ in 0..servers {
        let (tx, rx) = mpsc::channel::<ToServer>();
        to_servers.push(tx);
        server_rxs.push(rx);
        let (tx, rx) = mpsc::channel::<Box<dyn Evaluator>>();
        model_txs.push(tx);
        model_rxs.push(rx);
    }
    // Bounded: games that outrun the writer wait for it, so no backlog of finished
    // games is left to write when the run must end (a deadline bounds play, and the
    // writing must not add minutes after it).
    let (to_writer, writer_rx) = mpsc::sync_channel::<Box<FinishedGame>>(config.parallel_games);
    let mut group_txs: Vec<Vec<Sender<ToGroup>>> = (0..servers).map(|_| Vec::new()).collect();
    let mut group_rxs = Vec::with_capacity(threads);
    for g in 0..threads {
        let (tx, rx) = mpsc::channel::<ToGroup>();
        group_txs[g % servers].push(tx);
        group_rxs.push(rx);
    }

    let shared = Shared {
        config,
        counters: &counters,
        resign: &resign,
        caches: &caches,
        swap_pending: &swap_pending,
        abort: &abort,
        stop,
        interrupt,
        deadline: options.deadline,
        games: options.games,
        seed: options.seed,
        book: options.book.as_deref().filter(|_| config.book_plies > 0),
        network_prior: options.network_prior.clone(),
    };

    let (server_results, group_results, writer_result) = std::thread::scope(|s| {
        let writer = spawn_named(s, "xq-sp-writer".into(), || {
            let r = write_games(writer_rx, output, config, &counters);
            if r.is_err() {
                abort.store(true, Relaxed);
            }
            r
        });
        let groups: Vec<_> = group_rxs
            .into_iter()
            .enumerate()
            .map(|(g, rx)| {
                let tx = to_servers[g % servers].clone();
                let to_writer = to_writer.clone();
                let model = model_name.clone();
                let shared = &shared;
                spawn_named(s, format!("xq-sp-search-{g}"), move || {
                    let group = Group::new(g, threads, servers, shared, model, encoder);
                    let local = group.local;
                    let r = group.run(&tx, &rx, &to_writer);
                    if r.is_err() {
                        shared.abort.store(true, Relaxed);
                    }
                    let _ = tx.send(ToServer::Done { group: local });
                    r
                })
            })
            .collect();
        drop(to_servers);
        drop(to_writer);
        let poll = Duration::from_secs_f64(config.model_poll_seconds);
        let done = &done;
        let counters = &counters;
        let resign = &resign;
        let observer = options.observer.as_deref();
        spawn_named(s, "xq-sp-models".into(), move || {
            watch_models(models, model_txs, poll, done, observer);
        });
        if let Some(obs) = observer {
            spawn_named(s, "xq-sp-progress".into(), move || {
                let every = obs.every();
                let mut next = Instant::now() + every;
                while !done.load(Relaxed) {
                    std::thread::sleep(Duration::from_millis(50).min(every));
                    if Instant::now() >= next {
                        next = Instant::now() + every;
                        obs.progress(&counters.snapshot(start, resign.threshold()));
                    }
                }
            });
        }

        // Server 0 runs on this thread, the others on threads of their own.
        let mut parts = evaluators
            .into_iter()
            .zip(server_rxs)
            .zip(group_txs)
            .zip(model_rxs)
            .enumerate()
            .map(|(k, (((ev, rx), txs), models))| {
                let shared = ServerShared {
                    counters,
                    resign,
                    cache: &caches[k],
                    swap_pending: &swap_pending[k],
                    abort: &abort,
                    lead: k == 0,
                };
                move || {
                    serve(
                        ev,
                        rx,
                        txs,
                        models,
                        config.max_batch,
                        Duration::from_millis(config.batch_timeout_ms),
                        shared,
                    )
                }
            });
        let first = parts.next().expect("at least one server");
        let others: Vec<_> = parts
            .enumerate()
            .map(|(k, serve)| spawn_named(s, format!("xq-sp-server-{}", k + 1), serve))
            .collect();
        let mut server_results = vec![first()];
        server_results.extend(others.into_iter().map(|h| {
            h.join()
                .unwrap_or(Err(EvalError::Backend("a server panicked".into())))
        }));
        let group_results: Vec<_> = groups.into_iter().map(|h| h.join()).collect();
        let writer_result = writer.join();
        done.store(true, Relaxed);
        (server_results, group_results, writer_result)
    });

    let stats = counters.snapshot(start, resign.threshold());
    if let Some(obs) = &options.observer {
        obs.finished(&stats);
    }
    for r in server_results {
        r?;
    }
    for r in group_results {
        r.map_err(|_| SelfplayError::Panic)??;
    }
    let final_model = writer_result.map_err(|_| SelfplayError::Panic)??;
    Ok(Summary {
        worker_id: worker,
        stats,
        final_model: final_model.unwrap_or(model_name),
        resign: resign.into_calibration(),
    })
}

/// What every search thread reads.
#[derive(Debug)]
struct Shared<'a> {
    config: &'a SelfplayConfig,
    counters: &'a Counters,
    resign: &'a Calibrator,
    /// One cache and one swap flag a server.
    caches: &'a [Mutex<EvalCache>],
    swap_pending: &'a [AtomicBool],
    abort: &'a AtomicBool,
    stop: &'a AtomicBool,
    interrupt: &'a AtomicBool,
    deadline: Option<Instant>,
    games: Option<u64>,
    seed: u64,
    book: Option<&'a Book>,
    network_prior: Option<NetworkPrior>,
}

#[derive(Debug)]
enum SlotState {
    /// No game: start one if the budget allows.
    Empty,
    /// Between moves: the next search has not started (parks here for a swap).
    Ready(Box<GameState>),
    Searching(Box<GameState>),
    /// This slot's games are all played.
    Retired,
}

#[derive(Debug)]
struct Slot {
    /// Index among all the worker's slots: the slot plays games `global + k × slots`.
    global: u64,
    round: u64,
    state: SlotState,
}

/// Where a leaf's evaluation comes from in one round.
#[derive(Debug, Clone, Copy)]
enum Source {
    Cache(usize),
    Batch(usize),
}

/// One search thread's games.
struct Group<'a> {
    /// The server this thread asks, and its number among that server's threads.
    server: usize,
    local: usize,
    slots: Vec<Slot>,
    total_slots: u64,
    shared: &'a Shared<'a>,
    model: String,
    /// The network's encoding, in which this thread encodes its leaves; `None` while
    /// the evaluator is not a network (see the server module).
    encoder: Option<EncoderConfig>,
    request: Request,
}

impl<'a> Group<'a> {
    fn new(
        id: usize,
        threads: usize,
        servers: usize,
        shared: &'a Shared<'a>,
        model: String,
        encoder: Option<EncoderConfig>,
    ) -> Group<'a> {
        let total = shared.config.parallel_games;
        let slots = (id..total)
            .step_by(threads)
            .map(|global| Slot {
                global: global as u64,
                round: 0,
                state: SlotState::Empty,
            })
            .collect();
        Group {
            server: id % servers,
            local: id / servers,
            slots,
            total_slots: total as u64,
            shared,
            model,
            encoder,
            request: Request::default(),
        }
    }

    /// Steps the games until they are all played (or the run aborts).
    fn run(
        mut self,
        to_server: &Sender<ToServer>,
        rx: &Receiver<ToGroup>,
        to_writer: &SyncSender<Box<FinishedGame>>,
    ) -> Result<(), SelfplayError> {
        let config = self.shared.config;
        let k = config.leaves_per_game;
        let counters = self.shared.counters;
        let mut keys: Vec<u64> = Vec::new();
        let mut sources: Vec<Source> = Vec::new();
        let mut hits: Vec<Evaluation> = Vec::new();
        let mut batch_of: HashMap<u64, usize> = HashMap::new();
        let mut batch_keys: Vec<u64> = Vec::new();
        let mut with_leaves: Vec<usize> = Vec::new();
        // The misses of a round, as (slot, index in its search's pending leaves).
        let mut misses: Vec<(usize, usize)> = Vec::new();
        loop {
            if self.shared.abort.load(Relaxed) {
                return Ok(());
            }
            if self.shared.interrupt.load(Relaxed)
                || self.shared.deadline.is_some_and(|d| Instant::now() >= d)
            {
                self.abandon();
                return Ok(());
            }
            // 1. Move every game on until its search has leaves to evaluate.
            with_leaves.clear();
            let mut parked = 0usize;
            let mut live = 0usize;
            for i in 0..self.slots.len() {
                if self.advance_slot(i, k, to_writer)? {
                    with_leaves.push(i);
                }
                match self.slots[i].state {
                    SlotState::Ready(_) => {
                        parked += 1;
                        live += 1;
                    }
                    SlotState::Searching(_) => live += 1,
                    SlotState::Empty | SlotState::Retired => {}
                }
            }
            if with_leaves.is_empty() {
                if live == 0 {
                    return Ok(());
                }
                if parked > 0 {
                    // Everything waits at a move boundary for the model swap.
                    to_server
                        .send(ToServer::Park { group: self.local })
                        .map_err(|_| server_gone())?;
                    match rx.recv() {
                        Ok(ToGroup::Resume { model, encoder }) => {
                            self.model = model;
                            self.encoder = encoder;
                        }
                        Ok(ToGroup::Failed) | Err(_) => return Ok(()),
                        Ok(ToGroup::Evals { .. }) => return Err(protocol()),
                    }
                }
                continue;
            }

            // 2. Cache lookups; the misses (deduplicated) form the request, encoded
            //    here when the evaluator is a network.
            keys.clear();
            sources.clear();
            hits.clear();
            batch_of.clear();
            batch_keys.clear();
            misses.clear();
            self.request.reset(self.encoder);
            for &i in &with_leaves {
                let SlotState::Searching(g) = &self.slots[i].state else {
                    continue;
                };
                keys.extend(g.search.pending().iter().map(|r| eval_key(r.history())));
            }
            {
                let mut cache = self.shared.caches[self.server]
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let mut at = 0;
                for &i in &with_leaves {
                    let SlotState::Searching(g) = &self.slots[i].state else {
                        continue;
                    };
                    for (j, req) in g.search.pending().iter().enumerate() {
                        let key = keys[at];
                        at += 1;
                        if let Some(e) = cache.get(key, req.moves().len()) {
                            sources.push(Source::Cache(hits.len()));
                            hits.push(e.clone());
                        } else if let Some(&b) = batch_of.get(&key) {
                            sources.push(Source::Batch(b));
                        } else {
                            let b = misses.len();
                            misses.push((i, j));
                            batch_of.insert(key, b);
                            batch_keys.push(key);
                            sources.push(Source::Batch(b));
                        }
                    }
                }
            }
            // Encoding is the costly part of a miss: done after the cache's lock is
            // released, so that the other search threads' lookups do not wait for it.
            for &(i, j) in &misses {
                let SlotState::Searching(g) = &self.slots[i].state else {
                    continue;
                };
                self.request.push(&g.search.pending()[j])?;
            }
            let n = self.request.n;
            counters.leaves.fetch_add(sources.len() as u64, Relaxed);
            counters
                .cache_hits
                .fetch_add((sources.len() - n) as u64, Relaxed);

            // 3. Evaluate the misses on the server; read a network's answer here.
            let batch: Vec<Evaluation> = if n == 0 {
                Vec::new()
            } else {
                to_server
                    .send(ToServer::Eval {
                        group: self.local,
                        request: std::mem::take(&mut self.request),
                    })
                    .map_err(|_| server_gone())?;
                match rx.recv() {
                    Ok(ToGroup::Evals { request }) => {
                        self.request = request;
                        let evals = self.request.evaluations()?;
                        if evals.len() != n {
                            return Err(protocol());
                        }
                        let mut cache = self.shared.caches[self.server]
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner);
                        for (key, e) in batch_keys.iter().zip(&evals) {
                            cache.insert(*key, e.clone());
                        }
                        evals
                    }
                    Ok(ToGroup::Failed) | Err(_) => return Ok(()),
                    Ok(ToGroup::Resume { .. }) => return Err(protocol()),
                }
            };

            // 4. Hand each game its own evaluations, in its request order.
            let mut at = 0;
            let mut evals: Vec<Evaluation> = Vec::new();
            for &i in &with_leaves {
                let SlotState::Searching(g) = &mut self.slots[i].state else {
                    continue;
                };
                let m = g.search.pending().len();
                evals.clear();
                for src in &sources[at..at + m] {
                    evals.push(match *src {
                        Source::Cache(h) => hits[h].clone(),
                        Source::Batch(b) => batch[b].clone(),
                    });
                }
                at += m;
                g.search.apply(&evals)?;
            }
        }
    }

    /// Drops the games in progress at the deadline or an interrupt, counting them.
    fn abandon(&mut self) {
        for slot in &mut self.slots {
            if let SlotState::Ready(_) | SlotState::Searching(_) = slot.state {
                self.shared.counters.abandoned.fetch_add(1, Relaxed);
            }
            slot.state = SlotState::Retired;
        }
    }

    /// Moves slot `i` on: finishes searches, plays moves, ends and starts games, until
    /// its search has pending leaves (returns true) or it waits or is retired.
    fn advance_slot(
        &mut self,
        i: usize,
        k: usize,
        to_writer: &SyncSender<Box<FinishedGame>>,
    ) -> Result<bool, SelfplayError> {
        let config = self.shared.config;
        let counters = self.shared.counters;
        loop {
            let slot = &mut self.slots[i];
            match std::mem::replace(&mut slot.state, SlotState::Retired) {
                SlotState::Retired => return Ok(false),
                SlotState::Empty => {
                    let id = slot.global + slot.round * self.total_slots;
                    let over_budget = self.shared.games.is_some_and(|n| id >= n);
                    if over_budget || self.shared.stop.load(Relaxed) {
                        slot.state = SlotState::Retired;
                        return Ok(false);
                    }
                    slot.round += 1;
                    let seed = self.shared.seed;
                    let g = match self.shared.book {
                        Some(book) => GameState::from_game(
                            config,
                            id,
                            seed,
                            self.model.clone(),
                            book.opening(game_seed(seed, id), config.book_plies),
                        )?,
                        None => GameState::new(config, id, seed, self.model.clone())?,
                    }
                    .with_resign_threshold(self.shared.resign.threshold())
                    .with_network_prior(config, self.shared.network_prior.clone())?;
                    slot.state = SlotState::Ready(Box::new(g));
                }
                SlotState::Ready(mut g) => {
                    if self.shared.swap_pending[self.server].load(Relaxed) {
                        slot.state = SlotState::Ready(g);
                        return Ok(false);
                    }
                    g.start_search()?;
                    slot.state = SlotState::Searching(g);
                }
                SlotState::Searching(mut g) => {
                    if g.search.is_finished() {
                        let step = g.after_search(config)?;
                        counters.positions.fetch_add(1, Relaxed);
                        match step {
                            Step::Continue => slot.state = SlotState::Ready(g),
                            Step::Finished(f) => {
                                slot.state = SlotState::Empty;
                                count_game(counters, &f);
                                if let Some(sides) = f.resign_samples {
                                    self.shared.resign.game_finished(f.id, sides);
                                }
                                if to_writer.send(f).is_err() {
                                    // The writer stopped on an error it reports.
                                    self.shared.abort.store(true, Relaxed);
                                    return Ok(false);
                                }
                            }
                        }
                        continue;
                    }
                    let n = g.search.select_leaves(k).len();
                    slot.state = SlotState::Searching(g);
                    if n > 0 {
                        return Ok(true);
                    }
                    // Only terminal nodes were visited: descend again.
                }
            }
        }
    }
}

/// `scope.spawn` with a thread name (`top -H`, `/proc/PID/task/*/comm`, debuggers and
/// panic messages show it): each self-play thread's CPU time can be told apart on a
/// busy machine. Panics where `scope.spawn` would: the OS refused a thread.
fn spawn_named<'scope, 'env, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    name: String,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    std::thread::Builder::new()
        .name(name)
        .spawn_scoped(scope, f)
        .unwrap_or_else(|e| panic!("cannot start a self-play thread: {e}"))
}

fn server_gone() -> SelfplayError {
    SelfplayError::Eval(EvalError::Backend("the evaluation server stopped".into()))
}

fn protocol() -> SelfplayError {
    SelfplayError::Eval(EvalError::Backend(
        "evaluation server answered out of turn".into(),
    ))
}

fn count_game(c: &Counters, f: &FinishedGame) {
    c.games.fetch_add(1, Relaxed);
    c.records.fetch_add(f.records.len() as u64, Relaxed);
    c.decided_positions
        .fetch_add(u64::from(f.decided_searches), Relaxed);
    match f.termination.winner() {
        Some(Color::Red) => c.red_wins.fetch_add(1, Relaxed),
        Some(Color::Black) => c.black_wins.fetch_add(1, Relaxed),
        None => c.draws.fetch_add(1, Relaxed),
    };
    if matches!(f.termination, Termination::Resignation { .. }) {
        c.resignations.fetch_add(1, Relaxed);
    }
    if !f.resign_enabled {
        c.no_resign_games.fetch_add(1, Relaxed);
        if let Some(fp) = f.false_positive {
            c.would_resign.fetch_add(1, Relaxed);
            if fp {
                c.false_positives.fetch_add(1, Relaxed);
            }
        }
    }
}

/// The run directory's writers.
#[derive(Debug)]
struct Output {
    chunks: ChunkWriter,
    /// The held-out games' chunks (`None` when `held_out_permille` is 0): same worker
    /// name, another directory, so their files never collide with `chunks`'.
    held_out: Option<ChunkWriter>,
    games_dir: PathBuf,
    worker: String,
    host: String,
    next_pgn: u64,
    seed: u64,
}

impl Output {
    fn open(
        dir: &Path,
        worker: &str,
        config: &SelfplayConfig,
        options: &RunOptions,
    ) -> Result<Output, SelfplayError> {
        let chunks = ChunkWriter::new(dir.join(xq_data::layout::DATA_DIR), worker)?;
        let held_out = (config.held_out_permille > 0)
            .then(|| ChunkWriter::new(dir.join(xq_data::layout::HELD_OUT_DIR), worker))
            .transpose()?;
        let games_dir = dir.join(xq_data::layout::GAMES_DIR);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SelfplayError::Io { path, source }
        };
        std::fs::create_dir_all(&games_dir).map_err(io(&games_dir))?;
        let workers = dir.join(xq_data::layout::WORKERS_DIR);
        std::fs::create_dir_all(&workers).map_err(io(&workers))?;
        let host = hostname();
        let next_pgn = next_seq(&games_dir, worker, "pgn").map_err(io(&games_dir))?;
        // The worker's identity and settings, so its files can be traced and rerun.
        let record = WorkerRecord {
            worker: worker.to_owned(),
            host: host.clone(),
            pid: std::process::id(),
            seed: options.seed,
            games: options.games,
            started_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            selfplay: config.clone(),
        };
        let text = toml::to_string(&record).unwrap_or_default();
        let path = workers.join(format!("{worker}.toml"));
        xq_data::io::write_bytes_atomic(&path, text.as_bytes()).map_err(io(&path))?;
        Ok(Output {
            chunks,
            held_out,
            games_dir,
            worker: worker.to_owned(),
            host,
            next_pgn,
            seed: options.seed,
        })
    }

    /// Writes one chunk of the training games and one of the held-out games (each if
    /// any of its games has records), then one PGN file of them all: a kill between
    /// the two leaves a game in a chunk without its record, never the other way round.
    fn flush(
        &mut self,
        games: &[Box<FinishedGame>],
        config: &SelfplayConfig,
        counters: &Counters,
    ) -> Result<(), SelfplayError> {
        if games.is_empty() {
            return Ok(());
        }
        // The PGN records' split rule (salt 0): held out by content alone.
        let split = SplitConfig {
            held_out_permille: config.held_out_permille,
            salt: 0,
        };
        let (held_out, train): (Vec<&FinishedGame>, Vec<&FinishedGame>) = games
            .iter()
            .map(|g| &**g)
            .partition(|g| split.is_held_out(game_hash(&g.start, &g.moves)));
        write_chunk(&mut self.chunks, &train, &self.worker, self.seed, counters)?;
        // Without a writer no game is held out (held_out_permille is 0).
        if let Some(writer) = &mut self.held_out {
            write_chunk(writer, &held_out, &self.worker, self.seed, counters)?;
        }
        counters.held_out.fetch_add(held_out.len() as u64, Relaxed);
        let ctx = PgnContext {
            worker: &self.worker,
            host: &self.host,
            date: &today(),
            seed: self.seed,
            chinese_comments: config.pgn_chinese_comments,
        };
        let text: String = games.iter().map(|g| game_pgn(g, &ctx)).collect();
        let path = self
            .games_dir
            .join(format!("{}-{:08}.pgn", self.worker, self.next_pgn));
        xq_data::io::write_bytes_atomic(&path, text.as_bytes())
            .map_err(|source| SelfplayError::Io { path, source })?;
        self.next_pgn += 1;
        Ok(())
    }
}

/// Writes the chunk of `games` with `writer`, unless no game has records.
fn write_chunk(
    writer: &mut ChunkWriter,
    games: &[&FinishedGame],
    worker: &str,
    seed: u64,
    counters: &Counters,
) -> Result<(), SelfplayError> {
    let chunk = build_chunk(games, worker, seed)?;
    if !chunk.records.is_empty() {
        writer.write(&chunk)?;
        counters.chunks.fetch_add(1, Relaxed);
    }
    Ok(())
}

/// What `workers/<id>.toml` holds.
#[derive(Debug, serde::Serialize)]
struct WorkerRecord {
    worker: String,
    host: String,
    pid: u32,
    seed: u64,
    games: Option<u64>,
    started_unix: u64,
    version: String,
    selfplay: SelfplayConfig,
}

/// The next free sequence number of `<worker>-<digits>.<ext>` files in `dir`.
fn next_seq(dir: &Path, worker: &str, ext: &str) -> std::io::Result<u64> {
    let mut next = 0;
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let Some(name) = name.to_str() else { continue };
        let digits = name
            .strip_prefix(worker)
            .and_then(|r| r.strip_prefix('-'))
            .and_then(|r| r.strip_suffix(ext))
            .and_then(|r| r.strip_suffix('.'));
        if let Some(seq) = digits.and_then(|d| d.parse::<u64>().ok()) {
            next = next.max(seq + 1);
        }
    }
    Ok(next)
}

/// The chunk of some finished games: every full-search position with its policy
/// target, root value, the game's final result for the side to move and the plies
/// left. Games without full-search positions are left out of the chunk (they are in
/// the PGN records).
pub fn build_chunk(
    games: &[&FinishedGame],
    worker: &str,
    seed: u64,
) -> Result<Chunk, SelfplayError> {
    let models: Vec<&str> = {
        let mut m: Vec<&str> = games.iter().map(|g| g.model.as_str()).collect();
        m.dedup();
        m
    };
    let mut chunk = Chunk::new(ChunkMeta {
        encoding_version: xq_nn::ENCODING_VERSION,
        policy_index_version: xq_nn::POLICY_INDEX_VERSION,
        creator: format!(
            "xqz selfplay {} worker={worker} model={}",
            env!("CARGO_PKG_VERSION"),
            models.join(",")
        ),
        seed,
    });
    for g in games {
        if g.records.is_empty() {
            continue;
        }
        let outcome = g.target;
        let total = g.moves.len();
        let index = chunk.add_game(g.start.clone(), g.moves.clone())?;
        let first = g.start.turn();
        for r in &g.records {
            let policy = quantize_policy(&r.policy);
            if policy.is_empty() {
                continue;
            }
            let side = if r.ply % 2 == 0 { first } else { first.other() };
            chunk.add_record(
                NewRecord {
                    game: index,
                    ply: r.ply,
                    result: Some(outcome.for_side(side)),
                    plies_left: (total - usize::from(r.ply)).min(usize::from(u16::MAX)) as u16,
                    weight: 1.0,
                    root_wdl: r.root_wdl.map(|x| x.max(0.0)),
                },
                &policy,
            )?;
        }
    }
    Ok(chunk)
}

/// The writer thread: batches finished games into files. Returns the model name of
/// the last game written.
fn write_games(
    rx: Receiver<Box<FinishedGame>>,
    mut output: Option<Output>,
    config: &SelfplayConfig,
    counters: &Counters,
) -> Result<Option<String>, SelfplayError> {
    let mut pending: Vec<Box<FinishedGame>> = Vec::new();
    let mut last_model = None;
    for game in rx {
        last_model = Some(game.model.clone());
        pending.push(game);
        if pending.len() >= config.games_per_file {
            if let Some(out) = output.as_mut() {
                out.flush(&pending, config, counters)?;
            }
            pending.clear();
        }
    }
    if let Some(out) = output.as_mut() {
        out.flush(&pending, config, counters)?;
    }
    Ok(last_model)
}
