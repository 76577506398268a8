//! Properties of the rules core over positions from seeded random games.
//!
//! The centre piece is a deliberately simple reference move generator written here: a
//! mailbox board, no tables, every from-to pair tried against the piece's movement rule
//! (第2条), and the own general's safety checked by brute force after the move (every
//! enemy piece tried as an attacker, plus the facing-generals rule, 4.1.2). It shares
//! no code with xq-core's bitboard generator beyond reading the board, so agreement is
//! evidence that both are right.

use std::collections::BTreeSet;

use rand::{Rng, SeedableRng, seq::IndexedRandom};
use rand_chacha::ChaCha8Rng;
use xq_core::{Color, Move, Piece, Position, Role, Square};

/// Positions visited by the random games.
const POSITIONS: usize = 40_000;
/// Every this many positions, `is_legal` is asked about all 90 × 90 from-to pairs.
const FULL_SWEEP_EVERY: usize = 200;
const MAX_PLIES: usize = 300;
const SEED: u64 = 0x9809_E271_E500_0001;

/// Positions of seeded random games from the starting position, with the move that
/// led to each (`None` for a game's first position).
fn random_games(count: usize, seed: u64) -> Vec<Vec<Position>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut games = Vec::new();
    let mut total = 0;
    while total < count {
        let mut pos = Position::startpos();
        let mut game = vec![pos.clone()];
        for _ in 0..rng.random_range(1..=MAX_PLIES) {
            let moves = pos.legal_moves();
            let Some(&m) = moves.choose(&mut rng) else {
                break;
            };
            pos.play_unchecked(m);
            game.push(pos.clone());
        }
        total += game.len();
        games.push(game);
    }
    games
}

// --- The reference generator ------------------------------------------------------

type Board = [Option<Piece>; 90];

fn mailbox(pos: &Position) -> Board {
    let mut b = [None; 90];
    for sq in Square::all() {
        b[sq.index()] = pos.piece_at(sq);
    }
    b
}

fn coords(i: usize) -> (i32, i32) {
    ((i % 9) as i32, (i / 9) as i32)
}

fn index(f: i32, r: i32) -> usize {
    (r * 9 + f) as usize
}

fn in_palace(c: Color, f: i32, r: i32) -> bool {
    (3..=5).contains(&f)
        && match c {
            Color::Red => (0..=2).contains(&r),
            Color::Black => (7..=9).contains(&r),
        }
}

fn own_side(c: Color, r: i32) -> bool {
    match c {
        Color::Red => r <= 4,
        Color::Black => r >= 5,
    }
}

/// Pieces strictly between two points on one rank or file.
fn between(b: &Board, (f1, r1): (i32, i32), (f2, r2): (i32, i32)) -> usize {
    let (df, dr) = ((f2 - f1).signum(), (r2 - r1).signum());
    let (mut f, mut r) = (f1 + df, r1 + dr);
    let mut n = 0;
    while (f, r) != (f2, r2) {
        n += usize::from(b[index(f, r)].is_some());
        f += df;
        r += dr;
    }
    n
}

