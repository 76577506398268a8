//! xq-run: the run directory of a training run, above the torch line.
//!
//! Every process of a run meets the others in one directory (ARCHITECTURE.md, "The run
//! directory"). This crate opens it ([`RunDir`]), holds its model pointer as one typed
//! [`ModelRef`] and lists its candidates and accepted networks, and owns what is read
//! and written there besides chunks, checkpoints and TensorBoard events: the event log
//! ([`events`]), the learning curve ([`curve`]) and what `xqz report` shows
//! ([`report`]). None of it needs a network, so it links no libtorch: `xqz report` and
//! `xqz strength --run` run in the libtorch-free `xqz`. The paths themselves are spelled
//! in [`xq_data::layout`], the checkpoint sidecar in [`xq_nn::checkpoint`], the
//! TensorBoard writer in [`xq_data::tensorboard`].

pub mod curve;
mod error;
pub mod events;
pub mod report;
mod rundir;

pub use error::RunError;
pub use rundir::{ModelRef, RunDir, model_name, model_step, now, safe_file_name, write_atomic};
