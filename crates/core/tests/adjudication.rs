//! Hand-built cases for every adjudication rule, from the CXA texts (第3-4条, 23.3,
//! 第24-29条). Each position is described in a comment; the moves are ICCS.

use xq_core::{Color, Ending, Game, GameConfig, Outcome, Position, Reason};

/// Plays `moves` (space separated) from `fen` under `config`.
fn game_with(config: GameConfig, fen: &str, moves: &str) -> Game {
    let mut game = Game::with_config(Position::from_fen(fen).expect("valid FEN"), config);
    for (i, m) in moves.split_whitespace().enumerate() {
        if let Err(e) = game.play_iccs(m) {
            panic!("move {} ({m}) of {moves:?}: {e}", i + 1);
        }
    }
    game
}

fn game(fen: &str, moves: &str) -> Game {
    game_with(GameConfig::CXA, fen, moves)
}

/// `moves` repeated `times` times.
fn cycle(moves: &str, times: usize) -> String {
    vec![moves; times].join(" ")
}

fn ended(ply: usize, winner: Option<Color>, reason: Reason) -> Option<Ending> {
    Some(Ending {
        ply,
        outcome: Outcome { winner, reason },
    })
}

// --- Checkmate and stalemate (3.1, 3.2, 4.1.1, 4.1.3) ----------------------------------

/// The chariot on a8 holds the eighth rank; the other one mates on b9.
const MATE_IN_ONE: &str = "4k4/R8/9/9/9/9/9/1R7/9/3K5 w - - 0 1";

#[test]
fn checkmate_loses() {
    let g = game(MATE_IN_ONE, "b2b9");
    assert_eq!(
        g.first_ending(),
        ended(1, Some(Color::Red), Reason::Checkmate)
    );
    assert_eq!(game(MATE_IN_ONE, "").first_ending(), None);
}

#[test]
fn stalemate_loses_for_the_side_that_cannot_move() {
    // Black to move, not in check, general e9 alone: e8 is attacked by the soldier on
    // e7, d9 by the chariot on d0 and f9 by the horse on g7. 困毙 loses (3.2, 4.1.3).
    let g = game("4k4/9/4P1N2/9/9/9/9/9/9/3RK4 b - - 0 1", "");
    assert_eq!(
        g.first_ending(),
        ended(0, Some(Color::Red), Reason::Stalemate)
    );
    // The same position reached by a move: the chariot drops from d1 to d0.
    let g = game("4k4/9/4P1N2/9/9/9/9/9/3R5/4K4 w - - 0 1", "d1d0");
    assert_eq!(g.adjudicate().map(|o| o.reason), Some(Reason::Stalemate));
    assert_eq!(g.adjudicate().and_then(|o| o.winner), Some(Color::Red));
}

// --- Repetition (第24-29条) --------------------------------------------------------------

/// Black general e9, red chariot a8, red general d0: the chariot checks on the ninth
/// and eighth ranks in turn and the general steps between e9 and e8.
const CHECKING_CHARIOT: &str = "4k4/R8/9/9/9/9/9/9/9/3K5 w - - 0 1";
const PERPETUAL_CHECK: &str = "a8a9 e9e8 a9a8 e8e9";

#[test]
fn one_sided_perpetual_check_loses_on_the_third_occurrence() {
    // The start position recurs at plies 4 and 8; at 8 it has occurred three times.
    let g = game(CHECKING_CHARIOT, &cycle(PERPETUAL_CHECK, 2));
    assert_eq!(
        g.first_ending(),
        ended(8, Some(Color::Black), Reason::PerpetualCheck)
    );
    // Only twice: not yet judged under the CXA count...
    let g = game(CHECKING_CHARIOT, PERPETUAL_CHECK);
    assert_eq!(g.first_ending(), None);
    assert_eq!(g.repetitions(), 1);
    // ...but search can judge the first repetition.
    let g = game_with(GameConfig::SEARCH, CHECKING_CHARIOT, PERPETUAL_CHECK);
    assert_eq!(
        g.first_ending(),
        ended(4, Some(Color::Black), Reason::PerpetualCheck)
    );
}

#[test]
fn checks_mixed_with_idle_moves_are_allowed() {
    // 数将一闲 is allowed (25.2): red alternates a check with a general step.
    // a8a9+ e9e8, d0d1 e8f8, a9a8+ f8f9, d1d0 f9e9: back to the start after 8 plies.
    let moves = "a8a9 e9e8 d0d1 e8f8 a9a8 f8f9 d1d0 f9e9";
    let g = game(CHECKING_CHARIOT, &cycle(moves, 2));
    let red_checks: Vec<bool> = (1..=8)
        .step_by(2)
        .map(|ply| g.position_at(ply).unwrap().is_check())
        .collect();
    assert_eq!(red_checks, [true, false, true, false]);
    assert_eq!(g.first_ending(), ended(16, None, Reason::RepetitionDraw));
}

