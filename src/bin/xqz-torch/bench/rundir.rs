//! `xqz bench rundir`: how the run directory's readers scale with the number of chunk
//! files (`games_per_file = 1` writes one per game), before and after compaction.
//!
//! For each size it writes that many synthetic chunk files (one 8-ply game with a record
//! a ply; their order by time is the writing order, ties broken by name) and as many
//! one-game PGN files, then measures: listing `data/` alone (`read_dir`, the floor of any rescan and
//! the reference of the same run), opening the run directory (`RunDir::open`, with its rename
//! check), the trainer's first scan (`WindowLoader::refresh` on a fresh loader: every
//! header read), a rescan with no new files, a rescan after 1,000 new files (medians of
//! 3), `xqz report`'s data gathering (`report::gather`), and compaction
//! (`WindowLoader::compact` with the trainer's rule: keep twice the window, 1,000 chunks a
//! file), then the scans again on the compacted directory.

use std::{
    fs,
    path::{Path, PathBuf},
    time::Instant,
};

use anyhow::{Context, Result};
use xq_core::{Position, hash::SplitMix64};
use xq_data::{Chunk, ChunkMeta, NewRecord, WindowLoader, WindowSize, quantize_policy};
use xq_run::RunDir;

use super::median;

#[derive(clap::Args, Debug)]
pub struct RundirArgs {
    /// Chunk-file counts to measure, comma-separated.
    #[arg(long, default_value = "10000,100000,1000000", value_delimiter = ',')]
    files: Vec<usize>,
    /// Window size in positions (the trainer keeps twice this uncompacted).
    #[arg(long, default_value_t = 100_000)]
    window: u64,
    /// Where the synthetic run directories go (removed afterwards); default: the
    /// system's temporary directory.
    #[arg(long)]
    dir: Option<PathBuf>,
}

const NEW_FILES: usize = 1000;
const PLIES: usize = 8;

/// One synthetic chunk's bytes: an 8-ply seeded random game with a record a ply.
fn chunk_bytes(seed: u64) -> Result<Vec<u8>> {
    let mut rng = SplitMix64::new(seed);
    let mut chunk = Chunk::new(ChunkMeta {
        encoding_version: xq_nn::ENCODING_VERSION,
        policy_index_version: xq_nn::POLICY_INDEX_VERSION,
        creator: format!("xqz bench rundir seed={seed}"),
        seed,
    });
    let mut pos = Position::startpos();
    let mut moves = Vec::new();
    for _ in 0..PLIES {
        let legal = pos.legal_moves();
        let m = legal[rng.below(legal.len() as u64) as usize];
        pos.play_unchecked(m);
        moves.push(m);
    }
    let g = chunk.add_game(Position::startpos(), moves.clone())?;
    let mut pos = Position::startpos();
    for (ply, &m) in moves.iter().enumerate() {
        let policy = quantize_policy(&[(m, 1.0)]);
        chunk.add_record(
            NewRecord {
                game: g,
                ply: u16::try_from(ply)?,
                result: None,
                plies_left: u16::try_from(PLIES - ply)?,
                weight: 1.0,
                root_wdl: [0.0; 3],
            },
            &policy,
        )?;
        pos.play_unchecked(m);
    }
    Ok(xq_data::encode_chunk(&chunk)?)
}

const PGN: &str = "[Event \"bench\"]\n[Result \"*\"]\n\n1. h2e2 h9g7 *\n";

/// Writes chunk and PGN files `from..to` (names in writing order).
fn write_files(run: &Path, bytes: &[u8], from: usize, to: usize) -> Result<()> {
    let data = run.join("data");
    let games = run.join("games");
    for i in from..to {
        let name = format!("w{}-{i:08}", i % 8);
        fs::write(data.join(format!("{name}.xqc")), bytes)
            .with_context(|| format!("cannot write into {}", data.display()))?;
        fs::write(games.join(format!("{name}.pgn")), PGN)?;
    }
    Ok(())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn count(dir: &Path) -> Result<usize> {
    Ok(fs::read_dir(dir)?.count())
}

/// Scans: first (fresh loader), unchanged, and after `NEW_FILES` new files (medians of
/// 3); returns them and the loader.
fn scans(
    run: &Path,
    window: u64,
    bytes: &[u8],
    next: &mut usize,
) -> Result<(f64, f64, f64, WindowLoader)> {
    let t = Instant::now();
    let mut loader = WindowLoader::new(run.join("data"), WindowSize::Fixed(window));
    loader.refresh()?;
    let first = ms(t);
    let mut same = Vec::new();
    let mut new = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        loader.refresh()?;
        same.push(ms(t));
        write_files(run, bytes, *next, *next + NEW_FILES)?;
        *next += NEW_FILES;
        let t = Instant::now();
        loader.refresh()?;
        new.push(ms(t));
    }
    Ok((first, median(&same), median(&new), loader))
}

pub fn bench_rundir(a: &RundirArgs) -> Result<()> {
    let root = a
        .dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("xqz-bench-rundir-{}", std::process::id()));
    let bytes = chunk_bytes(1)?;
    println!(
        "run directory at scale: synthetic chunks of {PLIES} positions ({} bytes), window {} positions, rescans after {NEW_FILES} new files; times in ms (medians of 3 where repeated)",
        bytes.len(),
        a.window
    );
    println!(
        "{:>9} | {:>7} {:>7} {:>9} {:>8} {:>8} {:>8} | {:>9} {:>7} | {:>9} {:>8} {:>8}",
        "files",
        "list",
        "open",
        "1st scan",
        "rescan",
        "+1000",
        "report",
        "compact",
        "files",
        "1st scan",
        "rescan",
        "+1000"
    );
    // Up to two million files: removed even when a measurement fails.
    struct Cleanup<'a>(&'a Path);
    impl Drop for Cleanup<'_> {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(self.0);
        }
    }
    let _cleanup = Cleanup(&root);
    for &n in &a.files {
        let run = root.join(format!("run-{n}"));
        let _ = fs::remove_dir_all(&run);
        RunDir::open(&run)?;
        write_files(&run, &bytes, 0, n)?;
        let mut next = n;

        let list = median(
            &(0..3)
                .map(|_| {
                    let t = Instant::now();
                    count(&run.join("data")).map(|_| ms(t))
                })
                .collect::<Result<Vec<_>>>()?,
        );
        let t = Instant::now();
        let run_dir = RunDir::open(&run)?;
        let open = ms(t);
        let (first, same, new, mut loader) = scans(&run, a.window, &bytes, &mut next)?;
        let t = Instant::now();
        xq_run::report::gather(&run_dir, 8, 8)?;
        let report = ms(t);

        let t = Instant::now();
        loader.compact(a.window.saturating_mul(2), 1000, &Default::default())?;
        let compact = ms(t);
        let left = count(&run.join("data"))?;
        let (first_c, same_c, new_c, _) = scans(&run, a.window, &bytes, &mut next)?;
        println!(
            "{n:>9} | {list:>7.1} {open:>7.1} {first:>9.1} {same:>8.1} {new:>8.1} {report:>8.1} | {compact:>9.1} {left:>7} | {first_c:>9.1} {same_c:>8.1} {new_c:>8.1}"
        );
        fs::remove_dir_all(&run)?;
    }
    Ok(())
}
