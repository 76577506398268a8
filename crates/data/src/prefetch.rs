//! A background batch producer, so the trainer never waits on data.
//!
//! One producer thread draws steps `start, start + 1, ...` in order, assembling each
//! batch on a rayon pool (its own, when [`PrefetchConfig::threads`] is set, so data
//! work cannot starve a CPU trainer of all cores), and hands it over through a
//! bounded channel of `depth` batches. Used batches go back through
//! [`Prefetcher::recycle`] and their buffers are refilled, so steady state allocates
//! nothing. Batches come out in step order, and each is a pure function of
//! `(seed, step, window)`, so prefetching changes nothing about what is trained on.

use std::{
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
        mpsc::{self, Receiver, Sender, SyncSender},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use crate::{
    batch::{Batch, BatchConfig, BatchError, DataCursor, assemble},
    window::Window,
};

/// Prefetching options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefetchConfig {
    /// Batches assembled ahead of the trainer (at least 1).
    pub depth: usize,
    /// Threads of the producer's own rayon pool; 0 uses the global pool.
    pub threads: usize,
}

impl Default for PrefetchConfig {
    fn default() -> PrefetchConfig {
        PrefetchConfig {
            depth: 4,
            threads: 0,
        }
    }
}

/// Yields batches `cursor.step, cursor.step + 1, ...` assembled in the background.
#[derive(Debug)]
pub struct Prefetcher {
    rx: Receiver<Result<Batch, BatchError>>,
    recycle_tx: Sender<Batch>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    cursor: DataCursor,
    batch_size: u64,
    waited: Duration,
    /// The first error the producer hit; it stops after one.
    failed: bool,
}

impl Prefetcher {
    /// Starts producing from `cursor.step` (the cursor's seed overrides `cfg.seed`, so
    /// a resumed trainer passes the cursor it saved). The prefetcher's cursor takes the
    /// fingerprint of `window`; check [`DataCursor::matches`] first if the window is
    /// supposed to be the saved one.
    ///
    /// # Errors
    /// An empty window, a zero batch size, or a rayon pool that cannot be built.
    pub fn new(
        window: Arc<Window>,
        cfg: BatchConfig,
        cursor: DataCursor,
        prefetch: PrefetchConfig,
    ) -> Result<Prefetcher, BatchError> {
        if window.is_empty() {
            return Err(BatchError::EmptyWindow);
        }
        if cfg.batch_size == 0 {
            return Err(BatchError::ZeroBatch);
        }
        let cfg = BatchConfig {
            seed: cursor.seed,
            ..cfg
        };
        let pool = if prefetch.threads > 0 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(prefetch.threads)
                    .thread_name(|i| format!("xq-data-{i}"))
                    .build()
                    .map_err(|e| BatchError::Threads(e.to_string()))?,
            )
        } else {
            None
        };
        let window_fingerprint = window.fingerprint();
        let depth = prefetch.depth.max(1);
        let (tx, rx) = mpsc::sync_channel(depth);
        let (recycle_tx, recycle_rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let producer_stop = Arc::clone(&stop);
        let start = cursor.step;
        let handle = std::thread::Builder::new()
            .name("xq-data-prefetch".into())
            .spawn(move || produce(&window, &cfg, start, pool, &tx, &recycle_rx, &producer_stop))
            .map_err(|e| BatchError::Threads(e.to_string()))?;
        Ok(Prefetcher {
            rx,
            recycle_tx,
            stop,
            handle: Some(handle),
            cursor: DataCursor {
                seed: cfg.seed,
                window_fingerprint,
                ..cursor
            },
            batch_size: cfg.batch_size as u64,
            waited: Duration::ZERO,
            failed: false,
        })
    }

    /// The next batch, blocking until it is ready; the time spent blocked is added to
    /// [`Prefetcher::wait_time`].
    ///
    /// # Errors
    /// What the producer hit (it stops after the first error), or
    /// [`BatchError::ProducerGone`] afterwards.
    pub fn next_batch(&mut self) -> Result<Batch, BatchError> {
        if self.failed {
            return Err(BatchError::ProducerGone);
        }
        let t = Instant::now();
        let got = self.rx.recv();
        self.waited += t.elapsed();
        match got {
            Ok(Ok(batch)) => {
                self.cursor.step += 1;
                self.cursor.samples += self.batch_size;
                Ok(batch)
            }
            Ok(Err(e)) => {
                self.failed = true;
                Err(e)
            }
            Err(_) => {
                self.failed = true;
                Err(BatchError::ProducerGone)
            }
        }
    }

    /// Gives a used batch back so its buffers are reused.
    pub fn recycle(&self, batch: Batch) {
        let _ = self.recycle_tx.send(batch);
    }

    /// Where the consumer is: the step of the next batch [`Prefetcher::next_batch`]
    /// returns (batches prefetched but not taken do not count).
    pub fn cursor(&self) -> DataCursor {
        self.cursor
    }

    /// Total time spent blocked in [`Prefetcher::next_batch`].
    pub fn wait_time(&self) -> Duration {
        self.waited
    }
}

impl Drop for Prefetcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Unblock a producer waiting to send: drain what is queued until it exits.
        if let Some(handle) = self.handle.take() {
            while !handle.is_finished() {
                if self.rx.recv_timeout(Duration::from_millis(5)).is_err() && handle.is_finished() {
                    break;
                }
            }
            let _ = handle.join();
        }
    }
}

fn produce(
    window: &Window,
    cfg: &BatchConfig,
    start: u64,
    pool: Option<rayon::ThreadPool>,
    tx: &SyncSender<Result<Batch, BatchError>>,
    recycled: &Receiver<Batch>,
    stop: &AtomicBool,
) {
    let mut step = start;
    while !stop.load(Ordering::Relaxed) {
        let mut batch = recycled
            .try_recv()
            .unwrap_or_else(|_| Batch::new(cfg.batch_size, &cfg.encoder));
        let result = match pool.as_ref() {
            Some(p) => p.install(|| assemble(window, cfg, step, &mut batch)),
            None => assemble(window, cfg, step, &mut batch),
        };
        let failed = result.is_err();
        if tx.send(result.map(|()| batch)).is_err() || failed {
            return;
        }
        step += 1;
    }
}
