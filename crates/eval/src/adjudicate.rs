//! A result for a game record that has none, from the project's own search: the
//! value target of supervised pre-training on master games, whose records stop at a
//! resignation or an agreed draw without saying which.
//!
//! The rule, in order:
//! 1. a game the rules ended (mate, stalemate, a 棋例 verdict, the move limit) has
//!    that result, at its first ending ([`Game::outcome`]);
//! 2. otherwise the built-in alpha-beta engine searches the final position to `depth`
//!    plies (the game's earlier positions count for repetitions), and a score of at
//!    least `margin_cp` for the side to move is its win, at most `-margin_cp` its loss,
//!    anything between a draw.
//!
//! No anchor engine labels anything: the labels must not teach the network to play
//! like a yardstick it is later rated against. A margin of about two-thirds of a horse
//! (the engine's horse is 270) calls a game won where a master would resign.

use xq_core::{Color, Game, IllegalMoveError, Move, Position, Reason};

use crate::alphabeta::{AbLimits, AlphaBeta};

/// How a record without a result is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adjudicator {
    /// Alpha-beta depth on the final position, in plies (at least 1).
    pub depth: u32,
    /// Centipawns (the alpha-beta scale) from which the side to move is judged won or lost.
    pub margin_cp: i32,
}

/// What the adjudicator decided, and from what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// `None`: a draw.
    pub winner: Option<Color>,
    pub by: VerdictBy,
}

/// Where a [`Verdict`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictBy {
    /// The rules ended the game at this reason.
    Rules(Reason),
    /// The search of the final position gave this score for the side to move.
    Search { score: i32 },
}

impl Adjudicator {
    /// Judges the game `moves` played from `start`. A fresh engine (1 MiB of hash) per
    /// call, so verdicts do not depend on which games were judged before.
    ///
    /// # Errors
    /// A move that is illegal where it is played.
    pub fn judge(&self, start: &Position, moves: &[Move]) -> Result<Verdict, IllegalMoveError> {
        let mut game = Game::new(start.clone());
        for &m in moves {
            game.play(m)?;
        }
        if let Some(o) = game.outcome() {
            return Ok(Verdict {
                winner: o.winner,
                by: VerdictBy::Rules(o.reason),
            });
        }
        let pos = game.position();
        let earlier: Vec<u64> = (0..game.ply())
            .filter_map(|i| game.position_at(i).map(Position::hash))
            .collect();
        let score = AlphaBeta::new(1)
            .search(pos, &earlier, AbLimits::depth(self.depth.max(1)))
            .score;
        let side = pos.turn();
        let winner = if score >= self.margin_cp {
            Some(side)
        } else if score <= -self.margin_cp {
            Some(side.other())
        } else {
            None
        };
        Ok(Verdict {
            winner,
            by: VerdictBy::Search { score },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(fen: &str, moves: &[&str]) -> Verdict {
        let start = Position::from_fen(fen).unwrap();
        let mut p = start.clone();
        let moves: Vec<Move> = moves
            .iter()
            .map(|s| {
                let m = p.parse_iccs(s).unwrap();
                p.play(m).unwrap();
                m
            })
            .collect();
        Adjudicator {
            depth: 4,
            margin_cp: 180,
        }
        .judge(&start, &moves)
        .unwrap()
    }

    #[test]
    fn a_mated_side_loses_by_the_rules_without_a_search() {
        // Red's chariot checks on the back rank; the other chariot holds rank 8 and the
        // general on e0 holds the e-file.
        let v = judge("3k5/1R7/9/9/9/9/9/9/9/R3K4 w - - 0 1", &["a0a9"]);
        assert_eq!(v.winner, Some(Color::Red));
        assert_eq!(v.by, VerdictBy::Rules(Reason::Checkmate), "{v:?}");
    }

    #[test]
    fn a_side_a_chariot_down_loses_and_a_level_ending_is_a_draw() {
        // Black to move, a chariot down.
        let v = judge("3k5/9/9/9/9/9/9/9/9/R3K4 b - - 0 1", &[]);
        assert_eq!(v.winner, Some(Color::Red), "{v:?}");
        assert!(matches!(v.by, VerdictBy::Search { score } if score <= -180));
        // Red to move with the extra chariot: the same verdict from the other side.
        let v = judge("3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1", &[]);
        assert_eq!(v.winner, Some(Color::Red), "{v:?}");
        // One soldier each, far apart: level.
        let v = judge("3k5/9/9/p8/9/9/8P/9/9/4K4 w - - 0 1", &[]);
        assert_eq!(v.winner, None, "{v:?}");
    }

    #[test]
    fn an_illegal_move_is_an_error() {
        let start = Position::startpos();
        let bad = Move::from_iccs("a0a5").unwrap();
        let e = Adjudicator {
            depth: 2,
            margin_cp: 180,
        }
        .judge(&start, &[bad]);
        assert!(e.is_err());
    }
}
