//! Gumbel root search: it finds the move an evaluator knows is best with a small
//! budget, spends the budget by sequential halving, and its improved policy moves mass
//! towards better Q.

mod common;

use common::{OracleEvaluator, game, mv};
use xq_core::Position;
use xq_mcts::{GumbelParams, InteriorSelection, RootAlgorithm, Search, SearchParams};
use xq_nn::{RandomEvaluator, UniformEvaluator};

/// Red: general e0, soldier a6; black: general d9. Four legal moves (a6a7, a6b6, e0e1,
/// e0f0; e0d0 would face the black general).
const FOUR_MOVES: &str = "3k5/9/9/P8/9/9/9/9/9/4K4 w - - 0 1";

fn gumbel_params() -> SearchParams {
    SearchParams {
        algorithm: RootAlgorithm::Gumbel,
        ..SearchParams::default()
    }
}

/// An oracle that knows `best` wins (the position after it is lost for black).
fn oracle_for(best: &str) -> (OracleEvaluator, xq_core::Move) {
    let g = game(FOUR_MOVES);
    let m = mv(g.position(), best);
    let mut after = g.position().clone();
    after.play(m).unwrap();
    (OracleEvaluator { lost: after.hash() }, m)
}

#[test]
fn picks_the_move_the_evaluator_knows_wins_with_16_simulations() {
    assert_eq!(game(FOUR_MOVES).position().legal_moves().len(), 4);
    for best in ["a6b6", "e0f0"] {
        let (mut oracle, m) = oracle_for(best);
        for seed in 0..16 {
            let mut s = Search::new(gumbel_params(), &game(FOUR_MOVES), seed).unwrap();
            let r = s.run(&mut oracle, 17).unwrap();
            // The root evaluation, then 16 simulations through the root.
            assert_eq!(r.playouts, 17);
            assert_eq!(r.best_move, Some(m), "{best}, seed {seed}");
            assert_eq!(s.choose_move(&r), Some(m), "Gumbel plays its action");
        }
    }
}

#[test]
fn sequential_halving_spends_the_budget_on_the_survivors() {
    let (mut oracle, m) = oracle_for("a6b6");
    let mut s = Search::new(gumbel_params(), &game(FOUR_MOVES), 3).unwrap();
    let r = s.run(&mut oracle, 17).unwrap();
    // m = 4, n = 16: one visit each, another each, then the best two get 4 more.
    let mut v = r.visits.clone();
    v.sort_unstable();
    assert_eq!(v, vec![2, 2, 6, 6]);
    assert_eq!(r.visits_of(m), 6);
    assert_eq!(r.root_visits, 17);
    assert!(!r.early_stopped);
}

#[test]
fn improved_policy_moves_mass_towards_better_q() {
    let (mut oracle, m) = oracle_for("a6b6");
    let mut s = Search::new(gumbel_params(), &game(FOUR_MOVES), 1).unwrap();
    let r = s.run(&mut oracle, 17).unwrap();
    let i = r.moves.iter().position(|&x| x == m).unwrap();
    assert!(
        r.policy_target[i] > r.prior[i],
        "{:?} vs prior {:?}",
        r.policy_target,
        r.prior
    );
    let max = r.policy_target.iter().cloned().fold(0.0, f32::max);
    assert_eq!(r.policy_target[i], max);
    assert!((r.policy_target.iter().sum::<f32>() - 1.0).abs() < 1e-5);

    // On a real tree: π'(a)/π(a) ∝ exp(σ(q̂(a))), so among visited moves the ratio
    // orders the moves exactly as their Q does.
    let params = SearchParams {
        gumbel: GumbelParams {
            considered_actions: 44,
            ..GumbelParams::default()
        },
        ..gumbel_params()
    };
    let mut s = Search::from_position(params, Position::startpos(), 5).unwrap();
    let r = s.run(&mut RandomEvaluator::new(8), 400).unwrap();
    let visited: Vec<(f32, f32)> = (0..r.moves.len())
        .filter_map(|k| r.q[k].map(|q| (q, r.policy_target[k] / r.prior[k])))
        .collect();
    assert!(visited.len() > 10);
    for &(qa, ra) in &visited {
        for &(qb, rb) in &visited {
            if qa > qb + 1e-4 {
                assert!(ra > rb, "q {qa} > {qb} but ratio {ra} <= {rb}");
            }
        }
    }
}

