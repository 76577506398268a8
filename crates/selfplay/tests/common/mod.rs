//! Helpers shared by the self-play integration tests.
#![allow(dead_code)]

use std::path::Path;

use xq_core::Color;
use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator};
use xq_selfplay::SelfplayConfig;
use xq_selfplay::game::{FinishedGame, GameState, Step};

/// A small, fast configuration: few visits, short games, small batches.
pub fn tiny_config() -> SelfplayConfig {
    let mut c = SelfplayConfig {
        parallel_games: 6,
        search_threads: 2,
        max_batch: 5,
        batch_timeout_ms: 1,
        cache_size: 64,
        max_plies: 24,
        resign_threshold: -1.0,
        // Every game in `data/`, so tests can count them there; the held-out split has
        // a test of its own.
        held_out_permille: 0,
        ..SelfplayConfig::default()
    };
    c.search.history_len = 4;
    c.search.playout_cap.full_visits = 12;
    c.search.playout_cap.cheap_visits = 3;
    c.search.playout_cap.full_probability = 0.5;
    c.search.temperature.plies = 10;
    c
}

/// Plays game `id` alone, the plain way (one evaluator call per leaf batch of one
/// game, no server, no cache): the reference the worker's batched games must match.
pub fn reference_game(
    config: &SelfplayConfig,
    id: u64,
    seed: u64,
    evaluator: &mut dyn Evaluator,
) -> FinishedGame {
    let mut g = GameState::new(config, id, seed, evaluator.name()).unwrap();
    loop {
        g.start_search().unwrap();
        while !g.search.is_finished() {
            let n = g.search.select_leaves(config.leaves_per_game).len();
            if n == 0 {
                continue;
            }
            let inputs: Vec<EvalInput<'_>> = g.search.pending().iter().map(|r| r.input()).collect();
            let evals = evaluator.evaluate(&inputs).unwrap();
            g.search.apply(&evals).unwrap();
        }
        if let Step::Finished(f) = g.after_search(config).unwrap() {
            return *f;
        }
    }
}

/// Every PGN game in `dir`, as (round, moves, result, termination), sorted by round.
pub fn pgn_games(dir: &Path) -> Vec<(u64, Vec<xq_core::Move>, String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "pgn") {
            let text = std::fs::read_to_string(&path).unwrap();
            for g in xq_data::read_pgn(&text) {
                let g = g.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.push((
                    g.header("Round").unwrap().parse().unwrap(),
                    g.moves.clone(),
                    g.header("Result").unwrap().to_owned(),
                    g.header("Termination").unwrap().to_owned(),
                ));
            }
        }
    }
    out.sort_by_key(|g| g.0);
    out
}

/// Red always believes it is lost, Black that it is winning: a scripted case where
/// the search's root value for Red stays near -1.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedDespairs;

impl Evaluator for RedDespairs {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        batch
            .iter()
            .map(|input| {
                let pos = input.position()?;
                let n = input.moves.len().max(1);
                let wdl = if pos.turn() == Color::Red {
                    [0.0, 0.0, 1.0]
                } else {
                    [1.0, 0.0, 0.0]
                };
                Ok(Evaluation {
                    policy: vec![1.0 / n as f32; input.moves.len()],
                    wdl,
                })
            })
            .collect()
    }

    fn name(&self) -> String {
        "red-despairs".into()
    }
}