/// Whether the piece on `from` may go to `to` by its movement rule alone (the target
/// is empty or holds an enemy piece; the own general's safety is not considered).
fn reaches(b: &Board, from: usize, to: usize) -> bool {
    let Some(p) = b[from] else { return false };
    if from == to || b[to].is_some_and(|q| q.color == p.color) {
        return false;
    }
    let (f1, r1) = coords(from);
    let (f2, r2) = coords(to);
    let (df, dr) = (f2 - f1, r2 - r1);
    let capture = b[to].is_some();
    match p.role {
        Role::General => df.abs() + dr.abs() == 1 && in_palace(p.color, f2, r2),
        Role::Advisor => df.abs() == 1 && dr.abs() == 1 && in_palace(p.color, f2, r2),
        Role::Elephant => {
            df.abs() == 2
                && dr.abs() == 2
                && own_side(p.color, r2)
                && b[index(f1 + df / 2, r1 + dr / 2)].is_none()
        }
        Role::Horse => {
            // The leg is the orthogonal neighbour in the direction of the long step.
            let leg = match (df.abs(), dr.abs()) {
                (1, 2) => (f1, r1 + dr / 2),
                (2, 1) => (f1 + df / 2, r1),
                _ => return false,
            };
            b[index(leg.0, leg.1)].is_none()
        }
        Role::Chariot => (df == 0 || dr == 0) && between(b, (f1, r1), (f2, r2)) == 0,
        Role::Cannon => {
            (df == 0 || dr == 0) && between(b, (f1, r1), (f2, r2)) == if capture { 1 } else { 0 }
        }
        Role::Soldier => {
            let forward = if p.color == Color::Red { 1 } else { -1 };
            let crossed = !own_side(p.color, r1);
            (df == 0 && dr == forward) || (crossed && dr == 0 && df.abs() == 1)
        }
    }
}

/// Whether `us`'s general is attacked by any enemy piece or faces the enemy general.
fn general_in_danger(b: &Board, us: Color) -> bool {
    let find = |c: Color| {
        (0..90)
            .find(|&i| b[i] == Some(Piece::new(c, Role::General)))
            .expect("a general")
    };
    let (ours, theirs) = (find(us), find(us.other()));
    let facing =
        coords(ours).0 == coords(theirs).0 && between(b, coords(ours), coords(theirs)) == 0;
    facing || (0..90).any(|i| b[i].is_some_and(|p| p.color != us) && reaches(b, i, ours))
}

/// The enemy pieces that attack `us`'s general.
fn reference_checkers(b: &Board, us: Color) -> BTreeSet<usize> {
    let g = (0..90)
        .find(|&i| b[i] == Some(Piece::new(us, Role::General)))
        .expect("a general");
    (0..90)
        .filter(|&i| b[i].is_some_and(|p| p.color != us) && reaches(b, i, g))
        .collect()
}

/// Every legal move, by trying every from-to pair.
fn reference_legal_moves(pos: &Position) -> BTreeSet<Move> {
    let b = mailbox(pos);
    let us = pos.turn();
    let mut legal = BTreeSet::new();
    for from in 0..90 {
        if b[from].is_none_or(|p| p.color != us) {
            continue;
        }
        for to in 0..90 {
            if reaches(&b, from, to) {
                let mut after = b;
                after[to] = after[from].take();
                if !general_in_danger(&after, us) {
                    legal.insert(Move::new(Square::new(from as u32), Square::new(to as u32)));
                }
            }
        }
    }
    legal
}

// --- Properties -----------------------------------------------------------------------

#[test]
fn generated_moves_are_exactly_the_reference_legal_moves() {
    let mut checked = 0;
    let mut in_check = 0;
    for game in random_games(POSITIONS, SEED) {
        for pos in &game {
            let ours: BTreeSet<Move> = pos.legal_moves().into_iter().collect();
            assert_eq!(
                ours.len(),
                pos.legal_moves().len(),
                "{pos:?}: duplicate moves"
            );
            let reference = reference_legal_moves(pos);
            let extra: Vec<_> = ours.difference(&reference).collect();
            let missing: Vec<_> = reference.difference(&ours).collect();
            assert!(
                extra.is_empty() && missing.is_empty(),
                "{}: illegal moves generated {extra:?}, legal moves missed {missing:?}",
                pos.fen()
            );
            assert_eq!(pos.count_legal(), ours.len(), "{}: count_legal", pos.fen());
            assert_eq!(
                pos.has_legal_move(),
                !ours.is_empty(),
                "{}: has_legal_move",
                pos.fen()
            );
            checked += 1;
            in_check += usize::from(pos.is_check());
        }
    }
    assert!(checked >= POSITIONS);
    assert!(in_check >= 100, "only {in_check} positions in check");
}