#[test]
fn mutual_perpetual_check_draws() {
    let (fen, moves) = MUTUAL_CHECK;
    let g = game(fen, &cycle(moves, 2));
    for ply in 1..=8 {
        assert!(
            g.position_at(ply).unwrap().is_check(),
            "ply {ply} gives check"
        );
    }
    assert_eq!(g.first_ending(), ended(8, None, Reason::RepetitionDraw));
}

/// Red cannon d0 aims up the d-file at the black general d9; the black cannon b1 aims
/// along the first rank at the red general f1. The red horse shuttles d1-c3 (d1 is on
/// both lines) and the black horse d3-e1 (d3 on the d-file, e1 on the first rank).
/// Each horse move takes one screen off the enemy's line and adds one to its own
/// cannon's line, so every move both answers a check and gives one.
const MUTUAL_CHECK: (&str, &str) = (
    "3k5/9/9/9/9/9/3n5/9/1c1N1K3/3C5 w - - 0 1",
    "d1c3 d3e1 c3d1 e1d3",
);

/// Red horse e4, black chariot f7, red crossed soldier c6, generals d9 and e0. The
/// horse goes e4-d6 (attacking the chariot on f7), the chariot flees to f6, the horse
/// returns to e4 (attacking f6), the chariot returns to f7. The chariot on f6 sees the
/// horse on d6, but the soldier on c6 protects it, so black's moves are idle.
const HORSE_CHASES_CHARIOT: &str = "3k5/9/5r3/2P6/9/4N4/9/9/9/4K4 w - - 0 1";
const HORSE_CHASE: &str = "e4d6 f7f6 d6e4 f6f7";

#[test]
fn horse_perpetually_chasing_a_chariot_loses() {
    // Third occurrence (ply 8): the chaser must change (24.3), nothing ends yet.
    let g = game(HORSE_CHASES_CHARIOT, &cycle(HORSE_CHASE, 2));
    assert_eq!(g.first_ending(), None);
    // Fourth occurrence (ply 12): red loses.
    let g = game(HORSE_CHASES_CHARIOT, &cycle(HORSE_CHASE, 3));
    assert_eq!(
        g.first_ending(),
        ended(12, Some(Color::Black), Reason::PerpetualChase)
    );
    // Search judges it at the first repetition.
    let g = game_with(GameConfig::SEARCH, HORSE_CHASES_CHARIOT, HORSE_CHASE);
    assert_eq!(
        g.first_ending(),
        ended(4, Some(Color::Black), Reason::PerpetualChase)
    );
}

/// The same dance with a black cannon instead of the chariot: a horse and a cannon are
/// worth the same (25.3), so the chase needs the cannon to be unprotected.
const HORSE_AND_CANNON: &str = "3k5/9/5c3/9/9/4N4/9/9/9/4K4 w - - 0 1";
/// ... and with a black chariot on f9 that protects the cannon on f7 and f6.
const HORSE_AND_PROTECTED_CANNON: &str = "3k1r3/9/5c3/9/9/4N4/9/9/9/4K4 w - - 0 1";

#[test]
fn chasing_an_unprotected_cannon_loses() {
    let g = game(HORSE_AND_CANNON, &cycle(HORSE_CHASE, 3));
    assert_eq!(
        g.first_ending(),
        ended(12, Some(Color::Black), Reason::PerpetualChase)
    );
}

#[test]
fn chasing_a_protected_piece_is_allowed() {
    let g = game(HORSE_AND_PROTECTED_CANNON, &cycle(HORSE_CHASE, 2));
    assert_eq!(g.first_ending(), ended(8, None, Reason::RepetitionDraw));
}

#[test]
fn a_pinned_protector_does_not_protect() {
    // As above, but the red chariot i9 pins the black chariot f9 against the general d9
    // along the ninth rank: its recapture on f7 or f6 would be illegal (假根, 28.16), so
    // the cannon counts as unprotected and red loses.
    let g = game(
        "3k1r2R/9/5c3/9/9/4N4/9/9/9/4K4 w - - 0 1",
        &cycle(HORSE_CHASE, 3),
    );
    assert_eq!(
        g.first_ending(),
        ended(12, Some(Color::Black), Reason::PerpetualChase)
    );
}

