//! The anchored strength scale: fixed opponents of calibrated rating, on which any
//! player (an exported network, a run's accepted networks, an external engine) gets
//! one Elo with a 95% interval.
//!
//! The anchors are the built-in baselines and Debian's Fairy-Stockfish at four Skill
//! Levels, each at its own settings (alpha-beta at its depth, Fairy-Stockfish at the
//! referee's `go depth 8` when no clock is given). Their ratings come from a
//! calibration, `xqz strength --calibrate`, that plays each anchor against its two
//! nearest neighbours on the ladder and fits them with the maximum-likelihood
//! [`ladder`](crate::stats::ladder), Fairy-Stockfish Skill Level 0 fixed at 0. The
//! result is embedded from `anchors.json` next to this file, so every binary rates on
//! the same scale; a new calibration is a commit that changes that file.
//!
//! A player is then rated with [`rate`]: its games against any subset of the anchors,
//! the anchors' ratings held fixed. Which anchor a player named in a game is (an
//! anchor's specification, or the name it plays under) takes the player
//! specification grammar, which lives with the players in xq-eval (`anchors`).

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::{
    stats::{AnchorGames, AnchoredRating, StatsError, rate_against_anchors},
    summary::MatchSummary,
};

/// Virtual ½ games against each anchor played (see [`crate::stats::anchored`]).
pub const PRIOR_GAMES: f64 = 1.0;

/// One anchor: a player specification and its calibrated rating.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    /// The player, as `xqz match` takes it (`alphabeta:depth=1`, `fsf:skill=0`).
    pub spec: String,
    pub elo: f64,
    /// Standard error of `elo` from the calibration (0 for the fixed anchor).
    pub stderr: f64,
}

/// How the anchors were calibrated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The command that produced the ratings.
    pub command: String,
    /// The commit its binary was built from.
    pub commit: String,
    /// Games played in all.
    pub games: u64,
    pub time_control: String,
}

/// The anchors, weakest first, with their calibration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnchorTable {
    /// What the numbers mean ("logistic Elo, fsf:skill=0 = 0").
    pub scale: String,
    pub calibration: Calibration,
    pub anchors: Vec<Anchor>,
}

/// One player's rating as `xqz strength` writes it (`NAME.json`, beside `NAME.pgn`
/// with the games) and as `xqz report` reads it back from `RUN/strength/` for the
/// learning curve. Fields other than the rating and its games have defaults, and
/// unknown fields are ignored, so either side may be a newer version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StrengthRecord {
    /// The player as specified.
    pub player: String,
    /// The run's model name (`s0000006150`) when rated with `--run`.
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub step: Option<u64>,
    pub time_control: String,
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub games_per_anchor: usize,
    pub rating: AnchoredRating,
    pub anchors: Vec<AnchorGames>,
    #[serde(default)]
    pub matches: Vec<MatchSummary>,
    /// How the anchors' ratings were obtained.
    #[serde(default)]
    pub calibration: Option<Calibration>,
}

static BUILTIN: LazyLock<AnchorTable> = LazyLock::new(|| {
    serde_json::from_str(include_str!("anchors.json"))
        .expect("the embedded anchors.json is checked by a unit test")
});

impl AnchorTable {
    /// The calibrated table embedded in this binary.
    pub fn builtin() -> &'static AnchorTable {
        &BUILTIN
    }

    /// The anchor specifications, weakest first.
    pub fn specs(&self) -> Vec<&str> {
        self.anchors.iter().map(|a| a.spec.as_str()).collect()
    }
}

/// Rates a player on the scale from its games against anchors: the anchors' ratings
/// held fixed, [`PRIOR_GAMES`] virtual ½ games against each, a 95% interval.
///
/// # Errors
/// No game against any anchor.
pub fn rate(games: &[AnchorGames]) -> Result<AnchoredRating, StatsError> {
    rate_against_anchors(games, PRIOR_GAMES, 0.95)
}

/// The pairings of a calibration: every anchor against its next two up the ladder
/// (indices into a weakest-first list).
pub fn calibration_pairs(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .flat_map(|i| (i + 1..(i + 3).min(n)).map(move |j| (i, j)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_parses_and_runs_weakest_first() {
        let t = AnchorTable::builtin();
        assert!(t.anchors.len() >= 5);
        assert!(t.anchors.windows(2).all(|w| w[0].elo <= w[1].elo), "{t:?}");
        for a in &t.anchors {
            assert!(!a.spec.is_empty());
            assert!(a.elo.is_finite() && a.stderr >= 0.0);
        }
    }

    #[test]
    fn calibration_pairs_join_each_anchor_to_its_next_two() {
        assert_eq!(
            calibration_pairs(4),
            vec![(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
        );
        assert!(calibration_pairs(1).is_empty());
    }

    #[test]
    fn an_even_score_against_one_anchor_rates_at_its_rating() {
        let t = AnchorTable::builtin();
        let greedy = t.anchors.iter().find(|a| a.spec == "greedy").unwrap();
        let games = [AnchorGames {
            anchor: greedy.spec.clone(),
            anchor_elo: greedy.elo,
            wins: 10,
            draws: 0,
            losses: 10,
        }];
        assert!((rate(&games).unwrap().elo - greedy.elo).abs() < 1e-6);
        assert!(rate(&[]).is_err());
    }
}
