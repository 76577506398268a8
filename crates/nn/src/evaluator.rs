//! The `Evaluator` contract: what search and self-play ask of a network.
//!
//! A batch of positions (each with its history and its legal moves) goes in; a policy
//! over those legal moves and a win/draw/loss value come out. The trait knows nothing
//! about torch: the torch backend lives in `crates/train`, and the two evaluators here
//! ([`UniformEvaluator`], [`RandomEvaluator`]) let search and self-play be tested
//! without it.

use xq_core::{Move, Position, hash::splitmix64};

use crate::encode::{
    EncodeError, EncoderConfig, PackedPlane, encode_batch_into, encode_packed_into,
};
use crate::policy::POLICY_SIZE;

/// One position to evaluate.
#[derive(Debug, Clone, Copy)]
pub struct EvalInput<'a> {
    /// Positions from oldest to newest; the last one is evaluated. Holds at least one;
    /// the encoder uses up to its configured number of history positions.
    pub history: &'a [Position],
    /// The legal moves of the last position, in the order the policy must follow.
    pub moves: &'a [Move],
}

impl<'a> EvalInput<'a> {
    /// The position to evaluate (the newest of `history`), or an error naming the
    /// problem when `history` is empty.
    pub fn position(&self) -> Result<&'a Position, EvalError> {
        self.history
            .last()
            .ok_or_else(|| EvalError::BadInput("empty history: no position to evaluate".into()))
    }
}

/// The network's opinion of one position.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Probabilities over `EvalInput::moves`, same order, summing to 1 (empty if no moves).
    pub policy: Vec<f32>,
    /// Win, draw, loss probabilities for the side to move; they sum to 1.
    pub wdl: [f32; 3],
}

impl Evaluation {
    /// Expected score in [-1, 1] for the side to move: `wdl[0] - wdl[2]`.
    pub fn value(&self) -> f32 {
        self.wdl[0] - self.wdl[2]
    }
}

/// Why an evaluation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// The backend (device, model, worker thread) failed.
    #[error("evaluator backend failed: {0}")]
    Backend(String),
    /// The caller passed something the evaluator cannot evaluate.
    #[error("bad evaluator input: {0}")]
    BadInput(String),
}

/// Something that evaluates positions: a network, or a stand-in for tests.
pub trait Evaluator: Send {
    /// Evaluates a batch; returns one Evaluation per input, in order.
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError>;
    /// A short description for logs ("uniform", "random(seed=7)", "torch(net.safetensors, cuda)").
    fn name(&self) -> String;
    /// The network alone, when this evaluator is one: it takes packed inputs and gives
    /// raw logits, so that a caller with many threads can encode and read the outputs
    /// on its own threads and leave only the network to the thread that owns it (see
    /// [`RawEvaluator`]). `None` (the default) for evaluators that are not networks.
    fn raw(&mut self) -> Option<&mut dyn RawEvaluator> {
        None
    }
    /// Another evaluator of the same network, for another thread to own (self-play's
    /// `servers`: each evaluation server its own copy, its own buffers and, on a GPU,
    /// its own queue of work). `None` (the default) when this one cannot be copied.
    fn fork(&self) -> Option<Result<Box<dyn Evaluator>, EvalError>> {
        None
    }
}

impl<E: Evaluator + ?Sized> Evaluator for Box<E> {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        (**self).evaluate(batch)
    }
    fn name(&self) -> String {
        (**self).name()
    }
    fn raw(&mut self) -> Option<&mut dyn RawEvaluator> {
        (**self).raw()
    }
    fn fork(&self) -> Option<Result<Box<dyn Evaluator>, EvalError>> {
        (**self).fork()
    }
}

impl<E: Evaluator + ?Sized> Evaluator for &mut E {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        (**self).evaluate(batch)
    }
    fn name(&self) -> String {
        (**self).name()
    }
    fn raw(&mut self) -> Option<&mut dyn RawEvaluator> {
        (**self).raw()
    }
    fn fork(&self) -> Option<Result<Box<dyn Evaluator>, EvalError>> {
        (**self).fork()
    }
}

/// A network's raw outputs for a batch, borrowed from the evaluator until its next call:
/// policy logits over the whole index (`n × POLICY_SIZE`, row-major) and value logits
/// (`n × 3`, win, draw, loss), as f32 on the host.
#[derive(Debug, Clone, Copy)]
pub struct RawOutputs<'a> {
    pub policy: &'a [f32],
    pub value: &'a [f32],
}

