//! Sampling and batch assembly.
//!
//! # Determinism
//! The samples of batch `step` are a pure function of `(seed, step, window)`: a
//! ChaCha8 generator seeded with `seed` on stream `step` draws, for each slot, a
//! window index (uniform, with replacement, by 128-bit multiply-shift) and a mirror
//! bit. Nothing depends on earlier batches, thread scheduling or timing, so a trainer
//! that saves a [`DataCursor`] (seed, next step, window fingerprint) and later rebuilds
//! the same window resumes with exactly the batches it would have drawn.
//!
//! # Layout
//! A [`Batch`] holds host buffers ready to become tensors: inputs `N×C×10×9`
//! (`C = EncoderConfig::planes()`), policy target `N×2086` (probabilities over the
//! policy index, zero off the target moves), legal-move mask `N×2086` (`u8` 0/1),
//! value target `N×3` (one-hot win/draw/loss for the side to move, zeros when the
//! record has no result), and per-sample weight, has-value flag (1.0/0.0), plies left
//! and the search's root value. Buffers are filled in parallel with rayon, each
//! worker reusing its own scratch, and a batch's buffers are reused from step to step.
//!
//! # Value targets
//! [`ValueTarget`] says what a self-play record's value target is; records without a
//! search (supervised data: root value all zeros) always keep their game result.
//! - With `q_ratio` above 0, the target of a record that has both a game result and a
//!   search value is `(1 − q) · z + q · s` (lc0's `q_ratio`): the search's value is a
//!   lower-variance estimate of the outcome than the one game played from the position.
//! - `s` is the record's own root value, or with `horizon` above 0 the short-term value
//!   (KataGo's TD value targets): the root values of this and the game's later records,
//!   each from this side's point of view, weighted by `(1 − λᵈ) · λ^(earlier plies)`
//!   with `λ = 1 − 1/horizon` per ply, the game result taking the weight left at its
//!   end. Every position of a game then has a target of its own rather than the one
//!   result they all share, which a small network learns by heart.
//! - With `share` below 1, only that share of the self-play records carries a value
//!   target at all, chosen by a hash of the position so that the same positions carry
//!   it in every batch (AlphaGo trained its value network on one position per game, as
//!   successive positions of a game share their label).

use ndarray::{Array1, Array2, Array4};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use xq_core::Position;
use xq_nn::{
    encode::{self, BOARD_FILES, BOARD_RANKS, EncoderConfig},
    policy::{POLICY_SIZE, mirror_index, policy_index},
};

use crate::{record::Chunk, window::Window};

/// One slot of a batch: which window record, and whether it is mirrored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sample {
    pub index: u64,
    pub mirrored: bool,
}

/// A function of a position giving a win/draw/loss for its side to move: see
/// [`BatchConfig::leaf_wdl`].
pub type LeafWdl = fn(&Position) -> [f32; 3];

/// How batches are drawn.
#[derive(Debug, Clone, Copy)]
pub struct BatchConfig {
    pub batch_size: usize,
    pub encoder: EncoderConfig,
    /// Mirror each sample left-right with probability 1/2 (the board's one symmetry).
    pub mirror: bool,
    /// Seed of the sampling stream.
    pub seed: u64,
    /// The value target of self-play records (see the module docs).
    pub value: ValueTarget,
    /// When set, each sample's [`Batch::leaf_wdl`] row is this function of its position
    /// (the unmirrored one): the search-time value the trainer's value loss is blended
    /// with (`[train] value_quiescence`). Unset, `leaf_wdl` is empty.
    pub leaf_wdl: Option<LeafWdl>,
}

/// What a self-play record's value target is (see the module docs). Held-out
/// evaluation always measures against the game result ([`ValueTarget::RESULT`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValueTarget {
    /// Share in [0, 1] of the target taken from the search's value instead of the game
    /// result; 0 trains on results only.
    pub q_ratio: f32,
    /// The short-term value's horizon in plies (at least 1); 0 mixes in the record's
    /// own root value.
    pub horizon: f32,
    /// Share in (0, 1] of the self-play records that carry a value target.
    pub share: f32,
}

