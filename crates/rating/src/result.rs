//! Game results and records: the vocabulary shared by statistics and
//! tournaments.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The result of one game from the point of view of one named side
/// (scoring 14.1: win 1, draw ½, loss 0).
///
/// Which side is meant is stated by whoever holds the value: a
/// [`GameRecord`] reads it from player `a`'s view, a tournament reads it from
/// Red's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameResult {
    Win,
    Draw,
    Loss,
}

impl GameResult {
    /// Points scored (14.1): 1, ½ or 0.
    #[must_use]
    pub const fn points(self) -> f64 {
        match self {
            GameResult::Win => 1.0,
            GameResult::Draw => 0.5,
            GameResult::Loss => 0.0,
        }
    }

    /// Points in half-point units (2, 1, 0), for exact integer sums.
    #[must_use]
    pub const fn half_points(self) -> u32 {
        match self {
            GameResult::Win => 2,
            GameResult::Draw => 1,
            GameResult::Loss => 0,
        }
    }

    /// The same game seen from the other side.
    #[must_use]
    pub const fn reversed(self) -> GameResult {
        match self {
            GameResult::Win => GameResult::Loss,
            GameResult::Draw => GameResult::Draw,
            GameResult::Loss => GameResult::Win,
        }
    }

    /// Parses the usual score notations: `1-0`, `1/2-1/2` (or `½-½`, `=`),
    /// `0-1`, and the words `win`, `draw`, `loss`.
    pub fn parse(s: &str) -> Option<GameResult> {
        match s.trim() {
            "1-0" | "win" | "1" => Some(GameResult::Win),
            "1/2-1/2" | "½-½" | "=" | "draw" | "0.5" => Some(GameResult::Draw),
            "0-1" | "loss" | "0" => Some(GameResult::Loss),
            _ => None,
        }
    }
}

impl fmt::Display for GameResult {
    /// PGN-style score, first-named side first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GameResult::Win => "1-0",
            GameResult::Draw => "1/2-1/2",
            GameResult::Loss => "0-1",
        })
    }
}

/// A side of a game: Red moves first, Black second.
///
/// Results and tournaments only need to say which side of a game is meant, so
/// this crate names the sides itself rather than take the rules' colour type
/// (it uses nothing of xq-core but its fixed hashes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Red,
    Black,
}

impl Side {
    /// Red for `true`: the form in which tournaments keep a player's side.
    #[must_use]
    pub const fn red_if(red: bool) -> Side {
        if red { Side::Red } else { Side::Black }
    }

    /// The side that is not this one.
    #[must_use]
    pub const fn other(self) -> Side {
        match self {
            Side::Red => Side::Black,
            Side::Black => Side::Red,
        }
    }
}

/// What a finished game of a competition scores, from Red's view.
///
/// A game has a winner, or is drawn, except when neither side could play it:
/// 21.3 then forfeits both sides (判双方弃权), which no [`GameResult`] from
/// one side's view can say (the other side would have to win). Each side of
/// a [`Score::DoubleForfeit`] has lost without play: 0 points (21.4's "-").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Score {
    Win,
    Draw,
    Loss,
    /// Both sides forfeit (21.3): 0 points and a "-" for each.
    DoubleForfeit,
}

impl Score {
    /// The result of `side` (Red's for [`Side::Red`]); each side of a
    /// double forfeit has lost.
    #[must_use]
    pub const fn for_side(self, side: Side) -> GameResult {
        let red = match self {
            Score::Win => GameResult::Win,
            Score::Draw => GameResult::Draw,
            Score::Loss => GameResult::Loss,
            Score::DoubleForfeit => return GameResult::Loss,
        };
        match side {
            Side::Red => red,
            Side::Black => red.reversed(),
        }
    }

    /// Half points (2, 1, 0) scored by `side`.
    #[must_use]
    pub const fn half_points(self, side: Side) -> u32 {
        self.for_side(side).half_points()
    }

    /// The PGN result token: `1-0`, `1/2-1/2`, `0-1`, and `*` for a double
    /// forfeit, which has no winner and is no draw (PGN has no token for a
    /// game both sides lose).
    #[must_use]
    pub const fn pgn(self) -> &'static str {
        match self {
            Score::Win => "1-0",
            Score::Draw => "1/2-1/2",
            Score::Loss => "0-1",
            Score::DoubleForfeit => "*",
        }
    }
}

impl From<GameResult> for Score {
    fn from(r: GameResult) -> Score {
        match r {
            GameResult::Win => Score::Win,
            GameResult::Draw => Score::Draw,
            GameResult::Loss => Score::Loss,
        }
    }
}

/// One finished game between two named players, the input of the rating
/// ladder.
///
/// `result` is from `a`'s point of view. By convention `a` moved first
/// (Red) when the colour is known; the ladder itself ignores colour.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    pub a: String,
    pub b: String,
    pub result: GameResult,
}

impl GameRecord {
    pub fn new(a: impl Into<String>, b: impl Into<String>, result: GameResult) -> GameRecord {
        GameRecord {
            a: a.into(),
            b: b.into(),
            result,
        }
    }
}
