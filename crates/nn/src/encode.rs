//! Input planes: what a position (with its history) looks like to the network.
//!
//! See the crate documentation for the plane list. Everything here writes into a
//! caller-owned `f32` buffer and allocates nothing, because it runs once per network
//! evaluation.

use xq_core::{Bitboard, Color, Position, Role, Square};

/// Version of the input encoding (the plane list, its order and the perspective rules).
/// Stored with checkpoints and training data; a network trained on one version must
/// refuse inputs of another. The number of history steps is not part of the version:
/// it is a separate architecture parameter ([`EncoderConfig::history`]).
pub const ENCODING_VERSION: u32 = 2;

/// Board height (ranks) of every plane.
pub const BOARD_RANKS: usize = 10;
/// Board width (files) of every plane.
pub const BOARD_FILES: usize = 9;
/// Values per plane (10 × 9).
pub const PLANE_SIZE: usize = BOARD_RANKS * BOARD_FILES;

/// Planes per history step: 7 own piece planes, 7 opponent piece planes, 1 repetition.
pub const PLANES_PER_STEP: usize = 15;
/// Planes after the history block: side to move, no-capture counter, ones, six
/// material-balance planes and two attack planes (see the crate documentation).
pub const FEATURE_PLANES: usize = 11;
/// Default number of history positions (as lc0 and px0).
pub const DEFAULT_HISTORY: usize = 8;

/// Plies without capture that the no-capture plane divides by: the 60-move rule's 120 plies.
pub const NO_CAPTURE_PLIES: f32 = 120.0;

/// How many positions the encoder looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EncoderConfig {
    /// History positions encoded, the current one included (at least 1).
    pub history: usize,
}

impl Default for EncoderConfig {
    fn default() -> Self {
        EncoderConfig {
            history: DEFAULT_HISTORY,
        }
    }
}

impl EncoderConfig {
    /// Number of input channels: `15 × history + 11`.
    pub const fn planes(&self) -> usize {
        PLANES_PER_STEP * self.history + FEATURE_PLANES
    }

    /// Floats per encoded position: `planes() × 90`.
    pub const fn input_len(&self) -> usize {
        self.planes() * PLANE_SIZE
    }

    /// Channel of the side-to-move plane.
    pub const fn side_to_move_plane(&self) -> usize {
        PLANES_PER_STEP * self.history
    }

    /// Channel of the no-capture counter plane.
    pub const fn no_capture_plane(&self) -> usize {
        PLANES_PER_STEP * self.history + 1
    }

    /// Channel of the all-ones plane.
    pub const fn ones_plane(&self) -> usize {
        PLANES_PER_STEP * self.history + 2
    }

    /// Channel of the material-balance plane of `role` (not the general, which both
    /// sides always have): the mover's count minus the opponent's, over 5 for soldiers
    /// and over 2 for the other roles, so it lies in [-1, 1].
    ///
    /// # Panics
    /// For [`Role::General`].
    pub const fn material_plane(&self, role: Role) -> usize {
        assert!(role.index() > 0, "the general has no material plane");
        PLANES_PER_STEP * self.history + 2 + role.index()
    }

    /// Channel of the plane marking the mover's pieces that an opponent piece attacks.
    pub const fn own_attacked_plane(&self) -> usize {
        PLANES_PER_STEP * self.history + 9
    }

    /// Channel of the plane marking the opponent's pieces that a piece of the mover
    /// attacks.
    pub const fn opponent_attacked_plane(&self) -> usize {
        PLANES_PER_STEP * self.history + 10
    }

    /// Channel of `role`'s plane for the side to move (`own`) or its opponent, at
    /// history step `step` (0 = the position evaluated, 1 = the one before, …).
    pub const fn piece_plane(&self, step: usize, own: bool, role: Role) -> usize {
        PLANES_PER_STEP * step + if own { 0 } else { 7 } + role.index()
    }

    /// Channel of the repetition plane of history step `step`.
    pub const fn repetition_plane(&self, step: usize) -> usize {
        PLANES_PER_STEP * step + 14
    }
}

/// Why a position could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("empty history: no position to encode")]
    EmptyHistory,
    #[error("encoder history must be at least 1 position")]
    ZeroHistory,
    #[error("output buffer holds {got} floats, the encoding needs {expected}")]
    BufferSize { expected: usize, got: usize },
}

