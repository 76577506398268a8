//! The UCCI/UCI client against the real Fairy-Stockfish (Debian's `fairy-stockfish`,
//! installed by scripts/setup) and against fake engines written as shell scripts.

use std::time::{Duration, Instant};

use xq_core::{Game, Move, Position};
use xq_eval::{
    clock::Limits,
    player::{Decision, GameView, Player},
    ucci::client::{Dialect, EngineConfig, UcciEngine},
};

const FSF: &str = "/usr/games/fairy-stockfish";

fn fsf(dialect: Dialect) -> UcciEngine {
    assert!(
        std::path::Path::new(FSF).exists(),
        "{FSF} is missing: run scripts/setup (Debian package fairy-stockfish)"
    );
    let mut cfg = EngineConfig::new(FSF, dialect);
    if dialect == Dialect::Uci {
        cfg.options.push(("UCI_Variant".into(), "xiangqi".into()));
        cfg.one_based_ranks = true;
    }
    UcciEngine::start(cfg).expect("fairy-stockfish starts")
}

fn play_moves(engine: &mut UcciEngine, plies: usize, limits: Limits) -> Vec<Move> {
    let mut game = Game::new(Position::startpos());
    let mut moves = Vec::new();
    engine.new_game(1).unwrap();
    for _ in 0..plies {
        let view = GameView {
            game: &game,
            banned: &[],
        };
        let reply = engine.think(&view, &limits).unwrap();
        let Decision::Move(m) = reply.decision else {
            panic!("engine resigned")
        };
        game.play(m).unwrap_or_else(|e| panic!("engine played {e}"));
        moves.push(m);
    }
    moves
}

#[test]
fn handshake_and_a_short_game_in_ucci() {
    let mut e = fsf(Dialect::Ucci);
    assert!(e.name().contains("Fairy-Stockfish"), "{}", e.name());
    let moves = play_moves(
        &mut e,
        6,
        Limits {
            depth: Some(3),
            ..Limits::default()
        },
    );
    assert_eq!(moves.len(), 6);
}

#[test]
fn uci_dialect_with_one_based_ranks_plays_legal_moves() {
    let mut e = fsf(Dialect::Uci);
    let moves = play_moves(
        &mut e,
        6,
        Limits {
            nodes: Some(2000),
            ..Limits::default()
        },
    );
    assert_eq!(moves.len(), 6);
}

#[test]
fn fixed_move_time_is_enforced_with_stop() {
    let mut e = fsf(Dialect::Ucci);
    let t = Instant::now();
    let moves = play_moves(
        &mut e,
        2,
        Limits {
            movetime: Some(Duration::from_millis(200)),
            ..Limits::default()
        },
    );
    assert_eq!(moves.len(), 2);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );
}

#[test]
fn a_killed_engine_fails_the_request_and_is_restarted() {
    let mut e = fsf(Dialect::Ucci);
    let pid = e.pid().unwrap();
    std::process::Command::new("kill")
        .arg("-9")
        .arg(pid.to_string())
        .status()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let g = Game::new(Position::startpos());
    let game = GameView {
        game: &g,
        banned: &[],
    };
    // The request in flight may fail or the client may notice the exit first and
    // restart; either way the next game works on a fresh process.
    let _ = e.think(
        &game,
        &Limits {
            depth: Some(2),
            ..Limits::default()
        },
    );
    assert_eq!(
        play_moves(
            &mut e,
            2,
            Limits {
                depth: Some(2),
                ..Limits::default()
            }
        )
        .len(),
        2
    );
    assert!(e.starts >= 2);
}

#[test]
fn perft_counts_like_xqzero_and_leaves_the_engine_running() {
    let mut e = fsf(Dialect::Uci);
    let timeout = Duration::from_secs(60);
    let (nodes, time) = e.perft(&Position::startpos(), 3, timeout).unwrap();
    assert_eq!(nodes, 79_666);
    assert!(time > Duration::ZERO && time < timeout, "{time:?}");
    // Black to move, so the FEN the client sends is not the start's.
    let mut pos = Position::startpos();
    pos.play_unchecked(Move::from_iccs("h2e2").unwrap());
    let (nodes, _) = e.perft(&pos, 3, timeout).unwrap();
    assert_eq!(nodes, xq_core::perft::perft(&pos, 3));
    assert_eq!(e.starts, 1);
    assert_eq!(
        play_moves(
            &mut e,
            2,
            Limits {
                depth: Some(2),
                ..Limits::default()
            }
        )
        .len(),
        2
    );
}