impl RawOutputs<'_> {
    /// Positions in the batch.
    pub fn len(&self) -> usize {
        self.value.len() / 3
    }

    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// Position `i`'s policy logits.
    pub fn policy_row(&self, i: usize) -> &[f32] {
        &self.policy[i * POLICY_SIZE..(i + 1) * POLICY_SIZE]
    }

    /// Position `i`'s value logits.
    pub fn value_row(&self, i: usize) -> [f32; 3] {
        [
            self.value[i * 3],
            self.value[i * 3 + 1],
            self.value[i * 3 + 2],
        ]
    }
}

/// The network part of an evaluator: packed inputs ([`PackedPlane`], made by
/// [`crate::encode::encode_packed_into`] with [`encoder`](RawEvaluator::encoder)) in,
/// raw logits out.
///
/// This is the seam that lets the encoding and the legal-move gather run on the threads
/// that asked for an evaluation (KataGo's pattern): self-play's server hands the network
/// the packed inputs of several search threads as they are, one slice per request,
/// without joining them, and gives each thread its rows of the logits back. A GPU
/// backend copies the packed planes (20 bytes a plane against 360 as f32) to the device
/// and expands them there.
pub trait RawEvaluator {
    /// The encoding the packed inputs must have.
    fn encoder(&self) -> EncoderConfig;

    /// The raw outputs of the positions of `parts`, in order: each part holds a whole
    /// number of positions of `encoder().planes()` planes each.
    ///
    /// # Errors
    /// `BadInput` when a part is not a whole number of positions; `Backend` when the
    /// network fails.
    fn forward_packed(&mut self, parts: &[&[PackedPlane]]) -> Result<RawOutputs<'_>, EvalError>;
}

/// Positions in `parts` for an encoding of `planes` planes, or an error naming the part
/// that is not a whole number of positions: the check every [`RawEvaluator`] makes.
pub fn packed_positions(parts: &[&[PackedPlane]], planes: usize) -> Result<usize, EvalError> {
    let mut n = 0;
    for (i, part) in parts.iter().enumerate() {
        if planes == 0 || !part.len().is_multiple_of(planes) {
            return Err(EvalError::BadInput(format!(
                "packed input part {i} holds {} planes, not a whole number of {planes}-plane positions",
                part.len()
            )));
        }
        n += part.len() / planes;
    }
    Ok(n)
}

/// Encodes an evaluator batch (see [`encode_batch_into`](crate::encode::encode_batch_into)).
pub fn encode_eval_batch(
    batch: &[EvalInput<'_>],
    config: &EncoderConfig,
    out: &mut [f32],
) -> Result<(), EncodeError> {
    encode_batch_into(batch.iter().map(|input| input.history), config, out)
}

/// Packs an evaluator batch into `out` (`N × config.planes()` planes), each as
/// [`encode_packed_into`](crate::encode::encode_packed_into) does. Allocates nothing.
///
/// # Errors
/// As [`encode_packed_into`](crate::encode::encode_packed_into), for the first bad entry; `out` must hold exactly `N`
/// encodings.
pub fn encode_packed_batch(
    batch: &[EvalInput<'_>],
    config: &EncoderConfig,
    out: &mut [PackedPlane],
) -> Result<(), EncodeError> {
    let planes = config.planes();
    if out.len() != batch.len() * planes {
        return Err(EncodeError::BufferSize {
            expected: batch.len() * planes,
            got: out.len(),
        });
    }
    for (input, chunk) in batch.iter().zip(out.chunks_exact_mut(planes)) {
        encode_packed_into(input.history, config, chunk)?;
    }
    Ok(())
}

/// Uniform policy, value 0 (wdl = [0, 1, 0]).
///
/// The "knows nothing" network: with it, MCTS degenerates to a plain visit-count
/// search, which makes it the baseline for testing search mechanics.
#[derive(Debug, Clone, Copy, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        batch
            .iter()
            .map(|input| {
                input.position()?;
                let n = input.moves.len();
                Ok(Evaluation {
                    policy: vec![1.0 / n as f32; n],
                    wdl: [0.0, 1.0, 0.0],
                })
            })
            .collect()
    }

    fn name(&self) -> String {
        "uniform".into()
    }

    fn fork(&self) -> Option<Result<Box<dyn Evaluator>, EvalError>> {
        Some(Ok(Box::new(*self)))
    }
}

