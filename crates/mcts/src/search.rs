//! `Search`: one game's search tree, driven synchronously ([`Search::run`]) or in steps
//! ([`Search::select_leaves`] / [`Search::apply`]) by a batching server that multiplexes
//! many games over one evaluator.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::{Game, Move, Position};
use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator};

use crate::{
    InteriorSelection, ParamsError, Playouts, RootAlgorithm, SearchParams, SearchResult,
    gumbel::{self, GumbelRoot},
    noise, rules,
    ties::Ties,
    tree::{Ending, Link, Stat, State, Tree},
};

/// What can go wrong in a search. Bad input gives one of these, never a panic.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// The root has no legal move: the game is over, there is nothing to search.
    #[error("no legal move in {fen}: the game is over")]
    GameOver { fen: String },
    /// A move given to [`Search::advance`] is not legal at the root.
    #[error("illegal move {mv} at the search root {fen}")]
    IllegalMove { mv: Move, fen: String },
    /// [`Search::apply`] got a different number of evaluations than leaves requested.
    #[error("expected {expected} evaluations (one per leaf request), got {got}")]
    ResultCount { expected: usize, got: usize },
    /// An evaluation does not fit its request (policy length, non-finite numbers).
    #[error("evaluation {index} is unusable: {why}")]
    BadEvaluation { index: usize, why: String },
    /// The evaluator failed.
    #[error(transparent)]
    Eval(#[from] EvalError),
}

/// One position the search needs evaluated: the leaf's recent history (oldest first,
/// ending with the leaf) and its legal moves, in the order the policy must follow.
///
/// Requests live in a buffer inside the [`Search`] and are reused between batches (no
/// allocation per leaf once warm). A server that needs them elsewhere (another thread)
/// can clone them.
#[derive(Debug, Clone, Default)]
pub struct LeafRequest {
    node: u32,
    history: Vec<Position>,
    moves: Vec<Move>,
}

impl LeafRequest {
    /// The request in the form [`Evaluator::evaluate`] takes.
    pub fn input(&self) -> EvalInput<'_> {
        EvalInput {
            history: &self.history,
            moves: &self.moves,
        }
    }

    /// Positions from oldest to newest, the last being the one to evaluate.
    pub fn history(&self) -> &[Position] {
        &self.history
    }

    /// The position to evaluate.
    pub fn position(&self) -> &Position {
        self.history.last().expect("a request holds its leaf")
    }

    /// The legal moves of [`LeafRequest::position`].
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }
}

/// How one descent from the root ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A leaf now awaits evaluation.
    Leaf,
    /// A terminal node was scored by the rules and backed up at once.
    Visit,
    /// The descent reached a leaf already awaiting evaluation and was abandoned.
    Collision,
}

#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    /// Descents that ended at a leaf or a terminal node in this search.
    sims: u32,
    depth_sum: u64,
    depth_max: u32,
}

/// The search tree of one game, with the game line that leads to its root.
///
/// A move's search is [`Search::run`] (or [`Search::start`], then rounds of
/// [`Search::select_leaves`] / [`Search::apply`] until [`Search::is_finished`], then
/// [`Search::result`]); then [`Search::choose_move`] and [`Search::advance`], which
/// keeps the played move's subtree when `tree_reuse` is on.
///
/// Every random choice (noise, Gumbel draws, playout caps, move sampling) comes from one
/// ChaCha8 stream seeded at construction, so a search is reproducible from its seed,
/// its evaluator's outputs and the batch sizes used.
#[derive(Debug)]
pub struct Search {
    params: SearchParams,
    rng: ChaCha8Rng,
    tree: Tree,
    spare: Tree,
    /// The game up to the root, extended along the current descent.
    line: Game,
    root_ply: usize,
    pending: Vec<LeafRequest>,
    n_pending: usize,
    /// The root's network policy before root temperature and noise.
    root_raw: Option<Vec<f32>>,
    gumbel: Option<GumbelRoot>,
    /// Scratch for the Gumbel interior selection.
    scratch: Vec<f32>,
    target: u32,
    full: bool,
    stats: Stats,
    /// The order in which equal children are taken (see [`crate::ties`]).
    ties: Ties,
}

impl Search {
    /// A search from the current position of `game`, which supplies the history that
    /// repetition verdicts and the encoder need.
    ///
    /// # Errors
    /// [`SearchError::Params`] if a knob is out of range.
    pub fn new(params: SearchParams, game: &Game, seed: u64) -> Result<Search, SearchError> {
        params.validate()?;
        let line = rules::search_line(game, params.repetition_count);
        Ok(Search::with_line(params, line, seed))
    }

