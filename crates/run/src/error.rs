//! The crate's error type.

use std::{io, path::PathBuf};

use xq_nn::checkpoint::CheckpointError;

/// What can go wrong opening, reading or writing a run directory. Every variant names
/// the path concerned.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A directory of the run's layout cannot be created.
    #[error("cannot create {path}{}: {source}", writable_hint(source))]
    Create {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A file could not be written; its previous version, if any, is intact (every
    /// write is atomic).
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot append to {path}: {source}")]
    Append {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot copy {from} to {to}: {source}")]
    Copy {
        from: PathBuf,
        to: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Renames in `dir` are not atomic (an object-store mount): the run's pointer and
    /// chunks would be seen half written. (`error` is part of the message, so it is not
    /// repeated as a source.)
    #[error(
        "{dir} does not support atomic rename ({error}); a run directory must be on a POSIX \
         filesystem (a local disk, NFS, Lustre, CephFS, GPFS), not an object-store mount"
    )]
    NotAtomic { dir: PathBuf, error: io::Error },
    /// A reader was given a run directory that does not exist.
    #[error("run directory {0} does not exist (or is not a directory)")]
    Missing(PathBuf),
    /// `models/accepted.json` is neither a model pointer nor (as older runs wrote it) a
    /// checkpoint sidecar.
    #[error("corrupt model pointer {path}: {source}")]
    Pointer {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A model that is neither a checkpoint sidecar nor a directory holding one.
    #[error("{0} does not exist or holds no checkpoint")]
    NoCheckpoint(PathBuf),
    /// A model asked for by name that the run does not have.
    #[error("model {name:?} not found (tried {tried})")]
    NoModel { name: String, tried: String },
    /// A checkpoint file name without a step (`ckpt-S.json`).
    #[error("bad checkpoint path {0}")]
    CheckpointName(PathBuf),
    /// A checkpoint directory that cannot be listed, or a sidecar that cannot be used.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
}

/// What to check when a directory cannot be created for want of permission.
fn writable_hint(e: &io::Error) -> &'static str {
    match e.kind() {
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            " (is the run directory writable?)"
        }
        _ => "",
    }
}
