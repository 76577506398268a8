//! Ratings and competitions for xqzero, without playing a game.
//!
//! Everything here works on results that someone else produced: game results in,
//! statistics, decisions, ratings and tables out. Playing the games (players, the
//! referee, clocks, matches, the tournament runner) is xq-eval's.
//!
//! - [`result`]: the vocabulary shared by everything else ([`GameResult`],
//!   [`GameRecord`], a competition's [`Score`](result::Score) and the
//!   [`Side`](result::Side) it is read from).
//! - [`stats`]: score, Elo with confidence intervals, likelihood of superiority, the
//!   pentanomial GSPRT, a maximum-likelihood rating ladder and ratings against
//!   anchors of fixed rating.
//! - [`strength`]: the anchored strength scale, its calibrated anchors embedded from
//!   `strength/anchors.json`, and the strength records `xqz strength` writes.
//! - [`summary`]: a match in numbers, as it stands ([`summary::MatchStatus`]) and as
//!   the record events and reports carry ([`summary::MatchSummary`]).
//! - [`gate`]: the gatekeeper's rule on a match's result.
//! - [`tournament`]: round robin (Berger tables), groups, Swiss, knockout and double
//!   elimination as state machines, team events, standings with the tie-breaks of
//!   the CXA rules (第15条) and crosstables.
//!
//! # Why a crate of its own
//!
//! Of the workspace this crate uses only xq-core's fixed hashes (`xq_core::hash`, for
//! the seed of a team's line-up lot): no position, network or search. Whatever only
//! reads results (the run report, the learning curve, a tournament's tables, a gate's
//! decision) needs none of them, and nothing in here can start to play a game by
//! accident. The sides of a game are its own ([`Side`](result::Side)), not the rules'
//! colours.
//!
//! # Example
//!
//! ```
//! use xq_rating::stats::{SprtConfig, SprtDecision, Pentanomial};
//! use xq_rating::GameResult;
//!
//! let sprt = SprtConfig::new(0.0, 10.0, 0.05, 0.05).unwrap();
//! let mut pairs = Pentanomial::default();
//! pairs.record_pair(GameResult::Win, GameResult::Draw);
//! assert_eq!(sprt.evaluate(&pairs).decision, SprtDecision::Continue);
//! ```

pub mod gate;
pub mod result;
pub mod stats;
pub mod strength;
pub mod summary;
pub mod tournament;

pub use result::{GameRecord, GameResult};
