//! A client for external engines speaking UCCI (or UCI, which the strong Xiangqi engines
//! speak), as a [`Player`].
//!
//! The engine runs as a child process; a reader thread forwards its stdout lines over a
//! channel so every wait has a deadline. A crashed or hanging engine costs the current
//! game (the referee scores it) and is restarted for the next request.
//!
//! Dialects (see `shared/docs/engines.md`): UCCI (`ucci`/`ucciok`, `setoption NAME VALUE`,
//! `go time/increment/opptime/movestogo`, `banmoves`, ranks 0-9); UCI (`uci`/`uciok`,
//! `setoption name N value V`, `go wtime/btime/winc/binc/movestogo/movetime`, ranks 0-9 for
//! Pikafish, 1-10 for Fairy-Stockfish in UCI mode: set [`EngineConfig::one_based_ranks`]).
//!
//! Besides playing, [`UcciEngine::perft`] times an engine's `go perft` (`xqz bench perft`
//! compares move generation with Fairy-Stockfish's through it).

use std::{
    io::{BufRead, BufReader, Write},
    path::PathBuf,
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc::{self, Receiver, RecvTimeoutError},
    thread,
    time::{Duration, Instant},
};

use xq_core::{Color, Move, Position, Square};

use crate::{
    clock::Limits,
    player::{Decision, GameView, Player, PlayerError, Reply, ThinkInfo},
};

/// Which protocol the engine speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Ucci,
    Uci,
}

/// How to start and set up an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    pub command: PathBuf,
    pub args: Vec<String>,
    pub dialect: Dialect,
    /// `setoption` pairs sent after the handshake, in order.
    pub options: Vec<(String, String)>,
    /// Moves use ranks 1-10 (Fairy-Stockfish in UCI mode).
    pub one_based_ranks: bool,
    /// Name for tables; the engine's `id name` when `None`.
    pub name: Option<String>,
    /// How long the handshake and `isready` may take.
    pub startup_timeout: Duration,
}

impl EngineConfig {
    pub fn new(command: impl Into<PathBuf>, dialect: Dialect) -> EngineConfig {
        EngineConfig {
            command: command.into(),
            args: Vec::new(),
            dialect,
            options: Vec::new(),
            one_based_ranks: false,
            name: None,
            startup_timeout: Duration::from_secs(10),
        }
    }
}

struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        // Give it a moment to exit by itself, then make sure.
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An external engine.
pub struct UcciEngine {
    config: EngineConfig,
    process: Option<Process>,
    id_name: Option<String>,
    /// How many times the process was (re)started.
    pub starts: u32,
}

impl std::fmt::Debug for UcciEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UcciEngine")
            .field("command", &self.config.command)
            .field("running", &self.process.is_some())
            .finish()
    }
}

/// The most an engine may overrun its budget before it is told to stop.
const STOP_GRACE: Duration = Duration::from_millis(1000);

impl UcciEngine {
    /// Starts the engine and completes the handshake.
    ///
    /// # Errors
    /// If the process cannot be started or does not answer the handshake in time.
    pub fn start(config: EngineConfig) -> Result<UcciEngine, PlayerError> {
        let mut e = UcciEngine {
            config,
            process: None,
            id_name: None,
            starts: 0,
        };
        e.ensure_running()?;
        Ok(e)
    }

