//! The replay window: the newest positions of a directory of chunks.
//!
//! # Size
//! [`WindowSize::Fixed`] keeps the newest `n` positions. [`WindowSize::PowerLaw`] is
//! KataGo's rule (`python/shuffle.py`): with `N` positions written so far,
//!
//! ```text
//! W(N) = N                                            if N <= m
//! W(N) = m + r * (N^e - m^e) / (e * m^(e-1))          otherwise
//! ```
//!
//! with `m = min_rows` (default 250,000), `r = expand_per_row` (default 0.4) and
//! `e = exponent` (default 0.65), capped at `max_rows` when set. `W` grows like `N`
//! at first (slope 1 until `m`, slope `r` just after) and then sub-linearly, so early
//! data from weak nets leaves the window quickly while a long run still keeps a large,
//! diverse window. For a small CPU run, lower `min_rows` (e.g. 20,000).
//!
//! # Reuse
//! A trainer paced to `s` samples per position written (the pipeline's
//! `samples_per_position`) draws `s·dN` samples while `dN` positions arrive, each
//! uniformly from the window. While the window holds all the data, a record written
//! when `n` positions existed is drawn `s·ln(N/n)` times by the time `N` exist: without
//! bound, and most for the oldest, weakest games. A [`ReuseCap`] bounds it by also
//! capping the window at a share `α` of the data, `W(N) ≤ floor(α·N)`. A record then
//! stays in the window from `N = n` until `N = n/(1−α)`, drawn at `s/(α·N)` per
//! position arriving, so in expectation
//!
//! ```text
//! draws(α) = ∫ s/(α·N) dN over [n, n/(1−α)] = (s/α)·ln(1/(1−α))
//! ```
//!
//! times, the same for every record. `draws` grows with `α` from `s` (α → 0) without
//! bound (α → 1), so for `max_reuse = R > s` the cap takes the `α` where `draws(α) = R`
//! (found by bisection: there is no closed form short of Lambert's W). No window gets
//! below `s`: the pacing draws `s` samples per position, so a record is drawn `s` times
//! on average whatever the window, and `R ≤ s` is refused ([`ReuseCapError`]). The
//! bound holds for any window rule whose share `W(N)/N` never grows, as
//! `min(rule, α·N)` with either rule here does: a record's draw rate is then at most
//! `s/(β·N)` for the share `β ≤ α` at which it leaves, so it is drawn at most
//! `draws(β) ≤ R` times.
//!
//! Training starts at `N0 = min_positions` with a burst: the pacing lets it catch up
//! with `s·N0` samples drawn from a window of `α·N0` records. Those records are drawn
//! `s/α` times in the burst and up to `R` more as later data pushes them out (between
//! `s/α` and `s/α + R` in all), while the `(1−α)·N0` records older than the window are
//! never drawn; over all the records written before training the mean is still `R`.
//!
//! # Selection
//! Chunk files (`*.xqc`; `*.tmp` and other names are ignored) are ordered newest first
//! by modification time, ties broken by file name, and taken until `W` positions are
//! covered; the oldest chunk taken contributes only its last records so the window
//! holds exactly `W` (or everything, if there is less). A chunk that fails to read is
//! reported once, with its file name, and skipped; the next older chunk takes its place.
//! The loader prints nothing: skipped files come back as data
//! ([`RefreshReport::skipped`]) for the caller to warn about (the training pipeline
//! shows them even under `--quiet` and records each as a `warning` event).
//!
//! A [`Window`] is an immutable snapshot; refreshing produces a new one and shares the
//! chunks both contain.

use std::{
    collections::{HashMap, HashSet},
    fs,
    os::unix::fs::{DirEntryExt, MetadataExt},
    path::{Path, PathBuf},
    sync::Arc,
    time::SystemTime,
};

use rayon::prelude::*;
use xq_core::hash::Fnv1a;

