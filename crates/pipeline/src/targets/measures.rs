//! The measures of a policy and of a value against the oracle's judgement of one
//! position, and their averages.

use serde::Serialize;

/// Probabilities below this count as this much in logarithms (a one-hot master move or
/// a pruned target gives the other moves exactly 0): −ln 1e-6 ≈ 13.8 nats.
pub const PROB_FLOOR: f64 = 1e-6;

/// The fixed logistic every oracle score goes through: the Elo curve,
/// W(cp) = 1 / (1 + 10^(−cp/400)) for the side that moves, so 400 centipawns are 10:1
/// odds. A mate for the side to move is 1, a mate against it 0.
pub const LOGISTIC: &str = "W(cp) = 1 / (1 + 10^(-cp/400)); mate for the mover 1, against 0";

/// Win probability of an oracle score for the side to move: see [`LOGISTIC`].
pub fn win_probability_cp(cp: i32) -> f64 {
    1.0 / (1.0 + 10f64.powf(-f64::from(cp) / 400.0))
}

/// The five measures of one policy at one position.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Measures {
    /// Whether the distribution's top move is the oracle's best move; when k moves
    /// share the top probability and the oracle's is one of them, 1/k.
    pub top1: f64,
    /// The oracle's expected win probability when the move is drawn from the
    /// distribution: Σ π(m) W(m).
    pub expected_score: f64,
    /// −ln π(oracle's best move), π floored at [`PROB_FLOOR`].
    pub cross_entropy: f64,
    /// KL(π ‖ prior) = Σ π ln(π / prior), the prior floored at [`PROB_FLOOR`].
    pub kl_prior: f64,
    /// −Σ π ln π.
    pub entropy: f64,
}

impl Measures {
    /// The measures of `dist` (over a position's moves) against the oracle's best move
    /// (index `best`), the oracle's win probability of each move (`win`) and the
    /// network's prior, all over the same moves in the same order. `dist` and `prior`
    /// are renormalised (a target quantised or pruned may not sum to exactly 1).
    ///
    /// # Panics
    /// If the slices differ in length or `best` is out of range (callers build them
    /// from one move list).
    pub fn of(dist: &[f64], prior: &[f64], win: &[f64], best: usize) -> Measures {
        assert!(dist.len() == prior.len() && dist.len() == win.len() && best < dist.len());
        let dist = normalised(dist);
        let prior = normalised(prior);
        let max = dist.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let tied = dist.iter().filter(|&&p| p >= max - 1e-12).count();
        let top1 = if dist[best] >= max - 1e-12 {
            1.0 / tied as f64
        } else {
            0.0
        };
        let expected_score = dist.iter().zip(win).map(|(p, w)| p * w).sum();
        let cross_entropy = -dist[best].max(PROB_FLOOR).ln();
        let mut kl_prior = 0.0;
        let mut entropy = 0.0;
        for (&p, &q) in dist.iter().zip(&prior) {
            if p > 0.0 {
                kl_prior += p * (p.ln() - q.max(PROB_FLOOR).ln());
                entropy -= p * p.ln();
            }
        }
        Measures {
            top1,
            expected_score,
            cross_entropy,
            kl_prior,
            entropy,
        }
    }

    /// The mean of each measure (zero for none).
    pub fn mean(all: &[Measures]) -> Measures {
        let n = all.len().max(1) as f64;
        let mut m = Measures::default();
        for x in all {
            m.top1 += x.top1 / n;
            m.expected_score += x.expected_score / n;
            m.cross_entropy += x.cross_entropy / n;
            m.kl_prior += x.kl_prior / n;
            m.entropy += x.entropy / n;
        }
        m
    }

    /// Measure by measure, self − other.
    pub fn minus(&self, other: &Measures) -> Measures {
        Measures {
            top1: self.top1 - other.top1,
            expected_score: self.expected_score - other.expected_score,
            cross_entropy: self.cross_entropy - other.cross_entropy,
            kl_prior: self.kl_prior - other.kl_prior,
            entropy: self.entropy - other.entropy,
        }
    }

    /// Measure by measure, the standard error of the mean: the sample standard
    /// deviation (n − 1) over √n; zero for fewer than two.
    pub fn standard_error(all: &[Measures]) -> Measures {
        let n = all.len();
        if n < 2 {
            return Measures::default();
        }
        let mean = Measures::mean(all);
        let se = |f: &dyn Fn(&Measures) -> f64| {
            let var = all.iter().map(|x| (f(x) - f(&mean)).powi(2)).sum::<f64>() / (n - 1) as f64;
            (var / n as f64).sqrt()
        };
        Measures {
            top1: se(&|m| m.top1),
            expected_score: se(&|m| m.expected_score),
            cross_entropy: se(&|m| m.cross_entropy),
            kl_prior: se(&|m| m.kl_prior),
            entropy: se(&|m| m.entropy),
        }
    }

