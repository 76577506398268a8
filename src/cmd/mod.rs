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
pub fn load_openings(text: &str, seed: u64) -> Result<Vec<xq_eval::openings::Opening>> {
    xq_eval::openings::from_spec(text, seed).with_context(|| format!("--openings {text:?}"))
}

/// Parses a player specification and checks that it can be built.
pub fn player_spec(flag: &str, text: &str) -> Result<xq_eval::spec::PlayerSpec> {
    let spec: xq_eval::spec::PlayerSpec = text.parse().with_context(|| format!("--{flag}"))?;
    spec.build().with_context(|| format!("--{flag} {text}"))?;
    Ok(spec)
}
