//! Differential test of move generation against Fairy-Stockfish.
//!
//! Positions come from seeded random games (uniformly random legal moves, from the
//! starting position and from positions of the master games in
//! `tests/data/hu_ronghua_1391_iccs.pgn`). For each position two independent
//! implementations must agree with xq-core on the set of legal moves, whether the side
//! to move is in check, and whether it has no legal move at all (mate or stalemate,
//! both a loss in Xiangqi):
//!
//! - the Debian Fairy-Stockfish binary (`/usr/games/fairy-stockfish`, or
//!   `XQZ_FAIRY_STOCKFISH`), driven over UCI: `go perft 1` lists the legal moves and
//!   `d` prints the checkers. It checks all [`POSITIONS`] positions.
//! - pyffish, a newer Fairy-Stockfish built as a Python library, through
//!   `scripts/oracle/pyffish_server.py` run by `.venv/bin/python` (or `XQZ_PYTHON`).
//!   pyffish rebuilds its engine threads on every call (about 1.6 ms a call on the
//!   project machine), so it checks every [`PYFFISH_EVERY`]th position only, and
//!   additionally that a position without legal moves is a loss for the side to move.
//!
//! Only FENs are sent, never move histories, so Fairy-Stockfish's repetition rules
//! (which act in its game-end evaluation, not in its move generator: pyffish still lists
//! a perpetual-checking move after the cycle has repeated) cannot make the answers
//! differ.
//!
//! Both oracles print ranks 1-10 (`h3e3`); they are converted to ICCS ranks 0-9. A
//! missing oracle fails the test with a message pointing at `scripts/setup`; it never
//! skips.

use std::{
    collections::BTreeSet,
    io::{BufRead, BufReader, Write},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
};

use rand::{Rng, SeedableRng, seq::IndexedRandom};
use rand_chacha::ChaCha8Rng;
use xq_core::{Move, Position, Square};

/// Positions checked against the Fairy-Stockfish binary.
const POSITIONS: usize = 100_000;
/// Every this many positions, one is also checked against pyffish.
const PYFFISH_EVERY: usize = 50;
/// Random games stop here if no side has run out of moves.
const MAX_PLIES: usize = 300;
const SEED: u64 = 0x00D1_FFE2_E471_A100;
/// Mismatches reported before the test gives up.
const MAX_REPORTED: usize = 10;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The moves of the master games, ICCS, one list per game.
fn master_games() -> Vec<Vec<Move>> {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/hu_ronghua_1391_iccs.pgn"
    ));
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut games = Vec::new();
    let mut moves = Vec::new();
    for line in text.lines() {
        if line.starts_with('[') {
            if !moves.is_empty() {
                games.push(std::mem::take(&mut moves));
            }
            continue;
        }
        moves.extend(
            line.split_whitespace()
                .filter_map(|t| Move::from_iccs(t).ok()),
        );
    }
    if !moves.is_empty() {
        games.push(moves);
    }
    assert!(
        games.len() > 1000,
        "only {} master games parsed",
        games.len()
    );
    games
}

/// `count` positions from seeded random games. Half the games start from the starting
/// position (which itself is not repeated), half from a random point of a master game.
fn random_positions(count: usize, seed: u64) -> Vec<Position> {
    let games = master_games();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut pos = Position::startpos();
        if rng.random_bool(0.5) {
            let game = games.choose(&mut rng).expect("games");
            for &m in &game[..rng.random_range(0..=game.len())] {
                pos.play(m)
                    .unwrap_or_else(|e| panic!("master game move: {e}"));
            }
            out.push(pos.clone());
        }
        for _ in 0..MAX_PLIES {
            let moves = pos.legal_moves();
            let Some(&m) = moves.choose(&mut rng) else {
                break;
            };
            pos.play_unchecked(m);
            out.push(pos.clone());
        }
    }
    out.truncate(count);
    out
}

/// What an oracle says about one position.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    in_check: bool,
    moves: BTreeSet<Move>,
}

impl Answer {
    fn ours(pos: &Position) -> Answer {
        Answer {
            in_check: pos.is_check(),
            moves: pos.legal_moves().into_iter().collect(),
        }
    }
}

/// `b3b10` (files a-i, ranks 1-10) as a move.
fn parse_fsf_move(s: &str) -> Option<Move> {
    let b = s.as_bytes();
    let split = 1 + b[1..].iter().position(|c| c.is_ascii_lowercase())?;
    let square = |t: &str| -> Option<Square> {
        let (file, rank) = t.split_at(1);
        let rank: u32 = rank.parse().ok()?;
        format!("{file}{}", rank.checked_sub(1)?).parse().ok()
    };
    Some(Move::new(square(&s[..split])?, square(&s[split..])?))
}

