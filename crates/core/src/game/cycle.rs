//! Judging a repetition cycle under the 棋例 (第24-29条).
//!
//! Every move of the cycle is classified, strongest kind first (27.4: 从重称呼和裁处):
//!
//! - **check** (将, 28.1): the move leaves the opponent in check;
//! - **mate threat** (杀, 28.2): if the mover could move again at once it would mate,
//!   at once or through consecutive checks (at most [`Horizon::mate_checks`]), and it
//!   could not before the move (a threat left standing is not made again by every later
//!   move);
//! - **chase** (捉, 28.3 and 第29条): the move creates a chase of an enemy 子力 that
//!   did not exist before the move (29.2, 细则2, 细则6). See [`chased`] for when a
//!   piece is chased;
//! - **idle** (闲, 28.9): anything else, including 兑, 献, 拦 and 跟 that chase nothing.
//!
//! A move made in answer to a check is classified like any other: the rules make no
//! exception for it. For 29.2 the chases that "existed before" such a move include
//! the captures that only the check made illegal, when they pass the same test as a
//! chase: the attacker is not pinned and the exchange wins material
//! ([`chased_but_for_the_check`]). An attack on a protected piece that an exchange
//! would only trade evenly was never a chase, so a reply to check that adds a second
//! attacker creates one (少根, 28.16; 细则2 从没捉到捉).
//!
//! A side's moves over the cycle are then *perpetual check* if every one is a check,
//! *forbidden* (禁止着法, 25.2: 长杀, 长捉, 一将一杀, 一将一捉, 一杀一捉) if every one
//! is a check, a mate threat or a chase and at least one is not a check, and *allowed*
//! otherwise (数将一闲, 数捉一闲 …). A chase of one piece or of several pieces in turn,
//! by one chaser or several, is 长捉 alike (28.12: "连续追捉一子或数子"). The verdict
//! (第24, 26条): perpetual check by one side only loses; by both sides it is a draw;
//! otherwise a forbidden side against an allowed side loses, and two forbidden or two
//! allowed sides draw (不变作和). A soldier's own attacks are idle, except in mutual
//! perpetual attacks (相互长打, 27.2, 细则11), where they count as chases.

use crate::{Bitboard, Color, Move, Piece, Position, Role, Square};

use super::{Outcome, Reason, same_placement};

/// How far the searches of the 棋例 look. 28.2 ("连续照将") and 29.1 ("能够通过连续照将
/// 吃子") set no bound on the series of checks; a search needs one, since checks can
/// go round for ever. docs/RULES.md gives what each step costs, measured by
/// `cargo bench -p xq-core --bench adjudication`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Horizon {
    /// The most consecutive checks a mate threat may take: a threat of mate in one
    /// counts, and so does a forced mate by up to this many checks in a row. Longer
    /// mating series are not searched and the move counts as what it otherwise is.
    pub mate_checks: u32,
    /// The most consecutive checks before the capture in a chase through checks.
    /// Longer series are not searched.
    pub chase_checks: u32,
}

impl Horizon {
    /// What [`crate::GameConfig::CXA`] uses.
    pub const DEFAULT: Horizon = Horizon {
        mate_checks: 5,
        chase_checks: 3,
    };
}

/// What one move of a cycle is, for the 棋例.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoveKind {
    Check,
    MateThreat,
    /// The enemy pieces (by square after the move) newly chased by the move.
    Chase(Bitboard),
    Idle,
}

/// Whether a soldier's own attacks count as chases: idle by themselves (27.2 first
/// sentence), chases in mutual perpetual attacks (27.2 second sentence, 细则11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Soldiers {
    Idle,
    Count,
}

/// Classifies the move that leads from `before` to `after`.
pub fn classify(
    before: &Position,
    after: &Position,
    soldiers: Soldiers,
    horizon: Horizon,
) -> MoveKind {
    Memo::new(horizon).classify(before, after, soldiers)
}

