//! TensorBoard scalars (events built from tensorboard-rs's protobuf types, framed by
//! its record writer, written to the file here so that a failed write is an error, not
//! the crate's panic) and human progress output: an indicatif bar on a terminal, plain log lines
//! otherwise (so `nohup` logs stay readable).

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use protobuf::Message;
use tensorboard_proto::event::Event;
use tensorboard_rs::{record_writer::RecordWriter, summary::scalar};

use crate::error::TrainError;

/// TensorBoard tags written by the trainer.
pub mod tags {
    pub const POLICY_LOSS: &str = "loss/policy";
    pub const VALUE_LOSS: &str = "loss/value";
    pub const TOTAL_LOSS: &str = "loss/total";
    pub const POLICY_ACCURACY: &str = "accuracy/policy_top1";
    pub const VALUE_ACCURACY: &str = "accuracy/value";
    pub const LEARNING_RATE: &str = "train/learning_rate";
    pub const GRAD_NORM: &str = "train/grad_norm";
    pub const SAMPLES_PER_SEC: &str = "train/samples_per_sec";
    pub const WINDOW_SIZE: &str = "data/window_size";
    /// Share of wall time the trainer waited for batches (see `Trainer::add_data_wait`).
    pub const DATA_WAIT: &str = "data/wait_fraction";
}

/// How the trainer reports progress to a human.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Progress {
    /// A bar when stderr is a terminal, log lines otherwise.
    #[default]
    Auto,
    /// An indicatif bar on stderr.
    Bar,
    /// A plain line on stderr every `log_every` steps.
    Lines,
    /// Nothing (tests, library use).
    Off,
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
    pub fn scalar(&mut self, tag: &str, value: f64, step: u64) -> Result<(), TrainError> {
        if self.stopped {
            return Ok(());
        }
        let result = self.append_scalar(tag, value, step);
        self.stopped = result.is_err();
        result
    }

    fn append_scalar(&mut self, tag: &str, value: f64, step: u64) -> Result<(), TrainError> {
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
    fn create(dir: &Path) -> Result<EventFile, TrainError> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        std::fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
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
            .map_err(|e| TrainError::io(&path, e))?;
        let len = file.metadata().map_err(|e| TrainError::io(&path, e))?.len();
        let mut f = EventFile { path, file, len };
        if let Err(e) = f.append(&version_event(time)) {
            // Not even the header fits: leave no empty event file behind.
            let _ = std::fs::remove_file(&f.path);
            return Err(e);
        }
        Ok(f)
    }

    /// Appends one record; on failure cuts the file back to its last whole record.
    fn append(&mut self, event: &[u8]) -> Result<(), TrainError> {
        let record = tf_record(event);
        if let Err(e) = self.file.write_all(&record) {
            // Best effort: a torn record would hide every later one from TensorBoard.
            let _ = self.file.set_len(self.len);
            return Err(TrainError::io(&self.path, e));
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

/// Progress output.
#[derive(Debug)]
pub(crate) struct ProgressOut {
    mode: Progress,
    bar: Option<ProgressBar>,
    started: Instant,
    /// Whether a step was shown: a bar that never moved (replaced by
    /// `Trainer::set_progress` right after opening) is cleared, not left on screen.
    moved: std::cell::Cell<bool>,
}

impl ProgressOut {
    pub(crate) fn new(mode: Progress, total_steps: u64, start_step: u64) -> ProgressOut {
        let mode = match mode {
            Progress::Auto if std::io::stderr().is_terminal() => Progress::Bar,
            Progress::Auto => Progress::Lines,
            m => m,
        };
        let bar = (mode == Progress::Bar).then(|| {
            let bar = if total_steps > 0 {
                ProgressBar::new(total_steps)
            } else {
                ProgressBar::no_length()
            };
            let template = if total_steps > 0 {
                "{elapsed_precise} [{bar:30}] step {pos}/{len} eta {eta} {msg}"
            } else {
                "{elapsed_precise} step {pos} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_position(start_step);
            bar
        });
        ProgressOut {
            mode,
            bar,
            started: Instant::now(),
            moved: std::cell::Cell::new(false),
        }
    }

    /// Called after every step; `summary` is built only when something will print it.
    pub(crate) fn step(&self, step: u64, log_line: bool, summary: impl FnOnce() -> String) {
        match (&self.bar, self.mode) {
            (Some(bar), _) => {
                self.moved.set(true);
                bar.set_position(step);
                if log_line {
                    bar.set_message(summary());
                }
            }
            (None, Progress::Lines) if log_line => {
                eprintln!(
                    "[{:>8.1}s] step {step} {}",
                    self.started.elapsed().as_secs_f64(),
                    summary()
                );
            }
            _ => {}
        }
    }

    pub(crate) fn println(&self, line: &str) {
        match (&self.bar, self.mode) {
            (Some(bar), _) => bar.println(line),
            (None, Progress::Lines) => eprintln!("{line}"),
            _ => {}
        }
    }
}

impl Drop for ProgressOut {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            if self.moved.get() {
                bar.abandon();
            } else {
                bar.finish_and_clear();
            }
        }
    }
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
        match &err {
            TrainError::Io { path: p, source } => {
                assert_eq!(p, &path);
                assert_eq!(source.kind(), std::io::ErrorKind::StorageFull);
            }
            other => panic!("expected an I/O error, got {other:?}"),
        }
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
        let dir = std::env::temp_dir().join(format!("xq-train-tb-{}", std::process::id()));
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
