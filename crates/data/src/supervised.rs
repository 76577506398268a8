//! Supervised training data from game records: every position of every game becomes
//! a record whose policy target is the move actually played (one-hot) and whose value
//! target is the game's result for the side to move, when the record has one.
//!
//! Games are split into a training and a held-out set by a hash of their content
//! (start position and moves), not of their place in the file: the split is the same
//! whatever order or file the games come in, and a game that appears twice in a
//! collection (common in master databases) lands on the same side both times, so the
//! held-out move-prediction accuracy is not inflated by games the net trained on.

use xq_core::{Move, Position, hash::mix64};

use crate::{
    pgn::PgnGame,
    record::{Chunk, ChunkMeta, PlyTarget, PolicyEntry, RecordError},
};

/// How games are split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitConfig {
    /// Games per thousand held out (default 50: 5%).
    pub held_out_permille: u32,
    /// Mixed into the hash so that different splits of the same games can be drawn.
    pub salt: u64,
}

impl Default for SplitConfig {
    fn default() -> SplitConfig {
        SplitConfig {
            held_out_permille: 50,
            salt: 0,
        }
    }
}

/// A stable hash of a game's content: the start position's Zobrist key and the moves.
pub fn game_hash(start: &Position, moves: &[Move]) -> u64 {
    let mut h = mix64(start.hash() ^ 0x5851_f42d_4c95_7f2d);
    for m in moves {
        h = mix64(h ^ u64::from(m.to_u16()));
    }
    h
}

impl SplitConfig {
    /// Whether a game with this content hash is held out.
    pub fn is_held_out(&self, hash: u64) -> bool {
        mix64(hash ^ self.salt) % 1000 < u64::from(self.held_out_permille)
    }
}

/// Supervised records, split.
#[derive(Debug, Clone)]
pub struct SupervisedData {
    pub train: Chunk,
    pub held_out: Chunk,
}

/// Turns games into records: one per position that has a move played from it, policy
/// one-hot on that move, result from the side to move (`None` when the game has none),
/// plies to the end, weight 1, no root value.
///
/// # Errors
/// A game too long for the format (more than 65,535 moves).
pub fn games_to_chunks(
    games: &[PgnGame],
    meta: &ChunkMeta,
    split: &SplitConfig,
) -> Result<SupervisedData, RecordError> {
    let mut train = Chunk::new(meta.clone());
    let mut held_out = Chunk::new(meta.clone());
    for game in games {
        let chunk = if split.is_held_out(game_hash(&game.start, &game.moves)) {
            &mut held_out
        } else {
            &mut train
        };
        add_game(chunk, &game.start, &game.moves, game.result)?;
    }
    Ok(SupervisedData { train, held_out })
}

/// Adds one game and a one-hot record for each of its moves to `chunk`.
///
/// # Errors
/// An illegal move, or a game too long for the format.
pub fn add_game(
    chunk: &mut Chunk,
    start: &Position,
    moves: &[Move],
    result: Option<crate::Outcome>,
) -> Result<(), RecordError> {
    let policies: Vec<[PolicyEntry; 1]> = moves
        .iter()
        .map(|&mv| {
            [PolicyEntry {
                mv,
                weight: u16::MAX,
            }]
        })
        .collect();
    let targets: Vec<PlyTarget<'_>> = policies
        .iter()
        .enumerate()
        .map(|(ply, policy)| PlyTarget {
            // Longer games are refused by add_game_with_targets before this matters.
            ply: ply.min(usize::from(u16::MAX)) as u16,
            policy,
            root_wdl: [0.0; 3],
            weight: 1.0,
        })
        .collect();
    chunk.add_game_with_targets(start.clone(), moves.to_vec(), result, &targets)?;
    Ok(())
}

/// A game of a PGN file that could not be read, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {error}", path.display())]
pub struct SkippedGame {
    pub path: std::path::PathBuf,
    pub error: crate::pgn::PgnError,
}

/// Why PGN files could not be turned into training data at all.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Record(#[from] RecordError),
}

/// Reads PGN files (UTF-8) into split supervised data. Games that fail to parse are
/// skipped and returned, each naming its file and line, so one bad game does not stop
/// training on a collection.
///
/// # Errors
/// A file that cannot be read, or a game too long for the chunk format.
pub fn load_pgn_files(
    paths: &[std::path::PathBuf],
    meta: &ChunkMeta,
    split: &SplitConfig,
) -> Result<(SupervisedData, Vec<SkippedGame>), LoadError> {
    let (games, skipped) = read_pgn_files(paths)?;
    Ok((games_to_chunks(&games, meta, split)?, skipped))
}

/// Reads every game of `paths`, in order, with the games that cannot be read: the
/// first half of [`load_pgn_files`], for a caller that gives games a result first.
///
/// # Errors
/// A file that cannot be read.
pub fn read_pgn_files(
    paths: &[std::path::PathBuf],
) -> Result<(Vec<PgnGame>, Vec<SkippedGame>), LoadError> {
    let mut games = Vec::new();
    let mut skipped = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io {
            path: path.clone(),
            source,
        })?;
        for game in crate::pgn::read_pgn(&text) {
            match game {
                Ok(g) => games.push(g),
                Err(error) => skipped.push(SkippedGame {
                    path: path.clone(),
                    error,
                }),
            }
        }
    }
    Ok((games, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Game hashes decide which games are held out of stored training data: pinned.
    #[test]
    fn game_hashes_and_the_split_are_pinned() {
        let start = Position::startpos();
        let m = start.parse_iccs("h2e2").unwrap();
        let split = SplitConfig::default();
        assert_eq!(game_hash(&start, &[]), 0xbdfb_93b9_3646_0aee);
        assert_eq!(game_hash(&start, &[m]), 0xc042_1c11_06ba_19c8);
        let held: Vec<u64> = (0..200).filter(|&h| split.is_held_out(h)).collect();
        assert_eq!(held, [0, 16, 21, 84, 122, 141, 147, 197]);
    }
}
