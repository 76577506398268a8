//! `Game`: a start position, the moves played from it, and the adjudication of the
//! result under the CXA rules.
//!
//! [`Position`] knows nothing of history; everything that needs history lives here:
//! repetition (棋例, 第24-29条), the natural move limit (4.2.4 with the check clamp of
//! 23.3) and the first ending of a game. The verdicts, in the order they are tested at
//! a given ply, are:
//!
//! 1. no legal move: the side to move loses, by checkmate if in check and by stalemate
//!    (困毙) otherwise (3.1, 3.2, 4.1.1, 4.1.3). A mate on the last move before the
//!    move limit therefore still wins;
//! 2. repetition: when the current position occurs for the
//!    [`GameConfig::repetition_count`]-th time (3), the moves between the earliest of
//!    those occurrences and now are classified (check, mate threat, chase, idle) and
//!    judged by 第24-26条; see [`cycle`] for the exact definitions. A draw or a perpetual
//!    check ends the game there; a side that only chased or threatened mate against an
//!    allowed side must change (24.3) and loses if the position occurs once more
//!    ([`GameConfig::forbidden_repetition_count`], 4);
//! 3. the move limit: [`GameConfig::move_limit`] plies without a capture is a draw,
//!    where each side's checks beyond [`GameConfig::counted_checks`] (and the replies
//!    to them) do not count (23.3, as Pikafish does it);
//! 4. insufficient material (4.2.1): neither side has a chariot, horse, cannon or
//!    soldier.
//!
//! `docs/RULES.md` states which cases are decided and which are left as draws.
//!
//! ```
//! use xq_core::{Color, Game, Reason};
//! // The chariot on a8 holds the eighth rank; the other one mates on the ninth.
//! let mut game = Game::from_fen("4k4/R8/9/9/9/9/9/1R7/9/3K5 w - - 0 1").unwrap();
//! game.play_iccs("b2b9").unwrap();
//! let outcome = game.adjudicate().unwrap();
//! assert_eq!(outcome.winner, Some(Color::Red));
//! assert_eq!(outcome.reason, Reason::Checkmate);
//! ```

pub mod cycle;

use std::fmt;

use crate::{Color, FenError, IllegalMoveError, Move, PlayError, Position};

/// Why a game ended.
///
/// The snake_case [`Reason::name`] of each variant is stable: it appears in the JSON of
/// `xqz status` and in stored game records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The side to move is in check and has no legal move (3.1).
    Checkmate,
    /// The side to move is not in check and has no legal move: 困毙, also a loss (3.2).
    Stalemate,
    /// One side gave check with every move of a repetition cycle (长将, 24.1, 26.1).
    PerpetualCheck,
    /// One side made only forbidden moves (长捉, 一将一捉 …) over a repetition cycle,
    /// at least one of them a chase, while the other side did not (26.4).
    PerpetualChase,
    /// One side made only checks and mate threats over a repetition cycle (长杀,
    /// 一将一杀), at least one a mate threat, while the other side did not (26.4).
    PerpetualMateThreat,
    /// A repetition where both sides' moves were allowed, or both forbidden
    /// (不变作和, 26.2, 26.3), including mutual perpetual check.
    RepetitionDraw,
    /// The natural move limit (自然限着, 4.2.4).
    MoveLimit,
    /// Neither side has a piece that can give mate (4.2.1).
    InsufficientMaterial,
}

impl Reason {
    /// Every reason, in declaration order.
    pub const ALL: [Reason; 8] = [
        Reason::Checkmate,
        Reason::Stalemate,
        Reason::PerpetualCheck,
        Reason::PerpetualChase,
        Reason::PerpetualMateThreat,
        Reason::RepetitionDraw,
        Reason::MoveLimit,
        Reason::InsufficientMaterial,
    ];

