//! A UCCI 3.0 engine (with the UCI dialect) around a search [`Backend`].
//!
//! The main thread reads commands and answers `isready` at once, also while a search
//! runs; `go` starts the search on its own thread, which prints `bestmove` when done;
//! `stop` and the deadline (which `ponderhit` sets) end it through a
//! [`SearchControl`]. Bad input (an unknown command, a malformed line, a broken FEN)
//! leaves the engine running and the previous position in place, and is reported on an
//! `info string` line. After a refused `position`, `go` answers `nobestmove` (UCI:
//! `bestmove (none)`) until a `position` is accepted: the GUI's game is then not the
//! engine's, and a move searched in the previous position would be illegal or wrong in
//! it (an adapter that sent a corrupt FEN got such a move, and its GUI forfeited the
//! game for it). An illegal move in `position … moves` is not a refusal: the position
//! after the legal moves before it is kept, as Stockfish and Pikafish do, and an `info
//! string` names the move refused; `go` then searches that position, so a GUI never
//! reads a `nobestmove` it cannot tell from a mated engine.
//!
//! Engine-level options: `usemillisec` (UCCI times in ms instead of s), `resignscore`
//! (resign when the score is at or below minus this; 0 never), `drawscore` (accept a
//! draw offer when the score is at or below this), `newgame` (button), plus the
//! backend's own options.

use std::{
    io::{BufRead, Write},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    thread::{self, JoinHandle},
    time::Duration,
};

use xq_core::{Color, Game, Move, Position};

use super::protocol::{Command, GoParams, parse};
use crate::{clock::Limits, control::SearchControl, score::Score};

/// How an engine option is shown in the `option` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionKind {
    Check { default: bool },
    Spin { default: i64, min: i64, max: i64 },
    Combo { default: String, vars: Vec<String> },
    String { default: String },
    Button,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOption {
    pub name: String,
    pub kind: OptionKind,
}

impl EngineOption {
    pub fn spin(name: &str, default: i64, min: i64, max: i64) -> EngineOption {
        EngineOption {
            name: name.into(),
            kind: OptionKind::Spin { default, min, max },
        }
    }

    fn line(&self, dialect: Dialect) -> String {
        let head = match dialect {
            Dialect::Ucci => format!("option {}", self.name),
            Dialect::Uci => format!("option name {}", self.name),
        };
        match &self.kind {
            OptionKind::Check { default } => format!("{head} type check default {default}"),
            OptionKind::Spin { default, min, max } => {
                format!("{head} type spin min {min} max {max} default {default}")
            }
            OptionKind::Combo { default, vars } => {
                let vars: Vec<String> = vars.iter().map(|v| format!("var {v}")).collect();
                format!("{head} type combo {} default {default}", vars.join(" "))
            }
            OptionKind::String { default } => format!("{head} type string default {default}"),
            OptionKind::Button => format!("{head} type button"),
        }
    }
}

