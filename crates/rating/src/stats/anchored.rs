//! One player's rating from games against opponents of known rating: the anchored
//! ladder of `xqz strength` and of the run's learning curve.
//!
//! # Model
//!
//! The logistic Elo curve, `p(R) = 1 / (1 + 10^{-(R - R_a)/400})` against an anchor
//! rated `R_a`, with a draw counted as half a win and half a loss (the quasi-likelihood
//! Ordo uses): the estimate `R` maximizes `Σ s ln p + (1 - s) ln (1 - p)` over all
//! games, `s` being the player's score (1, ½, 0) in each. The anchors' ratings are
//! fixed: they come from a calibration of the anchors among themselves, so every rating
//! lands on that one scale.
//!
//! **Prior.** A player who won or lost every game has an infinite estimate. As in the
//! [`ladder`](super::ladder), every anchor played gets `prior_games` virtual games
//! scored ½, which keeps the estimate finite (a player who beat every anchor is placed
//! a little above the strongest of them, not at infinity) and is negligible with tens
//! of real games.
//!
//! **Interval.** The standard error is `1 / √I` with the Fisher information
//! `I = Σ n p (1 - p) (ln 10 / 400)²` at the estimate. Draws make the true variance of
//! a game's score smaller than the Bernoulli `p (1 - p)`, so with many draws the
//! interval is conservative (too wide), never too narrow. The anchors' own
//! uncertainty is not included: a rating is relative to the anchors as calibrated.

use serde::{Deserialize, Serialize};

use super::{StatsError, check_confidence, normal_quantile};

const MAX_ITERATIONS: usize = 100;
/// Slope of the logistic curve in natural-log units per Elo point.
const K: f64 = std::f64::consts::LN_10 / 400.0;

/// Games against one anchor, from the rated player's side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnchorGames {
    /// The anchor's name (for reports).
    pub anchor: String,
    /// The anchor's fixed rating.
    pub anchor_elo: f64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl AnchorGames {
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    pub fn points(&self) -> f64 {
        self.wins as f64 + 0.5 * self.draws as f64
    }
}

/// The fitted rating of one player on the anchors' scale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnchoredRating {
    pub elo: f64,
    pub stderr: f64,
    pub elo_lower: f64,
    pub elo_upper: f64,
    pub confidence: f64,
    /// Real games (the prior's virtual games are not counted).
    pub games: u64,
    pub points: f64,
    /// Virtual ½ games added against each anchor played.
    pub prior_games: f64,
}

