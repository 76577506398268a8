//! The network player and the MCTS UCCI backend over a real (tiny, randomly
//! initialised) torch network, loaded through the registered libtorch backend: the
//! cases of xq-eval's `tests/net_player.rs` that need libtorch, which xq-eval never links.

mod common;
#[path = "../../eval/tests/player_support/mod.rs"]
mod player_support;

use std::{
    path::PathBuf,
    time::{Duration, Instant},
};

use player_support::*;
use xq_eval::{net::load_network, spec::PlayerSpec};
use xq_nn::{Evaluator, UniformEvaluator};
use xq_train::Trainer;

/// A run directory with one checkpoint of a randomly initialised 1 × 8 network.
fn tiny_run(tag: &str) -> PathBuf {
    xq_train::register_backend();
    let dir = std::env::temp_dir().join(format!("xq-eval-net-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cfg = common::tiny_train_config(3);
    let mut t = Trainer::new(&dir, cfg).unwrap();
    t.save_checkpoint().unwrap();
    dir
}

#[test]
fn net_player_plays_legal_unbanned_moves_with_a_tiny_checkpoint() {
    let run = tiny_run("legal");
    let spec: PlayerSpec = format!("net:{},visits=12", run.display()).parse().unwrap();
    let mut p = spec.build().unwrap();
    check_player_over_random_positions(p.as_mut(), 2, 24);
    std::fs::remove_dir_all(&run).unwrap();
}

#[test]
fn mcts_stop_is_answered_within_50_ms_with_a_tiny_network() {
    let run = tiny_run("stop");
    for ev in [
        Box::new(UniformEvaluator) as Box<dyn Evaluator>,
        load_network(&run, 1).unwrap(),
    ] {
        let (mut e, buf) = engine_with(ev, settings(100));
        e.handle_line("ucci");
        e.handle_line("position startpos");
        let mut worst = Duration::ZERO;
        for _ in 0..5 {
            e.handle_line("go infinite");
            std::thread::sleep(Duration::from_millis(60));
            assert!(e.is_searching(), "go infinite ended by itself");
            let t = Instant::now();
            e.handle_line("stop");
            worst = worst.max(t.elapsed());
            let last = buf.lines().last().unwrap().clone();
            assert!(last.starts_with("bestmove "), "{last}");
        }
        assert!(worst < Duration::from_millis(50), "stop took {worst:?}");
    }
    std::fs::remove_dir_all(&run).unwrap();
}

#[test]
fn mcts_options_are_checked_and_networkfile_loads_a_checkpoint() {
    let run = tiny_run("options");
    let (mut e, buf) = engine_with(Box::new(UniformEvaluator), settings(100));
    e.handle_line("ucci");
    let opts: Vec<String> = buf
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("option "))
        .collect();
    for name in ["threads", "batch", "hashsize", "nodes", "networkfile"] {
        assert!(
            opts.iter()
                .any(|o| o.starts_with(&format!("option {name} "))),
            "{name} missing from {opts:?}"
        );
    }
    e.handle_line("setoption batch 0");
    assert!(
        buf.lines().last().unwrap().contains("batch"),
        "{:?}",
        buf.lines()
    );
    e.handle_line("setoption networkfile /nonexistent/net.json");
    let last = buf.lines().last().unwrap().clone();
    assert!(
        last.starts_with("info string error") && last.contains("nonexistent"),
        "{last}"
    );
    let n = buf.lines().len();
    e.handle_line(&format!("setoption networkfile {}", run.display()));
    e.handle_line("setoption nodes 16");
    e.handle_line("setoption batch 4");
    assert_eq!(buf.lines().len(), n, "no errors: {:?}", &buf.lines()[n..]);
    e.handle_line("position startpos");
    e.handle_line("go depth 3");
    wait_idle(&mut e);
    let lines = buf.lines();
    let info = lines.iter().rfind(|l| l.starts_with("info depth")).unwrap();
    assert!(
        info.contains(" nodes 16 "),
        "the nodes option is the default: {info}"
    );
    assert!(lines.last().unwrap().starts_with("bestmove "));
    std::fs::remove_dir_all(&run).unwrap();
}
