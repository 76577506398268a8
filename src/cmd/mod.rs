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
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        // Also catches errors a filesystem reports only when the data reaches the disk.
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        // A full disk must not leave a half file behind (nor eat the space it holds).
        let _ = std::fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

/// Parses `--fen` (the starting position when absent).
pub fn parse_fen(fen: Option<&str>) -> Result<Position> {
    let fen = fen.unwrap_or(START_FEN);
    Position::from_fen(fen).with_context(|| format!("invalid --fen {fen:?}"))
}
