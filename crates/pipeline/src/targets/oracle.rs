//! The oracle file: one JSON line per position, Fairy-Stockfish's score of every legal
//! move at a fixed depth, and the code that writes it (`xqz bench targets
//! --make-oracle`) and reads it back.
//!
//! A line:
//!
//! ```json
//! {"set":"master","source":"hu_ronghua_1391_iccs.pgn:1234 ply 17","start":"<FEN>",
//!  "moves":["h2e2","h9g7"],"fen":"<FEN>","side":"red","played":"b0c2",
//!  "best":"b0c2","scores":[{"move":"b0c2","cp":31},{"move":"a0a1","cp":-40}, ...],
//!  "depth":10,"engine":"Fairy-Stockfish 11.1 LB 64"}
//! ```
//!
//! `start` and `moves` are the game up to the position (so repetitions are judged as in
//! the game), `fen` the position itself; moves are ICCS (ranks 0-9). `scores` has one
//! entry per legal move, from the side to move's view, in centipawns (`cp`) or moves to
//! mate (`mate`, positive when the side to move mates). `best` is the engine's first
//! principal variation's move. The oracle measures; it never labels training data.

use std::{
    collections::HashSet,
    io::{BufRead, BufReader, Write},
    path::Path,
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use anyhow::{Context, Result, bail, ensure};
use serde::{Deserialize, Serialize};
use xq_core::{Color, Game, Move, Position, hash::splitmix64};

use super::measures::win_probability_cp;

/// Which of the benchmark's position sets a position belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PositionSet {
    /// The master games' held-out split (the one pre-training holds out).
    Master,
    /// Self-play games of a network of the README job's size.
    Selfplay,
}

impl PositionSet {
    pub fn name(self) -> &'static str {
        match self {
            PositionSet::Master => "master",
            PositionSet::Selfplay => "selfplay",
        }
    }
}

/// One move's score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveScore {
    #[serde(rename = "move")]
    pub mv: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cp: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mate: Option<i32>,
}

impl MoveScore {
    /// The win probability of this score for the side to move
    /// ([`super::measures::LOGISTIC`]).
    pub fn win_probability(&self) -> f64 {
        match (self.cp, self.mate) {
            (_, Some(m)) => {
                if m > 0 {
                    1.0
                } else {
                    0.0
                }
            }
            (Some(cp), None) => win_probability_cp(cp),
            (None, None) => 0.5,
        }
    }
}

/// One line of the oracle file, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleLine {
    pub set: PositionSet,
    /// Where the position comes from: file, game line and ply.
    pub source: String,
    pub start: String,
    pub moves: Vec<String>,
    pub fen: String,
    pub side: String,
    /// The move played in the game from this position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub played: Option<String>,
    pub best: String,
    pub scores: Vec<MoveScore>,
    pub depth: u32,
    pub engine: String,
}

/// A checked oracle entry: the game up to the position and, per legal move of the
/// position (in `legal` order), the oracle's win probability.
#[derive(Debug, Clone)]
pub struct OracleEntry {
    pub line: OracleLine,
    /// The game up to the position.
    pub game: Game,
    /// The position's legal moves, in move-generation order.
    pub legal: Vec<Move>,
    /// The oracle's win probability of each move of `legal` for the side to move.
    pub win: Vec<f64>,
    /// Index in `legal` of the oracle's best move.
    pub best: usize,
    /// Index in `legal` of the move played in the game.
    pub played: Option<usize>,
}

impl OracleEntry {
    /// The oracle's score of the position (its best move's) as a win probability for
    /// the side to move.
    pub fn value(&self) -> f64 {
        self.win[self.best]
    }
}

/// A line of the oracle file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("oracle file line {line}: {message}")]
pub struct OracleError {
    /// 1-based.
    pub line: usize,
    pub message: String,
}

/// Reads an oracle file's text: every non-empty line must be a whole, consistent entry.
///
/// # Errors
/// The first bad line, by number: bad JSON, an unreadable FEN or move, moves that do
/// not reach `fen`, a finished game, scores that miss a legal move or name another.
pub fn read_oracle(text: &str) -> Result<Vec<OracleEntry>, OracleError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let err = |message: String| OracleError {
            line: i + 1,
            message,
        };
        let line: OracleLine =
            serde_json::from_str(raw).map_err(|e| err(format!("not an oracle entry: {e}")))?;
        out.push(check_line(line).map_err(err)?);
    }
    Ok(out)
}