/// Deterministic pseudo-random policy and WDL derived from (seed, position hash): the same
/// position always gets the same output, whatever the batch composition or call order.
///
/// Each move's weight is a hash of (seed, position hash, move), so the policy follows the
/// moves if the caller reorders them. Weights are exponential variates, so after
/// normalisation the policy (and likewise the WDL) is a draw from the flat Dirichlet
/// distribution: sharp and flat policies both occur, which exercises search code paths a
/// uniform policy never reaches.
#[derive(Debug, Clone, Copy)]
pub struct RandomEvaluator {
    seed: u64,
}

impl RandomEvaluator {
    pub fn new(seed: u64) -> RandomEvaluator {
        RandomEvaluator { seed }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Evaluates one position: a pure function of (seed, position hash, moves).
    pub fn evaluate_one(&self, input: &EvalInput<'_>) -> Result<Evaluation, EvalError> {
        let pos_key = splitmix64(self.seed ^ splitmix64(input.position()?.hash()));
        let mut policy: Vec<f32> = input
            .moves
            .iter()
            .map(|m| exponential(splitmix64(pos_key ^ u64::from(m.to_u16()))))
            .collect();
        normalise(&mut policy);
        // Tag the WDL stream with values no move can take (moves are 14-bit).
        let mut wdl = [1u64 << 20, 2 << 20, 3 << 20].map(|t| exponential(splitmix64(pos_key ^ t)));
        normalise(&mut wdl);
        Ok(Evaluation { policy, wdl })
    }
}

impl Evaluator for RandomEvaluator {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        batch.iter().map(|input| self.evaluate_one(input)).collect()
    }

    fn name(&self) -> String {
        format!("random(seed={})", self.seed)
    }

    fn fork(&self) -> Option<Result<Box<dyn Evaluator>, EvalError>> {
        Some(Ok(Box::new(*self)))
    }
}

/// An Exp(1) variate from 64 random bits: -ln(u) with u uniform in (0, 1].
#[inline]
fn exponential(bits: u64) -> f32 {
    // 53 bits → u in (0, 1]; never 0, so the log is finite.
    let u = ((bits >> 11) + 1) as f64 / (1u64 << 53) as f64;
    (-u.ln()) as f32
}