/// An option the engine or its backend refused; the engine shows it on an
/// `info string` line and keeps running.
#[derive(Debug, thiserror::Error)]
pub enum OptionError {
    #[error("unknown option {name:?}")]
    Unknown { name: String },
    /// `what` is what the option takes: "a value", "a path".
    #[error("option {name} needs {what}")]
    Missing { name: String, what: &'static str },
    #[error("option {name}: {value:?} is not a number")]
    NotANumber { name: String, value: String },
    #[error("option {name}: {value} is outside {min}..{max}")]
    OutOfRange {
        name: String,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("option {name}: {value:?} is not true/false")]
    NotABool { name: String, value: String },
    #[error("this engine has no network loader ({name} not supported)")]
    NoNetworkLoader { name: String },
    /// A well-formed value the backend could not apply (settings it refuses, a
    /// network it cannot load), in the backend's own words.
    #[error("{source}")]
    Rejected {
        name: String,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Parses a spin option value within its range.
///
/// # Errors
/// No value, not a number, or outside `min..=max`.
pub fn spin_value(name: &str, value: Option<&str>, min: i64, max: i64) -> Result<i64, OptionError> {
    let v = value.ok_or_else(|| OptionError::Missing {
        name: name.to_owned(),
        what: "a value",
    })?;
    let n: i64 = v.trim().parse().map_err(|_| OptionError::NotANumber {
        name: name.to_owned(),
        value: v.to_owned(),
    })?;
    if n < min || n > max {
        return Err(OptionError::OutOfRange {
            name: name.to_owned(),
            value: n,
            min,
            max,
        });
    }
    Ok(n)
}

/// One `info` report during the search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchReport {
    pub depth: u32,
    pub score: Score,
    pub nodes: u64,
    pub pv: Vec<Move>,
}

/// What the backend is asked to search.
#[derive(Debug)]
pub struct SearchRequest<'a> {
    pub game: &'a Game,
    /// Never play these (UCCI `banmoves`) unless nothing else is legal.
    pub banned: &'a [Move],
    /// Depth or node limits (time is in the control).
    pub limits: Limits,
    /// `go infinite` or `go ponder`: search until `stop` (or, after `ponderhit`, the
    /// control's deadline), even when the backend would otherwise stop by itself.
    pub infinite: bool,
}

/// The search's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOutcome {
    pub best: Option<Move>,
    pub ponder: Option<Move>,
    /// Centipawn-like score for the side to move, for resign and draw decisions.
    pub score: i32,
}

/// A search the engine can drive.
pub trait Backend: Send {
    /// `id name`.
    fn id_name(&self) -> String;
    /// Backend options shown after `ucci`.
    fn options(&self) -> Vec<EngineOption>;
    /// Sets an option; an error is shown on an `info string` line.
    fn set_option(&mut self, name: &str, value: Option<&str>) -> Result<(), OptionError>;
    fn new_game(&mut self);
    fn search(
        &mut self,
        request: &SearchRequest<'_>,
        control: &SearchControl,
        report: &mut dyn FnMut(&SearchReport),
    ) -> SearchOutcome;
}

/// Which protocol the GUI spoke first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Ucci,
    Uci,
}

/// The engine's output: one line at a time, flushed, shared with the search thread.
#[derive(Clone)]
pub struct Output(Arc<Mutex<Box<dyn Write + Send>>>);

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Output")
    }
}

impl Output {
    pub fn new(w: impl Write + Send + 'static) -> Output {
        Output(Arc::new(Mutex::new(Box::new(w))))
    }

    pub fn line(&self, s: &str) {
        let mut w = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // A GUI that closed our stdout cannot be told anything; keep running until quit.
        let _ = writeln!(w, "{s}").and_then(|()| w.flush());
    }
}

struct Running {
    control: Arc<SearchControl>,
    pondering: Arc<AtomicBool>,
    /// Time budget to apply on `ponderhit`.
    ponder_budget: Option<Duration>,
    draw_offered: Arc<AtomicBool>,
    /// Set by the search thread just before it prints `bestmove`: from then on the
    /// search is over for the GUI, which may send the next `position`/`go` at once.
    answered: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

/// Engine-level settings.
#[derive(Debug, Clone, Copy)]
struct Settings {
    usemillisec: bool,
    resign_score: i32,
    draw_score: i32,
}

/// The engine.
pub struct Engine {
    backend: Arc<Mutex<Box<dyn Backend>>>,
    out: Output,
    dialect: Dialect,
    game: Game,
    banned: Vec<Move>,
    /// The last `position` was refused: `go` has no position of the GUI's to search.
    position_refused: bool,
    settings: Settings,
    running: Option<Running>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("dialect", &self.dialect)
            .field("position", self.game.position())
            .field("searching", &self.running.is_some())
            .finish()
    }
}

impl Engine {
    pub fn new(backend: Box<dyn Backend>, out: Output) -> Engine {
        Engine {
            backend: Arc::new(Mutex::new(backend)),
            out,
            dialect: Dialect::Ucci,
            game: Game::new(Position::startpos()),
            banned: Vec::new(),
            position_refused: false,
            settings: Settings {
                usemillisec: false,
                resign_score: 0,
                draw_score: 0,
            },
            running: None,
        }
    }

