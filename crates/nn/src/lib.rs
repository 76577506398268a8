//! The network contract of xqzero: what a position looks like to the network
//! ([`encode`]), what its policy outputs mean ([`policy`]), and the [`Evaluator`] trait
//! that search and self-play call. There is no torch here: the torch network and its
//! evaluator live in `crates/train`, and [`UniformEvaluator`] / [`RandomEvaluator`] let
//! everything above the network be tested without it.
//!
//! ```
//! use xq_core::{Color, Position};
//! use xq_nn::{EncoderConfig, encode_into, policy_index, policy_move, POLICY_SIZE};
//!
//! let pos = Position::startpos();
//! let config = EncoderConfig::default();
//! let mut planes = vec![0.0f32; config.input_len()];
//! encode_into(std::slice::from_ref(&pos), &config, &mut planes).unwrap();
//!
//! let m = pos.parse_iccs("h2e2").unwrap();
//! let i = policy_index(m, Color::Red).unwrap();
//! assert!(i < POLICY_SIZE);
//! assert_eq!(policy_move(i, Color::Red), m);
//! ```
//!
//! # Input encoding (version [`ENCODING_VERSION`])
//!
//! One input is `C × 10 × 9` `f32` values, row-major as `[channel][rank][file]`, with
//! `C = 15 × history + 11` ([`PLANES_PER_STEP`](encode::PLANES_PER_STEP) per history
//! step, then [`FEATURE_PLANES`](encode::FEATURE_PLANES); see [`EncoderConfig`]). The
//! numbers this section gives are checked against the constants:
//!
//! ```
//! use xq_nn::{ENCODING_VERSION, EncoderConfig, POLICY_INDEX_VERSION, POLICY_SIZE, encode};
//! assert_eq!(ENCODING_VERSION, 2);
//! assert_eq!((encode::PLANES_PER_STEP, encode::FEATURE_PLANES), (15, 11));
//! assert_eq!(encode::DEFAULT_HISTORY, 8);
//! assert_eq!(EncoderConfig::default().planes(), 131); // 15 × 8 + 11
//! assert_eq!((POLICY_INDEX_VERSION, POLICY_SIZE), (1, 2086));
//! ```
//!
//! **Perspective.** Everything is seen from the side to move of the evaluated (newest)
//! position, the *mover*. For Red the board is as is (rank 0 = Red's back rank is row 0);
//! for Black it is rotated 180°, so square index `s` goes to `89 - s`: Black's back rank
//! becomes row 0 and its pieces are at the bottom. A 180° rotation also reverses the files
//! (Black's a-file is column 8), unlike chess engines' vertical flip; that is harmless
//! because the left-right mirror is a symmetry of the rules, and it is the standard
//! choice (it is exactly how the other side sees the board, and [`xq_core::Move::flip`]
//! does the same). The policy index uses the same rotation ([`policy_index`]). History
//! positions are drawn from the *current* mover's perspective too, so "own" means the
//! same side in every history step.
//!
//! **Planes.** For history step `t = 0 .. history` (`t = 0` is the evaluated position,
//! `t = 1` the one before, …), channels `15 t .. 15 t + 15`:
//!
//! | channel | content |
//! |---|---|
//! | `15t + 0 ..= 15t + 6` | the mover's pieces, one plane per role in [`xq_core::Role`] order: general, advisor, elephant, horse, chariot, cannon, soldier (1 where such a piece stands) |
//! | `15t + 7 ..= 15t + 13` | the opponent's pieces, same order |
//! | `15t + 14` | repetition: constant `min(n, 2) / 2` where `n` is how often this position (pieces and side to move) occurred earlier in the given history, so 0.5 on its second and 1 from its third occurrence |
//!
//! A history step before the start of the given history (start of the game) is all
//! zeros, repetition plane included. Then the eleven feature planes of the evaluated
//! position:
//!
//! | channel | content |
//! |---|---|
//! | `15 H + 0` | side to move: 1 if Black is to move, else 0 |
//! | `15 H + 1` | no-capture counter of the 60-move rule: plies since the last capture / 120, capped at 1 |
//! | `15 H + 2` | all ones: lets the convolutions find the board edge, since zero padding is otherwise indistinguishable from empty points |
//! | `15 H + 3 ..= 15 H + 8` | material balance, one constant plane per role from advisor to soldier: the mover's count minus the opponent's, over 2 (over 5 for soldiers) |
//! | `15 H + 9` | the mover's pieces that an opponent piece attacks (1 on their points) |
//! | `15 H + 10` | the opponent's pieces that a piece of the mover attacks |
//!
//! *Why hand-computed material and attack planes?* A network can learn both from the
//! piece planes, but only from many games: a value head sees material only as the sum
//! of a plane over the board, and "this piece hangs" needs the attack patterns of every
//! role. KataGo feeds its net such computed features (liberties, ladders) for the same
//! reason. Here they let a small network trained for minutes on a CPU value material
//! and see which pieces are attacked; large networks lose nothing by having them.
//!
//! *Why a side-to-move plane when the board is already flipped?* The rules are
//! symmetric under rotation plus colour swap, so in theory the flipped board is enough.
//! In practice the positions are not: Red moves first, so for the same flipped picture
//! the move number parity and the opening theory differ (Black is a tempo behind in
//! every opening line), and the rotation also reverses the files, so "which wing" is
//! colour-dependent in learned opening patterns. One constant plane lets the network
//! condition on that if it helps, and costs nothing when it does not (AlphaZero and
//! px0 carry the same plane).
//!
//! [`mirror_planes`] reverses the files of every plane in place: the encoding of the
//! mirrored positions, for augmentation (together with [`mirror_policy`] /
//! [`mirror_index`] on the policy target).
//!
//! # Policy index (version [`POLICY_INDEX_VERSION`])
//!
//! [`POLICY_SIZE`] = 2,086 from-to moves in the mover's view; see [`policy`] for the set,
//! its order and its symmetry. [`output`] turns the network's raw outputs (2,086
//! policy logits, 3 WDL logits) into an [`Evaluation`] over the legal moves, and
//! scatters training targets into the index layout, so every backend and the trainer
//! agree on it.

pub mod backend;
pub mod checkpoint;
pub mod encode;
pub mod evaluator;
pub mod output;
pub mod policy;

pub use backend::{
    BACKEND_ENV, BackendChoice, BadBackendChoice, BadDevice, BadInference, BadPrecision,
    CHOICE_MARGIN, DeviceChoice, Inference, InferenceBackend, LoadOptions, Measured,
    NetworkBackend, NoBackend, PRECISION_ENV, Precision, choose_fastest, cpu_has_bf16,
    cuda_device_present,
};
pub use encode::{
    ENCODING_VERSION, EncodeError, EncoderConfig, PLANE_SIZE, PackedPlane, encode_batch_into,
    encode_into, encode_packed_into, expand_into, mirror_planes,
};
pub use evaluator::{
    EvalError, EvalInput, Evaluation, Evaluator, RandomEvaluator, RawEvaluator, RawOutputs,
    UniformEvaluator, encode_eval_batch, encode_packed_batch, packed_positions,
};
pub use output::{
    evaluate_packed, evaluation_from_logits, legal_policy_from_logits, scatter_policy,
    wdl_from_logits,
};
pub use policy::{
    POLICY_INDEX_VERSION, POLICY_SIZE, mirror_index, mirror_policy, policy_index,
    policy_indices_into, policy_move, try_policy_move,
};
