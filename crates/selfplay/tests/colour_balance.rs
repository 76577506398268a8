//! Self-play with equal priors (the uniform evaluator: a run's first generation, or a
//! fresh network) gives neither colour the advantage. Ties broken by move order once
//! played Red's back-rank shuffles against Black's soldier pushes and cannon captures:
//! Black won the uniform generations of a zero run 30 to 5, and the networks trained on
//! them learnt "Red to move loses" (issue #45).

mod common;

use common::{reference_game, tiny_config};
use xq_data::Outcome;
use xq_mcts::RootAlgorithm;
use xq_nn::UniformEvaluator;

#[test]
fn each_colour_wins_at_least_30_percent_of_the_decisive_uniform_puct_games() {
    let mut config = tiny_config();
    // The zero run's first generations: PUCT at the shipped playout cap, long games
    // with material adjudication deciding drawn-out ones, no resignation.
    config.search.algorithm = RootAlgorithm::Puct;
    config.search.playout_cap.full_visits = 32;
    config.search.playout_cap.cheap_visits = 8;
    config.search.playout_cap.full_probability = 0.5;
    config.max_plies = 240;
    config.material_adjudication = 3.0;
    let (mut red, mut black) = (0, 0);
    for id in 0..96 {
        let game = reference_game(&config, id, 1, &mut UniformEvaluator);
        // The value target: the result, or a drawn-out game scored by material.
        match game.target {
            Outcome::RedWins => red += 1,
            Outcome::BlackWins => black += 1,
            Outcome::Draw => {}
        }
    }
    let decisive = red + black;
    assert!(decisive >= 20, "only {decisive} decisive games of 96");
    for (colour, wins) in [("Red", red), ("Black", black)] {
        assert!(
            wins * 10 >= decisive * 3,
            "{colour} won {wins} of {decisive} decisive games (Red {red}, Black {black})"
        );
    }
}
