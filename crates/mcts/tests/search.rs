//! PUCT search behaviour: mates, the flying-general rule, repetition verdicts, noise and
//! determinism, tree reuse, the step API and error paths.

mod common;

use std::collections::HashMap;

use common::{FailingEvaluator, MaterialEvaluator, game, mates, mates_in_one, mates_in_two, mv};
use xq_core::{Bitboard, Color, Game, Move, Position, Reason, Square};
use xq_mcts::{Ending, Playouts, Search, SearchError, SearchParams, TemperatureSchedule};
use xq_nn::{Evaluation, Evaluator, RandomEvaluator, UniformEvaluator};

fn play_params() -> SearchParams {
    SearchParams {
        early_stop: false,
        ..SearchParams::for_play()
    }
}

fn search_fen(fen: &str, params: SearchParams, seed: u64) -> Search {
    Search::new(params, &game(fen), seed).unwrap()
}

/// Mate-in-one positions (found with the rules core; each has one mating move among
/// 16 or more legal moves, except the first, from `Game`'s documentation).
const MATE_IN_ONE: [&str; 6] = [
    "4k4/R8/9/9/9/9/9/1R7/9/3K5 w - - 0 1",
    "8C/3k5/9/2R6/9/9/9/9/9/4K4 w - - 0 1",
    "3k5/2R6/4e4/9/9/9/3C5/4KR3/9/9 w - - 0 1",
    "5k3/1H7/9/9/9/9/9/9/3K5/1C3H3 w - - 0 1",
    // The general steps aside and the flying-general rule closes the d-file.
    "4k4/5R3/6C2/4H4/9/9/9/9/4K4/9 w - - 0 1",
    "3k5/R3r4/9/9/9/R8/9/5K3/9/9 w - - 0 1",
];

#[test]
fn finds_mate_in_one() {
    for fen in MATE_IN_ONE {
        let mut g = game(fen);
        let mating = mates_in_one(&mut g);
        assert!(!mating.is_empty(), "{fen}: not a mate in one");
        let mut search = search_fen(fen, play_params(), 1);
        let r = search.run(&mut UniformEvaluator, 400).unwrap();
        let best = r.best_move.unwrap();
        assert!(
            mating.contains(&best),
            "{fen}: played {best}, mates are {mating:?}"
        );
        assert!(
            r.value > 0.8,
            "{fen}: root value {} for a won position",
            r.value
        );
        assert_eq!(
            r.q_of(best),
            Some(1.0),
            "{fen}: the mate is not scored as a win"
        );
        let i = r.moves.iter().position(|&m| m == best).unwrap();
        assert_eq!(
            r.exact[i],
            Some(1.0),
            "{fen}: the mate is not marked decided"
        );
        assert_eq!(
            r.ending_of(best),
            Some(Ending::NoMove),
            "{fen}: the mate is not told as one"
        );
        let decided_wins = r.exact.iter().filter(|e| **e == Some(1.0)).count();
        assert_eq!(
            decided_wins,
            mating.len(),
            "{fen}: exact wins are not the mates"
        );
        assert_eq!(r.pv.first(), Some(&best));
    }
}

/// Mate-in-two positions (first move, any reply, mate), found with the rules core.
const MATE_IN_TWO: [&str; 5] = [
    "4k4/9/9/9/4C4/9/9/6R2/3K5/9 w - - 0 1",
    "9/9/4k4/9/9/9/9/3K5/7CR/9 w - - 0 1",
    // A quiet first move: the chariot takes the d-file next to the general.
    "3k5/9/5r3/9/9/9/9/6H2/4K4/4R4 w - - 0 1",
    "4k4/9/9/R8/8P/9/9/9/5K3/9 w - - 0 1",
    "9/9/P2k5/9/1H1H5/9/9/9/5K3/9 w - - 0 1",
];

