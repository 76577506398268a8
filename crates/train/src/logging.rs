//! TensorBoard tags of the trainer. The writer is [`xq_data::tensorboard::TbLogger`],
//! which sits in xq-data so that this crate, the one that links libtorch, depends on
//! nothing above xq-data (not xq-run, not xq-eval).
//! The trainer prints nothing: the caller draws progress from each step's
//! [`StepStats`](crate::StepStats), whose `logged` holds the rows of a logging interval.

use xq_data::tensorboard::TbError;

use crate::error::TrainError;

/// TensorBoard tags written by the trainer.
pub mod tags {
    pub const POLICY_LOSS: &str = "loss/policy";
    pub const VALUE_LOSS: &str = "loss/value";
    pub const TOTAL_LOSS: &str = "loss/total";
    pub const POLICY_ACCURACY: &str = "accuracy/policy_top1";
    pub const VALUE_ACCURACY: &str = "accuracy/value";
    pub const LEARNING_RATE: &str = "train/learning_rate";
    pub const GRAD_NORM: &str = "train/grad_norm";
    pub const SAMPLES_PER_SEC: &str = "train/samples_per_sec";
    pub const WINDOW_SIZE: &str = "data/window_size";
    /// Share of wall time the trainer waited for batches (see `Trainer::add_data_wait`).
    pub const DATA_WAIT: &str = "data/wait_fraction";
}

/// A TensorBoard file the trainer cannot write is an I/O error naming it, kept by the
/// trainer until its caller asks (`Trainer::take_tensorboard_failure`).
impl From<TbError> for TrainError {
    fn from(e: TbError) -> TrainError {
        TrainError::io(e.path, e.source)
    }
}
