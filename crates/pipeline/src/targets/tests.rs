use xq_core::{Game, Move, Position};
use xq_mcts::RootAlgorithm;
use xq_nn::UniformEvaluator;

use super::{
    oracle::{MoveScore, OracleLine, side_name},
    *,
};

/// An oracle line for the game `moves` from the start position: the first legal move
/// is the best (+300 cp), the second is mated, the rest are level.
fn line(set: PositionSet, moves: &[&str]) -> OracleLine {
    let mut game = Game::new(Position::startpos());
    for m in moves {
        game.play(Move::from_iccs(m).unwrap()).unwrap();
    }
    let pos = game.position();
    let legal: Vec<Move> = pos.legal_moves().iter().copied().collect();
    let scores = legal
        .iter()
        .enumerate()
        .map(|(k, m)| MoveScore {
            mv: m.to_string(),
            cp: (k != 1).then_some(if k == 0 { 300 } else { 0 }),
            mate: (k == 1).then_some(-2),
        })
        .collect();
    OracleLine {
        set,
        source: format!("test ply {}", moves.len()),
        start: Position::startpos().fen(),
        moves: moves.iter().map(|s| s.to_string()).collect(),
        fen: pos.fen(),
        side: side_name(pos.turn()).into(),
        played: Some(legal[2].to_string()),
        best: legal[0].to_string(),
        scores,
        depth: 10,
        engine: "test".into(),
    }
}

fn text(lines: &[OracleLine]) -> String {
    lines
        .iter()
        .map(|l| serde_json::to_string(l).unwrap() + "\n")
        .collect()
}

#[test]
fn an_oracle_file_reads_back_with_each_moves_win_probability() {
    let lines = [
        line(PositionSet::Master, &[]),
        line(PositionSet::Selfplay, &["h2e2", "h9g7"]),
    ];
    let entries = read_oracle(&text(&lines)).unwrap();
    assert_eq!(entries.len(), 2);
    let e = &entries[1];
    assert_eq!(e.line, lines[1]);
    assert_eq!(e.game.ply(), 2);
    assert_eq!(e.best, 0);
    assert_eq!(e.played, Some(2));
    assert!((e.win[0] - measures::win_probability_cp(300)).abs() < 1e-12);
    assert_eq!(e.win[1], 0.0);
    assert_eq!(e.win[2], 0.5);
    assert_eq!(e.value(), e.win[0]);
}

#[test]
fn a_corrupt_oracle_line_is_an_error_naming_its_line() {
    let good = text(&[line(PositionSet::Master, &[])]);
    let cases: Vec<(String, &str)> = vec![
        (format!("{good}\n{{\"set\": \"master\""), "line 3"),
        (
            format!("{good}{}", good.replace("\"depth\"", "\"dpth\"")),
            "line 2",
        ),
        (
            format!("{good}{}", good.replace("\"h2e2\"", "\"h2e9\"")),
            "line 2",
        ),
    ];
    for (input, at) in cases {
        let err = read_oracle(&input).unwrap_err().to_string();
        assert!(err.contains(at), "{err}");
    }
    // A legal move without a score, a score of another move, moves that do not reach
    // the FEN, a move with both cp and mate.
    let mut missing = line(PositionSet::Master, &[]);
    let dropped = missing.scores.pop().unwrap();
    let err = read_oracle(&text(&[missing])).unwrap_err().to_string();
    assert!(
        err.contains("line 1") && err.contains(&format!("{} has no score", dropped.mv)),
        "{err}"
    );
    let mut wrong = line(PositionSet::Master, &["h2e2"]);
    wrong.scores[3].mv = "h2e2".into();
    let err = read_oracle(&text(&[wrong])).unwrap_err().to_string();
    assert!(err.contains("not legal"), "{err}");
    let mut far = line(PositionSet::Master, &["h2e2"]);
    far.fen = Position::startpos().fen();
    let err = read_oracle(&text(&[far])).unwrap_err().to_string();
    assert!(err.contains("the moves reach"), "{err}");
    let mut both = line(PositionSet::Master, &[]);
    both.scores[0].mate = Some(3);
    let err = read_oracle(&text(&[both])).unwrap_err().to_string();
    assert!(err.contains("exactly one of cp and mate"), "{err}");
    assert!(read_oracle("\n\n").unwrap().is_empty());
}

fn small_config() -> SelfplayConfig {
    let mut c = SelfplayConfig::default();
    c.search.playout_cap.full_visits = 12;
    c.search.playout_cap.cheap_visits = 4;
    c.search.playout_cap.full_probability = 0.25;
    c
}

