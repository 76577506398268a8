//! A rating ladder over many players by maximum likelihood (BayesElo /
//! Ordo style).
//!
//! # Model
//!
//! Davidson's extension of Bradley–Terry to draws: with natural-log
//! strengths `γ` and `x = γa − γb`,
//!
//! ```text
//! P(a wins) = e^{x/2} / D,   P(draw) = ν / D,   P(b wins) = e^{-x/2} / D,
//! D = e^{x/2} + e^{-x/2} + ν
//! ```
//!
//! One draw parameter `ν` is shared by all games (ν = 1 means a third of the
//! games between equals are drawn). The fit maximizes the log-likelihood over
//! all `γ` and `ln ν` jointly by Newton's method (the log-likelihood is
//! concave in these parameters, so Newton with step halving converges to the
//! unique optimum).
//!
//! **Prior.** A player who won or lost every game has an infinite MLE. As
//! BayesElo does with its virtual draws, every pair of players who met gets
//! `prior_games` virtual games scored ½–½ (counted as half a win and half a
//! loss, so they pull the pair together without touching `ν`), and `ν` gets
//! the weight of one virtual drawn and one virtual decisive game between
//! equals. With real game counts in the tens or more the prior is negligible.
//!
//! **Elo scale.** Davidson strengths are not on the expected-score scale:
//! with draws, a given `x` moves the expected score less. Ratings are
//! therefore reported as `elo = γ · (400 / ln 10) · 2 / (2 + ν)`, which makes
//! the slope of expected score against rating difference at equality equal
//! to the logistic Elo curve's (the same correction BayesElo applies with its
//! `elo scale`). Small rating differences thus read like match Elo from
//! [`Trinomial::estimate`](super::Trinomial::estimate).
//!
//! **Intervals.** The covariance of the estimates is the inverse of the
//! observed information (negative Hessian) at the optimum, with the anchor
//! held fixed, so each interval is the uncertainty of that player's rating
//! *relative to the anchor*. Without an anchor the ratings are centred on
//! mean 0 and the intervals are those of the differences from the mean. The
//! uncertainty of `ν` is propagated through the joint Hessian into `γ`, but
//! not into the Elo scale factor.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{StatsError, check_confidence, normal_quantile};
use crate::GameRecord;

const MAX_ITERATIONS: usize = 200;

/// A named player fixed at a given rating, e.g. the random mover at 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    pub name: String,
    pub elo: f64,
}

/// How to fit a ladder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LadderConfig {
    /// Player pinned at a rating; `None` centres the ratings on mean 0.
    pub anchor: Option<Anchor>,
    /// Virtual ½–½ games added between every pair of players who met (see
    /// the module docs). Must be ≥ 0; 0 disables the prior, which fails to
    /// converge when a player won or lost every game.
    pub prior_games: f64,
    /// Confidence level of the intervals.
    pub confidence: f64,
}

impl Default for LadderConfig {
    fn default() -> Self {
        LadderConfig {
            anchor: None,
            prior_games: 1.0,
            confidence: 0.95,
        }
    }
}

impl LadderConfig {
    /// Anchors `name` at `elo`.
    #[must_use]
    pub fn anchored(mut self, name: impl Into<String>, elo: f64) -> LadderConfig {
        self.anchor = Some(Anchor {
            name: name.into(),
            elo,
        });
        self
    }
}

/// One player's fitted rating.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub name: String,
    pub elo: f64,
    /// Standard error of `elo` (relative to the anchor or the mean).
    pub stderr: f64,
    pub elo_lower: f64,
    pub elo_upper: f64,
    pub games: u64,
    /// Points scored (1 / ½ / 0 per game).
    pub points: f64,
}

/// The fitted ladder, strongest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ladder {
    pub ratings: Vec<Rating>,
    /// Fitted Davidson draw parameter ν.
    pub draw_parameter: f64,
    /// Draw probability between equal players implied by ν: ν / (2 + ν).
    pub draw_ratio_at_equal: f64,
    pub confidence: f64,
    pub iterations: usize,
}