/// Scales `w` to sum to 1; an all-zero vector becomes uniform.
fn normalise(w: &mut [f32]) {
    let sum: f32 = w.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        w.iter_mut().for_each(|x| *x /= sum);
    } else if !w.is_empty() {
        let u = 1.0 / w.len() as f32;
        w.iter_mut().for_each(|x| *x = u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_core::Position;

    fn input_of<'a>(history: &'a [Position], moves: &'a [Move]) -> EvalInput<'a> {
        EvalInput { history, moves }
    }

    fn assert_distribution(p: &[f32]) {
        let sum: f32 = p.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "sums to {sum}");
        assert!(p.iter().all(|&x| (0.0..=1.0).contains(&x)), "{p:?}");
    }

    fn some_positions() -> Vec<Position> {
        let mut out = vec![Position::startpos()];
        let mut pos = Position::startpos();
        for iccs in ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7"] {
            let m = pos.parse_iccs(iccs).unwrap();
            pos.play(m).unwrap();
            out.push(pos.clone());
        }
        out
    }

    #[test]
    fn uniform_policy_is_flat_and_value_is_zero() {
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let h = [pos];
        let out = UniformEvaluator.evaluate(&[input_of(&h, &moves)]).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].policy.len(), 44);
        assert!(out[0].policy.iter().all(|&p| p == 1.0 / 44.0));
        assert_distribution(&out[0].policy);
        assert_eq!(out[0].wdl, [0.0, 1.0, 0.0]);
        assert_eq!(out[0].value(), 0.0);
    }

    #[test]
    fn policies_have_one_entry_per_move_and_sum_to_one() {
        let positions = some_positions();
        let move_lists: Vec<_> = positions.iter().map(|p| p.legal_moves()).collect();
        let batch: Vec<_> = (0..positions.len())
            .map(|i| input_of(&positions[..=i], &move_lists[i]))
            .collect();
        let evaluators: Vec<Box<dyn Evaluator>> = vec![
            Box::new(UniformEvaluator),
            Box::new(RandomEvaluator::new(7)),
        ];
        for mut ev in evaluators {
            let out = ev.evaluate(&batch).unwrap();
            assert_eq!(out.len(), batch.len(), "{}", ev.name());
            for (e, input) in out.iter().zip(&batch) {
                assert_eq!(e.policy.len(), input.moves.len(), "{}", ev.name());
                assert_distribution(&e.policy);
                assert_distribution(&e.wdl);
                assert!((-1.0..=1.0).contains(&e.value()));
            }
        }
    }

    #[test]
    fn random_evaluator_ignores_batch_composition_and_call_order() {
        let positions = some_positions();
        let move_lists: Vec<_> = positions.iter().map(|p| p.legal_moves()).collect();
        let batch: Vec<_> = (0..positions.len())
            .map(|i| input_of(&positions[..=i], &move_lists[i]))
            .collect();
        let mut ev = RandomEvaluator::new(42);
        let together = ev.evaluate(&batch).unwrap();
        // One at a time, in reverse order, with a fresh evaluator and a different history.
        for (i, input) in batch.iter().enumerate().rev() {
            let alone = RandomEvaluator::new(42)
                .evaluate(&[input_of(&positions[i..=i], input.moves)])
                .unwrap();
            assert_eq!(alone[0], together[i], "position {i}");
        }
        assert_eq!(
            ev.evaluate(&batch).unwrap(),
            together,
            "second call differs"
        );
    }

    #[test]
    fn random_evaluator_depends_on_seed_and_position() {
        let positions = some_positions();
        let move_lists: Vec<_> = positions.iter().map(|p| p.legal_moves()).collect();
        let a = RandomEvaluator::new(1)
            .evaluate(&[input_of(&positions[..1], &move_lists[0])])
            .unwrap();
        let b = RandomEvaluator::new(2)
            .evaluate(&[input_of(&positions[..1], &move_lists[0])])
            .unwrap();
        assert_ne!(a, b, "different seeds gave the same evaluation");
        let c = RandomEvaluator::new(1)
            .evaluate(&[input_of(&positions[..2], &move_lists[1])])
            .unwrap();
        assert_ne!(a[0].wdl, c[0].wdl, "different positions gave the same wdl");
        let sharp = a[0].policy.iter().cloned().fold(0.0, f32::max);
        assert!(sharp > 1.0 / 44.0, "random policy is flat");
    }

    #[test]
    fn random_policy_follows_the_moves_when_reordered() {
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let mut reversed = moves.clone();
        reversed.reverse();
        let h = [pos];
        let mut ev = RandomEvaluator::new(3);
        let out = ev
            .evaluate(&[input_of(&h, &moves), input_of(&h, &reversed)])
            .unwrap();
        let mut back = out[1].policy.clone();
        back.reverse();
        assert_eq!(out[0].wdl, out[1].wdl);
        for (x, y) in out[0].policy.iter().zip(&back) {
            assert!((x - y).abs() < 1e-6);
        }
    }

    #[test]
    fn no_moves_gives_an_empty_policy() {
        let h = [Position::startpos()];
        for mut ev in [
            Box::new(UniformEvaluator) as Box<dyn Evaluator>,
            Box::new(RandomEvaluator::new(0)),
        ] {
            let out = ev.evaluate(&[input_of(&h, &[])]).unwrap();
            assert!(out[0].policy.is_empty());
            assert_distribution(&out[0].wdl);
        }
    }

    #[test]
    fn empty_history_is_rejected_not_a_panic() {
        for mut ev in [
            Box::new(UniformEvaluator) as Box<dyn Evaluator>,
            Box::new(RandomEvaluator::new(0)),
        ] {
            let err = ev.evaluate(&[input_of(&[], &[])]).unwrap_err();
            assert!(matches!(err, EvalError::BadInput(_)), "{err}");
        }
    }

    #[test]
    fn names_describe_the_evaluator() {
        assert_eq!(UniformEvaluator.name(), "uniform");
        assert_eq!(RandomEvaluator::new(7).name(), "random(seed=7)");
        // Through `&mut E` as well as `Box<dyn Evaluator>`.
        let mut r = RandomEvaluator::new(7);
        fn name_of(e: impl Evaluator) -> String {
            e.name()
        }
        assert_eq!(name_of(&mut r), "random(seed=7)");
    }

    /// The random evaluator plays the recorded baseline games: its output is pinned.
    #[test]
    fn random_evaluations_are_pinned() {
        let history = [Position::startpos()];
        let moves = history[0].legal_moves();
        let e = RandomEvaluator::new(7)
            .evaluate_one(&input_of(&history, &moves))
            .unwrap();
        let bits = |v: &[f32]| v.iter().take(3).map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&e.policy), [1_020_947_974, 1_005_122_279, 993_866_211]);
        assert_eq!(bits(&e.wdl), [1_049_065_512, 1_057_814_227, 1_044_198_498]);
    }
}