use crate::{
    compact::{self, CompactError, CompactReport},
    io::{ChunkFileError, is_chunk_file, read_chunk, read_chunk_header},
    record::{Chunk, PositionRecord},
};

/// How many positions the window keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WindowSize {
    /// The newest `n` positions.
    Fixed(u64),
    /// KataGo's power law (see the module docs).
    PowerLaw {
        min_rows: u64,
        expand_per_row: f64,
        exponent: f64,
        max_rows: Option<u64>,
    },
}

impl Default for WindowSize {
    /// KataGo's defaults: `m = 250,000`, `r = 0.4`, `e = 0.65`, no cap.
    fn default() -> WindowSize {
        WindowSize::PowerLaw {
            min_rows: 250_000,
            expand_per_row: 0.4,
            exponent: 0.65,
            max_rows: None,
        }
    }
}

impl WindowSize {
    /// The window size for `total` positions written so far (never more than `total`).
    pub fn size(&self, total: u64) -> u64 {
        let w = match *self {
            WindowSize::Fixed(n) => n,
            WindowSize::PowerLaw {
                min_rows,
                expand_per_row,
                exponent,
                max_rows,
            } => {
                let w = if total <= min_rows || min_rows == 0 {
                    total
                } else {
                    let (n, m, e) = (total as f64, min_rows as f64, exponent);
                    let grown =
                        m + expand_per_row * (n.powf(e) - m.powf(e)) / (e * m.powf(e - 1.0));
                    // Non-finite or negative results (nonsense parameters) fall back to all data.
                    if grown.is_finite() && grown >= 0.0 {
                        grown as u64
                    } else {
                        total
                    }
                };
                max_rows.map_or(w, |cap| w.min(cap))
            }
        };
        w.min(total)
    }
}

/// Caps the window so that each record is drawn at most `max_reuse` times in
/// expectation (see "Reuse" in the module docs): `W(N) ≤ floor(α·N)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReuseCap {
    /// The largest share `α` of the positions written that the window may hold.
    fraction: f64,
}

/// A `max_reuse` no window can keep: not a finite number above `samples_per_position`.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error(
    "max_reuse must be a number greater than samples_per_position ({samples_per_position}), \
     got {max_reuse}: the pacing draws samples_per_position samples per position written, so \
     records are drawn that many times on average whatever the window"
)]
pub struct ReuseCapError {
    pub samples_per_position: f64,
    pub max_reuse: f64,
}

impl ReuseCap {
    /// The cap for a trainer paced to `samples_per_position` samples per position
    /// written that should draw each record at most `max_reuse` times.
    ///
    /// # Errors
    /// Unless both are finite and `0 < samples_per_position < max_reuse`.
    pub fn new(samples_per_position: f64, max_reuse: f64) -> Result<ReuseCap, ReuseCapError> {
        let (s, r) = (samples_per_position, max_reuse);
        if !(s.is_finite() && r.is_finite() && s > 0.0 && r > s) {
            return Err(ReuseCapError {
                samples_per_position: s,
                max_reuse: r,
            });
        }
        // draws(α)/s = ln(1/(1−α))/α rises from 1 (α → 0) to ∞ (α → 1): bisect for the
        // largest α whose draws stay within r. The lower end always keeps the bound.
        let want = r / s;
        let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            if -(-mid).ln_1p() / mid <= want {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(ReuseCap { fraction: lo })
    }

    /// The largest share `α` of the positions written that the window may hold.
    pub fn fraction(&self) -> f64 {
        self.fraction
    }

    /// The capped window size for `total` positions written: `floor(α·total)`, but at
    /// least one record of a non-empty directory.
    pub fn size(&self, total: u64) -> u64 {
        ((self.fraction * total as f64) as u64).max(1).min(total)
    }
}

/// One chunk's part in a window.
#[derive(Debug, Clone)]
pub struct WindowChunk {
    /// File name (or a label for in-memory chunks); part of the window's fingerprint.
    pub name: String,
    pub chunk: Arc<Chunk>,
    /// Index of the first record used: older records of the oldest chunk are left out.
    pub first: usize,
}

/// An immutable set of records, addressed `0..len()`, oldest chunk first.
#[derive(Debug, Clone, Default)]
pub struct Window {
    chunks: Vec<WindowChunk>,
    /// `ends[i]` = records in chunks `0..=i`.
    ends: Vec<u64>,
}

impl Window {
    /// A window over chunks in the given order (in-memory data, tests, a pinned set).
    pub fn from_chunks(chunks: Vec<WindowChunk>) -> Window {
        let mut ends = Vec::with_capacity(chunks.len());
        let mut total = 0u64;
        let chunks: Vec<WindowChunk> = chunks
            .into_iter()
            .filter(|c| c.first < c.chunk.records.len())
            .collect();
        for c in &chunks {
            total += (c.chunk.records.len() - c.first) as u64;
            ends.push(total);
        }
        Window { chunks, ends }
    }