/// One input plane in packed form: `value` on every point of `mask`, zero elsewhere.
///
/// Bit `i` of `mask` is point `i` of the plane as the mover sees it (`rank × 9 + file`,
/// the row-major offset of [`encode_into`]'s layout). Every plane of the encoding is
/// either a set of points with one value (pieces, attacked pieces) or a constant
/// (repetition, side to move, counters, material), so a position is `planes()` of these:
/// 20 bytes a plane, 2,620 for the default 131 planes against 47,160 as `f32` planes
/// (lc0's input format, masks plus values). Evaluators copy this to the device and
/// expand it there ([`expand_into`] is the host's expansion).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PackedPlane {
    pub mask: u128,
    pub value: f32,
}

/// The mask of every point of a plane (the 90 low bits).
pub const FULL_MASK: u128 = (1 << PLANE_SIZE) - 1;

impl PackedPlane {
    /// The all-zero plane.
    pub const ZERO: PackedPlane = PackedPlane {
        mask: 0,
        value: 0.0,
    };

    /// A plane of `value` everywhere.
    pub const fn constant(value: f32) -> PackedPlane {
        PackedPlane {
            mask: FULL_MASK,
            value,
        }
    }

    /// The low 64 bits of the mask and the 26 above them, as the signed integers a
    /// tensor holds (bit 63 becomes the sign of the first; the expansion reads bits,
    /// not values).
    pub const fn mask_words(&self) -> [i64; 2] {
        [self.mask as u64 as i64, (self.mask >> 64) as u64 as i64]
    }
}

/// `bb` as the mover sees it: Red's view is the board as is, Black's the board rotated
/// 180° (point `89 - sq`), which reverses the 90 bits.
#[inline(always)]
fn view_mask(bb: Bitboard, mover: Color) -> u128 {
    match mover {
        Color::Red => bb.0,
        Color::Black => bb.0.reverse_bits() >> (128 - PLANE_SIZE),
    }
}

/// Encodes the last position of `history` (oldest … newest) with up to
/// `config.history` positions of history into `out`, `config.planes()` packed planes
/// (see [`PackedPlane`]; the planes [`encode_into`] writes, in its order). Allocates
/// nothing. This is the one encoder: [`encode_into`] expands its output.
///
/// # Errors
/// An empty `history`, a zero `config.history`, or an `out` of the wrong length.
pub fn encode_packed_into(
    history: &[Position],
    config: &EncoderConfig,
    out: &mut [PackedPlane],
) -> Result<(), EncodeError> {
    let current = history.last().ok_or(EncodeError::EmptyHistory)?;
    if config.history == 0 {
        return Err(EncodeError::ZeroHistory);
    }
    if out.len() != config.planes() {
        return Err(EncodeError::BufferSize {
            expected: config.planes(),
            got: out.len(),
        });
    }
    out.fill(PackedPlane::ZERO);
    let mover = current.turn();
    for step in 0..config.history.min(history.len()) {
        let k = history.len() - 1 - step;
        let pos = &history[k];
        for (own, color) in [(true, mover), (false, mover.other())] {
            for role in Role::ALL {
                out[config.piece_plane(step, own, role)] = PackedPlane {
                    mask: view_mask(pos.pieces(color, role), mover),
                    value: 1.0,
                };
            }
        }
        let reps = earlier_occurrences(history, k);
        if reps > 0 {
            // 1 earlier occurrence → 0.5, 2 or more (a third occurrence now) → 1.
            out[config.repetition_plane(step)] = PackedPlane::constant(reps.min(2) as f32 / 2.0);
        }
    }
    if mover == Color::Black {
        out[config.side_to_move_plane()] = PackedPlane::constant(1.0);
    }
    let no_capture = (current.halfmoves() as f32 / NO_CAPTURE_PLIES).min(1.0);
    out[config.no_capture_plane()] = PackedPlane::constant(no_capture);
    out[config.ones_plane()] = PackedPlane::constant(1.0);
    for role in Role::ALL.into_iter().skip(1) {
        let own = current.pieces(mover, role).count() as f32;
        let theirs = current.pieces(mover.other(), role).count() as f32;
        let scale = if role == Role::Soldier { 5.0 } else { 2.0 };
        out[config.material_plane(role)] = PackedPlane::constant((own - theirs) / scale);
    }
    for (plane, victim) in [
        (config.own_attacked_plane(), mover),
        (config.opponent_attacked_plane(), mover.other()),
    ] {
        let mut hit = Bitboard::EMPTY;
        for sq in current.by_color(victim) {
            if attacked(current, sq, victim.other()) {
                hit = hit.with(sq);
            }
        }
        out[plane] = PackedPlane {
            mask: view_mask(hit, mover),
            value: 1.0,
        };
    }
    Ok(())
}