/// Reads an oracle file from disk ([`read_oracle`]).
///
/// # Errors
/// An unreadable file or a bad line.
pub fn load_oracle(path: &Path) -> Result<Vec<OracleEntry>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    read_oracle(&text).with_context(|| format!("in {}", path.display()))
}

fn parse_move(s: &str) -> Result<Move, String> {
    Move::from_iccs(s).map_err(|_| format!("{s:?} is not an ICCS move"))
}

fn check_line(line: OracleLine) -> Result<OracleEntry, String> {
    let start = Position::from_fen(&line.start).map_err(|e| format!("bad start FEN: {e}"))?;
    let mut game = Game::new(start);
    for s in &line.moves {
        let m = parse_move(s)?;
        game.play(m)
            .map_err(|_| format!("move {s} is illegal in the game's moves"))?;
    }
    let pos = game.position().clone();
    let fen = Position::from_fen(&line.fen).map_err(|e| format!("bad FEN: {e}"))?;
    if fen.hash() != pos.hash() {
        return Err(format!(
            "the moves reach {}, not the fen {}",
            pos.fen(),
            line.fen
        ));
    }
    if side_name(pos.turn()) != line.side {
        return Err(format!(
            "side {:?}, but {} is to move",
            line.side,
            side_name(pos.turn())
        ));
    }
    if !pos.has_legal_move() || game.adjudicate().is_some() {
        return Err("the game is over at this position".into());
    }
    let legal: Vec<Move> = pos.legal_moves().iter().copied().collect();
    let mut win = vec![f64::NAN; legal.len()];
    for s in &line.scores {
        let m = parse_move(&s.mv)?;
        let k = legal
            .iter()
            .position(|&l| l == m)
            .ok_or_else(|| format!("scored move {} is not legal", s.mv))?;
        if !win[k].is_nan() {
            return Err(format!("move {} is scored twice", s.mv));
        }
        if s.cp.is_some() == s.mate.is_some() {
            return Err(format!("move {} needs exactly one of cp and mate", s.mv));
        }
        win[k] = s.win_probability();
    }
    if let Some(k) = win.iter().position(|w| w.is_nan()) {
        return Err(format!("legal move {} has no score", legal[k]));
    }
    let index = |s: &str| -> Result<usize, String> {
        let m = parse_move(s)?;
        legal
            .iter()
            .position(|&l| l == m)
            .ok_or_else(|| format!("move {s} is not legal"))
    };
    let best = index(&line.best)?;
    let played = line.played.as_deref().map(index).transpose()?;
    Ok(OracleEntry {
        line,
        game,
        legal,
        win,
        best,
        played,
    })
}

pub fn side_name(c: Color) -> &'static str {
    match c {
        Color::Red => "red",
        Color::Black => "black",
    }
}

/// A position the oracle may judge: the game up to it and the move played from it.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub set: PositionSet,
    pub source: String,
    pub start: Position,
    pub moves: Vec<Move>,
    pub played: Move,
}

impl Candidate {
    /// The key that identifies a position in the oracle file (its start and moves).
    pub fn key(&self) -> String {
        key_of(
            &self.start.fen(),
            self.moves
                .iter()
                .map(|m| m.to_string())
                .collect::<Vec<_>>()
                .as_slice(),
        )
    }
}

fn key_of(start: &str, moves: &[String]) -> String {
    format!("{start}|{}", moves.join(" "))
}

/// Every position of `games` that has a legal move, is not decided by the rules and has
/// a move played from it, at most one per distinct position (the first met), labelled
/// `set` with `file`'s name and each game's line.
pub fn candidates(
    games: &[xq_data::PgnGame],
    set: PositionSet,
    file: &str,
    seen: &mut HashSet<u64>,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    for g in games {
        let mut game = Game::new(g.start.clone());
        for (ply, &m) in g.moves.iter().enumerate() {
            let pos = game.position();
            if pos.has_legal_move() && game.adjudicate().is_none() && seen.insert(pos.hash()) {
                out.push(Candidate {
                    set,
                    source: format!("{file}:{} ply {ply}", g.line),
                    start: g.start.clone(),
                    moves: g.moves[..ply].to_vec(),
                    played: m,
                });
            }
            if game.play(m).is_err() {
                break;
            }
        }
    }
    out
}

