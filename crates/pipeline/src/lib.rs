//! xq-pipeline: the training run of xqzero.
//!
//! Everything a run does between processes that meet in a run directory: the directory
//! layout and model pointer, the typed event log, the train session, the gatekeeper,
//! rating, export of players, the scheduler of `xqz run`, and what `xqz report` shows
//! (the learning curve among it). The `xqz` binaries only parse arguments and draw
//! progress; this crate decides.

pub mod config;
pub mod curve;
pub mod events;
pub mod export;
pub mod gate;
pub mod progress;
pub mod report;
pub mod run;
pub mod rundir;
pub mod selfplay;
pub mod train;