#[test]
fn check_and_chase_in_turn_loses() {
    // 一将一捉 (25.2): the red chariot a5 attacks the unprotected black horse e5; it goes
    // to a8 with check, the general steps to e9, the chariot returns to a5 (a new attack
    // on e5), the general returns to e8. Black's moves are a reply to check and a general
    // step: allowed. Red loses on the fourth occurrence.
    let fen = "9/4k4/9/9/R3n4/9/9/9/9/3K5 w - - 0 1";
    let moves = "a5a8 e8e9 a8a5 e9e8";
    assert_eq!(game(fen, &cycle(moves, 2)).first_ending(), None);
    assert_eq!(
        game(fen, &cycle(moves, 3)).first_ending(),
        ended(12, Some(Color::Black), Reason::PerpetualChase)
    );
}

#[test]
fn perpetual_mate_threats_lose() {
    // 长杀 (25.2, 28.11): the red chariot a8 holds the eighth rank; the chariot b2 goes to
    // c2 threatening c2c9 mate, the black horse b5 blocks the c-file from c3, the chariot
    // returns to b2 threatening b2b9 mate, the horse blocks the b-file again from b5.
    // Every red move makes a new mate-in-one threat; black's parries are idle.
    let fen = "4k4/R8/9/9/1n7/9/9/1R7/9/5K3 w - - 0 1";
    let moves = "b2c2 b5c3 c2b2 c3b5";
    assert_eq!(game(fen, &cycle(moves, 2)).first_ending(), None);
    assert_eq!(
        game(fen, &cycle(moves, 3)).first_ending(),
        ended(12, Some(Color::Black), Reason::PerpetualMateThreat)
    );
}

#[test]
fn soldier_chasing_is_idle() {
    // Red crossed soldier d6, black cannon e7, generals d9 and f0. The soldier steps
    // d6-e6 (attacking e7), the cannon flees to d7, the soldier steps back to d6
    // (attacking d7), the cannon returns to e7. 27.2: a soldier's chase is idle.
    let g = game(
        "3k5/9/4c4/3P5/9/9/9/9/9/5K3 w - - 0 1",
        &cycle("d6e6 e7d7 e6d6 d7e7", 2),
    );
    assert_eq!(g.first_ending(), ended(8, None, Reason::RepetitionDraw));
}

#[test]
fn general_chasing_is_idle() {
    // Red general e1, black cannon d2, black general f9. The general steps e1-d1
    // (attacking d2), the cannon flees to e2, the general returns to e1 (attacking e2),
    // the cannon returns to d2. 27.1: the general chasing by itself is idle.
    let g = game(
        "5k3/9/9/9/9/9/9/3c5/4K4/9 w - - 0 1",
        &cycle("e1d1 d2e2 d1e1 e2d2", 2),
    );
    assert_eq!(g.first_ending(), ended(8, None, Reason::RepetitionDraw));
}

#[test]
fn idle_repetition_draws() {
    let moves = "h0g2 h9g7 g2h0 g7h9";
    let g = game(xq_core::START_FEN, &cycle(moves, 2));
    assert_eq!(g.first_ending(), ended(8, None, Reason::RepetitionDraw));
    assert_eq!(game(xq_core::START_FEN, moves).first_ending(), None);
}

// --- The natural move limit (4.2.4, 23.3) -----------------------------------------------

#[test]
fn sixty_moves_without_capture_draw() {
    // The FEN's half-move clock says 118 plies without capture; two quiet plies reach
    // the 120-ply limit.
    let fen = "4k4/R8/9/9/9/9/9/1R7/9/3K5 w - - 118 1";
    let g = game(fen, "a8a7");
    assert_eq!(g.first_ending(), None);
    assert_eq!(g.move_limit_count(), 119);
    let g = game(fen, "a8a7 e9f9");
    assert_eq!(g.first_ending(), ended(2, None, Reason::MoveLimit));
}

#[test]
fn a_capture_resets_the_move_limit() {
    // Red chariot a8 takes the black horse on a9 at ply 119.
    let fen = "n3k4/R8/9/9/9/9/9/1R7/9/3K5 w - - 118 1";
    let g = game(fen, "a8a9 e9e8 a9a7 e8e9");
    assert_eq!(g.move_limit_count(), 3);
    assert_eq!(g.first_ending(), None);
}

#[test]
fn the_limit_is_configurable() {
    let config = GameConfig {
        move_limit: 4,
        ..GameConfig::CXA
    };
    let g = game_with(config, xq_core::START_FEN, "h2e2 h9g7 h0g2 i9h9");
    assert_eq!(g.first_ending(), ended(4, None, Reason::MoveLimit));
}