    /// A search from `pos` with no earlier history.
    ///
    /// # Errors
    /// [`SearchError::Params`] if a knob is out of range.
    pub fn from_position(
        params: SearchParams,
        pos: Position,
        seed: u64,
    ) -> Result<Search, SearchError> {
        params.validate()?;
        let line = rules::line_from(pos, params.repetition_count);
        Ok(Search::with_line(params, line, seed))
    }

    fn with_line(params: SearchParams, line: Game, seed: u64) -> Search {
        let mut tree = Tree::default();
        tree.reset();
        Search {
            rng: ChaCha8Rng::seed_from_u64(seed),
            ties: Ties::new(seed),
            tree,
            spare: Tree::default(),
            root_ply: line.ply(),
            line,
            pending: Vec::new(),
            n_pending: 0,
            root_raw: None,
            gumbel: None,
            scratch: Vec::new(),
            target: 1,
            full: true,
            stats: Stats::default(),
            params,
        }
    }

    /// Replaces the game (and drops the tree): for a new game, or a position the tree
    /// cannot follow.
    pub fn set_game(&mut self, game: &Game) {
        self.line = rules::search_line(game, self.params.repetition_count);
        self.root_ply = self.line.ply();
        self.reset_tree();
    }

    pub fn params(&self) -> &SearchParams {
        &self.params
    }

    /// The root position.
    pub fn position(&self) -> &Position {
        self.line
            .position_at(self.root_ply)
            .expect("the root is on the line")
    }

    /// Plies from the game's start position to the root (drives the temperature
    /// schedule).
    pub fn ply(&self) -> usize {
        self.root_ply
    }

    /// Completed visits of the root (including those kept by tree reuse).
    pub fn root_visits(&self) -> u32 {
        self.tree.stat[0].n
    }

    /// Nodes in the arena.
    pub fn tree_size(&self) -> usize {
        self.tree.len()
    }

    /// Memory held by the tree: the arena and the spare arena that tree reuse
    /// compacts into (both keep their capacity between searches), in bytes.
    pub fn memory_bytes(&self) -> usize {
        (self.tree.stat.capacity() + self.spare.stat.capacity()) * std::mem::size_of::<Stat>()
            + (self.tree.link.capacity() + self.spare.link.capacity()) * std::mem::size_of::<Link>()
    }

    /// Draws the next move's budget from the playout cap (full or cheap search), its
    /// full-search probability scaled by `full_scale` ([`crate::PlayoutCap::draw`]).
    pub fn plan_playouts(&mut self, full_scale: f32) -> Playouts {
        self.params.playout_cap.draw(&mut self.rng, full_scale)
    }

    fn reset_tree(&mut self) {
        self.n_pending = 0;
        self.tree.reset();
        self.root_raw = None;
        self.gumbel = None;
    }

    // --- One move's search ----------------------------------------------------------

    /// Begins a search of the root until it has `playouts.visits` completed visits
    /// (visits kept by tree reuse count). Full searches get root noise and forced
    /// playouts; cheap ones do not. Abandons any leaves still pending.
    ///
    /// # Errors
    /// [`SearchError::GameOver`] if the root has no legal move.
    pub fn start(&mut self, playouts: Playouts) -> Result<(), SearchError> {
        self.cancel_pending();
        if !self.position().has_legal_move() {
            return Err(SearchError::GameOver {
                fen: self.position().fen(),
            });
        }
        self.target = playouts.visits.max(1);
        self.full = playouts.full;
        self.stats = Stats::default();
        self.prepare_root();
        Ok(())
    }

    /// Whether the search is over: the budget is spent (or the best move is settled,
    /// with `early_stop`) and no leaf awaits evaluation.
    pub fn is_finished(&self) -> bool {
        self.n_pending == 0 && self.budget_spent()
    }

    /// Descends from the root up to `max` times and returns the leaves that need an
    /// evaluation, at most `max`. Terminal nodes met on the way are scored by the rules
    /// and backed up at once; a descent into a leaf already requested is abandoned (it
    /// does not count). Calling again before [`Search::apply`] returns the same
    /// requests. An empty answer with [`Search::is_finished`] false means only terminal
    /// visits were made: call again.
    pub fn select_leaves(&mut self, max: usize) -> &[LeafRequest] {
        if self.n_pending == 0 {
            let max = max.max(1);
            let mut attempts = 0;
            while self.n_pending < max && attempts < 2 * max + 8 && !self.budget_spent() {
                attempts += 1;
                if self.descend() == Outcome::Collision && self.tree.link[0].state == State::Pending
                {
                    break;
                }
            }
        }
        &self.pending[..self.n_pending]
    }

    /// The leaves awaiting evaluation (as last returned by [`Search::select_leaves`]).
    pub fn pending(&self) -> &[LeafRequest] {
        &self.pending[..self.n_pending]
    }

