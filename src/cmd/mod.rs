//! The commands that never need a network backend when their players do not (one
//! module each), and `xqz report`, which reads a run directory; `xqz` runs them
//! in-process.

pub mod ladder;
pub mod matches;
pub mod notation;
pub mod perft;
pub mod report;
pub mod status;
pub mod strength;
pub mod tournament;
pub mod ucci;

use anyhow::{Context, Result};
use xq_core::{Position, START_FEN};

/// Parses `--fen` (the starting position when absent).
pub fn parse_fen(fen: Option<&str>) -> Result<Position> {
    let fen = fen.unwrap_or(START_FEN);
    Position::from_fen(fen).with_context(|| format!("invalid --fen {fen:?}"))
}

/// Resolves an `--openings` value.
/// The flags of every command that plays matches (`match`, `ladder`, `strength`),
/// declared once and flattened into each.
#[derive(clap::Args, Debug, Clone)]
pub struct MatchFlags {
    /// Time control: `own` (each player's own budget: a network's visits, alpha-beta's
    /// depth, Fairy-Stockfish's `go depth 8`), or one for both players: `40/90m,10/15m`,
    /// `5m+2s`, `movetime=500ms`, `nodes=800`, `depth=3`.
    #[arg(long, default_value = "own")]
    pub tc: String,
    /// Game pairs played at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Openings: `builtin`, `start`, `random:N` (N random balanced plies) or a file.
    #[arg(long, default_value = "builtin")]
    pub openings: String,
    /// Seed of the openings and the players' randomness.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl MatchFlags {
    /// `--tc`, parsed.
    pub fn time_control(&self) -> Result<xq_eval::clock::TimeControl> {
        self.tc.parse().context("--tc")
    }

    /// `--concurrency`, at least 1.
    pub fn concurrency(&self) -> usize {
        self.concurrency.max(1)
    }
}

pub fn load_openings(text: &str, seed: u64) -> Result<Vec<xq_eval::openings::Opening>> {
    xq_eval::openings::from_spec(text, seed).with_context(|| format!("--openings {text:?}"))
}

/// Parses a player specification and checks that it can be built.
pub fn player_spec(flag: &str, text: &str) -> Result<xq_eval::spec::PlayerSpec> {
    let spec: xq_eval::spec::PlayerSpec = text.parse().with_context(|| format!("--{flag}"))?;
    spec.build().with_context(|| format!("--{flag} {text}"))?;
    Ok(spec)
}
