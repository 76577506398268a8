//! Chunk files on disk: the atomic writer and the validating reader.
//!
//! This module is also the workspace's one implementation of atomic writes, for files
//! ([`write_file_atomic`], [`write_bytes_atomic`]) and directories
//! ([`write_dir_atomic`]), with one temporary-name convention ([`tmp_path`]).
//!
//! A writer puts the bytes in a temporary file (`NAME.PID-SEQ.xqc.tmp`) in the target
//! directory, syncs the file, renames it to `NAME.xqc` and syncs the directory. Rename within a directory is
//! atomic on POSIX filesystems, so a reader sees either no file or the whole file; a
//! crash leaves at worst a `.tmp` file, which readers never open. Readers check magic,
//! version, header CRC, length and payload CRC anyway, because copies between machines
//! and shared filesystems can still deliver damaged files.

use std::{
    fmt, fs,
    io::{self, Read, Seek, Write},
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
};

use crate::{
    format::{self, ChunkError, EXTENSION, FileHeader, HEADER_LEN},
    record::Chunk,
};

/// A chunk error together with the file it came from; its message names the file.
#[derive(Debug, thiserror::Error)]
#[error("chunk {}: {source}", path.display())]
pub struct ChunkFileError {
    pub path: PathBuf,
    #[source]
    pub source: ChunkError,
}

impl ChunkFileError {
    fn new(path: &Path, source: impl Into<ChunkError>) -> ChunkFileError {
        ChunkFileError {
            path: path.to_owned(),
            source: source.into(),
        }
    }
}

/// Writes a chunk atomically to `path` (temporary file, fsync, rename, directory
/// fsync). The chunk is validated before anything is written.
///
/// # Errors
/// Invalid content, or any I/O error; on error the temporary file is removed.
pub fn write_chunk_atomic(path: &Path, chunk: &Chunk) -> Result<(), ChunkFileError> {
    let bytes = format::encode_chunk(chunk).map_err(|e| ChunkFileError::new(path, e))?;
    write_bytes_atomic(path, &bytes).map_err(|e| ChunkFileError::new(path, e))
}

/// The temporary name of `path` while it is written atomically: in the same directory,
/// with `.PID-SEQ` before the extension and `.tmp` after it (`w-1.xqc` →
/// `w-1.4711-0.xqc.tmp`, `s0000000100` → `s0000000100.4711-0.tmp`). Unique per process
/// and call, so concurrent writers of one path never share a temporary; it ends in
/// `.tmp`, which every reader skips, never in a finished file's extension.
pub fn tmp_path(path: &Path) -> PathBuf {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let name = Path::new(path.file_name().unwrap_or_default());
    let unique = format!(".{}-{seq}", std::process::id());
    let mut tmp = match (name.file_stem(), name.extension()) {
        (Some(stem), Some(ext)) => {
            let mut t = stem.to_os_string();
            t.push(&unique);
            t.push(".");
            t.push(ext);
            t
        }
        _ => {
            let mut t = name.as_os_str().to_os_string();
            t.push(&unique);
            t
        }
    };
    tmp.push(".tmp");
    path.with_file_name(tmp)
}

/// Whether `name` is a temporary of [`tmp_path`]: it ends in `.tmp` and holds a
/// `.PID-SEQ` part (digits, a dash, digits).
pub fn is_tmp_name(name: &str) -> bool {
    let Some(body) = name.strip_suffix(".tmp") else {
        return false;
    };
    body.split('.').skip(1).any(|part| {
        part.split_once('-').is_some_and(|(pid, seq)| {
            [pid, seq]
                .iter()
                .all(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        })
    })
}

/// Removes the temporaries of [`tmp_path`] in `dir` (files or directories, not
/// recursing into others) that have not been modified for `older_than`, and returns
/// what it removed for the caller to report.
///
/// A crash (or `kill -9`) between creating a temporary and renaming it leaves it behind;
/// readers skip it, but nothing else would delete it. The age, not the process id,
/// decides: writers on other machines share run directories, so a PID names no process
/// here. Age is the inode's change time: a compaction merge sets its temporary's
/// modification time to its old data's, but that sets the change time to now. A live
/// writer changes its temporary within seconds, so an hour is safe.
pub fn remove_stale_tmp(dir: &Path, older_than: std::time::Duration) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(removed),
        Err(e) => return Err(e),
    };
    for entry in entries {
        removed.extend(remove_if_stale_tmp(&entry?, older_than)?);
    }
    Ok(removed)
}

