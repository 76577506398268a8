//! xq-native: inference of xqzero's networks on the CPU without libtorch.
//!
//! It reads the checkpoints the trainer writes (the sidecar through
//! [`xq_nn::checkpoint`], the safetensors weights by their layer names) and evaluates
//! the residual policy/value network of `xq_train::net` with batch norm folded into the
//! convolutions, a sparse gather-add input layer and GEMM convolutions ([`net`] says
//! why each). Its outputs equal libtorch's within the tolerance that
//! `crates/train/tests/native.rs` checks.
//!
//! - [`NativeNet`]: a loaded network and its forward pass on encoded positions.
//! - [`NativeEvaluator`]: the `xq_nn::Evaluator` over it, splitting a batch over threads.
//! - [`NativeBackend`]: the network backend (`xq_nn::backend`) that loads them; this is
//!   what lets a process run networks without linking libtorch. Which backend a
//!   process uses is `xq_nn::BackendChoice` (`XQZ_BACKEND`).

mod error;
mod evaluator;
pub mod net;
mod weights;

pub use error::NativeError;
pub use evaluator::{NativeBackend, NativeEvaluator, load_net, register_backend};
pub use net::{NativeNet, Scratch};
