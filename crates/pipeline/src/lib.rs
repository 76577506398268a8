//! xq-pipeline: the training run of xqzero.
//!
//! Everything a run does between processes that meet in a run directory (which
//! xq-run opens, with its event log, learning curve and report data): the train
//! session, the gatekeeper, rating, export of players and the scheduler of `xqz run`.
//! The `xqz` binaries parse arguments, draw progress and print; this crate decides,
//! reports through [`progress::RunObserver`] and returns what it did.
//!
//! Modules layer one way: [`backend`], [`config`] and [`progress`] at the bottom, then
//! [`gate`], [`rating`], [`gauntlet`], [`selfplay`], [`train`], [`export`] and
//! [`targets`] (the target-quality benchmark, `xqz bench targets`), and [`run`], the
//! scheduler, on top.

pub mod backend;
pub mod config;
pub mod export;
pub mod gate;
pub mod gauntlet;
pub mod progress;
pub mod rating;
pub mod run;
pub mod selfplay;
pub mod targets;
pub mod train;
