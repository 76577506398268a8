//! Helpers shared by the self-play integration tests.
#![allow(dead_code)]

use std::path::Path;

use xq_core::Color;
use xq_core::hash::splitmix64;
use xq_nn::encode::{EncoderConfig, PackedPlane};
use xq_nn::{
    EvalError, EvalInput, Evaluation, Evaluator, POLICY_SIZE, RawEvaluator, RawOutputs,
    evaluate_packed, packed_positions,
};
use xq_selfplay::SelfplayConfig;
use xq_selfplay::game::{FinishedGame, GameState, Step};

/// A network stand-in without torch: its logits are a hash of the packed input, so it
/// answers the same position the same way whoever encoded it, and a leaf misrouted or
/// misencoded anywhere changes a search. It takes the packed path through
/// [`Evaluator::raw`]; wrapped in [`Unpacked`] it does not.
pub struct HashNet {
    encoder: EncoderConfig,
    packed: Vec<PackedPlane>,
    policy: Vec<f32>,
    value: Vec<f32>,
}

impl HashNet {
    pub fn new(history: usize) -> HashNet {
        HashNet {
            encoder: EncoderConfig { history },
            packed: Vec::new(),
            policy: Vec::new(),
            value: Vec::new(),
        }
    }
}

/// A logit in [-2, 2) from 64 hash bits.
fn logit(bits: u64) -> f32 {
    (bits >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0
}

impl RawEvaluator for HashNet {
    fn encoder(&self) -> EncoderConfig {
        self.encoder
    }

    fn forward_packed(&mut self, parts: &[&[PackedPlane]]) -> Result<RawOutputs<'_>, EvalError> {
        let planes = self.encoder.planes();
        packed_positions(parts, planes)?;
        self.policy.clear();
        self.value.clear();
        for position in parts.iter().flat_map(|p| p.chunks_exact(planes)) {
            let d = position.iter().fold(0u64, |h, p| {
                let [lo, hi] = p.mask_words();
                splitmix64(h ^ lo as u64) ^ splitmix64(hi as u64 ^ u64::from(p.value.to_bits()))
            });
            self.policy
                .extend((0..POLICY_SIZE as u64).map(|k| logit(splitmix64(d ^ k))));
            self.value
                .extend((1..=3u64).map(|t| logit(splitmix64(d ^ (t << 40)))));
        }
        Ok(RawOutputs {
            policy: &self.policy,
            value: &self.value,
        })
    }
}

impl Evaluator for HashNet {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        let mut packed = std::mem::take(&mut self.packed);
        let r = evaluate_packed(self, batch, &mut packed);
        self.packed = packed;
        r
    }
    fn name(&self) -> String {
        format!("hash-net(history={})", self.encoder.history)
    }
    fn raw(&mut self) -> Option<&mut dyn RawEvaluator> {
        Some(self)
    }
    fn fork(&self) -> Option<Result<Box<dyn Evaluator>, EvalError>> {
        Some(Ok(Box::new(HashNet::new(self.encoder.history))))
    }
}

/// An evaluator with its network hidden: self-play sends it whole histories.
pub struct Unpacked<E>(pub E);

impl<E: Evaluator> Evaluator for Unpacked<E> {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        self.0.evaluate(batch)
    }
    fn name(&self) -> String {
        self.0.name()
    }
}

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
