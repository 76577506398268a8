//! The UCCI engine: golden transcripts of whole sessions, `stop` latency, robustness
//! against bad input, and legality of every `bestmove`.
//!
//! Transcript files (`tests/data/ucci/*.txt`): `> line` is sent to the engine, `< line`
//! is an expected output line, `#` starts a comment. `info depth …` lines are not
//! compared (their timing fields vary); everything else must match exactly and in
//! order. `~ words` checks the last `info depth` line before the next expected line:
//! it must hold `words` (say `~ score 9999`, or `~ score mate 1`). After a `go` without
//! `infinite` or `ponder` the harness waits for the search to finish before sending
//! the next line, as a GUI would. A transcript talks to the alpha-beta engine, or,
//! with a line `@ engine mcts`, to the network engine over the uniform evaluator (100
//! visits unless `go` says otherwise, batch 8).

mod player_support;
use player_support::{Buffer, engine_with, settings};

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use xq_core::Position;
use xq_eval::ucci::{
    baseline::AlphaBetaBackend,
    engine::{Engine, Output},
};
use xq_nn::UniformEvaluator;

fn engine() -> (Engine, Buffer) {
    let buf = Buffer::default();
    (
        Engine::new(Box::new(AlphaBetaBackend::new()), Output::new(buf.clone())),
        buf,
    )
}

fn wait_idle(e: &mut Engine) {
    let t = Instant::now();
    while e.is_searching() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "search did not finish"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// An output line to compare, with the `info depth` line last printed before it.
#[derive(Debug, PartialEq)]
struct Said {
    line: String,
    info: Option<String>,
}

fn run_transcript(name: &str, text: &str) {
    let (mut e, buf) = if text.lines().any(|l| l == "@ engine mcts") {
        engine_with(Box::new(UniformEvaluator), settings(100))
    } else {
        engine()
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

#[test]
fn golden_transcripts() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ucci");
    let mut n = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let text = std::fs::read_to_string(&path).unwrap();
        run_transcript(&path.display().to_string(), &text);
        n += 1;
    }
    assert!(n >= 5, "only {n} transcripts");
}

#[test]
fn stop_is_answered_within_50_ms() {
    let (mut e, buf) = engine();
    e.handle_line("ucci");
    e.handle_line("position startpos");
    let mut worst = Duration::ZERO;
    for _ in 0..5 {
        e.handle_line("go infinite");
        std::thread::sleep(Duration::from_millis(100));
        let t = Instant::now();
        e.handle_line("stop");
        worst = worst.max(t.elapsed());
        assert!(buf.lines().last().unwrap().starts_with("bestmove "));
    }
    assert!(worst < Duration::from_millis(50), "stop took {worst:?}");
}

#[test]
fn isready_is_answered_while_searching() {
    let (mut e, buf) = engine();
    e.handle_line("ucci");
    e.handle_line("go infinite");
    std::thread::sleep(Duration::from_millis(20));
    e.handle_line("isready");
    assert_eq!(buf.lines().last().map(String::as_str), Some("readyok"));
    assert!(e.is_searching());
    e.handle_line("stop");
}

#[test]
fn bestmove_is_legal_in_random_positions() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let (mut e, buf) = engine();
    e.handle_line("ucci");
    for _ in 0..60 {
        let mut pos = Position::startpos();
        let mut moves = Vec::new();
        for _ in 0..rng.random_range(0..60) {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[rng.random_range(0..legal.len())];
            pos.play_unchecked(m);
            moves.push(m.to_string());
        }
        e.handle_line(&format!("position startpos moves {}", moves.join(" ")));
        e.handle_line("go depth 2");
        wait_idle(&mut e);
        let last = buf.lines().last().unwrap().clone();
        if pos.has_legal_move() {
            let m = last.split_whitespace().nth(1).unwrap();
            assert!(pos.parse_iccs(m).is_ok(), "{last} in {}", pos.fen());
        } else {
            assert_eq!(last, "nobestmove");
        }
    }
}

#[test]
fn random_command_lines_never_stop_the_engine() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    let words = [
        "position",
        "fen",
        "startpos",
        "moves",
        "h2e2",
        "h9g7",
        "a0a9",
        "go",
        "depth",
        "1",
        "nodes",
        "50",
        "banmoves",
        "setoption",
        "hashsize",
        "x",
        "isready",
        "probe",
        "time",
        "-3",
        "ponderhit",
        "draw",
        "9/9",
        "w",
        "usemillisec",
        "true",
    ];
    let (mut e, buf) = engine();
    e.handle_line("ucci");
    for _ in 0..2000 {
        let n = rng.random_range(0..7);
        let line: Vec<&str> = (0..n)
            .map(|_| words[rng.random_range(0..words.len())])
            .collect();
        let line = line.join(" ");
        if line.contains("go") {
            // Keep searches short.
            e.handle_line("position startpos");
            e.handle_line("go depth 1");
        } else {
            assert!(e.handle_line(&line));
        }
        wait_idle(&mut e);
    }
    e.handle_line("isready");
    assert_eq!(buf.lines().last().map(String::as_str), Some("readyok"));
}
