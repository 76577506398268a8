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
//!
//! **Work off the server thread.** With a network ([`Evaluator::raw`]), the search
//! threads encode their leaves ([`PackedPlane`]s) before they ask, and read the legal
//! moves' policy off the logits after the answer: the server hands the network every
//! request's packed inputs as they are, one slice each, and copies each thread its rows
//! of the logits. That is KataGo's split of the work: the one thread that feeds the
//! network does nothing a search thread can do. Other evaluators (uniform, random) get
//! the leaves' histories and answer with evaluations.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use xq_core::{Move, Position};
use xq_mcts::LeafRequest;
use xq_nn::encode::{EncoderConfig, PackedPlane, encode_packed_into};
use xq_nn::policy::POLICY_SIZE;
use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator, RawEvaluator, RawOutputs};

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

    /// Keeps what reading an evaluation off the logits needs: the moves and the newest
    /// position (its side to move), not the history the encoding has already read.
    pub fn fill_newest_from(&mut self, req: &LeafRequest) {
        self.history.clear();
        self.history.extend(req.history().last().cloned());
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

/// One search thread's request and the buffers of its answer, recycled between rounds.
#[derive(Debug, Default)]
pub struct Request {
    /// The leaves: whole histories for an evaluator that is not a network; with a
    /// network, the newest positions and moves the answer is read with.
    pub leaves: Vec<OwnedLeaf>,
    /// Leaves in this request (the vectors hold spares beyond).
    pub n: usize,
    /// The encoding `packed` was made with; `None` when the leaves travel unencoded.
    pub encoder: Option<EncoderConfig>,
    /// The leaves' packed inputs (`n × planes`), encoded by the search thread.
    pub packed: Vec<PackedPlane>,
    /// The answer from a network: the leaves' policy logits (`n × POLICY_SIZE`) and
    /// value logits (`n × 3`).
    pub policy: Vec<f32>,
    pub value: Vec<f32>,
    /// The answer from any other evaluator.
    pub evals: Vec<Evaluation>,
}

impl Request {
    /// Adds `req` as leaf `self.n`: encoded with `encoder` when the evaluator is a
    /// network, its history copied otherwise.
    ///
    /// # Errors
    /// An encoding error (an empty history).
    pub fn push(&mut self, req: &LeafRequest) -> Result<(), EvalError> {
        let i = self.n;
        if self.leaves.len() == i {
            self.leaves.push(OwnedLeaf::default());
        }
        if let Some(encoder) = self.encoder {
            let planes = encoder.planes();
            self.packed.resize((i + 1) * planes, PackedPlane::ZERO);
            encode_packed_into(req.history(), &encoder, &mut self.packed[i * planes..])
                .map_err(|e| EvalError::BadInput(e.to_string()))?;
            self.leaves[i].fill_newest_from(req);
        } else {
            self.leaves[i].fill_from(req);
        }
        self.n += 1;
        Ok(())
    }

    /// Empties the request for a new round, encoding with `encoder` (`None`: unencoded).
    pub fn reset(&mut self, encoder: Option<EncoderConfig>) {
        self.n = 0;
        self.encoder = encoder;
        self.packed.clear();
        self.evals.clear();
    }

    /// The evaluations of the answer, in leaf order: read off the logits here, on the
    /// search thread that asked, when the server answered with logits.
    ///
    /// # Errors
    /// An answer of the wrong size, or logits that make no evaluation (NaN).
    pub fn evaluations(&mut self) -> Result<Vec<Evaluation>, EvalError> {
        if self.encoder.is_none() {
            if self.evals.len() != self.n {
                return Err(EvalError::Backend(format!(
                    "{} evaluations for {} leaves",
                    self.evals.len(),
                    self.n
                )));
            }
            return Ok(std::mem::take(&mut self.evals));
        }
        let out = RawOutputs {
            policy: &self.policy,
            value: &self.value,
        };
        if out.len() != self.n || out.policy.len() != self.n * POLICY_SIZE {
            return Err(EvalError::Backend(format!(
                "logits of {} positions for {} leaves",
                out.len(),
                self.n
            )));
        }
        self.leaves[..self.n]
            .iter()
            .enumerate()
            .map(|(i, leaf)| out.evaluation(i, &leaf.input()))
            .collect()
    }
}

/// From a search thread to the server.
#[derive(Debug)]
pub enum ToServer {
    /// Evaluate the request's leaves.
    Eval { group: usize, request: Request },
    /// Every game of this thread waits at a move boundary for a model swap.
    Park { group: usize },
    /// This thread has no more games.
    Done { group: usize },
}

/// From the server to one search thread.
#[derive(Debug)]
pub enum ToGroup {
    /// The request back, with its answer.
    Evals { request: Request },
    /// The model was swapped (or the swap is over); go on, naming the new model, and
    /// encode for it (`None`: it is not a network, send the leaves unencoded).
    Resume {
        model: String,
        encoder: Option<EncoderConfig>,
    },
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
    /// Whether this is the first of several servers (or the only one): it alone counts
    /// model swaps and starts the resignation calibration's generations.
    pub lead: bool,
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
    let mut queue: Vec<(usize, Request)> = Vec::new();
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
            if shared.lead {
                shared.counters.model_swaps.fetch_add(1, Relaxed);
                // Every game is between moves: the games started from now on resign
                // at the threshold calibrated on the games finished so far.
                shared.resign.new_generation();
            }
            shared.swap_pending.store(false, Relaxed);
            let model = evaluator.name();
            let encoder = evaluator.raw().map(|raw| raw.encoder());
            for g in 0..n_groups {
                if parked[g] {
                    parked[g] = false;
                    let _ = groups[g].send(ToGroup::Resume {
                        model: model.clone(),
                        encoder,
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
                ToServer::Eval { group, request } => {
                    total += request.n;
                    queue.push((group, request));
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
        let result = match evaluator.raw() {
            Some(raw) => evaluate_packed_requests(raw, &mut queue, max_batch, shared.counters),
            None => evaluate_requests(&mut *evaluator, &mut queue, max_batch, shared.counters),
        };
        match result {
            Ok(()) => {
                for (group, request) in queue.drain(..) {
                    let _ = groups[group].send(ToGroup::Evals { request });
                }
            }
            Err(e) => {
                shared.abort.store(true, Relaxed);
                for (group, _) in queue.drain(..) {
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

/// Counts one evaluator call of `positions` positions that started at `t`.
fn count_call(counters: &Counters, t: Instant, positions: usize) {
    counters
        .eval_nanos
        .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
    counters.batches.fetch_add(1, Relaxed);
    counters.evaluated.fetch_add(positions as u64, Relaxed);
}

/// Evaluates the queued requests' leaves with an evaluator that is not a network, in
/// calls of at most `max_batch`, into each request's `evals`.
fn evaluate_requests(
    evaluator: &mut dyn Evaluator,
    queue: &mut [(usize, Request)],
    max_batch: usize,
    counters: &Counters,
) -> Result<(), EvalError> {
    if let Some((_, r)) = queue.iter().find(|(_, r)| r.encoder.is_some()) {
        return Err(EvalError::BadInput(format!(
            "a search thread sent packed inputs for {:?}, but {} is not a network",
            r.encoder,
            evaluator.name()
        )));
    }
    let mut out = Vec::new();
    {
        let inputs: Vec<EvalInput<'_>> = queue
            .iter()
            .flat_map(|(_, r)| r.leaves[..r.n].iter().map(OwnedLeaf::input))
            .collect();
        for part in inputs.chunks(max_batch) {
            let t = Instant::now();
            let evals = evaluator.evaluate(part)?;
            count_call(counters, t, part.len());
            if evals.len() != part.len() {
                return Err(EvalError::Backend(format!(
                    "{} returned {} evaluations for {} positions",
                    evaluator.name(),
                    evals.len(),
                    part.len()
                )));
            }
            out.extend(evals);
        }
    }
    let mut evals = out.into_iter();
    for (_, r) in queue.iter_mut() {
        r.evals.clear();
        r.evals.extend(evals.by_ref().take(r.n));
    }
    Ok(())
}

/// Evaluates the queued requests' packed inputs with a network, in calls of at most
/// `max_batch` positions (a request may be cut between two calls), and copies each
/// request its rows of the logits.
fn evaluate_packed_requests(
    raw: &mut dyn RawEvaluator,
    queue: &mut [(usize, Request)],
    max_batch: usize,
    counters: &Counters,
) -> Result<(), EvalError> {
    let encoder = raw.encoder();
    if let Some((_, r)) = queue.iter().find(|(_, r)| r.encoder != Some(encoder)) {
        return Err(EvalError::BadInput(format!(
            "a search thread encoded for {:?}, but the network takes {encoder:?}",
            r.encoder
        )));
    }
    let planes = encoder.planes();
    // (request, first leaf, end leaf) segments, cut into calls of at most max_batch.
    let mut segments: Vec<(usize, usize, usize)> = Vec::new();
    let mut calls: Vec<std::ops::Range<usize>> = Vec::new();
    let (mut fill, mut first) = (0, 0);
    for (q, (_, r)) in queue.iter().enumerate() {
        let mut lo = 0;
        while lo < r.n {
            let take = (r.n - lo).min(max_batch - fill);
            segments.push((q, lo, lo + take));
            (fill, lo) = (fill + take, lo + take);
            if fill == max_batch {
                calls.push(first..segments.len());
                (fill, first) = (0, segments.len());
            }
        }
    }
    if first < segments.len() {
        calls.push(first..segments.len());
    }
    for (_, r) in queue.iter_mut() {
        r.policy.resize(r.n * POLICY_SIZE, 0.0);
        r.value.resize(r.n * 3, 0.0);
    }
    for call in calls {
        let segs = &segments[call];
        let positions: usize = segs.iter().map(|&(_, lo, hi)| hi - lo).sum();
        let t = Instant::now();
        let parts: Vec<&[PackedPlane]> = segs
            .iter()
            .map(|&(q, lo, hi)| &queue[q].1.packed[lo * planes..hi * planes])
            .collect();
        let out = raw.forward_packed(&parts)?;
        if out.len() != positions || out.policy.len() != positions * POLICY_SIZE {
            return Err(EvalError::Backend(format!(
                "the network returned logits of {} positions for {positions}",
                out.len()
            )));
        }
        let mut row = 0;
        for &(q, lo, hi) in segs {
            let r = &mut queue[q].1;
            let k = hi - lo;
            r.policy[lo * POLICY_SIZE..hi * POLICY_SIZE]
                .copy_from_slice(&out.policy[row * POLICY_SIZE..(row + k) * POLICY_SIZE]);
            r.value[lo * 3..hi * 3].copy_from_slice(&out.value[row * 3..(row + k) * 3]);
            row += k;
        }
        count_call(counters, t, positions);
    }
    Ok(())
}

/// Polls a model source every `interval` until `done`, sending each new evaluator to
/// the first server and a copy of it ([`Evaluator::fork`]) to each other one. A network
/// that cannot be loaded, or copied, goes to `observer` and polling goes on.
pub fn watch_models(
    mut source: Box<dyn crate::model::ModelSource>,
    servers: Vec<Sender<Box<dyn Evaluator>>>,
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
        let copies = source
            .poll()
            .map_err(|e| format!("{e:#}"))
            .and_then(|new| new.map(|ev| copies(ev, servers.len())).transpose());
        match copies {
            Ok(Some(evaluators)) => {
                for (tx, ev) in servers.iter().zip(evaluators) {
                    if tx.send(ev).is_err() {
                        return;
                    }
                }
            }
            Ok(None) => {}
            Err(e) => {
                if let Some(o) = observer {
                    o.model_skipped(&e);
                }
            }
        }
    }
}

/// `ev` and `n − 1` copies of it ([`Evaluator::fork`]), or why they cannot be made.
pub fn copies(ev: Box<dyn Evaluator>, n: usize) -> Result<Vec<Box<dyn Evaluator>>, String> {
    let mut out = Vec::with_capacity(n);
    for _ in 1..n {
        let copy = ev.fork().unwrap_or_else(|| {
            Err(EvalError::BadInput(format!(
                "{} cannot be copied for {n} servers",
                ev.name()
            )))
        });
        out.push(copy.map_err(|e| e.to_string())?);
    }
    out.insert(0, ev);
    Ok(out)
}
