//! One module per subcommand.

pub mod bench;
pub mod notation;
pub mod perft;
pub mod selfplay;
pub mod status;

use anyhow::{Context, Result};
use xq_core::{Position, START_FEN};

/// Parses `--fen` (the starting position when absent).
pub fn parse_fen(fen: Option<&str>) -> Result<Position> {
    let fen = fen.unwrap_or(START_FEN);
    Position::from_fen(fen).with_context(|| format!("invalid --fen {fen:?}"))
}
