//! Scores as engines report them: centipawns or a mate distance ([`Score`]), and the
//! mapping between a network search's value and centipawns.
//!
//! A leaf of the crate: the network search, its leaf quiescence and the UCCI engine
//! all speak these, so they live below all three and import nothing of the crate
//! (nor link up to it: a leaf that named its users would make them a circle).
//!
//! # Value and centipawns
//!
//! A search's value `v` is win − loss in [-1, 1] for the side to move. Engines and
//! GUIs speak centipawns, so [`value_to_cp`] maps `v` to `cp = 290 · atanh(v)`
//! (equivalently `v = tanh(cp / 290)`), clamped to ±[`MAX_CP`]. With it `v = 0.5` is
//! about +159, `v = 0.9` about +427 and `v = 0.99` about +768: a piece up (a horse or a
//! cannon, ~100 in the alpha-beta evaluation's scale) is a clear but not yet decisive
//! edge, as a network's value usually rates it. The scale constant is a convention, not
//! a fit; resign and draw thresholds in centipawns go through the same mapping
//! ([`cp_to_value`]), so they mean the same search value whatever the scale.

/// A score for `info` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Score {
    /// Centipawns (a horse or cannon is about 100), side to move's view.
    Cp(i32),
    /// Mate in this many moves (negative: being mated).
    Mate(i32),
}

/// The largest centipawn score [`value_to_cp`] reports (a won position).
pub const MAX_CP: i32 = 9_999;

/// The `info` score of a win by the rules alone (a loss: its negative), which the
/// network search reports instead of a mate (see module `net`). Above anything a network value maps to (an `f32`
/// below 1 gives at most about 2500) and below the mate band of UCCI engines in
/// ElephantEye's convention (from 9800: `MATE_VALUE` 10000 less 200), so that a GUI
/// reads it as a decided game but not as a mate under either convention.
pub const RULE_WIN_CP: i32 = 5_000;

/// Centipawn scale of [`value_to_cp`]: `v = tanh(cp / CP_SCALE)`.
pub const CP_SCALE: f32 = 290.0;

/// Maps a search value (win − loss in [-1, 1]) to centipawns: `290 · atanh(v)`,
/// clamped to ±[`MAX_CP`]. See the module documentation.
pub fn value_to_cp(v: f32) -> i32 {
    if !v.is_finite() {
        return 0;
    }
    let v = v.clamp(-1.0, 1.0);
    let limit = (MAX_CP as f32 / CP_SCALE).tanh();
    if v >= limit {
        return MAX_CP;
    }
    if v <= -limit {
        return -MAX_CP;
    }
    (CP_SCALE * v.atanh()).round() as i32
}

/// The inverse of [`value_to_cp`]: `tanh(cp / 290)`. In f32 the round trip is exact
/// to a centipawn up to about ±1500; beyond, values are too close to ±1 to tell apart.
pub fn cp_to_value(cp: i32) -> f32 {
    (cp as f32 / CP_SCALE).tanh()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centipawn_mapping_is_odd_monotone_and_invertible() {
        assert_eq!(value_to_cp(0.0), 0);
        assert_eq!(value_to_cp(1.0), MAX_CP);
        assert_eq!(value_to_cp(-1.0), -MAX_CP);
        assert_eq!(value_to_cp(f32::NAN), 0);
        assert_eq!(value_to_cp(0.5), 159);
        let mut last = -MAX_CP - 1;
        for i in -100..=100 {
            let v = i as f32 / 100.0;
            let cp = value_to_cp(v);
            assert!(cp > last || cp == MAX_CP, "{v}: {cp} after {last}");
            assert_eq!(cp, -value_to_cp(-v));
            last = cp;
        }
        // A network value short of ±1 stays below the score of a win by the rules.
        let almost = 1.0 - f32::EPSILON / 2.0;
        assert!(almost < 1.0 && value_to_cp(almost) < RULE_WIN_CP);
        for cp in [-1500, -300, -1, 0, 1, 150, 900, 1500] {
            assert!((value_to_cp(cp_to_value(cp)) - cp).abs() <= 1, "{cp}");
        }
    }
}
