//! A self-play game keeps going when tree reuse makes a node the MCTS solver has
//! proven (a forced mate) the next search's root: every search of a position with
//! legal moves must give a move (this failed before xq-mcts a13649d).

mod common;

use common::tiny_config;
use xq_core::{Color, Game, Position, Reason};
use xq_nn::{EvalInput, Evaluator, UniformEvaluator};
use xq_selfplay::Termination;
use xq_selfplay::game::{GameState, Step};

#[test]
fn a_forced_mate_found_by_the_solver_is_played_out_to_checkmate() {
    let mut config = tiny_config();
    config.search.tree_reuse = true;
    config.search.playout_cap.full_visits = 3000;
    config.search.playout_cap.cheap_visits = 3000;
    config.search.temperature.initial = 0.0;
    config.search.temperature.last = 0.0;
    // Red mates in two.
    let start = Game::new(Position::from_fen("4k4/9/9/9/4C4/9/9/6R2/3K5/9 w - - 0 1").unwrap());
    let mut g = GameState::from_game(&config, 0, 1, "uniform".into(), start).unwrap();
    let mut searches = 0;
    let finished = loop {
        g.start_search().unwrap();
        searches += 1;
        while !g.search.is_finished() {
            if g.search.select_leaves(1).is_empty() {
                continue;
            }
            let inputs: Vec<EvalInput<'_>> = g.search.pending().iter().map(|r| r.input()).collect();
            let evals = UniformEvaluator.evaluate(&inputs).unwrap();
            g.search.apply(&evals).unwrap();
        }
        if let Step::Finished(f) = g.after_search(&config).unwrap() {
            break f;
        }
        assert!(searches < 8, "no end after {searches} searches");
    };
    // Every move of Red's is a proven win; which one (the mate in two, or a longer mate
    // the solver proved as well) follows the search's seeded tie order.
    assert_eq!(finished.moves.len() % 2, 1, "{:?}", finished.moves);
    match finished.termination {
        Termination::Rules(o) => {
            assert_eq!(o.winner, Some(Color::Red));
            // 困毙 (no move, not in check) loses as checkmate does.
            assert!(
                matches!(o.reason, Reason::Checkmate | Reason::Stalemate),
                "{o}"
            );
        }
        other => panic!("ended by {other:?}"),
    }
}