    /// Measure by measure, |self − other|.
    pub fn abs_diff(&self, other: &Measures) -> Measures {
        Measures {
            top1: (self.top1 - other.top1).abs(),
            expected_score: (self.expected_score - other.expected_score).abs(),
            cross_entropy: (self.cross_entropy - other.cross_entropy).abs(),
            kl_prior: (self.kl_prior - other.kl_prior).abs(),
            entropy: (self.entropy - other.entropy).abs(),
        }
    }
}

/// `v` scaled to sum to 1 (unchanged when it sums to 0 or less).
fn normalised(v: &[f64]) -> Vec<f64> {
    let total: f64 = v.iter().sum();
    if total > 0.0 {
        v.iter().map(|x| x / total).collect()
    } else {
        v.to_vec()
    }
}

/// Pearson's correlation of paired samples; `None` for fewer than two pairs or when
/// either side does not vary.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let mx = x[..n].iter().sum::<f64>() / n as f64;
    let my = y[..n].iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (x[i] - mx, y[i] - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    Some(sxy / (sxx * syy).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn measures_of_a_small_distribution_match_the_hand_computed_values() {
        // Three moves; the oracle's best is move 1.
        let dist = [0.5, 0.25, 0.25];
        let prior = [0.25, 0.5, 0.25];
        let win = [0.2, 0.9, 0.5];
        let m = Measures::of(&dist, &prior, &win, 1);
        close(m.top1, 0.0);
        close(m.expected_score, 0.5 * 0.2 + 0.25 * 0.9 + 0.25 * 0.5);
        close(m.cross_entropy, 4f64.ln());
        // KL = 0.5 ln 2 + 0.25 ln 0.5 + 0 = 0.25 ln 2.
        close(m.kl_prior, 0.25 * 2f64.ln());
        // H = 0.5 ln 2 + 2 * 0.25 ln 4 = 1.5 ln 2.
        close(m.entropy, 1.5 * 2f64.ln());
        // The top move is the oracle's: top-1 is 1.
        close(Measures::of(&dist, &prior, &win, 0).top1, 1.0);
    }

    #[test]
    fn ties_at_the_top_share_the_credit_and_zeros_are_floored() {
        let uniform = [0.25; 4];
        let m = Measures::of(&uniform, &uniform, &[0.5; 4], 2);
        close(m.top1, 0.25);
        close(m.kl_prior, 0.0);
        close(m.entropy, 4f64.ln());
        // A one-hot distribution on another move: the oracle's gets the floor.
        let one_hot = [1.0, 0.0, 0.0, 0.0];
        let m = Measures::of(&one_hot, &uniform, &[0.5; 4], 2);
        close(m.top1, 0.0);
        close(m.cross_entropy, -PROB_FLOOR.ln());
        close(m.kl_prior, 4f64.ln());
        close(m.entropy, 0.0);
        // Unnormalised input is renormalised.
        let m = Measures::of(&[2.0, 2.0, 0.0, 0.0], &uniform, &[1.0, 0.0, 0.0, 0.0], 0);
        close(m.expected_score, 0.5);
        close(m.top1, 0.5);
    }

    #[test]
    fn means_differences_logistic_and_correlation() {
        let a = Measures {
            top1: 1.0,
            expected_score: 0.5,
            cross_entropy: 1.0,
            kl_prior: 0.2,
            entropy: 2.0,
        };
        let b = Measures::default();
        let m = Measures::mean(&[a, b]);
        close(m.top1, 0.5);
        close(m.entropy, 1.0);
        close(b.abs_diff(&a).kl_prior, 0.2);
        close(b.minus(&a).kl_prior, -0.2);
        // Values 1 and 0: sd √0.5, s.e. √0.5 / √2 = 0.5.
        close(Measures::standard_error(&[a, b]).top1, 0.5);
        close(Measures::standard_error(&[a]).top1, 0.0);
        close(win_probability_cp(0), 0.5);
        close(win_probability_cp(400), 10.0 / 11.0);
        close(win_probability_cp(-400), 1.0 / 11.0);
        close(pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]).unwrap(), 1.0);
        close(pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap(), -1.0);
        close(
            pearson(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.0, 2.0, 4.0]).unwrap(),
            0.8,
        );
        assert_eq!(pearson(&[1.0, 1.0], &[1.0, 2.0]), None);
        assert_eq!(pearson(&[1.0], &[1.0]), None);
    }
}
