//! Helpers shared by the search tests: rules-core oracles (mate in one and two, found
//! by brute force with `Game`) and small deterministic evaluators.

#![allow(dead_code)]

use xq_core::{Color, Game, GameConfig, Move, Position, Reason, Role};
use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator};

/// A game from `fen` with the search's rules settings (repetition judged on recurrence).
pub fn game(fen: &str) -> Game {
    Game::with_config(
        Position::from_fen(fen).expect("test FEN is legal"),
        GameConfig {
            repetition_count: 2,
            ..GameConfig::CXA
        },
    )
}

/// Whether playing `m` ends the game with the opponent mated or stalemated.
pub fn mates(game: &mut Game, m: Move) -> bool {
    game.play_unchecked(m);
    let r = matches!(
        game.adjudicate(),
        Some(o) if matches!(o.reason, Reason::Checkmate | Reason::Stalemate)
    );
    game.undo();
    r
}

/// The moves that mate at once.
pub fn mates_in_one(game: &mut Game) -> Vec<Move> {
    game.position()
        .legal_moves()
        .into_iter()
        .filter(|&m| mates(game, m))
        .collect()
}

/// The first moves of a forced mate in two (every reply allows a mate in one).
pub fn mates_in_two(game: &mut Game) -> Vec<Move> {
    let mut out = Vec::new();
    for m in game.position().legal_moves() {
        game.play_unchecked(m);
        let replies = game.position().legal_moves();
        let forced = game.adjudicate().is_none()
            && !replies.is_empty()
            && replies.iter().all(|&r| {
                game.play_unchecked(r);
                let ok = game.adjudicate().is_none() && !mates_in_one(game).is_empty();
                game.undo();
                ok
            });
        game.undo();
        if forced {
            out.push(m);
        }
    }
    out
}

pub fn mv(pos: &Position, iccs: &str) -> Move {
    pos.parse_iccs(iccs).expect("test move is legal")
}

fn material(pos: &Position, c: Color) -> f32 {
    let value = |r: Role| match r {
        Role::Chariot => 9.0,
        Role::Cannon => 4.5,
        Role::Horse => 4.0,
        Role::Advisor | Role::Elephant => 2.0,
        Role::Soldier => 1.0,
        Role::General => 0.0,
    };
    pos.pieces_iter()
        .filter(|(_, p)| p.color == c)
        .map(|(_, p)| value(p.role))
        .sum()
}

/// Uniform policy; value tanh(0.15 × material difference) for the side to move. A
/// deterministic stand-in for a network that knows material.
#[derive(Debug, Clone, Copy, Default)]
pub struct MaterialEvaluator;

impl Evaluator for MaterialEvaluator {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        batch
            .iter()
            .map(|input| {
                let pos = input.position()?;
                let us = pos.turn();
                let v = (0.15 * (material(pos, us) - material(pos, us.other()))).tanh();
                let n = input.moves.len();
                Ok(Evaluation {
                    policy: vec![1.0 / n as f32; n],
                    wdl: [v.max(0.0), 1.0 - v.abs(), (-v).max(0.0)],
                })
            })
            .collect()
    }

    fn name(&self) -> String {
        "material".into()
    }
}

/// Knows one thing: the position with hash `lost` is lost for its side to move (the
/// move leading there wins); every other position is even. Uniform policy.
#[derive(Debug, Clone, Copy)]
pub struct OracleEvaluator {
    pub lost: u64,
}

impl Evaluator for OracleEvaluator {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        batch
            .iter()
            .map(|input| {
                let pos = input.position()?;
                let n = input.moves.len();
                Ok(Evaluation {
                    policy: vec![1.0 / n as f32; n],
                    wdl: if pos.hash() == self.lost {
                        [0.0, 0.0, 1.0]
                    } else {
                        [0.0, 1.0, 0.0]
                    },
                })
            })
            .collect()
    }

    fn name(&self) -> String {
        "oracle".into()
    }
}

/// Always fails, for error paths.
#[derive(Debug, Clone, Copy)]
pub struct FailingEvaluator;

impl Evaluator for FailingEvaluator {
    fn evaluate(&mut self, _: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        Err(EvalError::Backend("device lost".into()))
    }

    fn name(&self) -> String {
        "failing".into()
    }
}
