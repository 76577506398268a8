//! The network player: PUCT search ([`xq_mcts`]) over an [`Evaluator`], usually a
//! network loaded through the process's [`xq_nn::backend`] (libtorch in `xqz-torch`;
//! this crate never links it).
//!
//! The same machinery serves two masters: [`NetPlayer`] (a [`Player`] for the referee,
//! matches and gating) and [`crate::ucci::mcts_backend::MctsBackend`] (the exported UCCI
//! engine). Both keep one search tree per game and reuse it across their own moves
//! ([`TreeKeeper`]), run the search in batches of leaves and look at the clock or the
//! `stop` flag between batches ([`run_search`]), and never play a banned move unless
//! every legal move is banned ([`choose_allowed`]).
//!
//! # Value and centipawns
//!
//! The search's value `v` is win − loss in [-1, 1] for the side to move. Engines and
//! GUIs speak centipawns, so [`value_to_cp`] maps `v` to `cp = 290 · atanh(v)`
//! (equivalently `v = tanh(cp / 290)`), clamped to ±[`MAX_CP`]. With it `v = 0.5` is
//! about +159, `v = 0.9` about +427 and `v = 0.99` about +768: a piece up (a horse or a
//! cannon, ~100 in the alpha-beta evaluation's scale) is a clear but not yet decisive
//! edge, as a network's value usually rates it. The scale constant is a convention, not
//! a fit; resign and draw thresholds in centipawns go through the same mapping
//! ([`cp_to_value`]), so they mean the same search value whatever the scale.
//!
//! # Mates and wins by the rules
//!
//! A move whose value the rules or the solver decided is reported as `score mate N`
//! only when every line of its proof ends with a side that has no legal move
//! (checkmate or stalemate, 困毙): GUIs and adapters read `mate` as checkmate, and
//! uci2wb, the UCCI adapter XBoard runs, answers `score mate 1` followed by `bestmove`
//! by claiming the game for the engine (`1-0 {mate}`), a claim XBoard checks against
//! the board and forfeits when false. A win or loss decided by the repetition
//! verdicts (perpetual check or chase, 长将/长捉) is reported as ±[`RULE_WIN_CP`]
//! centipawns instead (draws by the rules are 0 like any draw).

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
    player::{Decision, GameView, Player, PlayerError, Reply, ThinkInfo},
    tactics::QuiescenceBlend,
    ucci::engine::Score,
};

/// The largest centipawn score [`value_to_cp`] reports (a won position).
pub const MAX_CP: i32 = 9_999;

/// The `info` score of a win by the rules alone (a loss: its negative); see the module
/// documentation. Above anything a network value maps to (an `f32` below 1 gives at
/// most about 2500) and below the mate band of UCCI engines in ElephantEye's convention
/// (from 9800: `MATE_VALUE` 10000 less 200), so that a GUI reads it as a decided
/// game but not as a mate under either convention.
pub const RULE_WIN_CP: i32 = 5_000;

/// Centipawn scale of [`value_to_cp`]: `v = tanh(cp / CP_SCALE)`.
pub const CP_SCALE: f32 = 290.0;

/// Most root visits a time-bound search may reach (the clock, `stop` or the tree-size
/// cap end it long before on any real machine).
pub const MAX_VISITS: u32 = 1 << 30;

/// Rough bytes per tree node (statistics + links), for the `hashsize` tree-size cap.
pub const BYTES_PER_NODE: usize = 40;

/// Maps a search value (win − loss in [-1, 1]) to centipawns: `290 · atanh(v)`,
/// clamped to ±[`MAX_CP`]. See the module documentation.
pub fn value_to_cp(v: f32) -> i32 {
    if !v.is_finite() {
        return 0;
    }
    let v = v.clamp(-1.0, 1.0);
    let limit = (MAX_CP as f32 / CP_SCALE).tanh();
    if v >= limit {
        return MAX_CP;
    }
    if v <= -limit {
        return -MAX_CP;
    }
    (CP_SCALE * v.atanh()).round() as i32
}

/// The inverse of [`value_to_cp`]: `tanh(cp / 290)`. In f32 the round trip is exact
/// to a centipawn up to about ±1500; beyond, values are too close to ±1 to tell apart.
pub fn cp_to_value(cp: i32) -> f32 {
    (cp as f32 / CP_SCALE).tanh()
}

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
}

impl From<NetError> for PlayerError {
    fn from(e: NetError) -> PlayerError {
        PlayerError::Other(e.to_string())
    }
}

