//! The moving piece's origin, as both notations understand it.
//!
//! A move's text names its piece by the piece's file or, where pieces of one kind share
//! a file, by its place among them. The Chinese and WXF notations choose and spell
//! these names differently (前炮 / `C+`, 一兵 / `++`), but what a name can denote is the
//! same: a file, an end or the middle of a stack, the k-th piece counted over the
//! stacks. So the geometry lives here once: [`standing`] measures where a piece stands,
//! for each notation to choose and spell its name; [`Origin`] is what a parsed name
//! means, and [`resolve`] turns it into the points it can denote, with the same errors
//! whichever notation the text was in.

use arrayvec::ArrayVec;

use super::{NotationError, file_of_own, own_file};
use crate::{Color, File, Piece, Position, Rank, Role, Square};

/// The pieces of one kind on one file, front first. Ten points per file bound it.
pub(super) type Stack = ArrayVec<Square, 10>;

/// An end of a stack: "front" is nearer the opponent, from the mover's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    Front,
    Rear,
}

/// One piece of a stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// The piece at this end: 前 / 后; WXF `3+`, `++`.
    End(End),
    /// The middle piece of an odd stack of three or more: 中; WXF `33`.
    Middle,
    /// The k-th piece from the front, 1-based: 一 … 五 in the traditional 一兵九.
    Nth(u8),
    /// The end piece of a stack of two or three, the one next to it in a stack of four
    /// or five: WXF `C+`, `C-` (where `++` and `--` name the ends).
    Inner(End),
}

/// What a written origin denotes, whichever notation wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// Every piece of the kind on this file (1-9 from the mover's right); the motion
    /// picks among them: 炮二.
    File(u8),
    /// The piece on this file, or the middle one where the file holds an odd stack of
    /// three or more: WXF `C2`, `P5`.
    FileOrMiddle(u8),
    /// This place in each stack of the kind, the file unnamed: 前炮; WXF `C+`, `++`.
    Stacked(Place),
    /// The k-th piece (1-based) counted over every stack of the kind: files in the
    /// mover's order (right to left), then front to back on each: 一兵 … 五兵.
    Counted(u8),
    /// This place in the stack on this file: 前兵九; WXF `3+`, `33`.
    OnFile(Place, u8),
}

/// Where a piece stands among the pieces of its kind: what a notation chooses its name
/// from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Standing {
    /// Named by its file (1-9 from the mover's right): alone there, or an advisor or
    /// elephant, whose direction tells two on a file apart.
    Alone { file: u8 },
    /// One of `len` pieces of its kind on its file, `depth` from the front (0-based).
    /// `across` is set for a soldier while two or more files hold stacks of soldiers:
    /// its 0-based place in the count of [`Origin::Counted`].
    Stacked {
        file: u8,
        len: usize,
        depth: usize,
        across: Option<usize>,
    },
}

/// Where the `piece` on `from` stands.
pub(super) fn standing(pos: &Position, piece: Piece, from: Square) -> Standing {
    let file = own_file(piece.color, from);
    let col = column(pos, piece, from.file());
    if !uses_markers(piece.role) || col.len() < 2 {
        return Standing::Alone { file };
    }
    let across = if piece.role == Role::Soldier {
        let all = stacks(pos, piece);
        if all.len() >= 2 {
            all.iter().flatten().position(|&s| s == from)
        } else {
            None
        }
    } else {
        None
    };
    Standing::Stacked {
        file,
        len: col.len(),
        depth: col.iter().position(|&s| s == from).unwrap_or(0),
        across,
    }
}

