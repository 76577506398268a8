//! Score, Elo difference with a confidence interval, likelihood of
//! superiority and draw ratio, from trinomial (per game) or pentanomial (per
//! game pair) counts.

use serde::{Deserialize, Serialize};

use super::{StatsError, check_confidence, normal_cdf, normal_quantile};
use crate::GameResult;

/// Logistic Elo difference for an expected score `s` in [0, 1]:
/// `-400 log10(1/s - 1)`. Returns ±∞ at 1 and 0.
#[must_use]
pub fn elo_from_score(s: f64) -> f64 {
    if s <= 0.0 {
        f64::NEG_INFINITY
    } else if s >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / s - 1.0).log10()
    }
}

/// Expected score for a logistic Elo difference: `1 / (1 + 10^(-elo/400))`.
#[must_use]
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// A score with its standard error, turned into an Elo difference with a
/// confidence interval.
///
/// The interval is the normal-approximation interval of the mean score,
/// `score ± z·stderr`, mapped through [`elo_from_score`] (as cutechess-cli
/// and Fishtest do), so it is asymmetric in Elo.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloEstimate {
    /// Mean score per game, in [0, 1].
    pub score: f64,
    /// Standard error of `score`.
    pub score_stderr: f64,
    /// Elo difference at `score`.
    pub elo: f64,
    /// Lower end of the Elo interval.
    pub elo_lower: f64,
    /// Upper end of the Elo interval.
    pub elo_upper: f64,
    /// Confidence level of the interval, e.g. 0.95.
    pub confidence: f64,
}

impl EloEstimate {
    fn from_score(score: f64, score_stderr: f64, confidence: f64) -> EloEstimate {
        let z = normal_quantile(0.5 + confidence / 2.0);
        EloEstimate {
            score,
            score_stderr,
            elo: elo_from_score(score),
            elo_lower: elo_from_score(score - z * score_stderr),
            elo_upper: elo_from_score(score + z * score_stderr),
            confidence,
        }
    }

    /// Half the width of the interval, the "± error" usually printed.
    #[must_use]
    pub fn error_margin(&self) -> f64 {
        (self.elo_upper - self.elo_lower) / 2.0
    }
}

/// An Elo difference as xqzero writes it everywhere (match lines, the report, the
/// learning curve, `xqz strength`): `+123 [+80, +170]` with its interval, `+123`
/// without one (or when an end of it is infinite), `+∞ (won every game)` and
/// `−∞ (lost every game)` for the unbounded Elo of a perfect or nil score.
///
/// ```
/// use xq_rating::stats::fmt_elo;
/// assert_eq!(fmt_elo(35.4, Some((-10.0, 80.6))), "+35 [-10, +81]");
/// assert_eq!(fmt_elo(-5.0, None), "-5");
/// assert_eq!(fmt_elo(f64::INFINITY, None), "+∞ (won every game)");
/// ```
#[must_use]
pub fn fmt_elo(elo: f64, interval: Option<(f64, f64)>) -> String {
    if elo == f64::INFINITY {
        return "+∞ (won every game)".to_owned();
    }
    if elo == f64::NEG_INFINITY {
        return "−∞ (lost every game)".to_owned();
    }
    match interval {
        Some((lo, hi)) if lo.is_finite() && hi.is_finite() => {
            format!("{elo:+.0} [{lo:+.0}, {hi:+.0}]")
        }
        _ => format!("{elo:+.0}"),
    }
}

