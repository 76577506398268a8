//! Quiescence-resolved leaf values: an optional search-time aid for network players.
//!
//! A small network trained for minutes on two cores misjudges positions in the middle
//! of an exchange: a leaf where a chariot hangs is valued as if it did not. AlphaGo
//! mixed a fast rollout's result into its value network's at every leaf; this does the
//! same with a cheaper and sharper stand-in for a rollout, the alpha-beta engine's
//! quiescence search over captures from its static evaluation
//! ([`AlphaBeta::quiescence`]). The leaf's value becomes
//!
//! ```text
//! v = (1 − λ) · v_net + λ · tanh(q / 290)
//! ```
//!
//! with `q` the quiescence score in centipawns (the scale of
//! [`cp_to_value`]), and its win/draw/loss mixed the same way.
//!
//! Values alone do not make the search look at a capture its policy ignores: a node's
//! value is the mean of its subtree, and a refutation the policy gives 0.1% is never
//! visited. So the policy is mixed too, with the same weight, with a capture prior:
//! each capture that wins material once the exchange has run its course (its
//! quiescence result beats the static evaluation) gets prior in proportion to what it
//! wins. Positions with no winning capture keep the network's policy.
//!
//! `λ = 0` (the default everywhere) is plain AlphaZero: the evaluator is not wrapped at
//! all. A network player has its weight (`leaf_quiescence`), and self-play its own
//! (`[selfplay.search] leaf_quiescence`), so that training targets can come from the
//! kind of search the exported player runs.

use xq_core::{Move, Position};
use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator};

use crate::{
    alphabeta::{AlphaBeta, eval::evaluate},
    score::cp_to_value,
};

/// Transposition table of the quiescence searches: they use none, so the smallest.
const TT_MB: usize = 1;

/// Batches at least this large are split over threads: self-play's evaluator sends
/// dozens of leaves at once, and with leaf quiescence the searches, not the network,
/// take most of a batch's time on a CPU. A player's batch of a few leaves stays on the
/// calling thread.
const PARALLEL_BATCH: usize = 8;

/// An evaluator whose values and policies are mixed with a quiescence search (see the module docs).
/// With weight 0 it passes the inner evaluator's answers through untouched.
pub struct QuiescenceBlend<E> {
    inner: E,
    weight: f32,
    /// One engine per thread a batch is split over, made on first use, so that a
    /// weight of 0 costs nothing.
    engines: Vec<AlphaBeta>,
}

impl<E> std::fmt::Debug for QuiescenceBlend<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuiescenceBlend")
            .field("weight", &self.weight)
            .finish_non_exhaustive()
    }
}

impl<E: Evaluator> QuiescenceBlend<E> {
    /// Wraps `inner`, giving the quiescence value the weight `weight` in [0, 1].
    ///
    /// # Errors
    /// [`EvalError::BadInput`] for a weight outside [0, 1].
    pub fn new(inner: E, weight: f32) -> Result<QuiescenceBlend<E>, EvalError> {
        if !(0.0..=1.0).contains(&weight) {
            return Err(EvalError::BadInput(format!(
                "leaf_quiescence must be in 0..=1, got {weight}"
            )));
        }
        Ok(QuiescenceBlend {
            inner,
            weight,
            engines: Vec::new(),
        })
    }
}

/// What the quiescence searches say of one leaf: its value, and the winning captures
/// (by index in the leaf's moves) with what each wins in centipawns.
struct Tactics {
    value: f32,
    gains: Vec<(usize, f32)>,
}

/// The win/draw/loss of a quiescence value `q` in [−1, 1] for the side to move: its
/// expectation is `q`, with the rest of the mass on a draw.
fn value_wdl(q: f32) -> [f32; 3] {
    [q.max(0.0), 1.0 - q.abs(), (-q).max(0.0)]
}

/// What the blend mixes into a leaf's win/draw/loss at `pos`: the quiescence search's
/// value as a win/draw/loss for the side to move, on a per-thread engine.
///
/// Training uses it to teach the value head what this misses (`[train]
/// value_quiescence`). The evaluation is left-right symmetric, so a mirrored position
/// has the same value.
pub fn quiescence_wdl(pos: &Position) -> [f32; 3] {
    ENGINE.with_borrow_mut(|engine| value_wdl(cp_to_value(engine.quiescence(pos))))
}

thread_local! {
    /// The engine of the per-position helpers ([`quiescence_wdl`], [`network_prior`]).
    static ENGINE: std::cell::RefCell<AlphaBeta> = std::cell::RefCell::new(AlphaBeta::new(TT_MB));
}

fn tactics(engine: &mut AlphaBeta, input: &EvalInput<'_>) -> Result<Tactics, EvalError> {
    let pos = input.position()?;
    let value = cp_to_value(engine.quiescence(pos));
    let gains = winning_captures(engine, pos, input.moves);
    Ok(Tactics { value, gains })
}