    /// Applies one evaluation per pending leaf, in request order: expands each leaf and
    /// backs its value up.
    ///
    /// # Errors
    /// [`SearchError::ResultCount`] or [`SearchError::BadEvaluation`]; the pending
    /// leaves are then abandoned (the tree is as before the requests).
    pub fn apply(&mut self, evals: &[Evaluation]) -> Result<(), SearchError> {
        if let Err(e) = self.check(evals) {
            self.cancel_pending();
            return Err(e);
        }
        let mut root_expanded = false;
        for (req, e) in self.pending[..self.n_pending].iter().zip(evals) {
            let idx = req.node as usize;
            let first = self.tree.len();
            self.tree
                .stat
                .extend(e.policy.iter().map(|&p| Stat::new(p)));
            self.tree
                .link
                .extend(req.moves.iter().map(|&m| Link::new(m, idx as u32)));
            let node = &mut self.tree.link[idx];
            node.first_child = first as u32;
            node.num_children = req.moves.len() as u8;
            node.state = State::Expanded;
            node.value = e.value();
            self.tree.backup(idx, e.value(), e.wdl[1]);
            root_expanded |= idx == 0;
        }
        self.n_pending = 0;
        if root_expanded {
            self.root_raw = None;
            self.prepare_root();
        }
        Ok(())
    }

    /// Runs a full search of `visits` root visits with `evaluator`, batching
    /// `batch_size` leaves per call.
    ///
    /// # Errors
    /// [`SearchError::GameOver`] at a finished game; evaluator failures and unusable
    /// evaluations.
    pub fn run<E: Evaluator + ?Sized>(
        &mut self,
        evaluator: &mut E,
        visits: u32,
    ) -> Result<SearchResult, SearchError> {
        self.run_playouts(evaluator, Playouts::full(visits))
    }

    /// Runs a search with the given budget (see [`Search::plan_playouts`]).
    ///
    /// # Errors
    /// As [`Search::run`].
    pub fn run_playouts<E: Evaluator + ?Sized>(
        &mut self,
        evaluator: &mut E,
        playouts: Playouts,
    ) -> Result<SearchResult, SearchError> {
        self.start(playouts)?;
        let batch = self.params.batch_size;
        while !self.is_finished() {
            let n = self.select_leaves(batch).len();
            if n == 0 {
                continue;
            }
            let evals = {
                let inputs: Vec<EvalInput<'_>> =
                    self.pending[..n].iter().map(LeafRequest::input).collect();
                evaluator.evaluate(&inputs)
            };
            match evals {
                Ok(evals) => self.apply(&evals)?,
                Err(e) => {
                    self.cancel_pending();
                    return Err(e.into());
                }
            }
        }
        Ok(self.result())
    }

    /// Picks the move to play from `result`: in Gumbel mode the Gumbel action; with
    /// PUCT a sample from the policy target at the schedule's temperature for the root
    /// ply (0 = the best move).
    pub fn choose_move(&mut self, result: &SearchResult) -> Option<Move> {
        let best = result.best_move?;
        if self.params.algorithm == RootAlgorithm::Gumbel {
            return Some(best);
        }
        let tau = self.params.temperature.at(self.root_ply as u32);
        if tau < 1e-3 {
            return Some(best);
        }
        let max = result.policy_target.iter().cloned().fold(0.0f32, f32::max);
        if max <= 0.0 {
            return Some(best);
        }
        let w: Vec<f64> = result
            .policy_target
            .iter()
            .map(|&t| ((t / max) as f64).powf(1.0 / tau as f64))
            .collect();
        let total: f64 = w.iter().sum();
        let mut x = self.rng.random::<f64>() * total;
        for (i, wi) in w.iter().enumerate() {
            if x < *wi {
                return Some(result.moves[i]);
            }
            x -= wi;
        }
        Some(best)
    }

    /// Plays `mv` at the root: the root moves on, keeping the subtree under `mv` when
    /// `tree_reuse` is on (compacted into a fresh arena), else starting a new tree.
    ///
    /// # Errors
    /// [`SearchError::IllegalMove`] if `mv` is not legal at the root; nothing changes.
    pub fn advance(&mut self, mv: Move) -> Result<(), SearchError> {
        self.cancel_pending();
        let pos = self.position();
        if !pos.is_legal(mv) {
            return Err(SearchError::IllegalMove { mv, fen: pos.fen() });
        }
        let root = self.tree.link[0];
        let child = if self.params.tree_reuse && root.state.has_children() {
            root.children().find(|&c| self.tree.link[c].mv == mv)
        } else {
            None
        };
        self.line.play_unchecked(mv);
        self.root_ply = self.line.ply();
        match child {
            Some(c) if self.tree.link[c].state.has_children() => {
                self.tree.compact(&mut self.spare, c);
                // The root is never proven: it keeps searching its moves (a proven
                // node's children are all there, and their exact values stay).
                if self.tree.link[0].state.is_proven() {
                    self.tree.link[0].state = State::Expanded;
                }
                self.root_raw = None;
                self.gumbel = None;
            }
            _ => self.reset_tree(),
        }
        Ok(())
    }