#[test]
fn a_mate_on_the_last_move_of_the_limit_wins() {
    let fen = "4k4/R8/9/9/9/9/9/1R7/9/3K5 w - - 119 1";
    assert_eq!(
        game(fen, "b2b9").first_ending(),
        ended(1, Some(Color::Red), Reason::Checkmate)
    );
    // A quiet move instead reaches the limit.
    assert_eq!(
        game(fen, "b2b8").first_ending(),
        ended(1, None, Reason::MoveLimit)
    );
}

/// Red chariot h3 and horse g5 against the lone black general f9: twelve checks,
/// each answered by a general step, no position repeated.
const TWELVE_CHECKS: &str = "5k3/9/9/9/6N2/7R1/9/9/4K4/9 w - - 96 1";
const TWELVE_CHECK_MOVES: &str = "h4h9 f9f8 g5e6 f8f7 h9f9 f7e7 f9f7 e7e8 f7f8 e8e7 f8e8 e7f7 \
     e8e7 f7f8 e7a7 f8e8 a7a8 e8e9 a8e8 e9d9 e8d8 d9e9 d8d9 e9e8";

#[test]
fn checks_beyond_ten_do_not_count() {
    let g = game(TWELVE_CHECKS, TWELVE_CHECK_MOVES);
    for ply in (1..=24).step_by(2) {
        assert!(
            g.position_at(ply).unwrap().is_check(),
            "ply {ply} gives check"
        );
    }
    // 96 + 10 checks + 10 replies; the 11th and 12th checks and replies don't count.
    assert_eq!(g.move_limit_count(), 116);
    assert_eq!(g.first_ending(), None);
    // Counting every check, the same game reaches the limit at its last ply.
    let all_checks = GameConfig {
        counted_checks: u32::MAX,
        ..GameConfig::CXA
    };
    let g = game_with(all_checks, TWELVE_CHECKS, TWELVE_CHECK_MOVES);
    assert_eq!(g.first_ending(), ended(24, None, Reason::MoveLimit));
}

// --- Insufficient material (4.2.1) -------------------------------------------------------

#[test]
fn bare_generals_and_defenders_draw() {
    let g = game("3k5/4a4/9/9/9/9/9/4B4/9/4K4 w - - 0 1", "");
    assert_eq!(
        g.first_ending(),
        ended(0, None, Reason::InsufficientMaterial)
    );
}

#[test]
fn capturing_the_last_attacker_draws() {
    // The red advisor on d0 takes the last black soldier, on e1.
    let fen = "4k4/9/9/9/9/9/9/9/4p4/3A1K3 w - - 0 1";
    assert_eq!(game(fen, "").first_ending(), None);
    assert_eq!(
        game(fen, "d0e1").first_ending(),
        ended(1, None, Reason::InsufficientMaterial)
    );
}

// --- Games continued after an ending -----------------------------------------------------

#[test]
fn the_first_ending_is_kept_when_play_goes_on() {
    let g = game(
        xq_core::START_FEN,
        &format!("{} h2e2", cycle("h0g2 h9g7 g2h0 g7h9", 2)),
    );
    assert_eq!(g.adjudicate(), None);
    assert_eq!(g.first_ending(), ended(8, None, Reason::RepetitionDraw));
    assert_eq!(g.outcome(), Some(Outcome::draw(Reason::RepetitionDraw)));
}

// --- Consistency over random games --------------------------------------------------------

/// Seeded random games under the search rules (every repetition judged at once, so
/// cycles and their analysis are frequent): the game stops at the first ending found by
/// `adjudicate` after each move, which must be the ending `first_ending` finds, and
/// taking every move back must restore every earlier position.
#[test]
fn random_games_end_where_first_ending_says() {
    use rand::{SeedableRng, seq::IndexedRandom};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    let mut reasons = std::collections::BTreeSet::new();
    for _ in 0..1000 {
        let mut g = Game::with_config(Position::startpos(), GameConfig::SEARCH);
        let mut positions = vec![g.position().clone()];
        let outcome = loop {
            let moves = g.position().legal_moves();
            let m = *moves.choose(&mut rng).expect("the game has not ended");
            g.play(m).expect("a generated move is legal");
            positions.push(g.position().clone());
            if let Some(o) = g.adjudicate() {
                break o;
            }
        };
        reasons.insert(outcome.reason.name());
        let ply = g.ply();
        assert_eq!(g.first_ending(), Some(Ending { ply, outcome }));
        while g.undo().is_some() {
            assert_eq!(g.position(), &positions[g.ply()]);
        }
    }
    // The sample reaches the common endings, repetition verdicts included.
    for r in [
        "checkmate",
        "repetition_draw",
        "perpetual_check",
        "perpetual_chase",
    ] {
        assert!(
            reasons.contains(r),
            "no random game ended by {r}: {reasons:?}"
        );
    }
}
