//! The network search shared by [`NetPlayer`](super::NetPlayer) and the UCCI engine's
//! `MctsBackend`: settings, loading a network, and [`NetSearch`], one game's search
//! with its tree kept across moves.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use serde::{Deserialize, Serialize};
use xq_core::{Game, Move};
use xq_mcts::{
    Ending, GumbelParams, Playouts, RootAlgorithm, Search, SearchError, SearchParams, SearchResult,
};
use xq_nn::{EvalInput, Evaluator};

use crate::{
    clock::Limits,
    score::{RULE_WIN_CP, Score, value_to_cp},
    tactics::QuiescenceBlend,
};

/// Most root visits a time-bound search may reach (the clock, `stop` or the tree-size
/// cap end it long before on any real machine).
pub const MAX_VISITS: u32 = 1 << 30;

/// Bytes budgeted per tree node by the `hashsize` tree-size cap: a node's statistics
/// and links ([`xq_mcts::NODE_BYTES`], 36 bytes) with some slack, since the cap is a
/// budget, not a measurement (`xq_mcts::Search::memory_bytes` measures).
pub const BYTES_PER_NODE: usize = 40;

// ARCHITECTURE.md and the doc above give a node's size: a change of it must reach them.
const _: () = assert!(xq_mcts::NODE_BYTES == 36);
const _: () = assert!(BYTES_PER_NODE >= xq_mcts::NODE_BYTES);

/// Search settings of a network player: what `engine.toml` holds under `[search]` and
/// what `net:` player specifications set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetSettings {
    /// Root visits per move when the limits give neither nodes nor time (and for
    /// `go depth N`, which has no meaning for MCTS).
    pub visits: u32,
    /// Leaves per evaluator call. Larger batches use a GPU better; the search checks the
    /// clock and `stop` between batches, so on a slow CPU network keep it small enough
    /// for one batch to take well under 50 ms.
    pub batch: usize,
    /// libtorch intra-op CPU threads (0 = libtorch's default). Process-wide.
    pub threads: usize,
    /// Tree memory cap in MiB: a search stops growing the tree beyond it.
    pub tree_mb: usize,
    /// PUCT exploration constant at low visit counts (see `xq_mcts::SearchParams`).
    pub c_puct: f32,
    /// First-play-urgency reduction below the parent's value for unvisited children.
    pub fpu_reduction: f32,
    /// Resign when the chosen move's value maps to this many centipawns or fewer below
    /// zero (`resign_cp = 900` resigns at −900); 0 never resigns.
    pub resign_cp: i32,
    /// Offer a draw with the move when its value maps to this many centipawns or fewer;
    /// `None` never offers one.
    pub draw_cp: Option<i32>,
    /// Weight in [0, 1] of a quiescence search in every leaf's value
    /// ([`crate::tactics`]); 0, the default, is plain AlphaZero.
    pub leaf_quiescence: f32,
    /// Search the root with Gumbel sequential halving (deterministic: no Gumbel noise)
    /// instead of PUCT; interior nodes stay PUCT.
    pub gumbel_root: bool,
}

impl Default for NetSettings {
    fn default() -> Self {
        NetSettings {
            visits: 800,
            batch: 16,
            threads: 0,
            tree_mb: 1024,
            c_puct: SearchParams::default().c_puct_init,
            fpu_reduction: SearchParams::default().fpu_reduction,
            resign_cp: 0,
            draw_cp: None,
            leaf_quiescence: 0.0,
            gumbel_root: false,
        }
    }
}

impl NetSettings {
    /// The search parameters for play: no root noise, no forced playouts, the best move
    /// rather than a sample, this batch size and exploration.
    pub fn search_params(&self) -> SearchParams {
        let play = SearchParams::for_play();
        SearchParams {
            batch_size: self.batch.max(1),
            c_puct_init: self.c_puct,
            fpu_reduction: self.fpu_reduction,
            algorithm: if self.gumbel_root {
                RootAlgorithm::Gumbel
            } else {
                RootAlgorithm::Puct
            },
            gumbel: GumbelParams {
                sample: false,
                ..play.gumbel
            },
            ..play
        }
    }