    // --- Internals ------------------------------------------------------------------

    fn budget_spent(&self) -> bool {
        let root = &self.tree.stat[0];
        root.n + root.vl >= self.target || self.early_stop_reached()
    }

    /// Whether the move to play is settled: a root move is a proven win (the move played
    /// is then a proven win, whatever more visits would do), or the most-visited root
    /// move can no longer be overtaken with the visits left (in-flight visits count as
    /// spent).
    fn early_stop_reached(&self) -> bool {
        if !self.params.early_stop || self.params.algorithm == RootAlgorithm::Gumbel {
            return false;
        }
        let root = &self.tree.link[0];
        if root.state != State::Expanded {
            return false;
        }
        if root.num_children == 1 {
            return true;
        }
        let links = &self.tree.link[root.children()];
        if links.iter().any(|l| l.state.is_exact() && l.value == -1.0) {
            return true;
        }
        let r = &self.tree.stat[0];
        let remaining = self.target.saturating_sub(r.n + r.vl);
        let (mut n1, mut n2) = (0, 0);
        for c in &self.tree.stat[root.children()] {
            let v = c.n + c.vl;
            if v > n1 {
                n2 = n1;
                n1 = v;
            } else if v > n2 {
                n2 = v;
            }
        }
        n1 > n2 + remaining
    }

    fn forced_playouts_on(&self) -> bool {
        self.full
            && self.params.forced_playouts_k > 0.0
            && self.params.algorithm == RootAlgorithm::Puct
    }

    /// One descent from the root; the line is back at the root afterwards.
    fn descend(&mut self) -> Outcome {
        let mut idx = 0usize;
        self.tree.stat[0].vl += 1;
        let mut depth = 0u32;
        let outcome = loop {
            let node = self.tree.link[idx];
            match node.state {
                State::Expanded => {
                    let child = match self.gumbel.as_mut() {
                        Some(g) if idx == 0 => {
                            let range = node.children();
                            range.start
                                + g.select(&self.tree.stat[range], node.value, &self.params.gumbel)
                        }
                        _ if self.params.algorithm == RootAlgorithm::Gumbel
                            && self.params.gumbel.interior == InteriorSelection::Gumbel =>
                        {
                            let range = node.children();
                            range.start
                                + gumbel::interior_select(
                                    &self.tree.stat[range.clone()],
                                    node.value,
                                    &self.params.gumbel,
                                    &mut self.scratch,
                                    self.ties,
                                    range.start,
                                )
                        }
                        _ => self.select_puct(idx),
                    };
                    self.tree.stat[child].vl += 1;
                    self.line.play_unchecked(self.tree.link[child].mv);
                    idx = child;
                    depth += 1;
                }
                State::NoMoveEnd | State::RuleEnd | State::ProvenNoMove | State::ProvenRule => {
                    self.tree.backup(idx, node.value, draw_of(node.value));
                    break Outcome::Visit;
                }
                State::Pending => {
                    self.undo_descent(idx);
                    break Outcome::Collision;
                }
                State::Fresh => break self.reach_leaf(idx),
            }
        };
        if outcome != Outcome::Collision {
            self.stats.sims += 1;
            self.stats.depth_sum += depth as u64;
            self.stats.depth_max = self.stats.depth_max.max(depth);
        }
        while self.line.ply() > self.root_ply {
            self.line.undo();
        }
        outcome
    }

    /// Removes the in-flight marks of a descent that ended at `leaf`.
    fn undo_descent(&mut self, leaf: usize) {
        if let Some(c) = self.tree.undo_virtual(leaf)
            && let Some(g) = self.gumbel.as_mut()
        {
            g.undo(c - self.tree.link[0].first_child as usize);
        }
    }