    /// Reads commands until `quit` or end of input.
    pub fn run(mut self, input: impl BufRead) {
        for line in input.lines() {
            let Ok(line) = line else { break };
            if !self.handle_line(&line) {
                return;
            }
        }
        // End of input: behave as if told to quit, without `bye`.
        self.finish_search(true);
    }

    fn info_string(&self, msg: &str) {
        self.out.line(&format!("info string {msg}"));
    }

    /// Handles one line; `false` after `quit`.
    pub fn handle_line(&mut self, line: &str) -> bool {
        self.reap();
        let cmd = match parse(line) {
            Ok(Some(c)) => c,
            Ok(None) => return true,
            Err(e) => {
                self.info_string(&format!("error: {e}"));
                return true;
            }
        };
        match cmd {
            Command::Ucci | Command::Uci => {
                self.dialect = if cmd == Command::Ucci {
                    Dialect::Ucci
                } else {
                    Dialect::Uci
                };
                self.handshake();
            }
            Command::IsReady => self.out.line("readyok"),
            Command::SetOption { name, value } => {
                if self.running.is_some() {
                    self.info_string("error: setoption ignored while searching");
                } else if let Err(e) = self.set_option(&name, value.as_deref()) {
                    self.info_string(&format!("error: {e}"));
                }
            }
            Command::UciNewGame => self.lock_backend().new_game(),
            Command::Position { fen, moves } => {
                if self.running.is_some() {
                    self.info_string("error: position ignored while searching (send stop first)");
                } else {
                    match build_game(fen.as_deref(), &moves) {
                        Ok((g, refused)) => {
                            if let Some(e) = refused {
                                self.info_string(&format!(
                                    "error: {e}; position set after the {} legal moves before it",
                                    g.ply()
                                ));
                            }
                            self.game = g;
                            self.banned.clear();
                            self.position_refused = false;
                        }
                        Err(e) => {
                            self.info_string(&format!("error: {e}; position unchanged"));
                            self.position_refused = true;
                        }
                    }
                }
            }
            Command::BanMoves(moves) => {
                let mut banned = Vec::new();
                for m in &moves {
                    match Move::from_iccs(m) {
                        Ok(mv) => banned.push(mv),
                        Err(e) => {
                            self.info_string(&format!("error: banmoves: {e}"));
                            return true;
                        }
                    }
                }
                self.banned = banned;
            }
            Command::Go(params) => {
                if self.running.is_some() {
                    self.info_string("error: go ignored: already searching");
                } else if self.position_refused {
                    self.info_string("error: go not searched: the last position was refused");
                    self.out
                        .line(&bestmove_line(None, self.dialect, self.settings, false));
                } else {
                    self.go(&params);
                }
            }
            Command::Stop => {
                if self.running.is_some() {
                    self.finish_search(true);
                } else if self.dialect == Dialect::Ucci {
                    self.out.line("nobestmove");
                }
            }
            Command::PonderHit { draw } => match &mut self.running {
                Some(r) if r.pondering.load(Ordering::SeqCst) => {
                    if draw {
                        r.draw_offered.store(true, Ordering::SeqCst);
                    }
                    r.control.set_budget_from_now(r.ponder_budget);
                    r.pondering.store(false, Ordering::SeqCst);
                }
                _ => self.info_string("error: ponderhit without a ponder search"),
            },
            Command::Probe { fen, moves } => match build_game(fen.as_deref(), &moves) {
                Ok((_, None)) => self.out.line("pophash"),
                Ok((_, Some(e))) | Err(e) => self.info_string(&format!("error: {e}")),
            },
            Command::Quit => {
                self.finish_search(true);
                self.out.line("bye");
                return false;
            }
        }
        true
    }

