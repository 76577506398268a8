//! Judging a repetition cycle under the 棋例 (第24-29条).
//!
//! Every move of the cycle is classified, strongest kind first (27.4):
//!
//! - **check** (将, 28.1): the move leaves the opponent in check;
//! - **mate threat** (杀, 28.2), decided only in its simplest sound form: the move does
//!   not check, was not a reply to a check, and if the mover could move again at once
//!   it would have a move that checkmates, which it did not have before the move (a
//!   threat left standing is not made again by every later move). Threats of mate by a
//!   longer series of checks are not recognised and count as idle;
//! - **chase** (捉, 28.3 and 第29条): the move does not check, was not a reply to a
//!   check, and creates an attack on an enemy 子力 that did not exist before the move
//!   (29.2). See [`chased`] for when an attack counts;
//! - **idle** (闲): anything else. A reply to a check is always idle: it is forced.
//!
//! A side's moves over the cycle are then *perpetual check* if every one is a check,
//! *forbidden* (禁止着法, 25.2: 长捉, 长杀, 一将一捉, 一将一杀 …) if every one is a
//! check, a mate threat or a chase and at least one is not a check, with the extra
//! condition that **one and the same enemy piece** is newly chased by every chasing
//! move (pieces are followed as they move, as in Pikafish), and *allowed* otherwise.
//! The verdict (第24, 26条): perpetual check by one side only loses; by both sides it
//! is a draw; otherwise a forbidden side against an allowed side loses, and two
//! forbidden or two allowed sides draw (不变作和).

use crate::{
    Bitboard, Color, Move, Piece, Position, Role, Square, advisor_attacks, cannon_attacks,
    chariot_attacks, elephant_attacks, general_steps, horse_attacks, soldier_attacks,
};

use super::{Outcome, Reason};

/// What one move of a cycle is, for the 棋例.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveKind {
    Check,
    MateThreat,
    /// The enemy pieces (by square after the move) newly chased by the move.
    Chase(Bitboard),
    Idle,
}

/// Classifies the move that leads from `before` to `after`.
pub fn classify(before: &Position, after: &Position) -> MoveKind {
    if after.is_check() {
        return MoveKind::Check;
    }
    if before.is_check() {
        return MoveKind::Idle;
    }
    let Some(again) = null_move(after) else {
        return MoveKind::Idle;
    };
    if threatens_mate(&again) && !threatens_mate(before) {
        return MoveKind::MateThreat;
    }
    let new = chased(&again) & !chased(before);
    if new.any() {
        MoveKind::Chase(new)
    } else {
        MoveKind::Idle
    }
}

/// The verdict on a cycle: `positions[0]` and the last position are the same, and
/// `moves[i]` leads from `positions[i]` to `positions[i + 1]`; no move captures.
pub(crate) fn judge(positions: &[&Position], moves: &[Move]) -> Outcome {
    debug_assert_eq!(positions.len(), moves.len() + 1);
    // Each piece gets an id per colour (at most 16), which follows it as it moves, so a
    // chased piece that runs away is still recognised as the same piece.
    const NONE: u8 = u8::MAX;
    let mut ids = [NONE; 90];
    let mut next = [0u8; 2];
    for (sq, p) in positions[0].pieces_iter() {
        ids[sq.index()] = next[p.color.index()];
        next[p.color.index()] += 1;
    }
    let mut all_check = [true; 2];
    let mut forbidden = [true; 2];
    let mut any_chase = [false; 2];
    // Enemy piece ids newly chased by every chasing move so far.
    let mut chased_ids = [u16::MAX; 2];
    for (i, &m) in moves.iter().enumerate() {
        let (before, after) = (positions[i], positions[i + 1]);
        let u = before.turn().index();
        debug_assert!(
            !before.is_capture(m),
            "a repetition cycle contains no capture"
        );
        ids[m.to().index()] = ids[m.from().index()];
        ids[m.from().index()] = NONE;
        if after.is_check() {
            continue;
        }
        all_check[u] = false;
        if !forbidden[u] {
            // Already allowed: no need for the costly analysis.
            continue;
        }
        match classify(before, after) {
            MoveKind::Check | MoveKind::MateThreat => {}
            MoveKind::Idle => forbidden[u] = false,
            MoveKind::Chase(targets) => {
                // Every piece has an id below 16 (at most 16 a side, none captured).
                let mask = targets
                    .filter(|sq| ids[sq.index()] < 16)
                    .fold(0u16, |acc, sq| acc | 1 << ids[sq.index()]);
                chased_ids[u] &= mask;
                if chased_ids[u] == 0 {
                    forbidden[u] = false;
                } else {
                    any_chase[u] = true;
                }
            }
        }
    }
    let (r, b) = (Color::Red.index(), Color::Black.index());
    match (all_check[r], all_check[b]) {
        (true, true) => return Outcome::draw(Reason::RepetitionDraw),
        (true, false) => return Outcome::loss(Color::Red, Reason::PerpetualCheck),
        (false, true) => return Outcome::loss(Color::Black, Reason::PerpetualCheck),
        (false, false) => {}
    }
    let reason = |c: usize| {
        if any_chase[c] {
            Reason::PerpetualChase
        } else {
            Reason::PerpetualMateThreat
        }
    };
    match (forbidden[r], forbidden[b]) {
        (true, false) => Outcome::loss(Color::Red, reason(r)),
        (false, true) => Outcome::loss(Color::Black, reason(b)),
        _ => Outcome::draw(Reason::RepetitionDraw),
    }
}

