//! The network player: PUCT search ([`xq_mcts`]) over an [`Evaluator`], usually a
//! network loaded through the process's [`xq_nn::backend`] (libtorch in `xqz-torch`;
//! this crate never links it).
//!
//! The search ([`NetSearch`]) serves two masters: [`NetPlayer`] (a
//! [`Player`](crate::player::Player) for the referee, matches and gating) and
//! the UCCI engine's `MctsBackend` (module `ucci`, the engine xqzero exports).
//! It keeps one search tree per game and reuses it across the game's moves, runs the
//! search in batches of leaves and looks at the clock or the `stop` flag between
//! batches, mixes the leaf quiescence of [`crate::tactics`] into every leaf when the
//! settings ask for it, and never plays a banned move unless every legal move is
//! banned. Values are reported in centipawns through [`crate::score`].
//!
//! # Mates and wins by the rules
//!
//! A move whose value the rules or the solver decided is reported as `score mate N`
//! only when every line of its proof ends with a side that has no legal move
//! (checkmate or stalemate, 困毙): GUIs and adapters read `mate` as checkmate, and
//! uci2wb, the UCCI adapter XBoard runs, answers `score mate 1` followed by `bestmove`
//! by claiming the game for the engine (`1-0 {mate}`), a claim XBoard checks against
//! the board and forfeits when false. A win or loss decided by the repetition
//! verdicts (perpetual check or chase, 长将/长捉) is reported as
//! ±[`RULE_WIN_CP`](crate::score::RULE_WIN_CP) centipawns instead (draws by the rules
//! are 0 like any draw).
//!
//! [`Evaluator`]: xq_nn::Evaluator

mod player;
mod search;

pub use player::NetPlayer;
pub use search::{
    BYTES_PER_NODE, MAX_VISITS, MoveReport, NetError, NetSearch, NetSettings, REPORT_INTERVAL,
    STOP_BATCH_TIME, load_network,
};