impl Ladder {
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Rating> {
        self.ratings.iter().find(|r| r.name == name)
    }

    /// A fixed-width table: rank, name, Elo, ± error, games, score %.
    #[must_use]
    pub fn to_text(&self) -> String {
        let width = self
            .ratings
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = format!(
            "{:>4}  {:<width$}  {:>8}  {:>7}  {:>6}  {:>6}\n",
            "rank", "name", "elo", "+/-", "games", "score"
        );
        for (i, r) in self.ratings.iter().enumerate() {
            let pct = if r.games > 0 {
                100.0 * r.points / r.games as f64
            } else {
                0.0
            };
            out.push_str(&format!(
                "{:>4}  {:<width$}  {:>8.1}  {:>7.1}  {:>6}  {:>5.1}%\n",
                i + 1,
                r.name,
                r.elo,
                (r.elo_upper - r.elo_lower) / 2.0,
                r.games,
                pct
            ));
        }
        out
    }
}

/// Win/draw/loss counts of one unordered pair, from the lower index's view.
#[derive(Clone, Copy, Debug, Default)]
struct PairCounts {
    i: usize,
    j: usize,
    w: f64,
    d: f64,
    l: f64,
}

/// Fits a ladder to `games`.
///
/// # Errors
///
/// Bad config values, no games, a game of a player against itself, an anchor
/// who never played, players not connected by games, or (only without the
/// prior) a fit that diverges.
pub fn fit_ladder(games: &[GameRecord], config: &LadderConfig) -> Result<Ladder, StatsError> {
    check_confidence(config.confidence)?;
    if !(config.prior_games >= 0.0 && config.prior_games.is_finite()) {
        return Err(StatsError::InvalidParameter {
            name: "prior_games",
            value: config.prior_games,
            reason: "must be a finite number >= 0",
        });
    }
    if let Some(a) = &config.anchor
        && !a.elo.is_finite()
    {
        return Err(StatsError::InvalidParameter {
            name: "anchor elo",
            value: a.elo,
            reason: "must be a finite rating",
        });
    }
    if games.is_empty() {
        return Err(StatsError::NoGames);
    }

    // Players in order of first appearance, for deterministic output.
    let mut names: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut pair_index: HashMap<(usize, usize), usize> = HashMap::new();
    let mut pairs: Vec<PairCounts> = Vec::new();
    let mut games_of: Vec<u64> = Vec::new();
    let mut points_of: Vec<f64> = Vec::new();
    for g in games {
        if g.a == g.b {
            return Err(StatsError::SelfPlay(g.a.clone()));
        }
        let mut id = |name: &str| -> usize {
            *index.entry(name.to_owned()).or_insert_with(|| {
                names.push(name.to_owned());
                games_of.push(0);
                points_of.push(0.0);
                names.len() - 1
            })
        };
        let (a, b) = (id(&g.a), id(&g.b));
        games_of[a] += 1;
        games_of[b] += 1;
        points_of[a] += g.result.points();
        points_of[b] += g.result.reversed().points();
        let (i, j, result) = if a < b {
            (a, b, g.result)
        } else {
            (b, a, g.result.reversed())
        };
        let k = *pair_index.entry((i, j)).or_insert_with(|| {
            pairs.push(PairCounts {
                i,
                j,
                ..PairCounts::default()
            });
            pairs.len() - 1
        });
        match result {
            crate::GameResult::Win => pairs[k].w += 1.0,
            crate::GameResult::Draw => pairs[k].d += 1.0,
            crate::GameResult::Loss => pairs[k].l += 1.0,
        }
    }
    let n = names.len();

    check_connected(n, &pairs, &names)?;

    let anchor = match &config.anchor {
        Some(a) => Some((
            index
                .get(a.name.as_str())
                .copied()
                .ok_or_else(|| StatsError::UnknownAnchor(a.name.clone()))?,
            a.elo,
        )),
        None => None,
    };
    // The fit pins one player's γ at 0; without an anchor, player 0.
    let pinned = anchor.map_or(0, |(i, _)| i);

    let problem = Problem {
        n,
        pinned,
        pairs: &pairs,
        prior: config.prior_games,
    };
    let (theta, iterations) = problem.maximize()?;
    let info = problem.information(&theta);
    let cov = cholesky_inverse(&info).ok_or(StatsError::NotConverged { iterations })?;

    let nu = theta[n - 1].exp();
    let scale = 400.0 / std::f64::consts::LN_10 * 2.0 / (2.0 + nu);
    let z = normal_quantile(0.5 + config.confidence / 2.0);

    // γ for every player (pinned = 0) and the covariance embedded in n×n.
    let free_index = |p: usize| -> Option<usize> {
        match p.cmp(&pinned) {
            std::cmp::Ordering::Less => Some(p),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => Some(p - 1),
        }
    };
    let gamma: Vec<f64> = (0..n)
        .map(|p| free_index(p).map_or(0.0, |k| theta[k]))
        .collect();
    let cov_gamma = |p: usize, q: usize| -> f64 {
        match (free_index(p), free_index(q)) {
            (Some(a), Some(b)) => cov[a][b],
            _ => 0.0,
        }
    };

    let (offset, variance): (f64, Vec<f64>) = match anchor {
        Some((_, elo)) => (elo, (0..n).map(|p| cov_gamma(p, p)).collect()),
        None => {
            // Centre on the mean: Var(γp − mean) = vᵀ C v with v = e_p − 1/n.
            let mean = gamma.iter().sum::<f64>() / n as f64;
            let row_mean: Vec<f64> = (0..n)
                .map(|p| (0..n).map(|q| cov_gamma(p, q)).sum::<f64>() / n as f64)
                .collect();
            let total_mean = row_mean.iter().sum::<f64>() / n as f64;
            let var = (0..n)
                .map(|p| (cov_gamma(p, p) - 2.0 * row_mean[p] + total_mean).max(0.0))
                .collect();
            (-mean * scale, var)
        }
    };

    let mut ratings: Vec<Rating> = (0..n)
        .map(|p| {
            let elo = offset + scale * gamma[p];
            let stderr = scale * variance[p].sqrt();
            Rating {
                name: names[p].clone(),
                elo,
                stderr,
                elo_lower: elo - z * stderr,
                elo_upper: elo + z * stderr,
                games: games_of[p],
                points: points_of[p],
            }
        })
        .collect();
    ratings.sort_by(|a, b| b.elo.total_cmp(&a.elo).then_with(|| a.name.cmp(&b.name)));

    Ok(Ladder {
        ratings,
        draw_parameter: nu,
        draw_ratio_at_equal: nu / (2.0 + nu),
        confidence: config.confidence,
        iterations,
    })
}

