//! Precomputed move and attack tables, built at compile time by `const fn`.
//!
//! Sliding pieces (chariot, cannon, the general's "flying" attack) use ray masks:
//! the first blocker on a ray is the lowest (rising rays) or highest (falling rays)
//! set bit of `ray & occupied`. Stepping pieces use per-square tables keyed by their
//! blocking point (horse leg 马腿, elephant eye 象眼).

use crate::{Bitboard, Color, Square};

/// Ray directions: north (+rank), east (+file), south, west. North and east rise in index.
pub(crate) const DIRS: [(i32, i32); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];

const fn bit(sq: u32) -> u128 {
    1u128 << sq
}

const fn coords(sq: usize) -> (i32, i32) {
    ((sq % 9) as i32, (sq / 9) as i32)
}

const fn at(f: i32, r: i32) -> Option<u32> {
    if f >= 0 && f < 9 && r >= 0 && r < 10 {
        Some((r * 9 + f) as u32)
    } else {
        None
    }
}

const fn build_rays() -> [[u128; 90]; 4] {
    let mut t = [[0u128; 90]; 4];
    let mut d = 0;
    while d < 4 {
        let mut sq = 0;
        while sq < 90 {
            let (mut f, mut r) = coords(sq);
            let mut m = 0;
            loop {
                f += DIRS[d].0;
                r += DIRS[d].1;
                match at(f, r) {
                    Some(s) => m |= bit(s),
                    None => break,
                }
            }
            t[d][sq] = m;
            sq += 1;
        }
        d += 1;
    }
    t
}

/// `RAYS[dir][sq]`: the squares strictly beyond `sq` in direction `DIRS[dir]`.
pub(crate) static RAYS: [[u128; 90]; 4] = build_rays();

/// Horse moves keyed by the leg: `HORSE_BY_LEG[sq][i]` are the (at most two) targets
/// reachable when the orthogonal neighbour `DIRS[i]` of `sq` (the leg) is empty.
const fn build_horse_by_leg() -> [[u128; 4]; 90] {
    let mut t = [[0u128; 4]; 90];
    let mut sq = 0;
    while sq < 90 {
        let (f, r) = coords(sq);
        let mut i = 0;
        while i < 4 {
            let (dx, dy) = DIRS[i];
            if at(f + dx, r + dy).is_some() {
                // Two targets: two steps along (dx,dy) and one step sideways.
                let (sx, sy) = (dy, dx);
                if let Some(s) = at(f + 2 * dx + sx, r + 2 * dy + sy) {
                    t[sq][i] |= bit(s);
                }
                if let Some(s) = at(f + 2 * dx - sx, r + 2 * dy - sy) {
                    t[sq][i] |= bit(s);
                }
            }
            i += 1;
        }
        sq += 1;
    }
    t
}
pub(crate) static HORSE_BY_LEG: [[u128; 4]; 90] = build_horse_by_leg();

/// Diagonal directions: NE, SE, SW, NW.
pub(crate) const DIAGS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, -1), (-1, 1)];

/// Reverse horse attacks keyed by the attacker's leg: a horse attacks `sq` with its leg on
/// the diagonal neighbour `DIAGS[i]` of `sq`. `HORSE_ATTACKERS_BY_LEG[sq][i]` holds the
/// (at most two) horse squares whose leg is that neighbour.
const fn build_horse_attackers() -> [[u128; 4]; 90] {
    let mut t = [[0u128; 4]; 90];
    let mut sq = 0;
    while sq < 90 {
        let (f, r) = coords(sq);
        let mut i = 0;
        while i < 4 {
            let (dx, dy) = DIAGS[i];
            if at(f + dx, r + dy).is_some() {
                if let Some(s) = at(f + 2 * dx, r + dy) {
                    t[sq][i] |= bit(s);
                }
                if let Some(s) = at(f + dx, r + 2 * dy) {
                    t[sq][i] |= bit(s);
                }
            }
            i += 1;
        }
        sq += 1;
    }
    t
}
pub(crate) static HORSE_ATTACKERS_BY_LEG: [[u128; 4]; 90] = build_horse_attackers();

/// Elephant moves keyed by the eye (the diagonal neighbour `DIAGS[i]`), restricted to the
/// elephant's own side of the river. Index `[color][sq][i]`.
const fn build_elephant() -> [[[u128; 4]; 90]; 2] {
    let mut t = [[[0u128; 4]; 90]; 2];
    let mut c = 0;
    while c < 2 {
        let mut sq = 0;
        while sq < 90 {
            let (f, r) = coords(sq);
            let mut i = 0;
            while i < 4 {
                let (dx, dy) = DIAGS[i];
                if let Some(s) = at(f + 2 * dx, r + 2 * dy) {
                    let home = if c == 0 { s < 45 } else { s >= 45 };
                    if home {
                        t[c][sq][i] = bit(s);
                    }
                }
                i += 1;
            }
            sq += 1;
        }
        c += 1;
    }
    t
}
pub(crate) static ELEPHANT: [[[u128; 4]; 90]; 2] = build_elephant();

