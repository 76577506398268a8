//! The commands that never need a network backend when their players do not (one
//! module each); `xqz` runs them in-process.

pub mod ladder;
pub mod matches;
pub mod notation;
pub mod perft;
pub mod status;
pub mod tournament;
pub mod ucci;

use anyhow::{Context, Result};
use xq_core::{Position, START_FEN};

/// Writes a file atomically ([`xq_data::io::write_bytes_atomic`], the one
/// implementation), creating its directory and naming the file on failure.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    xq_data::io::write_bytes_atomic(path, bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Parses `--fen` (the starting position when absent).
pub fn parse_fen(fen: Option<&str>) -> Result<Position> {
    let fen = fen.unwrap_or(START_FEN);
    Position::from_fen(fen).with_context(|| format!("invalid --fen {fen:?}"))
}
