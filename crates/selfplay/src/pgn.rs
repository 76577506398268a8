//! PGN game records of self-play games, in the format of [`xq_data::pgn::PgnRecord`]:
//! ICCS moves (readable by `xq_data::read_pgn` and by Xiangqi GUIs that take ICCS), the
//! result, the self-play tags (`Termination`, `Worker`, seeds, `Resign`), and Chinese
//! notation as move comments.

use xq_core::notation::{Style, format_move};
use xq_data::pgn::PgnRecord;
pub use xq_data::pgn::today;

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
    let resign = match (g.resign_enabled, g.false_positive) {
        (true, _) => "enabled",
        (false, None) => "disabled",
        (false, Some(false)) => "disabled; a resignation would have been right",
        (false, Some(true)) => "disabled; a resignation would have been wrong",
    };
    let record = PgnRecord::new(
        g.start.clone(),
        g.moves.clone(),
        Some(g.termination.outcome()),
    )
    .event("xqzero self-play")
    .site(ctx.host)
    .date(ctx.date)
    .round(g.id.to_string())
    .players(&g.model, &g.model)
    .tag("Termination", g.termination.name())
    .tag("Worker", ctx.worker)
    .tag("Seed", ctx.seed.to_string())
    .tag("GameSeed", g.seed.to_string())
    .tag("Resign", resign);
    let record = if ctx.chinese_comments {
        record.comment_moves(|pos, m| format_move(pos, m, Style::Chinese))
    } else {
        record
    };
    record.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Termination;
    use xq_core::{Color, Position, Reason};

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
            resign_samples: None,
            model: "uniform".into(),
            full_searches: 0,
            decided_searches: 0,
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