fn check_connected(n: usize, pairs: &[PairCounts], names: &[String]) -> Result<(), StatsError> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for p in pairs {
        let (a, b) = (find(&mut parent, p.i), find(&mut parent, p.j));
        parent[a] = b;
    }
    let root = find(&mut parent, 0);
    for q in 1..n {
        if find(&mut parent, q) != root {
            return Err(StatsError::Disconnected {
                a: names[0].clone(),
                b: names[q].clone(),
            });
        }
    }
    Ok(())
}

/// The likelihood as a function of θ = (γ of every player but `pinned`, ln ν).
struct Problem<'a> {
    n: usize,
    pinned: usize,
    pairs: &'a [PairCounts],
    prior: f64,
}

/// Per-pair derivatives of the log-likelihood in (x, η).
struct Terms {
    value: f64,
    gx: f64,
    geta: f64,
    hxx: f64,
    hxeta: f64,
    heta: f64,
}

impl Problem<'_> {
    fn dim(&self) -> usize {
        self.n // n − 1 strengths + η
    }

    fn slot(&self, p: usize) -> Option<usize> {
        match p.cmp(&self.pinned) {
            std::cmp::Ordering::Less => Some(p),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => Some(p - 1),
        }
    }

    fn gamma(&self, theta: &[f64], p: usize) -> f64 {
        self.slot(p).map_or(0.0, |k| theta[k])
    }

    fn terms(&self, pair: &PairCounts, x: f64, eta: f64) -> Terms {
        let (w, d, l) = (pair.w, pair.d, pair.l);
        let games = w + d + l;
        let a = (x / 2.0).exp();
        let b = (-x / 2.0).exp();
        let nu = eta.exp();
        let den = a + b + nu;
        let ln_den = den.ln();
        let c = self.prior;
        let ab = a + b;
        let tanh = (a - b) / ab;
        Terms {
            value: w * (x / 2.0 - ln_den) + l * (-x / 2.0 - ln_den) + d * (eta - ln_den)
                - c * ab.ln(),
            gx: (w - l) / 2.0 - games * (a - b) / (2.0 * den) - c * tanh / 2.0,
            geta: d - games * nu / den,
            hxx: -games * (ab * den / 4.0 - (a - b).powi(2) / 4.0) / (den * den)
                - c * (1.0 - tanh * tanh) / 4.0,
            hxeta: games * (a - b) * nu / (2.0 * den * den),
            heta: -games * nu * ab / (den * den),
        }
    }

    /// Log-likelihood plus priors, gradient, and Hessian at θ.
    fn evaluate(&self, theta: &[f64]) -> (f64, Vec<f64>, Vec<Vec<f64>>) {
        let m = self.dim();
        let e = m - 1;
        let eta = theta[e];
        let mut value = 0.0;
        let mut grad = vec![0.0; m];
        let mut hess = vec![vec![0.0; m]; m];
        for pair in self.pairs {
            let x = self.gamma(theta, pair.i) - self.gamma(theta, pair.j);
            let t = self.terms(pair, x, eta);
            value += t.value;
            grad[e] += t.geta;
            hess[e][e] += t.heta;
            let si = self.slot(pair.i);
            let sj = self.slot(pair.j);
            for (s, sign) in [(si, 1.0), (sj, -1.0)] {
                if let Some(s) = s {
                    grad[s] += sign * t.gx;
                    hess[s][e] += sign * t.hxeta;
                    hess[e][s] += sign * t.hxeta;
                }
            }
            for (s, ss) in [(si, 1.0), (sj, -1.0)] {
                for (u, su) in [(si, 1.0), (sj, -1.0)] {
                    if let (Some(s), Some(u)) = (s, u) {
                        hess[s][u] += ss * su * t.hxx;
                    }
                }
            }
        }
        // Draw-parameter prior: one virtual draw and one virtual decisive
        // game between equals, c·(η − 2 ln(2 + ν)), maximal at ν = 2.
        let nu = eta.exp();
        value += eta - 2.0 * (2.0 + nu).ln();
        grad[e] += 1.0 - 2.0 * nu / (2.0 + nu);
        hess[e][e] -= 4.0 * nu / (2.0 + nu).powi(2);
        (value, grad, hess)
    }

    /// Negative Hessian (observed information) at θ.
    fn information(&self, theta: &[f64]) -> Vec<Vec<f64>> {
        let (_, _, h) = self.evaluate(theta);
        h.into_iter()
            .map(|row| row.into_iter().map(|v| -v).collect())
            .collect()
    }

    fn maximize(&self) -> Result<(Vec<f64>, usize), StatsError> {
        let m = self.dim();
        let mut theta = vec![0.0; m];
        let (mut value, mut grad, mut hess) = self.evaluate(&theta);
        for iteration in 1..=MAX_ITERATIONS {
            let info: Vec<Vec<f64>> = hess
                .iter()
                .map(|row| row.iter().map(|v| -v).collect())
                .collect();
            let Some(step) = cholesky_solve(&info, &grad) else {
                return Err(StatsError::NotConverged {
                    iterations: iteration,
                });
            };
            let mut scale = 1.0;
            let mut accepted = None;
            for _ in 0..60 {
                let trial: Vec<f64> = theta
                    .iter()
                    .zip(&step)
                    .map(|(t, s)| t + scale * s)
                    .collect();
                let eval = self.evaluate(&trial);
                if eval.0.is_finite() && eval.0 >= value - 1e-12 * value.abs().max(1.0) {
                    accepted = Some((trial, eval));
                    break;
                }
                scale /= 2.0;
            }
            let Some((trial, eval)) = accepted else {
                return Err(StatsError::NotConverged {
                    iterations: iteration,
                });
            };
            let max_step = step
                .iter()
                .fold(0.0f64, |acc, s| acc.max((scale * s).abs()));
            theta = trial;
            (value, grad, hess) = eval;
            if max_step < 1e-10 {
                return Ok((theta, iteration));
            }
        }
        Err(StatsError::NotConverged {
            iterations: MAX_ITERATIONS,
        })
    }
}