/// `candidates` in a fixed pseudo-random order drawn from `seed` (by a hash of each
/// position, so the order does not depend on the input's).
pub fn shuffled(mut candidates: Vec<Candidate>, seed: u64) -> Vec<Candidate> {
    candidates.sort_by_cached_key(|c| {
        let mut h = splitmix64(seed);
        h = splitmix64(h ^ c.start.hash());
        for m in &c.moves {
            h = splitmix64(h ^ u64::from(m.to_u16()));
        }
        h
    });
    candidates
}

/// The ICCS move `s` (ranks 0-9) as Fairy-Stockfish writes it (ranks 1-10).
fn to_engine(m: Move) -> String {
    let s = m.to_string();
    let b = s.as_bytes();
    format!(
        "{}{}{}{}",
        b[0] as char,
        (b[1] - b'0') + 1,
        b[2] as char,
        (b[3] - b'0') + 1
    )
}

/// A move as Fairy-Stockfish writes it (ranks 1-10) in ICCS, if it reads as one.
fn from_engine(s: &str) -> Option<Move> {
    let b = s.as_bytes();
    let split = b.iter().skip(1).position(|c| c.is_ascii_alphabetic())? + 1;
    let square = |t: &str| -> Option<String> {
        let f = t.chars().next()?;
        let r: u8 = t[1..].parse().ok()?;
        (1..=10).contains(&r).then(|| format!("{f}{}", r - 1))
    };
    Move::from_iccs(&format!("{}{}", square(&s[..split])?, square(&s[split..])?)).ok()
}

/// A running Fairy-Stockfish, one thread, xiangqi.
#[derive(Debug)]
pub struct Fsf {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    pub name: String,
}

impl Drop for Fsf {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Fsf {
    /// Starts `path` and sets it up: UCI, xiangqi, 1 thread, `hash_mb` of hash.
    ///
    /// # Errors
    /// An engine that cannot start or does not answer.
    pub fn start(path: &Path, hash_mb: u32) -> Result<Fsf> {
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {}", path.display()))?;
        let stdin = child.stdin.take().context("no engine stdin")?;
        let stdout: ChildStdout = child.stdout.take().context("no engine stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut fsf = Fsf {
            child,
            stdin,
            lines,
            name: String::new(),
        };
        fsf.send("uci")?;
        let mut name = String::new();
        fsf.until(Duration::from_secs(20), |l| {
            if let Some(n) = l.strip_prefix("id name ") {
                name = n.trim().to_string();
            }
            l == "uciok"
        })?;
        fsf.name = name;
        fsf.send("setoption name UCI_Variant value xiangqi")?;
        fsf.send("setoption name Threads value 1")?;
        fsf.send(&format!("setoption name Hash value {hash_mb}"))?;
        fsf.sync()?;
        Ok(fsf)
    }

    fn send(&mut self, line: &str) -> Result<()> {
        writeln!(self.stdin, "{line}").context("the engine stopped")?;
        self.stdin.flush().context("the engine stopped")
    }

