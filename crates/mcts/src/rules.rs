//! The search's view of the rules: every node the search reaches is judged by the rules
//! core's [`Game::adjudicate`] (mate, stalemate, the CXA repetition verdicts, the
//! move limit, insufficient material), never by the network.
//!
//! The search keeps its own [`Game`], configured to judge every repetition at its
//! [`SearchParams::repetition_count`](crate::SearchParams::repetition_count)-th
//! occurrence (2 by default, as lc0 scores two-fold repetitions in the tree): once a
//! cycle has been walked, walking it again teaches the search nothing, and the verdict
//! of the cycle is the referee's own (`xq_core::game::cycle`). The referee's extra round
//! for a forbidden side (24.3, the fourth occurrence) is not waited for in the tree:
//! the forbidden side must change there anyway, so its verdict is scored at once,
//! like a draw or a perpetual check.

use xq_core::{Game, GameConfig, Position, game::has_mating_material};

/// The rules settings of the search: `base` (move limit, counted checks) with every
/// repetition verdict, forbidden sides included, judged at the `repetition_count`-th
/// occurrence.
fn search_config(base: GameConfig, repetition_count: u32) -> GameConfig {
    GameConfig {
        repetition_count,
        forbidden_repetition_count: repetition_count,
        ..base
    }
}

/// A fresh line for the search that replays `game` under the search's rules settings.
pub(crate) fn search_line(game: &Game, repetition_count: u32) -> Game {
    let config = search_config(*game.config(), repetition_count);
    let mut line = Game::with_config(game.start().clone(), config);
    for m in game.moves() {
        line.play_unchecked(m);
    }
    line
}

/// A line that starts at `pos` with no history.
pub(crate) fn line_from(pos: Position, repetition_count: u32) -> Game {
    Game::with_config(pos, search_config(GameConfig::default(), repetition_count))
}

/// The rules' verdict at the end of `line`, as an exact value for the side to move
/// there: 1 win, 0 draw, −1 loss. `None` while the game goes on.
#[inline]
pub(crate) fn verdict(line: &Game) -> Option<f32> {
    line.adjudicate()
        .map(|o| o.value_for(line.position().turn()) as f32)
}

/// [`verdict`] for a position the caller knows has legal moves (the search has just
/// generated them), without generating them a second time.
///
/// With a legal move on the board, [`Game::adjudicate`] can end the game only by
/// repetition, the move limit or insufficient material, so this tests those three
/// triggers cheaply (hash scan, counter, material) and hands the position to the rules
/// only when one fires. A test checks it against [`verdict`] along random and
/// repetitive games, so a new verdict in the rules core without a trigger here fails.
#[inline]
pub(crate) fn verdict_with_moves(line: &Game) -> Option<f32> {
    let config = line.config();
    let repeats = line.repetitions() + 1 >= config.repetition_count.max(2) as usize;
    let limit = line.move_limit_count() >= config.move_limit;
    if repeats || limit || !has_mating_material(line.position()) {
        verdict(line)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use xq_core::{Move, Reason};

    use super::*;

    /// Plays a seeded game where each side often shuffles one piece back and forth (so
    /// repetitions happen) and otherwise plays a random legal move, checking the fast
    /// verdict against the full one at every ply.
    fn check_game(
        fen: &str,
        seed: u64,
        plies: usize,
        repetition_count: u32,
        reasons: &mut HashSet<Reason>,
    ) -> usize {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut line = line_from(Position::from_fen(fen).unwrap(), repetition_count);
        let mut checked = 0;
        for _ in 0..plies {
            let moves = line.position().legal_moves();
            let full = verdict(&line);
            if !moves.is_empty() {
                assert_eq!(
                    verdict_with_moves(&line),
                    full,
                    "at {}",
                    line.position().fen()
                );
                checked += 1;
            }
            if let Some(o) = line.adjudicate() {
                reasons.insert(o.reason);
            }
            if moves.is_empty() {
                break;
            }
            // Undo the move made two plies ago when possible (a shuffle), else random.
            let back = line.ply().checked_sub(2).and_then(|_| {
                let ms: Vec<Move> = line.moves().collect();
                let m = ms[ms.len() - 2];
                let rev = Move::new(m.to(), m.from());
                (rng.random::<f32>() < 0.7 && moves.contains(&rev)).then_some(rev)
            });
            let m = back.unwrap_or_else(|| moves[rng.random_range(0..moves.len())]);
            line.play_unchecked(m);
        }
        checked
    }

    /// Red horse e4, black chariot f7 protected by nothing, red soldier c6 protecting d6:
    /// the horse chases the chariot e4-d6-e4 while the chariot runs f7-f6-f7 (idle).
    const HORSE_CHASE: &str = "3k5/9/5r3/2P6/9/4N4/9/9/9/4K4 w - - 0 1";

    fn played(fen: &str, moves: &str) -> Game {
        let mut g = Game::from_fen(fen).unwrap();
        for m in moves.split_whitespace() {
            g.play_iccs(m).unwrap();
        }
        g
    }

    #[test]
    fn a_perpetual_chase_loses_at_the_search_occurrence() {
        // One round of the chase: the start position occurs for the second time. The
        // referee (CXA) does not judge yet; the search judges it at once, with the
        // referee's verdict: red, the chaser, loses.
        let game = played(HORSE_CHASE, "e4d6 f7f6 d6e4 f6f7");
        assert_eq!(game.adjudicate(), None);
        let line = search_line(&game, 2);
        let o = line.adjudicate().expect("judged at the second occurrence");
        assert_eq!(
            (o.winner, o.reason),
            (Some(xq_core::Color::Black), Reason::PerpetualChase)
        );
        assert_eq!(verdict(&line), Some(-1.0));
        assert_eq!(verdict_with_moves(&line), Some(-1.0));
        // At a higher count the search waits as long for chases as for draws.
        let line = search_line(&game, 3);
        assert_eq!(verdict(&line), None);
        let line = search_line(
            &played(HORSE_CHASE, &["e4d6 f7f6 d6e4 f6f7"; 2].join(" ")),
            3,
        );
        assert_eq!(verdict(&line), Some(-1.0));
    }

    #[test]
    fn fast_verdict_agrees_with_the_rules_core() {
        let fens = [
            xq_core::START_FEN,
            // Rook endings: checks, chases and long quiet stretches.
            "4k4/9/9/9/9/9/9/9/R8/3K5 w - - 0 1",
            "3ak4/4a4/9/9/9/9/9/9/r8/3RK4 w - - 0 1",
            // Near the move limit.
            "4k4/9/9/9/9/9/9/9/4C4/3K5 w - - 110 60",
            // No attacking material: drawn on sight.
            "4k4/4a4/9/9/9/9/9/9/4A4/3K5 w - - 0 1",
        ];
        let mut reasons = HashSet::new();
        let mut checked = 0;
        for (i, fen) in fens.iter().enumerate() {
            for seed in 0..6 {
                for rc in [2, 3] {
                    checked += check_game(fen, seed * 31 + i as u64, 160, rc, &mut reasons);
                }
            }
        }
        assert!(checked > 1000, "only {checked} plies checked");
        // Every trigger of the fast path is exercised.
        for r in [Reason::MoveLimit, Reason::InsufficientMaterial] {
            assert!(reasons.contains(&r), "{r} never happened: {reasons:?}");
        }
        assert!(
            reasons.iter().any(|r| matches!(
                r,
                Reason::RepetitionDraw | Reason::PerpetualCheck | Reason::PerpetualChase
            )),
            "no repetition verdict: {reasons:?}"
        );
    }
}