    fn ensure_running(&mut self) -> Result<(), PlayerError> {
        if let Some(p) = &mut self.process {
            if matches!(p.child.try_wait(), Ok(None)) {
                return Ok(());
            }
            self.process = None;
        }
        let mut child = Command::new(&self.config.command)
            .args(&self.config.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                PlayerError::Process(format!(
                    "cannot start {}: {e}",
                    self.config.command.display()
                ))
            })?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        thread::Builder::new()
            .name("engine-reader".into())
            .spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| PlayerError::Process(e.to_string()))?;
        self.process = Some(Process {
            child,
            stdin,
            lines: rx,
        });
        self.starts += 1;
        let timeout = self.config.startup_timeout;
        let (hello, ok) = match self.config.dialect {
            Dialect::Ucci => ("ucci", "ucciok"),
            Dialect::Uci => ("uci", "uciok"),
        };
        self.send(hello)?;
        let deadline = Instant::now() + timeout;
        loop {
            let line = self.recv_until(deadline)?;
            if let Some(name) = line.strip_prefix("id name ") {
                self.id_name = Some(name.trim().to_owned());
            }
            if line.trim() == ok {
                break;
            }
        }
        if self.config.dialect == Dialect::Ucci {
            self.send("setoption usemillisec true")?;
        }
        for (name, value) in self.config.options.clone() {
            let cmd = match self.config.dialect {
                Dialect::Ucci => format!("setoption {name} {value}"),
                Dialect::Uci => format!("setoption name {name} value {value}"),
            };
            self.send(&cmd)?;
        }
        self.sync(timeout)
    }

    fn process(&mut self) -> Result<&mut Process, PlayerError> {
        self.process
            .as_mut()
            .ok_or_else(|| PlayerError::Process("engine is not running".into()))
    }

    fn send(&mut self, line: &str) -> Result<(), PlayerError> {
        let p = self.process()?;
        writeln!(p.stdin, "{line}")
            .and_then(|()| p.stdin.flush())
            .map_err(|e| PlayerError::Process(format!("writing to engine: {e}")))
    }

    fn recv_until(&mut self, deadline: Instant) -> Result<String, PlayerError> {
        let p = self.process()?;
        let wait = deadline.saturating_duration_since(Instant::now());
        match p.lines.recv_timeout(wait) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(PlayerError::Timeout(wait)),
            Err(RecvTimeoutError::Disconnected) => {
                self.process = None;
                Err(PlayerError::Process("engine exited".into()))
            }
        }
    }

    /// `isready` → `readyok`.
    fn sync(&mut self, timeout: Duration) -> Result<(), PlayerError> {
        self.send("isready")?;
        let deadline = Instant::now() + timeout;
        while self.recv_until(deadline)?.trim() != "readyok" {}
        Ok(())
    }

    /// Kills the engine; the next request starts a fresh one.
    pub fn kill(&mut self) {
        if let Some(mut p) = self.process.take() {
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }

    /// The engine's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(|p| p.child.id())
    }

    /// Counts the leaves `depth` plies below `position` with `go perft`, and times the
    /// count: the node count and the wall time from sending `go perft` to reading
    /// "Nodes searched" (the engines that have `go perft` print no perft time of their
    /// own). The position is set up, and the engine confirmed ready (`isready` →
    /// `readyok`), before the clock starts, so the time is the count's plus one pipe
    /// round trip.
    ///
    /// `go perft` is an extension of the Stockfish family (Fairy-Stockfish, Pikafish),
    /// in neither UCI nor UCCI; an engine without it fails the request (it searches and
    /// answers `bestmove`, or says nothing until `timeout`).
    ///
    /// # Errors
    /// If the engine cannot be (re)started, is not ready within the startup timeout,
    /// prints no count within `timeout` of `go perft`, answers `bestmove` instead, or
    /// prints a count that is not a number. The engine is then killed, so that a count
    /// still running cannot answer the next request, which starts a fresh process.
    pub fn perft(
        &mut self,
        position: &Position,
        depth: u32,
        timeout: Duration,
    ) -> Result<(u64, Duration), PlayerError> {
        let r = self.perft_inner(position, depth, timeout);
        if r.is_err() {
            self.kill();
        }
        r
    }

    fn perft_inner(
        &mut self,
        position: &Position,
        depth: u32,
        timeout: Duration,
    ) -> Result<(u64, Duration), PlayerError> {
        self.ensure_running()?;
        self.send(&format!("position fen {}", position.fen()))?;
        self.sync(self.config.startup_timeout)?;
        let start = Instant::now();
        let deadline = start.checked_add(timeout).ok_or_else(|| {
            PlayerError::Other(format!("perft timeout {timeout:?} is out of range"))
        })?;
        self.send(&format!("go perft {depth}"))?;
        loop {
            let line = self.recv_until(deadline)?;
            if let Some(count) = line.strip_prefix("Nodes searched") {
                let elapsed = start.elapsed();
                let nodes = count
                    .trim_start()
                    .strip_prefix(':')
                    .and_then(|n| n.trim().parse().ok())
                    .ok_or_else(|| {
                        PlayerError::Protocol(format!("unreadable perft count {line:?}"))
                    })?;
                return Ok((nodes, elapsed));
            }
            if line.split_whitespace().next() == Some("bestmove") {
                return Err(PlayerError::Protocol(format!(
                    "the engine searched instead of counting (it has no `go perft`): {line:?}"
                )));
            }
        }
    }

    fn format_move(&self, m: Move) -> String {
        let base = u8::from(self.config.one_based_ranks);
        let sq = |s: Square| format!("{}{}", s.file().char(), s.rank().index() as u8 + base);
        format!("{}{}", sq(m.from()), sq(m.to()))
    }

    fn parse_move(&self, s: &str) -> Option<Move> {
        if !self.config.one_based_ranks {
            return Move::from_iccs(s).ok();
        }
        // Files are single letters; ranks 1-10 may have two digits.
        let b = s.as_bytes();
        let split = b.iter().skip(1).position(|c| c.is_ascii_alphabetic())? + 1;
        let sq = |t: &str| -> Option<Square> {
            let f = xq_core::File::from_char(t.chars().next()?)?;
            let r: i32 = t[1..].parse().ok()?;
            Square::try_from_coords(f.index() as i32, r - 1)
        };
        Some(Move::new(sq(&s[..split])?, sq(&s[split..])?))
    }

    fn go_command(&self, game: &GameView<'_>, limits: &Limits) -> (String, Option<Duration>) {
        let ms = |d: Duration| d.as_millis().max(1);
        if let Some(d) = limits.depth {
            return (format!("go depth {d}"), None);
        }
        if let Some(n) = limits.nodes {
            return (format!("go nodes {n}"), None);
        }
        if let Some(mt) = limits.movetime {
            return match self.config.dialect {
                Dialect::Uci => (format!("go movetime {}", ms(mt)), Some(mt)),
                // UCCI has no movetime: think without limit and stop on time.
                Dialect::Ucci => ("go infinite".into(), Some(mt)),
            };
        }
        let Some(left) = limits.time_left else {
            return ("go depth 8".into(), None);
        };
        let deadline = Some(left);
        match self.config.dialect {
            Dialect::Ucci => {
                let mut cmd = format!("go time {}", ms(left));
                match limits.moves_to_go {
                    Some(n) => cmd += &format!(" movestogo {n}"),
                    None => cmd += &format!(" increment {}", limits.increment.as_millis()),
                }
                if let Some(o) = limits.opp_time_left {
                    cmd += &format!(" opptime {}", ms(o));
                    match limits.opp_moves_to_go {
                        Some(n) => cmd += &format!(" oppmovestogo {n}"),
                        None => {
                            cmd += &format!(" oppincrement {}", limits.opp_increment.as_millis())
                        }
                    }
                }
                (cmd, deadline)
            }
            Dialect::Uci => {
                let red = game.position().turn() == Color::Red;
                let opp = limits.opp_time_left.unwrap_or(left);
                let (wt, bt) = if red { (left, opp) } else { (opp, left) };
                let (wi, bi) = if red {
                    (limits.increment, limits.opp_increment)
                } else {
                    (limits.opp_increment, limits.increment)
                };
                let mut cmd = format!(
                    "go wtime {} btime {} winc {} binc {}",
                    ms(wt),
                    ms(bt),
                    wi.as_millis(),
                    bi.as_millis()
                );
                if let Some(n) = limits.moves_to_go {
                    cmd += &format!(" movestogo {n}");
                }
                (cmd, deadline)
            }
        }
    }

    fn position_command(&self, game: &GameView<'_>) -> String {
        let mut cmd = format!("position fen {}", game.start().fen());
        let moves = game.moves();
        if !moves.is_empty() {
            cmd += " moves";
            for m in moves {
                cmd += " ";
                cmd += &self.format_move(m);
            }
        }
        cmd
    }

    fn think_inner(&mut self, game: &GameView<'_>, limits: &Limits) -> Result<Reply, PlayerError> {
        self.ensure_running()?;
        let position = self.position_command(game);
        self.send(&position)?;
        if !game.banned.is_empty() && self.config.dialect == Dialect::Ucci {
            let list: Vec<String> = game.banned.iter().map(|&m| self.format_move(m)).collect();
            self.send(&format!("banmoves {}", list.join(" ")))?;
        }
        let (go, time) = self.go_command(game, limits);
        self.send(&go)?;
        let started = Instant::now();
        // A fixed-time search is stopped at its time; a clock search gets until the flag.
        let stop_at = time.map(|t| {
            if go == "go infinite" {
                started + t
            } else {
                started + t + STOP_GRACE
            }
        });
        let hard_timeout = Duration::from_secs(600);
        let mut stopped = false;
        let mut info = ThinkInfo::default();
        loop {
            let deadline = match (stop_at, stopped) {
                (Some(at), false) => at,
                _ => started + time.unwrap_or(hard_timeout) + STOP_GRACE * 2,
            };
            let line = match self.recv_until(deadline) {
                Ok(line) => line,
                Err(PlayerError::Timeout(_)) if !stopped && stop_at.is_some() => {
                    self.send("stop")?;
                    stopped = true;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let mut words = line.split_whitespace();
            match words.next() {
                Some("info") => parse_info(&line, &mut info, |s| self.parse_move(s)),
                Some("nobestmove") => {
                    return Ok(Reply {
                        decision: Decision::Resign,
                        offer_draw: false,
                        info,
                    });
                }
                Some("bestmove") => {
                    let text = words.next().unwrap_or("");
                    if text == "(none)" {
                        return Ok(Reply {
                            decision: Decision::Resign,
                            offer_draw: false,
                            info,
                        });
                    }
                    let m = self.parse_move(text).ok_or_else(|| {
                        PlayerError::Protocol(format!("unreadable bestmove {line:?}"))
                    })?;
                    let rest: Vec<&str> = words.collect();
                    let resign = rest.contains(&"resign");
                    return Ok(Reply {
                        decision: if resign {
                            Decision::Resign
                        } else {
                            Decision::Move(m)
                        },
                        offer_draw: rest.contains(&"draw"),
                        info,
                    });
                }
                _ => {}
            }
        }
    }
}

fn parse_info(line: &str, info: &mut ThinkInfo, parse_move: impl Fn(&str) -> Option<Move>) {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut i = 1;
    while i < words.len() {
        match words[i] {
            "depth" => info.depth = words.get(i + 1).and_then(|w| w.parse().ok()).or(info.depth),
            "nodes" => info.nodes = words.get(i + 1).and_then(|w| w.parse().ok()).or(info.nodes),
            "score" => {
                let (kind, v) = match words.get(i + 1) {
                    Some(&"cp") => ("cp", words.get(i + 2)),
                    Some(&"mate") => ("mate", words.get(i + 2)),
                    other => ("cp", other),
                };
                if let Some(v) = v.and_then(|w| w.parse::<i32>().ok()) {
                    info.score = Some(if kind == "mate" {
                        if v >= 0 { 30_000 - v } else { -30_000 - v }
                    } else {
                        v
                    });
                }
            }
            "pv" => {
                info.pv = words[i + 1..].iter().map_while(|w| parse_move(w)).collect();
                break;
            }
            _ => {}
        }
        i += 1;
    }
}

impl Player for UcciEngine {
    fn name(&self) -> String {
        self.config
            .name
            .clone()
            .or_else(|| self.id_name.clone())
            .unwrap_or_else(|| self.config.command.display().to_string())
    }

    fn new_game(&mut self, _seed: u64) -> Result<(), PlayerError> {
        self.ensure_running()?;
        if self.config.dialect == Dialect::Uci {
            self.send("ucinewgame")?;
        }
        let timeout = self.config.startup_timeout;
        let r = self.sync(timeout);
        if r.is_err() {
            self.kill();
        }
        r
    }

    fn think(&mut self, game: &GameView<'_>, limits: &Limits) -> Result<Reply, PlayerError> {
        let r = self.think_inner(game, limits);
        if r.is_err() {
            // Whatever state it is in, a fresh process serves the next game.
            self.kill();
        }
        r
    }
}

impl Drop for UcciEngine {
    fn drop(&mut self) {
        self.process = None;
    }
}