#[test]
fn finds_mate_in_two() {
    for fen in MATE_IN_TWO {
        let mut g = game(fen);
        assert!(mates_in_one(&mut g).is_empty(), "{fen}: has a mate in one");
        let first = mates_in_two(&mut g);
        assert!(!first.is_empty(), "{fen}: not a mate in two");
        let mut search = search_fen(fen, play_params(), 2);
        let r = search.run(&mut UniformEvaluator, 6000).unwrap();
        let best = r.best_move.unwrap();
        assert!(
            first.contains(&best),
            "{fen}: played {best}, mates start with {first:?}"
        );
        assert_eq!(r.q_of(best), Some(1.0), "{fen}: the mate is not proven");
        assert_eq!(
            r.ending_of(best),
            Some(Ending::NoMove),
            "{fen}: the proven mate is not told as one"
        );
        // The principal variation is the mate: move, reply, mating move.
        assert!(r.pv.len() >= 3, "{fen}: pv {:?}", r.pv);
        let mut line = g.clone();
        line.play(r.pv[0]).unwrap();
        line.play(r.pv[1]).unwrap();
        assert!(
            mates(&mut line, r.pv[2]),
            "{fen}: pv {:?} does not mate",
            r.pv
        );
    }
}

#[test]
fn advancing_into_a_proven_node_keeps_searching_its_moves() {
    let fen = MATE_IN_TWO[1];
    let mut s = search_fen(fen, play_params(), 2);
    let r = s.run(&mut UniformEvaluator, 6000).unwrap();
    let best = r.best_move.unwrap();
    assert_eq!(r.q_of(best), Some(1.0));
    s.advance(best).unwrap();
    assert!(s.root_visits() > 0, "the proven subtree should be kept");
    let r = s.run(&mut UniformEvaluator, s.root_visits() + 200).unwrap();
    assert_eq!(r.moves.len(), s.position().legal_moves().len());
    assert!(r.best_move.is_some());
    assert!(
        r.value < -0.9,
        "black is mated next move, value {}",
        r.value
    );
    assert!(r.q.iter().all(|q| *q == Some(-1.0)), "{:?}", r.q);
}

/// Red to move; the horse on d3 shields the d-file. Most horse moves leave the file,
/// after which ...a5e5+ is mate: e1 is held by that chariot, f0 by the chariot on f8,
/// and the last flight square d0 faces the black general on d9 (flying-general rule).
const FLYING_GENERAL: &str = "3k5/5r3/9/9/r8/9/3H5/9/9/4K4 w - - 0 1";

#[test]
fn avoids_moves_that_allow_a_flying_general_mate() {
    let mut g = game(FLYING_GENERAL);
    let root = g.position().clone();
    // Precondition: leaving the file allows a mate whose flight square is covered only
    // by the facing black general.
    let leave = mv(&root, "d3b4");
    g.play(leave).unwrap();
    let reply = mv(g.position(), "a5e5");
    assert!(mates(&mut g, reply), "d3b4 should allow a5e5 mate");
    g.play(reply).unwrap();
    let pos = g.position().clone();
    let d0 = Square::new(3);
    let occ = Bitboard(pos.occupied().0 & !(1u128 << pos.general(Color::Red).index()));
    assert_eq!(
        pos.attackers(d0, Color::Black, occ),
        Bitboard(1u128 << pos.general(Color::Black).index()),
        "d0 should be covered by the flying general alone"
    );

    let mut losing = 0;
    let mut g = game(FLYING_GENERAL);
    let total = root.legal_moves().len();
    for m in root.legal_moves() {
        g.play_unchecked(m);
        if !mates_in_one(&mut g).is_empty() {
            losing += 1;
        }
        g.undo();
    }
    assert!(
        losing >= 4 && losing < total,
        "{losing} of {total} moves lose: the test needs both kinds"
    );

    for seed in 0..3 {
        let mut search = search_fen(FLYING_GENERAL, play_params(), seed);
        let r = search.run(&mut UniformEvaluator, 3000).unwrap();
        let best = r.best_move.unwrap();
        let mut g = game(FLYING_GENERAL);
        g.play(best).unwrap();
        assert!(
            mates_in_one(&mut g).is_empty(),
            "seed {seed}: {best} allows a mate in one"
        );
        assert_eq!(r.q_of(leave), Some(-1.0), "d3b4 is not scored as lost");
        let i = r.moves.iter().position(|&m| m == leave).unwrap();
        assert_eq!(r.exact[i], Some(-1.0), "d3b4 is not proven lost");
    }
}

