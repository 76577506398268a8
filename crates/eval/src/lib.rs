//! Plays xqzero's games.
//!
//! Everything here plays, or takes part in playing, games of Xiangqi: players
//! (random, greedy, alpha-beta, a network searched with MCTS, external UCCI/UCI
//! engines, exported player directories), the referee that runs a game under the
//! rules and a clock, openings, matches of colour-reversed pairs, the gatekeeper's
//! match, the tournament runner, and the UCCI engine xqzero exports. What the
//! games are worth (results, Elo, SPRT, ladders, the anchored strength scale,
//! tournament pairing and standings) is the business of `xq_rating`, which plays
//! nothing: this crate feeds it results and reads decisions and tables back.
//!
//! - [`player`], [`spec`]: the [`player::Player`] trait, the built-in players and
//!   the text that names a player (`alphabeta:depth=2`, `net:CKPT`, `fsf:skill=5`).
//! - [`referee`], [`clock`], [`openings`]: one game, played to its end.
//! - [`matches`](mod@matches), [`gate`], [`tournament`]: many games, and what they decide.
//! - [`anchors`]: which players the anchors of the strength scale are.
//! - [`net`], [`tactics`], [`alphabeta`]: the searches behind the players;
//!   [`adjudicate`]: a result for a game record without one, from the alpha-beta search.
//! - [`ucci`]: a client for external engines and the engine xqzero exports, with
//!   [`score`] the scores both sides of it speak.
//!
//! A network player gets its evaluator from the process's registered backend
//! ([`xq_nn::backend`]): this crate never links libtorch.

pub mod adjudicate;
pub mod alphabeta;
pub mod anchors;
pub mod clock;
pub mod control;
pub mod gate;
pub mod matches;
pub mod net;
pub mod openings;
pub mod player;
pub mod player_dir;
pub mod referee;
pub mod score;
pub mod spec;
pub mod tactics;
pub mod tournament;
pub mod ucci;