/// The verdict on a cycle: `positions[0]` and the last position are the same, and
/// `moves[i]` leads from `positions[i]` to `positions[i + 1]`; no move captures.
///
/// Each side's moves are judged on their own, so the verdict does not depend on which
/// side moved first into the cycle.
pub(crate) fn judge(positions: &[&Position], moves: &[Move], horizon: Horizon) -> Outcome {
    debug_assert_eq!(positions.len(), moves.len() + 1);
    debug_assert!(
        moves.iter().zip(positions).all(|(&m, p)| !p.is_capture(m)),
        "a repetition cycle contains no capture"
    );
    let mut memo = Memo::new(horizon);
    let mut sides = Color::ALL.map(|c| memo.side(c, positions, Soldiers::Idle));
    // 27.2: a side that is allowed only because its soldiers' attacks are idle is
    // forbidden too when both sides attack with every move (相互长打).
    for c in Color::ALL {
        let (us, them) = (c.index(), c.other().index());
        if sides[us] == Side::Allowed && sides[them] != Side::Allowed {
            sides[us] = memo.side(c, positions, Soldiers::Count);
        }
    }
    let (r, b) = (sides[Color::Red.index()], sides[Color::Black.index()]);
    match (r, b) {
        (Side::PerpetualCheck, Side::PerpetualCheck) => Outcome::draw(Reason::RepetitionDraw),
        (Side::PerpetualCheck, _) => Outcome::loss(Color::Red, Reason::PerpetualCheck),
        (_, Side::PerpetualCheck) => Outcome::loss(Color::Black, Reason::PerpetualCheck),
        (Side::Forbidden { chase }, Side::Allowed) => Outcome::loss(Color::Red, reason(chase)),
        (Side::Allowed, Side::Forbidden { chase }) => Outcome::loss(Color::Black, reason(chase)),
        _ => Outcome::draw(Reason::RepetitionDraw),
    }
}

const fn reason(chase: bool) -> Reason {
    if chase {
        Reason::PerpetualChase
    } else {
        Reason::PerpetualMateThreat
    }
}

/// One side's moves over a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    PerpetualCheck,
    /// Only checks, mate threats and chases; `chase` if at least one chase.
    Forbidden {
        chase: bool,
    },
    Allowed,
}

/// The facts about a position that classifying moves needs, computed once per
/// position of a cycle (the same positions recur in every round of it).
#[derive(Debug)]
struct Memo {
    horizon: Horizon,
    entries: Vec<(Position, Soldiers, Facts)>,
}

#[derive(Debug, Clone, Copy)]
struct Facts {
    /// The side to move mates by consecutive checks ([`mates_by_checks`]).
    mates: bool,
    /// The enemy pieces the side to move chases ([`chased`]).
    chased: Bitboard,
    /// In check: the enemy pieces it would chase but for the check
    /// ([`chased_but_for_the_check`]); empty otherwise.
    chased_but_for_the_check: Bitboard,
}

impl Memo {
    fn new(horizon: Horizon) -> Memo {
        Memo {
            horizon,
            entries: Vec::new(),
        }
    }

    fn facts(&mut self, pos: &Position, soldiers: Soldiers) -> Facts {
        if let Some((_, _, f)) = self
            .entries
            .iter()
            .find(|(p, s, _)| *s == soldiers && p.hash() == pos.hash() && same_placement(p, pos))
        {
            return *f;
        }
        let f = Facts {
            mates: mates_by_checks(pos, self.horizon.mate_checks),
            chased: chased(pos, soldiers, self.horizon.chase_checks),
            chased_but_for_the_check: if pos.is_check() {
                chased_but_for_the_check(pos, soldiers)
            } else {
                Bitboard::EMPTY
            },
        };
        self.entries.push((pos.clone(), soldiers, f));
        f
    }

    fn classify(&mut self, before: &Position, after: &Position, soldiers: Soldiers) -> MoveKind {
        if after.is_check() {
            return MoveKind::Check;
        }
        let Some(again) = null_move(after) else {
            return MoveKind::Idle;
        };
        let (now, was) = (self.facts(&again, soldiers), self.facts(before, soldiers));
        if now.mates && !was.mates {
            return MoveKind::MateThreat;
        }
        let new = now.chased & !(was.chased | was.chased_but_for_the_check);
        if new.any() {
            MoveKind::Chase(new)
        } else {
            MoveKind::Idle
        }
    }