/// Black to move in check from the chariot on a8; then ...e8e7 a8a7+ e7e8 has been
/// played, so a7a8+ would repeat the position after a7a8+ with red checking on every
/// move of the cycle: perpetual check, red loses.
fn perpetual_check_game() -> Game {
    let mut g = game("9/R3k4/9/9/9/9/9/9/9/3K5 b - - 0 1");
    for m in ["e8e7", "a8a7", "e7e8"] {
        g.play_iccs(m).unwrap();
    }
    g
}

#[test]
fn avoids_repeating_a_perpetual_check() {
    let g = perpetual_check_game();
    let repeat = mv(g.position(), "a7a8");
    let mut after = g.clone();
    after.play(repeat).unwrap();
    let verdict = after.adjudicate().unwrap();
    assert_eq!(verdict.reason, Reason::PerpetualCheck);
    assert_eq!(verdict.winner, Some(Color::Black));

    for evaluator in [
        &mut UniformEvaluator as &mut dyn Evaluator,
        &mut MaterialEvaluator,
    ] {
        let mut search = Search::new(play_params(), &g, 3).unwrap();
        let r = search.run(evaluator, 1500).unwrap();
        assert_ne!(
            r.best_move,
            Some(repeat),
            "{}: repeats the perpetual check",
            evaluator.name()
        );
        assert_eq!(r.q_of(repeat), Some(-1.0), "{}", evaluator.name());
        assert!(
            r.visits_of(repeat) < 30,
            "{}: {} visits",
            evaluator.name(),
            r.visits_of(repeat)
        );
    }
}

#[test]
fn the_victim_of_a_perpetual_check_completes_the_repetition() {
    // Red to move, then a7a8+ e8e7 a8a7+: black's e7e8 recreates the start with red
    // having checked on every move of the cycle, so black wins by repeating.
    let mut g = game("9/4k4/R8/9/9/9/9/9/9/3K5 w - - 0 1");
    for m in ["a7a8", "e8e7", "a8a7"] {
        g.play_iccs(m).unwrap();
    }
    let repeat = mv(g.position(), "e7e8");
    let mut after = g.clone();
    after.play(repeat).unwrap();
    let verdict = after.adjudicate().unwrap();
    assert_eq!(verdict.reason, Reason::PerpetualCheck, "{verdict}");
    assert_eq!(verdict.winner, Some(Color::Black));

    let mut search = Search::new(play_params(), &g, 4).unwrap();
    let r = search.run(&mut MaterialEvaluator, 800).unwrap();
    assert_eq!(r.best_move, Some(repeat));
    assert_eq!(r.q_of(repeat), Some(1.0));
    // Won by the rules, not on the board: an engine must not report it as a mate.
    assert_eq!(r.ending_of(repeat), Some(Ending::Rule));
}

/// Red (down a chariot) can repeat an idle cycle: a draw, which beats every other move.
#[test]
fn an_idle_repetition_is_a_draw_worth_zero() {
    let mut g = game("4k4/9/9/9/8r/9/9/9/4A4/3K5 b - - 0 1");
    for m in ["e9e8", "d0d1", "e8e9"] {
        g.play_iccs(m).unwrap();
    }
    let repeat = mv(g.position(), "d1d0");
    let mut after = g.clone();
    after.play(repeat).unwrap();
    let verdict = after.adjudicate().unwrap();
    assert_eq!(verdict.reason, Reason::RepetitionDraw);

    let mut search = Search::new(play_params(), &g, 5).unwrap();
    let r = search.run(&mut MaterialEvaluator, 1000).unwrap();
    assert_eq!(r.best_move, Some(repeat));
    assert_eq!(r.q_of(repeat), Some(0.0));
    for (m, q) in r.moves.iter().zip(&r.q) {
        if *m != repeat {
            assert!(
                q.unwrap_or(-1.0) < -0.3,
                "{m}: q {q:?} for a move a chariot down"
            );
        }
    }
    assert!(
        r.value.abs() < 0.2,
        "root value {} should be near the draw",
        r.value
    );
    assert!(r.wdl[1] > 0.7, "root wdl {:?} should be mostly draw", r.wdl);
}

