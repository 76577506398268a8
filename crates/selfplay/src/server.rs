//! The evaluation server: the one thread that owns the [`Evaluator`], collects leaf
//! requests from the search threads into batches and answers each thread with its own
//! evaluations.
//!
//! Batching rule: after the first request arrives the server keeps collecting until
//! the batch holds `max_batch` positions, or every search thread that is still running
//! has a request in (nobody else can add to it), or `batch_timeout_ms` has passed. A
//! batch larger than `max_batch` is split into several evaluator calls. Answers go back
//! in request order on the requesting thread's own channel, so a result can only reach
//! the thread (and, by position in its request, the game) that asked for it.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use xq_core::{Move, Position};
use xq_mcts::LeafRequest;
use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator};

use crate::cache::EvalCache;
use crate::resign::Calibrator;
use crate::stats::Counters;

/// A leaf request copied out of a search so it can travel to the server thread. The
/// buffers are recycled between rounds, so steady-state copying allocates nothing.
#[derive(Debug, Clone, Default)]
pub struct OwnedLeaf {
    pub history: Vec<Position>,
    pub moves: Vec<Move>,
}

impl OwnedLeaf {
    pub fn fill_from(&mut self, req: &LeafRequest) {
        self.history.clear();
        self.history.extend_from_slice(req.history());
        self.moves.clear();
        self.moves.extend_from_slice(req.moves());
    }

    pub fn input(&self) -> EvalInput<'_> {
        EvalInput {
            history: &self.history,
            moves: &self.moves,
        }
    }
}

/// From a search thread to the server.
#[derive(Debug)]
pub enum ToServer {
    /// Evaluate `leaves[..n]` (the rest of the vector is spare buffers).
    Eval {
        group: usize,
        leaves: Vec<OwnedLeaf>,
        n: usize,
    },
    /// Every game of this thread waits at a move boundary for a model swap.
    Park { group: usize },
    /// This thread has no more games.
    Done { group: usize },
}

/// From the server to one search thread.
#[derive(Debug)]
pub enum ToGroup {
    /// The evaluations of the request, in order, and its buffers back.
    Evals {
        leaves: Vec<OwnedLeaf>,
        evals: Vec<Evaluation>,
    },
    /// The model was swapped (or the swap is over); go on, naming the new model.
    Resume { model: String },
    /// The evaluator failed; stop.
    Failed,
}

/// What the server shares with the other threads.
#[derive(Debug)]
pub struct ServerShared<'a> {
    pub counters: &'a Counters,
    /// The resignation calibration: a swapped-in network starts a new generation.
    pub resign: &'a Calibrator,
    pub cache: &'a Mutex<EvalCache>,
    /// Set while a new evaluator waits for every game to reach a move boundary.
    pub swap_pending: &'a AtomicBool,
    /// Set on a fatal error anywhere: every thread stops.
    pub abort: &'a AtomicBool,
}