    /// The moves of `side` over the cycle `positions`.
    fn side(&mut self, side: Color, positions: &[&Position], soldiers: Soldiers) -> Side {
        let mut all_check = true;
        let mut chase = false;
        for w in positions.windows(2) {
            let (before, after) = (w[0], w[1]);
            if before.turn() != side {
                continue;
            }
            match self.classify(before, after, soldiers) {
                MoveKind::Check => {}
                MoveKind::MateThreat => all_check = false,
                MoveKind::Chase(_) => {
                    all_check = false;
                    chase = true;
                }
                MoveKind::Idle => return Side::Allowed,
            }
        }
        if all_check {
            Side::PerpetualCheck
        } else {
            Side::Forbidden { chase }
        }
    }
}

/// The position with the same pieces and the other side to move, if legal (it is not
/// when the side that just moved gives check).
fn null_move(pos: &Position) -> Option<Position> {
    let mut setup = pos.to_setup();
    setup.turn = setup.turn.other();
    Position::from_setup(setup).ok()
}

fn played(pos: &Position, m: Move) -> Position {
    let mut p = pos.clone();
    p.play_unchecked(m);
    p
}

/// Whether the side to move can force mate by consecutive checks, at most `checks` of
/// them (28.2): some checking move mates at once, or every reply to it leaves a mate by
/// fewer checks.
pub fn mates_by_checks(pos: &Position, checks: u32) -> bool {
    if checks == 0 {
        return false;
    }
    pos.legal_moves().iter().any(|&m| {
        let p = played(pos, m);
        if !p.is_check() {
            return false;
        }
        let replies = p.legal_moves();
        replies.is_empty()
            || (checks > 1
                && replies
                    .iter()
                    .all(|&r| mates_by_checks(&played(&p, r), checks - 1)))
    })
}

/// Whether the side to move has a move that mates at once.
fn mate_in_one(pos: &Position) -> bool {
    mates_by_checks(pos, 1)
}

