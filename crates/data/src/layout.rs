//! The run directory's layout: every path a process of a training run reads or writes,
//! relative to the run directory, in one place (ARCHITECTURE.md, "The run directory").
//! It lives here, under every crate that touches a run (xq-selfplay's workers, xq-train's
//! checkpoints, xq-pipeline's run directory and export), so that none of them spells a
//! path itself.

/// Training chunks (`<worker>-<seq>.xqc`).
pub const DATA_DIR: &str = "data";
/// Chunks of the self-play games held out of training (`[selfplay] held_out_permille`),
/// named as in [`DATA_DIR`]: the trainer's held-out evaluation reads them. A directory
/// inside [`DATA_DIR`], which the replay window and its compaction never enter (they
/// list [`DATA_DIR`]'s own files only).
pub const HELD_OUT_DIR: &str = "data/held-out";
/// Names of merged chunks in [`DATA_DIR`] start with this (`compact-NAME.xqc`); they
/// are never merged again, and no worker id may start with it.
pub const COMPACT_PREFIX: &str = "compact-";
/// Extension of a merge's journal in [`DATA_DIR`] (`compact-NAME.journal`).
pub const JOURNAL_EXTENSION: &str = "journal";
/// The lock file of [`DATA_DIR`]'s compactions (`flock`).
pub const COMPACT_LOCK_FILE: &str = ".xqz-compact.lock";
/// PGN records of self-play games.
pub const GAMES_DIR: &str = "games";
/// Each self-play worker's host, pid, seed and settings (`<worker>.toml`).
pub const WORKERS_DIR: &str = "workers";
/// The trainer's full state for exact resume (`ckpt-S.json` and its tensors).
pub const CHECKPOINTS_DIR: &str = xq_nn::checkpoint::CHECKPOINTS_DIR;
/// Networks proposed for gating (`sNNNNNNNNNN/`).
pub const CANDIDATES_DIR: &str = "models/candidates";
/// Networks that passed gating (`sNNNNNNNNNN/`).
pub const ACCEPTED_DIR: &str = "models/accepted";
/// Gating results of rejected candidates (`sNNNNNNNNNN.json`).
pub const REJECTED_DIR: &str = "models/rejected";
/// The pointer to the accepted network (`{"name", "path", "step", "time"}`), replaced
/// atomically; self-play workers poll it.
pub const ACCEPTED_POINTER: &str = "models/accepted.json";
/// Exported UCCI players (`<name>/`).
pub const PLAYERS_DIR: &str = "players";
/// Post-run ratings on the anchored scale, one JSON file a player (`xqz strength`);
/// the report's learning curve reads them.
pub const STRENGTH_DIR: &str = "strength";
/// Games of gating and rating matches.
pub const MATCHES_DIR: &str = "matches";
/// TensorBoard event files, one directory a process kind (the four below).
pub const LOGS_DIR: &str = "logs";
/// The trainer's TensorBoard events.
pub const TRAIN_LOGS_DIR: &str = "logs/train";
/// The gatekeeper's TensorBoard events.
pub const GATE_LOGS_DIR: &str = "logs/gate";
/// The rating matches' TensorBoard events.
pub const RATING_LOGS_DIR: &str = "logs/rating";
/// Self-play TensorBoard events, one directory a worker (`<worker>/`), whether the
/// worker is a process of its own or `xqz run`'s.
pub const SELFPLAY_LOGS_DIR: &str = "logs/selfplay";
/// The trainer's TensorBoard events in a directory that is not a run's (xq-train on
/// its own); a run puts them in [`TRAIN_LOGS_DIR`].
pub const TENSORBOARD_DIR: &str = "tensorboard";
/// The page `xqz report` writes by default.
pub const REPORT_FILE: &str = "report.html";
/// The run's configuration, copied on the first start.
pub const CONFIG_FILE: &str = "config.toml";
/// The absolute directory of the file [`CONFIG_FILE`] was copied from: the copy's
/// relative paths (`[train.pretrain] pgn`) are relative to it, not to the run.
pub const CONFIG_BASE_FILE: &str = "config.base";
/// The event log, one JSON object a line.
pub const EVENTS_FILE: &str = "events.jsonl";
/// `xqz run`'s budget and progress across restarts.
pub const STATE_FILE: &str = "state.json";