    fn until(&mut self, timeout: Duration, mut f: impl FnMut(&str) -> bool) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .context("the engine did not answer in time")?;
            if f(&line) {
                return Ok(());
            }
        }
    }

    fn sync(&mut self) -> Result<()> {
        self.send("isready")?;
        self.until(Duration::from_secs(60), |l| l == "readyok")
    }

    /// Scores every legal move of the candidate's position at `depth` (MultiPV over all
    /// of them, the hash cleared first so that each answer depends on its position
    /// only). `None` when the engine's answer does not cover exactly the legal moves.
    ///
    /// # Errors
    /// An engine that stops or does not finish within `timeout`.
    pub fn judge(
        &mut self,
        c: &Candidate,
        depth: u32,
        timeout: Duration,
    ) -> Result<Option<OracleLine>> {
        let mut game = Game::new(c.start.clone());
        for &m in &c.moves {
            game.play(m).context("a candidate's moves are illegal")?;
        }
        let pos = game.position().clone();
        let legal: Vec<Move> = pos.legal_moves().iter().copied().collect();
        self.send("ucinewgame")?;
        self.send(&format!("setoption name MultiPV value {}", legal.len()))?;
        self.sync()?;
        let mut cmd = format!("position fen {}", c.start.fen());
        if !c.moves.is_empty() {
            cmd.push_str(" moves");
            for &m in &c.moves {
                cmd.push(' ');
                cmd.push_str(&to_engine(m));
            }
        }
        self.send(&cmd)?;
        self.send(&format!("go depth {depth}"))?;
        // The last exact line of each MultiPV index at the target depth.
        let mut lines: Vec<Option<(Move, MoveScore)>> = vec![None; legal.len() + 1];
        let mut bad = false;
        self.until(timeout, |l| {
            if l.starts_with("bestmove") {
                return true;
            }
            let t: Vec<&str> = l.split_whitespace().collect();
            let get = |k: &str| t.iter().position(|&x| x == k).and_then(|i| t.get(i + 1));
            if t.first() != Some(&"info")
                || get("depth").and_then(|d| d.parse::<u32>().ok()) != Some(depth)
                || t.contains(&"lowerbound")
                || t.contains(&"upperbound")
            {
                return false;
            }
            let (Some(k), Some(kind), Some(v), Some(pv)) = (
                get("multipv").and_then(|k| k.parse::<usize>().ok()),
                get("score"),
                t.iter()
                    .position(|&x| x == "score")
                    .and_then(|i| t.get(i + 2))
                    .and_then(|v| v.parse::<i32>().ok()),
                get("pv"),
            ) else {
                return false;
            };
            let Some(m) = from_engine(pv) else {
                bad = true;
                return false;
            };
            let score = MoveScore {
                mv: m.to_string(),
                cp: (*kind == "cp").then_some(v),
                mate: (*kind == "mate").then_some(v),
            };
            if (1..lines.len()).contains(&k) && (score.cp.is_some() || score.mate.is_some()) {
                lines[k] = Some((m, score));
            } else {
                bad = true;
            }
            false
        })?;
        let got: Vec<(Move, MoveScore)> = lines.into_iter().skip(1).flatten().collect();
        let distinct: HashSet<Move> = got.iter().map(|(m, _)| *m).collect();
        if bad
            || got.len() != legal.len()
            || distinct.len() != legal.len()
            || !legal.iter().all(|m| distinct.contains(m))
        {
            return Ok(None);
        }
        Ok(Some(OracleLine {
            set: c.set,
            source: c.source.clone(),
            start: c.start.fen(),
            moves: c.moves.iter().map(|m| m.to_string()).collect(),
            fen: pos.fen(),
            side: side_name(pos.turn()).into(),
            played: Some(c.played.to_string()),
            best: got[0].0.to_string(),
            scores: got.into_iter().map(|(_, s)| s).collect(),
            depth,
            engine: self.name.clone(),
        }))
    }
}

/// The candidate pools of [`make_oracle`] for a run's config: the positions of the
/// held-out games of its `[train.pretrain]` master games (split as pre-training splits
/// them, so none was trained on) and of the self-play games `selfplay_pgn`, each
/// shuffled by `seed`; `progress` gets a line with their counts.
///
/// # Errors
/// A config without `[train.pretrain]`, games that cannot be read.
pub fn pools_of(
    config: &crate::config::RunConfig,
    selfplay_pgn: &Path,
    seed: u64,
    progress: &mut dyn FnMut(&str),
) -> Result<[Vec<Candidate>; 2]> {
    let pretrain = config
        .train
        .data
        .pretrain
        .as_ref()
        .context("the first config has no [train.pretrain]: no master games")?;
    let (games, _) =
        xq_data::read_pgn_files(&pretrain.pgn).context("cannot read the master games")?;
    let split = xq_data::SplitConfig {
        held_out_permille: pretrain.held_out_permille,
        salt: 0,
    };
    let held_out: Vec<_> = games
        .into_iter()
        .filter(|g| split.is_held_out(xq_data::game_hash(&g.start, &g.moves)))
        .collect();
    let file_name = |p: &Path| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    let mut seen = HashSet::new();
    let master = candidates(
        &held_out,
        PositionSet::Master,
        &file_name(&pretrain.pgn[0]),
        &mut seen,
    );
    let (sp_games, skipped) =
        xq_data::read_pgn_files(std::slice::from_ref(&selfplay_pgn.to_path_buf()))
            .with_context(|| format!("cannot read {}", selfplay_pgn.display()))?;
    ensure!(
        skipped.is_empty(),
        "{} games of {} cannot be read",
        skipped.len(),
        selfplay_pgn.display()
    );
    let selfplay = candidates(
        &sp_games,
        PositionSet::Selfplay,
        &file_name(selfplay_pgn),
        &mut seen,
    );
    progress(&format!(
        "candidates: {} master positions of {} held-out games, {} self-play positions of {} games",
        master.len(),
        held_out.len(),
        selfplay.len(),
        sp_games.len()
    ));
    Ok([shuffled(master, seed), shuffled(selfplay, seed)])
}