impl ValueTarget {
    /// The game result for every record: AlphaZero's target.
    pub const RESULT: ValueTarget = ValueTarget {
        q_ratio: 0.0,
        horizon: 0.0,
        share: 1.0,
    };
}

impl Default for ValueTarget {
    fn default() -> ValueTarget {
        ValueTarget::RESULT
    }
}

/// Where a trainer is in its data stream: saved in its checkpoint sidecar so that a
/// resumed run draws the same batches as an uninterrupted one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DataCursor {
    /// Seed of the sampling stream.
    pub seed: u64,
    /// The next batch to draw.
    pub step: u64,
    /// Samples drawn so far (`step × batch size` while the batch size is unchanged).
    pub samples: u64,
    /// [`Window::fingerprint`] of the window the batches were drawn from.
    pub window_fingerprint: u64,
}

impl DataCursor {
    /// The start of a stream over `window`.
    pub fn start(seed: u64, window: &Window) -> DataCursor {
        DataCursor {
            seed,
            step: 0,
            samples: 0,
            window_fingerprint: window.fingerprint(),
        }
    }

    /// Whether `window` is the one this cursor was drawing from (same fingerprint):
    /// only then does resuming reproduce the uninterrupted run exactly.
    pub fn matches(&self, window: &Window) -> bool {
        self.window_fingerprint == window.fingerprint()
    }
}

/// Why a batch could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error("the replay window is empty: no training data yet")]
    EmptyWindow,
    #[error("batch size must be at least 1")]
    ZeroBatch,
    #[error("window index {0} out of range")]
    BadIndex(u64),
    #[error("encoding failed: {0}")]
    Encode(#[from] encode::EncodeError),
    #[error("move {mv} has no policy index (policy index and rules disagree)")]
    NoPolicyIndex { mv: xq_core::Move },
    #[error("the batch producer thread stopped")]
    ProducerGone,
    #[error("cannot start batch worker threads: {0}")]
    Threads(String),
}

/// Draws the samples of batch `step` into `out` (cleared first).
///
/// # Errors
/// An empty window or a zero batch size.
pub fn draw_samples(
    seed: u64,
    step: u64,
    batch_size: usize,
    mirror: bool,
    window_len: u64,
    out: &mut Vec<Sample>,
) -> Result<(), BatchError> {
    if window_len == 0 {
        return Err(BatchError::EmptyWindow);
    }
    if batch_size == 0 {
        return Err(BatchError::ZeroBatch);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(step);
    out.clear();
    out.extend((0..batch_size).map(|_| {
        let index = ((u128::from(rng.next_u64()) * u128::from(window_len)) >> 64) as u64;
        let bit = rng.next_u32() & 1 == 1;
        Sample {
            index,
            mirrored: mirror && bit,
        }
    }));
    Ok(())
}

/// Host-side buffers of one batch. See the module docs for shapes and meaning.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The step this batch was drawn for (`u64::MAX` for explicitly chosen samples).
    pub step: u64,
    pub samples: Vec<Sample>,
    pub inputs: Array4<f32>,
    pub policy: Array2<f32>,
    pub legal: Array2<u8>,
    pub value: Array2<f32>,
    pub has_value: Array1<f32>,
    pub weight: Array1<f32>,
    pub plies_left: Array1<f32>,
    pub root_wdl: Array2<f32>,
    /// `N×3` when the batch was drawn with [`BatchConfig::leaf_wdl`], else `0×3`.
    pub leaf_wdl: Array2<f32>,
}

