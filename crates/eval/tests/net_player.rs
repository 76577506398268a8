//! The network player and the MCTS UCCI backend: legal and allowed moves over random
//! positions (uniform and random evaluators; the torch network's cases are in xq-pipeline's
//! `tests/torch_player.rs`), determinism per seed with a
//! node budget, tree reuse, `stop` latency, option handling, and golden transcripts
//! (`tests/data/ucci_mcts/*.txt`, fixed node counts with the uniform evaluator).

use std::{
    path::Path,
    time::{Duration, Instant},
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::{Game, Move, Position};
use xq_eval::{
    clock::Limits,
    net::{NetPlayer, NetSettings},
    player::{Decision, GameView, Player},
    score::value_to_cp,
};
use xq_nn::{RandomEvaluator, UniformEvaluator};

mod player_support;
use player_support::*;

#[test]
fn net_player_plays_legal_unbanned_moves_with_the_uniform_evaluator() {
    let mut p = NetPlayer::new(Box::new(UniformEvaluator), settings(24), "uniform").unwrap();
    check_player_over_random_positions(&mut p, 1, 80);
}

#[test]
fn gumbel_root_player_plays_legal_moves_and_is_deterministic_without_noise() {
    let gumbel = || {
        let s = NetSettings {
            gumbel_root: true,
            ..settings(32)
        };
        NetPlayer::new(Box::new(RandomEvaluator::new(4)), s, "g").unwrap()
    };
    let params = gumbel().settings().search_params();
    assert_eq!(params.algorithm, xq_mcts::RootAlgorithm::Gumbel);
    assert!(!params.gumbel.sample, "play searches without Gumbel noise");
    check_player_over_random_positions(&mut gumbel(), 2, 40);
    let limits = Limits {
        nodes: Some(32),
        ..Limits::default()
    };
    // Different game seeds: without noise the moves do not depend on them.
    let a = self_play(&mut gumbel(), 5, 12, &limits);
    let b = self_play(&mut gumbel(), 6, 12, &limits);
    assert_eq!(a.len(), 12);
    assert_eq!(a, b);
}

/// Plays `plies` moves of self-play with `p` (both sides) from the start.
fn self_play(p: &mut NetPlayer, seed: u64, plies: usize, limits: &Limits) -> Vec<(Move, i32)> {
    p.new_game(seed).unwrap();
    let mut g = Game::new(Position::startpos());
    let mut out = Vec::new();
    for _ in 0..plies {
        if !g.position().has_legal_move() {
            break;
        }
        let r = p
            .think(
                &GameView {
                    game: &g,
                    banned: &[],
                },
                limits,
            )
            .unwrap();
        let Decision::Move(m) = r.decision else {
            break;
        };
        out.push((m, r.info.score.unwrap()));
        g.play(m).unwrap();
    }
    out
}

#[test]
fn net_player_is_deterministic_per_seed_with_a_node_budget() {
    let make = || NetPlayer::new(Box::new(RandomEvaluator::new(9)), settings(40), "r").unwrap();
    let limits = Limits {
        nodes: Some(40),
        ..Limits::default()
    };
    let a = self_play(&mut make(), 5, 16, &limits);
    let b = self_play(&mut make(), 5, 16, &limits);
    assert_eq!(a.len(), 16);
    assert_eq!(a, b);
}

#[test]
fn net_player_reuses_its_tree_across_moves_of_one_game() {
    let mut p = NetPlayer::new(Box::new(UniformEvaluator), settings(400), "u").unwrap();
    p.new_game(1).unwrap();
    let mut g = Game::new(Position::startpos());
    let first = p
        .think(
            &GameView {
                game: &g,
                banned: &[],
            },
            &Limits::default(),
        )
        .unwrap();
    assert!(first.info.pv.len() >= 2, "{:?}", first.info.pv);
    // Play the PV's first two moves: the reply the search looked at most.
    g.play(first.info.pv[0]).unwrap();
    g.play(first.info.pv[1]).unwrap();
    let one = Limits {
        nodes: Some(1),
        ..Limits::default()
    };
    let view = GameView {
        game: &g,
        banned: &[],
    };
    let again = p.think(&view, &one).unwrap();
    assert!(
        again.info.nodes.unwrap() > 1,
        "the subtree's visits were kept: {:?}",
        again.info
    );
    // A new game starts from scratch.
    p.new_game(2).unwrap();
    let fresh = p.think(&view, &one).unwrap();
    assert_eq!(fresh.info.nodes, Some(1));
}

#[test]
fn net_player_resigns_a_lost_position_when_asked_to() {
    // Red's general on d0 cannot move (d1 is covered by the chariot on a1, e0 would face
    // the black general); Red has two soldier moves, and after either b2b0 mates.
    let g = Game::from_fen("P3k3P/9/9/9/9/9/9/1r7/r8/3K5 w - - 0 1").unwrap();
    assert_eq!(g.position().legal_moves().len(), 2);
    assert!(g.position().has_legal_move());
    let s = NetSettings {
        resign_cp: 500,
        ..settings(300)
    };
    let mut p = NetPlayer::new(Box::new(UniformEvaluator), s, "u").unwrap();
    p.new_game(0).unwrap();
    let view = GameView {
        game: &g,
        banned: &[],
    };
    let r = p.think(&view, &Limits::default()).unwrap();
    // A proven loss: the mate convention of the alpha-beta engine (mated in 2 plies).
    assert_eq!(
        r.info.score,
        Some(-xq_eval::alphabeta::MATE + 2),
        "{:?}",
        r.info
    );
    assert_eq!(r.decision, Decision::Resign);
    let mut keep = NetPlayer::new(Box::new(UniformEvaluator), settings(300), "u").unwrap();
    assert!(matches!(
        keep.think(&view, &Limits::default()).unwrap().decision,
        Decision::Move(_)
    ));
    assert!(value_to_cp(-0.99) < -500);
}

// --- The UCCI backend -------------------------------------------------------------

#[test]
fn mcts_golden_transcripts() {
    let n = run_transcripts(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ucci_mcts"));
    assert!(n >= 2, "only {n} transcripts");
}

#[test]
fn mcts_search_reports_info_lines_with_cp_scores_and_pv() {
    let (mut e, buf) = engine_with(Box::new(UniformEvaluator), settings(100));
    e.handle_line("ucci");
    e.handle_line("position startpos moves h2e2");
    e.handle_line("go nodes 64");
    wait_idle(&mut e);
    let lines = buf.lines();
    let info = lines
        .iter()
        .rfind(|l| l.starts_with("info depth"))
        .expect("an info line");
    let words: Vec<&str> = info.split_whitespace().collect();
    let field = |k: &str| words[words.iter().position(|w| *w == k).unwrap() + 1];
    assert!(field("score").parse::<i32>().is_ok(), "{info}");
    assert_eq!(field("nodes"), "64", "{info}");
    let best = lines.last().unwrap().split_whitespace().nth(1).unwrap();
    assert_eq!(field("pv"), best, "{info}");
}

#[test]
fn mcts_bestmove_is_legal_and_unbanned_over_random_positions() {
    let (mut e, buf) = engine_with(Box::new(RandomEvaluator::new(4)), settings(100));
    e.handle_line("ucci");
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for g in random_games(7, 60, 90) {
        let moves: Vec<String> = g.moves().map(|m| m.to_string()).collect();
        e.handle_line(&format!("position startpos moves {}", moves.join(" ")));
        let legal = g.position().legal_moves();
        let banned: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|_| rng.random_bool(0.3))
            .collect();
        if !banned.is_empty() {
            let text: Vec<String> = banned.iter().map(ToString::to_string).collect();
            e.handle_line(&format!("banmoves {}", text.join(" ")));
        }
        e.handle_line("go nodes 30");
        wait_idle(&mut e);
        let last = buf.lines().last().unwrap().clone();
        if legal.is_empty() {
            assert_eq!(last, "nobestmove");
            continue;
        }
        let m = last.split_whitespace().nth(1).unwrap();
        let mv = g.position().parse_iccs(m).expect("legal bestmove");
        if banned.len() < legal.len() {
            assert!(!banned.contains(&mv), "{last}: banned");
        }
    }
}

#[test]
fn a_go_sent_right_after_bestmove_is_never_ignored() {
    // A match runner sends the next `position` and `go` as soon as it reads `bestmove`;
    // the engine must not still count itself as searching then.
    let (mut e, buf) = engine_with(Box::new(UniformEvaluator), settings(100));
    e.handle_line("ucci");
    let mut answered = 0;
    for i in 0..300 {
        let moves = if i % 2 == 0 { "h2e2" } else { "h2e2 h9g7" };
        e.handle_line(&format!("position startpos moves {moves}"));
        e.handle_line("go nodes 2");
        let t = Instant::now();
        loop {
            let n = buf
                .lines()
                .iter()
                .filter(|l| l.starts_with("bestmove"))
                .count();
            if n > answered {
                answered = n;
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "no bestmove for go {i}: {:?}",
                buf.lines().iter().rev().take(4).collect::<Vec<_>>()
            );
            std::hint::spin_loop();
        }
    }
    let errors: Vec<String> = buf
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("info string"))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_proven_mate_is_reported_as_a_mate_score() {
    let (mut e, buf) = engine_with(Box::new(UniformEvaluator), settings(100));
    e.handle_line("ucci");
    // c0d0 mates at once.
    e.handle_line("position fen 3k5/9/9/9/r1p6/9/9/9/9/R1R1K4 w - - 0 1");
    e.handle_line("go nodes 60");
    wait_idle(&mut e);
    let lines = buf.lines();
    let info = lines.iter().rfind(|l| l.starts_with("info depth")).unwrap();
    assert!(info.contains(" score mate 1 "), "{info}");
    assert_eq!(lines.last().unwrap(), "bestmove c0d0");
    // The side being mated sees the negative distance: every Red move there allows
    // b2b0 mate (see net_player_resigns_a_lost_position_when_asked_to).
    e.handle_line("position fen P3k3P/9/9/9/9/9/9/1r7/r8/3K5 w - - 0 1");
    e.handle_line("go nodes 300");
    wait_idle(&mut e);
    let lines = buf.lines();
    let info = lines.iter().rfind(|l| l.starts_with("info depth")).unwrap();
    assert!(info.contains(" score mate -1 "), "{info}");
}

#[test]
fn net_player_searches_by_time_when_the_clock_gives_a_budget() {
    // One visit by default: only a time budget can make it search more.
    let mut p = NetPlayer::new(Box::new(UniformEvaluator), settings(1), "u").unwrap();
    p.new_game(0).unwrap();
    let g = Game::new(Position::startpos());
    let view = GameView {
        game: &g,
        banned: &[],
    };
    assert_eq!(
        p.think(&view, &Limits::default()).unwrap().info.nodes,
        Some(1)
    );
    p.new_game(0).unwrap();
    let limits = Limits {
        movetime: Some(Duration::from_millis(200)),
        ..Limits::default()
    };
    let r = p.think(&view, &limits).unwrap();
    assert!(r.info.nodes.unwrap() > 8, "{:?}", r.info);
    let Decision::Move(m) = r.decision else {
        panic!()
    };
    assert!(g.position().is_legal(m));
}

#[test]
fn random_command_lines_never_stop_the_mcts_engine() {
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let words = [
        "position",
        "fen",
        "startpos",
        "moves",
        "h2e2",
        "h9g7",
        "a0a9",
        "go",
        "nodes",
        "20",
        "depth",
        "banmoves",
        "setoption",
        "batch",
        "nodes",
        "hashsize",
        "threads",
        "networkfile",
        "0",
        "-1",
        "99999999999",
        "x",
        "isready",
        "stop",
        "ponder",
        "ponderhit",
        "infinite",
        "9/9",
        "w",
        "quit_not",
    ];
    let (mut e, buf) = engine_with(Box::new(UniformEvaluator), settings(30));
    e.handle_line("ucci");
    for _ in 0..400 {
        let n = rng.random_range(1..7);
        let line: Vec<&str> = (0..n)
            .map(|_| words[rng.random_range(0..words.len())])
            .collect();
        assert!(e.handle_line(&line.join(" ")), "{line:?} ended the engine");
        if rng.random_bool(0.1) {
            e.handle_line("stop");
        }
    }
    e.handle_line("stop");
    wait_idle(&mut e);
    e.handle_line("position startpos");
    e.handle_line("go nodes 10");
    wait_idle(&mut e);
    let lines = buf.lines();
    assert!(
        lines.last().unwrap().starts_with("bestmove "),
        "{:?}",
        &lines[lines.len() - 3..]
    );
    assert!(e.handle_line("isready"));
    assert_eq!(buf.lines().last().unwrap(), "readyok");
}

#[test]
fn the_threads_option_loads_the_network_file_again_with_the_new_count() {
    use std::sync::{Arc, Mutex};
    use xq_eval::ucci::{
        engine::{Engine, Output},
        mcts_backend::{MctsBackend, NetworkLoader},
    };
    let loads: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let seen = Arc::clone(&loads);
    let loader: NetworkLoader = Box::new(move |p: &Path, t: usize| {
        seen.lock().unwrap().push((p.display().to_string(), t));
        Ok(Box::new(UniformEvaluator) as Box<dyn xq_nn::Evaluator>)
    });
    let backend =
        MctsBackend::new(Box::new(UniformEvaluator), settings(8), Some(loader), "t").unwrap();
    let mut e = Engine::new(Box::new(backend), Output::new(Buffer::default()));
    // Without a network file there is nothing to load again.
    e.handle_line("setoption threads 2");
    assert!(loads.lock().unwrap().is_empty());
    e.handle_line("setoption networkfile some/net.json");
    e.handle_line("setoption threads 3");
    assert_eq!(
        *loads.lock().unwrap(),
        [
            ("some/net.json".to_owned(), 2),
            ("some/net.json".to_owned(), 3)
        ]
    );
}