    /// A window over all records of one in-memory chunk (supervised data, tests).
    pub fn from_chunk(name: impl Into<String>, chunk: Chunk) -> Window {
        Window::from_chunks(vec![WindowChunk {
            name: name.into(),
            chunk: Arc::new(chunk),
            first: 0,
        }])
    }

    /// Number of records.
    pub fn len(&self) -> u64 {
        self.ends.last().copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn chunks(&self) -> &[WindowChunk] {
        &self.chunks
    }

    /// The chunk and record at window index `i`; `None` past the end.
    pub fn get(&self, i: u64) -> Option<(&Chunk, &PositionRecord)> {
        let (chunk, at) = self.locate(i)?;
        Some((chunk, &chunk.records[at]))
    }

    /// Record `i`'s chunk and its index in the chunk's records, so that a caller can
    /// read the records around it (the same game's later positions).
    pub fn locate(&self, i: u64) -> Option<(&Chunk, usize)> {
        let c = self.ends.partition_point(|&e| e <= i);
        let wc = self.chunks.get(c)?;
        let before = if c == 0 { 0 } else { self.ends[c - 1] };
        let at = wc.first + (i - before) as usize;
        (at < wc.chunk.records.len()).then_some((&*wc.chunk, at))
    }

    /// A stable 64-bit digest of what the window holds (chunk names, first record used,
    /// record and game counts and writer seeds, in order). A trainer stores it with its data cursor: the same
    /// fingerprint and cursor give the same batches.
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv1a::new();
        for c in &self.chunks {
            h.write(c.name.as_bytes());
            h.write(&[0]);
            h.write(&(c.first as u64).to_le_bytes());
            h.write(&(c.chunk.records.len() as u64).to_le_bytes());
            h.write(&(c.chunk.games.len() as u64).to_le_bytes());
            h.write(&c.chunk.meta.seed.to_le_bytes());
        }
        h.finish()
    }
}

/// What a window holds, by name: enough to rebuild the identical window later (a
/// resumed trainer whose data directory has received new chunks since). Serializable
/// for checkpoint sidecars.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WindowManifest {
    pub chunks: Vec<ManifestEntry>,
}

/// One chunk of a [`WindowManifest`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ManifestEntry {
    /// File name within the chunk directory.
    pub name: String,
    /// First record used.
    pub first: usize,
    /// Records in the chunk (checked on reload).
    pub records: usize,
}

impl Window {
    /// The window's chunks by name, oldest first.
    pub fn manifest(&self) -> WindowManifest {
        WindowManifest {
            chunks: self
                .chunks
                .iter()
                .map(|c| ManifestEntry {
                    name: c.name.clone(),
                    first: c.first,
                    records: c.chunk.records.len(),
                })
                .collect(),
        }
    }
}