fn fake_engine(script: &str) -> EngineConfig {
    let dir =
        std::env::temp_dir().join(format!("xqz-fake-{}-{}", std::process::id(), script.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("engine.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    let mut cfg = EngineConfig::new("/bin/sh", Dialect::Ucci);
    cfg.args.push(path.display().to_string());
    cfg.startup_timeout = Duration::from_secs(2);
    cfg
}

#[test]
fn a_hanging_engine_times_out() {
    // Answers the handshake, then never answers `go`.
    let cfg = fake_engine(
        r#"while read line; do case "$line" in ucci) echo ucciok;; isready) echo readyok;; quit) exit 0;; esac; done"#,
    );
    let mut e = UcciEngine::start(cfg).unwrap();
    let g = Game::new(Position::startpos());
    let game = GameView {
        game: &g,
        banned: &[],
    };
    let t = Instant::now();
    let r = e.think(
        &game,
        &Limits {
            movetime: Some(Duration::from_millis(100)),
            ..Limits::default()
        },
    );
    assert!(r.is_err());
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_silent_engine_fails_the_handshake() {
    let cfg = fake_engine("sleep 30");
    let t = Instant::now();
    assert!(UcciEngine::start(cfg).is_err());
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_missing_binary_is_a_clear_error() {
    let e = UcciEngine::start(EngineConfig::new("/nonexistent/engine", Dialect::Ucci)).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/engine"), "{e}");
}

#[test]
fn a_fake_engine_that_plays_an_illegal_move_loses_the_game() {
    use xq_eval::{
        player::RandomPlayer,
        referee::{GameSettings, Termination, play_game},
    };
    // A real process speaking UCCI whose every bestmove is the chariot jumping its own
    // soldier.
    let mut cfg = fake_engine(
        r#"while read line; do case "$line" in ucci) echo "id name liar"; echo ucciok;; isready) echo readyok;; go*) echo "bestmove a0a5";; quit) exit 0;; esac; done"#,
    );
    cfg.name = Some("liar".into());
    let mut liar = UcciEngine::start(cfg).unwrap();
    let mut random = RandomPlayer::new();
    let g = play_game(
        &mut liar,
        &mut random,
        &Position::startpos(),
        &[],
        &GameSettings::default(),
        1,
    );
    assert_eq!(g.winner, Some(xq_core::Color::Black));
    assert_eq!(g.termination, Termination::IllegalMove("a0a5".into()));
    assert!(
        g.describe().contains("illegal move a0a5"),
        "{}",
        g.describe()
    );
}

#[test]
fn perft_reads_the_count_and_fails_clearly_on_engines_without_it() {
    // Counts at depth 2, answers `go perft 3` with a search, prints a count that is not
    // a number at depth 4 and nothing at depth 5.
    let cfg = fake_engine(
        r#"while read line; do case "$line" in ucci) echo ucciok;; isready) echo readyok;; "go perft 2") echo "a0a1: 40"; echo; echo "Nodes searched: 42";; "go perft 4") echo "Nodes searched: lots";; "go perft 5") ;; go*) echo "bestmove a0a1";; quit) exit 0;; esac; done"#,
    );
    let mut e = UcciEngine::start(cfg).unwrap();
    let pos = Position::startpos();
    let timeout = Duration::from_millis(500);
    assert_eq!(e.perft(&pos, 2, timeout).unwrap().0, 42);
    let searched = e.perft(&pos, 3, timeout).unwrap_err();
    assert!(searched.to_string().contains("no `go perft`"), "{searched}");
    let unreadable = e.perft(&pos, 4, timeout).unwrap_err();
    assert!(
        unreadable.to_string().contains("Nodes searched: lots"),
        "{unreadable}"
    );
    let t = Instant::now();
    let silent = e.perft(&pos, 5, timeout).unwrap_err();
    assert!(silent.to_string().contains("did not answer"), "{silent}");
    assert!(t.elapsed() < Duration::from_secs(5));
    // Each failure killed the process; the next request runs on a fresh one.
    assert_eq!(e.perft(&pos, 2, timeout).unwrap().0, 42);
    assert_eq!(e.starts, 4);
}