/// The position with the same pieces and the other side to move, if legal (it is not
/// when the side that just moved gives check).
fn null_move(pos: &Position) -> Option<Position> {
    let mut setup = pos.to_setup();
    setup.turn = setup.turn.other();
    Position::from_setup(setup).ok()
}

/// Whether the side to move has a move that checkmates.
fn threatens_mate(pos: &Position) -> bool {
    pos.legal_moves().iter().any(|&m| mates(pos, m))
}

fn mates(pos: &Position, m: Move) -> bool {
    let mut p = pos.clone();
    p.play_unchecked(m);
    p.is_check() && !p.has_legal_move()
}

/// The value scale of 25.3: a chariot is worth two horses or two cannons; horse and
/// cannon are equal; advisor and elephant are equal. A crossed soldier "floats"; it is
/// put with the advisor and elephant so that no attack on it counts as 少根.
const fn value(role: Role) -> u32 {
    match role {
        Role::Chariot => 4,
        Role::Horse | Role::Cannon => 2,
        Role::Advisor | Role::Elephant | Role::Soldier => 1,
        Role::General => 0,
    }
}

/// Whether `p` on `sq` is a 子力 (25.3): anything but the general and a soldier that
/// has not crossed the river.
fn is_material(p: Piece, sq: Square) -> bool {
    match p.role {
        Role::General => false,
        Role::Soldier => !sq.is_home(p.color),
        _ => true,
    }
}

/// The enemy pieces that the side to move in `pos` chases (could win with its next
/// move), as squares. An enemy piece `T` on `t` is chased by a piece `X` when:
///
/// - `X` is not the general and not a soldier (27.1, 27.2: they chase idly);
/// - `T` is a 子力 (25.3);
/// - `X` can legally capture `T` now (a pinned attacker chases only what it may take);
/// - it is not an offer to exchange (兑, 28.5): `X` and `T` are of the same kind and
///   `T` could legally capture `X` just as well;
/// - `T` has no real protection (29.3, 28.16): after `X` takes `T`, the opponent has no
///   legal recapture on `t` (a pinned or otherwise illegal recapture is a 假根), **or**
///   `T` is worth more than `X` (少根: a horse or cannon attacking a chariot, an advisor
///   or elephant attacking a chariot, horse or cannon), whatever the protection;
/// - taking `T` does not allow the opponent to mate at once (29.4).
///
/// Not covered: winning material through a series of checks or exchanges (29.1's
/// indirect forms), 27.2's mutual soldier attacks and 27.3's defensive key points.
pub fn chased(pos: &Position) -> Bitboard {
    let mut out = Bitboard::EMPTY;
    for c in pos.legal_moves() {
        let (from, to) = (c.from(), c.to());
        let Some(target) = pos.piece_at(to) else {
            continue;
        };
        let attacker = pos.piece_at(from).expect("a legal move moves a piece");
        if matches!(attacker.role, Role::General | Role::Soldier)
            || !is_material(target, to)
            || out.contains(to)
        {
            continue;
        }
        if attacker.role == target.role
            && attacks_from(pos, to, target).contains(from)
            && capture_is_safe(pos, to, from)
        {
            continue;
        }
        let mut after = pos.clone();
        after.play_unchecked(c);
        let replies = after.legal_moves();
        let outranks = value(target.role) > value(attacker.role);
        if !outranks && replies.iter().any(|r| r.to() == to) {
            continue;
        }
        if replies.iter().any(|&r| mates(&after, r)) {
            continue;
        }
        out = out.with(to);
    }
    out
}

/// The points the piece `p` on `sq` attacks (could capture on if an enemy stood there).
fn attacks_from(pos: &Position, sq: Square, p: Piece) -> Bitboard {
    let occ = pos.occupied();
    match p.role {
        Role::Chariot => chariot_attacks(sq, occ),
        Role::Cannon => cannon_attacks(sq, occ),
        Role::Horse => horse_attacks(sq, occ),
        Role::Elephant => elephant_attacks(p.color, sq, occ),
        Role::Advisor => advisor_attacks(sq),
        Role::General => general_steps(sq),
        Role::Soldier => soldier_attacks(p.color, sq),
    }
}