/// The first `n` entries of each position set, in file order (a quick look).
pub fn first_of_each_set(entries: &mut Vec<OracleEntry>, n: usize) {
    let mut seen = [0usize; 2];
    entries.retain(|e| {
        let k = usize::from(e.line.set == PositionSet::Selfplay);
        seen[k] += 1;
        seen[k] <= n
    });
}

/// Judges candidates with the oracle until `out` holds `count` entries of each set,
/// appending one line per position as it is judged (so a stopped run resumes where it
/// stopped: positions already in `out` are kept and not judged again). `pools` holds
/// each set's candidates in the order to take them.
///
/// # Errors
/// An unreadable or corrupt `out`, an engine that fails, too few candidates.
pub fn make_oracle(
    pools: &[Vec<Candidate>],
    count: usize,
    engine: &Path,
    depth: u32,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    ensure!(depth >= 1, "--depth must be at least 1");
    let existing = if out.is_file() {
        load_oracle(out)?
    } else {
        Vec::new()
    };
    let done: HashSet<String> = existing
        .iter()
        .map(|e| key_of(&e.line.start, &e.line.moves))
        .collect();
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(out)
        .with_context(|| format!("cannot open {}", out.display()))?;
    let mut fsf = Fsf::start(engine, 16)?;
    progress(&format!("oracle: {} at depth {depth}", fsf.name));
    let started = Instant::now();
    let mut judged = 0usize;
    for pool in pools {
        let Some(set) = pool.first().map(|c| c.set) else {
            continue;
        };
        let mut have = existing.iter().filter(|e| e.line.set == set).count();
        let mut skipped = 0usize;
        for c in pool {
            if have >= count {
                break;
            }
            if done.contains(&c.key()) {
                continue;
            }
            match fsf.judge(c, depth, Duration::from_secs(600))? {
                Some(line) => {
                    let mut text = serde_json::to_string(&line)?;
                    text.push('\n');
                    file.write_all(text.as_bytes())
                        .with_context(|| format!("cannot write {}", out.display()))?;
                    file.flush()?;
                    have += 1;
                    judged += 1;
                    if judged.is_multiple_of(10) {
                        progress(&format!(
                            "oracle: {} {have}/{count}, {judged} judged in {:.0} s ({:.2} s each)",
                            set.name(),
                            started.elapsed().as_secs_f64(),
                            started.elapsed().as_secs_f64() / judged as f64
                        ));
                    }
                }
                None => skipped += 1,
            }
        }
        if skipped > 0 {
            progress(&format!(
                "oracle: {} positions of {} skipped: the engine's lines did not cover exactly \
                 the legal moves",
                skipped,
                set.name()
            ));
        }
        if have < count {
            bail!(
                "only {have} {} positions for {count} (too few candidates)",
                set.name()
            );
        }
    }
    progress(&format!(
        "oracle: done, {judged} judged in {:.0} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_moves_use_ranks_one_to_ten() {
        let m = Move::from_iccs("h2e2").unwrap();
        assert_eq!(to_engine(m), "h3e3");
        assert_eq!(from_engine("h3e3"), Some(m));
        let m = Move::from_iccs("a9a8").unwrap();
        assert_eq!(to_engine(m), "a10a9");
        assert_eq!(from_engine("a10a9"), Some(m));
        assert_eq!(from_engine("a11a9"), None);
        assert_eq!(from_engine("junk"), None);
    }
}
