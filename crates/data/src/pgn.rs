//! Xiangqi PGN with ICCS moves: the reader for the master-game collections and for
//! everything xqzero writes, and the one writer of xqzero's PGN ([`PgnRecord`]: self-play
//! records, match and tournament games).
//!
//! The reader takes `[Event ...]`, `[Red ...]`, `[Black ...]`, optional `[Result ...]`
//! and `[FEN ...]` headers, then numbered moves such as `1. h2e2 h9g7 2. h0g2 ...`.
//!
//! Games are parsed one at a time, and a game with an error yields a [`PgnError`]
//! naming the line; the reader then continues with the next game, so one bad record
//! does not lose a whole collection. Accepted move text: move numbers (`1.`, `1...`),
//! ICCS moves (`h2e2`, `H2-E2`), result tokens (`1-0`, `0-1`, `1/2-1/2`, `*`),
//! `{...}` and `;` comments, `(...)` variations (skipped) and `$n` annotations.

use std::fmt;

use xq_core::{Color, Move, Position};

use crate::record::Outcome;

/// One game read from PGN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnGame {
    /// Headers in file order, e.g. `("Event", "China Team Championship 1998")`.
    pub headers: Vec<(String, String)>,
    /// The start position: the `FEN` header's, or the standard one.
    pub start: Position,
    pub moves: Vec<Move>,
    /// From the `Result` header, else from the result token after the moves; `None`
    /// when neither says (or they say `*`).
    pub result: Option<Outcome>,
    /// Line of the game's first line in the input (1-based).
    pub line: usize,
}

impl PgnGame {
    /// The value of a header, if present.
    pub fn header(&self, key: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a game could not be read; `line` is 1-based in the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PgnError {
    #[error("line {line}: malformed header {text:?} (expected [Key \"value\"])")]
    BadHeader { line: usize, text: String },
    #[error("line {line}: bad FEN header {fen:?}: {reason}")]
    BadFen {
        line: usize,
        fen: String,
        reason: String,
    },
    #[error("line {line}: unknown result {text:?}")]
    BadResult { line: usize, text: String },
    #[error("line {line}: {token:?} is not an ICCS move, move number or result")]
    BadToken { line: usize, token: String },
    #[error("line {line}: move {number} ({token}) is illegal in {fen}")]
    IllegalMove {
        line: usize,
        number: usize,
        token: String,
        fen: String,
    },
    #[error("line {line}: unterminated {what}")]
    Unterminated { line: usize, what: &'static str },
    #[error("line {line}: the Result header says {header} but the move text ends with {text}")]
    ResultMismatch {
        line: usize,
        header: &'static str,
        text: &'static str,
    },
}

impl PgnError {
    /// The input line the error is about.
    pub fn line(&self) -> usize {
        match self {
            PgnError::BadHeader { line, .. }
            | PgnError::BadFen { line, .. }
            | PgnError::BadResult { line, .. }
            | PgnError::BadToken { line, .. }
            | PgnError::IllegalMove { line, .. }
            | PgnError::Unterminated { line, .. }
            | PgnError::ResultMismatch { line, .. } => *line,
        }
    }
}

/// Reads every game of a PGN text: one `Result` per game, in order.
pub fn read_pgn(text: &str) -> Vec<Result<PgnGame, PgnError>> {
    split_games(text)
        .into_iter()
        .map(|g| parse_game(&g))
        .collect()
}

/// A game's lines, with the 1-based number of the first.
struct GameText<'a> {
    first_line: usize,
    lines: Vec<&'a str>,
}

/// Splits the input into games: a game starts at a header line that follows move text
/// (or at the first non-blank line).
fn split_games(text: &str) -> Vec<GameText<'_>> {
    let mut games: Vec<GameText<'_>> = Vec::new();
    let mut in_moves = false;
    let mut in_comment = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let starts_header = !in_comment && line.starts_with('[');
        if games.is_empty() || (starts_header && in_moves) {
            if line.is_empty() {
                continue;
            }
            games.push(GameText {
                first_line: i + 1,
                lines: Vec::new(),
            });
            in_moves = false;
        }
        if !line.is_empty() && !starts_header {
            in_moves = true;
        }
        // Track `{` comments across lines so a `[` inside one does not split a game.
        for c in line.chars() {
            match c {
                '{' => in_comment = true,
                '}' => in_comment = false,
                _ => {}
            }
        }
        if let Some(g) = games.last_mut() {
            g.lines.push(raw);
        }
    }
    games
}