/// Loads a checkpoint (a sidecar `.json`, a checkpoint directory or a run directory)
/// through the process's registered network backend ([`xq_nn::backend`]): with
/// libtorch, its EMA weights on the GPU when there is one. `threads` > 0 sets the
/// backend's CPU threads first.
///
/// # Errors
/// [`NetError::Load`] when the process has no backend or the network cannot be read.
pub fn load_network(path: &Path, threads: usize) -> Result<Box<dyn Evaluator>, NetError> {
    let load = |why: String| NetError::Load {
        path: path.display().to_string(),
        why,
    };
    let backend = xq_nn::backend::backend().map_err(|e| load(e.to_string()))?;
    backend.set_threads(threads);
    backend.load(path).map_err(load)
}

/// Sets the registered backend's CPU threads (no backend: nothing to set).
pub fn set_backend_threads(threads: usize) {
    if let Ok(backend) = xq_nn::backend::backend() {
        backend.set_threads(threads);
    }
}

/// One search tree per game, reused across moves: when the next position extends the
/// game the tree was built for, the tree advances along the new moves (keeping the
/// subtree of the moves played); any other position starts a fresh tree.
#[derive(Debug)]
pub struct TreeKeeper {
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
    pub fn new(params: SearchParams, seed: u64) -> TreeKeeper {
        TreeKeeper {
            params,
            seed,
            tree: None,
        }
    }

    /// Forgets the tree; the next search starts fresh with `seed`.
    pub fn reset(&mut self, seed: u64) {
        self.seed = seed;
        self.tree = None;
    }

    /// Replaces the parameters (and forgets the tree).
    pub fn set_params(&mut self, params: SearchParams) {
        self.params = params;
        self.tree = None;
    }