    /// The stable snake_case name (`checkmate`, `perpetual_chase`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Reason::Checkmate => "checkmate",
            Reason::Stalemate => "stalemate",
            Reason::PerpetualCheck => "perpetual_check",
            Reason::PerpetualChase => "perpetual_chase",
            Reason::PerpetualMateThreat => "perpetual_mate_threat",
            Reason::RepetitionDraw => "repetition_draw",
            Reason::MoveLimit => "move_limit",
            Reason::InsufficientMaterial => "insufficient_material",
        }
    }

    /// Parses [`Reason::name`].
    pub fn from_name(s: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.name() == s)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of a finished game: the winner (`None` for a draw) and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Outcome {
    pub winner: Option<Color>,
    pub reason: Reason,
}

impl Outcome {
    /// `loser` lost for `reason`.
    pub const fn loss(loser: Color, reason: Reason) -> Outcome {
        Outcome {
            winner: Some(loser.other()),
            reason,
        }
    }

    pub const fn draw(reason: Reason) -> Outcome {
        Outcome {
            winner: None,
            reason,
        }
    }

    pub const fn is_draw(self) -> bool {
        self.winner.is_none()
    }

    /// `red_wins`, `black_wins` or `draw`.
    pub const fn result_name(self) -> &'static str {
        match self.winner {
            Some(Color::Red) => "red_wins",
            Some(Color::Black) => "black_wins",
            None => "draw",
        }
    }

    /// The result from `side`'s point of view: 1 win, 0 draw, -1 loss (for search).
    pub fn value_for(self, side: Color) -> i32 {
        match self.winner {
            Some(w) if w == side => 1,
            Some(_) => -1,
            None => 0,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.result_name(), self.reason)
    }
}

/// The first ending of a game and the ply at which it happened (0 = the start
/// position, `n` = after the n-th move).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ending {
    pub ply: usize,
    pub outcome: Outcome,
}

/// The adjustable parts of the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GameConfig {
    /// Plies without a capture after which the game is drawn: 120 (60 moves, 4.2.4).
    /// Competitions may lower it; `u32::MAX` disables the limit.
    pub move_limit: u32,
    /// How many checking moves of each side count towards the move limit (23.3: at
    /// most 10). A side's further checks, and the opponent's replies to them, do not
    /// advance the count.
    pub counted_checks: u32,
    /// The occurrence of a position at which a repetition is judged: 3 ("循环反复三次",
    /// 4.2.3, 24). Search may use 2 to judge the first repetition. Values below 2 are
    /// treated as 2.
    pub repetition_count: u32,
    /// The occurrence at which a side that made only forbidden moves other than
    /// perpetual check (长捉, 长杀 …) against allowed moves loses: 4. Rule 24.3 makes the
    /// offender change once the repetition is judged and lets it lose "若再重复一次
    /// 循环", if the cycle repeats once more. At `repetition_count` such a repetition
    /// is not yet an ending. Values below `repetition_count` are treated as equal to it.
    pub forbidden_repetition_count: u32,
    /// How far the 棋例's searches for mates and captures through consecutive checks
    /// look (28.2, 29.1).
    pub horizon: cycle::Horizon,
}

impl GameConfig {
    /// The CXA rules: 120 plies, 10 counted checks, repetitions judged on the third
    /// occurrence, a forbidden side (other than by perpetual check) losing on the fourth.
    pub const CXA: GameConfig = GameConfig {
        move_limit: 120,
        counted_checks: 10,
        repetition_count: 3,
        forbidden_repetition_count: 4,
        horizon: cycle::Horizon::DEFAULT,
    };

    /// For search: every repetition judged at its second occurrence, as Pikafish does
    /// inside its tree.
    pub const SEARCH: GameConfig = GameConfig {
        repetition_count: 2,
        forbidden_repetition_count: 2,
        ..GameConfig::CXA
    };
}

impl Default for GameConfig {
    fn default() -> GameConfig {
        GameConfig::CXA
    }
}

/// The move-limit counter after some ply, as Pikafish keeps it (`rule60`, `check10`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Clock {
    /// Plies since the last capture that count towards the limit.
    counted: u32,
    /// Checks given by each side since the last capture; above the allowance, also the
    /// replies to them.
    checks: [u32; 2],
}

