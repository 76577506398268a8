//! The run directory (see ARCHITECTURE.md, "The run directory"): paths, the accepted
//! model pointer, candidates, promotion and the event log.
//!
//! Models are directories holding one checkpoint's sidecar and weights
//! (`ckpt-S.json`, `ckpt-S.weights.safetensors`, `ckpt-S.ema.safetensors`), so every
//! loader of xq-train accepts them. Pointers store paths relative to the run directory,
//! so a run directory shared over NFS works whatever its mount point.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

use anyhow::{Context, Result};
use xq_data::layout;

use crate::events::{Event, EventLog, Record, WarningAction, WarningWhat};
use serde::{Deserialize, Serialize};

/// Writes a file of the run atomically ([`xq_data::io::write_bytes_atomic`], the one
/// implementation), naming the file on failure.
///
/// # Errors
/// The I/O error, with the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    xq_data::io::write_bytes_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// A network in the run directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRef {
    pub name: String,
    /// Relative to the run directory.
    pub path: PathBuf,
    #[serde(default)]
    pub step: u64,
    /// Unix seconds when it was written.
    #[serde(default)]
    pub time: u64,
}

/// An opened run directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The model name of a training step: sortable by step.
pub fn model_name(step: u64) -> String {
    format!("s{step:010}")
}

/// Copies the files of `src` that `only` accepts into a new directory `dst`, atomically
/// ([`xq_data::io::write_dir_atomic`]); an existing `dst` is kept as it is.
fn copy_dir_atomic(src: &Path, dst: &Path, mut only: impl FnMut(&str) -> bool) -> Result<()> {
    if dst.exists() {
        return Ok(());
    }
    let parent = dst.parent().context("model path has no parent")?;
    fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    xq_data::io::write_dir_atomic(
        dst,
        false,
        |tmp| {
            for entry in
                fs::read_dir(src).with_context(|| format!("cannot read {}", src.display()))?
            {
                let entry = entry.with_context(|| format!("cannot read {}", src.display()))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let is_file = entry
                    .file_type()
                    .with_context(|| format!("cannot read {}", entry.path().display()))?
                    .is_file();
                if is_file && only(&name) {
                    xq_data::io::copy_file_synced(&entry.path(), &tmp.join(&name)).with_context(
                        || {
                            format!(
                                "cannot copy {} to {}",
                                entry.path().display(),
                                dst.display()
                            )
                        },
                    )?;
                }
            }
            Ok(())
        },
        |e| anyhow::Error::new(e).context(format!("cannot write {}", dst.display())),
    )
}

impl RunDir {
    /// Opens (creating the layout if needed) a run directory, after checking that an
    /// atomic rename works in it ([`xq_data::io::check_atomic_rename`]).
    ///
    /// # Errors
    /// If the directory cannot be created or written, or renames in it are not atomic.
    pub fn open(root: impl Into<PathBuf>) -> Result<RunDir> {
        let run = RunDir { root: root.into() };
        for dir in [
            run.data_dir(),
            run.games_dir(),
            run.checkpoints_dir(),
            run.candidates_dir(),
            run.accepted_dir(),
            run.rejected_dir(),
            run.players_dir(),
            run.matches_dir(),
            run.logs_dir(),
        ] {
            fs::create_dir_all(&dir).map_err(|e| {
                let hint = match e.kind() {
                    std::io::ErrorKind::PermissionDenied
                    | std::io::ErrorKind::ReadOnlyFilesystem => " (is the run directory writable?)",
                    _ => "",
                };
                anyhow::Error::new(e).context(format!("cannot create {}{hint}", dir.display()))
            })?;
        }
        run.check_rename(xq_data::io::check_atomic_rename)?;
        Ok(run)
    }

    /// Runs `probe` (the atomic-rename check) in the root, which holds the pointers,
    /// and in `data/`, which holds the chunks: either may be its own mount.
    fn check_rename(&self, probe: impl Fn(&Path) -> std::io::Result<()>) -> Result<()> {
        for dir in [self.root.clone(), self.data_dir()] {
            probe(&dir).map_err(|e| {
                anyhow::anyhow!(
                    "{} does not support atomic rename ({e}); a run directory must be on a \
                     POSIX filesystem (a local disk, NFS, Lustre, CephFS, GPFS), not an \
                     object-store mount",
                    dir.display()
                )
            })?;
        }
        Ok(())
    }

