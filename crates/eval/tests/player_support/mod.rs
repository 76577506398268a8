//! Helpers shared by the tests of network players and UCCI engines: xq-eval's
//! `tests/net_player.rs` and `tests/ucci_engine.rs`, and xq-pipeline's
//! `tests/torch_player.rs` (which includes this file by path), so each fixture (and
//! the one runner of UCCI transcripts) exists once.
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
        baseline::AlphaBetaBackend,
        engine::{Engine, Output},
        mcts_backend::MctsBackend,
    },
};
use xq_nn::{Evaluator, UniformEvaluator};

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

/// The UCCI engine over the built-in alpha-beta search.
pub fn alphabeta_engine() -> (Engine, Buffer) {
    let buf = Buffer::default();
    (
        Engine::new(Box::new(AlphaBetaBackend::new()), Output::new(buf.clone())),
        buf,
    )
}

/// An output line to compare, with the `info depth` line last printed before it.
#[derive(Debug, PartialEq)]
struct Said {
    line: String,
    info: Option<String>,
}

/// Runs one transcript of a whole session with an engine, named `name` in failures.
///
/// `> line` is sent to the engine, `< line` is an expected output line (`<` alone an
/// empty one), `#` starts a comment. `info depth …` lines are not compared (their
/// timing fields vary); everything else must match exactly and in order. `~ words`
/// checks the last `info depth` line before the next expected line: it must hold
/// `words` (say `~ score 9999`, or `~ score mate 1`). After a `go` without `infinite`
/// or `ponder` the harness waits for the search to finish before sending the next
/// line, as a GUI would. A transcript talks to the alpha-beta engine, or, with a line
/// `@ engine mcts`, to the network engine over the uniform evaluator (100 visits
/// unless `go` says otherwise, batch 8).
pub fn run_transcript(name: &str, text: &str) {
    let (mut e, buf) = if text.lines().any(|l| l == "@ engine mcts") {
        engine_with(Box::new(UniformEvaluator), settings(100))
    } else {
        alphabeta_engine()
    };
    let mut expected = Vec::new();
    let mut info_checks: Vec<(usize, String)> = Vec::new();
    let mut quit = false;
    for line in text.lines() {
        if let Some(cmd) = line.strip_prefix("> ") {
            assert!(!quit, "{name}: input after quit");
            let blocking_go =
                cmd.starts_with("go") && !cmd.contains("infinite") && !cmd.contains("ponder");
            if !e.handle_line(cmd) {
                quit = true;
                continue;
            }
            if blocking_go || cmd.starts_with("stop") || cmd.starts_with("ponderhit") {
                wait_idle(&mut e);
            }
        } else if let Some(out) = line.strip_prefix("< ") {
            expected.push(out.to_owned());
        } else if line == "<" {
            expected.push(String::new());
        } else if let Some(words) = line.strip_prefix("~ ") {
            info_checks.push((expected.len(), words.to_owned()));
        }
    }
    wait_idle(&mut e);
    let mut said = Vec::new();
    let mut last_info = None;
    for l in buf.lines() {
        if l.starts_with("info depth") {
            last_info = Some(l);
        } else {
            said.push(Said {
                line: l,
                info: last_info.take(),
            });
        }
    }
    let got: Vec<&str> = said.iter().map(|s| s.line.as_str()).collect();
    assert_eq!(got, expected, "transcript {name}");
    for (i, words) in info_checks {
        let info = said
            .get(i)
            .and_then(|s| s.info.as_deref())
            .unwrap_or_else(|| panic!("{name}: no info line before {:?}", expected.get(i)));
        assert!(
            format!("{info} ").contains(&format!(" {words} ")),
            "{name}: {info:?} does not say {words:?} (before {:?})",
            expected[i]
        );
    }
}

/// Runs every transcript (`*.txt`) in `dir`, in file name order; returns how many.
pub fn run_transcripts(dir: &Path) -> usize {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in &entries {
        let text = std::fs::read_to_string(path).unwrap();
        run_transcript(&path.display().to_string(), &text);
    }
    entries.len()
}