impl Batch {
    /// Zeroed buffers for `n` samples.
    pub fn new(n: usize, encoder: &EncoderConfig) -> Batch {
        Batch {
            step: 0,
            samples: Vec::with_capacity(n),
            inputs: Array4::zeros((n, encoder.planes(), BOARD_RANKS, BOARD_FILES)),
            policy: Array2::zeros((n, POLICY_SIZE)),
            legal: Array2::zeros((n, POLICY_SIZE)),
            value: Array2::zeros((n, 3)),
            has_value: Array1::zeros(n),
            weight: Array1::zeros(n),
            plies_left: Array1::zeros(n),
            root_wdl: Array2::zeros((n, 3)),
            leaf_wdl: Array2::zeros((0, 3)),
        }
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.has_value.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Resizes (reallocating only when the shape changes).
    fn ensure(&mut self, n: usize, encoder: &EncoderConfig) {
        if self.len() != n || self.inputs.shape()[1] != encoder.planes() {
            *self = Batch::new(n, encoder);
        }
    }
}

/// Per-worker scratch: the replayed game, reused from sample to sample.
#[derive(Default)]
struct Scratch {
    positions: Vec<Position>,
}

/// Fills `batch` with batch `step` of the sampling stream.
///
/// # Errors
/// An empty window, a zero batch size, or an encoder error.
pub fn assemble(
    window: &Window,
    cfg: &BatchConfig,
    step: u64,
    batch: &mut Batch,
) -> Result<(), BatchError> {
    let mut samples = std::mem::take(&mut batch.samples);
    let result = draw_samples(
        cfg.seed,
        step,
        cfg.batch_size,
        cfg.mirror,
        window.len(),
        &mut samples,
    )
    .and_then(|()| {
        fill_batch(
            window,
            &cfg.encoder,
            cfg.leaf_wdl,
            cfg.value,
            &samples,
            batch,
        )
    });
    batch.samples = samples;
    batch.step = step;
    result
}

/// Fills `batch` with window records `range` in order, unmirrored: for evaluation
/// over a held-out window, walk `0..len` in slices of the batch size (the last batch
/// may be shorter).
///
/// # Errors
/// An empty or out-of-window range, or an encoder error.
pub fn assemble_range(
    window: &Window,
    encoder: &EncoderConfig,
    range: std::ops::Range<u64>,
    batch: &mut Batch,
) -> Result<(), BatchError> {
    if range.end > window.len() {
        return Err(BatchError::BadIndex(range.end - 1));
    }
    let mut samples = std::mem::take(&mut batch.samples);
    samples.clear();
    samples.extend(range.map(|index| Sample {
        index,
        mirrored: false,
    }));
    let result = fill_batch(window, encoder, None, ValueTarget::RESULT, &samples, batch);
    batch.samples = samples;
    batch.step = u64::MAX;
    result
}

/// Fills `batch` with the given samples, in order.
///
/// # Errors
/// An index past the window, an empty sample list, or an encoder error.
pub fn assemble_samples(
    window: &Window,
    encoder: &EncoderConfig,
    samples: &[Sample],
    batch: &mut Batch,
) -> Result<(), BatchError> {
    let result = fill_batch(window, encoder, None, ValueTarget::RESULT, samples, batch);
    batch.samples.clear();
    batch.samples.extend_from_slice(samples);
    batch.step = u64::MAX;
    result
}

/// Sizes `batch` for `samples` and fills every buffer except `batch.samples`;
/// `batch.leaf_wdl` gets a row per sample from `leaf`, or none without it.
fn fill_batch(
    window: &Window,
    encoder: &EncoderConfig,
    leaf: Option<LeafWdl>,
    value_target: ValueTarget,
    samples: &[Sample],
    batch: &mut Batch,
) -> Result<(), BatchError> {
    if samples.is_empty() {
        return Err(BatchError::ZeroBatch);
    }
    batch.ensure(samples.len(), encoder);
    let leaf_rows = if leaf.is_some() { samples.len() } else { 0 };
    if batch.leaf_wdl.nrows() != leaf_rows {
        batch.leaf_wdl = Array2::zeros((leaf_rows, 3));
    }
    // One slot a sample, `None` without `leaf`: the rows are filled from the position
    // each sample's replay has at hand, not from a second replay.
    let mut leaf_out: Vec<Option<&mut [f32]>> = if leaf.is_some() {
        let rows = batch.leaf_wdl.as_slice_mut().expect("standard layout");
        rows.chunks_mut(3).map(Some).collect()
    } else {
        samples.iter().map(|_| None).collect()
    };
    let input_len = encoder.input_len();
    let inputs = batch.inputs.as_slice_mut().expect("standard layout");
    let policy = batch.policy.as_slice_mut().expect("standard layout");
    let legal = batch.legal.as_slice_mut().expect("standard layout");
    let value = batch.value.as_slice_mut().expect("standard layout");
    let root = batch.root_wdl.as_slice_mut().expect("standard layout");
    let has_value = batch.has_value.as_slice_mut().expect("standard layout");
    let weight = batch.weight.as_slice_mut().expect("standard layout");
    let plies_left = batch.plies_left.as_slice_mut().expect("standard layout");
    samples
        .par_iter()
        .zip(inputs.par_chunks_mut(input_len))
        .zip(policy.par_chunks_mut(POLICY_SIZE))
        .zip(legal.par_chunks_mut(POLICY_SIZE))
        .zip(value.par_chunks_mut(3))
        .zip(root.par_chunks_mut(3))
        .zip(has_value.par_iter_mut())
        .zip(weight.par_iter_mut())
        .zip(plies_left.par_iter_mut())
        .zip(leaf_out.par_iter_mut())
        .with_min_len(4)
        .try_for_each_init(Scratch::default, |scratch, item| {
            let (((((((((s, inp), pol), leg), val), rw), hv), w), pl), lw) = item;
            let out = SampleOut {
                input: inp,
                policy: pol,
                legal: leg,
                value: val,
                root_wdl: rw,
                leaf_wdl: leaf.zip(lw.as_deref_mut()),
            };
            let (h, wt, p) = fill_sample(window, encoder, value_target, *s, scratch, out)?;
            *hv = h;
            *w = wt;
            *pl = p;
            Ok(())
        })
}

struct SampleOut<'a> {
    input: &'a mut [f32],
    policy: &'a mut [f32],
    legal: &'a mut [u8],
    value: &'a mut [f32],
    root_wdl: &'a mut [f32],
    /// The leaf function and the sample's row of [`Batch::leaf_wdl`], when drawn with one.
    leaf_wdl: Option<(LeafWdl, &'a mut [f32])>,
}

/// Replays sample `s`'s game up to its record into `scratch.positions` (the start
/// position first, the record's last) and returns the record's chunk and record.
///
/// The whole game prefix is replayed: the encoder counts repetitions over the history
/// it is given, so it must see every position back to the last capture before the
/// oldest history step, not only the last `history` positions.
fn replay<'w>(
    window: &'w Window,
    s: Sample,
    scratch: &mut Scratch,
) -> Result<(&'w Chunk, usize), BatchError> {
    let (chunk, at) = window
        .locate(s.index)
        .ok_or(BatchError::BadIndex(s.index))?;
    let rec = &chunk.records[at];
    let game = chunk
        .games
        .get(rec.game as usize)
        .ok_or(BatchError::BadIndex(s.index))?;
    let ply = usize::from(rec.ply);
    let positions = &mut scratch.positions;
    positions.clear();
    let mut pos = game.start.clone();
    positions.push(pos.clone());
    for &m in game.moves.get(..ply).ok_or(BatchError::BadIndex(s.index))? {
        pos.play_unchecked(m);
        positions.push(pos.clone());
    }
    Ok((chunk, at))
}

