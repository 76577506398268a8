//! Static evaluation of the built-in alpha-beta engine: material plus piece-square
//! tables, from the side to move's point of view, in centipawn-like units.
//!
//! The values are a fixed, documented yardstick (changing them changes every rating
//! anchored on the engine): chariot 600, cannon 285, horse 270, advisor 120,
//! elephant 120, soldier 30 before the river and 60-90 after it. The tables add small
//! bonuses for central, advanced horses and cannons, crossed soldiers near the palace,
//! and keep the general at home.

use xq_core::{Color, Piece, Position, Role, Square};

/// Material value of a role (the general counts 0: it is never traded).
pub const fn material(role: Role) -> i32 {
    match role {
        Role::General => 0,
        Role::Advisor => 120,
        Role::Elephant => 120,
        Role::Horse => 270,
        Role::Chariot => 600,
        Role::Cannon => 285,
        Role::Soldier => 30,
    }
}

/// Tables indexed by `rank * 9 + file` from the piece owner's side (rank 0 = own back rank).
#[rustfmt::skip]
const SOLDIER_PST: [i32; 90] = [
     0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0, -2,  0,  4,  0, -2,  0,  0,
     2,  0,  8,  0,  8,  0,  8,  0,  2,
    30, 36, 42, 48, 50, 48, 42, 36, 30,
    40, 48, 56, 66, 70, 66, 56, 48, 40,
    44, 54, 64, 76, 80, 76, 64, 54, 44,
    40, 50, 60, 70, 74, 70, 60, 50, 40,
     0,  4, 10, 16, 20, 16, 10,  4,  0,
];

#[rustfmt::skip]
const HORSE_PST: [i32; 90] = [
     0, -4,  0,  0,  0,  0,  0, -4,  0,
     0,  2,  4,  4, -10, 4,  4,  2,  0,
     4,  2,  8,  8,  4,  8,  8,  2,  4,
     2,  6,  8,  6, 10,  6,  8,  6,  2,
     4, 12, 16, 14, 12, 14, 16, 12,  4,
     6, 16, 14, 18, 16, 18, 14, 16,  6,
     8, 24, 18, 24, 20, 24, 18, 24,  8,
    12, 14, 16, 20, 18, 20, 16, 14, 12,
     4, 10, 28, 16,  8, 16, 28, 10,  4,
     4,  8, 16, 12,  4, 12, 16,  8,  4,
];

#[rustfmt::skip]
const CHARIOT_PST: [i32; 90] = [
    -2, 10,  6, 14, 12, 14,  6, 10, -2,
     8,  4,  8, 16,  8, 16,  8,  4,  8,
     4,  8,  6, 14, 12, 14,  6,  8,  4,
     6, 10,  8, 14, 14, 14,  8, 10,  6,
    12, 16, 14, 20, 20, 20, 14, 16, 12,
    12, 14, 12, 18, 18, 18, 12, 14, 12,
    12, 18, 16, 22, 22, 22, 16, 18, 12,
    12, 12, 12, 18, 18, 18, 12, 12, 12,
    16, 20, 18, 24, 26, 24, 18, 20, 16,
    14, 14, 12, 18, 16, 18, 12, 14, 14,
];

#[rustfmt::skip]
const CANNON_PST: [i32; 90] = [
     0,  0,  2,  6,  6,  6,  2,  0,  0,
     0,  2,  4,  6,  6,  6,  4,  2,  0,
     4,  0,  8,  6, 10,  6,  8,  0,  4,
     0,  0,  0,  2,  4,  2,  0,  0,  0,
    -2,  0,  4,  2,  6,  2,  4,  0, -2,
     0,  0,  0,  2,  8,  2,  0,  0,  0,
     0,  0, -2,  4, 10,  4, -2,  0,  0,
     2,  2,  0, -10, -8, -10, 0,  2,  2,
     2,  2,  0, -4, -14, -4,  0,  2,  2,
     6,  4,  0, -10, -12, -10, 0,  4,  6,
];

/// Positional bonus for `piece` on `sq`.
#[inline]
pub fn pst(piece: Piece, sq: Square) -> i32 {
    let rel = match piece.color {
        Color::Red => sq,
        Color::Black => sq.flip(),
    }
    .index();
    match piece.role {
        Role::Soldier => SOLDIER_PST[rel],
        Role::Horse => HORSE_PST[rel],
        Role::Chariot => CHARIOT_PST[rel],
        Role::Cannon => CANNON_PST[rel],
        // The general prefers its starting point; advisors and elephants are
        // judged by material alone.
        Role::General => {
            if rel == 4 {
                4
            } else {
                0
            }
        }
        Role::Advisor | Role::Elephant => 0,
    }
}

/// Value of `piece` on `sq` (material + position).
#[inline]
pub fn piece_value(piece: Piece, sq: Square) -> i32 {
    material(piece.role) + pst(piece, sq)
}

/// The static evaluation for the side to move.
pub fn evaluate(pos: &Position) -> i32 {
    let mut score = 0;
    for (sq, p) in pos.pieces_iter() {
        let v = piece_value(p, sq);
        score += if p.color == pos.turn() { v } else { -v };
    }
    score
}
