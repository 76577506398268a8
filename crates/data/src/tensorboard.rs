//! TensorBoard scalars: events built from tensorboard-rs's protobuf types, framed by
//! its record writer, and written to the file here so that a failed write is an error,
//! not the crate's panic. Every process of a run logs through it (the trainer, the
//! gatekeeper, rating matches, self-play workers), each into its own directory of
//! `logs/` ([`crate::layout`]). It lives in xq-data, below xq-train, so the trainer
//! (the one crate that links libtorch) logs without reaching xq-run or xq-eval.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use protobuf::Message;
use tensorboard_proto::event::Event;
use tensorboard_rs::{record_writer::RecordWriter, summary::scalar};

/// An event file that cannot be created or written (a full disk, a read-only
/// directory).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct TbError {
    /// The event file, or the directory it was to be created in.
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl TbError {
    fn new(path: &Path, source: std::io::Error) -> TbError {
        TbError {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Appends scalars to a TensorBoard event file in `dir`. The file is created on the
/// first scalar, so a run that never logs leaves no empty event file.
///
/// Records are written synchronously, one `write` each, in TensorBoard's TFRecord
/// framing (length, masked CRC-32C of the length, an `Event` protobuf, its masked
/// CRC-32C), all built by tensorboard-rs and its protobuf types. Its own
/// `EventFileWriter` is not used: it writes on a thread that panics on the first I/O
/// error (a full disk), which would take the training run with it.
///
/// A write that fails is an error naming the file, never a panic; the partial record
/// is cut off again, so the file stays readable, and the logger stops: TensorBoard
/// curves are a view of the run, and a disk that cannot take them should cost the
/// curves, not the run. The error is returned once, by the call that met it, so the
/// caller can warn; later scalars are dropped.
pub struct TbLogger {
    dir: PathBuf,
    file: Option<EventFile>,
    stopped: bool,
}

struct EventFile {
    path: PathBuf,
    file: File,
    /// Length of the file up to its last complete record.
    len: u64,
}

impl std::fmt::Debug for TbLogger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TbLogger")
            .field("dir", &self.dir)
            .field("file", &self.file.as_ref().map(|f| &f.path))
            .finish()
    }
}

impl TbLogger {
    /// A logger writing into `dir` (created when the first scalar arrives).
    pub fn new(dir: impl Into<PathBuf>) -> TbLogger {
        TbLogger {
            dir: dir.into(),
            file: None,
            stopped: false,
        }
    }

    /// The event directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The event file, once the first scalar has created it.
    pub fn path(&self) -> Option<&Path> {
        self.file.as_ref().map(|f| f.path.as_path())
    }

    /// Whether an earlier failure stopped the logger (see the type's documentation).
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// Adds one scalar at `step`; does nothing once the logger has stopped.
    ///
    /// # Errors
    /// If the directory or the event file cannot be created or written (a full disk,
    /// a read-only directory); the error names the path, and the logger stops.
    pub fn scalar(&mut self, tag: &str, value: f64, step: u64) -> Result<(), TbError> {
        if self.stopped {
            return Ok(());
        }
        let result = self.append_scalar(tag, value, step);
        self.stopped = result.is_err();
        result
    }

    fn append_scalar(&mut self, tag: &str, value: f64, step: u64) -> Result<(), TbError> {
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(EventFile::create(&self.dir)?),
        };
        #[allow(clippy::cast_possible_wrap)]
        let event = scalar_event(wall_time(), step as i64, tag, value as f32);
        file.append(&event)
    }
}

impl EventFile {
    /// Creates `DIR/events.out.tfevents.<time>.<host>.<pid>.<n>` with its version record.
    fn create(dir: &Path) -> Result<EventFile, TbError> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        std::fs::create_dir_all(dir).map_err(|e| TbError::new(dir, e))?;
        let time = wall_time();
        let host: String = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap_or_default()
            .trim()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect();
        let name = format!(
            "events.out.tfevents.{:010}.{}.{}.{}",
            time as u64,
            if host.is_empty() { "host" } else { &host },
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        );
        let path = dir.join(name);
        let file = File::options()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| TbError::new(&path, e))?;
        let len = file.metadata().map_err(|e| TbError::new(&path, e))?.len();
        let mut f = EventFile { path, file, len };
        if let Err(e) = f.append(&version_event(time)) {
            // Not even the header fits: leave no empty event file behind.
            let _ = std::fs::remove_file(&f.path);
            return Err(e);
        }
        Ok(f)
    }

    /// Appends one record; on failure cuts the file back to its last whole record.
    fn append(&mut self, event: &[u8]) -> Result<(), TbError> {
        let record = tf_record(event);
        if let Err(e) = self.file.write_all(&record) {
            // Best effort: a torn record would hide every later one from TensorBoard.
            let _ = self.file.set_len(self.len);
            return Err(TbError::new(&self.path, e));
        }
        self.len += record.len() as u64;
        Ok(())
    }
}