    /// The search positioned at the end of `game`, reusing the tree when it can.
    ///
    /// # Errors
    /// [`SearchError::Params`] for bad parameters.
    pub fn sync(&mut self, game: &Game) -> Result<&mut Search, SearchError> {
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
/// (see [`run_search`]).
pub const STOP_BATCH_TIME: Duration = Duration::from_millis(25);

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
pub fn run_search(
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
pub fn choose_allowed(result: &SearchResult, banned: &[Move]) -> Option<Move> {
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
pub fn move_exact(result: &SearchResult, mv: Move) -> Option<f32> {
    let i = result.moves.iter().position(|&m| m == mv)?;
    result.exact.get(i).copied().flatten()
}

/// The value of playing `mv`: exact if decided, else its Q, else (never visited) the
/// root value.
pub fn move_value(result: &SearchResult, mv: Move) -> f32 {
    move_exact(result, mv)
        .or_else(|| result.q_of(mv))
        .unwrap_or(result.value)
}

/// The `info` score of playing `mv` with principal variation `pv`: a mate score when
/// the move is a win or loss proven to end with no legal move (the distance, in moves,
/// is the PV's: the winner's moves are proven, the loser's are the most-visited
/// defence, so it is an upper bound), ±[`RULE_WIN_CP`] for a win or loss only the
/// rules decide (see the module documentation), else centipawns ([`value_to_cp`]).
pub fn report_score(result: &SearchResult, mv: Move, pv: &[Move]) -> Score {
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
pub fn pv_for(result: &SearchResult, mv: Move) -> Vec<Move> {
    if result.pv.first() == Some(&mv) {
        result.pv.clone()
    } else {
        vec![mv]
    }
}

/// A depth for `info` lines and [`ThinkInfo`]: the average descent depth of this
/// search, rounded, at least 1.
pub fn report_depth(result: &SearchResult) -> u32 {
    (result.avg_depth.round() as u32).max(1)
}

/// MCTS over a network as a [`Player`]. See the module documentation.
pub struct NetPlayer {
    evaluator: Box<dyn Evaluator>,
    settings: NetSettings,
    keeper: TreeKeeper,
    name: String,
}

impl std::fmt::Debug for NetPlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetPlayer")
            .field("name", &self.name)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl NetPlayer {
    /// A player searching with `evaluator`.
    ///
    /// # Errors
    /// [`NetError::Settings`] for bad settings.
    pub fn new(
        evaluator: Box<dyn Evaluator>,
        settings: NetSettings,
        name: impl Into<String>,
    ) -> Result<NetPlayer, NetError> {
        settings.validate()?;
        Ok(NetPlayer {
            evaluator,
            keeper: TreeKeeper::new(settings.search_params(), 0),
            settings,
            name: name.into(),
        })
    }

    /// A player over a checkpoint (see [`load_network`]), named after its file and
    /// visits.
    ///
    /// # Errors
    /// If the checkpoint cannot be loaded or the settings are bad.
    pub fn load(checkpoint: &Path, settings: NetSettings) -> Result<NetPlayer, NetError> {
        settings.validate()?;
        let ev = load_network(checkpoint, settings.threads)?;
        let stem = checkpoint
            .file_stem()
            .map_or_else(|| "net".into(), |s| s.to_string_lossy().into_owned());
        let mut name = format!("net-{stem}-v{}", settings.visits);
        if settings.leaf_quiescence > 0.0 {
            name += &format!("-q{}", (settings.leaf_quiescence * 100.0).round());
        }
        if settings.gumbel_root {
            name += "-gumbel";
        }
        NetPlayer::new(ev, settings, name)
    }

    pub fn settings(&self) -> &NetSettings {
        &self.settings
    }

    /// The root-visit target and deadline for these limits: nodes if given, else as
    /// many visits as the time budget allows, else [`NetSettings::visits`].
    fn budget(&self, limits: &Limits) -> (u32, Option<Instant>) {
        let time = limits.budget();
        let visits = match (limits.nodes, time) {
            (Some(n), _) => n.clamp(1, MAX_VISITS as u64) as u32,
            (None, Some(_)) => MAX_VISITS,
            (None, None) => self.settings.visits,
        };
        (visits, time.map(|t| Instant::now() + t))
    }
}

impl Player for NetPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, seed: u64) -> Result<(), PlayerError> {
        self.keeper.reset(seed);
        Ok(())
    }

    fn think(&mut self, view: &GameView<'_>, limits: &Limits) -> Result<Reply, PlayerError> {
        let (visits, deadline) = self.budget(limits);
        let max_nodes = self.settings.max_tree_nodes();
        let search = self
            .keeper
            .sync(view.game)
            .map_err(|e| PlayerError::Other(e.to_string()))?;
        let should_stop = || deadline.is_some_and(|d| Instant::now() >= d);
        let mut leaf = QuiescenceBlend::new(self.evaluator.as_mut(), self.settings.leaf_quiescence)
            .map_err(|e| PlayerError::Other(e.to_string()))?;
        let result = run_search(
            search,
            &mut leaf,
            visits,
            max_nodes,
            deadline.map(|_| STOP_BATCH_TIME),
            &should_stop,
            &mut |_| {},
        )
        .map_err(|e| PlayerError::Other(e.to_string()))?;
        let mv = match choose_allowed(&result, view.banned) {
            Some(m) => m,
            None => *view
                .allowed_moves()
                .first()
                .ok_or_else(|| PlayerError::Other("no legal move".into()))?,
        };
        let cp = value_to_cp(move_value(&result, mv));
        let s = &self.settings;
        let resign = s.resign_cp > 0 && cp <= -s.resign_cp;
        Ok(Reply {
            decision: if resign {
                Decision::Resign
            } else {
                Decision::Move(mv)
            },
            offer_draw: s.draw_cp.is_some_and(|d| cp <= d),
            info: ThinkInfo {
                score: Some(think_score(&result, mv, cp)),
                depth: Some(report_depth(&result)),
                nodes: Some(u64::from(result.root_visits)),
                pv: pv_for(&result, mv),
            },
        })
    }
}

/// [`ThinkInfo::score`]: centipawns, or for a proven result the alpha-beta engine's
/// mate convention (±`MATE` less the distance in plies).
fn think_score(result: &SearchResult, mv: Move, cp: i32) -> i32 {
    use crate::alphabeta::MATE;
    match report_score(result, mv, &pv_for(result, mv)) {
        Score::Mate(n) if n > 0 => MATE - (2 * n - 1),
        Score::Mate(n) => -MATE + 2 * n.abs(),
        Score::Cp(_) => cp,
    }
}

/// How long an `info` line may wait during a search.
pub const REPORT_INTERVAL: Duration = Duration::from_millis(500);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centipawn_mapping_is_odd_monotone_and_invertible() {
        assert_eq!(value_to_cp(0.0), 0);
        assert_eq!(value_to_cp(1.0), MAX_CP);
        assert_eq!(value_to_cp(-1.0), -MAX_CP);
        assert_eq!(value_to_cp(f32::NAN), 0);
        assert_eq!(value_to_cp(0.5), 159);
        let mut last = -MAX_CP - 1;
        for i in -100..=100 {
            let v = i as f32 / 100.0;
            let cp = value_to_cp(v);
            assert!(cp > last || cp == MAX_CP, "{v}: {cp} after {last}");
            assert_eq!(cp, -value_to_cp(-v));
            last = cp;
        }
        // A network value short of ±1 stays below the score of a win by the rules.
        let almost = 1.0 - f32::EPSILON / 2.0;
        assert!(almost < 1.0 && value_to_cp(almost) < RULE_WIN_CP);
        for cp in [-1500, -300, -1, 0, 1, 150, 900, 1500] {
            assert!((value_to_cp(cp_to_value(cp)) - cp).abs() <= 1, "{cp}");
        }
    }

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
