//! Compaction: old chunk files merged into a few large ones, so that a data directory
//! written one game a file (`games_per_file = 1`, millions of files after a long run)
//! keeps a file count near its window's, and a rescan stays cheap.
//!
//! lc0 and KataGo shuffle and merge old training data the same way. Here compaction is
//! a step of [`WindowLoader::compact`](crate::WindowLoader::compact): it merges only
//! chunks older than every chunk the caller protects (its window, a saved manifest) and
//! than its newest `keep_records` records, and it keeps the order by age: a merged file
//! takes the modification time of the newest chunk in it, and counts the same records
//! (the `N` of the power-law window does not change).
//!
//! # Kill safety
//! One merge is four steps, each atomic:
//! 1. the journal `compact-NAME.journal` (the target and its sources) is written;
//! 2. the merged chunk `compact-NAME.xqc` is written (temporary file, mtime set and
//!    checked, rename);
//! 3. the sources are deleted (and the directory synced);
//! 4. the journal is deleted.
//!
//! A loader that finds a journal finishes it before it reads anything, and so does a
//! run when it starts ([`finish_interrupted`]): when the merged chunk exists (the kill
//! came after step 2) the sources still present are deleted, otherwise the journal
//! alone is (the sources are intact). So a record is never counted twice nor lost,
//! whenever the process dies.
//!
//! # One compactor at a time
//! Merging and finishing journals hold an exclusive lock on `data/.xqz-compact.lock`
//! (`flock`, which NFS and the cluster filesystems honour): a second trainer on the same
//! directory skips compaction while the lock is taken, and a loader that finds a journal
//! waits for the lock before it finishes it, so it never undoes a merge in progress.

use std::{
    fs, io,
    path::{Path, PathBuf},
    time::SystemTime,
};

use crate::{
    format::{self, EXTENSION},
    io::{ChunkFileError, read_chunk, sync_dir, write_bytes_atomic, write_file_atomic},
    layout::{COMPACT_LOCK_FILE, COMPACT_PREFIX, JOURNAL_EXTENSION},
    record::{Chunk, RecordError},
};

/// At most this many records go into one merged file, far below the format's payload
/// limit whatever the chunks hold.
pub const MAX_MERGE_RECORDS: u64 = 400_000;

/// What a compaction did.
#[derive(Debug, Default)]
pub struct CompactReport {
    /// Chunk files merged (and deleted).
    pub merged_files: usize,
    /// Merged files written.
    pub written: usize,
    /// Records moved into merged files.
    pub records: u64,
    /// Old chunks that could not be read: left in place, never tried again by this
    /// loader (they count no records, as in the window).
    pub skipped: Vec<ChunkFileError>,
    /// The lock was held by another process: nothing was tried.
    pub locked_out: bool,
}

/// Why a compaction stopped. Nothing is lost: an unfinished merge is finished or
/// undone by the next loader (see the module docs).
#[derive(Debug, thiserror::Error)]
pub enum CompactError {
    #[error(transparent)]
    Chunk(#[from] ChunkFileError),
    #[error("compaction: merging {}: {source}", path.display())]
    Merge {
        path: PathBuf,
        #[source]
        source: RecordError,
    },
    #[error("compaction: {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_error<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> CompactError + 'a {
    move |source| CompactError::Io {
        what,
        path: path.to_owned(),
        source,
    }
}

/// Whether `path` is a merge's journal.
pub fn is_journal(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == JOURNAL_EXTENSION) && is_merged(path)
}

/// Whether a chunk file is the product of a merge.
pub fn is_merged(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(COMPACT_PREFIX))
}

/// The held compaction lock of a directory (released when dropped).
#[derive(Debug)]
pub(crate) struct Lock {
    _file: fs::File,
}

/// Takes the compaction lock of `dir`: waiting for it when `wait`, else `None` when
/// another process holds it.
pub(crate) fn lock(dir: &Path, wait: bool) -> Result<Option<Lock>, CompactError> {
    let path = dir.join(COMPACT_LOCK_FILE);
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_error("opening the lock", &path))?;
    if wait {
        file.lock().map_err(io_error("locking", &path))?;
        return Ok(Some(Lock { _file: file }));
    }
    match file.try_lock() {
        Ok(()) => Ok(Some(Lock { _file: file })),
        Err(fs::TryLockError::WouldBlock) => Ok(None),
        Err(fs::TryLockError::Error(e)) => Err(io_error("locking", &path)(e)),
    }
}

/// Finishes every merge cut short in `dir` (a killed trainer's journals), waiting for
/// the compaction lock first so that a merge in progress elsewhere is not undone.
/// [`WindowLoader::refresh`](crate::WindowLoader::refresh) does this before it lists
/// chunks; a run calls it when it starts, so a journal does not outlive a trainer that
/// is restarted with nothing left to train. Returns the journals finished (none when
/// `dir` does not exist).
///
/// # Errors
/// The lock cannot be taken, a journal does not parse, or a file cannot be deleted.
pub fn finish_interrupted(dir: &Path) -> Result<usize, CompactError> {
    let journals = match fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| is_journal(p))
            .collect::<Vec<_>>(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io_error("listing", dir)(e)),
    };
    if journals.is_empty() {
        return Ok(0);
    }
    let _lock = lock(dir, true)?;
    for j in &journals {
        finish_journal(j)?;
    }
    Ok(journals.len())
}