/// Lower-triangular Cholesky factor of a symmetric positive-definite matrix.
fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let sum: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = a[i][i] - sum;
                if !d.is_finite() || d <= 0.0 {
                    return None;
                }
                l[i][i] = d.sqrt();
            } else {
                l[i][j] = (a[i][j] - sum) / l[j][j];
            }
        }
    }
    Some(l)
}

fn solve_with(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = l.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        let sum: f64 = (0..i).map(|k| l[i][k] * y[k]).sum();
        y[i] = (b[i] - sum) / l[i][i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let sum: f64 = (i + 1..n).map(|k| l[k][i] * x[k]).sum();
        x[i] = (y[i] - sum) / l[i][i];
    }
    x
}

fn cholesky_solve(a: &[Vec<f64>], b: &[f64]) -> Option<Vec<f64>> {
    cholesky(a).map(|l| solve_with(&l, b))
}

fn cholesky_inverse(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let l = cholesky(a)?;
    let n = a.len();
    let mut inv = vec![vec![0.0; n]; n];
    for c in 0..n {
        let mut e = vec![0.0; n];
        e[c] = 1.0;
        let col = solve_with(&l, &e);
        for r in 0..n {
            inv[r][c] = col[r];
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analytic_gradient_and_hessian_match_finite_differences() {
        let pairs = [
            PairCounts {
                i: 0,
                j: 1,
                w: 5.0,
                d: 3.0,
                l: 2.0,
            },
            PairCounts {
                i: 1,
                j: 2,
                w: 1.0,
                d: 4.0,
                l: 6.0,
            },
            PairCounts {
                i: 0,
                j: 2,
                w: 2.0,
                d: 0.0,
                l: 3.0,
            },
        ];
        let problem = Problem {
            n: 3,
            pinned: 1,
            pairs: &pairs,
            prior: 0.7,
        };
        let theta = [0.3, -0.4, 0.2];
        let (_, grad, hess) = problem.evaluate(&theta);
        let h = 1e-6;
        for k in 0..3 {
            let mut plus = theta;
            let mut minus = theta;
            plus[k] += h;
            minus[k] -= h;
            let (vp, gp, _) = problem.evaluate(&plus);
            let (vm, gm, _) = problem.evaluate(&minus);
            assert!(
                ((vp - vm) / (2.0 * h) - grad[k]).abs() < 1e-6,
                "gradient {k}"
            );
            for r in 0..3 {
                assert!(
                    ((gp[r] - gm[r]) / (2.0 * h) - hess[r][k]).abs() < 1e-5,
                    "hessian {r},{k}"
                );
            }
        }
    }
}