/// Fits one rating against anchors of fixed rating (see the module docs).
///
/// # Errors
/// A confidence level outside (0, 1), a negative or non-finite `prior_games`, an
/// anchor rating that is not finite, or no games at all.
pub fn rate_against_anchors(
    games: &[AnchorGames],
    prior_games: f64,
    confidence: f64,
) -> Result<AnchoredRating, StatsError> {
    check_confidence(confidence)?;
    if !(prior_games >= 0.0 && prior_games.is_finite()) {
        return Err(StatsError::InvalidParameter {
            name: "prior_games",
            value: prior_games,
            reason: "must be a finite number >= 0",
        });
    }
    if let Some(bad) = games.iter().find(|g| !g.anchor_elo.is_finite()) {
        return Err(StatsError::InvalidParameter {
            name: "anchor elo",
            value: bad.anchor_elo,
            reason: "must be a finite rating",
        });
    }
    let played: Vec<&AnchorGames> = games.iter().filter(|g| g.games() > 0).collect();
    if played.is_empty() {
        return Err(StatsError::NoGames);
    }
    // (anchor rating, games, points) with the prior folded in.
    let cells: Vec<(f64, f64, f64)> = played
        .iter()
        .map(|g| {
            (
                g.anchor_elo,
                g.games() as f64 + prior_games,
                g.points() + 0.5 * prior_games,
            )
        })
        .collect();
    let n_total: f64 = cells.iter().map(|c| c.1).sum();
    let p_total: f64 = cells.iter().map(|c| c.2).sum();
    if p_total <= 0.0 || p_total >= n_total {
        // Only possible without a prior: every game won or every game lost.
        return Err(StatsError::InvalidParameter {
            name: "prior_games",
            value: prior_games,
            reason: "must be > 0 when the player won or lost every game",
        });
    }

    // Newton's method on the concave log-likelihood, from the games-weighted mean
    // anchor rating; steps are capped so that a far-off start cannot overshoot.
    let mut r = cells.iter().map(|c| c.0 * c.1).sum::<f64>() / n_total;
    let mut converged = false;
    for _ in 0..MAX_ITERATIONS {
        let (mut gradient, mut information) = (0.0, 0.0);
        for &(ra, n, points) in &cells {
            let p = 1.0 / (1.0 + (-K * (r - ra)).exp());
            gradient += K * (points - n * p);
            information += K * K * n * p * (1.0 - p);
        }
        let step = (gradient / information).clamp(-400.0, 400.0);
        r += step;
        if step.abs() < 1e-9 {
            converged = true;
            break;
        }
    }
    if !converged {
        return Err(StatsError::NotConverged {
            iterations: MAX_ITERATIONS,
        });
    }
    let information: f64 = cells
        .iter()
        .map(|&(ra, n, _)| {
            let p = 1.0 / (1.0 + (-K * (r - ra)).exp());
            K * K * n * p * (1.0 - p)
        })
        .sum();
    let stderr = 1.0 / information.sqrt();
    let z = normal_quantile(0.5 + confidence / 2.0);
    Ok(AnchoredRating {
        elo: r,
        stderr,
        elo_lower: r - z * stderr,
        elo_upper: r + z * stderr,
        confidence,
        games: played.iter().map(|g| g.games()).sum(),
        points: played.iter().map(|g| g.points()).sum(),
        prior_games,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{elo_from_score, score_from_elo};

    fn games(anchor_elo: f64, wins: u64, draws: u64, losses: u64) -> AnchorGames {
        AnchorGames {
            anchor: format!("a{anchor_elo}"),
            anchor_elo,
            wins,
            draws,
            losses,
        }
    }

    #[test]
    fn one_anchor_without_prior_gives_the_match_elo() {
        let g = [games(100.0, 30, 20, 10)];
        let r = rate_against_anchors(&g, 0.0, 0.95).unwrap();
        let expected = 100.0 + elo_from_score(40.0 / 60.0);
        assert!((r.elo - expected).abs() < 1e-6, "{} vs {expected}", r.elo);
        assert!(r.elo_lower < r.elo && r.elo < r.elo_upper);
        assert_eq!(r.games, 60);
        assert_eq!(r.points, 40.0);
    }

    #[test]
    fn an_even_score_against_symmetric_anchors_is_their_midpoint() {
        let g = [games(-200.0, 10, 0, 10), games(200.0, 10, 0, 10)];
        let r = rate_against_anchors(&g, 1.0, 0.95).unwrap();
        assert!(r.elo.abs() < 1e-6, "{}", r.elo);
    }

    #[test]
    fn expected_scores_at_the_estimate_sum_to_the_points() {
        let g = [
            games(0.0, 18, 1, 1),
            games(300.0, 9, 2, 9),
            games(600.0, 1, 3, 16),
        ];
        let r = rate_against_anchors(&g, 0.0, 0.95).unwrap();
        let expected: f64 = g
            .iter()
            .map(|a| a.games() as f64 * score_from_elo(r.elo - a.anchor_elo))
            .sum();
        assert!((expected - r.points).abs() < 1e-6);
        assert!(r.elo > 200.0 && r.elo < 400.0, "{}", r.elo);
    }

    #[test]
    fn a_clean_sweep_stays_finite_with_the_prior_and_is_refused_without() {
        let g = [games(0.0, 20, 0, 0), games(500.0, 20, 0, 0)];
        let r = rate_against_anchors(&g, 1.0, 0.95).unwrap();
        assert!(r.elo.is_finite() && r.elo > 500.0, "{}", r.elo);
        assert!(rate_against_anchors(&g, 0.0, 0.95).is_err());
    }

    #[test]
    fn more_games_narrow_the_interval() {
        let few = rate_against_anchors(&[games(0.0, 6, 2, 2)], 1.0, 0.95).unwrap();
        let many = rate_against_anchors(&[games(0.0, 60, 20, 20)], 1.0, 0.95).unwrap();
        assert!(many.stderr < few.stderr / 2.5);
    }

    #[test]
    fn bad_input_is_an_error_naming_the_problem() {
        assert_eq!(
            rate_against_anchors(&[], 1.0, 0.95),
            Err(StatsError::NoGames)
        );
        assert_eq!(
            rate_against_anchors(&[games(0.0, 0, 0, 0)], 1.0, 0.95),
            Err(StatsError::NoGames)
        );
        assert!(rate_against_anchors(&[games(f64::NAN, 1, 0, 0)], 1.0, 0.95).is_err());
        assert!(rate_against_anchors(&[games(0.0, 1, 0, 0)], -1.0, 0.95).is_err());
        assert!(rate_against_anchors(&[games(0.0, 1, 0, 0)], 1.0, 1.5).is_err());
    }
}
