//! Strength evaluation for xqzero.
//!
//! This crate answers "how strong is it?" with honest statistics and runs
//! tournaments. The parts here are pure: they never play a game themselves.
//! A match runner feeds game results in and reads decisions and tables out.
//!
//! - [`result`]: the vocabulary shared by everything else ([`GameResult`],
//!   [`GameRecord`]).
//! - [`stats`]: score, Elo with confidence intervals, likelihood of
//!   superiority, the pentanomial GSPRT and a maximum-likelihood rating ladder.
//! - [`tournament`]: round robin (Berger tables), Swiss and knockout pairing
//!   as a state machine, with standings, tie-breaks (CXA rules, 第15条) and
//!   crosstables.
//!
//! # Example
//!
//! ```
//! use xq_eval::stats::{SprtConfig, SprtDecision, Pentanomial};
//! use xq_eval::GameResult;
//!
//! let sprt = SprtConfig::new(0.0, 10.0, 0.05, 0.05).unwrap();
//! let mut pairs = Pentanomial::default();
//! pairs.record_pair(GameResult::Win, GameResult::Draw);
//! assert_eq!(sprt.evaluate(&pairs).decision, SprtDecision::Continue);
//! ```

pub mod alphabeta;
pub mod clock;
pub mod control;
pub mod gate;
pub mod matches;
pub mod net;
pub mod openings;
pub mod player;
pub mod player_dir;
pub mod referee;
pub mod result;
pub mod spec;
pub mod stats;
pub mod strength;
pub mod tactics;
pub mod tournament;
pub mod ucci;

pub use result::{GameRecord, GameResult};
