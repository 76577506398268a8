//! The network player and the MCTS UCCI backend over a real (tiny, randomly
//! initialised) torch network, loaded through the registered libtorch backend: the
//! cases of xq-eval's `tests/net_player.rs` that need libtorch, which xq-eval never links.

mod common;

use std::{
    io::Write,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::{Game, Move, Position};
use xq_eval::{
    clock::Limits,
    net::{NetSettings, load_network},
    player::{Decision, GameView, Player},
    spec::PlayerSpec,
    ucci::{
        engine::{Engine, Output},
        mcts_backend::MctsBackend,
    },
};
use xq_nn::{Evaluator, UniformEvaluator};
use xq_train::{Progress, Trainer};

/// A run directory with one checkpoint of a randomly initialised 1 × 8 network.
fn tiny_run(tag: &str) -> PathBuf {
    xq_train::register_backend();
    let dir = std::env::temp_dir().join(format!("xq-eval-net-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cfg = common::tiny_train_config(3);
    let mut t = Trainer::new(&dir, cfg).unwrap();
    t.set_progress(Progress::Off);
    t.save_checkpoint().unwrap();
    dir
}

fn settings(visits: u32) -> NetSettings {
    NetSettings {
        visits,
        batch: 8,
        ..NetSettings::default()
    }
}

/// Random positions reached by random play from the start (some finished).
fn random_games(seed: u64, count: usize, max_plies: usize) -> Vec<Game> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let mut g = Game::new(Position::startpos());
            for _ in 0..rng.random_range(0..max_plies) {
                let legal = g.position().legal_moves();
                if legal.is_empty() {
                    break;
                }
                g.play_unchecked(legal[rng.random_range(0..legal.len())]);
            }
            g
        })
        .collect()
}

fn check_player_over_random_positions(p: &mut dyn Player, seed: u64, count: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xbad);
    let mut banned_tested = 0;
    for (i, g) in random_games(seed, count, 80).iter().enumerate() {
        let legal = g.position().legal_moves();
        if legal.is_empty() {
            continue;
        }
        // Ban about half of the moves (all of them now and then).
        let banned: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|_| rng.random_bool(0.5) || i % 13 == 0)
            .collect();
        p.new_game(i as u64).unwrap();
        let view = GameView {
            game: g,
            banned: &banned,
        };
        let reply = p.think(&view, &Limits::default()).unwrap();
        let Decision::Move(m) = reply.decision else {
            panic!("resigned in {}", g.position().fen())
        };
        assert!(g.position().is_legal(m), "{m} in {}", g.position().fen());
        if banned.len() < legal.len() {
            assert!(!banned.contains(&m), "banned {m} in {}", g.position().fen());
            banned_tested += usize::from(!banned.is_empty());
        }
        assert!(reply.info.nodes.unwrap() >= 1);
        assert_eq!(reply.info.pv.first(), Some(&m));
    }
    assert!(
        banned_tested > count / 4,
        "only {banned_tested} positions with bans"
    );
}

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

fn engine_with(ev: Box<dyn Evaluator>, s: NetSettings) -> (Engine, Buffer) {
    let buf = Buffer::default();
    let loader: xq_eval::ucci::mcts_backend::NetworkLoader =
        Box::new(|p: &Path, t: usize| load_network(p, t));
    let backend = MctsBackend::new(ev, s, Some(loader), "xqzero test").unwrap();
    (
        Engine::new(Box::new(backend), Output::new(buf.clone())),
        buf,
    )
}

fn wait_idle(e: &mut Engine) {
    let t = Instant::now();
    while e.is_searching() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "search did not finish"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
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