impl Clock {
    /// The clock after a move by `us`.
    fn after(
        self,
        us: Color,
        capture: bool,
        gives_check: bool,
        was_in_check: bool,
        allowance: u32,
    ) -> Clock {
        if capture {
            return Clock::default();
        }
        let mut c = self;
        let them = us.other().index();
        let counted = if gives_check {
            c.checks[us.index()] += 1;
            c.checks[us.index()] <= allowance
        } else {
            true
        };
        if counted {
            if c.checks[them] > allowance && was_in_check {
                // A reply to a check that itself did not count.
                c.checks[them] += 1;
            } else {
                c.counted += 1;
            }
        }
        c
    }
}

/// One ply of the game: the position after it and the facts about the move.
#[derive(Debug, Clone)]
struct Node {
    pos: Position,
    /// The move that led here; `None` at the start.
    last: Option<Move>,
    /// Whether that move captured.
    capture: bool,
    clock: Clock,
}

/// A game: the start position and the moves played from it, with the CXA adjudication.
///
/// Every position of the game is kept (about 400 bytes a ply), so [`Game::undo`] is
/// free and repetition cycles can be analysed without replaying. Search can either
/// clone a `Game` or [`play_unchecked`](Game::play_unchecked) along a path and
/// [`undo`](Game::undo) back.
#[derive(Debug, Clone)]
pub struct Game {
    config: GameConfig,
    nodes: Vec<Node>,
}

impl Default for Game {
    fn default() -> Game {
        Game::new(Position::startpos())
    }
}

impl Game {
    /// A game from `start` under the CXA rules. The FEN's half-move clock seeds the
    /// move-limit count.
    pub fn new(start: Position) -> Game {
        Game::with_config(start, GameConfig::default())
    }

    pub fn with_config(start: Position, config: GameConfig) -> Game {
        let clock = Clock {
            counted: start.halfmoves(),
            checks: [0; 2],
        };
        Game {
            config,
            nodes: vec![Node {
                pos: start,
                last: None,
                capture: false,
                clock,
            }],
        }
    }

    /// A game from a FEN.
    ///
    /// # Errors
    /// A [`FenError`] naming what is wrong with the FEN.
    pub fn from_fen(fen: &str) -> Result<Game, FenError> {
        Ok(Game::new(Position::from_fen(fen)?))
    }

    pub fn config(&self) -> &GameConfig {
        &self.config
    }

    /// The current position.
    #[inline]
    pub fn position(&self) -> &Position {
        &self.nodes[self.nodes.len() - 1].pos
    }

    /// The start position.
    pub fn start(&self) -> &Position {
        &self.nodes[0].pos
    }

    /// The position after `ply` moves (0 = the start), if that many were played.
    pub fn position_at(&self, ply: usize) -> Option<&Position> {
        self.nodes.get(ply).map(|n| &n.pos)
    }

    /// The number of moves played.
    #[inline]
    pub fn ply(&self) -> usize {
        self.nodes.len() - 1
    }

