//! Chinese file notation (中文纵线记谱): `炮二平五`, `马8进7`, `前炮平四`, `一兵平五`.
//!
//! See the [module documentation](super) for the conventions.

use arrayvec::ArrayVec;

use super::{
    Dir, Motion, NotationError, Stack, column, file_of_own, motion_of, own_file, select, stacks,
    uses_markers,
};
use crate::{Color, Move, Piece, Position, Role, Square};

/// Chinese numerals 1-9: Red's file numbers, and the stack ordinals of both sides.
const NUMERALS: [char; 9] = ['一', '二', '三', '四', '五', '六', '七', '八', '九'];

/// Where a piece sits within the pieces of its kind on its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// 前: the one nearest the opponent.
    Front,
    /// 中: the middle one of three (or of five).
    Middle,
    /// 后: the one nearest its own side.
    Rear,
    /// 一 … 五, counted from the front (1-based).
    Nth(u8),
}

/// How the notation names the moving piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// 炮二: the piece on this file (numbered from the mover's right).
    File(u8),
    /// 前炮, 一兵: a place in the stacks, without the file.
    Place(Place),
    /// 前兵九 (traditional): a place within the stack on this file.
    PlaceOnFile(Place, u8),
}

fn piece_char(p: Piece) -> char {
    match (p.role, p.color) {
        (Role::General, Color::Red) => '帅',
        (Role::General, Color::Black) => '将',
        (Role::Advisor, Color::Red) => '仕',
        (Role::Advisor, Color::Black) => '士',
        (Role::Elephant, Color::Red) => '相',
        (Role::Elephant, Color::Black) => '象',
        (Role::Horse, _) => '马',
        (Role::Chariot, _) => '车',
        (Role::Cannon, _) => '炮',
        (Role::Soldier, Color::Red) => '兵',
        (Role::Soldier, Color::Black) => '卒',
    }
}

/// A number 1-9 as `c` writes it: Chinese numerals for Red, digits for Black.
fn numeral(c: Color, n: u8) -> char {
    match c {
        Color::Red => NUMERALS
            .get(usize::from(n).wrapping_sub(1))
            .copied()
            .unwrap_or('?'),
        Color::Black => char::from_digit(u32::from(n), 10).unwrap_or('?'),
    }
}

fn place_char(p: Place) -> char {
    match p {
        Place::Front => '前',
        Place::Middle => '中',
        Place::Rear => '后',
        Place::Nth(k) => NUMERALS
            .get(usize::from(k).wrapping_sub(1))
            .copied()
            .unwrap_or('?'),
    }
}

/// How the piece on `from` is named in a move.
fn describe(pos: &Position, piece: Piece, from: Square) -> Origin {
    let file = own_file(piece.color, from);
    let col = column(pos, piece, from.file());
    if !uses_markers(piece.role) || col.len() < 2 {
        return Origin::File(file);
    }
    if piece.role == Role::Soldier {
        let all = stacks(pos, piece);
        if all.len() >= 2 {
            // Numbered across the stacked files: the mover's files right to left,
            // then front to back on each.
            if let Some(i) = all
                .iter()
                .flat_map(|(_, s)| s.iter())
                .position(|&s| s == from)
            {
                return Origin::Place(Place::Nth(i as u8 + 1));
            }
        }
    }
    let idx = col.iter().position(|&s| s == from).unwrap_or(0);
    let place = match col.len() {
        2 | 3 if idx == 0 => Place::Front,
        2 | 3 if idx + 1 == col.len() => Place::Rear,
        2 | 3 => Place::Middle,
        _ => Place::Nth(idx as u8 + 1),
    };
    Origin::Place(place)
}

