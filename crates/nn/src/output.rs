//! Turning raw network outputs into an [`Evaluation`], and policy targets into the
//! network's output layout, the same way for every backend and for the trainer.
//!
//! The network's policy head has one logit per entry of the fixed index
//! ([`POLICY_SIZE`]); only the legal moves matter, so the policy over legal moves is a
//! softmax over their logits alone (the others are masked out). Training targets go the
//! other way: a distribution over legal moves is scattered into a full-index vector.

use xq_core::{Color, Move};

use crate::encode::PackedPlane;
use crate::evaluator::{
    EvalError, EvalInput, Evaluation, RawEvaluator, RawOutputs, encode_packed_batch,
};
use crate::policy::{POLICY_SIZE, policy_index};

/// Softmax of `logits[policy_index(m)]` over `moves` (moves of `turn`), written to `out`
/// in the order of `moves` (cleared first; empty if there are no moves).
///
/// # Errors
/// `BadInput` if `logits` is not [`POLICY_SIZE`] long or a move has no index (it cannot
/// be legal); `Backend` if a logit is NaN, which means the network itself is broken.
pub fn legal_policy_from_logits(
    logits: &[f32],
    moves: &[Move],
    turn: Color,
    out: &mut Vec<f32>,
) -> Result<(), EvalError> {
    if logits.len() != POLICY_SIZE {
        return Err(EvalError::BadInput(format!(
            "policy logits have length {}, expected {POLICY_SIZE}",
            logits.len()
        )));
    }
    out.clear();
    out.reserve(moves.len());
    let mut max = f32::NEG_INFINITY;
    for &m in moves {
        let i = policy_index(m, turn)
            .ok_or_else(|| EvalError::BadInput(format!("move {m} has no policy index")))?;
        let l = logits[i];
        if l.is_nan() {
            return Err(EvalError::Backend(format!("policy logit for {m} is NaN")));
        }
        max = max.max(l);
        out.push(l);
    }
    softmax_in_place(out, max);
    Ok(())
}

/// Softmax of three value-head logits (win, draw, loss for the side to move).
///
/// # Errors
/// `Backend` if a logit is NaN.
pub fn wdl_from_logits(logits: [f32; 3]) -> Result<[f32; 3], EvalError> {
    if logits.iter().any(|l| l.is_nan()) {
        return Err(EvalError::Backend(format!(
            "value logits contain NaN: {logits:?}"
        )));
    }
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut wdl = logits;
    softmax_in_place(&mut wdl, max);
    Ok(wdl)
}

/// An [`Evaluation`] from one position's raw outputs (see [`legal_policy_from_logits`]
/// and [`wdl_from_logits`]).
pub fn evaluation_from_logits(
    policy_logits: &[f32],
    wdl_logits: [f32; 3],
    moves: &[Move],
    turn: Color,
) -> Result<Evaluation, EvalError> {
    let mut policy = Vec::with_capacity(moves.len());
    legal_policy_from_logits(policy_logits, moves, turn, &mut policy)?;
    Ok(Evaluation {
        policy,
        wdl: wdl_from_logits(wdl_logits)?,
    })
}

impl RawOutputs<'_> {
    /// Position `i`'s [`Evaluation`] over `input`'s moves (the legal-move gather and
    /// softmax of [`evaluation_from_logits`]).
    pub fn evaluation(&self, i: usize, input: &EvalInput<'_>) -> Result<Evaluation, EvalError> {
        evaluation_from_logits(
            self.policy_row(i),
            self.value_row(i),
            input.moves,
            input.position()?.turn(),
        )
    }
}

