//! One module per subcommand.

pub mod bench;
pub mod export;
pub mod gate;
pub mod ladder;
pub mod matches;
pub mod notation;
pub mod perft;
pub mod report;
pub mod run;
pub mod selfplay;
pub mod status;
pub mod tournament;
pub mod train;
pub mod ucci;

use anyhow::{Context, Result};
use xq_core::{Position, START_FEN};

/// Writes a file atomically: a temporary file in the same directory, then a rename.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let mut f =
        std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
}

/// Parses `--fen` (the starting position when absent).
pub fn parse_fen(fen: Option<&str>) -> Result<Position> {
    let fen = fen.unwrap_or(START_FEN);
    Position::from_fen(fen).with_context(|| format!("invalid --fen {fen:?}"))
}