/// What a refresh found.
#[derive(Debug, Default)]
pub struct RefreshReport {
    /// Positions in all readable chunk files (`N` of the power law).
    pub total_records: u64,
    /// The window size the rule asked for (capped by the loader's [`ReuseCap`], if any).
    pub target: u64,
    /// Positions in the new window (`target`, unless chunks were skipped and nothing
    /// older could replace them).
    pub window_len: u64,
    /// Chunk files that could not be used, each naming its file. Each bad file is
    /// reported once per loader, not at every refresh.
    pub skipped: Vec<ChunkFileError>,
    /// Temporary files unchanged (inode change time) for longer than
    /// [`STALE_TEMPORARY`] that this refresh deleted: a writer killed mid-write leaves its
    /// temporary behind (`xq_data::io::tmp_path`), and no write takes that long.
    pub removed: Vec<PathBuf>,
}

/// Age after which a temporary file in a chunk directory is a killed writer's leftover.
pub const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_secs(3600);

/// Key under which a file's header or content is cached: a file written anew under an
/// old name (another inode, length or time) is read again.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct FileKey {
    path: PathBuf,
    ino: u64,
    len: u64,
    mtime: Option<SystemTime>,
}

#[derive(Debug)]
enum Cached {
    Header { records: u32 },
    Loaded(Arc<Chunk>),
    Bad,
}

/// Scans a chunk directory and builds windows over its newest data, caching what it
/// has read so that a refresh only reads new files.
///
/// Chunk files are immutable once they have their name (writers never reuse a name;
/// compaction only removes names and adds new ones), so a refresh looks up the size and
/// time of a name it already knows instead of asking the filesystem again: after the
/// first scan, a rescan costs one directory listing plus the new files.
#[derive(Debug)]
pub struct WindowLoader {
    dir: PathBuf,
    size: WindowSize,
    reuse: Option<ReuseCap>,
    cache: HashMap<FileKey, Cached>,
    /// The key of every chunk file seen by name (its size and time, read once).
    known: HashMap<PathBuf, FileKey>,
    /// The last refresh's chunk files, newest first (what [`WindowLoader::compact`]
    /// works on).
    listing: Vec<FileKey>,
    /// Temporary files unchanged for longer are a killed writer's leftovers.
    stale_after: std::time::Duration,
}

impl WindowLoader {
    pub fn new(dir: impl Into<PathBuf>, size: WindowSize) -> WindowLoader {
        WindowLoader {
            dir: dir.into(),
            size,
            reuse: None,
            cache: HashMap::new(),
            known: HashMap::new(),
            listing: Vec::new(),
            stale_after: STALE_TEMPORARY,
        }
    }

    /// Sets the age after which a temporary file is removed (default
    /// [`STALE_TEMPORARY`]; tests use seconds).
    #[must_use]
    pub fn stale_temporaries_after(mut self, age: std::time::Duration) -> WindowLoader {
        self.stale_after = age;
        self
    }

