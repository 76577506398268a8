//! PGN game records of self-play games: `[Variant "xiangqi"]`, the start `FEN`, ICCS
//! moves (readable by `xq_data::read_pgn` and by Xiangqi GUIs that take ICCS), the
//! result and a `Termination` tag, with Chinese notation as move comments.

use std::fmt::Write as _;

use xq_core::notation::{Style, format_move};

use crate::game::FinishedGame;

/// What a record says about where it was made.
#[derive(Debug, Clone)]
pub struct PgnContext<'a> {
    pub worker: &'a str,
    pub host: &'a str,
    /// `YYYY.MM.DD`.
    pub date: &'a str,
    /// The worker's seed (every game's seed derives from it and the game number).
    pub seed: u64,
    pub chinese_comments: bool,
}

/// One game as PGN text, ending with a blank line.
pub fn game_pgn(g: &FinishedGame, ctx: &PgnContext<'_>) -> String {
    let result = g.termination.outcome().pgn();
    let mut out = String::with_capacity(256 + g.moves.len() * 24);
    let tag = |out: &mut String, k: &str, v: &str| {
        let v = v.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(out, "[{k} \"{v}\"]");
    };
    tag(&mut out, "Event", "xqzero self-play");
    tag(&mut out, "Site", ctx.host);
    tag(&mut out, "Date", ctx.date);
    tag(&mut out, "Round", &g.id.to_string());
    tag(&mut out, "Red", &g.model);
    tag(&mut out, "Black", &g.model);
    tag(&mut out, "Result", result);
    tag(&mut out, "Variant", "xiangqi");
    tag(&mut out, "FEN", &g.start.fen());
    tag(&mut out, "Termination", g.termination.name());
    tag(&mut out, "PlyCount", &g.moves.len().to_string());
    tag(&mut out, "Worker", ctx.worker);
    tag(&mut out, "Seed", &ctx.seed.to_string());
    tag(&mut out, "GameSeed", &g.seed.to_string());
    tag(
        &mut out,
        "Resign",
        match (g.resign_enabled, g.false_positive) {
            (true, _) => "enabled",
            (false, None) => "disabled",
            (false, Some(false)) => "disabled; a resignation would have been right",
            (false, Some(true)) => "disabled; a resignation would have been wrong",
        },
    );
    out.push('\n');

    let mut line = String::new();
    let mut pos = g.start.clone();
    let black_first = pos.turn() == xq_core::Color::Black;
    for (i, &m) in g.moves.iter().enumerate() {
        let mut token = String::new();
        let number = (i + usize::from(black_first)) / 2 + 1;
        if i == 0 && black_first {
            let _ = write!(token, "{number}... ");
        } else if (i + usize::from(black_first)) % 2 == 0 {
            let _ = write!(token, "{number}. ");
        }
        let _ = write!(token, "{m}");
        if ctx.chinese_comments {
            let _ = write!(token, " {{{}}}", format_move(&pos, m, Style::Chinese));
        }
        pos.play_unchecked(m);
        push_token(&mut out, &mut line, &token);
    }
    push_token(&mut out, &mut line, result);
    out.push_str(&line);
    out.push_str("\n\n");
    out
}

/// Appends a token, wrapping lines near 80 columns (counted in characters).
fn push_token(out: &mut String, line: &mut String, token: &str) {
    if !line.is_empty() && line.chars().count() + 1 + token.chars().count() > 79 {
        out.push_str(line);
        out.push('\n');
        line.clear();
    }
    if !line.is_empty() {
        line.push(' ');
    }
    line.push_str(token);
}

/// Today's date (UTC) as `YYYY.MM.DD`, for the PGN `Date` tag.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}.{m:02}.{d:02}")
}

/// Howard Hinnant's days-since-epoch to proleptic Gregorian date.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
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
    use crate::game::Termination;
    use xq_core::{Color, Position, Reason};

    #[test]
    fn civil_dates_are_right_around_leap_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
    }

    #[test]
    fn a_record_reads_back_with_the_same_moves_result_and_tags() {
        let mut pos = Position::startpos();
        let mut moves = Vec::new();
        for s in ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7"] {
            let m = pos.parse_iccs(s).unwrap();
            pos.play(m).unwrap();
            moves.push(m);
        }
        let g = FinishedGame {
            id: 17,
            seed: 5,
            start: Position::startpos(),
            moves: moves.clone(),
            termination: Termination::Rules(xq_core::Outcome::loss(
                Color::Black,
                Reason::Checkmate,
            )),
            target: xq_data::Outcome::RedWins,
            records: Vec::new(),
            resign_enabled: false,
            false_positive: Some(true),
            model: "uniform".into(),
            full_searches: 0,
        };
        let ctx = PgnContext {
            worker: "host-1-ab",
            host: "host",
            date: "2026.11.30",
            seed: 3,
            chinese_comments: true,
        };
        let text = game_pgn(&g, &ctx);
        assert!(text.contains("[Variant \"xiangqi\"]"), "{text}");
        assert!(text.contains("[Termination \"checkmate\"]"), "{text}");
        assert!(text.contains("1. h2e2 {炮二平五} h9g7 {马8进7}"), "{text}");
        let back = xq_data::read_pgn(&text);
        assert_eq!(back.len(), 1);
        let back = back[0].as_ref().unwrap();
        assert_eq!(back.moves, moves);
        assert_eq!(back.result, Some(xq_data::Outcome::RedWins));
        assert_eq!(back.header("Round"), Some("17"));
        assert_eq!(back.header("Seed"), Some("3"));
    }
}