    /// Checks every setting; the message names the first bad one.
    pub fn validate(&self) -> Result<(), NetError> {
        let bad = |what: String| Err(NetError::Settings(what));
        if self.visits == 0 {
            return bad("visits must be at least 1".into());
        }
        if !(1..=4096).contains(&self.batch) {
            return bad(format!("batch must be in 1..=4096, got {}", self.batch));
        }
        if self.tree_mb == 0 {
            return bad("tree_mb must be at least 1".into());
        }
        if !(0..=30_000).contains(&self.resign_cp) {
            return bad(format!(
                "resign_cp must be in 0..=30000, got {}",
                self.resign_cp
            ));
        }
        if !(0.0..=1.0).contains(&self.leaf_quiescence) {
            return bad(format!(
                "leaf_quiescence must be in 0..=1, got {}",
                self.leaf_quiescence
            ));
        }
        self.search_params()
            .validate()
            .map_err(|e| NetError::Settings(e.to_string()))
    }

    /// Tree nodes allowed by [`NetSettings::tree_mb`].
    pub fn max_tree_nodes(&self) -> usize {
        self.tree_mb.saturating_mul(1 << 20) / BYTES_PER_NODE
    }
}

/// What can go wrong building or running a network player.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("cannot load network {path}: {why}")]
    Load { path: String, why: String },
    #[error("invalid search settings: {0}")]
    Settings(String),
    #[error("search failed: {0}")]
    Search(#[from] SearchError),
    #[error("the search found no move to play")]
    NoMove,
}

/// Loads a checkpoint (a sidecar `.json`, a checkpoint directory or a run directory)
/// through the process's registered network backend ([`xq_nn::backend`]): its EMA
/// weights, on the GPU when the backend has one, with `threads` CPU threads (0: the
/// backend's default).
///
/// # Errors
/// [`NetError::Load`] when the process has no backend or the network cannot be read.
pub fn load_network(path: &Path, threads: usize) -> Result<Box<dyn Evaluator>, NetError> {
    let load = |why: String| NetError::Load {
        path: path.display().to_string(),
        why,
    };
    let backend = xq_nn::backend::backend().map_err(|e| load(e.to_string()))?;
    let options = xq_nn::LoadOptions {
        threads,
        ..xq_nn::LoadOptions::default()
    };
    backend
        .load(path, &options)
        .map_err(|e| load(e.to_string()))
}

/// One game's network search: an evaluator, the settings, and the search tree kept
/// across the game's moves (see the [module documentation](super)).
pub struct NetSearch {
    evaluator: Box<dyn Evaluator>,
    settings: NetSettings,
    keeper: TreeKeeper,
}

impl std::fmt::Debug for NetSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetSearch")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// What one move's search found: the move to play and what to report about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveReport {
    /// The move to play: the best one not banned (see [`NetSearch::search`]).
    pub best: Move,
    /// The `info` score: a mate distance for a proven checkmate or stalemate,
    /// ±[`RULE_WIN_CP`] for a result only the rules decide, else centipawns (see
    /// the [module documentation](super)).
    pub score: Score,
    /// The move's value in centipawns ([`value_to_cp`]), for resign and draw
    /// decisions.
    pub cp: i32,
    /// The average descent depth of the search, rounded, at least 1.
    pub depth: u32,
    /// Root visits.
    pub nodes: u64,
    /// The principal variation, starting with `best`.
    pub pv: Vec<Move>,
}

impl MoveReport {
    /// The report of playing `mv` after the search that gave `result`.
    fn new(result: &SearchResult, mv: Move) -> MoveReport {
        let pv = pv_for(result, mv);
        MoveReport {
            best: mv,
            score: report_score(result, mv, &pv),
            cp: value_to_cp(move_value(result, mv)),
            depth: report_depth(result),
            nodes: u64::from(result.root_visits),
            pv,
        }
    }
}