/// Writes `m` in Chinese file notation, e.g. `炮二平五` or `马8进7`.
///
/// The move is named from the side of the piece on `m.from()`; a move from an empty
/// point is written in ICCS, as there is no piece to name.
pub fn to_chinese(pos: &Position, m: Move) -> String {
    let Some(piece) = pos.piece_at(m.from()) else {
        return m.to_string();
    };
    let c = piece.color;
    let mut s = String::with_capacity(16);
    match describe(pos, piece, m.from()) {
        Origin::File(n) => {
            s.push(piece_char(piece));
            s.push(numeral(c, n));
        }
        Origin::Place(p) => {
            s.push(place_char(p));
            s.push(piece_char(piece));
        }
        Origin::PlaceOnFile(p, n) => {
            s.push(place_char(p));
            s.push(piece_char(piece));
            s.push(numeral(c, n));
        }
    }
    let motion = motion_of(c, piece.role, m);
    s.push(match motion.dir {
        Dir::Forward => '进',
        Dir::Backward => '退',
        Dir::Sideways => '平',
    });
    s.push(numeral(c, motion.value));
    s
}

/// One character of a Chinese move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Piece(Role),
    /// 1-9 in Chinese numerals, fullwidth or ASCII digits.
    Number(u8),
    Place(Place),
    Dir(Dir),
    Other(char),
}

fn token(c: char) -> Token {
    let role = match c {
        '帅' | '帥' | '将' | '將' => Some(Role::General),
        '仕' | '士' => Some(Role::Advisor),
        '相' | '象' => Some(Role::Elephant),
        '马' | '馬' | '傌' => Some(Role::Horse),
        '车' | '車' | '俥' => Some(Role::Chariot),
        '炮' | '砲' | '包' => Some(Role::Cannon),
        '兵' | '卒' => Some(Role::Soldier),
        _ => None,
    };
    if let Some(r) = role {
        return Token::Piece(r);
    }
    if let Some(i) = NUMERALS.iter().position(|&n| n == c) {
        return Token::Number(i as u8 + 1);
    }
    match c {
        '1'..='9' => Token::Number(c as u8 - b'0'),
        '１'..='９' => Token::Number((c as u32 - '０' as u32) as u8),
        '前' => Token::Place(Place::Front),
        '中' => Token::Place(Place::Middle),
        '后' | '後' => Token::Place(Place::Rear),
        '进' | '進' => Token::Dir(Dir::Forward),
        '退' => Token::Dir(Dir::Backward),
        '平' => Token::Dir(Dir::Sideways),
        _ => Token::Other(c),
    }
}

/// Whether a number written before the piece is a stack ordinal, 一 … 五.
fn is_ordinal(k: u8) -> bool {
    (1..=5).contains(&k)
}

/// Reads a move of the side to move in Chinese file notation and checks it is legal.
///
/// Accepts `炮二平五`, `马8进7`, `前炮平四`, `中兵平五`, `一兵平五`, the traditional
/// `前兵九平八` and `前九平八`, with the variants listed in the
/// [module documentation](super). Whitespace is ignored.
///
/// # Errors
/// A [`NotationError`] naming the problem.
pub fn parse_chinese(pos: &Position, text: &str) -> Result<Move, NotationError> {
    let mut toks: ArrayVec<Token, 5> = ArrayVec::new();
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        if toks.try_push(token(c)).is_err() {
            return Err(NotationError::Malformed {
                text: text.to_owned(),
                reason: "too long: a Chinese move has four or five characters, e.g. 炮二平五",
            });
        }
    }
    if toks.is_empty() {
        return Err(NotationError::Empty);
    }
    use Token as T;
    let (role, origin, dir, value) = match *toks.as_slice() {
        [T::Piece(r), T::Number(f), T::Dir(d), T::Number(v)] => (r, Origin::File(f), d, v),
        [T::Place(p), T::Piece(r), T::Dir(d), T::Number(v)] => (r, Origin::Place(p), d, v),
        [T::Number(k), T::Piece(r), T::Dir(d), T::Number(v)] if is_ordinal(k) => {
            (r, Origin::Place(Place::Nth(k)), d, v)
        }
        [
            T::Place(p),
            T::Piece(r),
            T::Number(f),
            T::Dir(d),
            T::Number(v),
        ] => (r, Origin::PlaceOnFile(p, f), d, v),
        [
            T::Number(k),
            T::Piece(r),
            T::Number(f),
            T::Dir(d),
            T::Number(v),
        ] if is_ordinal(k) => (r, Origin::PlaceOnFile(Place::Nth(k), f), d, v),
        [T::Place(p), T::Number(f), T::Dir(d), T::Number(v)] => {
            (Role::Soldier, Origin::PlaceOnFile(p, f), d, v)
        }
        _ => return Err(syntax_error(text, &toks)),
    };
    let piece = Piece::new(pos.turn(), role);
    let origins = resolve(pos, text, piece, origin)?;
    select(pos, text, piece, &origins, Motion { dir, value })
}

