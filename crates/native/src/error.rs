//! The crate's error type.

use std::path::PathBuf;

use xq_nn::checkpoint::CheckpointError;

/// Why a network could not be loaded or evaluated natively.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// The sidecar could not be found, read or accepted.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The weights file is not a readable safetensors file.
    #[error("{path}: not a safetensors file: {what}")]
    Format { path: PathBuf, what: String },
    /// The weights do not fit the architecture the sidecar names (a missing, extra or
    /// mis-shaped tensor, or one that is not f32).
    #[error("{path}: {what}")]
    Weights { path: PathBuf, what: String },
    /// A batch whose size does not match its inputs.
    #[error("bad batch: {0}")]
    BadBatch(String),
    /// A thread evaluating part of a batch could not start or panicked.
    #[error("evaluator thread: {0}")]
    Thread(String),
}
