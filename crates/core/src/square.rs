//! Files, ranks and the 90 points of the board.
//!
//! Coordinates follow ICCS/UCCI: files `a`-`i` from Red's left, ranks `0`-`9` from
//! Red's back rank. The index of a square is `rank * 9 + file`, so `a0 = 0` and `i9 = 89`.

use std::fmt;

/// A file (column), `a` (0) to `i` (8), counted from Red's left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct File(u8);

impl File {
    pub const COUNT: usize = 9;

    /// # Panics
    /// If `index >= 9`.
    #[track_caller]
    pub const fn new(index: u32) -> File {
        assert!(index < 9);
        File(index as u8)
    }

    pub const fn try_new(index: i32) -> Option<File> {
        if index >= 0 && index < 9 {
            Some(File(index as u8))
        } else {
            None
        }
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The mirror file (a ↔ i).
    #[must_use]
    pub const fn flip(self) -> File {
        File(8 - self.0)
    }

    pub const fn char(self) -> char {
        (b'a' + self.0) as char
    }

    pub const fn from_char(c: char) -> Option<File> {
        match c {
            'a'..='i' => Some(File(c as u8 - b'a')),
            'A'..='I' => Some(File(c as u8 - b'A')),
            _ => None,
        }
    }
}

/// A rank (row), `0` (Red's back rank) to `9` (Black's back rank).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rank(u8);

impl Rank {
    pub const COUNT: usize = 10;

    /// # Panics
    /// If `index >= 10`.
    #[track_caller]
    pub const fn new(index: u32) -> Rank {
        assert!(index < 10);
        Rank(index as u8)
    }

    pub const fn try_new(index: i32) -> Option<Rank> {
        if index >= 0 && index < 10 {
            Some(Rank(index as u8))
        } else {
            None
        }
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The rank seen from the other side (0 ↔ 9).
    #[must_use]
    pub const fn flip(self) -> Rank {
        Rank(9 - self.0)
    }

    pub const fn char(self) -> char {
        (b'0' + self.0) as char
    }
}

/// One of the 90 points.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Square(u8);

impl Square {
    pub const COUNT: usize = 90;

    /// # Panics
    /// If `index >= 90`.
    #[track_caller]
    #[inline]
    pub const fn new(index: u32) -> Square {
        assert!(index < 90);
        Square(index as u8)
    }

    /// # Safety
    /// `index` must be below 90.
    #[inline]
    pub const unsafe fn new_unchecked(index: u32) -> Square {
        debug_assert!(index < 90);
        Square(index as u8)
    }

    #[inline]
    pub const fn from_coords(file: File, rank: Rank) -> Square {
        Square(rank.0 * 9 + file.0)
    }

    /// The square at `(file, rank)` if both are on the board.
    #[inline]
    pub const fn try_from_coords(file: i32, rank: i32) -> Option<Square> {
        if file >= 0 && file < 9 && rank >= 0 && rank < 10 {
            Some(Square((rank * 9 + file) as u8))
        } else {
            None
        }
    }

    #[inline]
    pub const fn file(self) -> File {
        File(self.0 % 9)
    }

    #[inline]
    pub const fn rank(self) -> Rank {
        Rank(self.0 / 9)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The square `df` files and `dr` ranks away, if on the board.
    #[inline]
    pub const fn offset(self, df: i32, dr: i32) -> Option<Square> {
        Square::try_from_coords(self.file().0 as i32 + df, self.rank().0 as i32 + dr)
    }

    /// Rotates the board by 180°: the square as the other side sees it.
    #[must_use]
    #[inline]
    pub const fn flip(self) -> Square {
        Square(89 - self.0)
    }

    /// Mirrors left-right (a ↔ i), the board's only symmetry.
    #[must_use]
    #[inline]
    pub const fn mirror(self) -> Square {
        Square::from_coords(self.file().flip(), self.rank())
    }

    /// Mirrors top-bottom (rank 0 ↔ 9), keeping the file.
    #[must_use]
    #[inline]
    pub const fn flip_vertical(self) -> Square {
        Square::from_coords(self.file(), self.rank().flip())
    }

    /// Whether this point is on `color`'s own side of the river.
    #[inline]
    pub const fn is_home(self, color: crate::Color) -> bool {
        match color {
            crate::Color::Red => self.0 < 45,
            crate::Color::Black => self.0 >= 45,
        }
    }

    /// Whether this point is inside `color`'s palace (九宫).
    #[inline]
    pub const fn in_palace(self, color: crate::Color) -> bool {
        let f = self.0 % 9;
        let r = self.0 / 9;
        f >= 3
            && f <= 5
            && match color {
                crate::Color::Red => r <= 2,
                crate::Color::Black => r >= 7,
            }
    }

    /// Parses ICCS coordinates such as `e0` or `H2` (case-insensitive file).
    pub fn from_ascii(s: &[u8]) -> Result<Square, ParseSquareError> {
        match s {
            [f, r] => {
                let file = File::from_char(*f as char).ok_or(ParseSquareError)?;
                if !r.is_ascii_digit() {
                    return Err(ParseSquareError);
                }
                Ok(Square::from_coords(file, Rank(r - b'0')))
            }
            _ => Err(ParseSquareError),
        }
    }

    /// Every square, a0 first.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..90).map(|i| Square(i as u8))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file().char(), self.rank().char())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::str::FromStr for Square {
    type Err = ParseSquareError;
    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        Square::from_ascii(s.as_bytes())
    }
}

/// A square name that is not `a0`..`i9`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid square name (expected a file a-i and a rank 0-9, e.g. e0)")]
pub struct ParseSquareError;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_follow_iccs() {
        assert_eq!(Square::new(0).to_string(), "a0");
        assert_eq!(Square::new(89).to_string(), "i9");
        assert_eq!("e0".parse::<Square>().unwrap(), Square::new(4));
        assert_eq!("h2".parse::<Square>().unwrap().index(), 2 * 9 + 7);
        assert!("j0".parse::<Square>().is_err());
        assert!("a10".parse::<Square>().is_err());
    }

    #[test]
    fn flips_are_involutions() {
        for sq in Square::all() {
            assert_eq!(sq.flip().flip(), sq);
            assert_eq!(sq.mirror().mirror(), sq);
            assert_eq!(sq.flip(), sq.mirror().flip_vertical());
        }
    }

    #[test]
    fn palaces_have_nine_points() {
        use crate::Color;
        for c in Color::ALL {
            assert_eq!(Square::all().filter(|s| s.in_palace(c)).count(), 9);
            assert_eq!(Square::all().filter(|s| s.is_home(c)).count(), 45);
        }
    }
}
