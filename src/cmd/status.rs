//! `xqz status`: plays ICCS moves from a position and prints the state and the result
//! of the game as one JSON object.

use anyhow::{Context, Result};
use serde_json::json;
use xq_core::{Game, GameConfig};

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Prints one JSON object on one line: fen (after all moves), side_to_move (red/black), \
in_check, legal_moves (ICCS), plies (moves played), result (ongoing, red_wins, \
black_wins, draw), reason (checkmate, stalemate, perpetual_check, perpetual_chase, \
perpetual_mate_threat, repetition_draw, move_limit, insufficient_material; null while \
ongoing), winner (red/black/null) and ended_at_ply (null while ongoing).

Moves after the game has ended are accepted; result, reason and ended_at_ply then describe \
the FIRST ending (ply 0 is the given position, ply n the position after the n-th move). \
The rules are the CXA rules as described in docs/RULES.md.")]
pub struct Args {
    /// Position the moves start from (default: the starting position).
    #[arg(long)]
    fen: Option<String>,
    /// The moves, in order, in ICCS (h2e2).
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    moves: Vec<String>,
    /// Plies without capture that draw (120 = 60 moves; 4.2.4 allows fewer).
    #[arg(long, default_value_t = GameConfig::CXA.move_limit, value_name = "PLIES")]
    move_limit: u32,
}

pub fn run(args: Args) -> Result<()> {
    let start = super::parse_fen(args.fen.as_deref())?;
    let config = GameConfig {
        move_limit: args.move_limit,
        ..GameConfig::CXA
    };
    let mut game = Game::with_config(start, config);
    for (i, text) in args.moves.iter().enumerate() {
        game.play_iccs(text)
            .with_context(|| format!("move {} of --moves ({text:?})", i + 1))?;
    }
    let pos = game.position();
    let ending = game.first_ending();
    let legal: Vec<String> = pos.legal_moves().iter().map(ToString::to_string).collect();
    let out = json!({
        "fen": pos.fen(),
        "side_to_move": pos.turn().name(),
        "in_check": pos.is_check(),
        "legal_moves": legal,
        "plies": game.ply(),
        "result": ending.map_or("ongoing", |e| e.outcome.result_name()),
        "reason": ending.map(|e| e.outcome.reason.name()),
        "winner": ending.and_then(|e| e.outcome.winner).map(|c| c.name()),
        "ended_at_ply": ending.map(|e| e.ply),
    });
    println!("{out}");
    Ok(())
}