/// Expands packed planes into `f32` planes (`packed.len() × 90` floats, the layout of
/// [`encode_into`]); works on one position or a batch.
///
/// # Errors
/// If `out` does not hold `packed.len() × 90` floats.
pub fn expand_into(packed: &[PackedPlane], out: &mut [f32]) -> Result<(), EncodeError> {
    if out.len() != packed.len() * PLANE_SIZE {
        return Err(EncodeError::BufferSize {
            expected: packed.len() * PLANE_SIZE,
            got: out.len(),
        });
    }
    for (plane, dst) in packed.iter().zip(out.chunks_exact_mut(PLANE_SIZE)) {
        if plane.mask == FULL_MASK {
            dst.fill(plane.value);
            continue;
        }
        dst.fill(0.0);
        let mut bits = plane.mask & FULL_MASK;
        while bits != 0 {
            dst[bits.trailing_zeros() as usize] = plane.value;
            bits &= bits - 1;
        }
    }
    Ok(())
}

/// Encodes the last position of `history` (oldest … newest) with up to
/// `config.history` positions of history into `out`, `config.input_len()` floats laid
/// out as `[channel][rank from the mover][file]`, row-major: [`encode_packed_into`]
/// expanded. Allocates nothing for up to [`MAX_STACK_PLANES`] planes (the default
/// encoding has 131).
///
/// # Errors
/// An empty `history`, a zero `config.history`, or an `out` of the wrong length.
pub fn encode_into(
    history: &[Position],
    config: &EncoderConfig,
    out: &mut [f32],
) -> Result<(), EncodeError> {
    if history.is_empty() {
        return Err(EncodeError::EmptyHistory);
    }
    if config.history == 0 {
        return Err(EncodeError::ZeroHistory);
    }
    if out.len() != config.input_len() {
        return Err(EncodeError::BufferSize {
            expected: config.input_len(),
            got: out.len(),
        });
    }
    let planes = config.planes();
    if planes <= MAX_STACK_PLANES {
        let mut packed = [PackedPlane::ZERO; MAX_STACK_PLANES];
        encode_packed_into(history, config, &mut packed[..planes])?;
        expand_into(&packed[..planes], out)
    } else {
        let mut packed = vec![PackedPlane::ZERO; planes];
        encode_packed_into(history, config, &mut packed)?;
        expand_into(&packed, out)
    }
}

/// Planes [`encode_into`] packs on the stack: 16 history steps.
pub const MAX_STACK_PLANES: usize = PLANES_PER_STEP * 16 + FEATURE_PLANES;

/// Whether a piece of `by` could capture on `sq` (pseudo-legally: pins and the
/// capturer's own safety are ignored). [`Position::attackers`] also counts the general
/// facing along an open file, which captures only the other general.
fn attacked(pos: &Position, sq: Square, by: Color) -> bool {
    let mut a: Bitboard = pos.attackers(sq, by, pos.occupied());
    let general = pos.general(by);
    if a.contains(general) && pos.piece_at(sq).is_none_or(|p| p.role != Role::General) {
        let steps = sq.file().index().abs_diff(general.file().index())
            + sq.rank().index().abs_diff(general.rank().index());
        if steps != 1 || !sq.in_palace(by) {
            a = a.without(general);
        }
    }
    a.any()
}

/// How many times `history[k]` occurred before it in `history` (same pieces on the same
/// points and the same side to move, compared by Zobrist hash).
///
/// The scan stops at the first position with more pieces: material only decreases
/// during a game, so nothing before a capture can repeat a later position.
fn earlier_occurrences(history: &[Position], k: usize) -> u32 {
    let pos = &history[k];
    let (hash, material) = (pos.hash(), pos.occupied().count());
    let mut n = 0;
    for earlier in history[..k].iter().rev() {
        if earlier.occupied().count() != material {
            break;
        }
        n += u32::from(earlier.hash() == hash);
    }
    n
}

