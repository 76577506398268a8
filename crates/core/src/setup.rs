//! `Setup`: a not necessarily legal arrangement, and the checks that turn it into a
//! [`Position`](crate::Position).

use crate::{Color, Piece, Role, Square};

/// A board, side to move and counters as read from a FEN or built by hand. Nothing
/// about it is checked; [`crate::Position::from_setup`] validates it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Setup {
    /// Pieces by square index (`a0 = 0` … `i9 = 89`).
    pub board: [Option<Piece>; 90],
    pub turn: Color,
    /// Plies since the last capture (FEN field 5).
    pub halfmoves: u32,
    /// Move number, starting at 1 and incremented after Black's move (FEN field 6).
    pub fullmoves: u32,
}

impl Setup {
    /// The empty board, Red to move.
    pub fn empty() -> Setup {
        Setup {
            board: [None; 90],
            turn: Color::Red,
            halfmoves: 0,
            fullmoves: 1,
        }
    }

    /// The starting position (1.3).
    pub fn start() -> Setup {
        let mut s = Setup::empty();
        let back = [
            Role::Chariot,
            Role::Horse,
            Role::Elephant,
            Role::Advisor,
            Role::General,
            Role::Advisor,
            Role::Elephant,
            Role::Horse,
            Role::Chariot,
        ];
        for (f, &role) in back.iter().enumerate() {
            s.board[f] = Some(Piece::new(Color::Red, role));
            s.board[81 + f] = Some(Piece::new(Color::Black, role));
        }
        for f in [1usize, 7] {
            s.board[2 * 9 + f] = Some(Piece::new(Color::Red, Role::Cannon));
            s.board[7 * 9 + f] = Some(Piece::new(Color::Black, Role::Cannon));
        }
        for f in [0usize, 2, 4, 6, 8] {
            s.board[3 * 9 + f] = Some(Piece::new(Color::Red, Role::Soldier));
            s.board[6 * 9 + f] = Some(Piece::new(Color::Black, Role::Soldier));
        }
        s
    }

    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }
}

/// Whether `piece` can ever stand on `sq` in a game from the starting position.
pub fn reachable(piece: Piece, sq: Square) -> bool {
    let c = piece.color;
    // Ranks and files as seen from `c`'s own side.
    let rel = match c {
        Color::Red => sq,
        Color::Black => sq.flip(),
    };
    let (f, r) = (rel.file().index(), rel.rank().index());
    match piece.role {
        Role::General => sq.in_palace(c),
        Role::Advisor => sq.in_palace(c) && (f + r) % 2 == 1,
        Role::Elephant => {
            matches!((f, r), (2 | 6, 0) | (0 | 4 | 8, 2) | (2 | 6, 4))
        }
        Role::Soldier => r >= 5 || ((r == 3 || r == 4) && f % 2 == 0),
        Role::Horse | Role::Chariot | Role::Cannon => true,
    }
}

/// Why a [`Setup`] is not a legal position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    #[error("{} has no general", .0.name())]
    MissingGeneral(Color),
    #[error("{} has {count} {role:?} pieces (at most {} allowed)", .color.name(), .role.max_count())]
    TooManyPieces {
        color: Color,
        role: Role,
        count: u32,
    },
    #[error("{} general on {square} is outside its palace", .color.name())]
    GeneralOutsidePalace { color: Color, square: Square },
    #[error("{} advisor on {square} is not on a palace diagonal point", .color.name())]
    AdvisorOutsidePalace { color: Color, square: Square },
    #[error("{} elephant on {square} is on a point elephants can never reach", .color.name())]
    ImpossibleElephant { color: Color, square: Square },
    #[error("{} soldier on {square} is behind its starting rank or off its file before the river", .color.name())]
    ImpossibleSoldier { color: Color, square: Square },
    #[error("the generals face each other on an open file")]
    FacingGenerals,
    #[error("the side not to move ({}) is in check", .0.name())]
    OppositeCheck(Color),
}

/// Checks everything about a setup that does not need move generation; the check of
/// the side not to move is done by the caller, which has the attack tables.
pub(crate) fn validate_material(setup: &Setup) -> Result<(), PositionError> {
    let mut counts = [[0u32; 7]; 2];
    for sq in Square::all() {
        if let Some(p) = setup.piece_at(sq) {
            counts[p.color.index()][p.role.index()] += 1;
            if !reachable(p, sq) {
                let (color, square) = (p.color, sq);
                return Err(match p.role {
                    Role::General => PositionError::GeneralOutsidePalace { color, square },
                    Role::Advisor => PositionError::AdvisorOutsidePalace { color, square },
                    Role::Elephant => PositionError::ImpossibleElephant { color, square },
                    _ => PositionError::ImpossibleSoldier { color, square },
                });
            }
        }
    }
    for color in Color::ALL {
        for role in Role::ALL {
            let count = counts[color.index()][role.index()];
            if count > role.max_count() {
                return Err(PositionError::TooManyPieces { color, role, count });
            }
        }
        if counts[color.index()][Role::General.index()] == 0 {
            return Err(PositionError::MissingGeneral(color));
        }
    }
    Ok(())
}