    fn lock_backend(&self) -> std::sync::MutexGuard<'_, Box<dyn Backend>> {
        self.backend.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn handshake(&mut self) {
        let (name, options) = {
            let b = self.lock_backend();
            (b.id_name(), b.options())
        };
        self.out.line(&format!("id name {name}"));
        self.out.line("id author the xqzero developers");
        let mut all = vec![
            EngineOption {
                name: "usemillisec".into(),
                kind: OptionKind::Check { default: false },
            },
            EngineOption::spin("resignscore", 0, 0, 30000),
            EngineOption::spin("drawscore", 0, -30000, 30000),
            EngineOption {
                name: "newgame".into(),
                kind: OptionKind::Button,
            },
        ];
        if self.dialect == Dialect::Uci {
            // UCI GUIs always send milliseconds.
            all.remove(0);
            self.settings.usemillisec = true;
        }
        all.extend(options);
        for o in &all {
            self.out.line(&o.line(self.dialect));
        }
        self.out.line(match self.dialect {
            Dialect::Ucci => "ucciok",
            Dialect::Uci => "uciok",
        });
    }

    fn set_option(&mut self, name: &str, value: Option<&str>) -> Result<(), OptionError> {
        match name.to_ascii_lowercase().as_str() {
            "usemillisec" => {
                self.settings.usemillisec = match value.map(str::trim) {
                    Some("true") | None => true,
                    Some("false") => false,
                    Some(v) => {
                        return Err(OptionError::NotABool {
                            name: "usemillisec".into(),
                            value: v.to_owned(),
                        });
                    }
                }
            }
            "resignscore" => self.settings.resign_score = spin_value(name, value, 0, 30000)? as i32,
            "drawscore" => {
                self.settings.draw_score = spin_value(name, value, -30000, 30000)? as i32
            }
            "newgame" => self.lock_backend().new_game(),
            _ => self.lock_backend().set_option(name, value)?,
        }
        Ok(())
    }

    /// Turns `go` parameters into limits (milliseconds internally).
    fn limits(&self, g: &GoParams) -> Limits {
        let unit = |v: u64| {
            if self.settings.usemillisec || self.dialect == Dialect::Uci {
                Duration::from_millis(v)
            } else {
                Duration::from_secs(v)
            }
        };
        let mut l = Limits {
            depth: g.depth,
            nodes: g.nodes,
            moves_to_go: g.movestogo,
            opp_moves_to_go: g.oppmovestogo,
            ..Limits::default()
        };
        if let Some(mt) = g.movetime {
            l.movetime = Some(Duration::from_millis(mt));
        }
        if let Some(t) = g.time {
            l.time_left = Some(unit(t));
            l.increment = g.increment.map_or(Duration::ZERO, unit);
            l.opp_time_left = g.opptime.map(unit);
            l.opp_increment = g.oppincrement.map_or(Duration::ZERO, unit);
        }
        let red = self.game.position().turn() == Color::Red;
        let (own, opp, own_inc, opp_inc) = if red {
            (g.wtime, g.btime, g.winc, g.binc)
        } else {
            (g.btime, g.wtime, g.binc, g.winc)
        };
        if let Some(t) = own {
            l.time_left = Some(Duration::from_millis(t));
            l.increment = Duration::from_millis(own_inc.unwrap_or(0));
            l.opp_time_left = opp.map(Duration::from_millis);
            l.opp_increment = Duration::from_millis(opp_inc.unwrap_or(0));
        }
        l
    }