    /// Caps every window this loader builds by `cap` as well as by its [`WindowSize`]
    /// (`None`: the size rule alone).
    #[must_use]
    pub fn with_reuse_cap(mut self, cap: Option<ReuseCap>) -> WindowLoader {
        self.reuse = cap;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The window size for `total` positions: the size rule's, within the reuse cap.
    /// A function of `total` alone, so a resumed trainer rebuilds the same windows.
    fn target(&self, total: u64) -> u64 {
        let w = self.size.size(total);
        self.reuse.map_or(w, |cap| w.min(cap.size(total)))
    }

    /// Rescans the directory and returns the window over the newest data.
    ///
    /// # Errors
    /// Only when the directory itself cannot be listed; bad chunks are skipped and
    /// listed in the report.
    pub fn refresh(&mut self) -> Result<(Window, RefreshReport), std::io::Error> {
        let mut report = RefreshReport::default();
        let mut files = Vec::new();
        let mut journals = false;
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            let path = entry.path();
            if compact::is_journal(&path) {
                journals = true;
                continue;
            }
            // One listing serves both: this is the hot rescan of the trainer. A temporary
            // that cannot be removed is left for the next rescan, not the trainer's end.
            if let Ok(Some(stale)) = crate::io::remove_if_stale_tmp(&entry, self.stale_after) {
                report.removed.push(stale);
                continue;
            }
            if !is_chunk_file(&path) {
                continue;
            }
            // The listing gives the inode for free: a known name with the same inode is
            // the same immutable file.
            if let Some(key) = self.known.get(&path).filter(|k| k.ino == entry.ino()) {
                files.push(key.clone());
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let key = FileKey {
                path,
                ino: meta.ino(),
                len: meta.len(),
                mtime: meta.modified().ok(),
            };
            self.known.insert(key.path.clone(), key.clone());
            files.push(key);
        }
        if journals {
            // A merge was cut short (a killed trainer), or another process is merging:
            // wait for the compaction lock, finish or undo what is left, then list again,
            // so no record is counted twice.
            compact::finish_interrupted(&self.dir).map_err(std::io::Error::other)?;
            let (window, mut again) = self.refresh()?;
            again.removed.splice(0..0, report.removed);
            return Ok((window, again));
        }
        // Newest first; equal times (coarse clocks, many writers) are ordered by name.
        files.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| b.path.cmp(&a.path)));
        let present: std::collections::HashSet<&FileKey> = files.iter().collect();
        self.cache.retain(|k, _| present.contains(k));
        self.known.retain(|_, k| present.contains(k));

        // Headers of files not seen before, read in parallel (56 bytes each).
        let new: Vec<&FileKey> = files
            .iter()
            .filter(|k| !self.cache.contains_key(*k))
            .collect();
        let headers: Vec<_> = new
            .par_iter()
            .map(|k| (*k, read_chunk_header(&k.path).map(|h| h.records)))
            .collect();
        for (key, header) in headers {
            let entry = match header {
                Ok(records) => Cached::Header { records },
                Err(e) => {
                    report.skipped.push(e);
                    Cached::Bad
                }
            };
            self.cache.insert(key.clone(), entry);
        }

        let records_of = |c: &Cached| match c {
            Cached::Header { records } => u64::from(*records),
            Cached::Loaded(chunk) => chunk.records.len() as u64,
            Cached::Bad => 0,
        };
        report.total_records = files.iter().map(|k| records_of(&self.cache[k])).sum();
        report.target = self.target(report.total_records);