/// Runs the server until every search thread is done (or a fatal error). Returns the
/// evaluator's error, if one ended the run.
pub fn serve(
    mut evaluator: Box<dyn Evaluator>,
    rx: Receiver<ToServer>,
    groups: Vec<Sender<ToGroup>>,
    models: Receiver<Box<dyn Evaluator>>,
    max_batch: usize,
    timeout: Duration,
    shared: ServerShared<'_>,
) -> Result<(), EvalError> {
    let n_groups = groups.len();
    let mut alive = vec![true; n_groups];
    let mut parked = vec![false; n_groups];
    let mut next_model: Option<Box<dyn Evaluator>> = None;
    let mut queue: Vec<(usize, Vec<OwnedLeaf>, usize)> = Vec::new();
    let mut first_error = None;

    loop {
        // A new network from the watcher: ask the games to park.
        match models.try_recv() {
            Ok(ev) => {
                next_model = Some(ev);
                shared.swap_pending.store(true, Relaxed);
            }
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => {}
        }
        let waiting = |alive: &[bool], parked: &[bool]| {
            (0..n_groups).filter(|&g| alive[g] && !parked[g]).count()
        };
        if next_model.is_some() && waiting(&alive, &parked) == 0 {
            if let Some(ev) = next_model.take() {
                evaluator = ev;
            }
            shared
                .cache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
            shared.counters.model_swaps.fetch_add(1, Relaxed);
            // Every game is between moves: the games started from now on resign at
            // the threshold calibrated on the games finished so far.
            shared.resign.new_generation();
            shared.swap_pending.store(false, Relaxed);
            let model = evaluator.name();
            for g in 0..n_groups {
                if parked[g] {
                    parked[g] = false;
                    let _ = groups[g].send(ToGroup::Resume {
                        model: model.clone(),
                    });
                }
            }
        }
        if !alive.iter().any(|&a| a) || shared.abort.load(Relaxed) {
            break;
        }

        // Collect one batch.
        let mut total = 0usize;
        let mut deadline: Option<Instant> = None;
        loop {
            let msg = match deadline {
                None => match rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => {
                        alive.iter_mut().for_each(|a| *a = false);
                        break;
                    }
                },
                Some(d) => match rx.recv_timeout(d.saturating_duration_since(Instant::now())) {
                    Ok(m) => m,
                    Err(_) => break,
                },
            };
            match msg {
                ToServer::Eval { group, leaves, n } => {
                    total += n;
                    queue.push((group, leaves, n));
                    deadline.get_or_insert_with(|| Instant::now() + timeout);
                }
                ToServer::Park { group } => parked[group] = true,
                ToServer::Done { group } => alive[group] = false,
            }
            if !queue.is_empty() && (total >= max_batch || queue.len() >= waiting(&alive, &parked))
            {
                break;
            }
            if queue.is_empty() && (next_model.is_some() || !alive.iter().any(|&a| a)) {
                // Parks and exits are handled at the top of the loop.
                break;
            }
        }
        if queue.is_empty() {
            continue;
        }

        // Evaluate in calls of at most max_batch positions.
        let result = {
            let inputs: Vec<EvalInput<'_>> = queue
                .iter()
                .flat_map(|(_, leaves, n)| leaves[..*n].iter().map(OwnedLeaf::input))
                .collect();
            let mut out = Vec::with_capacity(inputs.len());
            let mut result = Ok(());
            for part in inputs.chunks(max_batch) {
                let t = Instant::now();
                let r = evaluator.evaluate(part);
                shared
                    .counters
                    .eval_nanos
                    .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
                shared.counters.batches.fetch_add(1, Relaxed);
                shared
                    .counters
                    .evaluated
                    .fetch_add(part.len() as u64, Relaxed);
                match r {
                    Ok(evals) if evals.len() == part.len() => out.extend(evals),
                    Ok(evals) => {
                        result = Err(EvalError::Backend(format!(
                            "{} returned {} evaluations for {} positions",
                            evaluator.name(),
                            evals.len(),
                            part.len()
                        )));
                        break;
                    }
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            }
            result.map(|()| out)
        };
        match result {
            Ok(evals) => {
                let mut evals = evals.into_iter();
                for (group, leaves, n) in queue.drain(..) {
                    let mine: Vec<Evaluation> = evals.by_ref().take(n).collect();
                    let _ = groups[group].send(ToGroup::Evals {
                        leaves,
                        evals: mine,
                    });
                }
            }
            Err(e) => {
                shared.abort.store(true, Relaxed);
                for (group, _, _) in queue.drain(..) {
                    let _ = groups[group].send(ToGroup::Failed);
                }
                first_error = Some(e);
                break;
            }
        }
    }
    // Dropping the senders wakes every thread still waiting for an answer.
    drop(groups);
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Polls a model source every `interval` until `done`, sending new evaluators to the
/// server. A network that cannot be loaded goes to `observer` and polling goes on.
pub fn watch_models(
    mut source: Box<dyn crate::model::ModelSource>,
    tx: Sender<Box<dyn Evaluator>>,
    interval: Duration,
    done: &AtomicBool,
    observer: Option<&dyn crate::stats::Observer>,
) {
    let mut next = Instant::now() + interval;
    while !done.load(Relaxed) {
        std::thread::sleep(Duration::from_millis(20).min(interval));
        if Instant::now() < next {
            continue;
        }
        next = Instant::now() + interval;
        match source.poll() {
            Ok(Some(ev)) => {
                if tx.send(ev).is_err() {
                    return;
                }
            }
            Ok(None) => {}
            Err(e) => {
                if let Some(o) = observer {
                    o.model_skipped(&format!("{e:#}"));
                }
            }
        }
    }
}