#[test]
fn the_benchmark_measures_every_source_on_a_tiny_oracle_with_the_uniform_evaluator() {
    let lines = [
        line(PositionSet::Master, &[]),
        line(PositionSet::Master, &["h2e2"]),
        line(PositionSet::Selfplay, &["h2e2", "h9g7"]),
        line(PositionSet::Selfplay, &["b2e2", "b9c7", "b0c2"]),
    ];
    let entries = read_oracle(&text(&lines)).unwrap();
    let arms = shipped_arms(&[small_config()], 0.5).unwrap();
    let names: Vec<&str> = arms.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        ["gumbel-12-q0", "gumbel-12-q50", "puct-12-q0", "puct-12-q50"]
    );
    let factory = || -> Result<Box<dyn Evaluator>> { Ok(Box::new(UniformEvaluator)) };
    let report = run(&entries, &arms, &[1, 2], 2, &factory, "uniform", &|_| {}).unwrap();
    let sets: Vec<(&str, usize)> = report
        .sets
        .iter()
        .map(|s| (s.set.as_str(), s.positions))
        .collect();
    assert_eq!(sets, [("master", 2), ("selfplay", 2), ("all", 4)]);
    let n: Vec<f64> = entries.iter().map(|e| e.legal.len() as f64).collect();
    let master = &report.sets[0];
    let prior = &master.policy[0];
    assert_eq!(prior.source, "prior");
    // The uniform prior: 1/n of a top-1 tie, entropy ln n, no distance to itself.
    let mean = |f: &dyn Fn(f64) -> f64| (f(n[0]) + f(n[1])) / 2.0;
    assert!((prior.mean.top1 - mean(&|n| 1.0 / n)).abs() < 1e-9);
    assert!((prior.mean.entropy - mean(&|n| n.ln())).abs() < 1e-6);
    assert!((prior.mean.cross_entropy - mean(&|n| n.ln())).abs() < 1e-6);
    assert!(prior.mean.kl_prior.abs() < 1e-6);
    // The master move is the third legal move: never the oracle's, always level.
    let played = &master.policy[1];
    assert_eq!(played.source, "master-move");
    assert_eq!(played.mean.top1, 0.0);
    assert!((played.mean.expected_score - 0.5).abs() < 1e-12);
    assert!(
        report.sets[1]
            .policy
            .iter()
            .all(|p| p.source != "master-move")
    );
    // Every search arm, with its two seeds and their difference.
    for set in &report.sets {
        assert_eq!(
            set.policy.len(),
            arms.len() + 1 + usize::from(set.set != "selfplay")
        );
        for p in set
            .policy
            .iter()
            .filter(|p| p.source.contains('-') && p.source != "master-move")
        {
            assert_eq!(p.seeds.len(), 2);
            let d = p.seed_difference.unwrap();
            assert!((d.top1 - (p.seeds[0].top1 - p.seeds[1].top1).abs()).abs() < 1e-12);
            assert!(p.paired_se_vs_prior.is_some());
            assert!(p.mean.entropy >= 0.0, "{}", table(&report));
        }
        // A constant value has no correlation.
        assert_eq!(set.value[0].source, "network");
        assert_eq!(set.value[0].correlation, None);
        assert_eq!(set.value.len(), arms.len() + 1);
    }
    // Leaf quiescence sees what the uniform evaluator cannot: the q50 arms' targets move
    // away from the uniform prior.
    let all = &report.sets[2];
    let kl = |name: &str| {
        all.policy
            .iter()
            .find(|p| p.source == name)
            .unwrap()
            .mean
            .kl_prior
    };
    assert!(kl("gumbel-12-q50") > 0.0 && kl("puct-12-q0") > 0.0);
    // The same seeds give the same report, on any number of threads.
    let again = run(&entries, &arms, &[1, 2], 1, &factory, "uniform", &|_| {}).unwrap();
    assert_eq!(
        serde_json::to_value(&again.sets).unwrap(),
        serde_json::to_value(&report.sets).unwrap()
    );
    let text = table(&report);
    assert!(
        text.contains("gumbel-12-q50") && text.contains("master-move") && text.contains("beats it"),
        "{text}"
    );
}

#[test]
fn the_target_is_the_one_self_play_records() {
    // selfplay_target's answer equals the record a self-play game writes for the same
    // game id and seed when its first move gets a full search.
    let entries = read_oracle(&text(&[line(PositionSet::Master, &[])])).unwrap();
    for alg in [RootAlgorithm::Gumbel, RootAlgorithm::Puct] {
        let arm = Arm::new(&small_config(), alg, 0.0);
        let mut ev = xq_nn::RandomEvaluator::new(5);
        let (target, value) = selfplay_target(&arm.selfplay, &entries[0], 3, 9, &mut ev).unwrap();
        let mut state = GameState::new(&arm.selfplay, 3, 9, "x".into()).unwrap();
        state.start_search().unwrap();
        let mut ev = xq_nn::RandomEvaluator::new(5);
        while !state.search.is_finished() {
            let n = state
                .search
                .select_leaves(arm.selfplay.leaves_per_game)
                .len();
            if n > 0 {
                let inputs: Vec<_> = state.search.pending().iter().map(|r| r.input()).collect();
                let evals = ev.evaluate(&inputs).unwrap();
                state.search.apply(&evals).unwrap();
            }
        }
        let result = state.search.result();
        let want: Vec<f64> = entries[0]
            .legal
            .iter()
            .map(|m| {
                let k = result.moves.iter().position(|x| x == m).unwrap();
                f64::from(result.policy_target[k])
            })
            .collect();
        assert_eq!(target, want, "{alg:?}");
        assert!((value - (f64::from(result.wdl[0]) + 0.5 * f64::from(result.wdl[1]))).abs() < 1e-9);
        // Another seed gives another target (the seed reaches the search).
        let mut ev = xq_nn::RandomEvaluator::new(5);
        let (other, _) = selfplay_target(&arm.selfplay, &entries[0], 3, 10, &mut ev).unwrap();
        assert_ne!(other, target, "{alg:?}");
    }
}

#[test]
fn a_target_on_the_networks_prior_is_measured_only_where_it_applies() {
    let mut config = small_config();
    config.search.algorithm = RootAlgorithm::Gumbel;
    config.search.leaf_quiescence = 0.5;
    config.search.gumbel.target_prior = xq_mcts::TargetPrior::Network;
    config.search.validate().unwrap();
    let arms = shipped_arms(&[config], 0.5).unwrap();
    let names: Vec<&str> = arms.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "gumbel-12-q0",
            "gumbel-12-q50-net",
            "puct-12-q0",
            "puct-12-q50"
        ]
    );
    for arm in &arms {
        arm.selfplay.search.validate().unwrap();
    }
}
