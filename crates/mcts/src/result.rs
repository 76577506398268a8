//! `SearchResult`: what a search hands to self-play (training targets) and to the
//! engine (`info` lines).

use xq_core::Move;

use crate::tree::Ending;

/// The artifacts of one search. Per-move vectors follow `moves`, the root's legal moves
/// in the order the network's policy used.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    /// The root's legal moves (empty only if the root was never evaluated).
    pub moves: Vec<Move>,
    /// Completed visits per move (raw, including forced playouts).
    pub visits: Vec<u32>,
    /// The policy training target, summing to 1: visit counts after policy-target
    /// pruning (PUCT; raw counts when pruning is off or the search was cheap), or the
    /// Gumbel improved policy softmax(logits + σ(completed Q)).
    pub policy_target: Vec<f32>,
    /// Whether `policy_target` had forced playouts pruned.
    pub pruned: bool,
    /// The root priors the search used (after root temperature and noise).
    pub prior: Vec<f32>,
    /// Q per move from the root side's view (win − loss, in [-1, 1]); `None` if unvisited.
    pub q: Vec<Option<f32>>,
    /// Per move, its exact value from the root side's view (1 win, 0 draw, −1 loss)
    /// when the rules or the solver decided it; `None` while undecided.
    pub exact: Vec<Option<f32>>,
    /// Per move, why its exact value is exact: [`Ending::NoMove`] when every line of
    /// the proof ends in checkmate or stalemate, [`Ending::Rule`] when a repetition
    /// verdict, the move limit or insufficient material ends one; `None` while
    /// undecided. Engines report only the first as a mate.
    pub ending: Vec<Option<Ending>>,
    /// The root's value for the side to move: win − loss, averaged over the tree.
    pub value: f32,
    /// The root's win/draw/loss for the side to move, averaged over the tree.
    pub wdl: [f32; 3],
    /// The move the search recommends: the most-visited (PUCT) or the Gumbel action.
    pub best_move: Option<Move>,
    /// Principal variation: `best_move`, then at each level a move that wins by force
    /// if one is proven, else the most-visited reply.
    pub pv: Vec<Move>,
    /// Completed visits of the root, including those kept by tree reuse.
    pub root_visits: u32,
    /// Simulations (descents ending at a leaf or a terminal node) made by this search.
    pub playouts: u32,
    /// Nodes in the tree.
    pub tree_nodes: usize,
    /// Deepest descent of this search, in plies from the root.
    pub max_depth: u32,
    /// Average descent depth of this search.
    pub avg_depth: f32,
    /// Whether this was a full search (its target is training data under the playout
    /// cap).
    pub full: bool,
    /// Whether the search stopped before its budget because the best move was settled.
    pub early_stopped: bool,
}

impl SearchResult {
    /// The visit count of `mv` (0 if it is not a root move).
    pub fn visits_of(&self, mv: Move) -> u32 {
        self.moves
            .iter()
            .position(|&m| m == mv)
            .map_or(0, |i| self.visits[i])
    }

    /// Why `mv`'s value is exact (see [`SearchResult::ending`]); `None` while it is
    /// undecided or `mv` is not a root move.
    pub fn ending_of(&self, mv: Move) -> Option<Ending> {
        self.moves
            .iter()
            .position(|&m| m == mv)
            .and_then(|i| self.ending.get(i).copied().flatten())
    }

    /// The Q of `mv` from the root side's view, if visited.
    pub fn q_of(&self, mv: Move) -> Option<f32> {
        self.moves
            .iter()
            .position(|&m| m == mv)
            .and_then(|i| self.q[i])
    }
}