impl NetSearch {
    /// A search with `evaluator`.
    ///
    /// # Errors
    /// [`NetError::Settings`] for bad settings.
    pub fn new(
        evaluator: Box<dyn Evaluator>,
        settings: NetSettings,
    ) -> Result<NetSearch, NetError> {
        settings.validate()?;
        Ok(NetSearch {
            evaluator,
            keeper: TreeKeeper::new(settings.search_params(), 0),
            settings,
        })
    }

    pub fn settings(&self) -> &NetSettings {
        &self.settings
    }

    /// Replaces the settings; the tree is kept unless the search parameters change.
    ///
    /// # Errors
    /// [`NetError::Settings`] for bad settings (the old ones stay).
    pub fn set_settings(&mut self, settings: NetSettings) -> Result<(), NetError> {
        settings.validate()?;
        if settings.search_params() != self.settings.search_params() {
            self.keeper.set_params(settings.search_params());
        }
        self.settings = settings;
        Ok(())
    }

    /// Searches with another network from now on (and forgets the tree).
    pub fn set_evaluator(&mut self, evaluator: Box<dyn Evaluator>) {
        self.evaluator = evaluator;
        self.keeper.reset(0);
    }

    /// Forgets the tree: the next search starts a new game, seeded `seed`.
    pub fn new_game(&mut self, seed: u64) {
        self.keeper.reset(seed);
    }

    /// Root visits for `limits`: its nodes if given; else, for a search with a time
    /// budget or an `open_ended` one (`go infinite`, `go ponder`), as many as the clock
    /// or `stop` allows ([`MAX_VISITS`]); else [`NetSettings::visits`].
    pub fn visits_for(&self, limits: &Limits, open_ended: bool) -> u32 {
        match limits.nodes {
            Some(n) => n.clamp(1, u64::from(MAX_VISITS)) as u32,
            None if open_ended || limits.budget().is_some() => MAX_VISITS,
            None => self.settings.visits,
        }
    }

    /// Searches the position at the end of `game` with up to `visits` root visits
    /// (reusing the tree of the game's earlier moves) and picks the move to play,
    /// never one of `banned` unless every legal move is.
    ///
    /// `should_stop` is asked between batches of leaves. A `stoppable` search (one that
    /// the clock or `stop` ends) keeps each evaluator call to about
    /// [`STOP_BATCH_TIME`], so a stop is answered in time; any other keeps the full
    /// batch, which keeps searches bounded by visits reproducible. `progress`, when
    /// given, gets the move the search would play so far, about every
    /// [`REPORT_INTERVAL`].
    ///
    /// # Errors
    /// [`NetError::Search`] without a legal move or for a failing evaluator.
    pub fn search(
        &mut self,
        game: &Game,
        banned: &[Move],
        visits: u32,
        stoppable: bool,
        should_stop: &dyn Fn() -> bool,
        mut progress: Option<&mut dyn FnMut(&MoveReport)>,
    ) -> Result<MoveReport, NetError> {
        let max_nodes = self.settings.max_tree_nodes();
        let search = self.keeper.sync(game)?;
        let mut leaf = QuiescenceBlend::new(self.evaluator.as_mut(), self.settings.leaf_quiescence)
            .map_err(|e| NetError::Settings(e.to_string()))?;
        let mut last_report = Instant::now();
        let result = run_search(
            search,
            &mut leaf,
            visits,
            max_nodes,
            stoppable.then_some(STOP_BATCH_TIME),
            should_stop,
            &mut |s| {
                if let Some(progress) = progress.as_mut()
                    && last_report.elapsed() >= REPORT_INTERVAL
                {
                    last_report = Instant::now();
                    let r = s.result();
                    if let Some(mv) = choose_allowed(&r, banned) {
                        progress(&MoveReport::new(&r, mv));
                    }
                }
            },
        )?;
        let mv = choose_allowed(&result, banned).ok_or(NetError::NoMove)?;
        Ok(MoveReport::new(&result, mv))
    }
}

