//! The generalized sequential probability ratio test (GSPRT) on game pairs,
//! as Fishtest runs it.
//!
//! Model: **logistic Elo** (Fishtest's default `elo_model = "logistic"`,
//! not BayesElo and not normalized Elo). H0 says the expected score per game
//! is `s0 = score_from_elo(elo0)`, H1 says `s1 = score_from_elo(elo1)`. The
//! outcome distribution is otherwise unknown, so each hypothesis is replaced
//! by the maximum-likelihood pentanomial distribution with that mean (the
//! "generalized" part), and the log-likelihood ratio is
//! `LLR = N · Σ pᵢ ln(q1ᵢ / q0ᵢ)` over the five pair outcomes, where `p` is
//! the empirical distribution of the `N` pairs and `q0`, `q1` are the
//! constrained MLEs. The test stops when the LLR leaves the Wald bounds
//! `(ln(β/(1−α)), ln((1−β)/α))`.

use serde::{Deserialize, Serialize};

use super::{Pentanomial, StatsError, score_from_elo};

/// Pseudo-count given to empty pentanomial cells so the constrained MLE
/// exists early in a match (Fishtest regularizes the same way).
const EMPTY_CELL: f64 = 1e-3;

/// Per-game scores of the five pair outcomes.
const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Hypotheses and error rates of a GSPRT.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtConfig {
    /// Logistic Elo under H0 (typically 0: "no better").
    pub elo0: f64,
    /// Logistic Elo under H1 (the improvement worth detecting).
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds (false positive).
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds (false negative).
    pub beta: f64,
}

/// What the test says after the pairs seen so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprtDecision {
    /// Neither bound reached: play more pairs.
    Continue,
    /// The LLR fell to the lower bound: the candidate is not `elo1` better.
    AcceptH0,
    /// The LLR reached the upper bound: the candidate is better than `elo0`.
    AcceptH1,
}

/// The decision with the numbers behind it, for logs and progress lines.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtStatus {
    pub decision: SprtDecision,
    pub llr: f64,
    /// `ln(β/(1−α))`: at or below it H0 is accepted.
    pub lower: f64,
    /// `ln((1−β)/α)`: at or above it H1 is accepted.
    pub upper: f64,
}

impl SprtConfig {
    /// Validates the hypotheses (`elo0 < elo1`, both finite) and error rates
    /// (in (0, ½)).
    pub fn new(elo0: f64, elo1: f64, alpha: f64, beta: f64) -> Result<SprtConfig, StatsError> {
        let config = SprtConfig {
            elo0,
            elo1,
            alpha,
            beta,
        };
        config.validate()?;
        Ok(config)
    }

    /// Checks a config that may have been deserialized.
    pub fn validate(&self) -> Result<(), StatsError> {
        for (name, value) in [("elo0", self.elo0), ("elo1", self.elo1)] {
            if !value.is_finite() || value.abs() >= 1000.0 {
                return Err(StatsError::InvalidParameter {
                    name,
                    value,
                    reason: "must be a finite Elo difference below 1000 in magnitude",
                });
            }
        }
        if self.elo1 <= self.elo0 {
            return Err(StatsError::InvalidParameter {
                name: "elo1",
                value: self.elo1,
                reason: "must be greater than elo0",
            });
        }
        for (name, value) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(value > 0.0 && value < 0.5) {
                return Err(StatsError::InvalidParameter {
                    name,
                    value,
                    reason: "error rate must be in (0, 0.5)",
                });
            }
        }
        Ok(())
    }

    /// Wald's bounds `(lower, upper)` on the LLR.
    #[must_use]
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The decision after the pairs in `pairs`.
    #[must_use]
    pub fn evaluate(&self, pairs: &Pentanomial) -> SprtStatus {
        let (lower, upper) = self.bounds();
        let llr = llr_pentanomial(pairs, self.elo0, self.elo1);
        let decision = if llr >= upper {
            SprtDecision::AcceptH1
        } else if llr <= lower {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        };
        SprtStatus {
            decision,
            llr,
            lower,
            upper,
        }
    }
}

/// The generalized log-likelihood ratio of H1 (`elo1`) against H0 (`elo0`)
/// for the pairs in `pairs`, logistic Elo model. 0 with no pairs.
#[must_use]
pub fn llr_pentanomial(pairs: &Pentanomial, elo0: f64, elo1: f64) -> f64 {
    let n = pairs.pairs();
    if n == 0 {
        return 0.0;
    }
    let counts = pairs
        .counts
        .map(|c| if c == 0 { EMPTY_CELL } else { c as f64 });
    let total: f64 = counts.iter().sum();
    let p = counts.map(|c| c / total);
    let q0 = constrained_mle(&p, score_from_elo(elo0));
    let q1 = constrained_mle(&p, score_from_elo(elo1));
    let per_pair: f64 = (0..5).map(|i| p[i] * (q1[i] / q0[i]).ln()).sum();
    n as f64 * per_pair
}

/// The distribution `q` on [`PAIR_SCORES`] that maximizes `Σ pᵢ ln qᵢ`
/// subject to mean `s`.
///
/// By Lagrange, `qᵢ = pᵢ / (1 + θ(aᵢ − s))` with `θ` the root of
/// `Σ pᵢ (aᵢ − s) / (1 + θ(aᵢ − s)) = 0`, which is strictly decreasing in `θ`
/// on the interval where every denominator is positive, so bisection finds
/// it. All `pᵢ > 0` (regularized), and `0 < s < 1`.
fn constrained_mle(p: &[f64; 5], s: f64) -> [f64; 5] {
    let d = PAIR_SCORES.map(|a| a - s);
    let f = |theta: f64| -> f64 { (0..5).map(|i| p[i] * d[i] / (1.0 + theta * d[i])).sum() };
    // Denominators 1 + θ·d stay positive for θ in (-1/(1-s), 1/s).
    let eps = 1e-12;
    let mut lo = -1.0 / (1.0 - s) + eps;
    let mut hi = 1.0 / s - eps;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-15 {
            break;
        }
    }
    let theta = 0.5 * (lo + hi);
    let q = std::array::from_fn(|i| p[i] / (1.0 + theta * d[i]));
    // Renormalize away the bisection's last rounding.
    let sum: f64 = q.iter().sum();
    q.map(|x| x / sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constrained_mle_has_requested_mean() {
        let p = [0.1, 0.2, 0.4, 0.2, 0.1];
        for s in [0.3, 0.5, 0.55, 0.8] {
            let q = constrained_mle(&p, s);
            let mean: f64 = (0..5).map(|i| q[i] * PAIR_SCORES[i]).sum();
            assert!((mean - s).abs() < 1e-9, "mean {mean} for target {s}");
            assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        // When the target equals the empirical mean, q = p.
        let q = constrained_mle(&p, 0.5);
        for i in 0..5 {
            assert!((q[i] - p[i]).abs() < 1e-9);
        }
    }
}
