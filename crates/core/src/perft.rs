//! Perft: the number of leaf nodes of the legal move tree, the standard check of a
//! move generator. The last ply is counted in bulk (the moves are generated and
//! counted, not played), as Pikafish and Fairy-Stockfish count.

use crate::{Move, Position};

/// Leaf nodes at `depth` plies below `pos`.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal() as u64,
        _ => pos
            .legal_moves()
            .iter()
            .map(|&m| {
                let mut child = pos.clone();
                child.play_unchecked(m);
                perft(&child, depth - 1)
            })
            .sum(),
    }
}

/// Perft split by the first move, in move-generation order.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            (m, perft(&child, depth.saturating_sub(1)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_shallow() {
        let pos = Position::startpos();
        assert_eq!(perft(&pos, 1), 44);
        assert_eq!(perft(&pos, 2), 1920);
        assert_eq!(perft(&pos, 3), 79666);
    }
}