/// The points `origin` can denote for `piece` (of the side to move); the motion then
/// picks among them. `text` is the move text, for the errors.
pub(super) fn resolve(
    pos: &Position,
    text: &str,
    piece: Piece,
    origin: Origin,
) -> Result<Stack, NotationError> {
    let no_place = || NotationError::NoSuchStackPlace {
        text: text.to_owned(),
        piece,
    };
    let file_column = |n: u8| -> Result<Stack, NotationError> {
        let col = file_of_own(piece.color, n)
            .map(|f| column(pos, piece, f))
            .unwrap_or_default();
        if col.is_empty() {
            Err(NotationError::NoPieceOnFile {
                text: text.to_owned(),
                piece,
                file: n,
            })
        } else {
            Ok(col)
        }
    };
    let all_stacks = || {
        let all = stacks(pos, piece);
        if all.is_empty() {
            Err(NotationError::NotStacked {
                text: text.to_owned(),
                piece,
            })
        } else {
            Ok(all)
        }
    };
    let one = |sq: Option<Square>| -> Result<Stack, NotationError> {
        sq.map(|s| [s].into_iter().collect()).ok_or_else(no_place)
    };
    match origin {
        Origin::File(n) => file_column(n),
        Origin::FileOrMiddle(n) => {
            let col = file_column(n)?;
            if uses_markers(piece.role) && col.len() % 2 == 1 && col.len() >= 3 {
                one(pick(Place::Middle, &col))
            } else {
                Ok(col)
            }
        }
        Origin::Stacked(place) => {
            let out: Stack = all_stacks()?
                .iter()
                .filter_map(|s| pick(place, s))
                .collect();
            if out.is_empty() {
                Err(no_place())
            } else {
                Ok(out)
            }
        }
        Origin::Counted(k) => {
            let all = all_stacks()?;
            let mut flat = all.iter().flatten();
            one(usize::from(k)
                .checked_sub(1)
                .and_then(|i| flat.nth(i))
                .copied())
        }
        Origin::OnFile(place, n) => {
            let col = file_column(n)?;
            if col.len() < 2 {
                return Err(no_place());
            }
            one(pick(place, &col))
        }
    }
}

/// The piece at `place` in one stack (front first).
fn pick(place: Place, stack: &Stack) -> Option<Square> {
    let n = stack.len();
    let from_front = |i: usize| stack.get(i).copied();
    let from_rear = |i: usize| n.checked_sub(1 + i).and_then(from_front);
    match place {
        Place::End(End::Front) => from_front(0),
        Place::End(End::Rear) => from_rear(0),
        Place::Middle if n % 2 == 1 && n >= 3 => from_front(n / 2),
        Place::Middle => None,
        Place::Nth(k) => from_front(usize::from(k).checked_sub(1)?),
        Place::Inner(end) => {
            let inner = usize::from(n >= 4);
            match end {
                End::Front => from_front(inner),
                End::Rear => from_rear(inner),
            }
        }
    }
}

/// The pieces equal to `piece` on `file`, the one nearest the opponent first.
fn column(pos: &Position, piece: Piece, file: File) -> Stack {
    let mut stack = Stack::new();
    for i in 0..10u32 {
        let r = match piece.color {
            Color::Red => 9 - i,
            Color::Black => i,
        };
        let sq = Square::from_coords(file, Rank::new(r));
        if pos.piece_at(sq) == Some(piece) {
            stack.push(sq);
        }
    }
    stack
}

/// The stacks of `piece` (files holding two or more, pieces front first), in the mover's
/// file order.
fn stacks(pos: &Position, piece: Piece) -> ArrayVec<Stack, 9> {
    let mut out = ArrayVec::new();
    for n in 1..=9u8 {
        if let Some(file) = file_of_own(piece.color, n) {
            let col = column(pos, piece, file);
            if col.len() >= 2 {
                out.push(col);
            }
        }
    }
    out
}

/// Whether stacked pieces of this role are told apart by their place (前/后, `+`/`-`).
/// Advisors and elephants are not: the direction already tells them apart.
fn uses_markers(role: Role) -> bool {
    matches!(
        role,
        Role::Horse | Role::Chariot | Role::Cannon | Role::Soldier
    )
}
