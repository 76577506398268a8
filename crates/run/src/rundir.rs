//! The run directory (see ARCHITECTURE.md, "The run directory"): paths, the accepted
//! model pointer, candidates and accepted networks, promotion and the event log.
//!
//! Models are directories holding one checkpoint's sidecar and weights
//! (`ckpt-S.json`, `ckpt-S.weights.safetensors`, `ckpt-S.ema.safetensors`), so every
//! network loader accepts them. Pointers store paths relative to the run directory,
//! so a run directory shared over NFS works whatever its mount point.

use std::{
    fs,
    io::Write,
    path::{Path, PathBuf},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use serde::{Deserialize, Serialize};
use xq_data::layout;
use xq_nn::checkpoint::{Sidecar, list_checkpoints, stem};

use crate::{
    RunError,
    events::{Event, EventLog, Record, WarningAction, WarningWhat},
};

/// Writes a file of the run atomically ([`xq_data::io::write_bytes_atomic`], the one
/// implementation), creating its directory.
///
/// # Errors
/// The I/O error, with the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(dir).map_err(|source| RunError::Create {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    xq_data::io::write_bytes_atomic(path, bytes).map_err(|source| RunError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// A network in the run directory: what the pointer `models/accepted.json` holds, and
/// what every command that takes a run's network is given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRef {
    pub name: String,
    /// Relative to the run directory: a model directory, or a checkpoint sidecar.
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

/// Unix seconds now (0 before the epoch).
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The model name of a training step: sortable by step.
pub fn model_name(step: u64) -> String {
    format!("s{step:010}")
}

/// The training step in a model name such as `s0000001200` ([`model_name`]'s inverse).
pub fn model_step(name: &str) -> Option<u64> {
    name.strip_prefix('s')?.parse().ok()
}

/// `text` as part of a file name (a player's name, an opponent's specification): ASCII
/// letters, digits, `-` and `.` are kept, everything else becomes `_`, and so does a
/// leading `.`, so the name is neither hidden (readers skip hidden files) nor `..`.
pub fn safe_file_name(text: &str) -> String {
    text.chars()
        .enumerate()
        .map(|(i, c)| {
            if c.is_ascii_alphanumeric() || c == '-' || (c == '.' && i > 0) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Copies the files of `src` that `only` accepts into a new directory `dst`, atomically
/// ([`xq_data::io::write_dir_atomic`]); an existing `dst` is kept as it is.
fn copy_dir_atomic(
    src: &Path,
    dst: &Path,
    mut only: impl FnMut(&str) -> bool,
) -> Result<(), RunError> {
    if dst.exists() {
        return Ok(());
    }
    let parent = dst.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|source| RunError::Create {
        path: parent.to_path_buf(),
        source,
    })?;
    let read = |path: &Path| {
        let path = path.to_path_buf();
        move |source| RunError::Read { path, source }
    };
    xq_data::io::write_dir_atomic(
        dst,
        false,
        |tmp| {
            for entry in fs::read_dir(src).map_err(read(src))? {
                let entry = entry.map_err(read(src))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let is_file = entry.file_type().map_err(read(&entry.path()))?.is_file();
                if is_file && only(&name) {
                    xq_data::io::copy_file_synced(&entry.path(), &tmp.join(&name)).map_err(
                        |source| RunError::Copy {
                            from: entry.path(),
                            to: dst.to_path_buf(),
                            source,
                        },
                    )?;
                }
            }
            Ok(())
        },
        |source| RunError::Write {
            path: dst.to_path_buf(),
            source,
        },
    )
}

impl RunDir {
    /// Opens (creating the layout if needed) a run directory, after checking that an
    /// atomic rename works in it ([`xq_data::io::check_atomic_rename`]).
    ///
    /// # Errors
    /// If the directory cannot be created or written, or renames in it are not atomic.
    pub fn open(root: impl Into<PathBuf>) -> Result<RunDir, RunError> {
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
            fs::create_dir_all(&dir).map_err(|source| RunError::Create { path: dir, source })?;
        }
        run.check_rename(xq_data::io::check_atomic_rename)?;
        Ok(run)
    }

    /// Removes the temporaries a killed writer left in the run's directories (files and
    /// directories of `xq_data::io::tmp_path` unchanged for `older_than`; runs use
    /// [`xq_data::window::STALE_TEMPORARY`]) and returns them for the caller to report.
    /// `data/` is the replay window's to clean, at each rescan; `data/held-out/` is
    /// cleaned here too, since the trainer lists it only when it evaluates.
    ///
    /// # Errors
    /// When a directory cannot be listed or a temporary cannot be removed.
    pub fn remove_stale_tmp(&self, older_than: Duration) -> Result<Vec<PathBuf>, RunError> {
        let mut removed = Vec::new();
        for dir in [
            self.root.clone(),
            self.selfplay_held_out_dir(),
            self.games_dir(),
            self.checkpoints_dir(),
            self.candidates_dir(),
            self.accepted_dir(),
            self.rejected_dir(),
            self.players_dir(),
            self.matches_dir(),
            self.root.join(layout::STRENGTH_DIR),
        ]
        .into_iter()
        // The pointer's own directory (`models/`), where its temporaries land.
        .chain(self.pointer_path().parent().map(Path::to_path_buf))
        {
            removed.extend(
                xq_data::io::remove_stale_tmp(&dir, older_than)
                    .map_err(|source| RunError::Write { path: dir, source })?,
            );
        }
        Ok(removed)
    }

    /// Runs `probe` (the atomic-rename check) in the root, which holds the pointers,
    /// and in `data/`, which holds the chunks: either may be its own mount.
    fn check_rename(&self, probe: impl Fn(&Path) -> std::io::Result<()>) -> Result<(), RunError> {
        for dir in [self.root.clone(), self.data_dir()] {
            probe(&dir).map_err(|error| RunError::NotAtomic { dir, error })?;
        }
        Ok(())
    }

    /// Opens a run directory that must already exist, creating nothing: for readers such
    /// as `xqz report`, which must work on a run they may not write to and must not turn
    /// a mistyped path into a fresh empty run.
    ///
    /// # Errors
    /// [`RunError::Missing`] if `root` is not an existing directory.
    pub fn existing(root: impl Into<PathBuf>) -> Result<RunDir, RunError> {
        let root = root.into();
        if !root.is_dir() {
            return Err(RunError::Missing(root));
        }
        Ok(RunDir { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn data_dir(&self) -> PathBuf {
        self.root.join(layout::DATA_DIR)
    }
    /// The held-out self-play games' chunks (`data/held-out/`), which the trainer
    /// evaluates and never trains on.
    pub fn selfplay_held_out_dir(&self) -> PathBuf {
        self.root.join(layout::HELD_OUT_DIR)
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
    /// The trainer's TensorBoard directory.
    pub fn train_logs_dir(&self) -> PathBuf {
        self.root.join(layout::TRAIN_LOGS_DIR)
    }
    /// The gatekeeper's TensorBoard directory.
    pub fn gate_logs_dir(&self) -> PathBuf {
        self.root.join(layout::GATE_LOGS_DIR)
    }
    /// The rating matches' TensorBoard directory.
    pub fn rating_logs_dir(&self) -> PathBuf {
        self.root.join(layout::RATING_LOGS_DIR)
    }
    /// A self-play worker's TensorBoard directory.
    pub fn selfplay_logs_dir(&self, worker: &str) -> PathBuf {
        self.root.join(layout::SELFPLAY_LOGS_DIR).join(worker)
    }
    /// The page `xqz report` writes unless told otherwise.
    pub fn report_path(&self) -> PathBuf {
        self.root.join(layout::REPORT_FILE)
    }
    /// The run's copy of its config (written by `xqz run` on first start).
    pub fn config_path(&self) -> PathBuf {
        self.root.join(layout::CONFIG_FILE)
    }

    /// Where `xqz run` records the directory its config was copied from.
    pub fn config_base_path(&self) -> PathBuf {
        self.root.join(layout::CONFIG_BASE_FILE)
    }

    /// The directory the run's copy of its config was copied from, if recorded: the
    /// copy's relative paths resolve against it.
    ///
    /// # Errors
    /// The file exists and cannot be read.
    pub fn config_base(&self) -> Result<Option<PathBuf>, RunError> {
        let path = self.config_base_path();
        match fs::read_to_string(&path) {
            Ok(text) => Ok(Some(PathBuf::from(text.trim_end_matches('\n')))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(RunError::Read { path, source }),
        }
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

    /// The checkpoint sidecar of a model: the newest checkpoint of a model directory,
    /// or the model itself when it is a sidecar (a trainer checkpoint, the pointer of
    /// an older run).
    ///
    /// # Errors
    /// [`RunError::NoCheckpoint`] when there is none; a directory that cannot be listed.
    pub fn sidecar(&self, m: &ModelRef) -> Result<PathBuf, RunError> {
        let path = self.model_path(m);
        if path.is_dir() {
            return list_checkpoints(&path)?
                .pop()
                .map(|(_, sidecar)| sidecar)
                .ok_or(RunError::NoCheckpoint(path));
        }
        if path.is_file() && path.extension().is_some_and(|e| e == "json") {
            Ok(path)
        } else {
            Err(RunError::NoCheckpoint(path))
        }
    }

    /// The current accepted network, if any. Older runs copied the accepted checkpoint's
    /// sidecar in place of the pointer; such a pointer names itself.
    ///
    /// # Errors
    /// If the pointer exists but cannot be read, or is neither a pointer nor a sidecar.
    pub fn accepted(&self) -> Result<Option<ModelRef>, RunError> {
        let path = self.pointer_path();
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(RunError::Read { path, source }),
        };
        match serde_json::from_str(&text) {
            Ok(m) => Ok(Some(m)),
            Err(source) => match Sidecar::read(&path) {
                Ok(sidecar) => Ok(Some(ModelRef {
                    name: model_name(sidecar.step),
                    path: layout::ACCEPTED_POINTER.into(),
                    step: sidecar.step,
                    time: 0,
                })),
                Err(_) => Err(RunError::Pointer { path, source }),
            },
        }
    }

    /// The network a command takes when it is named none: the accepted one, else the
    /// newest of the trainer's checkpoints (a run that has not gated yet).
    ///
    /// # Errors
    /// A pointer that cannot be read, a checkpoint directory that cannot be listed.
    pub fn latest_model(&self) -> Result<Option<ModelRef>, RunError> {
        if let Some(m) = self.accepted()? {
            return Ok(Some(m));
        }
        Ok(list_checkpoints(&self.checkpoints_dir())?
            .pop()
            .map(|(step, sidecar)| ModelRef {
                name: stem(step),
                path: self.relative(&sidecar),
                step,
                time: 0,
            }))
    }

    /// A network by the name a user gives it: an accepted network, a candidate, a
    /// trainer checkpoint (`ckpt-S`), in that order, else a path to a sidecar or a model
    /// directory (an exported player's `network.safetensors` stands for the
    /// `network.json` beside it).
    ///
    /// # Errors
    /// [`RunError::NoModel`] naming every place tried.
    pub fn find_model(&self, name: &str) -> Result<ModelRef, RunError> {
        let found = |path: PathBuf, step: u64| ModelRef {
            name: name.to_owned(),
            path,
            step,
            time: 0,
        };
        for dir in [layout::ACCEPTED_DIR, layout::CANDIDATES_DIR] {
            let rel = Path::new(dir).join(name);
            if self.root.join(&rel).is_dir() {
                return Ok(found(rel, model_step(name).unwrap_or(0)));
            }
        }
        let checkpoint = self.checkpoints_dir().join(format!("{name}.json"));
        if let Some((step, sidecar)) = list_checkpoints(&self.checkpoints_dir())?
            .into_iter()
            .find(|(_, p)| *p == checkpoint)
        {
            return Ok(found(self.relative(&sidecar), step));
        }
        let mut given = PathBuf::from(name);
        if given.extension().is_some_and(|e| e == "safetensors") {
            given.set_extension("json");
        }
        if given.exists() {
            // Absolute, so that joining it onto the root leaves it as it is.
            let given = std::path::absolute(&given).unwrap_or(given);
            return Ok(found(given, 0));
        }
        Err(RunError::NoModel {
            name: name.to_owned(),
            tried: [
                self.accepted_dir().join(name),
                self.candidates_dir().join(name),
                checkpoint,
                PathBuf::from(name),
            ]
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        })
    }

    /// The model directories (`sNNNNNNNNNN/`) of `rel`, by step; none when it is absent.
    fn models_in(&self, rel: &str) -> Result<Vec<ModelRef>, RunError> {
        let dir = self.root.join(rel);
        let read = |source| RunError::Read {
            path: dir.clone(),
            source,
        };
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(read(e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(read)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(step) = model_step(&name) else {
                continue;
            };
            if entry.file_type().map_err(read)?.is_dir() {
                out.push(ModelRef {
                    path: Path::new(rel).join(&name),
                    name,
                    step,
                    time: 0,
                });
            }
        }
        out.sort_by(|a, b| (a.step, &a.name).cmp(&(b.step, &b.name)));
        Ok(out)
    }

    /// Every network that passed gating (`models/accepted/`), oldest first.
    ///
    /// # Errors
    /// If the directory cannot be read.
    pub fn accepted_models(&self) -> Result<Vec<ModelRef>, RunError> {
        self.models_in(layout::ACCEPTED_DIR)
    }

    /// Copies the trainer checkpoint `sidecar` (`ckpt-S.json`) into
    /// `models/candidates/<name>/` without its optimiser state.
    ///
    /// # Errors
    /// If the files cannot be copied.
    pub fn publish_candidate(&self, sidecar: &Path, step: u64) -> Result<ModelRef, RunError> {
        let bad = || RunError::CheckpointName(sidecar.to_path_buf());
        let stem = sidecar
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(bad)?
            .to_owned();
        let src = sidecar.parent().ok_or_else(bad)?;
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
    pub fn pending_candidates(&self) -> Result<Vec<ModelRef>, RunError> {
        let mut out = self.models_in(layout::CANDIDATES_DIR)?;
        out.retain(|m| {
            !self.accepted_dir().join(&m.name).exists()
                && !self
                    .rejected_dir()
                    .join(format!("{}.json", m.name))
                    .exists()
        });
        Ok(out)
    }

    /// Makes `candidate` the accepted network: copies it to `models/accepted/` and then
    /// replaces the pointer atomically.
    ///
    /// # Errors
    /// If the files cannot be written.
    pub fn promote(
        &self,
        candidate: &ModelRef,
        details: serde_json::Value,
    ) -> Result<ModelRef, RunError> {
        let rel = PathBuf::from(layout::ACCEPTED_DIR).join(&candidate.name);
        copy_dir_atomic(&self.model_path(candidate), &self.root.join(&rel), |_| true)?;
        let m = ModelRef {
            name: candidate.name.clone(),
            path: rel,
            step: candidate.step,
            time: now(),
        };
        let pointer = serde_json::to_string_pretty(&m).expect("a ModelRef serialises");
        write_atomic(&self.pointer_path(), pointer.as_bytes())?;
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
    pub fn reject(&self, candidate: &ModelRef, details: serde_json::Value) -> Result<(), RunError> {
        write_atomic(
            &self.rejected_dir().join(format!("{}.json", candidate.name)),
            serde_json::to_string_pretty(&details)
                .expect("a JSON value serialises")
                .as_bytes(),
        )
    }

    /// Appends one event to `events.jsonl` in a single write of a whole line, under an
    /// exclusive advisory lock on the file (`flock`) so that concurrent writers' torn-line
    /// checks never see a line still being written.
    ///
    /// A line torn by an earlier write cut short (a full disk) is ended first, with a
    /// `warning` event in the same write; the warning's line, `warning: …`, is returned
    /// for the caller to show (`None` when the log was whole).
    ///
    /// # Errors
    /// If the log cannot be written (a full disk, a read-only directory).
    pub fn record(&self, event: Event) -> Result<Option<String>, RunError> {
        let record = Record {
            time: Some(now()),
            event,
        };
        // Events hold strings, numbers and JSON values: they always serialise.
        let line_of = |r: &Record| serde_json::to_string(r).expect("an event serialises");
        let mut line = line_of(&record);
        line.push('\n');
        let path = self.events_path();
        let mut f = fs::OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|source| RunError::Append {
                path: path.clone(),
                source,
            })?;
        // Held until `f` drops, after the write. Without it the check below can see
        // another process's line half-copied (a write past a page boundary grows the
        // file page by page) and "repair" it with a blank line. A killed holder releases
        // it. A filesystem without locks leaves the check racy, not the write.
        let _ = f.lock();
        // A write that ran out of space may have left part of a line: end it first, so
        // this event does not run into it (readers skip the torn line, not this one),
        // and say so in the same write, as a warning in the log and to the caller.
        let mut shown = None;
        if !ends_with_newline(&f) {
            let repaired = Event::file_warning(
                WarningWhat::Events,
                layout::EVENTS_FILE,
                WarningAction::Repaired,
                "a torn line (a write cut short) was ended",
            );
            shown = Some(format!(
                "warning: {}: {}",
                path.display(),
                warning_message(&repaired)
            ));
            let repaired = Record {
                time: record.time,
                event: repaired,
            };
            line.insert_str(0, &format!("\n{}\n", line_of(&repaired)));
        }
        f.write_all(line.as_bytes())
            .map_err(|source| RunError::Append { path, source })?;
        Ok(shown)
    }

    /// Records a warning event (a file skipped or repaired, see
    /// [`Event::file_warning`]; a path inside the run is stored relative to it) and
    /// returns the line to show for it, `warning: …` (after the line of a torn log line
    /// it ended, see [`RunDir::record`]). A warning that cannot be recorded
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
            Ok(None) => line,
            Ok(Some(repaired)) => format!("{repaired}\n{line}"),
            Err(e) => format!("{line} (not recorded: {e})"),
        }
    }

    /// The event log ([`EventLog::parse`]). Bytes that are not UTF-8 are replaced
    /// rather than failing the whole log; a missing log is an empty one.
    ///
    /// # Errors
    /// If the log exists but cannot be read.
    pub fn events(&self) -> Result<EventLog, RunError> {
        let path = self.events_path();
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(EventLog::default()),
            Err(source) => return Err(RunError::Read { path, source }),
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
    fn a_killed_writers_temporaries_are_removed_from_the_runs_directories_only_when_stale() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        let pointer = xq_data::io::tmp_path(&run.pointer_path());
        let candidate = xq_data::io::tmp_path(&run.candidates_dir().join("s0000000100"));
        let held_out = xq_data::io::tmp_path(&run.selfplay_held_out_dir().join("w-00000000.xqc"));
        fs::write(&pointer, b"{").unwrap();
        fs::create_dir_all(candidate.join("inner")).unwrap();
        fs::create_dir_all(run.selfplay_held_out_dir()).unwrap();
        fs::write(&held_out, b"half a chunk").unwrap();
        fs::write(run.root().join("notes.tmp"), b"a user's file").unwrap();
        let hour = Duration::from_secs(3600);
        assert!(run.remove_stale_tmp(hour).unwrap().is_empty());
        std::thread::sleep(Duration::from_millis(50));
        let mut removed = run.remove_stale_tmp(Duration::from_millis(10)).unwrap();
        removed.sort();
        let mut expected = vec![pointer.clone(), candidate.clone(), held_out.clone()];
        expected.sort();
        assert_eq!(removed, expected);
        assert!(!pointer.exists() && !candidate.exists() && !held_out.exists());
        assert!(run.root().join("notes.tmp").exists());
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
        assert_eq!(run.record(warning("a")).unwrap(), None);
        // What a write cut short by a full disk leaves behind.
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(run.events_path())
            .unwrap();
        f.write_all(b"{\"time\":1,\"ki").unwrap();
        let shown = run
            .record(warning("b"))
            .unwrap()
            .expect("the repair is returned");
        assert!(
            shown.starts_with("warning: ") && shown.contains("torn line"),
            "{shown}"
        );
        // The caller shows a repair once: the next event finds the log whole.
        assert_eq!(run.record(warning("c")).unwrap(), None);
        let log = run.events().unwrap();
        let kinds: Vec<_> = log.events().cloned().collect();
        let repaired = Event::file_warning(
            WarningWhat::Events,
            layout::EVENTS_FILE,
            WarningAction::Repaired,
            "a torn line (a write cut short) was ended",
        );
        assert_eq!(kinds, [warning("a"), repaired, warning("b"), warning("c")]);
        assert_eq!(log.unreadable, [2]);
        fs::remove_dir_all(&root).unwrap();
    }

    /// A run with trainer checkpoints at `steps` (sidecars only: listing needs no
    /// weights).
    fn run_with_checkpoints(root: &Path, steps: &[u64]) -> RunDir {
        let run = RunDir::open(root).unwrap();
        for &step in steps {
            let sidecar = xq_nn::checkpoint::Sidecar::new(Default::default(), step, 0, 1);
            fs::write(
                run.checkpoints_dir().join(format!("{}.json", stem(step))),
                sidecar.to_json(),
            )
            .unwrap();
        }
        run
    }

    #[test]
    fn without_a_pointer_the_latest_model_is_the_newest_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_with_checkpoints(dir.path(), &[]);
        assert_eq!(run.latest_model().unwrap(), None);
        let run = run_with_checkpoints(dir.path(), &[0, 2]);
        let m = run.latest_model().unwrap().unwrap();
        assert_eq!((m.name.as_str(), m.step), ("ckpt-0000000002", 2));
        assert_eq!(m.path, Path::new("checkpoints/ckpt-0000000002.json"));
        assert_eq!(run.sidecar(&m).unwrap(), run.model_path(&m));
    }

    #[test]
    fn the_pointer_names_the_latest_model_and_its_sidecar() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_with_checkpoints(dir.path(), &[0, 2]);
        let c = run
            .publish_candidate(&run.checkpoints_dir().join("ckpt-0000000002.json"), 2)
            .unwrap();
        let a = run.promote(&c, serde_json::json!({})).unwrap();
        assert_eq!(run.latest_model().unwrap(), Some(a.clone()));
        assert_eq!(
            run.sidecar(&a).unwrap(),
            run.accepted_dir().join("s0000000002/ckpt-0000000002.json")
        );
        // A pointer naming a model that is not there says so when its sidecar is asked for.
        write_atomic(
            &run.pointer_path(),
            br#"{"name": "x", "path": "models/accepted/x"}"#,
        )
        .unwrap();
        let gone = run.accepted().unwrap().unwrap();
        let err = run.sidecar(&gone).unwrap_err();
        assert!(matches!(err, RunError::NoCheckpoint(_)), "{err}");
        assert!(err.to_string().contains("does not exist"), "{err}");
        fs::write(run.pointer_path(), "not json").unwrap();
        let err = run.latest_model().unwrap_err();
        assert!(err.to_string().contains("corrupt model pointer"), "{err}");
    }

    #[test]
    fn a_pointer_written_as_a_sidecar_by_an_older_run_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_with_checkpoints(dir.path(), &[]);
        let sidecar = xq_nn::checkpoint::Sidecar::new(Default::default(), 7, 0, 1);
        fs::write(run.pointer_path(), sidecar.to_json()).unwrap();
        let m = run.accepted().unwrap().unwrap();
        assert_eq!((m.name.as_str(), m.step), ("s0000000007", 7));
        assert_eq!(run.sidecar(&m).unwrap(), run.pointer_path());
    }

    #[test]
    fn models_are_found_by_name_checkpoint_stem_or_path() {
        let dir = tempfile::tempdir().unwrap();
        let run = run_with_checkpoints(&dir.path().join("run"), &[0, 2]);
        let c = run
            .publish_candidate(&run.checkpoints_dir().join("ckpt-0000000002.json"), 2)
            .unwrap();
        assert_eq!(run.find_model("s0000000002").unwrap().path, c.path);
        run.promote(&c, serde_json::json!({})).unwrap();
        let accepted = run.find_model("s0000000002").unwrap();
        assert_eq!(
            (accepted.path.as_path(), accepted.step),
            (Path::new("models/accepted/s0000000002"), 2),
            "an accepted network before its candidate"
        );
        let ckpt = run.find_model("ckpt-0000000000").unwrap();
        assert_eq!(
            run.sidecar(&ckpt).unwrap(),
            run.checkpoints_dir().join("ckpt-0000000000.json")
        );
        let outside = dir.path().join("network.json");
        fs::write(&outside, "{}").unwrap();
        let by_weights = outside.with_extension("safetensors");
        let m = run.find_model(by_weights.to_str().unwrap()).unwrap();
        assert_eq!(run.sidecar(&m).unwrap(), outside);
        let err = run.find_model("nope").unwrap_err().to_string();
        assert!(
            err.contains("\"nope\"") && err.contains("models/accepted"),
            "{err}"
        );
    }

    #[test]
    fn accepted_models_are_listed_by_step_and_other_entries_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        for name in ["s0000000300", "s0000000020", "notes", "s0000000100"] {
            fs::create_dir(run.accepted_dir().join(name)).unwrap();
        }
        fs::write(run.accepted_dir().join("s0000000400"), "a file").unwrap();
        let steps: Vec<u64> = run
            .accepted_models()
            .unwrap()
            .iter()
            .map(|m| m.step)
            .collect();
        assert_eq!(steps, [20, 100, 300]);
        let missing = RunDir::existing(dir.path()).unwrap();
        fs::remove_dir_all(missing.accepted_dir()).unwrap();
        assert!(missing.accepted_models().unwrap().is_empty());
    }

    #[test]
    fn file_names_keep_only_safe_characters() {
        assert_eq!(safe_file_name("alphabeta:depth=4"), "alphabeta_depth_4");
        assert_eq!(safe_file_name("fsf-skill0.5"), "fsf-skill0.5");
        assert_eq!(safe_file_name("../x"), "_._x");
        assert_eq!(safe_file_name(".hidden"), "_hidden");
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
