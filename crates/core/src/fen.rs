//! Xiangqi FEN: `rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1`.
//!
//! Rows run from rank 9 (Black's back rank) to rank 0; upper case is Red; letters are
//! `K A B N R C P` (`E` and `H` are read as elephant and horse). The side field is `w`
//! or `b`; `r` is accepted for Red. Fields 3-4 (`- -`) are ignored; the counters
//! (fields 5-6) are optional.

use std::{fmt, str::FromStr};

use crate::{Color, Piece, Position, PositionError, Setup};

/// A parsed FEN: a [`Setup`] that has not been validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fen(pub Setup);

/// What is wrong with a FEN string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseFenError {
    #[error("empty FEN")]
    Empty,
    #[error("FEN board has {0} ranks, expected 10 separated by '/'")]
    WrongRankCount(usize),
    #[error("FEN rank {rank} has {files} files, expected 9")]
    WrongFileCount { rank: usize, files: usize },
    #[error("unknown piece letter {0:?} in FEN")]
    UnknownPiece(char),
    #[error("invalid side to move {0:?} in FEN (expected w, b or r)")]
    InvalidTurn(String),
    #[error("invalid half-move clock {0:?} in FEN")]
    InvalidHalfmoves(String),
    #[error("invalid move number {0:?} in FEN")]
    InvalidFullmoves(String),
    #[error("too many fields in FEN ({0}, expected at most 6)")]
    TooManyFields(usize),
}

/// A FEN that parses but describes no legal position, or does not parse at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    #[error("bad FEN: {0}")]
    Parse(#[from] ParseFenError),
    #[error("illegal position: {0}")]
    Position(#[from] PositionError),
}

impl Fen {
    pub fn from_setup(setup: &Setup) -> Fen {
        Fen(setup.clone())
    }

    pub fn into_setup(self) -> Setup {
        self.0
    }

    /// Parses the text form.
    ///
    /// # Errors
    /// A [`ParseFenError`] naming the problem.
    pub fn parse(s: &str) -> Result<Fen, ParseFenError> {
        let mut fields = s.split_ascii_whitespace();
        let board = fields.next().ok_or(ParseFenError::Empty)?;
        let mut setup = Setup::empty();
        let rows: Vec<&str> = board.split('/').collect();
        if rows.len() != 10 {
            return Err(ParseFenError::WrongRankCount(rows.len()));
        }
        for (i, row) in rows.iter().enumerate() {
            let rank = 9 - i;
            let mut file = 0usize;
            for c in row.chars() {
                if let Some(d) = c.to_digit(10) {
                    if d == 0 {
                        return Err(ParseFenError::UnknownPiece(c));
                    }
                    file += d as usize;
                } else {
                    let p = Piece::from_char(c).ok_or(ParseFenError::UnknownPiece(c))?;
                    if file < 9 {
                        setup.board[rank * 9 + file] = Some(p);
                    }
                    file += 1;
                }
                if file > 9 {
                    break;
                }
            }
            if file != 9 {
                return Err(ParseFenError::WrongFileCount { rank, files: file });
            }
        }
        if let Some(t) = fields.next() {
            setup.turn = match t {
                "w" | "r" | "W" | "R" => Color::Red,
                "b" | "B" => Color::Black,
                _ => return Err(ParseFenError::InvalidTurn(t.to_owned())),
            };
        }
        // Castling and en-passant placeholders.
        let _ = fields.next();
        let _ = fields.next();
        if let Some(h) = fields.next() {
            setup.halfmoves = h
                .parse()
                .map_err(|_| ParseFenError::InvalidHalfmoves(h.to_owned()))?;
        }
        if let Some(f) = fields.next() {
            setup.fullmoves = match f.parse::<u32>() {
                Ok(n) if n >= 1 => n,
                _ => return Err(ParseFenError::InvalidFullmoves(f.to_owned())),
            };
        }
        let extra = fields.count();
        if extra > 0 {
            return Err(ParseFenError::TooManyFields(6 + extra));
        }
        Ok(Fen(setup))
    }
}

impl FromStr for Fen {
    type Err = ParseFenError;
    fn from_str(s: &str) -> Result<Fen, ParseFenError> {
        Fen::parse(s)
    }
}

impl fmt::Display for Fen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.0;
        for rank in (0..10).rev() {
            let mut empty = 0;
            for file in 0..9 {
                match s.board[rank * 9 + file] {
                    Some(p) => {
                        if empty > 0 {
                            write!(f, "{empty}")?;
                            empty = 0;
                        }
                        write!(f, "{}", p.char())?;
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                write!(f, "{empty}")?;
            }
            if rank > 0 {
                f.write_str("/")?;
            }
        }
        let turn = match s.turn {
            Color::Red => 'w',
            Color::Black => 'b',
        };
        write!(f, " {turn} - - {} {}", s.halfmoves, s.fullmoves)
    }
}

impl Position {
    /// Parses and validates a FEN.
    ///
    /// # Errors
    /// A [`FenError`] naming the problem.
    pub fn from_fen(s: &str) -> Result<Position, FenError> {
        Ok(Position::from_setup(Fen::parse(s)?.0)?)
    }
}

impl FromStr for Position {
    type Err = FenError;
    fn from_str(s: &str) -> Result<Position, FenError> {
        Position::from_fen(s)
    }
}

/// The FEN of the starting position.
pub const START_FEN: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_fen_round_trips() {
        let pos = Position::from_fen(START_FEN).unwrap();
        assert_eq!(pos, Position::startpos());
        assert_eq!(pos.fen(), START_FEN);
    }

    #[test]
    fn red_side_letter_r_is_accepted() {
        let pos =
            Position::from_fen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR r")
                .unwrap();
        assert_eq!(pos.turn(), Color::Red);
    }

    fn err(fen: &str) -> String {
        Position::from_fen(fen).unwrap_err().to_string()
    }

    #[test]
    fn bad_fens_name_the_problem() {
        let cases = [
            (
                "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/RNBAKABNR w",
                "9 ranks",
            ),
            (
                "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABN w",
                "8 files",
            ),
            (
                "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNRR w",
                "10 files",
            ),
            (
                "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNX w",
                "'X'",
            ),
            (
                "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR x",
                "side to move",
            ),
            (
                "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBA1ABNR w",
                "red has no general",
            ),
            (
                "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2K2C1/9/RNBAKABNR w",
                "2 General",
            ),
            ("3k5/9/9/9/9/9/9/9/9/K8 w", "outside its palace"),
            ("3k5/9/9/9/9/9/9/9/3A5/4K4 w", "advisor on d1"),
            ("3k5/9/9/9/9/9/9/3B5/9/4K4 w", "elephant on d2"),
            ("3k5/9/9/9/9/9/9/P8/9/4K4 w", "soldier on a2"),
            ("3k5/9/9/9/9/9/1P7/9/9/4K4 w", "soldier on b3"),
            ("3k5/9/9/9/9/9/9/9/9/3KR4 w", "face each other"),
            ("3k5/9/9/9/3R5/9/9/9/9/4K4 w", "black) is in check"),
            ("3k5/9/9/9/9/9/9/9/9/RRR1K4 w", "3 Chariot"),
            ("3k5/9/9/9/9/9/9/9/9/4K4 w - - x 1", "half-move"),
            ("3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 0", "move number"),
            ("", "empty"),
        ];
        for (fen, needle) in cases {
            let e = err(fen);
            assert!(
                e.contains(needle),
                "{fen:?}: {e:?} should mention {needle:?}"
            );
        }
    }
}
