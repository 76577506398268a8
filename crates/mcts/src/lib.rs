//! Monte-Carlo tree search for xqzero, generic over the [`xq_nn::Evaluator`] contract.
//!
//! - PUCT with the knobs of the strong engines (AlphaZero log-growing c_puct, first-play
//!   urgency reduction, Dirichlet root noise with α scaled by the number of legal moves,
//!   root policy temperature, move temperature schedule, tree reuse, early stop) and
//!   KataGo's training-target techniques (playout cap randomization, forced playouts
//!   with policy-target pruning); all in one [`SearchParams`].
//! - A Gumbel root search (sequential halving, completed-Q policy targets) selectable
//!   through [`RootAlgorithm::Gumbel`].
//! - Terminal and repetition nodes are scored by the rules core ([`xq_core::Game`]'s
//!   CXA adjudication), never by the network; a repetition in the tree is judged at its
//!   first recurrence ([`SearchParams::repetition_count`]). Exact results propagate
//!   (MCTS-solver): a node with a winning move, or whose moves are all decided, is
//!   proven and no longer searched below, so short mates are found and kept.
//! - Nodes live in an index arena (16 bytes of selection statistics plus 20 of links,
//!   [`NODE_BYTES`]); a node's children are created together when it is evaluated,
//!   from the legal moves generated once when it was reached. Tree reuse compacts the
//!   kept subtree into a second arena, so memory follows the live tree.
//! - Two ways to drive it: [`Search::run`] with an evaluator, or the step form
//!   [`Search::select_leaves`] / [`Search::apply`] for a server that batches leaves of
//!   many games into one evaluator call.
//!
//! Values are win − loss in [-1, 1] from the side to move's view (negamax).
//!
//! ```
//! use xq_core::Position;
//! use xq_mcts::{Search, SearchParams};
//! use xq_nn::UniformEvaluator;
//!
//! let mut search = Search::from_position(SearchParams::for_play(), Position::startpos(), 7).unwrap();
//! let result = search.run(&mut UniformEvaluator, 200).unwrap();
//! assert_eq!(result.root_visits, 200);
//! let mv = search.choose_move(&result).unwrap();
//! search.advance(mv).unwrap();
//! ```
//!
//! Step form, as a batching server uses it:
//!
//! ```
//! # use xq_core::Position;
//! # use xq_mcts::{Playouts, Search, SearchParams};
//! # use xq_nn::{Evaluator, UniformEvaluator};
//! let mut games: Vec<Search> = (0..4)
//!     .map(|seed| Search::from_position(SearchParams::default(), Position::startpos(), seed).unwrap())
//!     .collect();
//! for s in &mut games {
//!     s.start(Playouts::full(64)).unwrap();
//! }
//! let mut net = UniformEvaluator;
//! while games.iter().any(|s| !s.is_finished()) {
//!     for s in games.iter_mut().filter(|s| !s.is_finished()) {
//!         s.select_leaves(8);
//!     }
//!     let inputs: Vec<_> = games.iter().flat_map(|s| s.pending().iter().map(|r| r.input())).collect();
//!     let evals = net.evaluate(&inputs).unwrap();
//!     let mut at = 0;
//!     for s in &mut games {
//!         let n = s.pending().len();
//!         s.apply(&evals[at..at + n]).unwrap();
//!         at += n;
//!     }
//! }
//! assert!(games.iter().all(|s| s.result().root_visits >= 64));
//! ```

mod gumbel;
mod noise;
mod params;
mod result;
mod rules;
mod search;
mod ties;
mod tree;

pub use params::{
    GumbelParams, InteriorSelection, ParamsError, PlayoutCap, Playouts, RootAlgorithm,
    SearchParams, TargetPrior, TemperatureSchedule,
};
pub use result::SearchResult;
pub use search::{LeafRequest, Search, SearchError};
pub use tree::{Ending, NODE_BYTES};
