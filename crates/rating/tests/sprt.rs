//! The pentanomial GSPRT: bounds, agreement with the normal approximation,
//! and error rates on simulated matches with known Elo.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_rating::GameResult;
use xq_rating::stats::{Pentanomial, SprtConfig, SprtDecision, llr_pentanomial, score_from_elo};

#[test]
fn bounds_are_walds() {
    let c = SprtConfig::new(0.0, 5.0, 0.05, 0.05).unwrap();
    let (lo, hi) = c.bounds();
    assert!((lo - (0.05f64 / 0.95).ln()).abs() < 1e-12); // −2.944
    assert!((hi - (0.95f64 / 0.05).ln()).abs() < 1e-12); // +2.944
}

#[test]
fn bad_configs_are_rejected() {
    assert!(SprtConfig::new(5.0, 0.0, 0.05, 0.05).is_err());
    assert!(SprtConfig::new(0.0, 5.0, 0.0, 0.05).is_err());
    assert!(SprtConfig::new(0.0, 5.0, 0.05, 0.6).is_err());
    assert!(SprtConfig::new(f64::NAN, 5.0, 0.05, 0.05).is_err());
    let msg = SprtConfig::new(0.0, -1.0, 0.05, 0.05)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("elo1"), "{msg}");
}

/// For small Elo differences the GSPRT LLR approaches the normal
/// approximation `N (s1 − s0)(2ŝ − s0 − s1) / (2σ²)` with σ² the variance of
/// one pair's per-game score. Computed independently here.
#[test]
fn llr_agrees_with_the_normal_approximation_for_small_differences() {
    let counts = [300u64, 2400, 6000, 2700, 400];
    let p = Pentanomial::new(counts);
    let n = p.pairs() as f64;
    let s = p.score().unwrap();
    let var = counts
        .iter()
        .enumerate()
        .map(|(k, &c)| c as f64 * (k as f64 / 4.0 - s).powi(2))
        .sum::<f64>()
        / n;
    let (s0, s1) = (score_from_elo(0.0), score_from_elo(3.0));
    let approx = n * (s1 - s0) * (2.0 * s - s0 - s1) / (2.0 * var);
    let llr = llr_pentanomial(&p, 0.0, 3.0);
    assert!(approx > 1.0, "the sample favours H1: {approx}");
    assert!(
        (llr - approx).abs() < 0.01 * approx.abs(),
        "llr {llr} vs approx {approx}"
    );
    // Symmetry: swapping the hypotheses negates the LLR.
    assert!((llr_pentanomial(&p, 3.0, 0.0) + llr).abs() < 1e-9);
}

#[test]
fn the_test_stops_as_soon_as_a_bound_is_crossed() {
    let c = SprtConfig::new(0.0, 10.0, 0.05, 0.05).unwrap();
    let mut p = Pentanomial::default();
    assert_eq!(c.evaluate(&p).decision, SprtDecision::Continue);
    let mut pairs = 0;
    while c.evaluate(&p).decision == SprtDecision::Continue {
        p.record_pair(GameResult::Win, GameResult::Draw);
        pairs += 1;
        assert!(pairs < 1000);
    }
    let status = c.evaluate(&p);
    assert_eq!(status.decision, SprtDecision::AcceptH1);
    assert!(status.llr >= status.upper);
    // One pair fewer would still have been undecided.
    p.counts[3] -= 1;
    assert_eq!(c.evaluate(&p).decision, SprtDecision::Continue);
}

/// One game with expected score `s` and draw rate `draw`.
fn game(rng: &mut ChaCha8Rng, s: f64, draw: f64) -> GameResult {
    let x: f64 = rng.random();
    if x < s - draw / 2.0 {
        GameResult::Win
    } else if x < s + draw / 2.0 {
        GameResult::Draw
    } else {
        GameResult::Loss
    }
}

/// Runs one SPRT match at true Elo `elo` until it decides.
fn run(rng: &mut ChaCha8Rng, sprt: &SprtConfig, elo: f64) -> (SprtDecision, u64) {
    let s = score_from_elo(elo);
    let mut p = Pentanomial::default();
    loop {
        p.record_pair(game(rng, s, 0.4), game(rng, s, 0.4));
        let status = sprt.evaluate(&p);
        if status.decision != SprtDecision::Continue {
            return (status.decision, p.pairs());
        }
        assert!(p.pairs() < 200_000, "runaway test");
    }
}

/// 400 simulated matches with the true Elo at elo0 and 400 at elo1. The
/// false-positive rate must be near α and the false-negative rate near β:
/// within three binomial standard deviations above (0.05 + 0.033), and not
/// absurdly conservative either (a discretely monitored SPRT overshoots its
/// bounds, so rates a little under nominal are expected).
#[test]
fn error_rates_on_simulated_matches_are_near_alpha_and_beta() {
    let sprt = SprtConfig::new(0.0, 20.0, 0.05, 0.05).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let runs = 400;
    let mut false_pos = 0;
    let mut false_neg = 0;
    let mut pairs_total = 0;
    for _ in 0..runs {
        let (d, n) = run(&mut rng, &sprt, 0.0);
        false_pos += usize::from(d == SprtDecision::AcceptH1);
        pairs_total += n;
        let (d, n) = run(&mut rng, &sprt, 20.0);
        false_neg += usize::from(d == SprtDecision::AcceptH0);
        pairs_total += n;
    }
    let alpha_hat = false_pos as f64 / runs as f64;
    let beta_hat = false_neg as f64 / runs as f64;
    eprintln!(
        "alpha_hat {alpha_hat}, beta_hat {beta_hat}, mean pairs {}",
        pairs_total / (2 * runs as u64)
    );
    assert!(
        (0.01..=0.083).contains(&alpha_hat),
        "false positive rate {alpha_hat}"
    );
    assert!(
        (0.01..=0.083).contains(&beta_hat),
        "false negative rate {beta_hat}"
    );
}

/// Asymmetric error rates move the bounds: with α = 0.01 the test rarely
/// passes a change that is really at elo0.
#[test]
fn a_smaller_alpha_gives_fewer_false_positives() {
    let strict = SprtConfig::new(0.0, 20.0, 0.01, 0.1).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let runs = 300;
    let false_pos = (0..runs)
        .filter(|_| run(&mut rng, &strict, 0.0).0 == SprtDecision::AcceptH1)
        .count();
    assert!(
        false_pos as f64 / (runs as f64) <= 0.01 + 3.0 * (0.01f64 * 0.99 / runs as f64).sqrt(),
        "{false_pos}"
    );
}