/// One search tree per game, reused across moves: when the next position extends the
/// game the tree was built for, the tree advances along the new moves (keeping the
/// subtree of the moves played); any other position starts a fresh tree.
#[derive(Debug)]
struct TreeKeeper {
    params: SearchParams,
    seed: u64,
    tree: Option<Kept>,
}

#[derive(Debug)]
struct Kept {
    search: Search,
    start_fen: String,
    moves: Vec<Move>,
}

impl TreeKeeper {
    fn new(params: SearchParams, seed: u64) -> TreeKeeper {
        TreeKeeper {
            params,
            seed,
            tree: None,
        }
    }

    /// Forgets the tree; the next search starts fresh with `seed`.
    fn reset(&mut self, seed: u64) {
        self.seed = seed;
        self.tree = None;
    }

    /// Replaces the parameters (and forgets the tree).
    fn set_params(&mut self, params: SearchParams) {
        self.params = params;
        self.tree = None;
    }

    /// The search positioned at the end of `game`, reusing the tree when it can.
    ///
    /// # Errors
    /// [`SearchError::Params`] for bad parameters.
    fn sync(&mut self, game: &Game) -> Result<&mut Search, SearchError> {
        let moves: Vec<Move> = game.moves().collect();
        let start_fen = game.start().fen();
        let reuse = self.tree.as_ref().is_some_and(|k| {
            k.start_fen == start_fen && moves.len() >= k.moves.len() && moves.starts_with(&k.moves)
        });
        let advanced = reuse && {
            let k = self.tree.as_mut().expect("checked");
            let ok = moves[k.moves.len()..]
                .iter()
                .all(|&m| k.search.advance(m).is_ok());
            k.moves = moves.clone();
            ok
        };
        if !advanced {
            self.tree = Some(Kept {
                search: Search::new(self.params.clone(), game, self.seed)?,
                start_fen,
                moves,
            });
        }
        Ok(&mut self.tree.as_mut().expect("just set").search)
    }
}

/// How long one evaluator call may take in a search that `stop` or a clock can end
/// (see [`NetSearch::search`]).
pub const STOP_BATCH_TIME: Duration = Duration::from_millis(25);

/// How long an `info` line may wait during a search.
pub const REPORT_INTERVAL: Duration = Duration::from_millis(500);

/// Runs one move's search: up to `visits` root visits (tree-reuse visits count), in
/// batches of up to the search's `batch_size`, until `should_stop` says so (asked
/// between batches, once the root has been evaluated, so there is always a move to
/// play) or the tree holds `max_nodes`. `progress` is called after every batch.
///
/// `batch_time`: when given, batches shrink so that one evaluator call takes about
/// that long (measured per leaf as the search goes), so a `stop` arriving during a call
/// waits at most about that long on a slow network. Node-limited searches pass `None`
/// and keep the fixed batch size, which keeps them reproducible.
///
/// # Errors
/// [`SearchError::GameOver`] without a legal move; evaluator failures.
fn run_search(
    search: &mut Search,
    evaluator: &mut dyn Evaluator,
    visits: u32,
    max_nodes: usize,
    batch_time: Option<Duration>,
    should_stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&Search),
) -> Result<SearchResult, SearchError> {
    search.start(Playouts::full(visits.max(1)))?;
    let max_batch = search.params().batch_size.max(1);
    // Seconds per leaf, from the calls so far (the first call is the root alone).
    let mut per_leaf: Option<f64> = None;
    while !search.is_finished() {
        if search.root_visits() > 0 && (should_stop() || search.tree_size() >= max_nodes) {
            break;
        }
        let batch = match (batch_time, per_leaf) {
            (Some(t), Some(p)) if p > 0.0 => ((t.as_secs_f64() / p) as usize).clamp(1, max_batch),
            (Some(_), None) => 1,
            _ => max_batch,
        };
        let n = search.select_leaves(batch).len();
        if n == 0 {
            // Only terminal nodes were visited (they are scored at once); go on.
            continue;
        }
        let started = Instant::now();
        let evals = {
            let inputs: Vec<EvalInput<'_>> = search.pending().iter().map(|r| r.input()).collect();
            evaluator.evaluate(&inputs)
        };
        let p = started.elapsed().as_secs_f64() / n as f64;
        per_leaf = Some(per_leaf.map_or(p, |old| 0.7 * old + 0.3 * p));
        match evals {
            Ok(evals) => search.apply(&evals)?,
            Err(e) => {
                search.abandon_pending();
                return Err(e.into());
            }
        }
        progress(search);
    }
    Ok(search.result())
}

