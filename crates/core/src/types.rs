//! Small vocabulary types: colours, roles, pieces.

use std::fmt;

/// The two sides. Red moves first (2.1) and sits at ranks 0-4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Color {
    Red = 0,
    Black = 1,
}

impl Color {
    pub const ALL: [Color; 2] = [Color::Red, Color::Black];

    #[must_use]
    #[inline]
    pub const fn other(self) -> Color {
        match self {
            Color::Red => Color::Black,
            Color::Black => Color::Red,
        }
    }

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Picks `red` or `black` by colour.
    #[inline]
    pub fn fold<T>(self, red: T, black: T) -> T {
        match self {
            Color::Red => red,
            Color::Black => black,
        }
    }

    /// Lower-case English name, as used in JSON output.
    pub const fn name(self) -> &'static str {
        match self {
            Color::Red => "red",
            Color::Black => "black",
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    fn not(self) -> Color {
        self.other()
    }
}

/// The seven kinds of piece (1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Role {
    /// 帅/将 (king).
    General = 0,
    /// 仕/士.
    Advisor = 1,
    /// 相/象 (bishop in western FEN).
    Elephant = 2,
    /// 马 (knight in western FEN).
    Horse = 3,
    /// 车 (rook).
    Chariot = 4,
    /// 炮/砲.
    Cannon = 5,
    /// 兵/卒 (pawn).
    Soldier = 6,
}

impl Role {
    pub const ALL: [Role; 7] = [
        Role::General,
        Role::Advisor,
        Role::Elephant,
        Role::Horse,
        Role::Chariot,
        Role::Cannon,
        Role::Soldier,
    ];

    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The most pieces of this role one side can have (1.2).
    pub const fn max_count(self) -> u32 {
        match self {
            Role::General => 1,
            Role::Soldier => 5,
            _ => 2,
        }
    }

    /// Upper-case FEN letter (`K A B N R C P`).
    pub const fn upper_char(self) -> char {
        match self {
            Role::General => 'K',
            Role::Advisor => 'A',
            Role::Elephant => 'B',
            Role::Horse => 'N',
            Role::Chariot => 'R',
            Role::Cannon => 'C',
            Role::Soldier => 'P',
        }
    }

    /// Parses a FEN letter of either case; also accepts `E` (elephant) and `H` (horse),
    /// which some tools write.
    pub const fn from_char(c: char) -> Option<Role> {
        Some(match c.to_ascii_uppercase() {
            'K' => Role::General,
            'A' => Role::Advisor,
            'B' | 'E' => Role::Elephant,
            'N' | 'H' => Role::Horse,
            'R' => Role::Chariot,
            'C' => Role::Cannon,
            'P' => Role::Soldier,
            _ => return None,
        })
    }

    /// True for the pieces that can deliver mate by themselves or with help
    /// (chariot, horse, cannon, soldier): the "attacking" pieces of 4.2.1.
    pub const fn is_attacking(self) -> bool {
        matches!(
            self,
            Role::Horse | Role::Chariot | Role::Cannon | Role::Soldier
        )
    }
}

/// A coloured piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Piece {
    pub color: Color,
    pub role: Role,
}

impl Piece {
    #[inline]
    pub const fn new(color: Color, role: Role) -> Piece {
        Piece { color, role }
    }

    /// FEN letter: upper case for red.
    pub const fn char(self) -> char {
        let c = self.role.upper_char();
        match self.color {
            Color::Red => c,
            Color::Black => c.to_ascii_lowercase(),
        }
    }

    pub const fn from_char(c: char) -> Option<Piece> {
        match Role::from_char(c) {
            Some(role) => Some(Piece {
                color: if c.is_ascii_uppercase() {
                    Color::Red
                } else {
                    Color::Black
                },
                role,
            }),
            None => None,
        }
    }

    /// Dense index 0..14 (colour major).
    #[inline]
    pub const fn index(self) -> usize {
        self.color.index() * 7 + self.role.index()
    }
}

impl fmt::Display for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.char())
    }
}

/// A value per colour, indexed by [`Color`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ByColor<T> {
    pub red: T,
    pub black: T,
}

impl<T> ByColor<T> {
    pub const fn new(red: T, black: T) -> Self {
        ByColor { red, black }
    }

    #[inline]
    pub fn get(&self, c: Color) -> &T {
        match c {
            Color::Red => &self.red,
            Color::Black => &self.black,
        }
    }

    #[inline]
    pub fn get_mut(&mut self, c: Color) -> &mut T {
        match c {
            Color::Red => &mut self.red,
            Color::Black => &mut self.black,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piece_chars_round_trip() {
        for c in Color::ALL {
            for r in Role::ALL {
                let p = Piece::new(c, r);
                assert_eq!(Piece::from_char(p.char()), Some(p));
            }
        }
        assert_eq!(Piece::from_char('x'), None);
        assert_eq!(
            Piece::from_char('h'),
            Some(Piece::new(Color::Black, Role::Horse))
        );
    }
}
