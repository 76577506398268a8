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
    /// The checkpoint was trained on a different input encoding than this build produces.
    #[error(
        "{path}: checkpoint uses input encoding version {found}, this build encodes version \
         {expected}; retrain or convert the network"
    )]
    EncodingVersion {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    /// The checkpoint's policy head follows a different move index.
    #[error(
        "{path}: checkpoint uses policy index version {found} ({found_size} moves), this build \
         uses version {expected} ({expected_size} moves)"
    )]
    PolicyIndexVersion {
        path: PathBuf,
        found: u32,
        found_size: usize,
        expected: u32,
        expected_size: usize,
    },
    /// A checkpoint file is not what its sidecar promises (missing or mis-shaped tensors).
    #[error("{path}: {what}")]
    BadCheckpoint { path: PathBuf, what: String },
    /// No complete checkpoint (one with a sidecar) where one was required.
    #[error("{0}: no checkpoint found (a checkpoint is complete once its .json sidecar exists)")]
    NoCheckpoint(PathBuf),
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

/// A checkpoint's sidecar problems keep their own variants here, so callers match one
/// error type whichever crate read the sidecar.
impl From<xq_nn::checkpoint::CheckpointError> for TrainError {
    fn from(e: xq_nn::checkpoint::CheckpointError) -> TrainError {
        use xq_nn::checkpoint::CheckpointError as C;
        match e {
            C::Io { path, source } => TrainError::Io { path, source },
            C::Json { path, source } => TrainError::Json { path, source },
            C::EncodingVersion {
                path,
                found,
                expected,
            } => TrainError::EncodingVersion {
                path,
                found,
                expected,
            },
            C::PolicyIndexVersion {
                path,
                found,
                found_size,
                expected,
                expected_size,
            } => TrainError::PolicyIndexVersion {
                path,
                found,
                found_size,
                expected,
                expected_size,
            },
            C::BadCheckpoint { path, what } => TrainError::BadCheckpoint { path, what },
            C::NoCheckpoint(path) => TrainError::NoCheckpoint(path),
        }
    }
}

impl From<xq_nn::checkpoint::InvalidNetConfig> for TrainError {
    fn from(e: xq_nn::checkpoint::InvalidNetConfig) -> TrainError {
        TrainError::Config(e.0)
    }
}
