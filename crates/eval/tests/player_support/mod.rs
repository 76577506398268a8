//! Helpers shared by the tests of network players and UCCI engines: xq-eval's
//! `tests/net_player.rs` and xq-pipeline's `tests/torch_player.rs` (which includes this
//! file by path), so each fixture exists once.
#![allow(dead_code)]

use std::{
    io::Write,
    path::Path,
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
    ucci::{
        engine::{Engine, Output},
        mcts_backend::MctsBackend,
    },
};
use xq_nn::Evaluator;

pub fn settings(visits: u32) -> NetSettings {
    NetSettings {
        visits,
        batch: 8,
        ..NetSettings::default()
    }
}

/// Random positions reached by random play from the start (some finished).
pub fn random_games(seed: u64, count: usize, max_plies: usize) -> Vec<Game> {
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

pub fn check_player_over_random_positions(p: &mut dyn Player, seed: u64, count: usize) {
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
pub struct Buffer(pub Arc<Mutex<Vec<u8>>>);

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
    pub fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

pub fn engine_with(ev: Box<dyn Evaluator>, s: NetSettings) -> (Engine, Buffer) {
    let buf = Buffer::default();
    let loader: xq_eval::ucci::mcts_backend::NetworkLoader =
        Box::new(|p: &Path, t: usize| load_network(p, t));
    let backend = MctsBackend::new(ev, s, Some(loader), "xqzero test").unwrap();
    (
        Engine::new(Box::new(backend), Output::new(buf.clone())),
        buf,
    )
}

pub fn wait_idle(e: &mut Engine) {
    let t = Instant::now();
    while e.is_searching() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "search did not finish"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}
