//! The fixed policy index: every from-to move any piece can ever make, numbered once
//! and for all, so that the network's policy head has one output per move.
//!
//! # Which moves
//!
//! The index is the union, over both colours, every role and every square that piece can
//! ever stand on ([`xq_core::reachable`]), of the moves it has on an empty board:
//! chariot and cannon lines (every other point on the same file or rank), horse jumps,
//! elephant steps on its own side, advisor and general steps in its own palace, and
//! soldier steps. General, soldier and cannon moves are all on lines, so the set is
//! *lines ∪ horse jumps ∪ advisor diagonals ∪ elephant diagonals*:
//! 90 × 17 + 508 + 2 × 8 + 2 × 16 = **2,086** moves, the label set of CCZero and
//! icyChessZero.
//!
//! # Perspective
//!
//! The network always sees the board from the side to move (see [`crate::encode`]): for
//! Black the board is rotated 180°, so [`policy_index`] flips a Black move first and
//! [`policy_move`] flips back. After the flip the mover's advisors and elephants are
//! always at the bottom, so the 24 advisor and elephant moves of the far palace and far
//! side are never legal for the side to move and their outputs always get zero target.
//! They are kept so that the index is the standard 2,086-move set (a strictly
//! mover-relative index would have 2,062 entries, the size px0 uses); the cost is 24
//! dead logits out of 2,086, which the legal-move mask removes anyway.
//!
//! # Order
//!
//! Entries are sorted by (from, to) square index (`a0 = 0` … `i9 = 89`). The order, like
//! the set, is part of [`POLICY_INDEX_VERSION`]: change either and bump it, since every
//! trained network and every stored training record depends on it.
//!
//! # Symmetry
//!
//! The left-right mirror (files a ↔ i) is the board's only symmetry, and the index set is
//! closed under it: [`mirror_index`] maps each entry to the entry of the mirrored move.

use std::sync::LazyLock;

use xq_core::{
    Bitboard, Color, Move, Piece, Role, Square, advisor_attacks, chariot_attacks, elephant_attacks,
    general_steps, horse_attacks, reachable, soldier_attacks,
};

/// Number of entries in the policy index (the policy head's output size).
pub const POLICY_SIZE: usize = 2086;

/// Version of the policy index (its set and its order). Stored with checkpoints and
/// training data; a mismatch means the policy vectors mean different moves.
pub const POLICY_INDEX_VERSION: u32 = 1;

/// Marks a from-to pair that no piece can ever play.
const NONE: u16 = u16::MAX;

struct Tables {
    /// Index → move in mover coordinates.
    moves: Vec<Move>,
    /// `from * 90 + to` → index, or [`NONE`].
    index: Box<[u16; 90 * 90]>,
    /// Index → index of the mirrored move.
    mirror: Vec<u16>,
}

static TABLES: LazyLock<Tables> = LazyLock::new(build_tables);

/// Every square `piece` could move to from `sq` on an otherwise empty board.
fn empty_board_moves(piece: Piece, sq: Square) -> Bitboard {
    let empty = Bitboard::EMPTY;
    match piece.role {
        Role::General => general_steps(sq),
        Role::Advisor => advisor_attacks(sq),
        Role::Elephant => elephant_attacks(piece.color, sq, empty),
        Role::Horse => horse_attacks(sq, empty),
        // A cannon moves like a chariot when not capturing; its captures (over a
        // screen) also land on the same lines.
        Role::Chariot | Role::Cannon => chariot_attacks(sq, empty),
        Role::Soldier => soldier_attacks(piece.color, sq),
    }
}

fn build_tables() -> Tables {
    let mut is_move = [[false; 90]; 90];
    for color in Color::ALL {
        for role in Role::ALL {
            let piece = Piece::new(color, role);
            for from in Square::all().filter(|&sq| reachable(piece, sq)) {
                for to in empty_board_moves(piece, from) {
                    is_move[from.index()][to.index()] = true;
                }
            }
        }
    }
    let mut moves = Vec::with_capacity(POLICY_SIZE);
    let mut index = Box::new([NONE; 90 * 90]);
    for from in Square::all() {
        for to in Square::all() {
            if is_move[from.index()][to.index()] {
                index[from.index() * 90 + to.index()] = moves.len() as u16;
                moves.push(Move::new(from, to));
            }
        }
    }
    let mirror = moves
        .iter()
        .map(|m| {
            let mm = m.mirror();
            index[mm.from().index() * 90 + mm.to().index()]
        })
        .collect();
    Tables {
        moves,
        index,
        mirror,
    }
}

