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
//! all. The option is a play-time setting (`leaf_quiescence` of a network player);
//! training targets never come from it.

use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator};

use crate::{
    alphabeta::{AlphaBeta, eval::evaluate},
    score::cp_to_value,
};

/// Transposition table of the quiescence searches: they use none, so the smallest.
const TT_MB: usize = 1;

/// An evaluator whose values and policies are mixed with a quiescence search (see the module docs).
/// With weight 0 it passes the inner evaluator's answers through untouched.
pub struct QuiescenceBlend<E> {
    inner: E,
    weight: f32,
    /// Made on first use, so that a weight of 0 costs nothing.
    engine: Option<AlphaBeta>,
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
            engine: None,
        })
    }
}

impl<E: Evaluator> Evaluator for QuiescenceBlend<E> {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        let mut out = self.inner.evaluate(batch)?;
        let w = self.weight;
        if w == 0.0 {
            return Ok(out);
        }
        let engine = self.engine.get_or_insert_with(|| AlphaBeta::new(TT_MB));
        for (input, eval) in batch.iter().zip(&mut out) {
            let pos = input.position()?;
            let q = cp_to_value(engine.quiescence(pos));
            let q_wdl = [q.max(0.0), 1.0 - q.abs(), (-q).max(0.0)];
            for (mixed, qv) in eval.wdl.iter_mut().zip(q_wdl) {
                *mixed = (1.0 - w) * *mixed + w * qv;
            }
            let stand = evaluate(pos);
            let gains: Vec<(usize, f32)> = input
                .moves
                .iter()
                .enumerate()
                .filter(|(_, m)| pos.is_capture(**m))
                .filter_map(|(i, &m)| {
                    let mut child = pos.clone();
                    child.play_unchecked(m);
                    let gain = -engine.quiescence(&child) - stand;
                    (gain > 0).then_some((i, gain as f32))
                })
                .collect();
            let total: f32 = gains.iter().map(|g| g.1).sum();
            if total > 0.0 && eval.policy.len() == input.moves.len() {
                eval.policy.iter_mut().for_each(|p| *p *= 1.0 - w);
                for (i, gain) in gains {
                    eval.policy[i] += w * gain / total;
                }
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
    use xq_nn::UniformEvaluator;

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
    fn a_weight_outside_zero_to_one_is_refused() {
        assert!(QuiescenceBlend::new(UniformEvaluator, 1.5).is_err());
        assert!(QuiescenceBlend::new(UniformEvaluator, -0.1).is_err());
        assert!(QuiescenceBlend::new(UniformEvaluator, f32::NAN).is_err());
    }
}