/// Compares one position; `Err` describes the difference.
fn compare(pos: &Position, theirs: &Answer, oracle: &str) -> Result<(), String> {
    let ours = Answer::ours(pos);
    let mut problems = Vec::new();
    if ours.in_check != theirs.in_check {
        problems.push(format!(
            "in check: xq-core {} vs {oracle} {}",
            ours.in_check, theirs.in_check
        ));
    }
    let missing: Vec<String> = theirs
        .moves
        .difference(&ours.moves)
        .map(ToString::to_string)
        .collect();
    let extra: Vec<String> = ours
        .moves
        .difference(&theirs.moves)
        .map(ToString::to_string)
        .collect();
    if !missing.is_empty() {
        problems.push(format!("xq-core misses {missing:?}"));
    }
    if !extra.is_empty() {
        problems.push(format!("xq-core also generates {extra:?}"));
    }
    // The other entry points must agree with the move list.
    if pos.count_legal() != theirs.moves.len() {
        problems.push(format!(
            "count_legal {} vs {oracle} {}",
            pos.count_legal(),
            theirs.moves.len()
        ));
    }
    if pos.has_legal_move() == theirs.moves.is_empty()
        || pos.is_game_over() != theirs.moves.is_empty()
    {
        problems.push(format!(
            "game over: xq-core {} vs {oracle} {}",
            pos.is_game_over(),
            theirs.moves.is_empty()
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{}: {}", pos.fen(), problems.join("; ")))
    }
}

/// Panics with the first mismatches, if any, and returns how many positions were in
/// check and how many had no legal move.
fn check_all<'a>(
    oracle: &str,
    pairs: impl Iterator<Item = (&'a Position, Answer)>,
) -> (usize, usize, usize) {
    let (mut n, mut checks, mut ends) = (0, 0, 0);
    let mut failures = Vec::new();
    for (pos, theirs) in pairs {
        n += 1;
        checks += usize::from(theirs.in_check);
        ends += usize::from(theirs.moves.is_empty());
        if let Err(e) = compare(pos, &theirs, oracle) {
            failures.push(e);
            if failures.len() >= MAX_REPORTED {
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches with {oracle} (first {MAX_REPORTED} shown):\n{}",
        failures.len(),
        failures.join("\n")
    );
    (n, checks, ends)
}

// --- The Fairy-Stockfish binary --------------------------------------------------------

struct FairyStockfish {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl FairyStockfish {
    fn start() -> FairyStockfish {
        let binary = std::env::var("XQZ_FAIRY_STOCKFISH")
            .unwrap_or_else(|_| "/usr/games/fairy-stockfish".to_string());
        let mut child = Command::new(&binary)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start Fairy-Stockfish {binary:?} ({e}); run scripts/setup to install it"
                )
            });
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut fsf = FairyStockfish {
            child,
            stdin,
            stdout,
        };
        fsf.send("uci\nsetoption name UCI_Variant value xiangqi\nisready\n");
        fsf.read_until("readyok");
        fsf
    }

    fn send(&mut self, text: &str) {
        self.stdin
            .write_all(text.as_bytes())
            .and_then(|()| self.stdin.flush())
            .expect("writing to Fairy-Stockfish");
    }

    /// Lines up to and including the first that starts with `stop`.
    fn read_until(&mut self, stop: &str) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let n = self
                .stdout
                .read_line(&mut line)
                .expect("reading from Fairy-Stockfish");
            assert!(n > 0, "Fairy-Stockfish exited; last lines: {lines:?}");
            let line = line.trim_end().to_string();
            let done = line.starts_with(stop);
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    /// One synchronous exchange: `d` answers at once, and its output comes before that
    /// of `go perft 1`, which runs on the engine's search thread; the next request is
    /// only sent after "Nodes searched", so outputs never interleave.
    fn ask(&mut self, pos: &Position) -> Answer {
        self.send(&format!("position fen {}\nd\ngo perft 1\n", pos.fen()));
        let lines = self.read_until("Nodes searched");
        let mut in_check = None;
        let mut moves = BTreeSet::new();
        for line in &lines {
            if let Some(rest) = line.strip_prefix("Checkers:") {
                in_check = Some(!rest.trim().is_empty());
            } else if line.starts_with("Nodes searched") {
            } else if let Some((m, "1")) = line.split_once(": ") {
                let m = parse_fsf_move(m).unwrap_or_else(|| panic!("bad move line {line:?}"));
                assert!(moves.insert(m), "{}: {m} listed twice", pos.fen());
            }
        }
        let nodes: usize = lines
            .last()
            .and_then(|l| l.split(':').nth(1))
            .and_then(|n| n.trim().parse().ok())
            .expect("node count");
        assert_eq!(
            nodes,
            moves.len(),
            "{}: unparsed move lines in {lines:?}",
            pos.fen()
        );
        Answer {
            in_check: in_check.unwrap_or_else(|| panic!("no Checkers line for {}", pos.fen())),
            moves,
        }
    }
}

impl Drop for FairyStockfish {
    fn drop(&mut self) {
        let _ = self.stdin.write_all(b"quit\n");
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}

#[test]
fn move_generation_agrees_with_fairy_stockfish_on_random_game_positions() {
    let positions = random_positions(POSITIONS, SEED);
    let mut fsf = FairyStockfish::start();
    let answers = positions.iter().map(|p| (p, fsf.ask(p)));
    let (n, checks, ends) = check_all("Fairy-Stockfish", answers);
    assert_eq!(n, POSITIONS);
    // The random games must keep reaching the interesting cases.
    assert!(checks >= 1_000, "only {checks} positions in check");
    assert!(ends >= 50, "only {ends} positions without a legal move");
    println!(
        "{n} positions agree with Fairy-Stockfish ({checks} in check, {ends} without a legal move)"
    );
}

#[test]
fn comparison_reports_a_missing_move_and_a_wrong_check_flag() {
    let pos = Position::startpos();
    let mut fsf = FairyStockfish::start();
    let mut theirs = fsf.ask(&pos);
    assert_eq!(theirs.moves.len(), 44);
    assert!(compare(&pos, &theirs, "oracle").is_ok());
    let m = *theirs.moves.iter().next().expect("a move");
    theirs.moves.remove(&m);
    let err = compare(&pos, &theirs, "oracle").expect_err("an extra move must be reported");
    assert!(err.contains(&m.to_string()), "{err}");
    theirs.moves.insert(m);
    theirs.in_check = true;
    assert!(compare(&pos, &theirs, "oracle").is_err());
}

// --- pyffish ------------------------------------------------------------------------

/// Runs the pyffish server on `fens` and returns its answer lines, in order.
fn pyffish_answers(fens: Vec<String>) -> Vec<String> {
    let root = repo_root();
    let python = std::env::var_os("XQZ_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".venv/bin/python"));
    let script = root.join("scripts/oracle/pyffish_server.py");
    let mut child = spawn_python(&python, &script);
    let mut stdin = child.stdin.take().expect("piped stdin");
    // A writer thread, so a full pipe on either side cannot deadlock.
    let writer = std::thread::spawn(move || {
        for fen in fens {
            stdin.write_all(fen.as_bytes())?;
            stdin.write_all(b"\n")?;
        }
        Ok::<_, std::io::Error>(())
    });
    let out = child
        .wait_with_output()
        .expect("waiting for the pyffish server");
    writer
        .join()
        .expect("writer thread")
        .expect("writing to the pyffish server");
    assert!(
        out.status.success(),
        "the pyffish oracle failed ({}): {}; run scripts/setup to install pyffish into .venv",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_string)
        .collect()
}

fn spawn_python(python: &Path, script: &Path) -> Child {
    Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run the pyffish oracle with {} ({e}); run scripts/setup to create .venv with pyffish, or set XQZ_PYTHON",
                python.display()
            )
        })
}

#[test]
fn move_generation_agrees_with_pyffish_on_random_game_positions() {
    // A different seed from the Fairy-Stockfish test, so the two see different games.
    let positions: Vec<Position> = random_positions(POSITIONS, SEED ^ 1)
        .into_iter()
        .step_by(PYFFISH_EVERY)
        .collect();
    let lines = pyffish_answers(positions.iter().map(Position::fen).collect());
    assert_eq!(
        lines.len(),
        positions.len(),
        "pyffish answered {} of {} positions",
        lines.len(),
        positions.len()
    );
    let mut answers = Vec::with_capacity(lines.len());
    for (pos, line) in positions.iter().zip(&lines) {
        let mut words = line.split(' ');
        assert_eq!(words.next(), Some("ok"), "pyffish on {}: {line}", pos.fen());
        let in_check = words.next() == Some("1");
        let result = words.next().expect("result field");
        let moves: BTreeSet<Move> = words
            .map(|w| Move::from_iccs(w).unwrap_or_else(|e| panic!("pyffish move {w:?}: {e}")))
            .collect();
        if moves.is_empty() {
            // No legal move: mate and stalemate both lose for the side to move.
            let value: i32 = result
                .parse()
                .unwrap_or_else(|_| panic!("result {result:?}"));
            assert!(
                value < 0,
                "{}: pyffish scores the end {value}, not a loss",
                pos.fen()
            );
        }
        answers.push(Answer { in_check, moves });
    }
    let (n, checks, ends) = check_all("pyffish", positions.iter().zip(answers));
    assert_eq!(n, POSITIONS / PYFFISH_EVERY);
    assert!(checks >= 20, "only {checks} positions in check");
    println!("{n} positions agree with pyffish ({checks} in check, {ends} without a legal move)");
}