/// Whether the piece on `from` capturing on `to` leaves its own general safe, whoever
/// is to move in `pos`.
fn capture_is_safe(pos: &Position, from: Square, to: Square) -> bool {
    let p = pos.piece_at(from).expect("a piece on from");
    let occ = pos.occupied().without(from).with(to);
    let general = if p.role == Role::General {
        to
    } else {
        pos.general(p.color)
    };
    (pos.attackers(general, p.color.other(), occ) & !Bitboard::from_square(to)).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen).unwrap()
    }

    fn squares(b: Bitboard) -> Vec<String> {
        b.map(|s| s.to_string()).collect()
    }

    #[test]
    fn horse_attacking_an_unprotected_chariot_chases_it() {
        // Red horse e4 attacks the black chariot on d6; nothing protects it.
        let p = pos("4k4/9/9/3r5/9/4N4/9/9/9/3K5 w - - 0 1");
        assert_eq!(squares(chased(&p)), ["d6"]);
    }

    #[test]
    fn horse_attacking_a_protected_chariot_still_chases_it() {
        // 少根: the black horse c8 protects the chariot, but a chariot outranks a horse.
        let p = pos("4k4/2n6/9/3r5/9/4N4/9/9/9/3K5 w - - 0 1");
        assert_eq!(squares(chased(&p)), ["d6"]);
    }

    #[test]
    fn chariot_attacking_a_protected_horse_is_no_chase() {
        // The black horse d6 is protected by the chariot on d9.
        let p = pos("3r1k3/9/9/3n5/9/9/9/9/9/3RK4 w - - 0 1");
        assert!(chased(&p).is_empty());
        // Without the protector it is chased.
        let p = pos("5k3/9/9/3n5/9/9/9/9/9/3RK4 w - - 0 1");
        assert_eq!(squares(chased(&p)), ["d6"]);
    }

    #[test]
    fn a_pinned_protector_is_a_false_root() {
        // The black chariot e8 "protects" the horse e6, but it is pinned against the
        // general f8 by the red chariot a8: recapturing on e6 would be illegal.
        let p = pos("9/R3rk3/9/4n4/9/9/9/9/4R4/3K5 w - - 0 1");
        assert_eq!(squares(chased(&p)), ["e6"]);
        // Without the pinner the protection is real.
        let p = pos("9/4rk3/9/4n4/9/9/9/9/4R4/3K5 w - - 0 1");
        assert!(chased(&p).is_empty());
    }

    #[test]
    fn general_and_soldier_do_not_chase() {
        // The crossed red soldier on d7 attacks the unprotected black horse on d8: a
        // soldier's attack is idle (27.2).
        let p = pos("4k4/3n5/3P5/9/9/9/9/9/9/5K3 w - - 0 1");
        assert!(chased(&p).is_empty());
        // The red general on e0 attacks the unprotected black horse on d0: idle (27.1).
        let p = pos("5k3/9/9/9/9/9/9/9/9/3nK4 w - - 0 1");
        assert!(chased(&p).is_empty());
    }

    #[test]
    fn uncrossed_soldier_is_not_material() {
        // A red chariot attacks an uncrossed black soldier (on black's side): no chase.
        let p = pos("5k3/9/9/2p6/9/9/9/9/9/2R1K4 w - - 0 1");
        assert!(chased(&p).is_empty());
        // A crossed one is.
        let p = pos("5k3/9/9/9/9/3p5/9/9/9/3RK4 w - - 0 1");
        assert_eq!(squares(chased(&p)), ["d4"]);
    }

    #[test]
    fn a_move_that_prepares_mate_is_a_mate_threat() {
        // The chariot a8 holds the eighth rank; the horse b1 blocks the chariot b0.
        // Moving the horse away threatens b0b9 mate.
        let before = pos("4k4/R8/9/9/9/9/9/9/1N7/1R1K5 w - - 0 1");
        let m: Move = "b1c3".parse().unwrap();
        let mut after = before.clone();
        after.play_unchecked(m);
        assert_eq!(classify(&before, &after), MoveKind::MateThreat);
        // A quiet chariot move on the eighth rank threatens nothing.
        let m: Move = "a8a7".parse().unwrap();
        let mut after = before.clone();
        after.play_unchecked(m);
        assert_eq!(classify(&before, &after), MoveKind::Idle);
    }

    #[test]
    fn a_capture_answered_by_mate_is_no_chase() {
        // The red chariot i5 attacks the unprotected black horse e5, but it also keeps
        // the black chariot i9 off i0: after i5xe5, i9i0 mates (the chariot a1 holds
        // the first rank, the advisor d0 blocks the general). 29.4: no chase.
        let p = pos("3k4r/9/9/9/4n3R/9/9/9/r8/3AK4 w - - 0 1");
        assert!(chased(&p).is_empty());
        // Without the black chariot on a1 the general escapes to e1: a chase.
        let p = pos("3k4r/9/9/9/4n3R/9/9/9/9/3AK4 w - - 0 1");
        assert_eq!(squares(chased(&p)), ["e5"]);
    }

    #[test]
    fn same_kind_mutual_attack_is_an_exchange_offer() {
        // Red chariot d0 and black chariot d6 attack each other: 兑, not 捉.
        let p = pos("5k3/9/9/3r5/9/9/9/9/9/3RK4 w - - 0 1");
        assert!(chased(&p).is_empty());
    }
}
