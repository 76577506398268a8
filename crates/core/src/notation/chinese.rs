//! Chinese file notation (中文纵线记谱): `炮二平五`, `马8进7`, `前炮平四`, `一兵平五`.
//!
//! See the [module documentation](super) for the conventions.

use arrayvec::ArrayVec;

use super::{
    Dir, Motion, NotationError, motion_of,
    origin::{End, Origin, Place, Standing, resolve, standing},
    select,
};
use crate::{Color, Move, Piece, Position, Role, Square};

/// Chinese numerals 1-9: Red's file numbers, and the stack ordinals of both sides.
const NUMERALS: [char; 9] = ['一', '二', '三', '四', '五', '六', '七', '八', '九'];

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

/// 一 … 九 for 1-9: a stack ordinal, in Chinese numerals for both sides (they count
/// pieces, not files).
fn ordinal(k: usize) -> char {
    NUMERALS.get(k.wrapping_sub(1)).copied().unwrap_or('?')
}

/// Writes the name of the piece on `from`: `炮二` by its file; `前炮`, `中兵`, `后马` in a
/// stack of two or three; `一兵` … `五兵` counted from the front in a stack of four or
/// five, and over the files when soldiers are stacked on two.
fn push_origin(s: &mut String, pos: &Position, piece: Piece, from: Square) {
    let marker = match standing(pos, piece, from) {
        Standing::Alone { file } => {
            s.push(piece_char(piece));
            s.push(numeral(piece.color, file));
            return;
        }
        Standing::Stacked {
            across: Some(i), ..
        } => ordinal(i + 1),
        Standing::Stacked {
            len: 2 | 3,
            depth: 0,
            ..
        } => '前',
        Standing::Stacked {
            len: len @ (2 | 3),
            depth,
            ..
        } if depth + 1 == len => '后',
        Standing::Stacked { len: 2 | 3, .. } => '中',
        Standing::Stacked { depth, .. } => ordinal(depth + 1),
    };
    s.push(marker);
    s.push(piece_char(piece));
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
    push_origin(&mut s, pos, piece, m.from());
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
        '前' => Token::Place(Place::End(End::Front)),
        '中' => Token::Place(Place::Middle),
        '后' | '後' => Token::Place(Place::End(End::Rear)),
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
        [T::Place(p), T::Piece(r), T::Dir(d), T::Number(v)] => (r, Origin::Stacked(p), d, v),
        [T::Number(k), T::Piece(r), T::Dir(d), T::Number(v)] if is_ordinal(k) => {
            (r, Origin::Counted(k), d, v)
        }
        [
            T::Place(p),
            T::Piece(r),
            T::Number(f),
            T::Dir(d),
            T::Number(v),
        ] => (r, Origin::OnFile(p, f), d, v),
        [
            T::Number(k),
            T::Piece(r),
            T::Number(f),
            T::Dir(d),
            T::Number(v),
        ] if is_ordinal(k) => (r, Origin::OnFile(Place::Nth(k), f), d, v),
        [T::Place(p), T::Number(f), T::Dir(d), T::Number(v)] => {
            (Role::Soldier, Origin::OnFile(p, f), d, v)
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