    /// A never-visited node: judged by the rules, or queued for evaluation. Its legal
    /// moves are generated once, here, and travel with the request to the expansion.
    fn reach_leaf(&mut self, idx: usize) -> Outcome {
        let moves = self.line.position().legal_moves();
        let verdict = if moves.is_empty() {
            // Checkmate or stalemate (a loss either way); the rules name which. The
            // root never gets here: `start` refuses a root without moves.
            Some((rules::verdict(&self.line).unwrap_or(-1.0), Ending::NoMove))
        } else if idx != 0 {
            rules::verdict_with_moves(&self.line).map(|v| (v, Ending::Rule))
        } else {
            None
        };
        if let Some((v, why)) = verdict {
            let node = &mut self.tree.link[idx];
            node.state = State::terminal(why);
            node.value = v;
            self.tree.backup(idx, v, draw_of(v));
            self.tree.prove_upwards(idx);
            return Outcome::Visit;
        }
        self.tree.link[idx].state = State::Pending;
        if self.n_pending == self.pending.len() {
            self.pending.push(LeafRequest::default());
        }
        let req = &mut self.pending[self.n_pending];
        req.node = idx as u32;
        req.moves.clear();
        req.moves.extend_from_slice(&moves);
        req.history.clear();
        let ply = self.line.ply();
        let from = (ply + 1).saturating_sub(self.params.history_len);
        for p in from..=ply {
            req.history
                .push(self.line.position_at(p).expect("ply on the line").clone());
        }
        self.n_pending += 1;
        Outcome::Leaf
    }

    /// PUCT child selection at an expanded node.
    fn select_puct(&self, idx: usize) -> usize {
        let node = &self.tree.stat[idx];
        let range = self.tree.link[idx].children();
        let first = range.start;
        let children = &self.tree.stat[range];
        let is_root = idx == 0;
        let p = &self.params;

        let mut sum_n = 0u32;
        let mut visited_mass = 0f32;
        for c in children {
            let nv = c.n + c.vl;
            sum_n += nv;
            if nv > 0 {
                visited_mass += c.prior;
            }
        }
        let parent_q = if node.n > 0 {
            -node.q_sum / node.n as f32
        } else {
            0.0
        };
        let reduction = if is_root {
            p.fpu_reduction_root
        } else {
            p.fpu_reduction
        };
        let fpu = parent_q - reduction * visited_mass.sqrt();
        let c_puct = p.c_puct_init + ((sum_n as f32 + p.c_puct_base + 1.0) / p.c_puct_base).ln();
        let explore = c_puct * (sum_n.max(1) as f32).sqrt();
        let forced_k = if is_root && self.forced_playouts_on() {
            p.forced_playouts_k * sum_n as f32
        } else {
            0.0
        };

        // A child short of its forced playouts goes before any other; among equals, the
        // PUCT score, then the search's tie order.
        let mut best = 0;
        let mut best_forced = false;
        let mut best_score = f32::NEG_INFINITY;
        for (i, c) in children.iter().enumerate() {
            let nv = c.n + c.vl;
            let forced =
                forced_k > 0.0 && c.prior > 0.0 && (nv as f32) < (forced_k * c.prior).sqrt();
            if best_forced && !forced {
                continue;
            }
            let q = if nv == 0 {
                fpu
            } else {
                (c.q_sum - c.vl as f32) / nv as f32
            };
            let score = q + explore * c.prior / (1 + nv) as f32;
            if (forced && !best_forced)
                || self.ties.beats(score, first + i, best_score, first + best)
            {
                best_forced = forced;
                best_score = score;
                best = i;
            }
        }
        first + best
    }

    fn check(&self, evals: &[Evaluation]) -> Result<(), SearchError> {
        if evals.len() != self.n_pending {
            return Err(SearchError::ResultCount {
                expected: self.n_pending,
                got: evals.len(),
            });
        }
        for (index, (req, e)) in self.pending.iter().zip(evals).enumerate() {
            let bad = |why: String| Err(SearchError::BadEvaluation { index, why });
            if e.policy.len() != req.moves.len() {
                return bad(format!(
                    "policy has {} entries for {} legal moves",
                    e.policy.len(),
                    req.moves.len()
                ));
            }
            if let Some(p) = e.policy.iter().find(|p| !(p.is_finite() && **p >= 0.0)) {
                return bad(format!("policy entry {p} is not a probability"));
            }
            if e.wdl
                .iter()
                .any(|x| !(x.is_finite() && (-1e-3..=1.001).contains(x)))
            {
                return bad(format!("wdl {:?} is not a distribution", e.wdl));
            }
        }
        Ok(())
    }

    /// Abandons the leaves awaiting evaluation (say the evaluator failed): they become
    /// unvisited again and their in-flight marks go, so the tree is as before the
    /// requests. [`Search::start`], [`Search::advance`] and a failed
    /// [`Search::apply`] do this themselves.
    pub fn abandon_pending(&mut self) {
        self.cancel_pending();
    }

    fn cancel_pending(&mut self) {
        for i in 0..self.n_pending {
            let idx = self.pending[i].node as usize;
            self.tree.link[idx].state = State::Fresh;
            self.undo_descent(idx);
        }
        self.n_pending = 0;
    }