const fn in_palace(sq: u32, c: usize) -> bool {
    let f = sq % 9;
    let r = sq / 9;
    f >= 3 && f <= 5 && if c == 0 { r <= 2 } else { r >= 7 }
}

const fn build_palace_steps(diagonal: bool) -> [u128; 90] {
    let mut t = [0u128; 90];
    let mut sq = 0;
    while sq < 90 {
        let c = if sq < 45 { 0 } else { 1 };
        if in_palace(sq as u32, c) {
            let (f, r) = coords(sq);
            let mut i = 0;
            while i < 4 {
                let (dx, dy) = if diagonal { DIAGS[i] } else { DIRS[i] };
                if let Some(s) = at(f + dx, r + dy)
                    && in_palace(s, c)
                {
                    t[sq] |= bit(s);
                }
                i += 1;
            }
        }
        sq += 1;
    }
    t
}
/// Advisor steps inside the palace the square belongs to.
pub(crate) static ADVISOR: [u128; 90] = build_palace_steps(true);
/// General steps inside the palace the square belongs to.
pub(crate) static GENERAL: [u128; 90] = build_palace_steps(false);

const fn build_soldier() -> [[u128; 90]; 2] {
    let mut t = [[0u128; 90]; 2];
    let mut c = 0;
    while c < 2 {
        let fwd = if c == 0 { 1 } else { -1 };
        let mut sq = 0;
        while sq < 90 {
            let (f, r) = coords(sq);
            if let Some(s) = at(f, r + fwd) {
                t[c][sq] |= bit(s);
            }
            let crossed = if c == 0 { sq >= 45 } else { sq < 45 };
            if crossed {
                if let Some(s) = at(f - 1, r) {
                    t[c][sq] |= bit(s);
                }
                if let Some(s) = at(f + 1, r) {
                    t[c][sq] |= bit(s);
                }
            }
            sq += 1;
        }
        c += 1;
    }
    t
}
/// `SOLDIER[color][sq]`: where a soldier of `color` on `sq` may step.
pub(crate) static SOLDIER: [[u128; 90]; 2] = build_soldier();

const fn build_soldier_attackers() -> [[u128; 90]; 2] {
    let mut t = [[0u128; 90]; 2];
    let mut c = 0;
    while c < 2 {
        let mut from = 0;
        while from < 90 {
            let mut m = SOLDIER_CONST[c][from];
            while m != 0 {
                let to = m.trailing_zeros() as usize;
                t[c][to] |= bit(from as u32);
                m &= m - 1;
            }
            from += 1;
        }
        c += 1;
    }
    t
}
const SOLDIER_CONST: [[u128; 90]; 2] = build_soldier();
/// `SOLDIER_ATTACKERS[color][sq]`: squares from which a soldier of `color` attacks `sq`.
pub(crate) static SOLDIER_ATTACKERS: [[u128; 90]; 2] = build_soldier_attackers();

const fn build_files() -> [u128; 9] {
    let mut t = [0u128; 9];
    let mut sq = 0;
    while sq < 90 {
        t[sq % 9] |= bit(sq as u32);
        sq += 1;
    }
    t
}
/// Every square of each file.
pub(crate) static FILES: [u128; 9] = build_files();

/// First blocker from `sq` in direction `dir` (0,1 rise; 2,3 fall).
#[inline(always)]
pub(crate) fn first_blocker(dir: usize, sq: Square, occ: u128) -> Option<Square> {
    let m = RAYS[dir][sq.index()] & occ;
    if dir < 2 {
        Bitboard(m).first()
    } else {
        Bitboard(m).last()
    }
}

/// Chariot moves from `sq` (including the first blocker on each ray).
#[inline]
pub fn chariot_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    let mut a = 0;
    for (dir, rays) in RAYS.iter().enumerate() {
        let ray = rays[sq.index()];
        a |= match first_blocker(dir, sq, occ.0) {
            Some(b) => ray ^ rays[b.index()],
            None => ray,
        };
    }
    Bitboard(a)
}

/// Squares a cannon on `sq` attacks (captures through exactly one screen), whether
/// occupied or not.
#[inline]
pub fn cannon_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    let mut a = 0;
    for (dir, rays) in RAYS.iter().enumerate() {
        if let Some(screen) = first_blocker(dir, sq, occ.0) {
            let ray = rays[screen.index()];
            a |= match first_blocker(dir, screen, occ.0) {
                Some(b) => ray ^ rays[b.index()],
                None => ray,
            };
        }
    }
    Bitboard(a)
}