/// Encodes a batch into `out` (`N × config.input_len()` floats, `N` = number of
/// histories), each as [`encode_into`] does. Allocates nothing.
///
/// # Errors
/// As [`encode_into`], for the first bad entry; `out` must hold exactly `N` encodings.
pub fn encode_batch_into<'p, I>(
    histories: I,
    config: &EncoderConfig,
    out: &mut [f32],
) -> Result<(), EncodeError>
where
    I: IntoIterator<Item = &'p [Position]>,
    I::IntoIter: ExactSizeIterator,
{
    let histories = histories.into_iter();
    let len = config.input_len();
    let expected = histories.len() * len;
    if out.len() != expected {
        return Err(EncodeError::BufferSize {
            expected,
            got: out.len(),
        });
    }
    if len == 0 {
        return Err(EncodeError::ZeroHistory);
    }
    for (h, chunk) in histories.zip(out.chunks_exact_mut(len)) {
        encode_into(h, config, chunk)?;
    }
    Ok(())
}

/// Mirrors encoded planes left-right in place (files a ↔ i, for augmentation): the
/// result is the encoding of the mirrored positions. Works on one encoding or a batch,
/// since every plane is mirrored the same way.
///
/// # Errors
/// If `planes.len()` is not a whole number of 10×9 planes.
pub fn mirror_planes(planes: &mut [f32]) -> Result<(), EncodeError> {
    if !planes.len().is_multiple_of(PLANE_SIZE) {
        return Err(EncodeError::BufferSize {
            expected: planes.len().div_ceil(PLANE_SIZE) * PLANE_SIZE,
            got: planes.len(),
        });
    }
    for row in planes.chunks_exact_mut(BOARD_FILES) {
        row.reverse();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::{EvalInput, encode_eval_batch, encode_packed_batch};
    use xq_core::{Piece, Square};

    fn play(pos: &Position, moves: &[&str]) -> Vec<Position> {
        let mut out = vec![pos.clone()];
        let mut p = pos.clone();
        for iccs in moves {
            let m = p.parse_iccs(iccs).unwrap();
            p.play(m).unwrap();
            out.push(p.clone());
        }
        out
    }

    fn encode(history: &[Position], config: &EncoderConfig) -> Vec<f32> {
        let mut out = vec![f32::NAN; config.input_len()];
        encode_into(history, config, &mut out).unwrap();
        out
    }

    fn plane(enc: &[f32], ch: usize) -> &[f32] {
        &enc[ch * PLANE_SIZE..(ch + 1) * PLANE_SIZE]
    }

    /// The set points of a plane, named as the mover sees them (rank from the mover).
    fn set_points(p: &[f32]) -> Vec<String> {
        p.iter()
            .enumerate()
            .filter(|(_, v)| **v != 0.0)
            .map(|(i, _)| Square::new(i as u32).to_string())
            .collect()
    }

    fn mirror_position(pos: &Position) -> Position {
        let mut s = pos.to_setup();
        let mut board = [None; 90];
        for sq in Square::all() {
            board[sq.mirror().index()] = s.board[sq.index()];
        }
        s.board = board;
        Position::from_setup(s).unwrap()
    }

    #[test]
    fn default_config_has_131_planes() {
        let c = EncoderConfig::default();
        assert_eq!(c.history, 8);
        assert_eq!(c.planes(), 131);
        assert_eq!(c.input_len(), 131 * 90);
        assert_eq!(EncoderConfig { history: 1 }.planes(), 26);
    }

    #[test]
    fn start_position_planes_for_red() {
        let c = EncoderConfig::default();
        let enc = encode(&[Position::startpos()], &c);
        let own = |r| set_points(plane(&enc, c.piece_plane(0, true, r)));
        let opp = |r| set_points(plane(&enc, c.piece_plane(0, false, r)));
        assert_eq!(own(Role::Chariot), ["a0", "i0"]);
        assert_eq!(own(Role::General), ["e0"]);
        assert_eq!(own(Role::Cannon), ["b2", "h2"]);
        assert_eq!(own(Role::Soldier), ["a3", "c3", "e3", "g3", "i3"]);
        assert_eq!(opp(Role::Chariot), ["a9", "i9"]);
        assert_eq!(opp(Role::Horse), ["b9", "h9"]);
        assert_eq!(opp(Role::Soldier), ["a6", "c6", "e6", "g6", "i6"]);
        assert!(plane(&enc, c.repetition_plane(0)).iter().all(|&v| v == 0.0));
        assert!(
            plane(&enc, c.side_to_move_plane())
                .iter()
                .all(|&v| v == 0.0)
        );
        assert!(plane(&enc, c.no_capture_plane()).iter().all(|&v| v == 0.0));
        assert!(plane(&enc, c.ones_plane()).iter().all(|&v| v == 1.0));
        // 32 pieces, one point each; history steps 1..8 are missing and all zero.
        let pieces: f32 = enc[..c.piece_plane(1, true, Role::General) * PLANE_SIZE]
            .iter()
            .sum();
        assert_eq!(pieces, 32.0);
        let history: f32 = enc[PLANES_PER_STEP * PLANE_SIZE..c.side_to_move_plane() * PLANE_SIZE]
            .iter()
            .sum();
        assert_eq!(history, 0.0);
    }

    #[test]
    fn material_planes_hold_the_movers_count_minus_the_opponents() {
        let c = EncoderConfig { history: 1 };
        // Red: chariot, horse, two soldiers. Black: chariot, cannon, one soldier.
        let fen = "4k4/9/1c7/9/4r4/p8/P3R1P2/2N6/9/3K5 w - - 0 1";
        let pos = Position::from_fen(fen).unwrap();
        let enc = encode(std::slice::from_ref(&pos), &c);
        let value = |role| plane(&enc, c.material_plane(role))[0];
        assert!(
            plane(&enc, c.material_plane(Role::Horse))
                .iter()
                .all(|&v| v == 0.5)
        );
        assert_eq!(value(Role::Chariot), 0.0);
        assert_eq!(value(Role::Cannon), -0.5);
        assert_eq!(value(Role::Soldier), 1.0 / 5.0);
        assert_eq!(value(Role::Advisor), 0.0);
        // Black to move sees the same balance with the sign turned.
        let black = Position::from_fen(&fen.replace(" w ", " b ")).unwrap();
        let enc = encode(std::slice::from_ref(&black), &c);
        assert_eq!(plane(&enc, c.material_plane(Role::Horse))[0], -0.5);
        assert_eq!(plane(&enc, c.material_plane(Role::Cannon))[0], 0.5);
    }

    #[test]
    fn attack_planes_mark_pieces_en_prise_from_the_movers_view() {
        let c = EncoderConfig { history: 1 };
        // Red chariot e3 and black chariot e5 attack each other; the red horse c2 is
        // attacked by nothing; the black soldier a4 is attacked by nothing.
        let pos = Position::from_fen("4k4/9/9/9/4r4/p8/4R4/2N6/9/3K5 w - - 0 1").unwrap();
        let enc = encode(std::slice::from_ref(&pos), &c);
        assert_eq!(set_points(plane(&enc, c.own_attacked_plane())), ["e3"]);
        assert_eq!(set_points(plane(&enc, c.opponent_attacked_plane())), ["e5"]);
        // From Black's side the board turns: its chariot e5 is at e4 of its view.
        let black = Position::from_fen("4k4/9/9/9/4r4/p8/4R4/2N6/9/3K5 b - - 0 1").unwrap();
        let enc = encode(std::slice::from_ref(&black), &c);
        assert_eq!(set_points(plane(&enc, c.own_attacked_plane())), ["e4"]);
        assert_eq!(set_points(plane(&enc, c.opponent_attacked_plane())), ["e6"]);
    }

    #[test]
    fn a_general_facing_down_an_open_file_attacks_only_the_other_general() {
        let c = EncoderConfig { history: 1 };
        // The red general e0 faces the black chariot e5: it cannot take it, while the
        // chariot gives check.
        let pos = Position::from_fen("3k5/9/9/9/4r4/9/9/9/9/4K4 w - - 0 1").unwrap();
        let enc = encode(std::slice::from_ref(&pos), &c);
        assert_eq!(set_points(plane(&enc, c.own_attacked_plane())), ["e0"]);
        assert!(set_points(plane(&enc, c.opponent_attacked_plane())).is_empty());
        // A general one step away inside its palace does attack.
        let pos = Position::from_fen("3k5/9/9/9/9/9/9/9/4r4/4K4 w - - 0 1").unwrap();
        let enc = encode(std::slice::from_ref(&pos), &c);
        assert_eq!(set_points(plane(&enc, c.opponent_attacked_plane())), ["e1"]);
    }

    #[test]
    fn black_to_move_sees_its_pieces_at_the_bottom() {
        let c = EncoderConfig::default();
        // After 炮二平五 (h2e2): Black to move.
        let hist = play(&Position::startpos(), &["h2e2"]);
        let enc = encode(&hist, &c);
        let own = |step, r| set_points(plane(&enc, c.piece_plane(step, true, r)));
        let opp = |step, r| set_points(plane(&enc, c.piece_plane(step, false, r)));
        assert_eq!(own(0, Role::Chariot), ["a0", "i0"]);
        assert_eq!(own(0, Role::General), ["e0"]);
        // Red's cannons b2, e2 rotate to h7 (from b2) and e7 (from e2).
        assert_eq!(opp(0, Role::Cannon), ["e7", "h7"]);
        assert_eq!(opp(0, Role::Chariot), ["a9", "i9"]);
        // The step before (Red's start position) is also seen by Black: cannons b2, h2.
        assert_eq!(opp(1, Role::Cannon), ["b7", "h7"]);
        assert_eq!(own(1, Role::Chariot), ["a0", "i0"]);
        assert!(
            plane(&enc, c.side_to_move_plane())
                .iter()
                .all(|&v| v == 1.0)
        );
    }

    #[test]
    fn fen_position_planes_and_no_capture_counter() {
        let c = EncoderConfig { history: 2 };
        // Black to move, 30 plies without capture.
        let pos = Position::from_fen("3k5/4a4/9/9/9/9/9/2C6/9/4K4 b - - 30 40").unwrap();
        let enc = encode(std::slice::from_ref(&pos), &c);
        assert_eq!(
            set_points(plane(&enc, c.piece_plane(0, true, Role::General))),
            ["f0"] // d9 rotated
        );
        assert_eq!(
            set_points(plane(&enc, c.piece_plane(0, true, Role::Advisor))),
            ["e1"] // e8 rotated
        );
        assert_eq!(
            set_points(plane(&enc, c.piece_plane(0, false, Role::Cannon))),
            ["g7"] // c2 rotated
        );
        assert_eq!(
            set_points(plane(&enc, c.piece_plane(0, false, Role::General))),
            ["e9"]
        );
        assert!(plane(&enc, c.no_capture_plane()).iter().all(|&v| v == 0.25));
        // The counter saturates at the 60-move rule's 120 plies.
        let late = Position::from_fen("3k5/4a4/9/9/9/9/9/2C6/9/4K4 b - - 150 90").unwrap();
        let enc = encode(&[late], &c);
        assert!(plane(&enc, c.no_capture_plane()).iter().all(|&v| v == 1.0));
    }

    #[test]
    fn missing_history_is_zero_and_older_positions_are_dropped() {
        let c = EncoderConfig { history: 3 };
        let hist = play(
            &Position::startpos(),
            &["h2e2", "h9g7", "h0g2", "i9h9", "i0h0"],
        );
        // Two positions: step 2 is padding.
        let enc = encode(&hist[..2], &c);
        let step = |e: &[f32], s: usize| -> f32 {
            e[s * PLANES_PER_STEP * PLANE_SIZE..(s + 1) * PLANES_PER_STEP * PLANE_SIZE]
                .iter()
                .sum()
        };
        assert_eq!(step(&enc, 0), 32.0);
        assert_eq!(step(&enc, 1), 32.0);
        assert_eq!(step(&enc, 2), 0.0);
        // Six positions, history 3: only the newest three count.
        let full = encode(&hist, &c);
        let last3 = encode(&hist[3..], &c);
        assert_eq!(full, last3);
    }

    #[test]
    fn repetition_plane_counts_earlier_occurrences() {
        let c = EncoderConfig { history: 8 };
        // Horses out and back twice: the start position recurs at plies 4 and 8.
        let hist = play(
            &Position::startpos(),
            &[
                "h0g2", "h9g7", "g2h0", "g7h9", "h0g2", "h9g7", "g2h0", "g7h9",
            ],
        );
        let enc = encode(&hist, &c);
        let rep = |step| plane(&enc, c.repetition_plane(step))[0];
        // Step 0 = ply 8 (third occurrence), step 4 = ply 4 (second), step 1..3 =
        // plies 7..5 (second occurrences of plies 3..1).
        assert_eq!(rep(0), 1.0);
        assert_eq!(rep(1), 0.5);
        assert_eq!(rep(2), 0.5);
        assert_eq!(rep(3), 0.5);
        assert_eq!(rep(4), 0.5);
        // Steps 5..7 are plies 3..1, seen for the first time.
        assert_eq!([rep(5), rep(6), rep(7)], [0.0; 3]);
        assert!(plane(&enc, c.repetition_plane(0)).iter().all(|&v| v == 1.0));
        // Without the older plies in the given history there is no repetition to see.
        let enc = encode(&hist[7..], &c);
        assert_eq!(plane(&enc, c.repetition_plane(0))[0], 0.0);
    }

    #[test]
    fn encoding_a_mirrored_position_equals_mirroring_the_encoding() {
        let c = EncoderConfig { history: 4 };
        for (fen, moves) in [
            (
                xq_core::START_FEN,
                &["h2e2", "h9g7", "h0g2", "i9h9", "b0c2"][..],
            ),
            (
                "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
                &["b2b9", "a9b9", "h2h9", "i9h9"][..],
            ),
            (
                "3k5/4a4/9/9/9/9/9/2C6/9/4K4 b - - 30 40",
                &["e8d7", "c2d2"][..],
            ),
        ] {
            let hist = play(&Position::from_fen(fen).unwrap(), moves);
            let mirrored: Vec<Position> = hist.iter().map(mirror_position).collect();
            let mut enc = encode(&hist, &c);
            mirror_planes(&mut enc).unwrap();
            assert_eq!(enc, encode(&mirrored, &c), "{fen}");
        }
    }

    #[test]
    fn mirror_planes_is_an_involution_and_rejects_partial_planes() {
        let mut v: Vec<f32> = (0..3 * PLANE_SIZE).map(|i| i as f32).collect();
        let orig = v.clone();
        mirror_planes(&mut v).unwrap();
        assert_ne!(v, orig);
        assert_eq!(v[0], 8.0);
        mirror_planes(&mut v).unwrap();
        assert_eq!(v, orig);
        assert!(mirror_planes(&mut [0.0; 91]).is_err());
    }

    #[test]
    fn batch_encoding_matches_single_encodings() {
        let c = EncoderConfig { history: 2 };
        let hist = play(&Position::startpos(), &["h2e2", "h9g7", "h0g2"]);
        let batch: Vec<&[Position]> = (1..=hist.len()).map(|i| &hist[..i]).collect();
        let mut out = vec![f32::NAN; batch.len() * c.input_len()];
        encode_batch_into(batch.iter().copied(), &c, &mut out).unwrap();
        for (i, h) in batch.iter().enumerate() {
            assert_eq!(
                &out[i * c.input_len()..(i + 1) * c.input_len()],
                encode(h, &c)
            );
        }
        let moves = [];
        let inputs: Vec<EvalInput<'_>> = batch
            .iter()
            .map(|h| EvalInput {
                history: h,
                moves: &moves,
            })
            .collect();
        let mut out2 = vec![f32::NAN; out.len()];
        encode_eval_batch(&inputs, &c, &mut out2).unwrap();
        assert_eq!(out, out2);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let c = EncoderConfig::default();
        let mut out = vec![0.0; c.input_len()];
        assert_eq!(
            encode_into(&[], &c, &mut out),
            Err(EncodeError::EmptyHistory)
        );
        let start = [Position::startpos()];
        assert_eq!(
            encode_into(&start, &c, &mut out[1..]),
            Err(EncodeError::BufferSize {
                expected: c.input_len(),
                got: c.input_len() - 1
            })
        );
        assert_eq!(
            encode_into(&start, &EncoderConfig { history: 0 }, &mut []),
            Err(EncodeError::ZeroHistory)
        );
        let mut two = vec![0.0; 2 * c.input_len()];
        let one: [&[Position]; 1] = [&start];
        assert!(matches!(
            encode_batch_into(one, &c, &mut two),
            Err(EncodeError::BufferSize { .. })
        ));
        assert!(matches!(
            encode_batch_into([&start[..], &[]], &c, &mut two),
            Err(EncodeError::EmptyHistory)
        ));
    }

    /// A square's point in the mover's view, written out independently of
    /// `view_mask`: Red's as is, Black's rotated 180°.
    fn view(sq: usize, mover: Color) -> usize {
        match mover {
            Color::Red => sq,
            Color::Black => PLANE_SIZE - 1 - sq,
        }
    }

    #[test]
    fn own_and_opponent_planes_partition_the_board() {
        let c = EncoderConfig { history: 1 };
        let hist = play(&Position::startpos(), &["h2e2", "h7e7", "e2e6"]);
        let pos = hist.last().unwrap();
        let enc = encode(&hist, &c);
        let mover = pos.turn();
        for s in Square::all() {
            let v = view(s.index(), mover);
            for role in Role::ALL {
                for own in [true, false] {
                    let color = if own { mover } else { mover.other() };
                    let want = pos.piece_at(s) == Some(Piece::new(color, role));
                    let got = plane(&enc, c.piece_plane(0, own, role))[v] == 1.0;
                    assert_eq!(got, want, "{s} {role:?} own={own}");
                }
            }
        }
    }

    #[test]
    fn packed_planes_hold_each_plane_as_a_mask_and_one_value() {
        let c = EncoderConfig { history: 2 };
        let history = play(&Position::startpos(), &["h2e2", "h9g7", "e2e6"]);
        let mut packed = vec![PackedPlane::ZERO; c.planes()];
        encode_packed_into(&history, &c, &mut packed).unwrap();
        let flat = encode(&history, &c);
        for (ch, plane) in packed.iter().enumerate() {
            let f = self::plane(&flat, ch);
            for (point, &v) in f.iter().enumerate() {
                let set = plane.mask >> point & 1 == 1;
                assert_eq!(
                    v,
                    if set { plane.value } else { 0.0 },
                    "channel {ch} point {point}"
                );
            }
            assert_eq!(
                plane.mask & !FULL_MASK,
                0,
                "channel {ch} has bits past point 89"
            );
        }
        // Black is to move: its view rotates the board, so its general is on e0.
        let general = packed[c.piece_plane(0, true, Role::General)];
        assert_eq!(general.mask, 1 << 4, "e9 seen from Black is point 4");
        assert_eq!(packed[c.side_to_move_plane()], PackedPlane::constant(1.0));
        assert_eq!(packed[c.ones_plane()].mask, FULL_MASK);
        // Red's cannon took a soldier: Black's material plane shows the loss.
        assert_eq!(
            packed[c.material_plane(Role::Soldier)],
            PackedPlane::constant(-0.2)
        );
    }

    #[test]
    fn mask_words_split_the_mask_at_bit_64() {
        let p = PackedPlane {
            mask: (1 << 89) | (1 << 64) | (1 << 63) | 1,
            value: 1.0,
        };
        let [lo, hi] = p.mask_words();
        assert_eq!(lo as u64, (1 << 63) | 1);
        assert_eq!(hi as u64, (1 << 25) | 1);
        assert_eq!(PackedPlane::constant(0.5).mask_words(), [-1, (1 << 26) - 1]);
    }

    #[test]
    fn packed_batches_match_single_encodings_and_reject_bad_lengths() {
        let c = EncoderConfig { history: 3 };
        let history = play(&Position::startpos(), &["b2e2", "b9c7", "b0c2"]);
        let moves: Vec<Vec<xq_core::Move>> = (0..history.len())
            .map(|i| history[i].legal_moves().to_vec())
            .collect();
        let batch: Vec<EvalInput<'_>> = (0..history.len())
            .map(|i| EvalInput {
                history: &history[..=i],
                moves: &moves[i],
            })
            .collect();
        let mut packed = vec![PackedPlane::ZERO; batch.len() * c.planes()];
        encode_packed_batch(&batch, &c, &mut packed).unwrap();
        let mut flat = vec![f32::NAN; batch.len() * c.input_len()];
        expand_into(&packed, &mut flat).unwrap();
        for (i, input) in batch.iter().enumerate() {
            assert_eq!(
                &flat[i * c.input_len()..(i + 1) * c.input_len()],
                encode(input.history, &c),
                "position {i}"
            );
        }
        assert!(matches!(
            encode_packed_batch(&batch, &c, &mut packed[1..]),
            Err(EncodeError::BufferSize { .. })
        ));
        assert!(matches!(
            expand_into(&packed, &mut flat[1..]),
            Err(EncodeError::BufferSize { .. })
        ));
        assert!(matches!(
            encode_packed_into(&[], &c, &mut packed[..c.planes()]),
            Err(EncodeError::EmptyHistory)
        ));
    }
}