    /// Sets the root priors for this search from the raw policy: root softmax
    /// temperature, then (full PUCT searches) Dirichlet noise; in Gumbel mode draws the
    /// considered moves.
    fn prepare_root(&mut self) {
        self.gumbel = None;
        let root = self.tree.link[0];
        if root.state != State::Expanded {
            return;
        }
        let range = root.children();
        let stat = &self.tree.stat;
        let raw = self
            .root_raw
            .get_or_insert_with(|| stat[range.clone()].iter().map(|c| c.prior).collect());
        let mut priors = raw.clone();
        let p = &self.params;
        if p.root_policy_temperature != 1.0 {
            let max = priors.iter().cloned().fold(0.0f32, f32::max);
            if max > 0.0 {
                let inv = 1.0 / p.root_policy_temperature;
                priors.iter_mut().for_each(|x| *x = (*x / max).powf(inv));
                let sum: f32 = priors.iter().sum();
                priors.iter_mut().for_each(|x| *x /= sum);
            }
        }
        let gumbel_mode = p.algorithm == RootAlgorithm::Gumbel;
        if !gumbel_mode && self.full && p.dirichlet_epsilon > 0.0 {
            let mut eta = vec![0.0f32; priors.len()];
            let alpha = (p.dirichlet_alpha_scale / priors.len() as f32) as f64;
            noise::dirichlet(&mut self.rng, alpha, &mut eta);
            let eps = p.dirichlet_epsilon;
            for (x, e) in priors.iter_mut().zip(&eta) {
                *x = (1.0 - eps) * *x + eps * e;
            }
        }
        for (c, &x) in self.tree.stat[range].iter_mut().zip(&priors) {
            c.prior = x;
        }
        if gumbel_mode {
            let g: Vec<f32> = if p.gumbel.sample {
                (0..priors.len())
                    .map(|_| noise::gumbel(&mut self.rng))
                    .collect()
            } else {
                vec![0.0; priors.len()]
            };
            let r = self.tree.stat[0];
            let sims = self.target.saturating_sub(r.n + r.vl) as usize;
            self.gumbel = Some(GumbelRoot::new(
                &priors,
                g,
                &self.params.gumbel,
                sims,
                self.ties,
            ));
        }
    }

    /// The root's policy as the evaluator gave it, over [`SearchResult::moves`], before
    /// root temperature; `None` before the root is evaluated.
    pub fn root_prior(&self) -> Option<&[f32]> {
        self.root_raw.as_deref()
    }

    /// The Gumbel improved policy built on `base` instead of the priors the search
    /// started from: softmax(ln base′ + σ(completed Q)) over [`SearchResult::moves`],
    /// with base′ `base` under the root temperature as the search applies it to its own
    /// priors ([`TargetPrior::Network`](crate::TargetPrior::Network)). The values the
    /// search found are unchanged; only the logits they are added to are. `None` for a
    /// PUCT search (its target is visit counts), a root not yet expanded, or a `base` of
    /// another length.
    pub fn gumbel_target_on(&self, base: &[f32]) -> Option<Vec<f32>> {
        let g = self.gumbel.as_ref()?;
        let root = self.tree.link[0];
        if root.state != State::Expanded {
            return None;
        }
        let children = &self.tree.stat[root.children()];
        if base.len() != children.len() {
            return None;
        }
        let inv = 1.0 / self.params.root_policy_temperature;
        let logits: Vec<f32> = base.iter().map(|&p| p.max(1e-30).ln() * inv).collect();
        Some(g.improved_policy_on(&logits, children, root.value, &self.params.gumbel))
    }