/// The step of [`remove_stale_tmp`] for one entry of a listing, for a reader that
/// lists the directory anyway (the replay window): removes `entry` if it is a
/// temporary unchanged for `older_than`, and returns its path if it did.
///
/// # Errors
/// When the temporary cannot be removed.
pub fn remove_if_stale_tmp(
    entry: &fs::DirEntry,
    older_than: std::time::Duration,
) -> io::Result<Option<PathBuf>> {
    if !entry.file_name().to_str().is_some_and(is_tmp_name) {
        return Ok(None);
    }
    let meta = match entry.metadata() {
        Ok(meta) => meta,
        // Renamed by its writer (or removed by another cleaner) since the listing.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let changed = std::time::SystemTime::UNIX_EPOCH
        + std::time::Duration::new(
            u64::try_from(std::os::unix::fs::MetadataExt::ctime(&meta)).unwrap_or(0),
            u32::try_from(std::os::unix::fs::MetadataExt::ctime_nsec(&meta)).unwrap_or(0),
        );
    let age = std::time::SystemTime::now()
        .duration_since(changed)
        .unwrap_or_default();
    if age < older_than {
        return Ok(None);
    }
    let path = entry.path();
    let result = if meta.is_dir() {
        fs::remove_dir_all(&path)
    } else {
        fs::remove_file(&path)
    };
    match result {
        Ok(()) => Ok(Some(path)),
        // Another process cleaned it up first.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes `path` atomically: `write` fills the temporary file [`tmp_path`]`(path)`, which
/// is then synced, renamed over `path`, and the directory synced, so readers see the old
/// file or the complete new one, never a torn one. On failure the temporary file is
/// removed and `path` is left as it was. `io_error` turns the I/O errors of the sync and
/// rename into the caller's error type.
///
/// # Errors
/// `write`'s error, or the I/O error of the sync or rename.
pub fn write_file_atomic<E>(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), E>,
    io_error: impl Fn(io::Error) -> E,
) -> Result<(), E> {
    let tmp = tmp_path(path);
    let result = write(&tmp).and_then(|()| {
        (|| {
            // Also catches errors that a filesystem reports only when the data reaches
            // the disk (delayed allocation, NFS): a file is renamed only once it is whole.
            fs::OpenOptions::new().append(true).open(&tmp)?.sync_all()?;
            fs::rename(&tmp, path)?;
            sync_dir(path.parent().unwrap_or(Path::new(".")));
            Ok(())
        })()
        .map_err(&io_error)
    });
    if result.is_err() {
        // A full disk must not keep a half file (nor the space it holds).
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The name prefix of [`check_atomic_rename`]'s probe files (`PREFIX.PID-SEQ`).
pub const RENAME_PROBE: &str = ".xqz-rename-probe";

/// Checks that `dir` supports what every writer of a run relies on: a file renamed over
/// an existing one inside the directory (as [`write_bytes_atomic`] does with the model
/// pointer) replaces it in one step, the same file (inode) now under the new name and
/// the temporary name gone. Some object-store mounts refuse rename, or emulate it by
/// copying and deleting (a new inode, and readers can see a half copy); a run there
/// would tear files under concurrent readers, so workers check at start-up. The probe's
/// name is unique per process and call, so processes starting together do not disturb
/// each other.
///
/// # Errors
/// The I/O error of the step that failed, or `Unsupported` when a rename reported
/// success but did not move the same file into place.
pub fn check_atomic_rename(dir: &Path) -> io::Result<()> {
    check_atomic_rename_at(&tmp_path(&dir.join(RENAME_PROBE)).with_extension(""))
}

/// [`check_atomic_rename`] with the probe's target name chosen by the caller (tests).
fn check_atomic_rename_at(target: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let step = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
    // The target exists first, so the rename must replace something.
    if !target.exists() {
        fs::write(target, b"old").map_err(|e| step("creating the probe", e))?;
    }
    let tmp = tmp_path(target);
    let result = (|| {
        fs::write(&tmp, b"new").map_err(|e| step("creating the probe", e))?;
        let inode = fs::metadata(&tmp)
            .map_err(|e| step("creating the probe", e))?
            .ino();
        fs::rename(&tmp, target)
            .map_err(|e| step("renaming the probe over an existing file", e))?;
        let moved = fs::metadata(target).is_ok_and(|m| m.is_file() && m.ino() == inode);
        if tmp.exists() || !moved {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a rename over an existing file reported success but did not move the same \
                 file into place (emulated by copying?)",
            ));
        }
        Ok(())
    })();
    let _ = fs::remove_file(&tmp);
    let _ = fs::remove_file(target);
    result
}

/// Writes bytes to `path` atomically ([`write_file_atomic`]).
///
/// # Errors
/// Any I/O error; the temporary file is removed on failure.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_inner(path, bytes, None)
}

/// [`write_bytes_atomic`] with fault injection for tests: with `fail_after = Some(n)`
/// the write stops after `n` bytes with `ENOSPC`, like a disk that fills up mid-file.
fn write_atomic_inner(path: &Path, bytes: &[u8], fail_after: Option<usize>) -> io::Result<()> {
    write_file_atomic(
        path,
        |tmp| {
            let mut f = fs::File::create(tmp)?;
            match fail_after {
                Some(n) if n < bytes.len() => {
                    f.write_all(&bytes[..n])?;
                    Err(io::Error::new(
                        io::ErrorKind::StorageFull,
                        "No space left on device (injected)",
                    ))
                }
                _ => f.write_all(bytes),
            }
        },
        |e| e,
    )
}

/// Builds the directory `dst` atomically: `fill` writes the files into the temporary
/// directory [`tmp_path`]`(dst)` (syncing them, e.g. with [`copy_file_synced`]), which
/// is then renamed to `dst`. An existing `dst` is replaced when `replace` is set (moved
/// aside under another temporary name, then removed); otherwise it is an
/// `AlreadyExists` error. On failure the temporary directory is removed, so `dst` is
/// absent, the old directory, or the complete new one.
///
/// # Errors
/// `fill`'s error, or the I/O error of creating, renaming or removing a directory.
pub fn write_dir_atomic<E>(
    dst: &Path,
    replace: bool,
    fill: impl FnOnce(&Path) -> Result<(), E>,
    io_error: impl Fn(io::Error) -> E,
) -> Result<(), E> {
    let tmp = tmp_path(dst);
    let result = fs::create_dir_all(&tmp)
        .map_err(&io_error)
        .and_then(|()| fill(&tmp))
        .and_then(|()| {
            (|| {
                // The entries inside must be durable before the directory is published.
                sync_dir(&tmp);
                if dst.exists() {
                    if !replace {
                        return Err(io::Error::new(
                            io::ErrorKind::AlreadyExists,
                            format!("{} already exists", dst.display()),
                        ));
                    }
                    let old = tmp_path(dst);
                    fs::rename(dst, &old)?;
                    if let Err(e) = fs::rename(&tmp, dst) {
                        // Put the old directory back: `dst` must never just vanish.
                        let _ = fs::rename(&old, dst);
                        return Err(e);
                    }
                    // The new directory is in place; a failure to delete the old one
                    // leaves a `.tmp` directory behind but does not undo the write.
                    let _ = fs::remove_dir_all(&old);
                } else {
                    fs::rename(&tmp, dst)?;
                }
                sync_dir(dst.parent().unwrap_or(Path::new(".")));
                Ok(())
            })()
            .map_err(&io_error)
        });
    if result.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    result
}

/// Copies a file and syncs the copy (for [`write_dir_atomic`]'s `fill`).
///
/// # Errors
/// The I/O error of the copy or the sync.
pub fn copy_file_synced(from: &Path, to: &Path) -> io::Result<()> {
    fs::copy(from, to)?;
    fs::File::open(to)?.sync_all()
}

/// Makes the rename durable. Best effort: some filesystems refuse to sync a
/// directory, and the file itself is already complete.
pub(crate) fn sync_dir(dir: &Path) {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Reads and validates a whole chunk file.
///
/// # Errors
/// A [`ChunkFileError`] naming the file and what is wrong with it.
pub fn read_chunk(path: &Path) -> Result<Chunk, ChunkFileError> {
    // The header is checked before the rest is read, so a large file that is not a
    // chunk (or whose length disagrees with its header) is never read into memory.
    let (mut f, header) = open_checked(path)?;
    let mut bytes = Vec::with_capacity(HEADER_LEN + header.compressed_len as usize);
    f.read_to_end(&mut bytes)
        .map_err(|e| ChunkFileError::new(path, e))?;
    format::decode_chunk(&bytes).map_err(|e| ChunkFileError::new(path, e))
}

/// Reads only the fixed header and checks the file length against it, which catches
/// truncation without decompressing. Used to size a window over many files cheaply.
///
/// # Errors
/// A [`ChunkFileError`] naming the file.
pub fn read_chunk_header(path: &Path) -> Result<FileHeader, ChunkFileError> {
    open_checked(path).map(|(_, header)| header)
}

/// Opens a chunk file, checks its header and length, and returns it rewound.
fn open_checked(path: &Path) -> Result<(fs::File, FileHeader), ChunkFileError> {
    let err = |e: ChunkError| ChunkFileError::new(path, e);
    let mut f = fs::File::open(path).map_err(|e| err(e.into()))?;
    let len = f.metadata().map_err(|e| err(e.into()))?.len();
    let mut buf = Vec::with_capacity(HEADER_LEN);
    Read::by_ref(&mut f)
        .take(HEADER_LEN as u64)
        .read_to_end(&mut buf)
        .map_err(|e| err(e.into()))?;
    let header = format::parse_header(&buf).map_err(err)?;
    let expected = HEADER_LEN as u64 + u64::from(header.compressed_len);
    if len < expected {
        return Err(err(ChunkError::Truncated {
            expected,
            found: len,
        }));
    }
    if len > expected {
        return Err(err(ChunkError::TrailingBytes(len - expected)));
    }
    f.seek(io::SeekFrom::Start(0)).map_err(|e| err(e.into()))?;
    Ok((f, header))
}

/// Whether a directory entry is a finished chunk (`*.xqc`), as opposed to a file
/// still being written (`*.xqc.tmp`) or anything else.
pub fn is_chunk_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == EXTENSION)
}

