//! The supervised source: PGN game records, read, labelled and split once per run
//! directory and source, and the session's stream of record batches.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Instant,
};

use anyhow::{Context, Result, bail};
use xq_core::Color;
use xq_data::{
    Batch, ChunkMeta, DataCursor, Outcome, PgnGame, Prefetcher, SplitConfig, Window,
    games_to_chunks, read_pgn_files,
};
use xq_eval::adjudicate::{Adjudicator, Verdict, VerdictBy};
use xq_run::{
    RunDir,
    events::{Event, WarningAction, WarningWhat},
};

use super::{TrainSession, warn};
use crate::progress::SharedObserver;

/// The PGN records a session trains on or evaluates: files, held-out share, and how
/// records without a result get a value target.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SupervisedSource {
    pub(super) files: Vec<PathBuf>,
    pub(super) held_out_permille: u32,
    pub(super) labels: Option<Adjudicator>,
}

/// The PGN records, split.
pub(super) struct Supervised {
    pub(super) train: Arc<Window>,
    pub(super) held_out: Window,
    pub(super) prefetcher: Option<Prefetcher>,
}

pub(super) fn chunk_meta() -> ChunkMeta {
    ChunkMeta {
        encoding_version: xq_nn::encode::ENCODING_VERSION,
        policy_index_version: xq_nn::policy::POLICY_INDEX_VERSION,
        creator: format!("xqz train {}", env!("CARGO_PKG_VERSION")),
        seed: 0,
    }
}

/// The records [`load_supervised`] loaded in this process, one entry per run directory
/// and source, with the files' sizes and modification times they were read at. A sync
/// `xqz run` opens a train session every generation; reading, labelling and splitting
/// the master games again each time cost about 4 s a generation on 2 cores (and
/// repeated each warning in the run's log). Another run directory loads afresh, so
/// its log gets its own warnings.
type LoadedRecords = (
    PathBuf,
    SupervisedSource,
    Vec<Option<FileStamp>>,
    Arc<Window>,
    Window,
);
type FileStamp = (u64, std::time::SystemTime);
static LOADED: std::sync::Mutex<Vec<LoadedRecords>> = std::sync::Mutex::new(Vec::new());

/// A file's size and modification time, to tell whether it changed since it was read.
fn stamp(path: &Path) -> Option<FileStamp> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// The PGN records of `source`, from [`LOADED`] when the same files, unchanged, were
/// loaded the same way before in this process.
pub(super) fn load_supervised(
    source: &SupervisedSource,
    run: &RunDir,
    obs: &SharedObserver,
) -> Result<Supervised> {
    let stamps: Vec<Option<FileStamp>> = source.files.iter().map(|f| stamp(f)).collect();
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let entry = loaded
        .iter()
        .position(|(root, s, ..)| root == run.root() && s == source);
    if let Some((_, _, st, train, held_out)) = entry.map(|i| &loaded[i])
        && *st == stamps
        && stamps.iter().all(Option::is_some)
    {
        return Ok(Supervised {
            train: Arc::clone(train),
            held_out: held_out.clone(),
            prefetcher: None,
        });
    }
    let records = read_supervised(source, run, obs)?;
    let fresh = (
        run.root().to_path_buf(),
        source.clone(),
        stamps,
        Arc::clone(&records.train),
        records.held_out.clone(),
    );
    match entry {
        Some(i) => loaded[i] = fresh,
        None => loaded.push(fresh),
    }
    Ok(records)
}

