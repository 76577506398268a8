//! The UCCI engine: golden transcripts of whole sessions (`tests/data/ucci/*.txt`, in
//! the format of [`player_support::run_transcript`]), `stop` latency, robustness
//! against bad input, and legality of every `bestmove`.

mod player_support;
use player_support::{alphabeta_engine, run_transcripts, wait_idle};

use std::{
    path::Path,
    time::{Duration, Instant},
};

use rand::{Rng, SeedableRng};
use xq_core::Position;

#[test]
fn golden_transcripts() {
    let n = run_transcripts(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ucci"));
    assert!(n >= 5, "only {n} transcripts");
}

#[test]
fn stop_is_answered_within_50_ms() {
    let (mut e, buf) = alphabeta_engine();
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
    let (mut e, buf) = alphabeta_engine();
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
    let (mut e, buf) = alphabeta_engine();
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
    let (mut e, buf) = alphabeta_engine();
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
