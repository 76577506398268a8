//! The network backend seam: how crates that never link a tensor library get network
//! evaluators.
//!
//! A process that can run networks (the `xqz-torch` binary, xq-pipeline's tests)
//! registers one [`NetworkBackend`] at start-up; players and engines in xq-eval ask
//! [`backend`] for it when a network is named, and get a clear error when the process
//! has none. This is lc0's "backend by name" in miniature: the crates that rate, pair
//! and referee games stay free of libtorch, and so does every process that never loads
//! a network (ARCHITECTURE.md, "Which processes load libtorch").

use std::{path::Path, sync::OnceLock};

use crate::Evaluator;

/// Loads networks: implemented by xq-train over libtorch, and by tests with stand-ins.
pub trait NetworkBackend: Send + Sync {
    /// Loads the network at `path` (a checkpoint sidecar, a model directory or a run
    /// directory, as the backend documents) for evaluation.
    ///
    /// # Errors
    /// The backend's own error (naming the file and what is wrong with it), typed.
    fn load(&self, path: &Path) -> Result<Box<dyn Evaluator>, LoadError>;

    /// Sets the number of CPU threads the backend's kernels use (0 leaves it alone).
    fn set_threads(&self, threads: usize);

    /// A short name for logs and errors ("torch").
    fn name(&self) -> &'static str;
}

static BACKEND: OnceLock<Box<dyn NetworkBackend>> = OnceLock::new();

/// Registers the process's network backend. The first registration wins; a second one
/// returns `false` and changes nothing (tests in one process may race to register).
pub fn register(backend: Box<dyn NetworkBackend>) -> bool {
    BACKEND.set(backend).is_ok()
}

/// The registered backend.
///
/// # Errors
/// [`NoBackend`] when this process registered none.
pub fn backend() -> Result<&'static dyn NetworkBackend, NoBackend> {
    BACKEND.get().map(|b| b.as_ref()).ok_or(NoBackend)
}

/// A backend could not load a network. It carries the backend's own typed error
/// (`xq_native::NativeError`, `xq_train::TrainError`) for callers to downcast, and
/// displays as it does.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct LoadError(pub Box<dyn std::error::Error + Send + Sync>);

impl LoadError {
    /// Wraps a backend's error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> LoadError {
        LoadError(Box::new(error))
    }
}

/// The process has no network backend: it was built or started without libtorch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this process has no network backend (networks run under `xqz-torch`)")]
pub struct NoBackend;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_registration_there_is_no_backend() {
        // Unit tests of this crate never register one.
        assert_eq!(backend().err(), Some(NoBackend));
    }
}
