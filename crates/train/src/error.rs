//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong while building, training, saving or loading a network.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// libtorch refused an operation (shape mismatch, device unavailable, out of memory…).
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file could not be written (a full disk, a read-only directory); `path` is the
    /// file that was being written, and the previous version of it, if any, is intact.
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: invalid JSON: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A configuration value is missing, unknown or out of range; the message names the key.
    #[error("config: {0}")]
    Config(String),
    /// A checkpoint's sidecar is missing, unreadable, of another format, input encoding
    /// or policy index, or names an impossible network: what the one sidecar reader
    /// (`xq_nn::checkpoint`) says, for every backend alike.
    #[error(transparent)]
    Checkpoint(#[from] xq_nn::checkpoint::CheckpointError),
    /// A checkpoint file is not what its sidecar promises (missing or mis-shaped tensors).
    #[error("{path}: {what}")]
    BadCheckpoint { path: PathBuf, what: String },
    /// `Trainer::new` on a run directory that already holds checkpoints.
    #[error("{0}: the run already has checkpoints; resume it instead of starting over")]
    RunExists(PathBuf),
    /// The resumed run's configuration contradicts its checkpoint.
    #[error("config contradicts the checkpoint: {0}")]
    Mismatch(String),
    /// A batch with inconsistent sizes.
    #[error("bad batch: {0}")]
    BadBatch(String),
    /// One of an evaluator's worker threads (see `EvaluatorOptions::workers`) could not
    /// start, ended, or failed on its part of a batch.
    #[error("evaluator thread: {0}")]
    EvalThread(String),
    /// A CUDA stream or graph could not be made or used (`cuda`), or the binary was
    /// built without them.
    #[error("CUDA {0}")]
    Cuda(String),
    /// A benchmark's helper (the PyTorch reference) failed.
    #[error("benchmark: {0}")]
    Bench(String),
    /// The loss became NaN or infinite.
    #[error("training diverged at step {step}: loss is {loss}")]
    Diverged { step: u64, loss: f64 },
}

impl TrainError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> TrainError {
        TrainError::Io {
            path: path.into(),
            source,
        }
    }
}

impl From<xq_nn::checkpoint::InvalidNetConfig> for TrainError {
    fn from(e: xq_nn::checkpoint::InvalidNetConfig) -> TrainError {
        TrainError::Config(e.0)
    }
}