/// The captures among `moves` that win material once the exchange has run its course,
/// by index, with what each wins in centipawns.
fn winning_captures(engine: &mut AlphaBeta, pos: &Position, moves: &[Move]) -> Vec<(usize, f32)> {
    let stand = evaluate(pos);
    moves
        .iter()
        .enumerate()
        .filter(|(_, m)| pos.is_capture(**m))
        .filter_map(|(i, &m)| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let gain = -engine.quiescence(&child) - stand;
            (gain > 0).then_some((i, gain as f32))
        })
        .collect()
}

/// Mixes the capture prior of `gains` into `policy` with weight `w`.
fn blend_prior(policy: &mut [f32], gains: &[(usize, f32)], w: f32) {
    let total: f32 = gains.iter().map(|g| g.1).sum();
    if total > 0.0 {
        policy.iter_mut().for_each(|p| *p *= 1.0 - w);
        for &(i, gain) in gains {
            policy[i] += w * gain / total;
        }
    }
}

/// The network's own prior over `moves` at `pos`, recovered from `searched`, the prior
/// a [`QuiescenceBlend`] of weight `weight` < 1 made of it: the blend undone. It is
/// exact up to rounding, because the quiescence search is a function of the position
/// alone (no transposition table), so the capture prior is the one the blend mixed in.
/// Self-play uses it to build Gumbel targets on the network's prior
/// (`[selfplay.search.gumbel] target_prior = "network"`). A weight outside [0, 1) or a
/// prior of another length than `moves` is returned unchanged.
pub fn network_prior(pos: &Position, moves: &[Move], searched: &[f32], weight: f32) -> Vec<f32> {
    let mut prior = searched.to_vec();
    if !(0.0..1.0).contains(&weight) || weight == 0.0 || searched.len() != moves.len() {
        return prior;
    }
    let gains = ENGINE.with_borrow_mut(|engine| winning_captures(engine, pos, moves));
    let total: f32 = gains.iter().map(|g| g.1).sum();
    if total <= 0.0 {
        return prior;
    }
    for &(i, gain) in &gains {
        prior[i] -= weight * gain / total;
    }
    prior
        .iter_mut()
        .for_each(|p| *p = (*p / (1.0 - weight)).max(0.0));
    let sum: f32 = prior.iter().sum();
    if sum > 0.0 {
        prior.iter_mut().for_each(|p| *p /= sum);
    }
    prior
}