/// Reads, labels and splits the PGN records of `source`; one warning per file with
/// unreadable games.
fn read_supervised(
    source: &SupervisedSource,
    run: &RunDir,
    obs: &SharedObserver,
) -> Result<Supervised> {
    let split = SplitConfig {
        held_out_permille: source.held_out_permille,
        salt: 0,
    };
    let (mut games, skipped) = read_pgn_files(&source.files).context("cannot load PGN records")?;
    if let Some(adjudicator) = source.labels {
        label_games(&mut games, adjudicator, obs)?;
    }
    let data = games_to_chunks(&games, &chunk_meta(), &split).context("cannot load PGN records")?;
    // One warning per file (a collection may hold thousands of bad games), naming the
    // first game's problem.
    let mut by_file: Vec<(&Path, usize, &xq_data::SkippedGame)> = Vec::new();
    for game in &skipped {
        match by_file.iter_mut().find(|(p, ..)| *p == game.path.as_path()) {
            Some((_, n, _)) => *n += 1,
            None => by_file.push((&game.path, 1, game)),
        }
    }
    for (path, n, first) in by_file {
        warn(
            run,
            obs,
            Event::file_warning(
                WarningWhat::PgnGame,
                path,
                WarningAction::Skipped,
                format!("{n} game(s) cannot be read, the first: {}", first.error),
            ),
        );
    }
    let train = Window::from_chunk("pgn-train", data.train);
    let held_out = Window::from_chunk("pgn-held-out", data.held_out);
    if train.is_empty() {
        bail!(
            "the PGN files hold no trainable positions ({} games skipped)",
            skipped.len()
        );
    }
    obs.log(&format!(
        "PGN records: {} training positions, {} held-out positions",
        train.len(),
        held_out.len()
    ));
    Ok(Supervised {
        train: Arc::new(train),
        held_out,
        prefetcher: None,
    })
}

/// Gives each game without a result one from `adjudicator` (xq-eval's `adjudicate`
/// rule), on rayon's pool, and says how the verdicts fell. Deterministic: each game's
/// verdict depends on that game alone.
fn label_games(
    games: &mut [PgnGame],
    adjudicator: Adjudicator,
    obs: &SharedObserver,
) -> Result<()> {
    use rayon::prelude::*;
    let started = Instant::now();
    let verdicts: Vec<Verdict> = games
        .par_iter_mut()
        .filter(|g| g.result.is_none())
        .map(|g| {
            let v = adjudicator
                .judge(&g.start, &g.moves)
                .with_context(|| format!("cannot label the PGN game at line {}", g.line))?;
            g.result = Some(Outcome::of_winner(v.winner));
            Ok(v)
        })
        .collect::<Result<_>>()?;
    let n = verdicts.len();
    if n == 0 {
        return Ok(());
    }
    let (mut red, mut draws, mut black, mut by_rules) = (0, 0, 0, 0);
    for v in &verdicts {
        match v.winner {
            Some(Color::Red) => red += 1,
            Some(Color::Black) => black += 1,
            None => draws += 1,
        }
        by_rules += usize::from(matches!(v.by, VerdictBy::Rules(_)));
    }
    obs.log(&format!(
        "value labels for {n} PGN games without a result (alpha-beta depth {}, margin {} cp): \
         {red} red wins, {draws} draws, {black} black wins ({by_rules} ended by the rules), {:.1} s",
        adjudicator.depth,
        adjudicator.margin_cp,
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

impl TrainSession {
    /// Whether PGN records are configured (so a held-out split can exist).
    pub(super) fn has_supervised(&self) -> bool {
        self.supervised_files.is_some()
    }

    /// Loads the PGN records on first use.
    pub(super) fn ensure_supervised(&mut self) -> Result<&mut Supervised> {
        if self.supervised.is_none() {
            let source = self
                .supervised_files
                .as_ref()
                .context("no PGN records configured")?;
            self.supervised = Some(load_supervised(source, &self.run, &self.obs)?);
        }
        self.supervised.as_mut().context("no PGN records loaded")
    }

    /// The next supervised batch.
    pub(super) fn supervised_batch(&mut self) -> Result<Batch> {
        let bcfg = self.batch_config(self.cfg.trainer.seed ^ 0x5eed_0001);
        let pcfg = self.prefetch_config();
        let saved = self.saved.supervised;
        let sup = self.ensure_supervised()?;
        if sup.prefetcher.is_none() {
            let cursor = match saved {
                Some(c) => DataCursor {
                    window_fingerprint: sup.train.fingerprint(),
                    ..c
                },
                None => DataCursor::start(bcfg.seed, &sup.train),
            };
            sup.prefetcher = Some(Prefetcher::new(Arc::clone(&sup.train), bcfg, cursor, pcfg)?);
        }
        let p = sup
            .prefetcher
            .as_mut()
            .context("no supervised prefetcher")?;
        let before = p.wait_time();
        let batch = p.next_batch()?;
        let waited = p.wait_time() - before;
        let cursor = p.cursor();
        self.interval.waited += waited;
        self.saved.supervised = Some(cursor);
        Ok(batch)
    }
}
