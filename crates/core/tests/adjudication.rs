//! Hand-built cases for every adjudication rule, from the CXA texts (第3-4条, 23.3,
//! 第24-29条). Each position is described in a comment; the moves are ICCS.

use xq_core::{Color, Ending, Game, GameConfig, Move, Outcome, Piece, Position, Reason, Square};

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

/// The same position with the colours swapped: the board turned round, red pieces
/// black and black red, the other side to move.
fn flip_fen(fen: &str) -> String {
    let setup = Position::from_fen(fen).expect("valid FEN").to_setup();
    let mut flipped = setup.clone();
    for sq in Square::all() {
        flipped.board[sq.flip().index()] = setup.board[sq.index()].map(|p| Piece {
            color: p.color.other(),
            role: p.role,
        });
    }
    flipped.turn = setup.turn.other();
    Position::from_setup(flipped)
        .expect("a flipped legal position is legal")
        .fen()
}

fn flip_moves(moves: &str) -> String {
    moves
        .split_whitespace()
        .map(|m| m.parse::<Move>().expect("ICCS").flip().to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A repetition case: `rounds` times the cycle `moves` from `fen`, the expected first
/// ending (ply, the *loser* or `None` for a draw, reason) and why, with the articles.
struct Cycle {
    fen: &'static str,
    moves: &'static str,
    rounds: usize,
    ending: Option<(usize, Option<Color>, Reason)>,
    why: &'static str,
}

/// Every repetition rule, on hand-built positions. Each case is also checked with the
/// colours swapped and with the cycle entered one ply later (the other side moving
/// first into it): the verdict must not change.
const CYCLES: &[Cycle] = &[
    Cycle {
        fen: CHECKING_CHARIOT,
        moves: PERPETUAL_CHECK,
        rounds: 2,
        ending: Some((8, Some(Color::Red), Reason::PerpetualCheck)),
        why: "the chariot a8 checks with every move: 长将 loses at once on the third \
              occurrence (24.1, 26.1)",
    },
    Cycle {
        fen: CHECKING_CHARIOT,
        moves: PERPETUAL_CHECK,
        rounds: 1,
        ending: None,
        why: "the second occurrence is not judged (循环反复三次, 24)",
    },
    Cycle {
        fen: CHECKING_CHARIOT,
        moves: "a8a9 e9e8 d0d1 e8f8 a9a8 f8f9 d1d0 f9e9",
        rounds: 2,
        ending: Some((16, None, Reason::RepetitionDraw)),
        why: "数将一闲 is allowed (25.2): a check, a general step, a check, a general step",
    },
    Cycle {
        fen: MUTUAL_CHECK.0,
        moves: MUTUAL_CHECK.1,
        rounds: 2,
        ending: Some((8, None, Reason::RepetitionDraw)),
        why: "both sides check with every move: 长将 against 长将 is a draw (26.1: only a \
              one-sided 长将 loses)",
    },
    Cycle {
        fen: HORSE_CHASES_CHARIOT,
        moves: HORSE_CHASE,
        rounds: 2,
        ending: None,
        why: "长捉 against idle moves: on the third occurrence the chaser must change (24.3)",
    },
    Cycle {
        fen: HORSE_CHASES_CHARIOT,
        moves: HORSE_CHASE,
        rounds: 3,
        ending: Some((12, Some(Color::Red), Reason::PerpetualChase)),
        why: "...and loses when the cycle comes round once more (24.3, 26.4); the chariot's \
              flight is idle: the horse on d6 it sees is protected by the soldier c6",
    },
    Cycle {
        fen: HORSE_AND_CANNON,
        moves: HORSE_CHASE,
        rounds: 3,
        ending: Some((12, Some(Color::Red), Reason::PerpetualChase)),
        why: "horse on an unprotected cannon: equal value, but unprotected (29.3)",
    },
    Cycle {
        fen: HORSE_AND_PROTECTED_CANNON,
        moves: HORSE_CHASE,
        rounds: 2,
        ending: Some((8, None, Reason::RepetitionDraw)),
        why: "the chariot f9 protects the cannon: horse for cannon wins nothing (28.16, 25.3); \
              both sides idle (26.2)",
    },
    Cycle {
        fen: "3k1r2R/9/5c3/9/9/4N4/9/9/9/4K4 w - - 0 1",
        moves: HORSE_CHASE,
        rounds: 3,
        ending: Some((12, Some(Color::Red), Reason::PerpetualChase)),
        why: "the protector f9 is pinned against the general d9 by the chariot i9: 假根 \
              (28.16), the cannon counts as unprotected",
    },
    Cycle {
        fen: "9/4k4/9/9/R3n4/9/9/9/9/3K5 w - - 0 1",
        moves: "a5a8 e8e9 a8a5 e9e8",
        rounds: 3,
        ending: Some((12, Some(Color::Red), Reason::PerpetualChase)),
        why: "一将一捉 (25.2): a check, then a new attack on the unprotected horse e5; the \
              general's steps are idle",
    },
    Cycle {
        fen: "4k4/R8/9/9/1n7/9/9/1R7/9/5K3 w - - 0 1",
        moves: "b2c2 b5c3 c2b2 c3b5",
        rounds: 3,
        ending: Some((12, Some(Color::Red), Reason::PerpetualMateThreat)),
        why: "长杀 (25.2, 28.11): each chariot move threatens mate on the b- or c-file; the \
              horse's parries are idle",
    },
    Cycle {
        fen: "3k5/9/4c4/3P5/9/9/9/9/9/5K3 w - - 0 1",
        moves: "d6e6 e7d7 e6d6 d7e7",
        rounds: 2,
        ending: Some((8, None, Reason::RepetitionDraw)),
        why: "a soldier chasing a cannon by itself is idle (27.2); the cannon's flight too",
    },
    Cycle {
        fen: "5k3/9/9/9/9/9/9/3c5/4K4/9 w - - 0 1",
        moves: "e1d1 d2e2 d1e1 e2d2",
        rounds: 2,
        ending: Some((8, None, Reason::RepetitionDraw)),
        why: "the general chasing a cannon by itself is idle (27.1)",
    },
    Cycle {
        fen: xq_core::START_FEN,
        moves: "h0g2 h9g7 g2h0 g7h9",
        rounds: 2,
        ending: Some((8, None, Reason::RepetitionDraw)),
        why: "idle moves on both sides: 不变作和 (26.2)",
    },
    Cycle {
        fen: "4k4/9/7c1/9/6b2/9/9/7R1/9/3K5 w - - 0 1",
        moves: "h2g2 e9e8 g2h2 e8e9",
        rounds: 3,
        ending: Some((12, Some(Color::Red), Reason::PerpetualChase)),
        why: "长捉 of several pieces (28.12 追捉一子或数子): the chariot chases the unprotected \
              elephant g5 from g2 and the unprotected cannon h7 from h2, a new chase with \
              every move (29.2), against idle general steps",
    },
    Cycle {
        fen: "4k4/9/7c1/3n5/6b2/9/3p5/1N5R1/9/3K5 w - - 0 1",
        moves: "h2g2 e9e8 b2c4 e8e9 g2h2 e9e8 c4b2 e8e9",
        rounds: 2,
        ending: None,
        why: "two chasers in turn: the third occurrence orders the change (24.3)",
    },
    Cycle {
        fen: "4k4/9/7c1/3n5/6b2/9/3p5/1N5R1/9/3K5 w - - 0 1",
        moves: "h2g2 e9e8 b2c4 e8e9 g2h2 e9e8 c4b2 e8e9",
        rounds: 3,
        ending: Some((24, Some(Color::Red), Reason::PerpetualChase)),
        why: "two chasers in turn (28.12): the chariot chases g5 and h7, the horse the \
              unprotected horse d6 from c4 and the crossed soldier d3 (a 子力, 25.3) from \
              b2; every red move is a new chase",
    },
    Cycle {
        fen: "3k5/9/4c4/3P5/3PP4/9/9/3NN4/9/5K3 w - - 0 1",
        moves: "d6e6 e7d7 e6d6 d7e7",
        rounds: 2,
        ending: Some((8, None, Reason::RepetitionDraw)),
        why: "相互长打 (27.2, 细则11): the cannon attacks an unprotected horse with every \
              move (over the soldier d5 or e5), the soldier attacks the cannon with every \
              move; in mutual perpetual attacks the soldier's attacks count as 捉, both \
              sides are forbidden: a draw (26.3). Without 27.2's second sentence the cannon \
              would lose",
    },
    Cycle {
        fen: REPLY_TO_CHECK_CHASES,
        moves: REPLY_TO_CHECK_CYCLE,
        rounds: 3,
        ending: Some((12, Some(Color::Red), Reason::PerpetualChase)),
        why: "a reply to check that creates a chase is a chase (29.2, 28.16, 细则2): the \
              horse c2 answers the chariot's check on e3 and opens the c-file, so the horse \
              c6 (attacked by the horse d4, protected by the horse a7: an even trade) is \
              won by the exchange; back on c2 it attacks the unprotected cannon a3. 长捉 \
              against 一将一闲",
    },
    Cycle {
        fen: REPLY_TO_CHECK_CONTROL,
        moves: REPLY_TO_CHECK_CYCLE,
        rounds: 3,
        ending: Some((12, Some(Color::Red), Reason::PerpetualChase)),
        why: "the same cycle with the general on d0, where the chariot's move to e7 gives no \
              check: 长捉 against idle moves",
    },
];

/// Red general e0, chariot c1, horses c2 and d4; black chariot h7, horses a7 and c6,
/// cannon a3, advisor e8, general f9; Black to move. The chariot checks from e7, the
/// horse c2 interposes on e3 (leaving the c-file open to the chariot c1), the chariot
/// goes back to h7, the horse back to c2 (attacking the cannon a3).
const REPLY_TO_CHECK_CHASES: &str = "5k3/4a4/n6r1/2n6/9/3N5/c8/2N6/2R6/4K4 b - - 0 1";
const REPLY_TO_CHECK_CYCLE: &str = "h7e7 c2e3 e7h7 e3c2";
/// ...and with the red general on d0, out of the chariot's line.
const REPLY_TO_CHECK_CONTROL: &str = "5k3/4a4/n6r1/2n6/9/3N5/c8/2N6/2R6/3K5 b - - 0 1";

/// Plays a [`Cycle`] and checks its first ending.
fn check_cycle(fen: &str, moves: &str, c: &Cycle, variant: &str) {
    let g = game(fen, &cycle(moves, c.rounds));
    let want = c.ending.map(|(ply, loser, reason)| Ending {
        ply,
        outcome: Outcome {
            winner: loser.map(Color::other),
            reason,
        },
    });
    assert_eq!(g.first_ending(), want, "{variant} {fen} {moves}: {}", c.why);
}

#[test]
fn repetition_verdicts_for_both_colours_and_either_side_first() {
    for c in CYCLES {
        for flipped in [false, true] {
            let (fen, moves) = if flipped {
                (flip_fen(c.fen), flip_moves(c.moves))
            } else {
                (c.fen.to_owned(), c.moves.to_owned())
            };
            let flip = |o: Option<(usize, Option<Color>, Reason)>| {
                o.map(|(p, l, r)| (p, if flipped { l.map(Color::other) } else { l }, r))
            };
            let case = Cycle {
                ending: flip(c.ending),
                ..*c
            };
            check_cycle(
                &fen,
                &moves,
                &case,
                if flipped { "flipped" } else { "as given" },
            );
            // Enter the cycle one ply later: start after its first move and play it
            // rotated, so that the other side makes the first move of the cycle.
            let mut start = game(&fen, "");
            let mut ms = moves.split_whitespace();
            let first = ms.next().expect("a cycle has moves");
            start.play_iccs(first).expect("legal");
            let rotated: Vec<&str> = ms.chain([first]).collect();
            check_cycle(
                &start.position().fen(),
                &rotated.join(" "),
                &case,
                "other side first",
            );
        }
    }
}

#[test]
fn search_config_judges_at_the_second_occurrence() {
    let g = game_with(GameConfig::SEARCH, CHECKING_CHARIOT, PERPETUAL_CHECK);
    assert_eq!(
        g.first_ending(),
        ended(4, Some(Color::Black), Reason::PerpetualCheck)
    );
    assert_eq!(game(CHECKING_CHARIOT, PERPETUAL_CHECK).repetitions(), 1);
    let g = game_with(GameConfig::SEARCH, HORSE_CHASES_CHARIOT, HORSE_CHASE);
    assert_eq!(
        g.first_ending(),
        ended(4, Some(Color::Black), Reason::PerpetualChase)
    );
}

/// Black general e9, red chariot a8, red general d0: the chariot checks on the ninth
/// and eighth ranks in turn and the general steps between e9 and e8.
const CHECKING_CHARIOT: &str = "4k4/R8/9/9/9/9/9/9/9/3K5 w - - 0 1";
const PERPETUAL_CHECK: &str = "a8a9 e9e8 a9a8 e8e9";

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
/// returns to e4 (attacking f6), the chariot returns to f7.
const HORSE_CHASES_CHARIOT: &str = "3k5/9/5r3/2P6/9/4N4/9/9/9/4K4 w - - 0 1";
const HORSE_CHASE: &str = "e4d6 f7f6 d6e4 f6f7";

/// The same dance with a black cannon instead of the chariot.
const HORSE_AND_CANNON: &str = "3k5/9/5c3/9/9/4N4/9/9/9/4K4 w - - 0 1";
/// ... and with a black chariot on f9 that protects the cannon on f7 and f6.
const HORSE_AND_PROTECTED_CANNON: &str = "3k1r3/9/5c3/9/9/4N4/9/9/9/4K4 w - - 0 1";

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