        // Take newest files until the target is covered; load those not yet loaded in
        // parallel; a file that fails to load is marked bad and the selection repeats.
        loop {
            let mut need = report.target;
            let mut picked = Vec::new();
            for k in &files {
                if need == 0 {
                    break;
                }
                let n = records_of(&self.cache[k]);
                if n == 0 {
                    continue;
                }
                picked.push(k);
                need = need.saturating_sub(n);
            }
            let to_load: Vec<&FileKey> = picked
                .iter()
                .copied()
                .filter(|k| matches!(self.cache[*k], Cached::Header { .. }))
                .collect();
            if to_load.is_empty() {
                let mut need = report.target;
                let mut chunks = Vec::with_capacity(picked.len());
                let keep: std::collections::HashSet<&FileKey> = picked.iter().copied().collect();
                for k in picked {
                    // Every picked file is loaded by now (the loop only ends when none
                    // is left to load).
                    let Cached::Loaded(chunk) = &self.cache[k] else {
                        continue;
                    };
                    let n = chunk.records.len() as u64;
                    let first = n.saturating_sub(need) as usize;
                    need = need.saturating_sub(n);
                    let name = k.path.file_name().map_or_else(
                        || k.path.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    );
                    chunks.push(WindowChunk {
                        name,
                        chunk: Arc::clone(chunk),
                        first,
                    });
                }
                chunks.reverse(); // oldest first
                // Chunks that have left the window are dropped from memory (only their
                // record count is kept), so a long run's memory follows the window,
                // not the whole directory.
                for (k, c) in &mut self.cache {
                    if let Cached::Loaded(chunk) = c
                        && !keep.contains(k)
                    {
                        *c = Cached::Header {
                            records: chunk.records.len() as u32,
                        };
                    }
                }
                let window = Window::from_chunks(chunks);
                report.window_len = window.len();
                self.listing = files;
                return Ok((window, report));
            }
            let loaded: Vec<_> = to_load
                .par_iter()
                .map(|k| (*k, read_chunk(&k.path)))
                .collect();
            for (key, result) in loaded {
                let entry = match result {
                    Ok(chunk) => Cached::Loaded(Arc::new(chunk)),
                    Err(e) => {
                        report.skipped.push(e);
                        Cached::Bad
                    }
                };
                self.cache.insert(key.clone(), entry);
            }
            // Skipped chunks no longer count towards N.
            report.total_records = files.iter().map(|k| records_of(&self.cache[k])).sum();
            report.target = self.target(report.total_records);
        }
    }

    /// Merges old chunk files into files of `files_per_merge` chunks each (at most
    /// [`MAX_MERGE_RECORDS`](compact::MAX_MERGE_RECORDS) records; see
    /// [`compact`](crate::compact)). Old means, in the last
    /// [`refresh`](WindowLoader::refresh)'s order, behind the newest `keep_records`
    /// records and behind every file named in `protect` (the chunks of the window in use
    /// and of a saved manifest, which must stay loadable by name). Merging goes oldest
    /// first and in whole groups only (a partial group waits for more); merged files,
    /// unreadable files and files without a modification time are left alone. An old
    /// chunk that turns out unreadable is reported in [`CompactReport::skipped`] once,
    /// and the merge goes on without it. When another process holds the directory's
    /// compaction lock, nothing is tried ([`CompactReport::locked_out`]).
    ///
    /// # Errors
    /// The first write that fails; merges done before it stay done, and an interrupted
    /// one is finished or undone by the next refresh.
    pub fn compact(
        &mut self,
        keep_records: u64,
        files_per_merge: usize,
        protect: &HashSet<String>,
    ) -> Result<CompactReport, CompactError> {
        let mut report = CompactReport::default();
        if files_per_merge < 2 {
            return Ok(report);
        }
        let Some(_lock) = compact::lock(&self.dir, false)? else {
            report.locked_out = true;
            return Ok(report);
        };
        let records_of = |c: Option<&Cached>| match c {
            Some(Cached::Header { records }) => u64::from(*records),
            Some(Cached::Loaded(chunk)) => chunk.records.len() as u64,
            Some(Cached::Bad) | None => 0,
        };
        let name_of = |k: &FileKey| {
            k.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        // The listing is newest first: walk past what must stay.
        let mut kept = 0u64;
        let mut unseen = protect.len();
        let mut old: Vec<(FileKey, u64)> = Vec::new();
        for k in &self.listing {
            let cached = self.cache.get(k);
            if kept < keep_records || unseen > 0 {
                kept += records_of(cached);
                unseen -= usize::from(protect.contains(&name_of(k)));
                continue;
            }
            if matches!(cached, Some(Cached::Header { .. }))
                && !compact::is_merged(&k.path)
                && k.mtime.is_some()
            {
                old.push((k.clone(), records_of(cached)));
            }
        }
        old.reverse(); // oldest first
        let mut gone: HashSet<PathBuf> = HashSet::new();
        let mut at = 0;
        while at < old.len() {
            // The next whole group: files_per_merge files, or fewer that fill
            // MAX_MERGE_RECORDS.
            let mut end = at;
            let mut records = 0u64;
            while end < old.len()
                && end - at < files_per_merge
                && records + old[end].1 <= compact::MAX_MERGE_RECORDS
            {
                records += old[end].1;
                end += 1;
            }
            let count = end - at;
            if count == 0 {
                at += 1; // a chunk too large to merge with anything
                continue;
            }
            if count < files_per_merge && end == old.len() {
                break; // a partial group waits for more
            }
            if count < 2 {
                at = end; // a chunk that fills a merge alone
                continue;
            }
            let group: Vec<(PathBuf, SystemTime)> = old[at..end]
                .iter()
                .filter_map(|(k, _)| Some((k.path.clone(), k.mtime?)))
                .collect();
            match compact::merge(&self.dir, &group) {
                Ok(records) => {
                    for (k, _) in &old[at..end] {
                        self.cache.remove(k);
                        self.known.remove(&k.path);
                        gone.insert(k.path.clone());
                    }
                    report.merged_files += group.len();
                    report.written += 1;
                    report.records += records;
                    at = end;
                }
                Err(CompactError::Chunk(e)) => {
                    // Mark the unreadable chunk and form the group again without it.
                    let Some(i) = old[at..end].iter().position(|(k, _)| k.path == e.path) else {
                        return Err(CompactError::Chunk(e));
                    };
                    self.cache.insert(old[at + i].0.clone(), Cached::Bad);
                    old.remove(at + i);
                    report.skipped.push(e);
                }
                Err(e) => return Err(e),
            }
        }
        self.listing.retain(|k| !gone.contains(&k.path));
        Ok(report)
    }

    /// Rebuilds a window from a manifest (see [`Window::manifest`]), reading the named
    /// files from this loader's directory (or its cache). Unlike [`WindowLoader::refresh`]
    /// this does not skip: a missing, damaged or changed chunk is an error, since the
    /// window would not be the one the manifest describes.
    ///
    /// # Errors
    /// The first chunk that cannot be read, or one whose record count differs.
    pub fn load_manifest(&mut self, manifest: &WindowManifest) -> Result<Window, ChunkFileError> {
        let by_path: HashMap<&Path, &Arc<Chunk>> = self
            .cache
            .iter()
            .filter_map(|(k, c)| match c {
                Cached::Loaded(chunk) => Some((k.path.as_path(), chunk)),
                _ => None,
            })
            .collect();
        let loaded: Vec<_> = manifest
            .chunks
            .par_iter()
            .map(|entry| {
                let path = self.dir.join(&entry.name);
                let cached = by_path.get(path.as_path()).map(|c| Arc::clone(c));
                let chunk = match cached {
                    Some(c) => c,
                    None => Arc::new(read_chunk(&path)?),
                };
                if chunk.records.len() != entry.records || entry.first > entry.records {
                    return Err(ChunkFileError {
                        path,
                        source: crate::format::ChunkError::ManifestMismatch {
                            expected: entry.records,
                            first: entry.first,
                            found: chunk.records.len(),
                        },
                    });
                }
                Ok(WindowChunk {
                    name: entry.name.clone(),
                    chunk,
                    first: entry.first,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Window::from_chunks(loaded))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_core::hash::SplitMix64;

    #[test]
    fn the_reuse_cap_takes_the_window_share_whose_expected_draws_are_max_reuse() {
        // (s/α)·ln(1/(1−α)) at α = 1/2 is 2·s·ln 2.
        let half = ReuseCap::new(1.0, 2.0 * std::f64::consts::LN_2).unwrap();
        assert!((half.fraction() - 0.5).abs() < 1e-12, "{}", half.fraction());
        assert_eq!(
            [0, 1, 2, 1000, 1001].map(|n| half.size(n)),
            [0, 1, 1, 500, 500]
        );
        for (s, r) in [(1.0, 1.01), (3.0, 4.0), (6.0, 8.0), (0.5, 10.0)] {
            let a = ReuseCap::new(s, r).unwrap().fraction();
            let draws = s / a * (1.0 / (1.0 - a)).ln();
            assert!(
                (draws - r).abs() < 1e-7 * r,
                "s {s} r {r}: α {a}, draws {draws}"
            );
        }
        // No window draws a record fewer than s times on average.
        for (s, r) in [
            (4.0, 4.0),
            (4.0, 3.0),
            (4.0, f64::NAN),
            (4.0, f64::INFINITY),
            (0.0, 1.0),
        ] {
            let err = ReuseCap::new(s, r).unwrap_err();
            assert!(err.to_string().starts_with("max_reuse must be"), "{err}");
        }
    }

    /// Replays the pacing: positions arrive `generation` at a time; once `min_positions`
    /// exist, batches of 32 are drawn uniformly from the loader's window over the newest
    /// records while the samples stay within `s` per position written. Returns how
    /// often each record was drawn and the number of records that have left the window.
    fn replay(loader: &WindowLoader, s: f64, generations: u64, generation: u64) -> (Vec<u32>, u64) {
        const BATCH: u64 = 32;
        let min_positions = 2 * generation;
        let mut draws = vec![0u32; (generations * generation) as usize];
        let mut rng = SplitMix64::new(7);
        let (mut total, mut used, mut window) = (0u64, 0u64, 0u64);
        for _ in 0..generations {
            total += generation;
            window = loader.target(total);
            if total < min_positions {
                continue;
            }
            while (used + BATCH) as f64 <= s * total as f64 {
                for _ in 0..BATCH {
                    draws[(total - window + rng.below(window)) as usize] += 1;
                }
                used += BATCH;
            }
        }
        (draws, total - window)
    }

    #[test]
    fn records_that_left_a_reuse_capped_window_were_drawn_max_reuse_times_on_average() {
        let (s, max_reuse) = (6.0, 8.0);
        let mean_of_left = |cap: Option<ReuseCap>| {
            let loader = WindowLoader::new("unused", WindowSize::Fixed(30_000)).with_reuse_cap(cap);
            let (draws, left) = replay(&loader, s, 100, 400);
            assert!(left >= 10_000, "only {left} records left the window");
            let sum: u64 = draws[..left as usize].iter().map(|&d| u64::from(d)).sum();
            sum as f64 / left as f64
        };
        // A window holding all data for most of the run: the early records are drawn
        // s·ln(N/n) times.
        let uncapped = mean_of_left(None);
        assert!(uncapped > 1.5 * max_reuse, "{uncapped}");
        let capped = mean_of_left(Some(ReuseCap::new(s, max_reuse).unwrap()));
        assert!(
            (0.95 * max_reuse..=1.02 * max_reuse).contains(&capped),
            "{capped} draws per record, max_reuse {max_reuse}"
        );
    }

    #[test]
    fn a_loader_with_a_reuse_cap_windows_its_share_of_the_data() {
        let dir = tempfile::tempdir().unwrap();
        let start = xq_core::Position::startpos();
        let mut pos = start.clone();
        let mut moves = Vec::new();
        for _ in 0..40 {
            let m = pos.legal_moves()[0];
            pos.play_unchecked(m);
            moves.push(m);
        }
        let mut chunk = Chunk::new(crate::ChunkMeta {
            encoding_version: xq_nn::encode::ENCODING_VERSION,
            policy_index_version: xq_nn::policy::POLICY_INDEX_VERSION,
            creator: "window tests".into(),
            seed: 0,
        });
        crate::supervised::add_game(&mut chunk, &start, &moves, None).unwrap();
        crate::ChunkWriter::new(dir.path(), "t")
            .unwrap()
            .write(&chunk)
            .unwrap();
        let half = ReuseCap::new(1.0, 2.0 * std::f64::consts::LN_2).unwrap();
        for (cap, want) in [(None, 40), (Some(half), 20)] {
            let (window, report) = WindowLoader::new(dir.path(), WindowSize::Fixed(1 << 20))
                .with_reuse_cap(cap)
                .refresh()
                .unwrap();
            assert_eq!(report.total_records, 40);
            assert_eq!((report.target, window.len()), (want, want), "{cap:?}");
        }
    }
}