#[test]
fn a_target_built_on_another_prior_keeps_the_searchs_values() {
    // The search's own prior gives back its own target.
    let params = SearchParams {
        root_policy_temperature: 1.3,
        ..gumbel_params()
    };
    let mut s = Search::from_position(params, Position::startpos(), 5).unwrap();
    let r = s.run(&mut RandomEvaluator::new(8), 200).unwrap();
    let own = s.root_prior().unwrap().to_vec();
    let same = s.gumbel_target_on(&own).unwrap();
    for (a, b) in same.iter().zip(&r.policy_target) {
        assert!((a - b).abs() < 1e-5, "{same:?} vs {:?}", r.policy_target);
    }
    // Another prior: softmax(ln base′ + σ) = target · base′ / prior′, normalised, with ′
    // the root temperature.
    let n = own.len();
    let base: Vec<f32> = (0..n).map(|i| (1 + i % 5) as f32 / n as f32).collect();
    let on = s.gumbel_target_on(&base).unwrap();
    let t = |x: f32| x.powf(1.0 / 1.3);
    let expect: Vec<f32> = (0..n)
        .map(|i| r.policy_target[i] * t(base[i]) / t(own[i]))
        .collect();
    let sum: f32 = expect.iter().sum();
    for (a, b) in on.iter().zip(&expect) {
        assert!((a - b / sum).abs() < 1e-5, "{on:?} vs {expect:?}");
    }
    assert_ne!(on, r.policy_target);
    assert!(s.gumbel_target_on(&base[1..]).is_none(), "wrong length");
    // A PUCT search's target is visit counts: there is nothing to rebase.
    let mut puct = Search::from_position(SearchParams::default(), Position::startpos(), 5).unwrap();
    puct.run(&mut RandomEvaluator::new(8), 50).unwrap();
    assert!(puct.gumbel_target_on(&own).is_none());
}

#[test]
fn batched_and_reused_gumbel_searches_still_find_the_win() {
    let (mut oracle, m) = oracle_for("e0f0");
    let params = SearchParams {
        batch_size: 4,
        ..gumbel_params()
    };
    let mut s = Search::new(params, &game(FOUR_MOVES), 2).unwrap();
    let r = s.run(&mut oracle, 33).unwrap();
    assert_eq!(r.best_move, Some(m));
    assert_eq!(r.root_visits, 33);
    // Tree reuse: the next search starts from the kept subtree and still finishes.
    s.advance(m).unwrap();
    let kept = s.root_visits();
    assert!(kept > 0);
    let r = s.run(&mut UniformEvaluator, kept + 16).unwrap();
    assert_eq!(r.root_visits, kept + 16);
    assert!(r.best_move.is_some());
}

#[test]
fn without_gumbel_sampling_the_search_ignores_the_seed() {
    let params = SearchParams {
        gumbel: GumbelParams {
            sample: false,
            ..GumbelParams::default()
        },
        ..gumbel_params()
    };
    let run = |seed| {
        let mut s = Search::from_position(params.clone(), Position::startpos(), seed).unwrap();
        s.run(&mut RandomEvaluator::new(4), 64).unwrap()
    };
    assert_eq!(run(1), run(2));
    let sampled = |seed| {
        let mut s = Search::from_position(gumbel_params(), Position::startpos(), seed).unwrap();
        s.run(&mut RandomEvaluator::new(4), 64).unwrap()
    };
    assert_eq!(sampled(1), sampled(1));
    assert_ne!(sampled(1).visits, sampled(2).visits);
}

fn interior_gumbel(considered_actions: usize) -> SearchParams {
    SearchParams {
        gumbel: GumbelParams {
            considered_actions,
            interior: InteriorSelection::Gumbel,
            ..GumbelParams::default()
        },
        ..gumbel_params()
    }
}

#[test]
fn interior_gumbel_selection_finds_wins() {
    let (mut oracle, m) = oracle_for("a6a7");
    for seed in 0..8 {
        let mut s = Search::new(interior_gumbel(16), &game(FOUR_MOVES), seed).unwrap();
        let r = s.run(&mut oracle, 17).unwrap();
        assert_eq!(r.best_move, Some(m), "seed {seed}");
    }
    // A mate in two, every root move considered: a forced win must be proven through
    // interior nodes chosen by the Gumbel rule (Q exactly 1: with the uniform evaluator
    // every other leaf is worth 0). Which winning move is played depends on the seed's
    // Gumbel draws and tie order: several seeds play a longer mate (the rook or cannon
    // moves first), which wins as surely.
    let fen = "9/9/4k4/9/9/9/9/3K5/7CR/9 w - - 0 1";
    let mut g = game(fen);
    let first = common::mates_in_two(&mut g);
    let mut shortest = 0;
    for seed in 0..8 {
        let mut s = Search::new(interior_gumbel(128), &g, seed).unwrap();
        let r = s.run(&mut UniformEvaluator, 3000).unwrap();
        let best = r.best_move.unwrap();
        assert_eq!(
            r.q_of(best),
            Some(1.0),
            "seed {seed}: {best} is no proven win"
        );
        shortest += usize::from(first.contains(&best));
    }
    assert!(shortest > 0, "no seed played a mate in two ({first:?})");
}