/// The index of `m`, a move of `turn` (the side to move) in board coordinates, or `None`
/// for a from-to pair no piece can ever play. Black moves are flipped to the mover's
/// perspective first.
#[inline]
pub fn policy_index(m: Move, turn: Color) -> Option<usize> {
    let m = match turn {
        Color::Red => m,
        Color::Black => m.flip(),
    };
    let i = TABLES.index[m.from().index() * 90 + m.to().index()];
    (i != NONE).then_some(i as usize)
}

/// The move of `turn` (the side to move) in board coordinates that entry `index` stands
/// for; the inverse of [`policy_index`].
///
/// # Panics
/// If `index >= POLICY_SIZE` (see [`try_policy_move`] for indices from untrusted input).
#[inline]
#[track_caller]
pub fn policy_move(index: usize, turn: Color) -> Move {
    match try_policy_move(index, turn) {
        Some(m) => m,
        None => panic!("policy index {index} out of range (size {POLICY_SIZE})"),
    }
}

/// [`policy_move`] that returns `None` for an index out of range.
#[inline]
pub fn try_policy_move(index: usize, turn: Color) -> Option<Move> {
    let m = *TABLES.moves.get(index)?;
    Some(match turn {
        Color::Red => m,
        Color::Black => m.flip(),
    })
}

/// The entry of the left-right mirror of entry `index`'s move; an involution.
///
/// # Panics
/// If `index >= POLICY_SIZE`.
#[inline]
pub fn mirror_index(index: usize) -> usize {
    TABLES.mirror[index] as usize
}

/// Writes the policy indices of `moves` (moves of `turn`) into `out`, which is cleared
/// first; `Err` names the first move that has no index (it cannot be a legal move).
pub fn policy_indices_into(moves: &[Move], turn: Color, out: &mut Vec<u16>) -> Result<(), Move> {
    out.clear();
    out.reserve(moves.len());
    for &m in moves {
        out.push(policy_index(m, turn).ok_or(m)? as u16);
    }
    Ok(())
}

/// Mirrors a policy vector over the whole index (`src`, `dst` of length [`POLICY_SIZE`]):
/// `dst[mirror_index(i)] = src[i]`. For augmentation of training targets.
///
/// # Panics
/// If either slice is not [`POLICY_SIZE`] long.
pub fn mirror_policy(src: &[f32], dst: &mut [f32]) {
    assert_eq!(src.len(), POLICY_SIZE, "policy source length");
    assert_eq!(dst.len(), POLICY_SIZE, "policy destination length");
    for (i, &p) in src.iter().enumerate() {
        dst[TABLES.mirror[i] as usize] = p;
    }
}

/// The index as a convolutional policy head sees it ([`head_shapes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadShapes {
    /// The distinct (file, rank) displacements of the policy moves (Red's view), sorted.
    pub shapes: Vec<(i32, i32)>,
    /// For every policy entry, its (shape, from-square index) in a `shapes × 90` map.
    pub entries: Vec<(usize, usize)>,
}