/// Writes numbered chunks for one worker: `DIR/<worker>-<seq>.xqc`, with `seq`
/// zero-padded to 8 digits and continuing after the highest already in the
/// directory, so a restarted worker never overwrites its own data. Several workers
/// can share a directory (on a shared filesystem too) as long as their ids differ.
#[derive(Debug)]
pub struct ChunkWriter {
    dir: PathBuf,
    worker: String,
    next_seq: u64,
    /// Fault injection: writes fail with `ENOSPC` after this many bytes.
    #[cfg(test)]
    fail_after: Option<usize>,
}

/// A worker id that cannot be part of a file name.
#[derive(Debug, thiserror::Error)]
pub enum WriterError {
    #[error(
        "bad worker id {0:?}: use 1-64 ASCII letters, digits, '_', '-' or '.', not starting with '.' or \"compact-\""
    )]
    BadWorkerId(String),
    #[error("cannot use chunk directory {}: {source}", dir.display())]
    Dir {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The chunk was valid but could not be written (a full disk, a read-only or
    /// vanished directory); the temporary file is removed and no chunk file appears.
    #[error("cannot write chunk {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Chunk(#[from] ChunkFileError),
}

impl ChunkWriter {
    /// Opens (creating it if needed) `dir` for `worker`.
    ///
    /// # Errors
    /// A worker id unfit for file names, or a directory that cannot be created or listed.
    pub fn new(dir: impl Into<PathBuf>, worker: &str) -> Result<ChunkWriter, WriterError> {
        let ok = !worker.is_empty()
            && worker.len() <= 64
            && !worker.starts_with('.')
            && !worker.starts_with(crate::layout::COMPACT_PREFIX)
            && worker
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !ok {
            return Err(WriterError::BadWorkerId(worker.to_owned()));
        }
        let dir = dir.into();
        let io_err = |source| WriterError::Dir {
            dir: dir.clone(),
            source,
        };
        fs::create_dir_all(&dir).map_err(io_err)?;
        let mut next_seq = 0;
        for entry in fs::read_dir(&dir).map_err(io_err)? {
            let name = entry.map_err(io_err)?.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(seq) = parse_name(name, worker) {
                next_seq = next_seq.max(seq + 1);
            }
        }
        Ok(ChunkWriter {
            dir,
            worker: worker.to_owned(),
            next_seq,
            #[cfg(test)]
            fail_after: None,
        })
    }

    /// The path the next chunk will get.
    pub fn next_path(&self) -> PathBuf {
        self.dir
            .join(format!("{}-{:08}.{EXTENSION}", self.worker, self.next_seq))
    }

    /// Writes a chunk atomically under the next name and returns its path.
    ///
    /// # Errors
    /// Invalid content ([`WriterError::Chunk`]) or an I/O error ([`WriterError::Write`],
    /// naming the file); the sequence number is not consumed then, and no file (not
    /// even a temporary one) is left behind.
    pub fn write(&mut self, chunk: &Chunk) -> Result<PathBuf, WriterError> {
        let path = self.next_path();
        let bytes = format::encode_chunk(chunk).map_err(|e| ChunkFileError::new(&path, e))?;
        #[cfg(test)]
        let fail_after = self.fail_after;
        #[cfg(not(test))]
        let fail_after = None;
        write_atomic_inner(&path, &bytes, fail_after).map_err(|source| WriterError::Write {
            path: path.clone(),
            source,
        })?;
        self.next_seq += 1;
        Ok(path)
    }
}

impl fmt::Display for ChunkWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}-*.{EXTENSION}", self.dir.display(), self.worker)
    }
}