#[test]
fn a_finished_game_is_refused() {
    // Mated: red to move, no legal move.
    let mut g = game(MATE_IN_ONE[0]);
    g.play_iccs("b2b9").unwrap();
    let mut search = Search::new(play_params(), &g, 0).unwrap();
    let err = search.run(&mut UniformEvaluator, 10).unwrap_err();
    assert!(matches!(err, SearchError::GameOver { .. }), "{err}");
    assert!(err.to_string().contains("game is over"));
}

#[test]
fn noise_and_move_choice_are_determined_by_the_seed() {
    let params = SearchParams {
        temperature: TemperatureSchedule {
            initial: 1.0,
            plies: 100,
            last: 1.0,
            half_life_plies: 0.0,
        },
        ..SearchParams::default()
    };
    let run = |seed: u64| {
        let mut s = Search::from_position(params.clone(), Position::startpos(), seed).unwrap();
        let r = s.run(&mut RandomEvaluator::new(9), 300).unwrap();
        let choices: Vec<_> = (0..20).map(|_| s.choose_move(&r).unwrap()).collect();
        (r, choices)
    };
    let (a, ca) = run(11);
    let (b, cb) = run(11);
    let (c, cc) = run(12);
    assert_eq!(a, b, "same seed, different search");
    assert_eq!(ca, cb, "same seed, different move choices");
    assert_ne!(a.prior, c.prior, "different seeds, same noise");
    assert_ne!(ca, cc, "different seeds, same move choices");
    // The noise is real: priors differ from the network's policy but stay a
    // distribution.
    let net = RandomEvaluator::new(9)
        .evaluate(&[xq_nn::EvalInput {
            history: &[Position::startpos()],
            moves: &a.moves,
        }])
        .unwrap();
    assert!(
        a.prior
            .iter()
            .zip(&net[0].policy)
            .any(|(x, y)| (x - y).abs() > 1e-3)
    );
    assert!((a.prior.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    // Temperature 1 samples more than one move over 20 draws.
    let distinct: std::collections::HashSet<_> = ca.iter().collect();
    assert!(distinct.len() > 1, "temperature 1 always chose {:?}", ca[0]);
}

#[test]
fn cheap_searches_have_no_noise_and_greedy_play_is_the_best_move() {
    let mut s = Search::from_position(SearchParams::default(), Position::startpos(), 1).unwrap();
    let r = s
        .run_playouts(
            &mut RandomEvaluator::new(3),
            Playouts {
                visits: 200,
                full: false,
            },
        )
        .unwrap();
    let net = RandomEvaluator::new(3)
        .evaluate(&[xq_nn::EvalInput {
            history: &[Position::startpos()],
            moves: &r.moves,
        }])
        .unwrap();
    for (x, y) in r.prior.iter().zip(&net[0].policy) {
        assert!((x - y).abs() < 1e-6, "cheap search changed the priors");
    }
    assert!(!r.full && !r.pruned);
    let mut greedy =
        Search::from_position(SearchParams::for_play(), Position::startpos(), 1).unwrap();
    let r = greedy.run(&mut RandomEvaluator::new(3), 200).unwrap();
    assert_eq!(greedy.choose_move(&r), r.best_move);
    let most = *r.visits.iter().max().unwrap();
    assert_eq!(r.visits_of(r.best_move.unwrap()), most);
}

#[test]
fn tree_reuse_keeps_the_subtree_visits() {
    let params = SearchParams {
        early_stop: false,
        ..SearchParams::default()
    };
    let mut s = Search::from_position(params.clone(), Position::startpos(), 7).unwrap();
    let r = s.run(&mut RandomEvaluator::new(1), 800).unwrap();
    let best = r.best_move.unwrap();
    let kept = r.visits_of(best);
    assert!(kept > 20);
    s.advance(best).unwrap();
    assert_eq!(s.root_visits(), kept);
    assert!(s.tree_size() > 1);
    let r2 = s.run(&mut RandomEvaluator::new(1), 800).unwrap();
    assert_eq!(r2.root_visits, 800);
    assert!(s.memory_bytes() >= s.tree_size() * xq_mcts::NODE_BYTES);
    assert_eq!(
        r2.playouts,
        800 - kept,
        "reused visits should count towards the budget"
    );

    // The reused tree agrees with a fresh search on the new root's statistics for the
    // kept part: a fresh search from the same position starts from zero.
    let mut pos = Position::startpos();
    pos.play(best).unwrap();
    let mut fresh = Search::from_position(params.clone(), pos, 7).unwrap();
    assert_eq!(fresh.root_visits(), 0);
    let rf = fresh.run(&mut RandomEvaluator::new(1), 800).unwrap();
    assert_eq!(rf.playouts, 800);

    let mut no_reuse = Search::from_position(
        SearchParams {
            tree_reuse: false,
            ..params
        },
        Position::startpos(),
        7,
    )
    .unwrap();
    no_reuse.run(&mut RandomEvaluator::new(1), 300).unwrap();
    no_reuse.advance(best).unwrap();
    assert_eq!(no_reuse.root_visits(), 0);
    assert_eq!(no_reuse.tree_size(), 1);
}

#[test]
fn advancing_with_an_illegal_move_is_an_error_and_changes_nothing() {
    let mut s = Search::from_position(SearchParams::default(), Position::startpos(), 0).unwrap();
    s.run(&mut UniformEvaluator, 100).unwrap();
    let before = s.root_visits();
    let bad = "e0e2".parse().unwrap();
    let err = s.advance(bad).unwrap_err();
    assert!(matches!(err, SearchError::IllegalMove { .. }), "{err}");
    assert_eq!(s.root_visits(), before);
    assert_eq!(s.position(), &Position::startpos());
}

#[test]
fn early_stop_ends_the_search_once_the_best_move_is_settled() {
    // A proven win settles it: several moves mate here, and the first one proven is
    // played without spending the rest of the budget.
    let fen = MATE_IN_ONE[1];
    let mut s = search_fen(fen, SearchParams::for_play(), 0);
    let r = s.run(&mut UniformEvaluator, 20_000).unwrap();
    assert!(r.early_stopped);
    assert!(r.root_visits < 1_000, "{} visits", r.root_visits);
    assert_eq!(r.q_of(r.best_move.unwrap()), Some(1.0));
    // So does a lead the visits left cannot overturn.
    let mut s = Search::from_position(SearchParams::for_play(), Position::startpos(), 0).unwrap();
    let r = s.run(&mut RandomEvaluator::new(3), 20_000).unwrap();
    let best = r.best_move.unwrap();
    let second = r
        .moves
        .iter()
        .filter(|&&m| m != best)
        .map(|&m| r.visits_of(m))
        .max()
        .unwrap();
    assert!(r.early_stopped);
    assert!(r.visits_of(best) > second + (20_000 - r.root_visits));
    let mut full = search_fen(fen, play_params(), 0);
    assert_eq!(
        full.run(&mut UniformEvaluator, 3000).unwrap().root_visits,
        3000
    );
}

#[test]
fn forced_playouts_are_pruned_from_the_policy_target() {
    let mut s = Search::from_position(
        SearchParams {
            early_stop: false,
            ..SearchParams::default()
        },
        Position::startpos(),
        3,
    )
    .unwrap();
    let r = s.run(&mut RandomEvaluator::new(5), 1000).unwrap();
    assert!(r.pruned);
    let total: u32 = r.visits.iter().sum();
    let best = r
        .moves
        .iter()
        .position(|&m| Some(m) == r.best_move)
        .unwrap();
    let sum: f32 = r.policy_target.iter().sum();
    assert!((sum - 1.0).abs() < 1e-4);
    // Pruning moves mass from the other moves to the best one.
    assert!(r.policy_target[best] >= r.visits[best] as f32 / total as f32);
    let pruned_some = r
        .policy_target
        .iter()
        .zip(&r.visits)
        .enumerate()
        .any(|(i, (&t, &n))| i != best && n > 0 && t < n as f32 / total as f32 * 0.999);
    assert!(pruned_some, "no visits were pruned");
    // Forced playouts: every move with enough prior got at least one visit.
    for (i, (&p, &n)) in r.prior.iter().zip(&r.visits).enumerate() {
        if p * 2.0 * total as f32 >= 4.0 {
            assert!(n >= 1, "move {i} with prior {p} was never visited");
        }
    }
}

#[test]
fn stepping_many_games_through_one_evaluator_matches_run() {
    let params = SearchParams {
        batch_size: 8,
        early_stop: false,
        ..SearchParams::default()
    };
    let positions: Vec<Position> = ["h2e2", "b0c2", "c3c4"]
        .iter()
        .map(|m| {
            let mut p = Position::startpos();
            p.play(p.parse_iccs(m).unwrap()).unwrap();
            p
        })
        .collect();
    let mut games: Vec<Search> = positions
        .iter()
        .enumerate()
        .map(|(i, p)| Search::from_position(params.clone(), p.clone(), i as u64).unwrap())
        .collect();
    for s in &mut games {
        s.start(Playouts::full(300)).unwrap();
    }
    let mut net = RandomEvaluator::new(17);
    let mut calls = 0;
    while games.iter().any(|s| !s.is_finished()) {
        for s in games.iter_mut().filter(|s| !s.is_finished()) {
            s.select_leaves(8);
        }
        let inputs: Vec<_> = games
            .iter()
            .flat_map(|s| s.pending().iter().map(|r| r.input()))
            .collect();
        let evals = net.evaluate(&inputs).unwrap();
        calls += 1;
        let mut at = 0;
        for s in &mut games {
            let n = s.pending().len();
            s.apply(&evals[at..at + n]).unwrap();
            at += n;
        }
    }
    for (i, (s, p)) in games.iter().zip(&positions).enumerate() {
        let mut alone = Search::from_position(params.clone(), p.clone(), i as u64).unwrap();
        let expected = alone.run(&mut RandomEvaluator::new(17), 300).unwrap();
        assert_eq!(s.result(), expected, "game {i}");
    }
    assert!(
        calls < 3 * 300 / 8 / 2,
        "{calls} evaluator calls: batches are not filling"
    );
}

#[test]
fn leaf_requests_carry_history_and_legal_moves() {
    let mut g = Game::new(Position::startpos());
    for m in ["h2e2", "h9g7", "h0g2"] {
        g.play_iccs(m).unwrap();
    }
    let params = SearchParams {
        history_len: 3,
        ..SearchParams::default()
    };
    let mut s = Search::new(params, &g, 0).unwrap();
    s.start(Playouts::full(50)).unwrap();
    let reqs = s.select_leaves(4);
    assert_eq!(reqs.len(), 1, "only the root can be requested first");
    let root = &reqs[0];
    assert_eq!(root.history().len(), 3);
    assert_eq!(root.position(), g.position());
    assert_eq!(&root.history()[0], g.position_at(1).unwrap());
    assert_eq!(root.moves(), g.position().legal_moves().as_slice());
    let evals = UniformEvaluator.evaluate(&[root.input()]).unwrap();
    s.apply(&evals).unwrap();
    let reqs = s.select_leaves(4);
    assert_eq!(reqs.len(), 4);
    for r in reqs {
        assert_eq!(r.history().len(), 3);
        assert_eq!(&r.history()[1], g.position());
        assert_eq!(r.moves(), r.position().legal_moves().as_slice());
    }
}

#[test]
fn bad_evaluations_are_errors_and_the_search_recovers() {
    let mut s = Search::from_position(SearchParams::default(), Position::startpos(), 0).unwrap();
    s.start(Playouts::full(100)).unwrap();
    let n = s.select_leaves(4).len();
    assert_eq!(n, 1);
    let err = s.apply(&[]).unwrap_err();
    assert!(
        matches!(
            err,
            SearchError::ResultCount {
                expected: 1,
                got: 0
            }
        ),
        "{err}"
    );
    assert!(s.pending().is_empty());
    s.select_leaves(4);
    let short = Evaluation {
        policy: vec![1.0],
        wdl: [0.0, 1.0, 0.0],
    };
    let err = s.apply(&[short]).unwrap_err();
    assert!(
        err.to_string()
            .contains("policy has 1 entries for 44 legal moves"),
        "{err}"
    );
    let reqs = s.select_leaves(4).len();
    let nan = Evaluation {
        policy: vec![1.0 / 44.0; 44],
        wdl: [f32::NAN, 0.5, 0.5],
    };
    assert!(s.apply(&vec![nan; reqs]).is_err());
    assert_eq!(s.select_leaves(4).len(), 1);
    s.abandon_pending();
    assert!(s.pending().is_empty());
    assert_eq!(s.root_visits(), 0);
    let err = s.run(&mut FailingEvaluator, 100).unwrap_err();
    assert!(matches!(err, SearchError::Eval(_)), "{err}");
    assert_eq!(s.root_visits(), 0);
    // Still usable afterwards.
    let r = s.run(&mut UniformEvaluator, 100).unwrap();
    assert_eq!(r.root_visits, 100);
}

#[test]
fn root_policy_temperature_flattens_the_priors() {
    let prior_spread = |t: f32| {
        let params = SearchParams {
            root_policy_temperature: t,
            dirichlet_epsilon: 0.0,
            ..SearchParams::default()
        };
        let mut s = Search::from_position(params, Position::startpos(), 0).unwrap();
        let r = s.run(&mut RandomEvaluator::new(2), 50).unwrap();
        let max = r.prior.iter().cloned().fold(0.0, f32::max);
        let min = r.prior.iter().cloned().fold(1.0, f32::min);
        max / min
    };
    assert!(prior_spread(2.0) < prior_spread(1.0));
    assert!(prior_spread(0.5) > prior_spread(1.0));
}

#[test]
fn searches_and_requests_can_move_between_threads() {
    fn send<T: Send + 'static>() {}
    send::<Search>();
    send::<xq_mcts::LeafRequest>();
    send::<xq_mcts::SearchResult>();
    send::<SearchError>();
    // And actually do it: a search started here, finished on another thread.
    let mut s = Search::from_position(SearchParams::default(), Position::startpos(), 0).unwrap();
    s.start(Playouts::full(50)).unwrap();
    let r = std::thread::spawn(move || {
        while !s.is_finished() {
            let reqs: Vec<_> = s.select_leaves(4).to_vec();
            let inputs: Vec<_> = reqs.iter().map(|r| r.input()).collect();
            let evals = UniformEvaluator.evaluate(&inputs).unwrap();
            s.apply(&evals).unwrap();
        }
        s.result()
    })
    .join()
    .unwrap();
    assert_eq!(r.root_visits, 50);
}

/// Root moves that received at least one visit.
fn breadth(params: SearchParams, visits: u32) -> usize {
    let mut s = Search::from_position(params, Position::startpos(), 4).unwrap();
    let r = s.run(&mut RandomEvaluator::new(6), visits).unwrap();
    r.visits.iter().filter(|&&n| n > 0).count()
}

#[test]
fn exploration_knobs_widen_or_narrow_the_root() {
    let base = SearchParams {
        dirichlet_epsilon: 0.0,
        forced_playouts_k: 0.0,
        batch_size: 1,
        ..SearchParams::default()
    };
    let narrow_fpu = breadth(
        SearchParams {
            fpu_reduction_root: 2.0,
            ..base.clone()
        },
        150,
    );
    let wide_fpu = breadth(
        SearchParams {
            fpu_reduction_root: 0.0,
            ..base.clone()
        },
        150,
    );
    assert!(
        narrow_fpu < wide_fpu,
        "root FPU reduction: {narrow_fpu} vs {wide_fpu} moves"
    );
    let low_c = breadth(
        SearchParams {
            c_puct_init: 0.3,
            ..base.clone()
        },
        150,
    );
    let high_c = breadth(
        SearchParams {
            c_puct_init: 6.0,
            ..base.clone()
        },
        150,
    );
    assert!(low_c < high_c, "c_puct: {low_c} vs {high_c} moves");
}

#[test]
fn dirichlet_alpha_scales_with_the_number_of_moves() {
    // With ε = 1 the priors are the noise itself: a small total concentration spread
    // over 44 moves is spiky, a large one nearly flat.
    let max_prior = |scale: f32| {
        let params = SearchParams {
            dirichlet_epsilon: 1.0,
            dirichlet_alpha_scale: scale,
            ..SearchParams::default()
        };
        let mut s = Search::from_position(params, Position::startpos(), 8).unwrap();
        let r = s.run(&mut UniformEvaluator, 2).unwrap();
        assert!((r.prior.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        r.prior.iter().cloned().fold(0.0, f32::max)
    };
    assert!(
        max_prior(0.05) > 0.5,
        "alpha 0.05/44 should put most mass on one move"
    );
    assert!(
        max_prior(2000.0) < 0.04,
        "alpha 2000/44 should be near uniform (1/44)"
    );
}

/// Root visits of `searches` PUCT searches of `visits` each with equal priors (the
/// uniform evaluator), per move in the mover's view (Black's moves rotated to Red's).
fn equal_prior_visits(fen: &str, searches: u64, visits: u32) -> HashMap<Move, u32> {
    let mut total = HashMap::new();
    for seed in 0..searches {
        let params = SearchParams {
            early_stop: false,
            dirichlet_epsilon: 0.0,
            ..SearchParams::default()
        };
        let mut s = search_fen(fen, params, seed);
        let black = s.position().turn() == Color::Black;
        let r = s.run(&mut UniformEvaluator, visits).unwrap();
        for (&m, &n) in r.moves.iter().zip(&r.visits) {
            *total.entry(if black { m.flip() } else { m }).or_insert(0) += n;
        }
    }
    total
}

#[test]
fn equal_priors_give_colour_symmetric_searches_from_the_start_position() {
    // Moves are generated in square order, and Red's first ones are back-rank shuffles
    // while Black's are soldier pushes and a cannon taking a horse: ties broken by move
    // order made equal-prior searches play each colour a different game (issue #45).
    let red = equal_prior_visits(xq_core::START_FEN, 100, 8);
    let black_fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1";
    let black = equal_prior_visits(black_fen, 100, 8);
    let moves = red.len() as u32;
    assert_eq!(black.len() as u32, moves, "the positions mirror each other");
    let total: u32 = red.values().sum();
    for (colour, visits) in [("red", &red), ("black", &black)] {
        let (m, most) = visits.iter().max_by_key(|(_, n)| **n).unwrap();
        assert!(
            most * moves < 3 * total,
            "{colour}: {m} got {most} of {total} visits over {moves} moves"
        );
    }
    let apart: u32 = red.iter().map(|(m, n)| n.abs_diff(black[m])).sum();
    assert!(
        f64::from(apart) / 2.0 < 0.25 * f64::from(total),
        "the colours' visit distributions differ by {apart} of {total}"
    );
}
