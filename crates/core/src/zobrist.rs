//! Zobrist hashing.
//!
//! The keys come from SplitMix64 with a fixed seed, generated at compile time, so a
//! position hashes to the same `u64` on every platform, build and run. **The values are
//! part of the format contract** (they key caches and appear in stored data); changing
//! them is a breaking change. The hash covers the pieces and the side to move, not the
//! move counters: positions that repeat in the sense of the rules have equal hashes.

use crate::{Color, Piece, Square, hash::SplitMix64};

const SEED: u64 = 0x5851_5a45_524f_0001; // "XQZERO" 1

const fn build_keys() -> ([[u64; 90]; 14], u64) {
    let mut keys = [[0u64; 90]; 14];
    let mut stream = SplitMix64::new(SEED);
    let mut p = 0;
    while p < 14 {
        let mut sq = 0;
        while sq < 90 {
            keys[p][sq] = stream.next_u64();
            sq += 1;
        }
        p += 1;
    }
    (keys, stream.next_u64())
}

const KEYS: ([[u64; 90]; 14], u64) = build_keys();
static PIECE_KEYS: [[u64; 90]; 14] = KEYS.0;

/// The key XORed in when Black is to move.
pub const BLACK_TO_MOVE: u64 = KEYS.1;

/// The key of `piece` standing on `sq`.
#[inline]
pub fn piece_key(piece: Piece, sq: Square) -> u64 {
    PIECE_KEYS[piece.index()][sq.index()]
}

/// The key of the side to move.
#[inline]
pub const fn turn_key(turn: Color) -> u64 {
    match turn {
        Color::Red => 0,
        Color::Black => BLACK_TO_MOVE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Position, Role};

    /// Pins a few keys so an accidental change of the generator fails loudly.
    #[test]
    fn keys_are_stable() {
        let k = piece_key(Piece::new(Color::Red, Role::General), Square::new(4));
        let again = piece_key(Piece::new(Color::Red, Role::General), Square::new(4));
        assert_eq!(k, again);
        assert_eq!(PIECE_KEYS[0][0], crate::hash::splitmix64(SEED));
        assert_ne!(BLACK_TO_MOVE, 0);
        let mut all: Vec<u64> = PIECE_KEYS.iter().flatten().copied().collect();
        all.push(BLACK_TO_MOVE);
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 14 * 90 + 1, "keys must be distinct");
    }

    /// The keys are part of the format contract: pinned values, first, last and side.
    #[test]
    fn key_values_are_pinned() {
        assert_eq!(PIECE_KEYS[0][0], 0x0777_a67b_a7a1_9676);
        assert_eq!(PIECE_KEYS[0][4], 0x0b6c_2d6d_b663_6f23);
        assert_eq!(PIECE_KEYS[13][89], 0x7adc_95f5_9edc_dae6);
        assert_eq!(BLACK_TO_MOVE, 0x0f3d_0397_3530_6acc);
        assert_eq!(Position::startpos().hash(), 0xccf7_a549_3a61_8ade);
    }
}