    /// The search's artifacts so far (call after [`Search::is_finished`]).
    pub fn result(&self) -> SearchResult {
        let root_link = self.tree.link[0];
        let root = self.tree.stat[0];
        let expanded = root_link.state == State::Expanded;
        let range = if expanded { root_link.children() } else { 0..0 };
        let children = &self.tree.stat[range.clone()];
        let moves: Vec<Move> = self.tree.link[range.clone()].iter().map(|c| c.mv).collect();
        let visits: Vec<u32> = children.iter().map(|c| c.n).collect();
        let prior: Vec<f32> = children.iter().map(|c| c.prior).collect();
        let q: Vec<Option<f32>> = children.iter().map(Stat::q).collect();
        let exact: Vec<Option<f32>> = self.tree.link[range.clone()]
            .iter()
            .map(|l| l.state.is_exact().then_some(-l.value))
            .collect();
        let ending: Vec<Option<Ending>> = self.tree.link[range.clone()]
            .iter()
            .map(|l| l.state.ending())
            .collect();

        let (value, draw) = if root.n > 0 {
            (-root.q_sum / root.n as f32, root_link.d_sum / root.n as f32)
        } else {
            (0.0, 0.0)
        };
        let wdl = [
            ((1.0 - draw + value) / 2.0).clamp(0.0, 1.0),
            draw.clamp(0.0, 1.0),
            ((1.0 - draw - value) / 2.0).clamp(0.0, 1.0),
        ];

        let (best, policy_target, pruned) = match &self.gumbel {
            Some(g) if expanded => (
                Some(g.action(children, root_link.value, &self.params.gumbel)),
                g.improved_policy(children, root_link.value, &self.params.gumbel),
                false,
            ),
            _ => {
                let range = root_link.children();
                let links = &self.tree.link[range.clone()];
                let best = winning_child(children, links, self.ties, range.start)
                    .or_else(|| most_visited(children, self.ties, range.start));
                let prune = self.forced_playouts_on() && self.params.prune_policy_target;
                let target_visits = match best {
                    Some(b) if prune => self.pruned_visits(children, b),
                    _ => visits.iter().map(|&n| n as f32).collect(),
                };
                (best, normalised_or(&target_visits, &prior), prune)
            }
        };

        let mut pv = Vec::new();
        if let Some(b) = best {
            pv.push(moves[b]);
            let mut node = self.tree.link[root_link.first_child as usize + b];
            while node.state.has_children() {
                let range = node.children();
                let kids = &self.tree.stat[range.clone()];
                let links = &self.tree.link[range.clone()];
                match winning_child(kids, links, self.ties, range.start)
                    .or_else(|| most_visited(kids, self.ties, range.start))
                {
                    Some(i) if kids[i].n > 0 => {
                        node = self.tree.link[range.start + i];
                        pv.push(node.mv);
                    }
                    _ => break,
                }
            }
        }

        SearchResult {
            best_move: best.map(|b| moves[b]),
            moves,
            visits,
            policy_target,
            pruned,
            prior,
            q,
            exact,
            ending,
            value,
            wdl,
            pv,
            root_visits: root.n,
            playouts: self.stats.sims,
            tree_nodes: self.tree.len(),
            max_depth: self.stats.depth_max,
            avg_depth: if self.stats.sims > 0 {
                self.stats.depth_sum as f32 / self.stats.sims as f32
            } else {
                0.0
            },
            full: self.full,
            early_stopped: root.n < self.target && self.early_stop_reached(),
        }
    }

    /// KataGo's policy-target pruning: for every move but the best, take away up to its
    /// forced playouts as long as its PUCT value stays below the best move's; a move
    /// left with a single visit is dropped.
    fn pruned_visits(&self, children: &[Stat], best: usize) -> Vec<f32> {
        let p = &self.params;
        let total: u32 = children.iter().map(|c| c.n).sum();
        let sqrt_n = (total.max(1) as f32).sqrt();
        let c_puct = p.c_puct_init + ((total as f32 + p.c_puct_base + 1.0) / p.c_puct_base).ln();
        let b = &children[best];
        let best_score = b.q().unwrap_or(0.0) + c_puct * b.prior * sqrt_n / (1 + b.n) as f32;
        children
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let n = c.n as f32;
                if i == best || c.n == 0 {
                    return n;
                }
                let q = c.q().unwrap_or(0.0);
                let gap = best_score - q;
                if gap <= 0.0 {
                    return n;
                }
                let forced = (p.forced_playouts_k * c.prior * total as f32).sqrt();
                let needed = (c_puct * c.prior * sqrt_n / gap - 1.0).ceil().max(0.0);
                let kept = needed.max(n - forced).clamp(0.0, n);
                if kept <= 1.0 { 0.0 } else { kept }
            })
            .collect()
    }
}

/// A terminal value's draw probability.
#[inline]
fn draw_of(v: f32) -> f32 {
    if v == 0.0 { 1.0 } else { 0.0 }
}

/// The child with the most visits; ties go to the higher Q, then the higher prior, then
/// by `ties` (the children are the tree's slots from `first`).
fn most_visited(children: &[Stat], ties: Ties, first: usize) -> Option<usize> {
    (0..children.len()).max_by(|&a, &b| {
        let (x, y) = (&children[a], &children[b]);
        x.n.cmp(&y.n)
            .then(x.q().unwrap_or(-2.0).total_cmp(&y.q().unwrap_or(-2.0)))
            .then(x.prior.total_cmp(&y.prior))
            .then(ties.key(first + a).cmp(&ties.key(first + b)))
    })
}

/// The most-visited child whose move wins by force (its node is lost for the side to
/// move there, by the rules or by proof), if any.
fn winning_child(stats: &[Stat], links: &[Link], ties: Ties, first: usize) -> Option<usize> {
    (0..stats.len())
        .filter(|&i| links[i].state.is_exact() && links[i].value == -1.0)
        .max_by_key(|&i| (stats[i].n, ties.key(first + i)))
}

