//! xq-run: the run directory of a training run, above the torch line.
//!
//! Every process of a run meets the others in one directory (ARCHITECTURE.md, "The run
//! directory"). This crate opens it ([`RunDir`]), holds its model pointer as one typed
//! [`ModelRef`] and lists its candidates and accepted networks, and owns what is read
//! and written there besides chunks and checkpoints: the event log ([`events`]), the
//! learning curve ([`curve`]), what `xqz report` shows ([`report`]) and the TensorBoard
//! scalars ([`tensorboard`]). None of it needs a network, so it links no libtorch:
//! `xqz report` and `xqz strength --run` run in the libtorch-free `xqz`, and xq-train
//! takes its TensorBoard writer from here. The paths themselves are spelled in
//! [`xq_data::layout`], the checkpoint sidecar in [`xq_nn::checkpoint`].

pub mod curve;
mod error;
pub mod events;
pub mod report;
mod rundir;
pub mod tensorboard;

pub use error::RunError;
pub use rundir::{ModelRef, RunDir, model_name, model_step, now, safe_file_name, write_atomic};