/// The most useful complaint about text that fits none of the forms.
fn syntax_error(text: &str, toks: &[Token]) -> NotationError {
    let text = text.to_owned();
    let unknown = toks.iter().enumerate().find_map(|(i, t)| match t {
        Token::Other(c) => Some((i, *c)),
        _ => None,
    });
    match unknown {
        // An unknown character where the piece stands (first, or second after a
        // marker) is most likely a piece name.
        Some((i, found))
            if i == 0 || (i == 1 && matches!(toks[0], Token::Place(_) | Token::Number(_))) =>
        {
            NotationError::UnknownPiece { text, found }
        }
        Some(_) => NotationError::Malformed {
            text,
            reason: "unexpected character: expected numerals 一-九 or 1-9 and 进, 退 or 平",
        },
        None if toks.len() < 4 => NotationError::Malformed {
            text,
            reason: "too short: a Chinese move has four or five characters, e.g. 炮二平五",
        },
        None => NotationError::Malformed {
            text,
            reason: "expected piece, file, 进/退/平 and a number (炮二平五), or a marker \
                     前/中/后/一-五 and a piece (前炮平四)",
        },
    }
}

/// The points the origin can denote; the motion then picks among them.
fn resolve(
    pos: &Position,
    text: &str,
    piece: Piece,
    origin: Origin,
) -> Result<Stack, NotationError> {
    let no_place = || NotationError::NoSuchStackPlace {
        text: text.to_owned(),
        piece,
    };
    match origin {
        Origin::File(n) => {
            let col = file_of_own(piece.color, n)
                .map(|f| column(pos, piece, f))
                .unwrap_or_default();
            if col.is_empty() {
                return Err(NotationError::NoPieceOnFile {
                    text: text.to_owned(),
                    piece,
                    file: n,
                });
            }
            Ok(col)
        }
        Origin::Place(place) => {
            let all = stacks(pos, piece);
            if all.is_empty() {
                return Err(NotationError::NotStacked {
                    text: text.to_owned(),
                    piece,
                });
            }
            let mut out = Stack::new();
            match place {
                Place::Nth(k) if all.len() >= 2 => {
                    let mut flat = all.iter().flat_map(|(_, s)| s.iter());
                    out.extend(
                        usize::from(k)
                            .checked_sub(1)
                            .and_then(|i| flat.nth(i))
                            .copied(),
                    );
                }
                _ => out.extend(all.iter().filter_map(|(_, s)| pick(place, s))),
            }
            if out.is_empty() {
                Err(no_place())
            } else {
                Ok(out)
            }
        }
        Origin::PlaceOnFile(place, n) => {
            let col = file_of_own(piece.color, n)
                .map(|f| column(pos, piece, f))
                .unwrap_or_default();
            if col.is_empty() {
                return Err(NotationError::NoPieceOnFile {
                    text: text.to_owned(),
                    piece,
                    file: n,
                });
            }
            if col.len() < 2 {
                return Err(no_place());
            }
            pick(place, &col)
                .map(|s| [s].into_iter().collect())
                .ok_or_else(no_place)
        }
    }
}

/// The piece at `place` in one stack (front first).
fn pick(place: Place, stack: &Stack) -> Option<Square> {
    let n = stack.len();
    match place {
        Place::Front => stack.first().copied(),
        Place::Rear => stack.last().copied(),
        Place::Middle if n % 2 == 1 && n >= 3 => stack.get(n / 2).copied(),
        Place::Middle => None,
        Place::Nth(k) => stack.get(usize::from(k).checked_sub(1)?).copied(),
    }
}
