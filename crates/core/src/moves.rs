//! The packed move and the move list.

use std::fmt;

use arrayvec::ArrayVec;

use crate::Square;

/// A move from one point to another, packed into 16 bits (`from | to << 7`).
///
/// A move carries no piece or capture: those follow from the position it is played
/// in. Its text form is ICCS as UCCI writes it, lower case without hyphen: `h2e2`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Move(u16);

impl Move {
    #[inline]
    pub const fn new(from: Square, to: Square) -> Move {
        Move(from.index() as u16 | ((to.index() as u16) << 7))
    }

    #[inline]
    pub const fn from(self) -> Square {
        // Safety: built from two valid squares.
        unsafe { Square::new_unchecked((self.0 & 0x7f) as u32) }
    }

    #[inline]
    pub const fn to(self) -> Square {
        // Safety: built from two valid squares.
        unsafe { Square::new_unchecked((self.0 >> 7) as u32) }
    }

    /// The raw 14-bit encoding, stable for storage.
    #[inline]
    pub const fn to_u16(self) -> u16 {
        self.0
    }

    /// Decodes [`Move::to_u16`]; `None` if either square is off the board.
    pub const fn from_u16(v: u16) -> Option<Move> {
        let from = v & 0x7f;
        let to = (v >> 7) & 0x7f;
        if from < 90 && to < 90 && v >> 14 == 0 {
            Some(Move(v))
        } else {
            None
        }
    }

    /// The move as the other side sees it (board rotated 180°).
    #[must_use]
    pub const fn flip(self) -> Move {
        Move::new(self.from().flip(), self.to().flip())
    }

    /// The move reflected left-right.
    #[must_use]
    pub const fn mirror(self) -> Move {
        Move::new(self.from().mirror(), self.to().mirror())
    }

    /// Parses ICCS coordinates: `h2e2`, `H2-E2` and `h2-e2` are accepted. This checks
    /// only the syntax; see [`crate::Position::parse_iccs`] for a legal move.
    pub fn from_iccs(s: &str) -> Result<Move, ParseMoveError> {
        let b = s.as_bytes();
        let (f, t) = match b.len() {
            4 => (&b[0..2], &b[2..4]),
            5 if b[2] == b'-' => (&b[0..2], &b[3..5]),
            _ => return Err(ParseMoveError(s.to_owned())),
        };
        let from = Square::from_ascii(f).map_err(|_| ParseMoveError(s.to_owned()))?;
        let to = Square::from_ascii(t).map_err(|_| ParseMoveError(s.to_owned()))?;
        if from == to {
            return Err(ParseMoveError(s.to_owned()));
        }
        Ok(Move::new(from, to))
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from(), self.to())
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::str::FromStr for Move {
    type Err = ParseMoveError;
    fn from_str(s: &str) -> Result<Move, ParseMoveError> {
        Move::from_iccs(s)
    }
}

/// Text that is not an ICCS move such as `h2e2`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid move {0:?}: expected ICCS coordinates such as h2e2")]
pub struct ParseMoveError(pub String);

/// The most pseudo-legal moves any position can have: 2 chariots and 2 cannons × 17,
/// 2 horses × 8, 2 elephants × 4, 2 advisors × 4, the general 4 and 5 soldiers × 3
/// make 119.
pub const MAX_MOVES: usize = 128;

/// A list of moves without heap allocation.
pub type MoveList = ArrayVec<Move, MAX_MOVES>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_is_two_bytes_and_round_trips() {
        assert_eq!(std::mem::size_of::<Move>(), 2);
        let m: Move = "h2e2".parse().unwrap();
        assert_eq!(m.to_string(), "h2e2");
        assert_eq!(Move::from_u16(m.to_u16()), Some(m));
        assert_eq!("H2-E2".parse::<Move>().unwrap(), m);
        assert!("h2h2".parse::<Move>().is_err());
        assert!("h2e".parse::<Move>().is_err());
        assert_eq!(m.flip().to_string(), "b7e7");
        assert_eq!(m.mirror().to_string(), "b2e2");
    }
}