fn parse_result(s: &str) -> Option<Option<Outcome>> {
    match s {
        "1-0" => Some(Some(Outcome::RedWins)),
        "0-1" => Some(Some(Outcome::BlackWins)),
        "1/2-1/2" | "½-½" => Some(Some(Outcome::Draw)),
        "*" => Some(None),
        _ => None,
    }
}

fn parse_game(g: &GameText<'_>) -> Result<PgnGame, PgnError> {
    let mut headers = Vec::new();
    let mut idx = 0;
    // Header section.
    while idx < g.lines.len() {
        let line_no = g.first_line + idx;
        let line = g.lines[idx].trim();
        if line.is_empty() {
            idx += 1;
            continue;
        }
        if !line.starts_with('[') {
            break;
        }
        headers.push(parse_header(line, line_no)?);
        idx += 1;
    }
    let find = |key: &str| {
        headers
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v): &(String, String)| v.clone())
    };
    let header_line = |key: &str| {
        g.lines
            .iter()
            .position(|l| l.trim_start().starts_with(&format!("[{key} ")))
            .map_or(g.first_line, |i| g.first_line + i)
    };
    let start = match find("FEN") {
        Some(fen) => Position::from_fen(&fen).map_err(|e| PgnError::BadFen {
            line: header_line("FEN"),
            fen: fen.clone(),
            reason: e.to_string(),
        })?,
        None => Position::startpos(),
    };
    let header_result = match find("Result") {
        Some(r) => parse_result(r.trim()).ok_or_else(|| PgnError::BadResult {
            line: header_line("Result"),
            text: r.clone(),
        })?,
        None => None,
    };

    // Move text.
    let mut pos = start.clone();
    let mut moves = Vec::new();
    let mut text_result: Option<Option<Outcome>> = None;
    let mut depth = 0usize; // variation nesting
    let mut comment_start: Option<usize> = None;
    let mut variation_start = 0;
    for (offset, raw) in g.lines[idx..].iter().enumerate() {
        let line_no = g.first_line + idx + offset;
        let mut rest = raw.trim();
        while !rest.is_empty() {
            if comment_start.is_some() {
                match rest.find('}') {
                    Some(end) => {
                        comment_start = None;
                        rest = &rest[end + 1..];
                    }
                    None => rest = "",
                }
                continue;
            }
            rest = rest.trim_start();
            if rest.is_empty() {
                break;
            }
            if rest.starts_with(';') {
                break;
            }
            if let Some(r) = rest.strip_prefix('{') {
                comment_start = Some(line_no);
                rest = r;
                continue;
            }
            if let Some(r) = rest.strip_prefix('(') {
                if depth == 0 {
                    variation_start = line_no;
                }
                depth += 1;
                rest = r;
                continue;
            }
            if let Some(r) = rest.strip_prefix(')') {
                if depth == 0 {
                    return Err(PgnError::BadToken {
                        line: line_no,
                        token: ")".into(),
                    });
                }
                depth -= 1;
                rest = r;
                continue;
            }
            let end = rest
                .find(|c: char| c.is_whitespace() || matches!(c, '{' | '(' | ')' | ';'))
                .unwrap_or(rest.len());
            let token = &rest[..end];
            rest = &rest[end..];
            if depth > 0 {
                continue;
            }
            if let Some(r) = parse_result(token) {
                text_result = Some(r);
                continue;
            }
            if token.starts_with('$') && token[1..].bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            // Move numbers, possibly glued to the move: "1.", "1...", "12.h2e2".
            let digits = token.bytes().take_while(u8::is_ascii_digit).count();
            let after_digits = &token[digits..];
            let token = if digits > 0 && after_digits.starts_with('.') {
                let m = after_digits.trim_start_matches('.');
                if m.is_empty() {
                    continue;
                }
                m
            } else {
                token
            };
            if text_result.is_some() {
                return Err(PgnError::BadToken {
                    line: line_no,
                    token: token.to_owned(),
                });
            }
            let mv = Move::from_iccs(token).map_err(|_| PgnError::BadToken {
                line: line_no,
                token: token.to_owned(),
            })?;
            if !pos.is_legal(mv) {
                return Err(PgnError::IllegalMove {
                    line: line_no,
                    number: moves.len() / 2 + 1,
                    token: token.to_owned(),
                    fen: pos.fen(),
                });
            }
            pos.play_unchecked(mv);
            moves.push(mv);
        }
    }
    if let Some(line) = comment_start {
        return Err(PgnError::Unterminated {
            line,
            what: "{ comment",
        });
    }
    if depth > 0 {
        return Err(PgnError::Unterminated {
            line: variation_start,
            what: "( variation",
        });
    }
    let result = match (header_result, text_result) {
        (Some(h), Some(Some(t))) if h != t => {
            return Err(PgnError::ResultMismatch {
                line: header_line("Result"),
                header: h.pgn(),
                text: t.pgn(),
            });
        }
        (Some(h), _) => Some(h),
        (None, t) => t.flatten(),
    };
    Ok(PgnGame {
        headers,
        start,
        moves,
        result,
        line: g.first_line,
    })
}

