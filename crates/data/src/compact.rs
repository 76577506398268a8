//! Compaction: old chunk files merged into a few large ones, so that a data directory
//! written one game a file (`games_per_file = 1`, millions of files after a long run)
//! keeps a file count near its window's, and a rescan stays cheap.
//!
//! lc0 and KataGo shuffle and merge old training data the same way. Here compaction is
//! a step of [`WindowLoader::compact`](crate::WindowLoader::compact): it merges only
//! chunks that are well outside the window (the caller's `keep_records`), never a chunk
//! the trainer is reading, and it keeps the order by age: a merged file takes the
//! modification time of the newest chunk in it, and counts the same records (the `N` of
//! the power-law window does not change).
//!
//! # Kill safety
//! One merge is four steps, each atomic:
//! 1. the journal `compact-NAME.journal` (the target and its sources) is written;
//! 2. the merged chunk `compact-NAME.xqc` is written (temporary file, mtime set, rename);
//! 3. the sources are deleted;
//! 4. the journal is deleted.
//!
//! A loader that finds a journal finishes it before it reads anything
//! ([`finish_journal`]): when the merged chunk exists (the kill came after step 2) the
//! sources still present are deleted, otherwise the journal alone is (the sources are
//! intact). So a record is never counted twice nor lost, whenever the process dies.

use std::{
    fs, io,
    path::{Path, PathBuf},
    time::SystemTime,
};

use crate::{
    format::{self, EXTENSION},
    io::{ChunkFileError, read_chunk, write_bytes_atomic, write_file_atomic},
    record::{Chunk, RecordError},
};

/// Names of merged chunks start with this; they are never merged again.
pub const COMPACT_PREFIX: &str = "compact-";

/// Extension of a merge's journal.
pub const JOURNAL_EXTENSION: &str = "journal";

/// What a compaction did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CompactReport {
    /// Chunk files merged (and deleted).
    pub merged_files: usize,
    /// Merged files written.
    pub written: usize,
    /// Records moved into merged files.
    pub records: u64,
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
    path.extension().is_some_and(|e| e == JOURNAL_EXTENSION)
        && path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(COMPACT_PREFIX))
}

/// Whether a chunk file is the product of a merge.
pub fn is_merged(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with(COMPACT_PREFIX))
}

/// Finishes the merge a journal describes (module docs, "Kill safety"). Returns whether
/// it was rolled forward (the merged chunk existed, leftover sources were deleted).
///
/// # Errors
/// A journal that does not parse (it is written atomically, so only an outside hand can
/// make one), or an I/O error deleting a file.
pub fn finish_journal(journal: &Path) -> Result<bool, CompactError> {
    let dir = journal.parent().unwrap_or(Path::new("."));
    let text = fs::read_to_string(journal).map_err(io_error("reading journal", journal))?;
    let mut target = None;
    let mut sources = Vec::new();
    for line in text.lines() {
        match line.split_once(' ') {
            Some(("target", name)) => target = Some(name),
            Some(("source", name)) => sources.push(name),
            _ => {}
        }
    }
    let bad = || CompactError::Io {
        what: "reading journal",
        path: journal.to_owned(),
        source: io::Error::new(io::ErrorKind::InvalidData, "no `target` line"),
    };
    let target = dir.join(target.ok_or_else(bad)?);
    let forward = target.is_file();
    if forward {
        for name in sources {
            let path = dir.join(name);
            match fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(io_error("deleting", &path)(e));
                }
                _ => {}
            }
        }
    }
    fs::remove_file(journal).map_err(io_error("deleting journal", journal))?;
    Ok(forward)
}

/// Merges `sources` (oldest first, each with its modification time) into one chunk
/// named after the newest, with that file's modification time; deletes the sources.
/// Returns the merged file and its record count.
///
/// # Errors
/// A source that cannot be read (nothing is written then), or an I/O error.
pub(crate) fn merge(
    dir: &Path,
    sources: &[(PathBuf, Option<SystemTime>)],
) -> Result<(PathBuf, u64), CompactError> {
    let Some((newest, newest_time)) = sources.last() else {
        return Ok((PathBuf::new(), 0));
    };
    let stem = newest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let target = dir.join(format!("{COMPACT_PREFIX}{stem}.{EXTENSION}"));
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
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    merged.meta.creator = format!(
        "xqz compact {} chunks {}..{} (first: {})",
        sources.len(),
        name(&sources[0].0),
        name(newest),
        merged.meta.creator
    );
    let records = merged.records.len() as u64;
    let bytes = format::encode_chunk(&merged).map_err(|e| ChunkFileError {
        path: target.clone(),
        source: e,
    })?;

    // 1. The journal.
    let mut text = format!("target {}\n", name(&target));
    for (path, _) in sources {
        text += &format!("source {}\n", name(path));
    }
    write_bytes_atomic(&journal, text.as_bytes()).map_err(io_error("writing", &journal))?;
    // 2. The merged chunk, with the newest source's time before it gets its name.
    write_file_atomic(
        &target,
        |tmp| {
            fs::write(tmp, &bytes)?;
            if let Some(t) = newest_time {
                fs::File::options()
                    .write(true)
                    .open(tmp)?
                    .set_modified(*t)?;
            }
            Ok(())
        },
        |e| e,
    )
    .map_err(io_error("writing", &target))?;
    // 3. and 4.
    finish_journal(&journal)?;
    Ok((target, records))
}