impl<E: Evaluator> QuiescenceBlend<E> {
    /// The tactics of every leaf, in order: on this thread for a small batch, else in
    /// one contiguous part per available core, each with its own engine.
    fn tactics(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Tactics>, EvalError> {
        let threads = if batch.len() < PARALLEL_BATCH {
            1
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        };
        while self.engines.len() < threads {
            self.engines.push(AlphaBeta::new(TT_MB));
        }
        if threads == 1 {
            let engine = &mut self.engines[0];
            return batch.iter().map(|input| tactics(engine, input)).collect();
        }
        let part = batch.len().div_ceil(threads);
        let parts: Vec<Result<Vec<Tactics>, EvalError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = batch
                .chunks(part)
                .zip(self.engines.iter_mut())
                .map(|(inputs, engine)| {
                    scope.spawn(move || inputs.iter().map(|i| tactics(engine, i)).collect())
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let mut out = Vec::with_capacity(batch.len());
        for p in parts {
            out.extend(p?);
        }
        Ok(out)
    }
}

impl<E: Evaluator> Evaluator for QuiescenceBlend<E> {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        let mut out = self.inner.evaluate(batch)?;
        let w = self.weight;
        if w == 0.0 {
            return Ok(out);
        }
        let leaves = self.tactics(batch)?;
        for ((input, eval), leaf) in batch.iter().zip(&mut out).zip(leaves) {
            let q_wdl = value_wdl(leaf.value);
            for (mixed, qv) in eval.wdl.iter_mut().zip(q_wdl) {
                *mixed = (1.0 - w) * *mixed + w * qv;
            }
            if eval.policy.len() == input.moves.len() {
                blend_prior(&mut eval.policy, &leaf.gains, w);
            }
        }
        Ok(out)
    }

    fn name(&self) -> String {
        if self.weight == 0.0 {
            self.inner.name()
        } else {
            format!("{}+quiescence({})", self.inner.name(), self.weight)
        }
    }
}

#[cfg(test)]
mod tests {
    use xq_core::Position;
    use xq_nn::{RandomEvaluator, UniformEvaluator};

    use super::*;

    fn value_of(fen: &str, weight: f32) -> f32 {
        let pos = Position::from_fen(fen).unwrap();
        let moves = pos.legal_moves();
        let history = [pos];
        let input = EvalInput {
            history: &history,
            moves: &moves,
        };
        let mut blend = QuiescenceBlend::new(UniformEvaluator, weight).unwrap();
        let out = blend.evaluate(&[input]).unwrap();
        let wdl = out[0].wdl;
        assert!((wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{wdl:?}");
        out[0].value()
    }

    #[test]
    fn a_chariot_en_prise_is_seen_by_the_side_that_can_take_it() {
        // Red to move; Black's chariot on e5 hangs to Red's chariot on e0.
        let hanging = "4k4/9/9/9/4r4/9/9/9/9/3KR4 w - - 0 1";
        assert!(value_of(hanging, 1.0) > 0.5, "{}", value_of(hanging, 1.0));
        // The uniform evaluator alone says 0; half the weight halves the value.
        assert_eq!(value_of(hanging, 0.0), 0.0);
        let half = value_of(hanging, 0.5);
        assert!((half - value_of(hanging, 1.0) / 2.0).abs() < 1e-5);
    }

    #[test]
    fn a_winning_capture_gets_prior_and_a_losing_one_none() {
        // Red's chariot on e0 can take Black's chariot on e5 (free) or the soldier on
        // a6 guarded by the chariot on a9 (a chariot for a soldier).
        let pos = Position::from_fen("r3k4/9/9/p8/4r4/9/9/9/9/R2KR4 w - - 0 1").unwrap();
        let moves = pos.legal_moves();
        let history = [pos.clone()];
        let input = EvalInput {
            history: &history,
            moves: &moves,
        };
        let mut blend = QuiescenceBlend::new(UniformEvaluator, 0.5).unwrap();
        let policy = blend.evaluate(&[input]).unwrap().remove(0).policy;
        assert!((policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        let prior = |iccs: &str| {
            policy[moves
                .iter()
                .position(|&m| m == pos.parse_iccs(iccs).unwrap())
                .unwrap()]
        };
        let uniform = 1.0 / moves.len() as f32;
        assert!(prior("e0e5") > 0.5, "{}", prior("e0e5"));
        assert!((prior("a0a6") - 0.5 * uniform).abs() < 1e-6);
    }

    #[test]
    fn the_networks_prior_is_recovered_from_the_blend() {
        let fens = [
            // A free chariot and a guarded soldier to take; no capture; the start.
            "r3k4/9/9/p8/4r4/9/9/9/9/R2KR4 w - - 0 1",
            "4k4/9/9/9/9/9/9/9/9/3K5 w - - 0 1",
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        ];
        for fen in fens {
            let pos = Position::from_fen(fen).unwrap();
            let moves = pos.legal_moves();
            let history = [pos.clone()];
            let input = EvalInput {
                history: &history,
                moves: &moves,
            };
            let mut network = RandomEvaluator::new(3);
            let own = network.evaluate(&[input]).unwrap().remove(0).policy;
            for weight in [0.25, 0.75] {
                let mut blend = QuiescenceBlend::new(network, weight).unwrap();
                let searched = blend.evaluate(&[input]).unwrap().remove(0).policy;
                let back = network_prior(&pos, &moves, &searched, weight);
                for (a, b) in back.iter().zip(&own) {
                    assert!(
                        (a - b).abs() < 1e-5,
                        "{fen} at {weight}: {back:?} vs {own:?}"
                    );
                }
            }
        }
        // The winning capture's prior really was changed by the blend.
        let pos = Position::from_fen(fens[0]).unwrap();
        let moves = pos.legal_moves();
        let uniform = vec![1.0 / moves.len() as f32; moves.len()];
        assert_ne!(network_prior(&pos, &moves, &uniform, 0.5), uniform);
        // Nothing to undo: no weight, a weight of 1, a prior of the wrong length.
        assert_eq!(network_prior(&pos, &moves, &uniform, 0.0), uniform);
        assert_eq!(network_prior(&pos, &moves, &uniform, 1.0), uniform);
        assert_eq!(network_prior(&pos, &moves[1..], &uniform, 0.5), uniform);
    }

    #[test]
    fn a_batch_split_over_threads_is_evaluated_as_each_leaf_alone() {
        let fens = [
            "4k4/9/9/9/4r4/9/9/9/9/3KR4 w - - 0 1",
            "r3k4/9/9/p8/4r4/9/9/9/9/R2KR4 w - - 0 1",
            "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        ];
        let positions: Vec<Position> = (0..3 * PARALLEL_BATCH)
            .map(|i| Position::from_fen(fens[i % fens.len()]).unwrap())
            .collect();
        let moves: Vec<_> = positions.iter().map(Position::legal_moves).collect();
        let histories: Vec<[Position; 1]> = positions.iter().map(|p| [p.clone()]).collect();
        let inputs: Vec<EvalInput<'_>> = histories
            .iter()
            .zip(&moves)
            .map(|(history, moves)| EvalInput { history, moves })
            .collect();
        let mut blend = QuiescenceBlend::new(UniformEvaluator, 0.75).unwrap();
        let together = blend.evaluate(&inputs).unwrap();
        for (input, batched) in inputs.iter().zip(&together) {
            let alone = blend
                .evaluate(std::slice::from_ref(input))
                .unwrap()
                .remove(0);
            assert_eq!((alone.wdl, &alone.policy), (batched.wdl, &batched.policy));
        }
    }

    #[test]
    fn a_weight_outside_zero_to_one_is_refused() {
        assert!(QuiescenceBlend::new(UniformEvaluator, 1.5).is_err());
        assert!(QuiescenceBlend::new(UniformEvaluator, -0.1).is_err());
        assert!(QuiescenceBlend::new(UniformEvaluator, f32::NAN).is_err());
    }
}