    /// The moves played, in order.
    pub fn moves(&self) -> impl ExactSizeIterator<Item = Move> + '_ {
        self.nodes[1..]
            .iter()
            .map(|n| n.last.expect("every node after the start has a move"))
    }

    /// The last move played.
    pub fn last_move(&self) -> Option<Move> {
        self.nodes[self.nodes.len() - 1].last
    }

    /// Plies counted towards the move limit at the current position.
    pub fn move_limit_count(&self) -> u32 {
        self.nodes[self.nodes.len() - 1].clock.counted
    }

    /// Plays `m` if it is legal in the current position. Moves after the game has
    /// ended are accepted; [`Game::first_ending`] still reports the first ending.
    ///
    /// # Errors
    /// [`IllegalMoveError`] if `m` is illegal; the game is unchanged.
    pub fn play(&mut self, m: Move) -> Result<(), IllegalMoveError> {
        let pos = self.position();
        if pos.is_legal(m) {
            self.play_unchecked(m);
            Ok(())
        } else {
            Err(IllegalMoveError { m, fen: pos.fen() })
        }
    }

    /// Parses an ICCS move (`h2e2`) and plays it.
    ///
    /// # Errors
    /// If the text is not ICCS or the move is illegal; the game is unchanged.
    pub fn play_iccs(&mut self, s: &str) -> Result<Move, PlayError> {
        let m = self.position().parse_iccs(s)?;
        self.play_unchecked(m);
        Ok(m)
    }

    /// Plays a move known to be legal in the current position (for search). An illegal
    /// move corrupts the game.
    pub fn play_unchecked(&mut self, m: Move) {
        let prev = &self.nodes[self.nodes.len() - 1];
        let us = prev.pos.turn();
        let was_in_check = prev.pos.is_check();
        let capture = prev.pos.is_capture(m);
        let mut pos = prev.pos.clone();
        pos.play_unchecked(m);
        let clock = prev.clock.after(
            us,
            capture,
            pos.is_check(),
            was_in_check,
            self.config.counted_checks,
        );
        self.nodes.push(Node {
            pos,
            last: Some(m),
            capture,
            clock,
        });
    }

    /// Takes back the last move; `None` at the start position.
    pub fn undo(&mut self) -> Option<Move> {
        if self.nodes.len() > 1 {
            self.nodes.pop().and_then(|n| n.last)
        } else {
            None
        }
    }

    /// Whether the game is over at the current position, and how. This judges only
    /// the current ply (a game continued past an earlier ending is judged afresh; see
    /// [`Game::first_ending`]).
    ///
    /// Cost: one legal-move existence test and a hash scan back to the last capture;
    /// the cycle analysis runs only when the position has occurred
    /// [`GameConfig::repetition_count`] times.
    pub fn adjudicate(&self) -> Option<Outcome> {
        self.adjudicate_at(self.nodes.len() - 1)
    }

    /// The first ply at which the game ended, if any. Judges every ply from the start,
    /// so it costs `ply()` times [`Game::adjudicate`]; a self-play loop should call
    /// `adjudicate` after each move instead.
    pub fn first_ending(&self) -> Option<Ending> {
        (0..self.nodes.len()).find_map(|ply| {
            self.adjudicate_at(ply)
                .map(|outcome| Ending { ply, outcome })
        })
    }

    /// The result of the game: its first ending, if any.
    pub fn outcome(&self) -> Option<Outcome> {
        self.first_ending().map(|e| e.outcome)
    }

    /// How many times the current position occurred before (same pieces, same side to
    /// move), looking back to the last capture.
    pub fn repetitions(&self) -> usize {
        let k = self.nodes.len() - 1;
        self.earlier_occurrences(k).count()
    }

    /// The judgement of the position after `k` plies, using only plies `0..=k`.
    fn adjudicate_at(&self, k: usize) -> Option<Outcome> {
        let node = &self.nodes[k];
        let pos = &node.pos;
        if !pos.has_legal_move() {
            let reason = if pos.is_check() {
                Reason::Checkmate
            } else {
                Reason::Stalemate
            };
            return Some(Outcome::loss(pos.turn(), reason));
        }
        if let Some(outcome) = self.judge_repetition(k) {
            return Some(outcome);
        }
        if node.clock.counted >= self.config.move_limit {
            return Some(Outcome::draw(Reason::MoveLimit));
        }
        if !has_mating_material(pos) {
            return Some(Outcome::draw(Reason::InsufficientMaterial));
        }
        None
    }

    /// The repetition verdict at ply `k`, if the position there has occurred often
    /// enough to be judged and the verdict ends the game.
    fn judge_repetition(&self, k: usize) -> Option<Outcome> {
        let count = self.config.repetition_count.max(2) as usize;
        let forbidden_count = (self.config.forbidden_repetition_count as usize).max(count);
        // Earlier occurrences, nearest first; the i-th (0-based) makes i + 2 in all.
        let earlier: Vec<usize> = self
            .earlier_occurrences(k)
            .take(forbidden_count - 1)
            .collect();
        if earlier.len() + 1 < count {
            return None;
        }
        let judge_from = |first: usize| {
            let span = &self.nodes[first..=k];
            let positions: Vec<&Position> = span.iter().map(|n| &n.pos).collect();
            let moves: Vec<Move> = span[1..]
                .iter()
                .map(|n| n.last.expect("a move leads to every later node"))
                .collect();
            cycle::judge(&positions, &moves, self.config.horizon)
        };
        let outcome = judge_from(earlier[count - 2]);
        match outcome.reason {
            Reason::PerpetualChase | Reason::PerpetualMateThreat => {
                // 24.3: the offender must change; it loses if the cycle comes round again.
                (earlier.len() + 1 >= forbidden_count)
                    .then(|| judge_from(earlier[forbidden_count - 2]))
            }
            _ => Some(outcome),
        }
    }

    /// The plies before `k` (nearest first) whose position equals the one at `k`,
    /// looking back no further than the last capture.
    fn earlier_occurrences(&self, k: usize) -> impl Iterator<Item = usize> + '_ {
        let target = &self.nodes[k].pos;
        let hash = target.hash();
        // A position can recur only an even number of plies later, and never across a
        // capture (material differs). The shortest cycle is 4 plies.
        let mut i = k;
        std::iter::from_fn(move || {
            loop {
                if i < 2 || self.nodes[i].capture || self.nodes[i - 1].capture {
                    return None;
                }
                i -= 2;
                let p = &self.nodes[i].pos;
                if p.hash() == hash && same_placement(p, target) {
                    return Some(i);
                }
            }
        })
    }
}