/// Builds one sample; returns (has value, weight, plies left).
fn fill_sample(
    window: &Window,
    encoder: &EncoderConfig,
    value_target: ValueTarget,
    s: Sample,
    scratch: &mut Scratch,
    out: SampleOut<'_>,
) -> Result<(f32, f32, f32), BatchError> {
    let (chunk, at) = replay(window, s, scratch)?;
    let rec = &chunk.records[at];
    let ply = usize::from(rec.ply);
    let positions = &scratch.positions;
    let oldest = ply.saturating_sub(encoder.history.saturating_sub(1));
    let first = oldest.saturating_sub(positions[oldest].halfmoves() as usize);
    encode::encode_into(&positions[first..=ply], encoder, out.input)?;
    if s.mirrored {
        encode::mirror_planes(out.input)?;
    }
    let current = &positions[ply];
    let turn = current.turn();
    let index_of = |mv| -> Result<usize, BatchError> {
        let i = policy_index(mv, turn).ok_or(BatchError::NoPolicyIndex { mv })?;
        Ok(if s.mirrored { mirror_index(i) } else { i })
    };

    out.policy.fill(0.0);
    let entries = chunk.policy_of(rec);
    let total: f32 = entries.iter().map(|e| f32::from(e.weight)).sum();
    for e in entries {
        out.policy[index_of(e.mv)?] = f32::from(e.weight) / total;
    }
    out.legal.fill(0);
    for mv in current.legal_moves() {
        out.legal[index_of(mv)?] = 1;
    }
    let searched = rec.root_wdl.iter().sum::<f32>() > 0.5;
    let kept = !searched
        || value_target.share >= 1.0
        || unit_interval(current.hash()) < f64::from(value_target.share);
    let has_value = match rec.result {
        Some(r) if kept => {
            out.value.copy_from_slice(&r.one_hot());
            if searched && value_target.q_ratio > 0.0 {
                let s = if value_target.horizon > 0.0 {
                    short_term_value(chunk, at, value_target.horizon)
                } else {
                    rec.root_wdl
                };
                let q = value_target.q_ratio.clamp(0.0, 1.0);
                for (t, v) in out.value.iter_mut().zip(s) {
                    *t = (1.0 - q) * *t + q * v;
                }
            }
            1.0
        }
        _ => {
            out.value.fill(0.0);
            0.0
        }
    };
    out.root_wdl.copy_from_slice(&rec.root_wdl);
    if let Some((leaf, row)) = out.leaf_wdl {
        row.copy_from_slice(&leaf(current));
    }
    Ok((has_value, rec.weight, f32::from(rec.plies_left)))
}