/// [`Evaluator::evaluate`] for a network: packs `batch` into `packed` (a buffer the
/// caller keeps between calls), runs `raw` and reads each position's evaluation off the
/// logits. Every network evaluator's `evaluate` is this, so the packed path self-play
/// takes and the direct one give the same evaluations.
pub fn evaluate_packed(
    raw: &mut dyn RawEvaluator,
    batch: &[EvalInput<'_>],
    packed: &mut Vec<PackedPlane>,
) -> Result<Vec<Evaluation>, EvalError> {
    if batch.is_empty() {
        return Ok(Vec::new());
    }
    let config = raw.encoder();
    packed.resize(batch.len() * config.planes(), PackedPlane::ZERO);
    encode_packed_batch(batch, &config, packed).map_err(|e| EvalError::BadInput(e.to_string()))?;
    let out = raw.forward_packed(&[packed])?;
    if out.len() != batch.len() || out.policy.len() != batch.len() * POLICY_SIZE {
        return Err(EvalError::Backend(format!(
            "the network returned {} value and {} policy logits for {} positions",
            out.value.len(),
            out.policy.len(),
            batch.len()
        )));
    }
    batch
        .iter()
        .enumerate()
        .map(|(i, input)| out.evaluation(i, input))
        .collect()
}

/// Scatters `probs` (over `moves`, moves of `turn`) into `out`, a full policy-index vector
/// of length [`POLICY_SIZE`] that is zeroed first: the training target layout.
///
/// # Errors
/// `BadInput` on length mismatches or a move without an index.
pub fn scatter_policy(
    moves: &[Move],
    probs: &[f32],
    turn: Color,
    out: &mut [f32],
) -> Result<(), EvalError> {
    if moves.len() != probs.len() {
        return Err(EvalError::BadInput(format!(
            "{} moves but {} probabilities",
            moves.len(),
            probs.len()
        )));
    }
    if out.len() != POLICY_SIZE {
        return Err(EvalError::BadInput(format!(
            "policy target has length {}, expected {POLICY_SIZE}",
            out.len()
        )));
    }
    out.fill(0.0);
    for (&m, &p) in moves.iter().zip(probs) {
        let i = policy_index(m, turn)
            .ok_or_else(|| EvalError::BadInput(format!("move {m} has no policy index")))?;
        out[i] += p;
    }
    Ok(())
}

/// Numerically stable softmax given the maximum of `v` (`-inf` entries become 0).
fn softmax_in_place(v: &mut [f32], max: f32) {
    if v.is_empty() {
        return;
    }
    if max.is_infinite() {
        // All masked, or an infinite logit: fall back to the argmax set, uniformly.
        let n = v.iter().filter(|&&x| x == max).count() as f32;
        v.iter_mut()
            .for_each(|x| *x = if *x == max { 1.0 / n } else { 0.0 });
        return;
    }
    let mut sum = 0.0;
    for x in v.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    // sum ≥ 1 (the maximum contributes exp(0)), so the division is safe.
    v.iter_mut().for_each(|x| *x /= sum);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{mirror_index, policy_move};
    use xq_core::Position;

    fn sum(v: &[f32]) -> f32 {
        v.iter().sum()
    }

    #[test]
    fn policy_is_a_softmax_over_the_legal_moves_only() {
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let mut logits = vec![0.0; POLICY_SIZE];
        // A huge logit on a move that is not legal here must not take any mass.
        logits[policy_index(Move::from_iccs("a0a9").unwrap(), Color::Red).unwrap()] = 100.0;
        let favourite = pos.parse_iccs("h2e2").unwrap();
        logits[policy_index(favourite, Color::Red).unwrap()] = 2.0f32.ln();
        let mut out = Vec::new();
        legal_policy_from_logits(&logits, &moves, Color::Red, &mut out).unwrap();
        assert_eq!(out.len(), moves.len());
        assert!((sum(&out) - 1.0).abs() < 1e-6);
        let k = moves.iter().position(|&m| m == favourite).unwrap();
        // The favourite has twice the weight of each of the other 43 moves.
        assert!((out[k] - 2.0 / 45.0).abs() < 1e-6, "{}", out[k]);
        assert!((out[(k + 1) % moves.len()] - 1.0 / 45.0).abs() < 1e-6);
    }

    #[test]
    fn black_moves_read_the_logits_of_their_flipped_entries() {
        let mut pos = Position::startpos();
        pos.play(pos.parse_iccs("h2e2").unwrap()).unwrap();
        let moves = pos.legal_moves();
        let mut logits = vec![0.0; POLICY_SIZE];
        let m = pos.parse_iccs("h7e7").unwrap();
        logits[policy_index(m, Color::Black).unwrap()] = 50.0;
        let mut out = Vec::new();
        legal_policy_from_logits(&logits, &moves, Color::Black, &mut out).unwrap();
        let k = moves.iter().position(|&x| x == m).unwrap();
        assert!(out[k] > 0.999);
    }

    #[test]
    fn wdl_is_a_softmax_and_extreme_logits_stay_finite() {
        let wdl = wdl_from_logits([0.0, 0.0, 0.0]).unwrap();
        assert!(wdl.iter().all(|&p| (p - 1.0 / 3.0).abs() < 1e-6));
        let wdl = wdl_from_logits([1000.0, 0.0, -1000.0]).unwrap();
        assert_eq!(wdl, [1.0, 0.0, 0.0]);
        let wdl = wdl_from_logits([f32::INFINITY, f32::INFINITY, 0.0]).unwrap();
        assert_eq!(wdl, [0.5, 0.5, 0.0]);
        let wdl = wdl_from_logits([f32::NEG_INFINITY; 3]).unwrap();
        assert!(wdl.iter().all(|&p| (p - 1.0 / 3.0).abs() < 1e-6));
        assert!(matches!(
            wdl_from_logits([f32::NAN, 0.0, 0.0]),
            Err(EvalError::Backend(_))
        ));
    }

    #[test]
    fn evaluation_from_logits_combines_both_heads() {
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let e = evaluation_from_logits(&[0.0; POLICY_SIZE], [0.0, 0.0, 3.0], &moves, Color::Red)
            .unwrap();
        assert_eq!(e.policy.len(), 44);
        assert!(e.value() < -0.8);
        let none = evaluation_from_logits(&[0.0; POLICY_SIZE], [0.0; 3], &[], Color::Red).unwrap();
        assert!(none.policy.is_empty());
    }

    #[test]
    fn bad_lengths_and_unindexed_moves_are_errors() {
        let moves = Position::startpos().legal_moves();
        let mut out = Vec::new();
        assert!(matches!(
            legal_policy_from_logits(&[0.0; 10], &moves, Color::Red, &mut out),
            Err(EvalError::BadInput(_))
        ));
        let bogus = [Move::from_iccs("a0b3").unwrap()];
        assert!(matches!(
            legal_policy_from_logits(&[0.0; POLICY_SIZE], &bogus, Color::Red, &mut out),
            Err(EvalError::BadInput(_))
        ));
        let mut nan = vec![0.0; POLICY_SIZE];
        nan[policy_index(moves[0], Color::Red).unwrap()] = f32::NAN;
        assert!(matches!(
            legal_policy_from_logits(&nan, &moves, Color::Red, &mut out),
            Err(EvalError::Backend(_))
        ));
        let mut target = vec![0.0; POLICY_SIZE];
        assert!(scatter_policy(&moves, &[1.0], Color::Red, &mut target).is_err());
        assert!(scatter_policy(&[], &[], Color::Red, &mut target[1..]).is_err());
    }

    #[test]
    fn scatter_then_gather_round_trips_and_mirrors_consistently() {
        let mut pos = Position::startpos();
        pos.play(pos.parse_iccs("b2e2").unwrap()).unwrap();
        let moves = pos.legal_moves();
        let probs: Vec<f32> = (0..moves.len()).map(|i| (i + 1) as f32).collect();
        let total = sum(&probs);
        let probs: Vec<f32> = probs.iter().map(|p| p / total).collect();
        let mut target = vec![f32::NAN; POLICY_SIZE];
        scatter_policy(&moves, &probs, pos.turn(), &mut target).unwrap();
        assert!((sum(&target) - 1.0).abs() < 1e-6);
        for (&m, &p) in moves.iter().zip(&probs) {
            let i = policy_index(m, pos.turn()).unwrap();
            assert_eq!(target[i], p);
            assert_eq!(policy_move(i, pos.turn()), m);
            assert_eq!(policy_index(m.mirror(), pos.turn()), Some(mirror_index(i)));
        }
        // log(target) as logits gives back the distribution.
        let logits: Vec<f32> = target.iter().map(|p| p.ln()).collect();
        let mut back = Vec::new();
        legal_policy_from_logits(&logits, &moves, pos.turn(), &mut back).unwrap();
        for (a, b) in back.iter().zip(&probs) {
            assert!((a - b).abs() < 1e-6);
        }
    }
}