/// Squares a horse on `sq` attacks given the occupancy (legs blocked by any piece).
#[inline]
pub fn horse_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    let mut a = 0;
    for (i, &leg_dir) in DIRS.iter().enumerate() {
        if let Some(leg) = sq.offset(leg_dir.0, leg_dir.1)
            && !occ.contains(leg)
        {
            a |= HORSE_BY_LEG[sq.index()][i];
        }
    }
    Bitboard(a)
}

/// Squares from which a horse would attack `sq` given the occupancy.
#[inline]
pub fn horse_attackers(sq: Square, occ: Bitboard) -> Bitboard {
    let mut a = 0;
    let t = &HORSE_ATTACKERS_BY_LEG[sq.index()];
    for (i, d) in DIAGS.iter().enumerate() {
        if let Some(leg) = sq.offset(d.0, d.1)
            && !occ.contains(leg)
        {
            a |= t[i];
        }
    }
    Bitboard(a)
}

/// Elephant moves from `sq` for `color`, given the occupancy (eyes blocked by any piece).
#[inline]
pub fn elephant_attacks(color: Color, sq: Square, occ: Bitboard) -> Bitboard {
    let mut a = 0;
    let t = &ELEPHANT[color.index()][sq.index()];
    for (i, d) in DIAGS.iter().enumerate() {
        if t[i] != 0 {
            // The eye is on the board whenever the target is.
            let eye = Square::new((sq.index() as i32 + d.1 * 9 + d.0) as u32);
            if !occ.contains(eye) {
                a |= t[i];
            }
        }
    }
    Bitboard(a)
}

#[inline]
pub fn advisor_attacks(sq: Square) -> Bitboard {
    Bitboard(ADVISOR[sq.index()])
}

#[inline]
pub fn general_steps(sq: Square) -> Bitboard {
    Bitboard(GENERAL[sq.index()])
}

#[inline]
pub fn soldier_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(SOLDIER[color.index()][sq.index()])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(s: &str) -> Square {
        s.parse().unwrap()
    }

    #[test]
    fn horse_in_corner_has_two_moves() {
        let a = horse_attacks(sq("b0"), Bitboard::EMPTY);
        assert_eq!(a.collect::<Vec<_>>(), vec![sq("d1"), sq("a2"), sq("c2")]);
        let blocked = horse_attacks(sq("b0"), Bitboard::from_square(sq("b1")));
        assert_eq!(blocked.collect::<Vec<_>>(), vec![sq("d1")]);
    }

    #[test]
    fn horse_attackers_mirror_horse_attacks() {
        let occ = Bitboard(0x1234_5678_9abc_def0_1357_9bdf & Bitboard::FULL.0);
        for from in Square::all() {
            for to in horse_attacks(from, occ) {
                assert!(horse_attackers(to, occ).contains(from), "{from}->{to}");
            }
        }
        for to in Square::all() {
            for from in horse_attackers(to, occ) {
                assert!(horse_attacks(from, occ).contains(to), "{from}->{to}");
            }
        }
    }

    #[test]
    fn elephant_stays_home_and_needs_an_open_eye() {
        let a = elephant_attacks(Color::Red, sq("c4"), Bitboard::EMPTY);
        assert_eq!(a.collect::<Vec<_>>(), vec![sq("a2"), sq("e2")]);
        let a = elephant_attacks(Color::Red, sq("c4"), Bitboard::from_square(sq("d3")));
        assert_eq!(a.collect::<Vec<_>>(), vec![sq("a2")]);
    }

    #[test]
    fn cannon_jumps_exactly_one_screen() {
        let occ: Bitboard = [sq("b2"), sq("b5"), sq("b7"), sq("b9")]
            .into_iter()
            .collect();
        let a = cannon_attacks(sq("b2"), occ);
        assert!(a.contains(sq("b7")));
        assert!(!a.contains(sq("b5")));
        assert!(!a.contains(sq("b9")));
        let c = chariot_attacks(sq("b2"), occ);
        assert!(c.contains(sq("b5")) && !c.contains(sq("b6")) && c.contains(sq("b0")));
    }

    #[test]
    fn soldier_steps_sideways_only_after_crossing() {
        assert_eq!(soldier_attacks(Color::Red, sq("c3")).count(), 1);
        assert_eq!(soldier_attacks(Color::Red, sq("c5")).count(), 3);
        assert_eq!(soldier_attacks(Color::Red, sq("c9")).count(), 2);
        assert_eq!(soldier_attacks(Color::Black, sq("c6")).count(), 1);
        assert_eq!(soldier_attacks(Color::Black, sq("c4")).count(), 3);
    }
}
