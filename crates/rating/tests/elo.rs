//! Score, Elo interval and LOS against values worked out by hand.

use xq_rating::GameResult;
use xq_rating::stats::{Pentanomial, Trinomial, elo_from_score, score_from_elo};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn elo_and_score_are_inverse_logistic() {
    // 400 Elo = 10:1 odds: s = 10/11.
    assert!(close(score_from_elo(400.0), 10.0 / 11.0, 1e-12));
    assert!(close(elo_from_score(0.75), 400.0 * 3f64.log10(), 1e-9)); // 190.85
    assert_eq!(elo_from_score(0.5), 0.0);
    assert_eq!(elo_from_score(1.0), f64::INFINITY);
    assert_eq!(elo_from_score(0.0), f64::NEG_INFINITY);
    for e in [-600.0, -35.0, 0.0, 12.5, 300.0] {
        assert!(close(elo_from_score(score_from_elo(e)), e, 1e-9));
    }
}

/// 60 wins, 20 draws, 20 losses: s = 0.7; per-game variance
/// (60·0.3² + 20·0.2² + 20·0.7²)/100 = 0.16, so stderr = 0.4/10 = 0.04 and
/// the 95% score interval is 0.7 ± 1.96·0.04 = [0.62160, 0.77840], i.e.
/// Elo 147.19 in [86.23, 218.25].
#[test]
fn trinomial_interval_matches_hand_computation() {
    let t = Trinomial::new(60, 20, 20);
    assert_eq!(t.games(), 100);
    assert_eq!(t.score(), Some(0.7));
    assert_eq!(t.draw_ratio(), Some(0.2));
    let e = t.estimate(0.95).unwrap().unwrap();
    assert!(close(e.score_stderr, 0.04, 1e-12));
    assert!(close(e.elo, 147.19, 0.01), "{}", e.elo);
    assert!(close(e.elo_lower, 86.23, 0.01), "{}", e.elo_lower);
    assert!(close(e.elo_upper, 218.25, 0.01), "{}", e.elo_upper);
    assert!(close(e.error_margin(), 66.01, 0.01));
}

/// LOS = Φ((W − L)/√(W + L)): 10 wins, 5 losses → Φ(5/√15) = Φ(1.2910)
/// = 0.90165; the draws do not matter.
#[test]
fn los_matches_the_classic_formula() {
    assert!(close(Trinomial::new(10, 7, 5).los(), 0.90165, 1e-5));
    assert!(close(Trinomial::new(10, 0, 5).los(), 0.90165, 1e-5));
    assert_eq!(Trinomial::new(0, 9, 0).los(), 0.5);
    assert!(close(Trinomial::new(5, 3, 10).los(), 1.0 - 0.90165, 1e-5));
}

/// Pairs [5, 10, 40, 30, 15] (0, ½, 1, 1½, 2 points): s = (10 + 80 + 90 +
/// 60)/400 = 0.6; variance of the pair mean (5·0.36 + 10·0.1225 + 40·0.01 +
/// 30·0.0225 + 15·0.16)/100 = 0.065, stderr = √0.065/10 = 0.025495;
/// Elo 70.44 in [34.88, 107.51]; LOS = Φ(0.1/0.025495) = Φ(3.9223) = 0.999956.
#[test]
fn pentanomial_interval_and_los_match_hand_computation() {
    let p = Pentanomial::new([5, 10, 40, 30, 15]);
    assert_eq!(p.pairs(), 100);
    assert_eq!(p.score(), Some(0.6));
    let e = p.estimate(0.95).unwrap().unwrap();
    assert!(close(e.score_stderr, 0.065f64.sqrt() / 10.0, 1e-12));
    assert!(close(e.elo, 70.44, 0.01));
    assert!(close(e.elo_lower, 34.88, 0.01), "{}", e.elo_lower);
    assert!(close(e.elo_upper, 107.51, 0.01), "{}", e.elo_upper);
    assert!(close(p.los(), 0.999956, 1e-6), "{}", p.los());
}

#[test]
fn pentanomial_records_pairs_by_total_points() {
    let mut p = Pentanomial::default();
    p.record_pair(GameResult::Win, GameResult::Loss);
    p.record_pair(GameResult::Draw, GameResult::Draw);
    p.record_pair(GameResult::Win, GameResult::Draw);
    p.record_pair(GameResult::Loss, GameResult::Loss);
    assert_eq!(p.counts, [1, 0, 2, 1, 0]);
    assert_eq!(p.even_pair_ratio(), Some(0.5));
}

#[test]
fn wider_confidence_gives_a_wider_interval_and_bad_levels_are_rejected() {
    let t = Trinomial::new(30, 40, 20);
    let e95 = t.estimate(0.95).unwrap().unwrap();
    let e99 = t.estimate(0.99).unwrap().unwrap();
    assert!(e99.elo_lower < e95.elo_lower && e99.elo_upper > e95.elo_upper);
    assert!(t.estimate(1.0).is_err());
    assert!(t.estimate(0.0).is_err());
    assert_eq!(Trinomial::default().estimate(0.95).unwrap(), None);
}