/// A position hash mapped to [0, 1): which positions carry a value target under
/// [`ValueTarget::share`], the same ones in every batch and every run.
fn unit_interval(hash: u64) -> f64 {
    (xq_core::hash::mix64(hash) >> 11) as f64 / (1u64 << 53) as f64
}

/// The short-term value of record `at` of `chunk` (see the module docs): the root
/// values of it and of its game's later records (stored after it, in ply order), each
/// turned to this record's side, weighted with `λ = 1 − 1/horizon` per ply, and the
/// game result with the weight left at the game's end.
fn short_term_value(chunk: &Chunk, at: usize, horizon: f32) -> [f32; 3] {
    let rec = &chunk.records[at];
    let lambda = (1.0 - 1.0 / horizon.max(1.0)).clamp(0.0, 1.0);
    let end = u32::from(rec.ply) + u32::from(rec.plies_left);
    let mut target = [0.0f32; 3];
    // The weight not yet given out: what the later records and the result share.
    let mut left = 1.0f32;
    let mut next = chunk.records[at..]
        .iter()
        .take_while(|r| r.game == rec.game)
        .peekable();
    let mut last_ply = u32::from(rec.ply);
    while let Some(r) = next.next() {
        let ply = u32::from(r.ply);
        if ply < last_ply || r.root_wdl.iter().sum::<f32>() <= 0.5 {
            break;
        }
        let until = next
            .peek()
            .filter(|n| n.game == rec.game && u32::from(n.ply) > ply)
            .map_or(end, |n| u32::from(n.ply));
        // This record's value stands for the plies up to the next record's.
        let w = left * (1.0 - lambda.powi(until.saturating_sub(ply) as i32));
        let own_side = (ply - u32::from(rec.ply)) % 2 == 0;
        let v = if own_side {
            r.root_wdl
        } else {
            [r.root_wdl[2], r.root_wdl[1], r.root_wdl[0]]
        };
        for (t, x) in target.iter_mut().zip(v) {
            *t += w * x;
        }
        left -= w;
        last_ply = ply;
    }
    let z = rec.result.map_or([0.0; 3], |r| r.one_hot());
    for (t, x) in target.iter_mut().zip(z) {
        *t += left * x;
    }
    target
}