/// Win/draw/loss counts of individual games, from one player's view.
///
/// The variance of the score treats games as independent; when games are
/// played in colour-reversed pairs on the same opening, prefer
/// [`Pentanomial`], which accounts for the correlation within a pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trinomial {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Trinomial {
    #[must_use]
    pub const fn new(wins: u64, draws: u64, losses: u64) -> Trinomial {
        Trinomial {
            wins,
            draws,
            losses,
        }
    }

    pub fn record(&mut self, result: GameResult) {
        match result {
            GameResult::Win => self.wins += 1,
            GameResult::Draw => self.draws += 1,
            GameResult::Loss => self.losses += 1,
        }
    }

    #[must_use]
    pub const fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Mean score per game; `None` before the first game.
    #[must_use]
    pub fn score(&self) -> Option<f64> {
        let n = self.games();
        (n > 0).then(|| (self.wins as f64 + 0.5 * self.draws as f64) / n as f64)
    }

    /// Fraction of games drawn; `None` before the first game.
    #[must_use]
    pub fn draw_ratio(&self) -> Option<f64> {
        let n = self.games();
        (n > 0).then(|| self.draws as f64 / n as f64)
    }

    /// Elo difference with a confidence interval (e.g. `0.95`).
    ///
    /// The per-game variance is the sample variance of the trinomial
    /// outcomes. Returns `Ok(None)` before the first game.
    pub fn estimate(&self, confidence: f64) -> Result<Option<EloEstimate>, StatsError> {
        check_confidence(confidence)?;
        let Some(s) = self.score() else {
            return Ok(None);
        };
        let n = self.games() as f64;
        let var = (self.wins as f64 * (1.0 - s).powi(2)
            + self.draws as f64 * (0.5 - s).powi(2)
            + self.losses as f64 * s.powi(2))
            / n;
        Ok(Some(EloEstimate::from_score(
            s,
            (var / n).sqrt(),
            confidence,
        )))
    }

    /// Likelihood of superiority: the probability that this player is the
    /// stronger one, `Φ((W − L) / √(W + L))`. Draws carry no information in
    /// this classic formula (it is the one chess programmers quote, so the
    /// numbers are comparable). 0.5 when there are no decisive games.
    #[must_use]
    pub fn los(&self) -> f64 {
        let decisive = (self.wins + self.losses) as f64;
        if decisive == 0.0 {
            return 0.5;
        }
        normal_cdf((self.wins as f64 - self.losses as f64) / decisive.sqrt())
    }
}

/// Counts of game-pair outcomes: two games on the same opening with colours
/// reversed, scored together from one player's view.
///
/// `counts[k]` is the number of pairs in which the player scored `k` half
/// points (0 = two losses, 1 = loss + draw, 2 = win + loss or two draws,
/// 3 = win + draw, 4 = two wins). This is the pentanomial model used by
/// Fishtest: it measures the variance of pair scores directly, so the
/// correlation that paired openings induce is accounted for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pentanomial {
    pub counts: [u64; 5],
}

impl Pentanomial {
    #[must_use]
    pub const fn new(counts: [u64; 5]) -> Pentanomial {
        Pentanomial { counts }
    }

    /// Records one pair; both results are from the same player's view.
    pub fn record_pair(&mut self, first: GameResult, second: GameResult) {
        self.counts[(first.half_points() + second.half_points()) as usize] += 1;
    }

    #[must_use]
    pub fn pairs(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Mean score per game; `None` before the first pair.
    #[must_use]
    pub fn score(&self) -> Option<f64> {
        let n = self.pairs();
        (n > 0).then(|| {
            let half_points: u64 = self
                .counts
                .iter()
                .enumerate()
                .map(|(k, &c)| k as u64 * c)
                .sum();
            half_points as f64 / (4.0 * n as f64)
        })
    }

    /// Mean score and the variance of one pair's per-game score.
    fn moments(&self) -> Option<(f64, f64)> {
        let s = self.score()?;
        let n = self.pairs() as f64;
        let var = self
            .counts
            .iter()
            .enumerate()
            .map(|(k, &c)| c as f64 * (k as f64 / 4.0 - s).powi(2))
            .sum::<f64>()
            / n;
        Some((s, var))
    }

    /// Elo difference with a confidence interval from the pentanomial
    /// variance. Returns `Ok(None)` before the first pair.
    pub fn estimate(&self, confidence: f64) -> Result<Option<EloEstimate>, StatsError> {
        check_confidence(confidence)?;
        Ok(self.moments().map(|(s, var)| {
            EloEstimate::from_score(s, (var / self.pairs() as f64).sqrt(), confidence)
        }))
    }

    /// Likelihood of superiority under the normal approximation of the mean
    /// pair score: `Φ((s − ½) / stderr)`. 0.5 with no pairs or no variance at
    /// an even score; 0 or 1 with no variance otherwise.
    #[must_use]
    pub fn los(&self) -> f64 {
        let Some((s, var)) = self.moments() else {
            return 0.5;
        };
        let se = (var / self.pairs() as f64).sqrt();
        if se == 0.0 {
            return if s > 0.5 {
                1.0
            } else if s < 0.5 {
                0.0
            } else {
                0.5
            };
        }
        normal_cdf((s - 0.5) / se)
    }

    /// Fraction of pairs that scored exactly 1 (two draws or a win and a
    /// loss). Pair counts cannot tell those apart, so this is not the draw
    /// ratio; keep a [`Trinomial`] alongside for that.
    #[must_use]
    pub fn even_pair_ratio(&self) -> Option<f64> {
        let n = self.pairs();
        (n > 0).then(|| self.counts[2] as f64 / n as f64)
    }
}
