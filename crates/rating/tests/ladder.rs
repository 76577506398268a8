//! The maximum-likelihood rating ladder recovers simulated ratings.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_rating::stats::{LadderConfig, StatsError, Trinomial, fit_ladder};
use xq_rating::{GameRecord, GameResult};

/// Davidson model game between ratings on the ladder's Elo scale (see
/// `xq_rating::stats::ladder`): γ = elo / k with k = (400/ln 10)·2/(2 + ν).
fn simulate(rng: &mut ChaCha8Rng, elo_a: f64, elo_b: f64, nu: f64) -> GameResult {
    let k = 400.0 / std::f64::consts::LN_10 * 2.0 / (2.0 + nu);
    let x = (elo_a - elo_b) / k;
    let (a, b) = ((x / 2.0).exp(), (-x / 2.0).exp());
    let d = a + b + nu;
    let u: f64 = rng.random::<f64>() * d;
    if u < a {
        GameResult::Win
    } else if u < a + nu {
        GameResult::Draw
    } else {
        GameResult::Loss
    }
}

fn round_robin(
    rng: &mut ChaCha8Rng,
    elos: &[f64],
    games_per_pair: usize,
    nu: f64,
) -> Vec<GameRecord> {
    let mut games = Vec::new();
    for i in 0..elos.len() {
        for j in i + 1..elos.len() {
            for g in 0..games_per_pair {
                let (a, b) = if g % 2 == 0 { (i, j) } else { (j, i) };
                games.push(GameRecord::new(
                    format!("p{a}"),
                    format!("p{b}"),
                    simulate(rng, elos[a], elos[b], nu),
                ));
            }
        }
    }
    games
}

/// Ten simulated ladders of eight players 0..350 Elo apart, 40 games per
/// pair, anchored at the true rating of p0. At least 90% of the 95%
/// intervals of the other players must contain the true rating, and the
/// intervals must be informative (narrower than 150 Elo).
#[test]
fn ladder_recovers_simulated_ratings_within_their_intervals() {
    let elos: Vec<f64> = (0..8).map(|i| 50.0 * i as f64 - 100.0).collect();
    let nu = 1.0;
    let mut covered = 0;
    let mut total = 0;
    for seed in 0..10 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let games = round_robin(&mut rng, &elos, 40, nu);
        let ladder = fit_ladder(&games, &LadderConfig::default().anchored("p0", elos[0])).unwrap();
        assert!(
            (ladder.draw_parameter - nu).abs() < 0.25,
            "ν = {}",
            ladder.draw_parameter
        );
        let p0 = ladder.get("p0").unwrap();
        assert_eq!(p0.elo, elos[0]);
        assert_eq!(p0.stderr, 0.0);
        for (i, &truth) in elos.iter().enumerate().skip(1) {
            let r = ladder.get(&format!("p{i}")).unwrap();
            assert!(
                r.elo_upper - r.elo_lower < 150.0,
                "interval too wide: {r:?}"
            );
            total += 1;
            covered += usize::from(r.elo_lower <= truth && truth <= r.elo_upper);
        }
    }
    let coverage = covered as f64 / total as f64;
    assert!(coverage >= 0.9, "coverage {coverage} ({covered}/{total})");
}

#[test]
fn ladder_orders_players_and_centres_on_zero_without_anchor() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let elos = [0.0, 100.0, 200.0, 300.0];
    let games = round_robin(&mut rng, &elos, 100, 0.5);
    let ladder = fit_ladder(&games, &LadderConfig::default()).unwrap();
    let names: Vec<&str> = ladder.ratings.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["p3", "p2", "p1", "p0"]);
    let mean: f64 = ladder.ratings.iter().map(|r| r.elo).sum::<f64>() / 4.0;
    assert!(mean.abs() < 1e-6, "mean {mean}");
    assert!(
        ladder
            .ratings
            .iter()
            .all(|r| r.stderr > 0.0 && r.games == 300)
    );
    let text = ladder.to_text();
    assert!(text.lines().nth(1).unwrap().contains("p3"), "{text}");
}

/// For two players the ladder's Elo difference reads like match Elo: the
/// scale correction matches the logistic curve's slope at equality, so for
/// a modest difference the two estimates agree within a few Elo.
#[test]
fn two_player_ladder_agrees_with_match_elo() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let games = round_robin(&mut rng, &[0.0, 40.0], 4000, 1.0);
    let mut t = Trinomial::default();
    for g in &games {
        let r = if g.a == "p1" {
            g.result
        } else {
            g.result.reversed()
        };
        t.record(r);
    }
    let match_elo = t.estimate(0.95).unwrap().unwrap().elo;
    let ladder = fit_ladder(&games, &LadderConfig::default().anchored("p0", 0.0)).unwrap();
    let diff = ladder.get("p1").unwrap().elo;
    assert!(
        (diff - match_elo).abs() < 3.0,
        "ladder {diff} vs match {match_elo}"
    );
}

#[test]
fn perfect_scores_stay_finite_thanks_to_the_prior() {
    let games: Vec<GameRecord> = (0..10)
        .map(|_| GameRecord::new("strong", "random", GameResult::Win))
        .chain((0..10).map(|_| GameRecord::new("random", "greedy", GameResult::Draw)))
        .collect();
    let ladder = fit_ladder(&games, &LadderConfig::default().anchored("random", 0.0)).unwrap();
    let strong = ladder.get("strong").unwrap();
    assert!(strong.elo.is_finite() && strong.elo > 200.0, "{strong:?}");
    assert_eq!(ladder.ratings[0].name, "strong");
}

#[test]
fn unrateable_inputs_get_clear_errors() {
    let cfg = LadderConfig::default();
    assert_eq!(fit_ladder(&[], &cfg), Err(StatsError::NoGames));
    let split = [
        GameRecord::new("a", "b", GameResult::Win),
        GameRecord::new("c", "d", GameResult::Draw),
    ];
    let err = fit_ladder(&split, &cfg).unwrap_err();
    assert!(matches!(err, StatsError::Disconnected { .. }), "{err}");
    assert!(err.to_string().contains("not connected"));
    let one = [GameRecord::new("a", "b", GameResult::Win)];
    assert_eq!(
        fit_ladder(&one, &cfg.clone().anchored("zed", 0.0)),
        Err(StatsError::UnknownAnchor("zed".into()))
    );
    assert_eq!(
        fit_ladder(&[GameRecord::new("a", "a", GameResult::Draw)], &cfg),
        Err(StatsError::SelfPlay("a".into()))
    );
    let bad = LadderConfig {
        prior_games: -1.0,
        ..LadderConfig::default()
    };
    assert!(fit_ladder(&one, &bad).is_err());
}