/// The move to play from `result`: the search's best move unless it is banned, else
/// the most-visited allowed move (ties: the higher prior). When every move is banned,
/// the best move all the same (the referee decides). `None` only for an empty result.
fn choose_allowed(result: &SearchResult, banned: &[Move]) -> Option<Move> {
    let best = result.best_move?;
    if !banned.contains(&best) {
        return Some(best);
    }
    let i = (0..result.moves.len())
        .filter(|&i| !banned.contains(&result.moves[i]))
        .max_by(|&a, &b| {
            result.visits[a].cmp(&result.visits[b]).then(
                result.prior[a]
                    .partial_cmp(&result.prior[b])
                    .unwrap_or(std::cmp::Ordering::Equal),
            )
        });
    Some(i.map_or(best, |i| result.moves[i]))
}

/// The exact value of `mv` (1 win, 0 draw, −1 loss for the side to move) when the rules
/// or the search's solver decided it.
fn move_exact(result: &SearchResult, mv: Move) -> Option<f32> {
    let i = result.moves.iter().position(|&m| m == mv)?;
    result.exact.get(i).copied().flatten()
}

/// The value of playing `mv`: exact if decided, else its Q, else (never visited) the
/// root value.
fn move_value(result: &SearchResult, mv: Move) -> f32 {
    move_exact(result, mv)
        .or_else(|| result.q_of(mv))
        .unwrap_or(result.value)
}

/// The `info` score of playing `mv` with principal variation `pv`: a mate score when
/// the move is a win or loss proven to end with no legal move (the distance, in moves,
/// is the PV's: the winner's moves are proven, the loser's are the most-visited
/// defence, so it is an upper bound), ±[`RULE_WIN_CP`] for a win or loss only the
/// rules decide (see the [module documentation](super)), else centipawns ([`value_to_cp`]).
fn report_score(result: &SearchResult, mv: Move, pv: &[Move]) -> Score {
    let moves = (pv.len().max(1) as i32 + 1) / 2;
    match (move_exact(result, mv), result.ending_of(mv)) {
        (Some(v), Some(Ending::NoMove)) if v >= 1.0 => Score::Mate(moves),
        (Some(v), Some(Ending::NoMove)) if v <= -1.0 => Score::Mate(-moves),
        (Some(v), Some(Ending::Rule)) if v >= 1.0 => Score::Cp(RULE_WIN_CP),
        (Some(v), Some(Ending::Rule)) if v <= -1.0 => Score::Cp(-RULE_WIN_CP),
        _ => Score::Cp(value_to_cp(move_value(result, mv))),
    }
}

/// The principal variation starting with `mv`: the search's PV if it starts there,
/// else just `mv`.
fn pv_for(result: &SearchResult, mv: Move) -> Vec<Move> {
    if result.pv.first() == Some(&mv) {
        result.pv.clone()
    } else {
        vec![mv]
    }
}

/// A depth for `info` lines and [`ThinkInfo`]: the average descent depth of this
/// search, rounded, at least 1.
fn report_depth(result: &SearchResult) -> u32 {
    (result.avg_depth.round() as u32).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_name_the_bad_key() {
        for (s, needle) in [
            (
                NetSettings {
                    visits: 0,
                    ..NetSettings::default()
                },
                "visits",
            ),
            (
                NetSettings {
                    batch: 0,
                    ..NetSettings::default()
                },
                "batch",
            ),
            (
                NetSettings {
                    c_puct: -1.0,
                    ..NetSettings::default()
                },
                "c_puct",
            ),
        ] {
            let e = s.validate().unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
        NetSettings::default().validate().unwrap();
    }
}
