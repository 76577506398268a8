//! `xqz ucci` and `xqz export` end to end: the built-in engine over a real pipe, a
//! one-line error for a bad player, and an exported player (a tiny randomly initialised
//! network) whose launcher is started as a GUI would and plays Debian's Fairy-Stockfish
//! through the match runner without a protocol error.

use crate::{common::run_ok, trainer_fixtures};

use std::{
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc::{Receiver, channel},
    time::Duration,
};

use xq_core::Position;
use xq_eval::{
    clock::TimeControl,
    matches::{MatchConfig, run_match},
    openings,
    referee::{GameSettings, Termination},
    spec::{FAIRY_STOCKFISH, PlayerSpec},
};
use xq_train::{TrainConfig, Trainer};

/// A process speaking a line protocol, read on a thread so reads can time out.
struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Session {
    fn start(cmd: &mut Command) -> Session {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("engine starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `prefix`.
    fn until(&mut self, prefix: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            match self.lines.recv_timeout(Duration::from_secs(60)) {
                Ok(l) => {
                    let done = l.starts_with(prefix);
                    seen.push(l);
                    if done {
                        return seen;
                    }
                }
                Err(e) => panic!("no {prefix:?} ({e}); got {seen:?}"),
            }
        }
    }

    fn quit(mut self) {
        self.send("quit");
        assert_eq!(self.until("bye").last().unwrap(), "bye");
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

fn xqz() -> Command {
    Command::new(env!("CARGO_BIN_EXE_xqz"))
}

/// Handshake, a search from a position, and the move's legality.
fn play_one_move(s: &mut Session, handshake_ok: &str) {
    s.send("ucci");
    let hello = s.until("ucciok");
    assert_eq!(hello.last().unwrap(), handshake_ok);
    assert!(hello.iter().any(|l| l.starts_with("id name ")), "{hello:?}");
    s.send("isready");
    assert_eq!(s.until("readyok").last().unwrap(), "readyok");
    s.send("position startpos moves h2e2 h9g7");
    s.send("go nodes 40");
    let out = s.until("bestmove");
    let m = out.last().unwrap().split_whitespace().nth(1).unwrap();
    let mut pos = Position::startpos();
    for mv in ["h2e2", "h9g7"] {
        pos.play(pos.parse_iccs(mv).unwrap()).unwrap();
    }
    assert!(pos.parse_iccs(m).is_ok(), "illegal bestmove {m}: {out:?}");
}

#[test]
fn ucci_without_a_player_speaks_the_protocol_with_alpha_beta() {
    let mut s = Session::start(xqz().arg("ucci"));
    play_one_move(&mut s, "ucciok");
    s.send("position fen 9/9/9/9/9/9/9/9/9/9 w - - 0 1");
    s.send("isready");
    let lines = s.until("readyok");
    assert!(
        lines[0].starts_with("info string error"),
        "a broken FEN is reported: {lines:?}"
    );
    s.quit();
}

#[test]
fn ucci_with_a_bad_player_fails_with_one_line() {
    let dir = std::env::temp_dir().join(format!("xq-cli-ucci-none-{}", std::process::id()));
    let out = xqz()
        .args(["ucci", "--player"])
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("engine.toml"), "{err}");
    assert!(out.stdout.is_empty());
    let out = xqz()
        .args(["export", "--run"])
        .arg(&dir)
        .args(["--out"])
        .arg(dir.join("p"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no network to export"), "{err}");
}

/// A run directory with one checkpoint of a randomly initialised 1 × 8 network.
fn tiny_run(dir: &Path) {
    let cfg = trainer_fixtures::tiny_train_config(TrainConfig::default().seed);
    let mut t = Trainer::new(dir, cfg).unwrap();
    t.save_checkpoint().unwrap();
}

#[test]
fn exported_player_plays_fairy_stockfish_without_protocol_errors() {
    let root: PathBuf = std::env::temp_dir().join(format!("xq-cli-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let run = root.join("run");
    tiny_run(&run);
    let player = root.join("player");
    let out = run_ok(
        xqz()
            .args(["export", "--run"])
            .arg(&run)
            .arg("--out")
            .arg(&player)
            .args(["--visits", "24", "--batch", "8", "--threads", "1"]),
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("exported xqzero-run-0"));

    // The launcher as a GUI starts it: no arguments, from another directory.
    let mut s = Session::start(Command::new(player.join("xqzero-engine")).current_dir(&root));
    play_one_move(&mut s, "ucciok");
    s.quit();
    // `xqz ucci --player` is the same engine.
    let mut s = Session::start(xqz().arg("ucci").arg("--player").arg(&player));
    play_one_move(&mut s, "ucciok");
    s.quit();
    // And a checkpoint can be played directly (here: the run's newest).
    let mut s = Session::start(
        xqz()
            .args(["ucci", "--visits", "8", "--checkpoint"])
            .arg(&run),
    );
    play_one_move(&mut s, "ucciok");
    s.quit();

    if !Path::new(FAIRY_STOCKFISH).exists() {
        panic!("{FAIRY_STOCKFISH} is needed (scripts/setup installs it)");
    }
    let ours: PlayerSpec = format!("player:{}", player.display()).parse().unwrap();
    let fsf: PlayerSpec = "fsf:skill=0".parse().unwrap();
    let pgn = root.join("games.pgn");
    let config = MatchConfig {
        games: 4,
        concurrency: 2,
        settings: GameSettings {
            time_control: TimeControl::Nodes(24),
            max_plies: 160,
            ..GameSettings::default()
        },
        openings: openings::builtin().into_iter().take(2).collect(),
        sprt: None,
        seed: 1,
        pgn_out: Some(pgn.clone()),
        event: "export launcher test".into(),
    };
    let report = run_match(&|| ours.build(), &|| fsf.build(), &config, &mut |_| {}).unwrap();
    assert_eq!(report.games.len(), 4);
    for g in &report.games {
        assert!(
            !matches!(
                g.termination,
                Termination::Forfeit(_) | Termination::IllegalMove(_) | Termination::TimeForfeit
            ),
            "{}",
            g.describe()
        );
    }
    // The result, for the record (visible with --nocapture).
    println!("{}", report.status.line());
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[Variant \"xiangqi\"]").count(), 4);
    std::fs::remove_dir_all(&root).unwrap();
}
