//! xq-train: the only crate of xqzero that links libtorch (through `tch`).
//!
//! - [`net`]: the residual network ([`Net`]), configured by [`NetConfig`].
//! - [`Trainer`]: optimiser steps on host batches ([`HostBatch`]), EMA, checkpoints
//!   ([`checkpoint`]), and TensorBoard scalars (the trainer prints nothing:
//!   progress reaches the caller as [`StepStats`]).
//! - [`TorchEvaluator`]: the `xq_nn::Evaluator` over a checkpoint, for search and play.
//! - [`bench`](mod@bench): trainer throughput against an equivalent PyTorch loop.
//!
//! Binaries that link this crate find libtorch through an rpath set by build scripts: this
//! crate's `build.rs` for its own tests, and in dependents a `build.rs` that reads
//! `DEP_XQTORCH_LIBTORCH_LIB` (see the root package's `build.rs`).

pub mod batch;
pub mod bench;
pub mod checkpoint;
pub mod config;
pub mod cuda;
pub mod ema;
pub mod error;
pub mod evaluator;
pub mod logging;
pub mod loss;
pub mod net;
pub mod optim;
pub mod trainer;

pub use batch::{HostBatch, OwnedBatch};
pub use config::{
    DeviceChoice, LrSchedule, NetConfig, OptimizerConfig, Precision, TrainConfig, device_name,
    tch_device,
};
pub use error::TrainError;
pub use evaluator::{
    EvaluatorOptions, TorchBackend, TorchEvaluator, WeightsChoice, register_backend,
};
pub use loss::LossWeights;
pub use net::Net;
pub use trainer::{EvalStats, Logged, Means, StepMeans, StepStats, Trainer};

/// Whether a CUDA device is usable by libtorch in this process.
pub fn cuda_available() -> bool {
    tch::Cuda::is_available()
}

/// Sets libtorch's intra-op CPU thread count for the whole process (`0` leaves
/// libtorch's default). The trainer calls it with its `threads`; players and engines
/// that load a [`TorchEvaluator`] without a trainer call it themselves.
pub fn set_num_threads(threads: usize) {
    if threads > 0 {
        tch::set_num_threads(threads.min(i32::MAX as usize) as i32);
    }
}