/// The value scale of 25.3 for weighing captures: a chariot is worth two horses, two
/// cannons or a horse and a cannon; horse and cannon are equal; advisor and elephant
/// are equal. A soldier's value floats (25.3, 细则10); it is weighed like an advisor
/// or elephant. The general is never given up: a legal capture by the general cannot
/// be answered.
const fn value(role: Role) -> i32 {
    match role {
        Role::Chariot => 4,
        Role::Horse | Role::Cannon => 2,
        Role::Advisor | Role::Elephant | Role::Soldier => 1,
        Role::General => 100,
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

/// Whether `attacker` can chase by itself: never the general (27.1); a soldier only
/// when its attacks count (27.2).
fn may_chase(attacker: Role, soldiers: Soldiers) -> bool {
    match attacker {
        Role::General => false,
        Role::Soldier => soldiers == Soldiers::Count,
        _ => true,
    }
}

/// The material that the side to move in `pos` wins by playing the capture `m` and
/// letting the exchange on its target point run its course (29.1 "通过完整的交换过程
/// 得子"): after each capture the other side recaptures with its least valuable legal
/// capturer, or stops when recapturing would lose. Only legal captures count, so a
/// pinned protector or one whose recapture exposes its general is no protection (假根,
/// 28.16), and a hidden protector (暗根) that a capture uncovers is one.
pub fn exchange_gain(pos: &Position, m: Move) -> i32 {
    let Some(target) = pos.captured(m) else {
        return 0;
    };
    let Some(mover) = pos.piece_at(m.from()) else {
        return 0;
    };
    value(target.role) - recapture_gain(&played(pos, m), m.to(), value(mover.role))
}

/// What the side to move gains at best by recapturing on `sq`, where a piece worth
/// `at_stake` stands; never negative (it can decline).
fn recapture_gain(pos: &Position, sq: Square, at_stake: i32) -> i32 {
    let best = pos
        .legal_moves()
        .iter()
        .filter(|m| m.to() == sq)
        .filter_map(|&m| pos.piece_at(m.from()).map(|p| (value(p.role), m)))
        .min_by_key(|&(v, _)| v);
    match best {
        None => 0,
        Some((v, m)) => (at_stake - recapture_gain(&played(pos, m), sq, v)).max(0),
    }
}

/// The enemy pieces that the side to move in `pos` chases, as squares (28.3, 第29条).
///
/// An enemy 子力 `T` (25.3: not the general, not an uncrossed soldier) is chased when
/// the side to move could win it with its next move (29.1):
///
/// - **directly**: a piece `X` that may chase (not the general, 27.1; not a soldier
///   unless in mutual perpetual attacks, 27.2) can legally capture `T`, the exchange
///   on `T`'s point wins material ([`exchange_gain`] > 0: `T` is unprotected, falsely
///   protected, or protected too little, 28.16 少根), and after `X` takes `T` the
///   opponent cannot mate at once (29.4). An exchange offer or a sacrifice (兑, 献) that
///   wins nothing is no chase; one that also wins material is (细则5);
/// - **through consecutive checks** (at most `chase_checks`): some quiet check leaves
///   every reply (none of which captures) in a position where `T` is chased, directly
///   or through further checks. A check that mates is a 杀, not a 捉.
pub fn chased(pos: &Position, soldiers: Soldiers, chase_checks: u32) -> Bitboard {
    direct_chases(pos, soldiers) | chases_through_checks(pos, chase_checks, soldiers)
}

fn direct_chases(pos: &Position, soldiers: Soldiers) -> Bitboard {
    let mut out = Bitboard::EMPTY;
    for &m in pos.legal_moves().iter() {
        let to = m.to();
        let (Some(target), Some(attacker)) = (pos.piece_at(to), pos.piece_at(m.from())) else {
            continue;
        };
        if out.contains(to) || !is_material(target, to) || !may_chase(attacker.role, soldiers) {
            continue;
        }
        if exchange_gain(pos, m) > 0 && !mate_in_one(&played(pos, m)) {
            out = out.with(to);
        }
    }
    out
}

fn chases_through_checks(pos: &Position, checks: u32, soldiers: Soldiers) -> Bitboard {
    if checks == 0 {
        return Bitboard::EMPTY;
    }
    let mut out = Bitboard::EMPTY;
    for &m in pos.legal_moves().iter() {
        if pos.is_capture(m) {
            continue;
        }
        let p = played(pos, m);
        if !p.is_check() {
            continue;
        }
        let replies = p.legal_moves();
        if replies.is_empty() {
            continue;
        }
        let mut won = !Bitboard::EMPTY;
        for &r in replies.iter() {
            if p.is_capture(r) {
                won = Bitboard::EMPTY;
                break;
            }
            let q = played(&p, r);
            let mut s =
                direct_chases(&q, soldiers) | chases_through_checks(&q, checks - 1, soldiers);
            // Name the piece that the reply moved by its square before the reply.
            if s.contains(r.to()) {
                s = s.without(r.to()).with(r.from());
            }
            won &= s;
            if won.is_empty() {
                break;
            }
        }
        out |= won;
    }
    out
}

/// The enemy pieces that the side to move, in check, would chase directly if the check
/// did not forbid the capture: the attacks that existed before its reply (29.2).
///
/// The same test as a direct chase ([`direct_chases`]), with one difference: the
/// capture need only be legal but for the check, so a capture that exposes the own
/// general to an attack by a piece other than the checkers (a pinned attacker) does not
/// count, and the exchange on the target's point ([`exchange_gain`], played in the
/// position as it is, check included) must win material. 29.4 is not applied: with
/// the check standing, every reply of the opponent is judged against the check, not
/// against a new mate.
fn chased_but_for_the_check(pos: &Position, soldiers: Soldiers) -> Bitboard {
    let us = pos.turn();
    let general = pos.general(us);
    let checkers = pos.checkers();
    let mut out = Bitboard::EMPTY;
    for &m in pos.pseudo_legal_moves().iter() {
        let (from, to) = (m.from(), m.to());
        let (Some(target), Some(attacker)) = (pos.piece_at(to), pos.piece_at(from)) else {
            continue;
        };
        if out.contains(to) || !is_material(target, to) || !may_chase(attacker.role, soldiers) {
            continue;
        }
        let occ = pos.occupied().without(from);
        let exposed = pos.attackers(general, us.other(), occ) & !checkers;
        if exposed.without(to).is_empty() && exchange_gain(pos, m) > 0 {
            out = out.with(to);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHASES_THROUGH: u32 = Horizon::DEFAULT.chase_checks;

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen).unwrap()
    }

    fn squares(b: Bitboard) -> Vec<String> {
        b.map(|s| s.to_string()).collect()
    }

    /// The position with the colours swapped (board turned round, other side to move).
    fn flipped(p: &Position) -> Position {
        let setup = p.to_setup();
        let mut f = setup.clone();
        for sq in Square::all() {
            f.board[sq.flip().index()] = setup.board[sq.index()].map(|pc| Piece {
                color: pc.color.other(),
                role: pc.role,
            });
        }
        f.turn = setup.turn.other();
        Position::from_setup(f).unwrap()
    }

    /// The chased squares of `fen`, checked to be the same with the colours swapped.
    fn chased_squares(fen: &str) -> Vec<String> {
        let p = pos(fen);
        let got = chased(&p, Soldiers::Idle, CHASES_THROUGH);
        let mirrored: Bitboard = chased(&flipped(&p), Soldiers::Idle, CHASES_THROUGH)
            .map(Square::flip)
            .collect();
        assert_eq!(
            got, mirrored,
            "{fen}: the colours swapped give another answer"
        );
        squares(got)
    }

    /// Classifies `m` from `fen`, checked to be the same with the colours swapped.
    fn kind(fen: &str, m: &str) -> MoveKind {
        let classify_in = |before: &Position, m: Move| {
            let mut after = before.clone();
            after.play_unchecked(m);
            classify(before, &after, Soldiers::Idle, Horizon::DEFAULT)
        };
        let (p, m): (Position, Move) = (pos(fen), m.parse().unwrap());
        let k = classify_in(&p, m);
        let flip_kind = match classify_in(&flipped(&p), m.flip()) {
            MoveKind::Chase(t) => MoveKind::Chase(t.map(Square::flip).collect()),
            other => other,
        };
        assert_eq!(
            k, flip_kind,
            "{fen} {m}: the colours swapped give another answer"
        );
        k
    }

    /// (FEN with the chaser to move, chased squares, reasoning).
    const CHASES: &[(&str, &[&str], &str)] = &[
        (
            "4k4/9/9/3r5/9/4N4/9/9/9/3K5 w - - 0 1",
            &["d6"],
            "horse e4 on an unprotected chariot d6 (29.1 direct)",
        ),
        (
            "4k4/2n6/9/3r5/9/4N4/9/9/9/3K5 w - - 0 1",
            &["d6"],
            "少根 (28.16): the horse c8 protects d6, but horse for chariot wins 2",
        ),
        (
            "3r1k3/9/9/3n5/9/9/9/9/9/3RK4 w - - 0 1",
            &[],
            "the chariot d9 protects the horse d6: chariot for horse loses",
        ),
        (
            "9/R3rk3/9/4n4/9/9/9/9/4R4/3K5 w - - 0 1",
            &["e6"],
            "假根 (28.16): the protector e8 is pinned against the general f8",
        ),
        (
            "4k4/3n5/3P5/9/9/9/9/9/9/5K3 w - - 0 1",
            &[],
            "a soldier's own attack is idle (27.2)",
        ),
        (
            "5k3/9/9/9/9/9/9/9/9/3nK4 w - - 0 1",
            &[],
            "the general's own attack is idle (27.1)",
        ),
        (
            "5k3/9/9/2p6/9/9/9/9/9/2R1K4 w - - 0 1",
            &[],
            "an uncrossed soldier is not a 子力 (25.3)",
        ),
        (
            "5k3/9/9/9/9/3p5/9/9/9/3RK4 w - - 0 1",
            &["d4"],
            "a crossed soldier is a 子力 (25.3)",
        ),
        (
            "3k4r/9/9/9/4n3R/9/9/9/r8/3AK4 w - - 0 1",
            &["i9"],
            "29.4: after i5xe5 the chariot i9 mates on i0, so e5 is not chased; the \
             unprotected chariot i9 is (捉兼兑/送吃, 细则5)",
        ),
        (
            "5k3/9/9/3r5/9/9/9/9/9/3RK4 w - - 0 1",
            &["d6"],
            "兑 that also wins (细则5): the chariot d6 is unprotected",
        ),
        (
            "3r1k3/9/9/3r5/9/9/9/9/9/3RK4 w - - 0 1",
            &[],
            "兑 (28.5): chariots protected on both sides, the exchange wins nothing",
        ),
        (
            "3k1r3/9/9/5c3/9/4N4/9/9/9/4K4 w - - 0 1",
            &[],
            "兑 by value (28.5, 25.3): horse for a cannon protected by the chariot f9 wins \
             nothing",
        ),
        (
            "3k1r3/9/9/5r3/9/4N4/9/9/9/4K4 w - - 0 1",
            &["f6"],
            "少根 (28.16): a chariot protected by a chariot is still won by a horse",
        ),
        (
            "3k5/9/9/9/9/9/9/9/4A4/3p1K3 w - - 0 1",
            &["d0"],
            "an advisor chases an unprotected crossed soldier (25.3)",
        ),
        (
            "3k5/4a4/9/9/9/9/9/9/4C4/5K3 w - - 0 1",
            &[],
            "no screen: the cannon e1 attacks nothing",
        ),
        (
            "3k5/4a4/9/9/9/4p4/9/9/4C4/5K3 w - - 0 1",
            &["e8"],
            "cannon over the soldier e4 on an unprotected advisor (25.3)",
        ),
        (
            "3k5/9/9/9/9/9/9/9/4A4/3n1K3 w - - 0 1",
            &["d0"],
            "an advisor chases an unprotected horse",
        ),
        (
            "3k5/9/9/9/9/2c6/9/4B4/9/5K3 w - - 0 1",
            &["c4"],
            "an elephant chases an unprotected cannon",
        ),
        (
            "3k5/9/9/9/6b2/4N4/9/9/9/5K3 w - - 0 1",
            &["g5"],
            "a horse chases an unprotected elephant (25.3)",
        ),
    ];

    #[test]
    fn chase_table() {
        for &(fen, want, why) in CHASES {
            assert_eq!(chased_squares(fen), want, "{fen}: {why}");
        }
    }

    #[test]
    fn a_soldiers_chase_counts_only_when_soldiers_count() {
        // 27.2: the crossed soldier d7 attacks the unprotected horse d8.
        let p = pos("4k4/3n5/3P5/9/9/9/9/9/9/5K3 w - - 0 1");
        assert!(chased(&p, Soldiers::Idle, CHASES_THROUGH).is_empty());
        assert_eq!(squares(chased(&p, Soldiers::Count, CHASES_THROUGH)), ["d8"]);
    }

    #[test]
    fn the_exchange_counts_every_attacker_and_defender() {
        // The chariot d9 protects the cannon d6 against the chariots d2 and d1: chariot
        // takes cannon (+2), chariot retakes (-4), chariot retakes (+4), +2 in all.
        let two = pos("3r1k3/9/9/3c5/9/9/9/3R5/3R5/4K4 w - - 0 1");
        assert_eq!(exchange_gain(&two, "d2d6".parse().unwrap()), 2);
        // One attacker against one defender: chariot for cannon loses 2.
        let one = pos("3r1k3/9/9/3c5/9/9/9/3R5/9/4K4 w - - 0 1");
        assert_eq!(exchange_gain(&one, "d2d6".parse().unwrap()), -2);
        // A horse takes a chariot protected by a horse: +4 - 2 (少根, 28.16).
        let horse = pos("4k4/2n6/9/3r5/9/4N4/9/9/9/3K5 w - - 0 1");
        assert_eq!(exchange_gain(&horse, "e4d6".parse().unwrap()), 2);
    }

    #[test]
    fn moves_are_classified_by_their_strongest_effect() {
        // (FEN, move, kind, reasoning).
        let sq = |s: &str| Bitboard::from_square(s.parse().unwrap());
        let cases: &[(&str, &str, MoveKind, &str)] = &[
            (
                "4k4/R8/9/9/9/9/9/9/1N7/1R1K5 w - - 0 1",
                "b1c3",
                MoveKind::MateThreat,
                "uncovers b0b9 mate in one (28.2)",
            ),
            (
                "4k4/R8/9/9/9/9/9/9/1N7/1R1K5 w - - 0 1",
                "a8a7",
                MoveKind::Idle,
                "a quiet chariot move threatens nothing",
            ),
            (
                "4k4/9/9/9/9/9/9/RN7/1R7/3K5 w - - 0 1",
                "b2d3",
                MoveKind::MateThreat,
                "uncovers a mate through consecutive checks, not in one (28.2 连续照将)",
            ),
            (
                "4k4/9/9/9/4n4/7R1/9/4C4/9/3K5 b - - 0 1",
                "e5g6",
                MoveKind::Chase(sq("h4")),
                "the screen of the cannon's check steps away and attacks the unprotected \
                 chariot h4: a reply to a check is judged like any move (no exemption in \
                 the rules)",
            ),
            (
                "5k3/4a4/n3r4/2n6/9/3N5/c8/2N6/2R6/4K4 w - - 0 1",
                "c2e3",
                MoveKind::Chase(sq("c6")),
                "a reply to the check e7 that opens the c-file: the horse c6, attacked by \
                 the horse d4 and protected by the horse a7 (an even trade, no chase), is \
                 now attacked by the chariot c1 too and won by the exchange: a new chase \
                 (少根 28.16, 29.2, 细则2)",
            ),
            (
                "5k3/9/4r4/9/9/9/9/4R2n1/6n2/4K4 w - - 0 1",
                "e0d0",
                MoveKind::Chase(sq("h2")),
                "the general steps out of the horse's check and off the e-file: the chariot \
                 e2, pinned by the chariot e7 before, now attacks the unprotected horse h2, \
                 a new chase; its attack on e7 along the pin line existed before (29.2)",
            ),
            (
                "9/5k3/5N3/2N5c/9/3R5/8n/9/4K4/2r6 w - - 0 1",
                "d4a4",
                MoveKind::MateThreat,
                "threatens a mate by five consecutive checks (28.2 连续照将 sets no bound; \
                 the horizon of three checks that was shipped before did not see it)",
            ),
            (
                "1N7/5R3/4k4/9/6c2/9/9/5K3/9/9 w - - 0 1",
                "f8h8",
                MoveKind::Chase(sq("g5")),
                "threatens to win the unprotected cannon g5 after three consecutive checks \
                 (29.1 能够通过连续照将吃子; the horizon of two that was shipped before did \
                 not see it)",
            ),
            (
                "5k3/9/9/9/n8/9/9/9/9/R2K5 w - - 0 1",
                "a0a1",
                MoveKind::Idle,
                "the chariot already chased the unprotected horse a5 and still does: \
                 从捉到捉 is idle (29.2, 细则6)",
            ),
            (
                "5k3/9/9/9/n8/9/9/9/9/R2K5 w - - 0 1",
                "a0b0",
                MoveKind::Idle,
                "the chariot gives the chase up: idle",
            ),
            (
                "5k3/9/9/9/1n7/9/9/9/9/R2K5 w - - 0 1",
                "a0b0",
                MoveKind::Chase(sq("b5")),
                "the chariot takes up a chase of the unprotected horse b5 (从无捉到捉, 细则2)",
            ),
        ];
        for (fen, m, want, why) in cases {
            assert_eq!(kind(fen, m), *want, "{fen} {m}: {why}");
        }
    }

    #[test]
    fn a_chase_through_checks_is_found() {
        // The red chariot a0 checks on a9; the general must step to e8, and the
        // chariot then takes the unprotected horse i9 along the ninth rank.
        let p = pos("4k3n/9/9/9/9/9/9/9/9/R2K5 w - - 0 1");
        assert!(direct_chases(&p, Soldiers::Idle).is_empty());
        assert_eq!(squares(chased(&p, Soldiers::Idle, CHASES_THROUGH)), ["i9"]);
    }

    #[test]
    fn mate_threats_by_checks_are_found() {
        // Mate in one: b2b9 with the chariot a8 holding the eighth rank.
        assert!(mates_by_checks(
            &pos("4k4/R8/9/9/9/9/9/1R7/9/3K5 w - - 0 1"),
            1
        ));
        // Two chariots on the a- and b-files: a ladder of two checks mates...
        let p = pos("4k4/9/9/9/9/9/9/R8/1R7/3K5 w - - 0 1");
        assert!(!mates_by_checks(&p, 1));
        assert!(mates_by_checks(&p, 2));
        // ...and from lower down it takes three.
        let p = pos("4k4/9/9/9/9/9/9/9/R8/1R1K5 w - - 0 1");
        assert!(!mates_by_checks(&p, 2));
        assert!(mates_by_checks(&p, 3));
    }
}
