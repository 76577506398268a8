//! Picking up newly accepted networks without restarting the worker.
//!
//! The worker asks a [`ModelSource`] for a new evaluator every
//! `model_poll_seconds`, on a thread of its own (loading a network can take seconds and
//! must not stall evaluation). When one arrives, games finish the search in progress
//! and wait at their move boundary; once every game waits, the evaluator is swapped,
//! the evaluation cache is cleared and the games go on with the new network. So no
//! search ever mixes two networks, while a game may continue with the newer one (as
//! KataGo's `switchNetsMidGame`).
//!
//! This crate knows nothing of networks' backends: [`PointerWatcher`] watches a file
//! and calls a loader its caller supplies (xq-pipeline's, which loads the network on
//! the native or the libtorch backend, as `XQZ_BACKEND` chooses).

use std::path::{Path, PathBuf};

use xq_nn::Evaluator;

/// A network a [`ModelSource`] offered could not be loaded: the loader's own error
/// (for example xq-pipeline's, naming the pointer and the checkpoint), typed, for
/// callers to downcast; it displays as that error does (`{:#}` included).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ModelError(pub Box<dyn std::error::Error + Send + Sync>);

impl ModelError {
    /// Wraps a loader's error (an error type, an `anyhow::Error` or a message).
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ModelError {
        ModelError(error.into())
    }
}

/// A source of newly accepted networks.
pub trait ModelSource: Send {
    /// A new evaluator if the accepted network changed since the last call, else
    /// `None`. Errors go to the run's [`Observer`](crate::Observer) and polling
    /// continues (a half-copied model on a shared filesystem is usually fine on the next
    /// look).
    ///
    /// # Errors
    /// What could not be loaded, as the loader's own typed error.
    fn poll(&mut self) -> Result<Option<Box<dyn Evaluator>>, ModelError>;
}

/// Never offers a new network.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoModelUpdates;

impl ModelSource for NoModelUpdates {
    fn poll(&mut self) -> Result<Option<Box<dyn Evaluator>>, ModelError> {
        Ok(None)
    }
}

/// Watches a pointer file (see [`xq_data::layout::ACCEPTED_POINTER`]) and loads the network it describes
/// with `load` whenever the file's contents change. A missing file means "no network
/// yet": the worker keeps its initial (uniform) evaluator.
pub struct PointerWatcher<F> {
    path: PathBuf,
    load: F,
    seen: Option<u64>,
}

impl<F> std::fmt::Debug for PointerWatcher<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PointerWatcher")
            .field("path", &self.path)
            .field("seen", &self.seen)
            .finish_non_exhaustive()
    }
}

impl<F> PointerWatcher<F>
where
    F: FnMut(&Path) -> Result<Box<dyn Evaluator>, ModelError> + Send,
{
    /// Watches `path`. `current` is the content hash of the pointer the initial
    /// evaluator was loaded from ([`content_hash`]), so it is not
    /// loaded twice; `None` if the worker started without one.
    pub fn new(path: impl Into<PathBuf>, current: Option<u64>, load: F) -> PointerWatcher<F> {
        PointerWatcher {
            path: path.into(),
            load,
            seen: current,
        }
    }
}

/// A hash of a pointer file's bytes, `None` if it cannot be read: what
/// [`PointerWatcher`] compares to notice a new network.
pub fn content_hash(path: &Path) -> Option<u64> {
    std::fs::read(path).ok().map(|b| xq_core::hash::fnv1a(&b))
}

impl<F> ModelSource for PointerWatcher<F>
where
    F: FnMut(&Path) -> Result<Box<dyn Evaluator>, ModelError> + Send,
{
    fn poll(&mut self) -> Result<Option<Box<dyn Evaluator>>, ModelError> {
        let Some(h) = content_hash(&self.path) else {
            return Ok(None);
        };
        if self.seen == Some(h) {
            return Ok(None);
        }
        let ev = (self.load)(&self.path)?;
        self.seen = Some(h);
        Ok(Some(ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_nn::RandomEvaluator;

    #[test]
    fn the_watcher_loads_once_per_pointer_change() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("accepted.json");
        let mut w = PointerWatcher::new(&path, None, |p: &Path| {
            let text = std::fs::read_to_string(p).map_err(ModelError::new)?;
            let seed: u64 = text.trim().parse().map_err(ModelError::new)?;
            Ok(Box::new(RandomEvaluator::new(seed)) as Box<dyn Evaluator>)
        });
        assert!(w.poll().unwrap().is_none(), "no pointer yet");
        std::fs::write(&path, "7").unwrap();
        assert_eq!(w.poll().unwrap().unwrap().name(), "random(seed=7)");
        assert!(w.poll().unwrap().is_none(), "same pointer loaded twice");
        std::fs::write(&path, "not a number").unwrap();
        assert!(w.poll().is_err());
        std::fs::write(&path, "8").unwrap();
        assert_eq!(w.poll().unwrap().unwrap().name(), "random(seed=8)");
        assert!(NoModelUpdates.poll().unwrap().is_none());
    }

    #[test]
    fn content_hashes_are_fnv1a_of_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("accepted.json");
        assert_eq!(content_hash(&path), None);
        std::fs::write(&path, "foobar").unwrap();
        assert_eq!(content_hash(&path), Some(0x8594_4171_f739_67e8));
    }
}