    fn go(&mut self, params: &GoParams) {
        let limits = self.limits(params);
        let budget = if params.infinite {
            None
        } else {
            limits.budget()
        };
        let pondering = Arc::new(AtomicBool::new(params.ponder));
        let control = Arc::new(SearchControl::new(if params.ponder {
            None
        } else {
            budget
        }));
        let draw_offered = Arc::new(AtomicBool::new(params.draw));
        if params.depth == Some(0) {
            self.out.line("nobestmove");
            return;
        }
        let game = self.game.clone();
        let banned = self.banned.clone();
        let backend = self.backend.clone();
        let out = self.out.clone();
        let dialect = self.dialect;
        let settings = self.settings;
        let infinite = params.infinite || params.ponder;
        let (c, p, d) = (control.clone(), pondering.clone(), draw_offered.clone());
        let answered = Arc::new(AtomicBool::new(false));
        let done = answered.clone();
        let handle = thread::spawn(move || {
            let mut backend = backend.lock().unwrap_or_else(|e| e.into_inner());
            let request = SearchRequest {
                game: &game,
                banned: &banned,
                limits,
                infinite,
            };
            let started = c.elapsed();
            let outcome = if game.position().has_legal_move() {
                Some(backend.search(&request, &c, &mut |r| {
                    out.line(&info_line(r, dialect, c.elapsed() - started));
                }))
            } else {
                None
            };
            // A ponder search may not answer before ponderhit or stop.
            while p.load(Ordering::SeqCst) && !c.is_stopped() {
                thread::sleep(Duration::from_millis(1));
            }
            done.store(true, Ordering::SeqCst);
            out.line(&bestmove_line(
                outcome.as_ref(),
                dialect,
                settings,
                d.load(Ordering::SeqCst),
            ));
        });
        self.running = Some(Running {
            control,
            pondering,
            ponder_budget: budget,
            draw_offered,
            answered,
            handle,
        });
    }

    /// Drops a search that has finished on its own.
    fn reap(&mut self) {
        if self
            .running
            .as_ref()
            .is_some_and(|r| r.handle.is_finished() || r.answered.load(Ordering::SeqCst))
        {
            self.finish_search(false);
        }
    }

    /// Stops (if `stop`) and waits for the running search.
    fn finish_search(&mut self, stop: bool) {
        if let Some(r) = self.running.take() {
            if stop {
                r.control.stop();
            }
            let _ = r.handle.join();
        }
    }

    /// Whether a search is running.
    pub fn is_searching(&mut self) -> bool {
        self.reap();
        self.running.is_some()
    }
}

/// The game a `position` command sets: an error for a bad FEN; with an illegal move,
/// the game of the legal moves before it and the error naming that move.
fn build_game(fen: Option<&str>, moves: &[String]) -> Result<(Game, Option<String>), String> {
    let start = match fen {
        Some(f) => Position::from_fen(f).map_err(|e| e.to_string())?,
        None => Position::startpos(),
    };
    let mut game = Game::new(start);
    for (i, m) in moves.iter().enumerate() {
        if let Err(e) = game.play_iccs(m) {
            return Ok((game, Some(format!("move {} ({m}): {e}", i + 1))));
        }
    }
    Ok((game, None))
}

fn info_line(r: &SearchReport, dialect: Dialect, elapsed: Duration) -> String {
    let ms = elapsed.as_millis().max(1) as u64;
    let score = match (r.score, dialect) {
        (Score::Cp(c), Dialect::Ucci) => format!("{c}"),
        (Score::Cp(c), Dialect::Uci) => format!("cp {c}"),
        (Score::Mate(m), _) => format!("mate {m}"),
    };
    let pv: Vec<String> = r.pv.iter().map(ToString::to_string).collect();
    format!(
        "info depth {} score {score} time {ms} nodes {} nps {} pv {}",
        r.depth,
        r.nodes,
        r.nodes * 1000 / ms,
        pv.join(" ")
    )
}

fn bestmove_line(
    outcome: Option<&SearchOutcome>,
    dialect: Dialect,
    s: Settings,
    draw_offered: bool,
) -> String {
    let Some(o) = outcome.filter(|o| o.best.is_some()) else {
        return match dialect {
            Dialect::Ucci => "nobestmove".into(),
            Dialect::Uci => "bestmove (none)".into(),
        };
    };
    let mut line = format!("bestmove {}", o.best.expect("filtered"));
    if let Some(p) = o.ponder {
        line += &format!(" ponder {p}");
    }
    if s.resign_score > 0 && o.score <= -s.resign_score {
        line += " resign";
    } else if draw_offered && o.score <= s.draw_score {
        line += " draw";
    }
    line
}