/// The sequence number of `name` if it is `<worker>-<digits>.xqc`.
fn parse_name(name: &str, worker: &str) -> Option<u64> {
    let rest = name.strip_prefix(worker)?.strip_prefix('-')?;
    let digits = rest.strip_suffix(EXTENSION)?.strip_suffix('.')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ChunkMeta, Outcome, PlyTarget, quantize_policy};
    use xq_core::{Move, Position};

    fn chunk() -> Chunk {
        let mut chunk = Chunk::new(ChunkMeta {
            encoding_version: xq_nn::encode::ENCODING_VERSION,
            policy_index_version: xq_nn::policy::POLICY_INDEX_VERSION,
            creator: "io test".into(),
            seed: 1,
        });
        let moves = vec![
            Move::from_iccs("h2e2").unwrap(),
            Move::from_iccs("h9g7").unwrap(),
        ];
        let policy = quantize_policy(&[(moves[0], 3.0), (Move::from_iccs("b2e2").unwrap(), 1.0)]);
        let targets = [PlyTarget {
            ply: 0,
            policy: &policy,
            root_wdl: [0.4, 0.4, 0.2],
            weight: 1.0,
        }];
        chunk
            .add_game_with_targets(Position::startpos(), moves, Some(Outcome::Draw), &targets)
            .unwrap();
        chunk
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn temporary_names_are_recognised_and_finished_names_are_not() {
        let dir = Path::new("/r");
        for finished in ["w-1.xqc", "s0000000100", "accepted.json"] {
            let tmp = tmp_path(&dir.join(finished));
            let tmp = tmp.file_name().unwrap().to_str().unwrap();
            assert!(is_tmp_name(tmp), "{tmp}");
            assert!(!is_tmp_name(finished), "{finished}");
        }
        for other in [
            "notes.tmp",
            "w-1.xqc.tmp",
            "a.12-.tmp",
            "a.-3.tmp",
            "a.1x-2.tmp",
        ] {
            assert!(!is_tmp_name(other), "{other}");
        }
    }

    #[test]
    fn stale_temporaries_are_removed_and_fresh_ones_and_other_files_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let stale_file = tmp_path(&dir.path().join("w-1.xqc"));
        let stale_dir = tmp_path(&dir.path().join("player"));
        fs::write(&stale_file, b"half").unwrap();
        fs::create_dir_all(stale_dir.join("inner")).unwrap();
        fs::write(dir.path().join("w-2.xqc"), b"done").unwrap();
        fs::write(dir.path().join("notes.tmp"), b"user's").unwrap();
        // Nothing is an hour old yet.
        let hour = std::time::Duration::from_secs(3600);
        assert!(remove_stale_tmp(dir.path(), hour).unwrap().is_empty());
        let mut removed = remove_stale_tmp(dir.path(), std::time::Duration::ZERO).unwrap();
        removed.sort();
        let mut expected = vec![stale_file, stale_dir];
        expected.sort();
        assert_eq!(removed, expected);
        assert_eq!(names(dir.path()), ["notes.tmp", "w-2.xqc"]);
        // A directory that does not exist has nothing stale.
        assert!(
            remove_stale_tmp(&dir.path().join("none"), hour)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn the_rename_probe_passes_on_a_local_directory_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        check_atomic_rename(dir.path()).unwrap();
        check_atomic_rename(dir.path()).unwrap();
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_rename_that_cannot_replace_its_target_fails_the_probe_and_names_the_step() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory where the probe lands: rename(2) cannot replace it.
        let target = dir.path().join("probe");
        fs::create_dir_all(target.join("x")).unwrap();
        let err = check_atomic_rename_at(&target).unwrap_err();
        assert!(err.to_string().contains("renaming the probe"), "{err}");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "the temporary file is removed: {names:?}");
    }

    #[test]
    fn a_disk_that_fills_mid_chunk_gives_a_typed_error_naming_the_file_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = ChunkWriter::new(dir.path(), "w").unwrap();
        let first = w.write(&chunk()).unwrap();
        // The disk fills after the header: the chunk is half written when ENOSPC comes.
        w.fail_after = Some(HEADER_LEN + 3);
        let err = w.write(&chunk()).unwrap_err();
        let expected = dir.path().join("w-00000001.xqc");
        match &err {
            WriterError::Write { path, source } => {
                assert_eq!(path, &expected);
                assert_eq!(source.kind(), io::ErrorKind::StorageFull);
            }
            other => panic!("expected WriterError::Write, got {other:?}"),
        }
        let text = err.to_string();
        assert!(text.contains(&expected.display().to_string()), "{text}");
        assert!(text.contains("No space left on device"), "{text}");
        // No temporary file, no half chunk; the earlier chunk is untouched.
        assert_eq!(names(dir.path()), ["w-00000000.xqc"]);
        assert_eq!(read_chunk(&first).unwrap(), chunk());
        // The sequence number was not consumed: once space is back, the next chunk
        // takes the name the failed one would have had.
        w.fail_after = None;
        assert_eq!(w.write(&chunk()).unwrap(), expected);
        assert_eq!(read_chunk(&expected).unwrap(), chunk());
    }

    #[test]
    fn a_failed_overwrite_keeps_the_previous_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pointer.json");
        write_bytes_atomic(&path, b"{\"old\": 1}").unwrap();
        for fail_after in [0, 1, 5] {
            let err = write_atomic_inner(&path, b"{\"new\": 2, \"more\": 3}", Some(fail_after))
                .unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::StorageFull);
            assert_eq!(fs::read(&path).unwrap(), b"{\"old\": 1}");
            assert_eq!(names(dir.path()), ["pointer.json"]);
        }
    }

    #[test]
    fn temporary_names_are_unique_end_in_tmp_and_keep_the_extension_before_it() {
        let a = tmp_path(Path::new("data/w-00000001.xqc"));
        let b = tmp_path(Path::new("data/w-00000001.xqc"));
        assert_ne!(a, b, "two writes of one path never share a temporary");
        for t in [&a, &b] {
            let name = t.file_name().unwrap().to_string_lossy().into_owned();
            assert_eq!(t.parent(), Some(Path::new("data")));
            assert!(name.starts_with("w-00000001."), "{name}");
            assert!(name.ends_with(".xqc.tmp"), "{name}");
        }
        let dir = tmp_path(Path::new("models/accepted/s0000000100"));
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("s0000000100.") && name.ends_with(".tmp"),
            "{name}"
        );
    }

    #[test]
    fn a_directory_is_published_whole_or_not_at_all() {
        let root = tempfile::tempdir().unwrap();
        let dst = root.path().join("player");
        let fill = |n: u8| {
            move |tmp: &Path| -> io::Result<()> {
                fs::write(tmp.join("a"), [n])?;
                if n == 0 {
                    return Err(io::Error::other("injected"));
                }
                fs::write(tmp.join("b"), [n])
            }
        };
        // A failed fill leaves nothing behind.
        assert!(write_dir_atomic(&dst, false, fill(0), |e| e).is_err());
        assert!(names(root.path()).is_empty());
        write_dir_atomic(&dst, false, fill(1), |e| e).unwrap();
        assert_eq!(names(&dst), ["a", "b"]);
        // Without `replace` an existing directory stays; with it, it is replaced whole.
        let err = write_dir_atomic(&dst, false, fill(2), |e| e).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(dst.join("a")).unwrap(), [1]);
        assert!(write_dir_atomic(&dst, true, fill(0), |e| e).is_err());
        assert_eq!(fs::read(dst.join("b")).unwrap(), [1]);
        write_dir_atomic(&dst, true, fill(3), |e| e).unwrap();
        assert_eq!(fs::read(dst.join("b")).unwrap(), [3]);
        assert_eq!(names(root.path()), ["player"]);
    }

    #[test]
    fn a_vanished_directory_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = ChunkWriter::new(dir.path().join("data"), "w").unwrap();
        fs::remove_dir(dir.path().join("data")).unwrap();
        let err = w.write(&chunk()).unwrap_err();
        assert!(
            matches!(&err, WriterError::Write { source, .. } if source.kind() == io::ErrorKind::NotFound),
            "{err:?}"
        );
        assert!(err.to_string().contains("w-00000000.xqc"), "{err}");
    }
}