fn parse_header(line: &str, line_no: usize) -> Result<(String, String), PgnError> {
    let bad = || PgnError::BadHeader {
        line: line_no,
        text: line.to_owned(),
    };
    let inner = line
        .strip_prefix('[')
        .and_then(|l| l.strip_suffix(']'))
        .ok_or_else(bad)?
        .trim();
    let (key, value) = inner.split_once(char::is_whitespace).ok_or_else(bad)?;
    let value = value.trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .ok_or_else(bad)?;
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(bad());
    }
    Ok((
        key.to_owned(),
        value.replace("\\\"", "\"").replace("\\\\", "\\"),
    ))
}

/// A game to write as PGN, in the one format of every PGN file xqzero writes.
///
/// The format is export-style PGN, so that other tools (Xiangqi GUIs, Fairy-Stockfish
/// based ones, which take ICCS moves) read it too:
///
/// * the Seven Tag Roster in its order: `Event`, `Site`, `Date`, `Round`, `Red`,
///   `Black`, `Result` (`?` and `????.??.??` where unknown, `*` for no result);
/// * `Variant "xiangqi"`, `SetUp "1"` and the start `FEN`, always, so that no reader has
///   to assume the start position; `PlyCount`;
/// * the caller's tags ([`PgnRecord::tag`]), in the order given;
/// * a blank line, then the moves in ICCS numbered from the FEN's move number (`N...`
///   when Black moves first), each optionally followed by a `{comment}`; an optional
///   closing comment; the result; lines of at most 79 characters; a blank line.
///
/// Tag values have `\` and `"` escaped; line breaks in values and comments become
/// spaces and `}` in comments becomes `)`, so that [`read_pgn`] reads back every record
/// written (headers, start, moves and result).
#[derive(Debug, Clone)]
pub struct PgnRecord {
    event: String,
    site: String,
    date: String,
    round: String,
    red: String,
    black: String,
    result: Option<Outcome>,
    start: Position,
    moves: Vec<Move>,
    tags: Vec<(&'static str, String)>,
    /// Empty, or one comment per move.
    comments: Vec<String>,
    closing: Option<String>,
}

impl PgnRecord {
    /// A game from `start` with `moves` (legal ones: the numbering and comments replay
    /// them) and `result` (`None`: unfinished, `*`); every other tag unknown.
    pub fn new(start: Position, moves: Vec<Move>, result: Option<Outcome>) -> PgnRecord {
        let unknown = || "?".to_owned();
        PgnRecord {
            event: unknown(),
            site: unknown(),
            date: "????.??.??".to_owned(),
            round: unknown(),
            red: unknown(),
            black: unknown(),
            result,
            start,
            moves,
            tags: Vec::new(),
            comments: Vec::new(),
            closing: None,
        }
    }

    pub fn event(mut self, event: impl Into<String>) -> PgnRecord {
        self.event = event.into();
        self
    }

    pub fn site(mut self, site: impl Into<String>) -> PgnRecord {
        self.site = site.into();
        self
    }

    /// `YYYY.MM.DD`, e.g. [`today`].
    pub fn date(mut self, date: impl Into<String>) -> PgnRecord {
        self.date = date.into();
        self
    }

    pub fn round(mut self, round: impl Into<String>) -> PgnRecord {
        self.round = round.into();
        self
    }

    /// The names of the Red and Black players.
    pub fn players(mut self, red: impl Into<String>, black: impl Into<String>) -> PgnRecord {
        self.red = red.into();
        self.black = black.into();
        self
    }

    /// Adds a tag after the standard ones.
    ///
    /// # Panics
    /// If `name` is not a PGN symbol (letters, digits and `_`): names are literals in
    /// the code, so this is a programming error that tests catch.
    pub fn tag(mut self, name: &'static str, value: impl Into<String>) -> PgnRecord {
        assert!(is_tag_name(name), "{name:?} is not a PGN tag name");
        self.tags.push((name, value.into()));
        self
    }