/// Finishes the merge a journal describes (module docs, "Kill safety"); the caller
/// holds the compaction lock. Returns whether it was rolled forward (the merged chunk
/// existed, leftover sources were deleted); a journal already gone is done.
///
/// # Errors
/// A journal that does not parse (it is written atomically, so only an outside hand can
/// make one), or an I/O error deleting a file.
fn finish_journal(journal: &Path) -> Result<bool, CompactError> {
    let dir = journal.parent().unwrap_or(Path::new("."));
    let text = match fs::read_to_string(journal) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io_error("reading journal", journal)(e)),
    };
    let mut target = None;
    let mut sources = Vec::new();
    for line in text.lines() {
        match line.split_once(' ') {
            Some(("target", name)) => target = Some(name),
            Some(("source", name)) => sources.push(dir.join(name)),
            _ => {}
        }
    }
    let target = dir.join(target.ok_or_else(|| CompactError::Io {
        what: "reading journal",
        path: journal.to_owned(),
        source: io::Error::new(io::ErrorKind::InvalidData, "no `target` line"),
    })?);
    let forward = target.is_file();
    if forward {
        delete_sources(dir, &sources)?;
    }
    remove_if_present(journal).map_err(io_error("deleting journal", journal))?;
    Ok(forward)
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Deletes merged sources and syncs the directory, so the deletions are on disk before
/// the journal goes.
fn delete_sources(dir: &Path, sources: &[PathBuf]) -> Result<(), CompactError> {
    for path in sources {
        remove_if_present(path).map_err(io_error("deleting", path))?;
    }
    sync_dir(dir);
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Merges `sources` (oldest first, each with its modification time) into one chunk
/// named after the newest, with that file's modification time; deletes the sources.
/// The caller holds the compaction lock. Returns the merged file's record count.
///
/// # Errors
/// A source that cannot be read ([`CompactError::Chunk`], naming it; nothing is written
/// then), a filesystem that does not keep the modification time, or an I/O error.
pub(crate) fn merge(dir: &Path, sources: &[(PathBuf, SystemTime)]) -> Result<u64, CompactError> {
    let Some((newest, newest_time)) = sources.last() else {
        return Ok(0);
    };
    let stem = newest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A name no file has: a worker with a fixed id may reuse a merged chunk's name.
    let mut target = dir.join(format!("{COMPACT_PREFIX}{stem}.{EXTENSION}"));
    let mut n = 1;
    while target.exists() || target.with_extension(JOURNAL_EXTENSION).exists() {
        target = dir.join(format!("{COMPACT_PREFIX}{stem}-{n}.{EXTENSION}"));
        n += 1;
    }
    let journal = target.with_extension(JOURNAL_EXTENSION);

    let mut merged: Option<Chunk> = None;
    for (path, _) in sources {
        let chunk = read_chunk(path)?;
        match &mut merged {
            None => merged = Some(chunk),
            Some(m) => m.append(&chunk).map_err(|source| CompactError::Merge {
                path: path.clone(),
                source,
            })?,
        }
    }
    let mut merged = merged.unwrap_or_else(|| unreachable!("sources is not empty"));
    merged.meta.creator = format!(
        "xqz compact {} chunks {}..{} (first: {})",
        sources.len(),
        file_name(&sources[0].0),
        file_name(newest),
        merged.meta.creator
    );
    let records = merged.records.len() as u64;
    let bytes = format::encode_chunk(&merged).map_err(|e| ChunkFileError {
        path: target.clone(),
        source: e,
    })?;

    // 1. The journal.
    let mut text = format!("target {}\n", file_name(&target));
    for (path, _) in sources {
        text += &format!("source {}\n", file_name(path));
    }
    write_bytes_atomic(&journal, text.as_bytes()).map_err(io_error("writing", &journal))?;
    // 2. The merged chunk, with the newest source's time (checked: a filesystem that
    //    drops it would date old data "now") before it gets its name.
    let written = write_file_atomic(
        &target,
        |tmp| {
            fs::write(tmp, &bytes)?;
            let f = fs::File::options().write(true).open(tmp)?;
            f.set_modified(*newest_time)?;
            if f.metadata()?.modified()? != *newest_time {
                return Err(io::Error::other(
                    "the filesystem did not keep the modification time",
                ));
            }
            Ok(())
        },
        |e| e,
    );
    if let Err(e) = written {
        remove_if_present(&journal).map_err(io_error("deleting journal", &journal))?;
        return Err(io_error("writing", &target)(e));
    }
    // 3. and 4.
    let paths: Vec<PathBuf> = sources.iter().map(|(p, _)| p.clone()).collect();
    delete_sources(dir, &paths)?;
    remove_if_present(&journal).map_err(io_error("deleting journal", &journal))?;
    Ok(records)
}