#[test]
fn check_and_checkers_match_brute_force_attacks() {
    for game in random_games(POSITIONS / 4, SEED ^ 2) {
        for pos in &game {
            let b = mailbox(pos);
            let reference = reference_checkers(&b, pos.turn());
            let ours: BTreeSet<usize> = pos.checkers().map(Square::index).collect();
            assert_eq!(ours, reference, "{}: checkers", pos.fen());
            assert_eq!(
                pos.is_check(),
                !reference.is_empty(),
                "{}: is_check",
                pos.fen()
            );
        }
    }
}

#[test]
fn is_legal_agrees_with_legal_moves() {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ 3);
    let mut n = 0;
    for game in random_games(POSITIONS / 4, SEED ^ 3) {
        for pos in &game {
            let legal: BTreeSet<Move> = pos.legal_moves().into_iter().collect();
            for &m in &legal {
                assert!(
                    pos.is_legal(m),
                    "{}: {m} generated but not is_legal",
                    pos.fen()
                );
            }
            // Moves that obey the piece's rule but expose the general, and random pairs.
            let b = mailbox(pos);
            let mut candidates: Vec<Move> = (0..90)
                .flat_map(|f| (0..90).map(move |t| (f, t)))
                .filter(|&(f, t)| b[f].is_some_and(|p| p.color == pos.turn()) && reaches(&b, f, t))
                .map(|(f, t)| Move::new(Square::new(f as u32), Square::new(t as u32)))
                .collect();
            candidates.extend((0..50).map(|_| {
                Move::new(
                    Square::new(rng.random_range(0..90)),
                    Square::new(rng.random_range(0..90)),
                )
            }));
            if n % FULL_SWEEP_EVERY == 0 {
                candidates.extend((0..90u32).flat_map(|f| {
                    (0..90u32).map(move |t| Move::new(Square::new(f), Square::new(t)))
                }));
            }
            for m in candidates {
                assert_eq!(
                    pos.is_legal(m),
                    legal.contains(&m),
                    "{}: is_legal({m})",
                    pos.fen()
                );
                let mut played = pos.clone();
                assert_eq!(
                    played.play(m).is_ok(),
                    legal.contains(&m),
                    "{}: play({m})",
                    pos.fen()
                );
                if !legal.contains(&m) {
                    assert_eq!(
                        &played,
                        pos,
                        "{}: a refused move changed the position",
                        pos.fen()
                    );
                }
            }
            n += 1;
        }
    }
}

#[test]
fn incremental_hash_equals_recomputed_hash() {
    for game in random_games(POSITIONS, SEED ^ 4) {
        for pos in &game {
            assert_eq!(pos.hash(), pos.compute_hash(), "{}", pos.fen());
        }
    }
}

#[test]
fn hash_ignores_counters_and_separates_side_to_move() {
    for game in random_games(POSITIONS / 4, SEED ^ 5) {
        for pos in &game {
            let fen = pos.fen();
            let fields: Vec<&str> = fen.split(' ').collect();
            let other_counters = format!("{} {} - - 7 99", fields[0], fields[1]);
            let same = Position::from_fen(&other_counters).expect("same board, other counters");
            assert_eq!(same.hash(), pos.hash(), "{fen}: counters changed the hash");
            let flipped = format!(
                "{} {} - - 0 1",
                fields[0],
                if fields[1] == "w" { "b" } else { "w" }
            );
            // The flipped side is only a legal position if the side now not to move is
            // not in check.
            if let Ok(other) = Position::from_fen(&flipped) {
                assert_ne!(
                    other.hash(),
                    pos.hash(),
                    "{fen}: the side to move is not hashed"
                );
            }
        }
    }
}