/// The policy index as a convolutional head sees it: one logit per move shape and
/// source point. Every backend's policy head gathers its 2,086 logits through this one
/// table, so they follow the index by construction and agree with each other.
pub fn head_shapes() -> HeadShapes {
    let moves = &TABLES.moves;
    let offset = |m: &Move| {
        (
            m.to().file().index() as i32 - m.from().file().index() as i32,
            m.to().rank().index() as i32 - m.from().rank().index() as i32,
        )
    };
    let mut shapes: Vec<(i32, i32)> = moves.iter().map(offset).collect();
    shapes.sort_unstable();
    shapes.dedup();
    let entries = moves
        .iter()
        .map(|m| {
            let shape = shapes
                .binary_search(&offset(m))
                .expect("every move's shape is listed");
            (shape, m.from().index())
        })
        .collect();
    HeadShapes { shapes, entries }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use xq_core::Position;

    #[test]
    fn index_has_2086_entries() {
        assert_eq!(TABLES.moves.len(), POLICY_SIZE);
        assert!(try_policy_move(POLICY_SIZE - 1, Color::Red).is_some());
        assert_eq!(try_policy_move(POLICY_SIZE, Color::Red), None);
    }

    /// The breakdown in the module docs: lines, horse jumps, advisor and elephant steps.
    #[test]
    fn index_is_lines_horse_jumps_and_palace_and_elephant_diagonals() {
        let mut lines = 0;
        let mut jumps = 0;
        let mut diagonals = 0;
        for i in 0..POLICY_SIZE {
            let m = policy_move(i, Color::Red);
            let df = (m.to().file().index() as i32 - m.from().file().index() as i32).abs();
            let dr = (m.to().rank().index() as i32 - m.from().rank().index() as i32).abs();
            match (df, dr) {
                (0, _) | (_, 0) => lines += 1,
                (1, 2) | (2, 1) => jumps += 1,
                (1, 1) | (2, 2) => diagonals += 1,
                _ => panic!("unexpected move shape {m}"),
            }
        }
        assert_eq!((lines, jumps, diagonals), (90 * 17, 508, 48));
    }

    #[test]
    fn mirror_is_an_involution_that_mirrors_the_move() {
        let mut fixed = 0;
        for i in 0..POLICY_SIZE {
            let j = mirror_index(i);
            assert!(j < POLICY_SIZE);
            assert_eq!(mirror_index(j), i, "entry {i}");
            for turn in Color::ALL {
                let m = policy_move(i, turn);
                assert_eq!(policy_move(j, turn), m.mirror(), "entry {i}");
            }
            fixed += usize::from(i == j);
        }
        // Only moves along the centre file are their own mirror: 9 × 10 of them.
        assert_eq!(fixed, 90);
    }

    #[test]
    fn index_to_move_to_index_round_trips_for_both_colours() {
        for i in 0..POLICY_SIZE {
            for turn in Color::ALL {
                let m = policy_move(i, turn);
                assert_eq!(policy_index(m, turn), Some(i), "{m} for {turn:?}");
            }
        }
    }

    #[test]
    fn black_moves_are_flipped_to_the_movers_view() {
        // Black's 炮2平5 (h7e7), seen from Black's side of the board, is b2e2.
        let red = Move::from_iccs("b2e2").unwrap();
        let black = Move::from_iccs("h7e7").unwrap();
        assert_eq!(
            policy_index(black, Color::Black),
            policy_index(red, Color::Red)
        );
        assert!(policy_index(red, Color::Red).is_some());
    }

    #[test]
    fn impossible_from_to_pairs_have_no_index() {
        // Knight-ish but too long, a long diagonal, corner to corner, an elephant step
        // off its points, and a 2-by-3 leap.
        for iccs in ["a0b3", "a0c4", "a0i9", "b0d2", "c0e3"] {
            let m = Move::from_iccs(iccs).unwrap();
            assert_eq!(policy_index(m, Color::Red), None, "{iccs}");
            assert_eq!(policy_index(m.flip(), Color::Black), None, "{iccs}");
        }
        let mut out = Vec::new();
        let bad = Move::from_iccs("a0b3").unwrap();
        assert_eq!(
            policy_indices_into(
                &[Move::from_iccs("a0a1").unwrap(), bad],
                Color::Red,
                &mut out
            ),
            Err(bad)
        );
    }

    /// Far-side advisor and elephant moves exist in the index but no side to move can
    /// play them: the mover's own palace is always at the bottom.
    #[test]
    fn mover_uses_exactly_2062_entries() {
        let mut used = 0;
        for i in 0..POLICY_SIZE {
            let m = policy_move(i, Color::Red);
            let usable = Role::ALL.iter().any(|&role| {
                let p = Piece::new(Color::Red, role);
                reachable(p, m.from()) && empty_board_moves(p, m.from()).contains(m.to())
            });
            used += usize::from(usable);
        }
        assert_eq!(used, 2062);
    }

    /// 1,000 positions from seeded random games, both colours to move: every legal move
    /// has an index and comes back from it unchanged.
    #[test]
    fn every_legal_move_of_random_positions_has_an_index() {
        let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
        let mut seen = [0usize; 2];
        let mut indices = Vec::new();
        let mut positions = 0;
        while positions < 1000 {
            let mut pos = Position::startpos();
            for _ in 0..rng.random_range(0..160) {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
            }
            let moves = pos.legal_moves();
            let turn = pos.turn();
            seen[turn.index()] += 1;
            positions += 1;
            policy_indices_into(&moves, turn, &mut indices)
                .unwrap_or_else(|m| panic!("{m} has no index in {}", pos.fen()));
            for (&m, &i) in moves.iter().zip(&indices) {
                assert_eq!(policy_move(i as usize, turn), m, "{}", pos.fen());
                // The mirrored position's mirrored move has the mirrored index.
                assert_eq!(
                    policy_index(m.mirror(), turn),
                    Some(mirror_index(i as usize))
                );
            }
            let mut sorted = indices.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), moves.len(), "two moves share an index");
        }
        assert!(seen[0] > 300 && seen[1] > 300, "colours to move: {seen:?}");
    }

    #[test]
    fn mirror_policy_moves_mass_to_mirrored_moves() {
        let src: Vec<f32> = (0..POLICY_SIZE).map(|i| i as f32).collect();
        let mut dst = vec![0.0; POLICY_SIZE];
        mirror_policy(&src, &mut dst);
        for i in 0..POLICY_SIZE {
            assert_eq!(dst[mirror_index(i)], i as f32);
        }
        let mut back = vec![0.0; POLICY_SIZE];
        mirror_policy(&dst, &mut back);
        assert_eq!(back, src);
    }
}