    /// A comment after every move: `comment(position before the move, move)`.
    pub fn comment_moves(
        mut self,
        mut comment: impl FnMut(&Position, Move) -> String,
    ) -> PgnRecord {
        let mut pos = self.start.clone();
        self.comments = self
            .moves
            .iter()
            .map(|&m| {
                let c = comment(&pos, m);
                pos.play_unchecked(m);
                c
            })
            .collect();
        self
    }

    /// A comment before the result, e.g. how the game ended.
    pub fn closing_comment(mut self, comment: impl Into<String>) -> PgnRecord {
        self.closing = Some(comment.into());
        self
    }
}

/// Whether `name` can be a tag name that [`read_pgn`] reads back.
const fn is_tag_name(name: &str) -> bool {
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !(b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            return false;
        }
        i += 1;
    }
    !b.is_empty()
}

impl fmt::Display for PgnRecord {
    /// The game as PGN text, ending with a blank line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let result = self.result.map_or("*", Outcome::pgn);
        let plies = self.moves.len().to_string();
        let fen = self.start.fen();
        let standard = [
            ("Event", self.event.as_str()),
            ("Site", &self.site),
            ("Date", &self.date),
            ("Round", &self.round),
            ("Red", &self.red),
            ("Black", &self.black),
            ("Result", result),
            ("Variant", "xiangqi"),
            ("SetUp", "1"),
            ("FEN", &fen),
            ("PlyCount", &plies),
        ];
        let extra = self.tags.iter().map(|(k, v)| (*k, v.as_str()));
        for (name, value) in standard.into_iter().chain(extra) {
            let value = one_line(value).replace('\\', "\\\\").replace('"', "\\\"");
            writeln!(f, "[{name} \"{value}\"]")?;
        }
        writeln!(f)?;

        let mut lines = Lines::default();
        let mut pos = self.start.clone();
        let mut number = pos.fullmoves();
        for (i, &m) in self.moves.iter().enumerate() {
            let mut token = match pos.turn() {
                Color::Red => format!("{number}. {m}"),
                Color::Black if i == 0 => format!("{number}... {m}"),
                Color::Black => m.to_string(),
            };
            if let Some(c) = self.comments.get(i) {
                token.push_str(&format!(" {{{}}}", comment(c)));
            }
            lines.push(&token);
            if pos.turn() == Color::Black {
                number += 1;
            }
            pos.play_unchecked(m);
        }
        if let Some(c) = &self.closing {
            lines.push(&format!("{{{}}}", comment(c)));
        }
        lines.push(result);
        writeln!(f, "{}\n", lines.finish())
    }
}

/// `text` on one line: line breaks become spaces (the reader is line-based).
fn one_line(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

/// A comment's text, unable to end the comment early.
fn comment(text: &str) -> String {
    one_line(text).replace('}', ")")
}

/// Move text being wrapped: tokens joined by spaces, lines of at most 79 characters
/// (counted in characters, for the Chinese comments) unless one token is longer.
#[derive(Debug, Default)]
struct Lines {
    done: String,
    line: String,
}

impl Lines {
    fn push(&mut self, token: &str) {
        if !self.line.is_empty() && self.line.chars().count() + 1 + token.chars().count() > 79 {
            self.done.push_str(&self.line);
            self.done.push('\n');
            self.line.clear();
        }
        if !self.line.is_empty() {
            self.line.push(' ');
        }
        self.line.push_str(token);
    }

    fn finish(mut self) -> String {
        self.done.push_str(&self.line);
        self.done
    }
}

/// Today's date (UTC) as `YYYY.MM.DD`, for the PGN `Date` tag.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}.{m:02}.{d:02}")
}

/// Howard Hinnant's days-since-epoch to proleptic Gregorian date: `(year, month, day)`
/// of day `z` counted from 1970-01-01 (UTC). The workspace's one calendar: the PGN
/// `Date` tag here, the report's UTC times in `xqz report`.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_are_right_around_leap_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
    }

    #[test]
    fn tag_names_are_pgn_symbols() {
        assert!(is_tag_name("GameSeed"));
        assert!(is_tag_name("Time_2"));
        assert!(!is_tag_name(""));
        assert!(!is_tag_name("Game Seed"));
        assert!(!is_tag_name("Seed]"));
    }
}
