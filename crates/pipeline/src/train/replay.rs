//! The self-play side of a session: the replay window over `RUN/data`, its rescans,
//! compaction and stream of batches.

use std::{
    collections::HashSet,
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result};
use xq_data::{Batch, BatchConfig, DataCursor, LeafWdl, Prefetcher, Window, WindowLoader};
use xq_run::events::{Event, WarningAction, WarningWhat};

use super::{TrainSession, warn};

/// The self-play side: the loader of `RUN/data`, the window in use and its stream.
pub(super) struct SelfplayData {
    pub(super) loader: WindowLoader,
    pub(super) window: Option<Arc<Window>>,
    pub(super) prefetcher: Option<Prefetcher>,
    /// Positions in the data directory at the last refresh.
    pub(super) positions: u64,
    /// No compaction before this (set for a while after one failed).
    pub(super) compact_after: Option<Instant>,
    /// The loader of the held-out games (`RUN/data/held-out`): their newest
    /// `holdout_max` positions, evaluated and never trained on. Never compacted: a
    /// worker holds out one game in twenty, so their files stay few.
    pub(super) held_out: WindowLoader,
    /// The step of the last evaluation of the held-out games.
    pub(super) held_out_step: Option<u64>,
}

impl TrainSession {
    /// Rescans `RUN/data`; adopts the new window when `adopt` (or when there is none).
    pub(super) fn refresh(&mut self, adopt: bool) -> Result<()> {
        let (window, report) = self
            .selfplay
            .loader
            .refresh()
            .with_context(|| format!("cannot read {}", self.run.data_dir().display()))?;
        self.warn_skipped(report.skipped);
        self.warn_removed(&report.removed);
        self.selfplay.positions = report.total_records;
        self.compact(&window, report.target);
        let changed = self
            .selfplay
            .window
            .as_ref()
            .is_none_or(|w| w.fingerprint() != window.fingerprint());
        if adopt {
            self.saved.window_step = self.trainer.step_count();
        }
        if (adopt || self.selfplay.window.is_none()) && changed && !window.is_empty() {
            self.selfplay.window = Some(Arc::new(window));
            self.selfplay.prefetcher = None;
        }
        Ok(())
    }

    /// A `warning` event (and warning line) for each temporary a rescan removed.
    pub(super) fn warn_removed(&self, removed: &[PathBuf]) {
        for path in removed {
            warn(
                &self.run,
                &self.obs,
                Event::file_warning(
                    WarningWhat::Chunk,
                    path,
                    WarningAction::Removed,
                    "the temporary file of a write cut short (over an hour old)",
                ),
            );
        }
    }

    /// A `warning` event (and warning line) for each chunk that could not be read.
    pub(super) fn warn_skipped(&self, skipped: Vec<xq_data::ChunkFileError>) {
        for e in skipped {
            warn(
                &self.run,
                &self.obs,
                Event::file_warning(
                    WarningWhat::Chunk,
                    &e.path,
                    WarningAction::Skipped,
                    e.source.to_string(),
                ),
            );
        }
    }

    /// Merges old chunks (`[train] compact_files`), so a long run's rescans stay cheap:
    /// those behind twice the window `target` and behind every chunk of `fresh` (the
    /// window just scanned), of the window in use and of the saved manifest, which must
    /// stay loadable by name. A failure is a warning and pauses compaction for ten
    /// minutes; an unreadable old chunk is a warning once.
    fn compact(&mut self, fresh: &Window, target: u64) {
        const PAUSE: Duration = Duration::from_secs(600);
        let files = self.cfg.data.compact_files;
        if files < 2
            || self
                .selfplay
                .compact_after
                .is_some_and(|t| Instant::now() < t)
        {
            return;
        }
        let mut protect: HashSet<String> = fresh.chunks().iter().map(|c| c.name.clone()).collect();
        if let Some(w) = &self.selfplay.window {
            protect.extend(w.chunks().iter().map(|c| c.name.clone()));
        }
        if let Some(m) = &self.saved.manifest {
            protect.extend(m.chunks.iter().map(|c| c.name.clone()));
        }
        match self
            .selfplay
            .loader
            .compact(target.saturating_mul(2), files, &protect)
        {
            Ok(c) => {
                self.warn_skipped(c.skipped);
                if c.written > 0 {
                    self.obs.log(&format!(
                        "data: {} old chunk files merged into {} ({} positions)",
                        c.merged_files, c.written, c.records
                    ));
                }
            }
            Err(e) => {
                self.selfplay.compact_after = Some(Instant::now() + PAUSE);
                warn(
                    &self.run,
                    &self.obs,
                    Event::file_warning(
                        WarningWhat::Chunk,
                        self.run.data_dir(),
                        WarningAction::Skipped,
                        format!("chunk compaction paused for ten minutes: {e}"),
                    ),
                );
            }
        }
    }

    /// Whether the pacing and `min_positions` allow another self-play step.
    pub(super) fn selfplay_allowed(&self) -> bool {
        let used = self.saved.selfplay.map_or(0, |c| c.samples);
        self.selfplay.window.is_some() && self.cfg.data.pacing_allows(used, self.selfplay.positions)
    }

    pub(super) fn selfplay_batch(&mut self) -> Result<Batch> {
        let bcfg = BatchConfig {
            // What the value loss blends with (`[train] value_quiescence`).
            leaf_wdl: (self.cfg.data.value_quiescence > 0.0)
                .then_some(xq_eval::tactics::quiescence_wdl as LeafWdl),
            ..self.batch_config(self.cfg.trainer.seed ^ 0x5eed_0002)
        };
        let pcfg = self.prefetch_config();
        let window = Arc::clone(
            self.selfplay
                .window
                .as_ref()
                .context("no self-play window")?,
        );
        if self.selfplay.prefetcher.is_none() {
            // A new window continues the stream's step count under its own fingerprint.
            let cursor = match self.saved.selfplay {
                Some(c) => DataCursor {
                    window_fingerprint: window.fingerprint(),
                    ..c
                },
                None => DataCursor::start(bcfg.seed, &window),
            };
            self.selfplay.prefetcher =
                Some(Prefetcher::new(Arc::clone(&window), bcfg, cursor, pcfg)?);
            self.saved.manifest = Some(window.manifest());
            self.trainer.set_window_size(window.len());
        }
        let p = self
            .selfplay
            .prefetcher
            .as_mut()
            .context("no self-play prefetcher")?;
        let before = p.wait_time();
        let batch = p.next_batch()?;
        self.interval.waited += p.wait_time() - before;
        self.saved.selfplay = Some(p.cursor());
        Ok(batch)
    }
}