/// Equal pieces on equal points and the same side to move (the hash already matched;
/// this rules out collisions).
pub(crate) fn same_placement(a: &Position, b: &Position) -> bool {
    a.turn() == b.turn()
        && Color::ALL.iter().all(|&c| a.by_color(c) == b.by_color(c))
        && crate::Role::ALL
            .iter()
            .all(|&r| a.by_role(r) == b.by_role(r))
}

/// Whether either side still has a chariot, horse, cannon or soldier (4.2.1).
pub fn has_mating_material(pos: &Position) -> bool {
    crate::Role::ALL
        .iter()
        .filter(|r| r.is_attacking())
        .any(|&r| pos.by_role(r).any())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_names_round_trip_and_are_distinct() {
        let mut names: Vec<&str> = Reason::ALL.iter().map(|r| r.name()).collect();
        for r in Reason::ALL {
            assert_eq!(Reason::from_name(r.name()), Some(r));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Reason::ALL.len());
    }

    #[test]
    fn undo_restores_the_previous_position() {
        let mut g = Game::default();
        let before = g.position().clone();
        g.play_iccs("h2e2").unwrap();
        assert_eq!(g.undo(), Some("h2e2".parse().unwrap()));
        assert_eq!(g.position(), &before);
        assert_eq!(g.undo(), None);
        assert_eq!(g.ply(), 0);
    }

    #[test]
    fn illegal_move_leaves_the_game_unchanged() {
        let mut g = Game::default();
        assert!(g.play("h2h8".parse().unwrap()).is_err());
        assert!(g.play_iccs("e0e2").is_err());
        assert!(g.play_iccs("zz").is_err());
        assert_eq!(g.ply(), 0);
        assert_eq!(g.position(), &Position::startpos());
    }

    #[test]
    fn clock_skips_checks_beyond_the_allowance_and_their_replies() {
        let mut c = Clock::default();
        // Ten checks by red and ten replies count: 20 plies.
        for _ in 0..10 {
            c = c.after(Color::Red, false, true, false, 10);
            c = c.after(Color::Black, false, false, true, 10);
        }
        assert_eq!(c.counted, 20);
        // The eleventh check and its reply do not count.
        c = c.after(Color::Red, false, true, false, 10);
        c = c.after(Color::Black, false, false, true, 10);
        assert_eq!(c.counted, 20);
        // A quiet move counts again; a capture resets.
        c = c.after(Color::Red, false, false, false, 10);
        assert_eq!(c.counted, 21);
        c = c.after(Color::Black, true, false, false, 10);
        assert_eq!(c, Clock::default());
    }
}