#[test]
fn fen_round_trips() {
    for game in random_games(POSITIONS, SEED ^ 6) {
        for pos in &game {
            let fen = pos.fen();
            let parsed = Position::from_fen(&fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            assert_eq!(&parsed, pos, "{fen}: parsed position differs");
            assert_eq!(parsed.fen(), fen, "FEN text differs after a round trip");
            assert_eq!(
                parsed.hash(),
                pos.hash(),
                "{fen}: hash differs after a round trip"
            );
            assert_eq!(
                Position::from_setup(pos.to_setup()).as_ref(),
                Ok(pos),
                "{fen}: setup round trip"
            );
        }
    }
}

#[test]
fn reference_generator_knows_the_starting_moves() {
    // Guards the guard: the reference generator must itself be right where the answer
    // is known (44 moves, 2 of them captures), or the comparisons above prove nothing.
    let pos = Position::startpos();
    let moves = reference_legal_moves(&pos);
    assert_eq!(moves.len(), 44);
    assert_eq!(
        moves
            .iter()
            .filter(|m| pos.piece_at(m.to()).is_some())
            .count(),
        2
    );
    assert!(moves.contains(&Move::from_iccs("h2e2").unwrap()));
    assert!(
        moves.contains(&Move::from_iccs("h2h9").unwrap()),
        "cannon capture over a screen"
    );
    assert!(
        !moves.contains(&Move::from_iccs("h2h7").unwrap()),
        "cannon may not capture without a screen"
    );
    let blocked = Position::from_fen(
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/N8/R1BAKABNR w - - 0 1",
    )
    .expect("a legal position");
    assert!(
        !reference_legal_moves(&blocked).contains(&Move::from_iccs("a0a2").unwrap()),
        "chariot through a piece"
    );
}

#[test]
fn hand_built_pins_and_screens_match_the_reference() {
    // (FEN, a point whose piece must have no legal move, or "" when none is pinned)
    let cases = [
        // A horse leg: the red horse on d1 blocks the black horse on c1 from e0.
        ("3k5/9/9/9/9/9/9/9/2nN5/4K4 w - - 0 1", "d1"),
        // A chariot on the rank: the red horse on c1 shields the general on e1.
        ("3k5/9/9/9/9/9/9/9/r1N1K4/9 w - - 0 1", "c1"),
        // Flying general: the red horse on e4 is all that separates the generals.
        ("4k4/9/9/9/9/4N4/9/9/9/4K4 w - - 0 1", "e4"),
        // Two cannon screens on the e-file: neither screen may leave it.
        ("3k5/9/9/4c4/9/9/4R4/9/4A4/4K4 w - - 0 1", "e1"),
        // No screen yet: a red piece may not step between cannon and general.
        ("3k5/9/9/9/4c4/9/9/R8/9/4K4 w - - 0 1", ""),
        // In check from a cannon over a black horse screen.
        ("3k5/9/4c4/9/9/4n4/9/R8/9/3AK4 w - - 0 1", ""),
    ];
    for (fen, pinned) in cases {
        let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        let ours: BTreeSet<Move> = pos.legal_moves().into_iter().collect();
        assert_eq!(ours, reference_legal_moves(&pos), "{fen}");
        assert_eq!(pos.count_legal(), ours.len(), "{fen}: count_legal");
        if !pinned.is_empty() {
            let sq: Square = pinned.parse().expect("a square");
            assert!(pos.piece_at(sq).is_some(), "{fen}: nothing on {sq}");
            assert!(
                ours.iter().all(|m| m.from() != sq),
                "{fen}: the piece on {sq} is pinned"
            );
        }
    }
    // Stepping between the lone cannon and the general would make a screen.
    let pos = Position::from_fen("3k5/9/9/9/4c4/9/9/R8/9/4K4 w - - 0 1").expect("legal");
    assert!(!pos.is_legal(Move::from_iccs("a2e2").unwrap()));
    assert!(pos.is_legal(Move::from_iccs("a2d2").unwrap()));
}