fn wall_time() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// TFRecord framing (`u64` length, masked CRC-32C of it, the data, masked CRC-32C of
/// it) by tensorboard-rs's `RecordWriter`, into memory: the file then gets the whole
/// record in one write, which is what lets [`EventFile::append`] undo a torn one.
fn tf_record(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 16);
    RecordWriter::new(&mut out)
        .write(data)
        .expect("writing into a Vec cannot fail");
    out
}

/// The first record of an event file: `Event { wall_time, file_version }`.
fn version_event(wall_time: f64) -> Vec<u8> {
    let mut e = Event::new();
    e.set_wall_time(wall_time);
    e.set_file_version("brain.Event:2".to_owned());
    encode(&e)
}

/// `Event { wall_time, step, summary: tensorboard-rs's scalar summary }`.
fn scalar_event(wall_time: f64, step: i64, tag: &str, value: f32) -> Vec<u8> {
    let mut e = Event::new();
    e.set_wall_time(wall_time);
    e.set_step(step);
    e.set_summary(scalar(tag, value));
    encode(&e)
}

/// The protobuf bytes of an event. Encoding into memory fails only for a message with
/// unset required fields, which proto3's `Event` does not have.
fn encode(event: &Event) -> Vec<u8> {
    event
        .write_to_bytes()
        .expect("an Event has no required fields and encodes into memory")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_an_error_naming_the_event_file_not_a_panic() {
        // /dev/full answers every write with ENOSPC.
        let path = PathBuf::from("/dev/full");
        let Ok(file) = File::options().append(true).open(&path) else {
            panic!("/dev/full is missing: this test needs Linux's full device");
        };
        let mut f = EventFile {
            path: path.clone(),
            file,
            len: 0,
        };
        let err = f
            .append(&scalar_event(1.0, 3, "loss/total", 0.5))
            .unwrap_err();
        assert_eq!(err.path, path);
        assert_eq!(err.source.kind(), std::io::ErrorKind::StorageFull);
        assert!(err.to_string().contains("/dev/full"), "{err}");
        assert_eq!(f.len, 0);
    }

    #[test]
    fn events_decode_as_tensorboard_events_with_a_simple_value() {
        let event = Event::parse_from_bytes(&scalar_event(2.5, 300, "loss/total", 0.5)).unwrap();
        assert_eq!(event.get_wall_time(), 2.5);
        assert_eq!(event.get_step(), 300);
        let value = &event.get_summary().get_value()[0];
        assert_eq!(value.get_tag(), "loss/total");
        assert_eq!(value.get_simple_value(), 0.5);
        let version = Event::parse_from_bytes(&version_event(1.0)).unwrap();
        assert_eq!(version.get_file_version(), "brain.Event:2");
    }

    #[test]
    fn an_unwritable_log_directory_is_an_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("xq-data-tb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::write(&dir, b"a file where the directory should be").unwrap();
        let mut tb = TbLogger::new(dir.join("train"));
        let err = tb.scalar("loss/total", 1.0, 1).unwrap_err();
        assert!(
            err.to_string().contains(&dir.display().to_string()),
            "{err}"
        );
        assert!(tb.path().is_none());
        // The logger stopped: the failure is reported once, not at every scalar.
        assert!(tb.stopped());
        tb.scalar("loss/total", 1.0, 2).unwrap();
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn records_are_framed_with_lengths_and_checksums() {
        let event = scalar_event(2.5, 300, "a", 1.0);
        let record = tf_record(&event);
        assert_eq!(record.len(), event.len() + 16);
        assert_eq!(
            u64::from_le_bytes(record[..8].try_into().unwrap()),
            event.len() as u64
        );
        assert_eq!(&record[12..12 + event.len()], &event[..]);
        // step 300 as a varint after the wall time: 0x10, 0xac, 0x02.
        assert_eq!(&event[9..12], &[0x10, 0xac, 0x02]);
    }
}
