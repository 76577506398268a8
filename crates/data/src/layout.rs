//! The run directory's layout: every path a process of a training run reads or writes,
//! relative to the run directory, in one place (ARCHITECTURE.md, "The run directory").
//! It lives here, under every crate that touches a run (xq-selfplay's workers, xq-train's
//! checkpoints, xq-pipeline's run directory and export), so that none of them spells a
//! path itself.

/// Training chunks (`<worker>-<seq>.xqc`).
pub const DATA_DIR: &str = "data";
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
/// TensorBoard event files (`train/`, `gate/`, `rating/`, `selfplay/`).
pub const LOGS_DIR: &str = "logs";
/// The run's configuration, copied on the first start.
pub const CONFIG_FILE: &str = "config.toml";
/// The event log, one JSON object a line.
pub const EVENTS_FILE: &str = "events.jsonl";
/// `xqz run`'s budget and progress across restarts.
pub const STATE_FILE: &str = "state.json";
