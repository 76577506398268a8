//! Chunk files on disk: the atomic writer and the validating reader.
//!
//! A writer puts the bytes in `NAME.xqc.tmp` in the target directory, syncs the file,
//! renames it to `NAME.xqc` and syncs the directory. Rename within a directory is
//! atomic on POSIX filesystems, so a reader sees either no file or the whole file; a
//! crash leaves at worst a `.tmp` file, which readers never open. Readers check magic,
//! version, header CRC, length and payload CRC anyway, because copies between machines
//! and shared filesystems can still deliver damaged files.

use std::{
    fmt, fs,
    io::{self, Read, Seek, Write},
    path::{Path, PathBuf},
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

/// The temporary name used while writing `path`: `path` with `.tmp` appended.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Writes bytes to `path` through a temporary file in the same directory.
///
/// # Errors
/// Any I/O error; the temporary file is removed on failure.
pub fn write_bytes_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = tmp_path(path);
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        sync_dir(path.parent().unwrap_or(Path::new(".")));
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Makes the rename durable. Best effort: some filesystems refuse to sync a
/// directory, and the file itself is already complete.
fn sync_dir(dir: &Path) {
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
}

/// A worker id that cannot be part of a file name.
#[derive(Debug, thiserror::Error)]
pub enum WriterError {
    #[error("bad worker id {0:?}: use 1-64 ASCII letters, digits, '_', '-' or '.'")]
    BadWorkerId(String),
    #[error("cannot use chunk directory {}: {source}", dir.display())]
    Dir {
        dir: PathBuf,
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
    /// Invalid content or an I/O error; the sequence number is not consumed then.
    pub fn write(&mut self, chunk: &Chunk) -> Result<PathBuf, WriterError> {
        let path = self.next_path();
        write_chunk_atomic(&path, chunk)?;
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