    /// Opens a run directory that must already exist, creating nothing: for readers such
    /// as `xqz report`, which must work on a run they may not write to and must not turn
    /// a mistyped path into a fresh empty run.
    ///
    /// # Errors
    /// If `root` is not an existing directory.
    pub fn existing(root: impl Into<PathBuf>) -> Result<RunDir> {
        let root = root.into();
        if !root.is_dir() {
            anyhow::bail!(
                "run directory {} does not exist (or is not a directory)",
                root.display()
            );
        }
        Ok(RunDir { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn data_dir(&self) -> PathBuf {
        self.root.join(layout::DATA_DIR)
    }
    pub fn games_dir(&self) -> PathBuf {
        self.root.join(layout::GAMES_DIR)
    }
    pub fn checkpoints_dir(&self) -> PathBuf {
        self.root.join(layout::CHECKPOINTS_DIR)
    }
    pub fn candidates_dir(&self) -> PathBuf {
        self.root.join(layout::CANDIDATES_DIR)
    }
    pub fn accepted_dir(&self) -> PathBuf {
        self.root.join(layout::ACCEPTED_DIR)
    }
    pub fn rejected_dir(&self) -> PathBuf {
        self.root.join(layout::REJECTED_DIR)
    }
    pub fn players_dir(&self) -> PathBuf {
        self.root.join(layout::PLAYERS_DIR)
    }
    pub fn strength_dir(&self) -> PathBuf {
        self.root.join(layout::STRENGTH_DIR)
    }
    pub fn matches_dir(&self) -> PathBuf {
        self.root.join(layout::MATCHES_DIR)
    }
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join(layout::LOGS_DIR)
    }
    /// The run's copy of its config (written by `xqz run` on first start).
    pub fn config_path(&self) -> PathBuf {
        self.root.join(layout::CONFIG_FILE)
    }

    /// The config a command reads: the one given on the command line, else the run's
    /// copy if it exists, else none (built-in defaults).
    pub fn config_for(&self, given: Option<&Path>) -> Option<PathBuf> {
        given
            .map(Path::to_path_buf)
            .or_else(|| Some(self.config_path()).filter(|p| p.is_file()))
    }

    pub fn events_path(&self) -> PathBuf {
        self.root.join(layout::EVENTS_FILE)
    }
    /// The accepted-network pointer.
    pub fn pointer_path(&self) -> PathBuf {
        self.root.join(layout::ACCEPTED_POINTER)
    }

    /// `path` as the run's own files record it: relative to the run directory when it
    /// lies inside it, unchanged otherwise. Readers join a recorded relative path onto
    /// the root (as the model pointer's), so a path relative to the writer's working
    /// directory (`runs/q/players/s…` for `--run runs/q`) would name the run twice.
    pub fn relative(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.root)
            .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
    }

    /// The absolute path of a model.
    pub fn model_path(&self, m: &ModelRef) -> PathBuf {
        self.root.join(&m.path)
    }

    /// The current accepted network, if any.
    ///
    /// # Errors
    /// If the pointer exists but cannot be read or parsed.
    pub fn accepted(&self) -> Result<Option<ModelRef>> {
        let path = self.pointer_path();
        match fs::read_to_string(&path) {
            Ok(text) => Ok(Some(serde_json::from_str(&text).with_context(|| {
                format!("corrupt model pointer {}", path.display())
            })?)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Copies the trainer checkpoint `sidecar` (`ckpt-S.json`) into
    /// `models/candidates/<name>/` without its optimiser state.
    ///
    /// # Errors
    /// If the files cannot be copied.
    pub fn publish_candidate(&self, sidecar: &Path, step: u64) -> Result<ModelRef> {
        let stem = sidecar
            .file_stem()
            .and_then(|s| s.to_str())
            .with_context(|| format!("bad checkpoint path {}", sidecar.display()))?
            .to_owned();
        let src = sidecar.parent().context("checkpoint has no directory")?;
        let name = model_name(step);
        let rel = PathBuf::from(layout::CANDIDATES_DIR).join(&name);
        copy_dir_atomic(src, &self.root.join(&rel), |f| {
            // Not the optimiser state, nor a temporary a crashed trainer left behind.
            f.starts_with(&stem) && !f.contains(".optim.") && !f.ends_with(".tmp")
        })?;
        let m = ModelRef {
            name,
            path: rel,
            step,
            time: now(),
        };
        self.record(Event::Candidate {
            model: m.name.clone(),
            step,
        })?;
        Ok(m)
    }

    /// Candidates that have been neither accepted nor rejected, oldest first.
    ///
    /// # Errors
    /// If the directories cannot be read.
    pub fn pending_candidates(&self) -> Result<Vec<ModelRef>> {
        let mut out = Vec::new();
        let dir = self.candidates_dir();
        for entry in fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(step) = name.strip_prefix('s').and_then(|s| s.parse::<u64>().ok()) else {
                continue;
            };
            if !entry.file_type()?.is_dir()
                || self.accepted_dir().join(&name).exists()
                || self.rejected_dir().join(format!("{name}.json")).exists()
            {
                continue;
            }
            out.push(ModelRef {
                path: PathBuf::from(layout::CANDIDATES_DIR).join(&name),
                name,
                step,
                time: 0,
            });
        }
        out.sort_by_key(|m| m.step);
        Ok(out)
    }

    /// Makes `candidate` the accepted network: copies it to `models/accepted/` and then
    /// replaces the pointer atomically.
    ///
    /// # Errors
    /// If the files cannot be written.
    pub fn promote(&self, candidate: &ModelRef, details: serde_json::Value) -> Result<ModelRef> {
        let rel = PathBuf::from(layout::ACCEPTED_DIR).join(&candidate.name);
        copy_dir_atomic(&self.model_path(candidate), &self.root.join(&rel), |_| true)?;
        let m = ModelRef {
            name: candidate.name.clone(),
            path: rel,
            step: candidate.step,
            time: now(),
        };
        write_atomic(
            &self.pointer_path(),
            serde_json::to_string_pretty(&m)?.as_bytes(),
        )?;
        self.record(Event::Promote {
            model: m.name.clone(),
            step: m.step,
            details: Some(details),
        })?;
        Ok(m)
    }

    /// Records that `candidate` failed gating.
    ///
    /// # Errors
    /// If the record cannot be written.
    pub fn reject(&self, candidate: &ModelRef, details: serde_json::Value) -> Result<()> {
        write_atomic(
            &self.rejected_dir().join(format!("{}.json", candidate.name)),
            serde_json::to_string_pretty(&details)?.as_bytes(),
        )
    }

    /// Appends one event to `events.jsonl` in a single write of a whole line.
    ///
    /// # Errors
    /// If the log cannot be written (a full disk, a read-only directory).
    pub fn record(&self, event: Event) -> Result<()> {
        let record = Record {
            time: Some(now()),
            event,
        };
        let mut line = serde_json::to_string(&record)?;
        line.push('\n');
        let path = self.events_path();
        let mut f = fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        // A write that ran out of space may have left part of a line: end it first, so
        // this event does not run into it (readers skip the torn line, not this one),
        // and say so in the same write, as a warning in the log and on stderr.
        if !ends_with_newline(&f) {
            let repaired = Event::file_warning(
                WarningWhat::Events,
                layout::EVENTS_FILE,
                WarningAction::Repaired,
                "a torn line (a write cut short) was ended",
            );
            eprintln!(
                "warning: {}: {}",
                path.display(),
                warning_message(&repaired)
            );
            let repaired = Record {
                time: record.time,
                event: repaired,
            };
            line.insert_str(0, &format!("\n{}\n", serde_json::to_string(&repaired)?));
        }
        f.write_all(line.as_bytes())
            .with_context(|| format!("cannot append to {}", path.display()))
    }

    /// Records a warning event (a file skipped or repaired, see
    /// [`Event::file_warning`]; a path inside the run is stored relative to it) and
    /// returns the line to show for it, `warning: …`. A warning that cannot be recorded
    /// says so in its line instead of failing: it reports a fault the run survives, and
    /// a full disk should not turn it into one the run does not.
    pub fn warn(&self, mut event: Event) -> String {
        if let Event::Warning {
            path: Some(path), ..
        } = &mut event
            && let Ok(rel) = path.strip_prefix(&self.root)
        {
            *path = rel.to_path_buf();
        }
        let line = format!("warning: {}", warning_message(&event));
        match self.record(event) {
            Ok(()) => line,
            Err(e) => format!("{line} (not recorded: {e:#})"),
        }
    }

    /// The event log ([`EventLog::parse`]). Bytes that are not UTF-8 are replaced
    /// rather than failing the whole log; a missing log is an empty one.
    ///
    /// # Errors
    /// If the log exists but cannot be read.
    pub fn events(&self) -> Result<EventLog> {
        let path = self.events_path();
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(EventLog::default()),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        Ok(EventLog::parse(&String::from_utf8_lossy(&bytes)))
    }
}

/// A warning's text with the file it names: `data/w-1.xqc: truncated (skipped)`.
fn warning_message(event: &Event) -> String {
    let Event::Warning {
        message,
        path,
        action,
        ..
    } = event
    else {
        return String::new();
    };
    let mut text = match path {
        Some(p) => format!("{}: {message}", p.display()),
        None => message.clone(),
    };
    if let Some(a) = action {
        text.push_str(match a {
            WarningAction::Skipped => " (skipped)",
            WarningAction::Repaired => " (repaired)",
            WarningAction::Ignored => " (ignored)",
            WarningAction::Stopped => " (stopped)",
            WarningAction::Removed => " (removed)",
            WarningAction::Other => "",
        });
    }
    text
}

/// Whether a file is empty or ends with a newline (true when it cannot be read: the
/// check only repairs what a failed append left behind).
fn ends_with_newline(f: &fs::File) -> bool {
    use std::os::unix::fs::FileExt;
    let Ok(len) = f.metadata().map(|m| m.len()) else {
        return true;
    };
    let mut last = [b'\n'];
    len == 0 || f.read_exact_at(&mut last, len - 1).is_err() || last[0] == b'\n'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("xqz-rundir-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_directory_without_atomic_rename_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let data = run.data_dir();
        // A filesystem whose rename fails in data/ only.
        let err = run
            .check_rename(|d| {
                if d == data {
                    Err(std::io::Error::other("rename emulated"))
                } else {
                    Ok(())
                }
            })
            .unwrap_err();
        let err = format!("{err:#}");
        assert!(err.contains(&data.display().to_string()), "{err}");
        assert!(
            err.contains("does not support atomic rename (rename emulated)"),
            "{err}"
        );
        assert!(err.contains("POSIX filesystem"), "{err}");
    }

    #[test]
    fn recorded_paths_are_relative_to_the_run_and_join_back_once() {
        for root in ["runs/q", "./runs/q/", "/abs/runs/q"] {
            let run = RunDir { root: root.into() };
            let player = run.players_dir().join("s0000000600");
            let recorded = run.relative(&player);
            assert_eq!(recorded, Path::new("players/s0000000600"), "root {root}");
            assert_eq!(run.root().join(&recorded), player, "root {root}");
        }
        let run = RunDir {
            root: "runs/q".into(),
        };
        let outside = Path::new("/elsewhere/players/p");
        assert_eq!(
            run.relative(outside),
            outside,
            "a path outside stays as it is"
        );
    }

    #[test]
    fn candidates_are_published_promoted_and_rejected() {
        let root = temp("flow");
        let run = RunDir::open(&root).unwrap();
        let ck = run.checkpoints_dir();
        for f in [
            "ckpt-0000000010.json",
            "ckpt-0000000010.weights.safetensors",
            "ckpt-0000000010.optim.safetensors",
        ] {
            fs::write(ck.join(f), f).unwrap();
        }
        assert_eq!(run.accepted().unwrap(), None);
        let c = run
            .publish_candidate(&ck.join("ckpt-0000000010.json"), 10)
            .unwrap();
        assert!(run.model_path(&c).join("ckpt-0000000010.json").exists());
        assert!(
            !run.model_path(&c)
                .join("ckpt-0000000010.optim.safetensors")
                .exists()
        );
        assert_eq!(run.pending_candidates().unwrap().len(), 1);
        let a = run.promote(&c, serde_json::json!({})).unwrap();
        assert_eq!(run.accepted().unwrap(), Some(a));
        assert!(run.pending_candidates().unwrap().is_empty());
        let promotions = run.events().unwrap();
        let promotions = promotions
            .events()
            .filter(|e| matches!(e, Event::Promote { .. }));
        assert_eq!(promotions.count(), 1);
        fs::write(ck.join("ckpt-0000000020.json"), "x").unwrap();
        let c2 = run
            .publish_candidate(&ck.join("ckpt-0000000020.json"), 20)
            .unwrap();
        run.reject(&c2, serde_json::json!({"score": 0.4})).unwrap();
        assert!(run.pending_candidates().unwrap().is_empty());
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_event_after_a_torn_line_starts_on_a_line_of_its_own() {
        let root = temp("torn");
        let run = RunDir::open(&root).unwrap();
        let warning = |message: &str| Event::Warning {
            model: None,
            message: message.into(),
            what: None,
            path: None,
            action: None,
        };
        run.record(warning("a")).unwrap();
        // What a write cut short by a full disk leaves behind.
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(run.events_path())
            .unwrap();
        f.write_all(b"{\"time\":1,\"ki").unwrap();
        run.record(warning("b")).unwrap();
        let log = run.events().unwrap();
        let kinds: Vec<_> = log.events().cloned().collect();
        let repaired = Event::file_warning(
            WarningWhat::Events,
            layout::EVENTS_FILE,
            WarningAction::Repaired,
            "a torn line (a write cut short) was ended",
        );
        assert_eq!(kinds, [warning("a"), repaired, warning("b")]);
        assert_eq!(log.unreadable, [2]);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_failed_copy_leaves_no_half_model() {
        let root = temp("copy");
        let src = root.join("src");
        fs::create_dir_all(&src).unwrap();
        for f in ["a.json", "b.json", "c.json"] {
            fs::write(src.join(f), f).unwrap();
        }
        let dst = root.join("models/dst");
        // Fault injection: the second file vanishes just before it is copied, so the
        // copy fails after the first file is already in the temporary directory.
        let mut n = 0;
        let err = copy_dir_atomic(&src, &dst, |name| {
            n += 1;
            if n == 2 {
                fs::remove_file(src.join(name)).unwrap();
            }
            true
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("cannot copy"), "{err:#}");
        assert!(!dst.exists());
        let left: Vec<_> = fs::read_dir(root.join("models")).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
        fs::remove_dir_all(&root).unwrap();
    }
}