/// `w` normalised to sum 1, or `fallback` when `w` is all zero.
fn normalised_or(w: &[f32], fallback: &[f32]) -> Vec<f32> {
    let sum: f32 = w.iter().sum();
    if sum > 0.0 {
        w.iter().map(|x| x / sum).collect()
    } else {
        let s: f32 = fallback.iter().sum();
        fallback
            .iter()
            .map(|x| if s > 0.0 { x / s } else { 0.0 })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use xq_nn::RandomEvaluator;

    use super::*;
    use crate::{RootAlgorithm, tree::NO_PARENT};

    /// The arena's invariants once a search has finished: no visit in flight, links
    /// consistent, and every visit of an expanded node went to one of its children.
    fn check_arena(s: &Search) {
        let t = &s.tree;
        assert_eq!(t.stat.len(), t.link.len());
        assert_eq!(t.link[0].parent, NO_PARENT);
        for i in 0..t.len() {
            let (st, l) = (&t.stat[i], &t.link[i]);
            assert_eq!(st.vl, 0, "node {i} has visits in flight");
            assert_ne!(l.state, State::Pending, "node {i} is still pending");
            if l.state.has_children() {
                let kids = l.children();
                assert!(
                    kids.start > i && kids.end <= t.len(),
                    "node {i}: children {kids:?}"
                );
                let sum: u32 = t.stat[kids.clone()].iter().map(|c| c.n).sum();
                for c in kids {
                    assert_eq!(t.link[c].parent as usize, i);
                }
                if l.state == State::Expanded {
                    assert_eq!(st.n, 1 + sum, "node {i}: visits {} vs children {sum}", st.n);
                } else {
                    assert!(st.n > sum);
                }
            } else {
                assert_eq!(l.num_children, 0);
            }
            if let Some(q) = st.q() {
                assert!((-1.0001..=1.0001).contains(&q), "node {i}: q {q}");
            }
        }
    }

    #[test]
    fn the_search_scores_a_perpetual_chase_as_the_referee_does() {
        // Red horse e4 chases the unprotected black chariot f7 (e4-d6-e4) while the
        // chariot runs f7-f6-f7; one round has been played. Completing a second round
        // with e4d6 is 长捉 against idle moves: the rules core's verdict, at the search's
        // occurrence, is a loss for red, so the search knows it exactly and avoids it.
        let mut game = Game::from_fen("3k5/9/5r3/2P6/9/4N4/9/9/9/4K4 w - - 0 1").unwrap();
        for m in ["e4d6", "f7f6", "d6e4", "f6f7"] {
            game.play_iccs(m).unwrap();
        }
        let mut s = Search::new(SearchParams::for_play(), &game, 3).unwrap();
        let r = s.run(&mut xq_nn::UniformEvaluator, 400).unwrap();
        let chase: Move = "e4d6".parse().unwrap();
        let i = r.moves.iter().position(|&m| m == chase).unwrap();
        assert_eq!(r.exact[i], Some(-1.0));
        assert_ne!(r.best_move, Some(chase));
    }

    /// Plays whole games with tree reuse, the playout cap, both root algorithms and
    /// batching, checking the arena after every search.
    #[test]
    fn arena_stays_consistent_through_played_games() {
        for (algorithm, interior, batch, seed) in [
            (RootAlgorithm::Puct, InteriorSelection::Puct, 1, 1),
            (RootAlgorithm::Puct, InteriorSelection::Puct, 8, 2),
            (RootAlgorithm::Gumbel, InteriorSelection::Puct, 4, 3),
            (RootAlgorithm::Gumbel, InteriorSelection::Gumbel, 4, 4),
        ] {
            let params = SearchParams {
                algorithm,
                batch_size: batch,
                gumbel: crate::GumbelParams {
                    interior,
                    ..Default::default()
                },
                playout_cap: crate::PlayoutCap {
                    full_visits: 96,
                    cheap_visits: 24,
                    full_probability: 0.5,
                },
                ..SearchParams::default()
            };
            let mut s = Search::from_position(params, Position::startpos(), seed).unwrap();
            let mut net = RandomEvaluator::new(seed);
            let mut reused = 0;
            for _ in 0..150 {
                let plan = s.plan_playouts(1.0);
                let r = match s.run_playouts(&mut net, plan) {
                    Ok(r) => r,
                    Err(SearchError::GameOver { .. }) => break,
                    Err(e) => panic!("{e}"),
                };
                check_arena(&s);
                assert!((r.policy_target.iter().sum::<f32>() - 1.0).abs() < 1e-4);
                assert_eq!(r.moves.len(), s.position().legal_moves().len());
                let m = s.choose_move(&r).unwrap();
                s.advance(m).unwrap();
                reused += s.root_visits();
                check_arena(&s);
                if s.line.adjudicate().is_some() {
                    break;
                }
            }
            assert!(reused > 0, "{algorithm:?}: tree reuse never kept anything");
        }
    }
}
