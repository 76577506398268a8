//! `xqz report`: one self-contained HTML page about a training run.
//!
//! The page is built from what the run directory already holds (see ARCHITECTURE.md,
//! "The run directory"): the event log for the summary, strength, training and
//! self-play sections, and the newest PGN records of `games/` and `matches/` for games
//! replayable move by move. It needs no network: the CSS and JavaScript (in
//! `report/`) are inlined, and the charts and boards are SVG drawn by that script from
//! one JSON blob that this module fills.
//!
//! Reading is tolerant because a report is most wanted when something went wrong: a
//! corrupt event line or PGN game is skipped and listed on the page, missing event
//! fields leave gaps, and an empty run still gives a valid page with "no data yet".
//! Only a run directory that does not exist is an error.
//!
//! Event semantics the page relies on: a `selfplay` event carries its worker's running
//! totals (`games`, `positions` since the worker started, as `xqz selfplay` writes
//! them); the run's totals are the sum over workers of each worker's latest values.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
    time::SystemTime,
};

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;
use xq_core::notation::{Style, format_move};
use xq_data::pgn::{PgnGame, read_pgn};

use xq_eval::matches::MatchSummary;
use xq_pipeline::{
    events::Event,
    rundir::{RunDir, now, write_atomic},
};

const CSS: &str = include_str!("report/report.css");
const JS: &str = include_str!("report/report.js");

/// Plies kept per replayable game: enough for any real game, and a bound on page size.
const MAX_PLIES: usize = 600;
/// Points kept per chart series; longer logs are thinned evenly (the last point kept).
const MAX_POINTS: usize = 1500;
/// PGN files opened per directory while looking for the newest games: a directory
/// full of unreadable files must not make the report read the whole run.
const MAX_FILES: usize = 64;
/// Games taken from one match file, so that the newest gating and rating matches
/// both show up rather than one match's last games only.
const MATCH_GAMES_PER_FILE: usize = 2;
/// Problems listed on the page; the rest are counted.
const MAX_WARNINGS: usize = 50;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Writes RUN/report.html (or --out FILE), replaced atomically: a summary (config, totals, \
best player), the Elo of each accepted network against the baselines and the gating \
results with 95% intervals, loss and accuracy curves, self-play statistics, and the \
newest self-play and match games replayable move by move. The page is self-contained \
(inline CSS, JavaScript and SVG; no network). Unreadable event lines and PGN games are \
skipped and listed on the page.")]
pub struct Args {
    /// The training run directory.
    #[arg(long, value_name = "DIR")]
    run: PathBuf,
    /// Where to write the page (default RUN/report.html).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Newest self-play games to show (from RUN/games/*.pgn).
    #[arg(long, default_value_t = 4, value_name = "N")]
    selfplay_games: usize,
    /// Newest gating and rating games to show (from RUN/matches/*.pgn).
    #[arg(long, default_value_t = 4, value_name = "N")]
    match_games: usize,
}

pub fn run(args: Args) -> Result<()> {
    let run = RunDir::existing(&args.run)?;
    let report = gather(&run, args.selfplay_games, args.match_games)?;
    let html = render(&report)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| run.root().join("report.html"));
    write_atomic(&out, html.as_bytes())
        .with_context(|| format!("cannot write the report to {}", out.display()))?;
    println!("wrote {}", out.display());
    if !report.warnings.is_empty() {
        eprintln!(
            "report: skipped {} unreadable item(s); they are listed on the page",
            report.warnings.len()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// What the page shows, gathered from the run directory.

/// One rating match of an accepted network against a baseline.
#[derive(Debug, Clone, Serialize)]
struct Rating {
    model: String,
    step: Option<u64>,
    opponent: String,
    games: Option<u64>,
    score: Option<f64>,
    /// Finite values only; see `unbounded`.
    elo: Option<f64>,
    lo: Option<f64>,
    hi: Option<f64>,
    /// `"top"` / `"bottom"` when the Elo is infinite or missing because the score was
    /// 100% / 0%: the chart then draws a marker at its edge and the table the score.
    unbounded: Option<&'static str>,
    time: Option<u64>,
}

/// One gating match of a candidate against the accepted network.
#[derive(Debug, Clone, Serialize)]
struct Gate {
    candidate: String,
    step: Option<u64>,
    opponent: Option<String>,
    accepted: Option<bool>,
    games: Option<u64>,
    score: Option<f64>,
    elo: Option<f64>,
    lo: Option<f64>,
    hi: Option<f64>,
    unbounded: Option<&'static str>,
    reason: Option<String>,
    llr: Option<f64>,
    time: Option<u64>,
}

/// A game prepared for the board: one FEN per position, ply 0 the start.
#[derive(Debug, Clone, Serialize)]
struct ReplayGame {
    /// `self-play` or `match`.
    kind: &'static str,
    title: String,
    red: String,
    black: String,
    result: String,
    termination: String,
    /// The file (relative to the run) and the game's number in it.
    source: String,
    fens: Vec<String>,
    iccs: Vec<String>,
    /// Chinese notation, one per move.
    moves: Vec<String>,
    note: Option<String>,
}

#[derive(Debug, Default, Serialize)]
struct PageData {
    ratings: Vec<Rating>,
    gates: Vec<Gate>,
    /// Numeric fields of `train` events; each point has `step`.
    train: Vec<BTreeMap<String, f64>>,
    /// Numeric fields of `selfplay` events, plus `x`: games played so far (or the event
    /// number when events carry no game counts).
    selfplay: Vec<BTreeMap<String, f64>>,
    /// Events before thinning, when thinned (chart captions say so).
    train_events: usize,
    selfplay_events: usize,
    games: Vec<ReplayGame>,
}

#[derive(Debug, Default)]
struct Totals {
    games: Option<u64>,
    positions: Option<u64>,
    steps: Option<u64>,
    accepted: usize,
}

#[derive(Debug)]
struct Report {
    name: String,
    root: PathBuf,
    config: Option<String>,
    generated: u64,
    events: usize,
    totals: Totals,
    current: Option<String>,
    best_player: Option<String>,
    /// Latest value of each numeric field of the `train` and `selfplay` events.
    train_latest: BTreeMap<String, f64>,
    selfplay_latest: BTreeMap<String, f64>,
    warnings: Vec<String>,
    data: PageData,
}

/// The training step in a model name such as `s0000001200` (see `rundir::model_name`).
fn step_of(name: &str) -> Option<u64> {
    name.strip_prefix('s')?.parse().ok()
}

/// Elo, its interval, and which edge to draw it at when it is unbounded.
type EloFields = (Option<f64>, Option<f64>, Option<f64>, Option<&'static str>);

fn elo_fields(m: &MatchSummary) -> EloFields {
    // JSON has no infinity: an unbounded Elo (a 100% or 0% score) is written as null.
    let unbounded = match (m.elo, m.score) {
        (Some(e), _) if e == f64::INFINITY => Some("top"),
        (Some(e), _) if e == f64::NEG_INFINITY => Some("bottom"),
        (Some(_), _) => None,
        (None, Some(s)) if s >= 1.0 => Some("top"),
        (None, Some(s)) if s <= 0.0 => Some("bottom"),
        _ => None,
    };
    (
        m.elo.filter(|e| e.is_finite()),
        m.elo_lower.filter(|e| e.is_finite()),
        m.elo_upper.filter(|e| e.is_finite()),
        unbounded,
    )
}

/// Finite numeric fields of an event (bookkeeping fields left out), for the charts.
fn numeric_fields(v: &Value) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    if let Some(obj) = v.as_object() {
        for (k, x) in obj {
            if k == "time" || k == "kind" {
                continue;
            }
            if let Some(x) = x.as_f64().filter(|x| x.is_finite()) {
                out.insert(k.clone(), x);
            }
        }
    }
    out
}

/// Keeps at most `max` evenly spaced items, always the first and the last.
fn thin<T: Clone>(items: Vec<T>, max: usize) -> Vec<T> {
    if items.len() <= max || max < 2 {
        return items;
    }
    let n = items.len();
    (0..max)
        .map(|i| items[i * (n - 1) / (max - 1)].clone())
        .collect()
}

fn gather(run: &RunDir, selfplay_games: usize, match_games: usize) -> Result<Report> {
    let root = run.root().to_path_buf();
    let mut warnings = Vec::new();
    let log = run.events()?;
    let skipped = &log.unreadable;
    if !skipped.is_empty() {
        let shown: Vec<String> = skipped.iter().take(10).map(ToString::to_string).collect();
        warnings.push(format!(
            "events.jsonl: {} unreadable line(s) skipped (line {}{})",
            skipped.len(),
            shown.join(", "),
            if skipped.len() > 10 { ", ..." } else { "" }
        ));
    }
    let mut data = PageData::default();
    let mut totals = Totals::default();
    let mut accepted: BTreeSet<String> = BTreeSet::new();
    let mut best_player: Option<String> = None;
    let incomplete = &log.incomplete;
    let mut per_worker: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let (mut sum_games, mut sum_positions) = (None::<u64>, None::<u64>);
    let mut max_step: Option<u64> = None;
    let mut train_latest = BTreeMap::new();
    let mut selfplay_latest = BTreeMap::new();

    for record in &log.records {
        let time = record.time;
        match &record.event {
            Event::Rating(r) => {
                let m = &r.result;
                let (elo, lo, hi, unbounded) = elo_fields(m);
                data.ratings.push(Rating {
                    step: r.step.or_else(|| step_of(&r.model)),
                    model: r.model.clone(),
                    opponent: r.opponent.clone(),
                    games: Some(m.games),
                    score: m.score,
                    elo,
                    lo,
                    hi,
                    unbounded,
                    time,
                });
            }
            Event::Gate(g) => {
                let m = &g.result;
                let (elo, lo, hi, unbounded) = elo_fields(m);
                if g.accepted {
                    accepted.insert(g.candidate.clone());
                }
                // A gate decided without games (the first network) has no score.
                let played = m.games != 0;
                data.gates.push(Gate {
                    step: Some(g.step)
                        .filter(|s| *s > 0)
                        .or_else(|| step_of(&g.candidate)),
                    opponent: g
                        .opponent
                        .clone()
                        .or_else(|| Some(m.b.clone()).filter(|b| !b.is_empty())),
                    candidate: g.candidate.clone(),
                    accepted: Some(g.accepted),
                    games: Some(m.games),
                    score: m.score.filter(|_| played),
                    elo,
                    lo,
                    hi,
                    unbounded: unbounded.filter(|_| played),
                    reason: Some(g.reason.clone()).filter(|r| !r.is_empty()),
                    llr: m.sprt.map(|s| s.llr).filter(|x| x.is_finite()),
                    time,
                });
            }
            Event::Train(t) => {
                let fields = numeric_fields(&serde_json::to_value(t)?);
                max_step = max_step.max(Some(t.step));
                train_latest.extend(fields.clone());
                data.train.push(fields);
            }
            Event::Candidate { step, .. } => {
                max_step = max_step.max(Some(*step));
            }
            Event::Selfplay(sp) => {
                let mut fields = numeric_fields(&serde_json::to_value(sp)?);
                let entry = per_worker.entry(sp.worker.clone()).or_default();
                entry.0 = entry.0.max(sp.games);
                entry.1 = entry.1.max(sp.positions);
                sum_games = Some(per_worker.values().map(|w| w.0).sum());
                sum_positions = Some(per_worker.values().map(|w| w.1).sum());
                #[allow(clippy::cast_precision_loss)]
                let x = sum_games.map_or(data.selfplay.len() as f64 + 1.0, |g| g as f64);
                selfplay_latest.extend(fields.clone());
                fields.insert("x".into(), x);
                if let Some(t) = time {
                    #[allow(clippy::cast_precision_loss)]
                    fields.insert("time".into(), t as f64);
                }
                data.selfplay.push(fields);
            }
            Event::Promote { model, .. } => {
                accepted.insert(model.clone());
            }
            Event::Export { model, path, .. } => {
                let p = if path.is_relative() {
                    root.join(path)
                } else {
                    path.clone()
                };
                let model = model
                    .as_ref()
                    .map(|m| format!(" (network {m})"))
                    .unwrap_or_default();
                best_player = Some(format!("{}{model}", p.display()));
            }
            Event::Warning { .. } => {}
        }
    }
    for (k, n) in incomplete {
        warnings.push(format!(
            "events.jsonl: {n} {k} event(s) without their key fields skipped"
        ));
    }
    if let Ok(entries) = fs::read_dir(run.accepted_dir()) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if step_of(&name).is_some() && e.file_type().is_ok_and(|t| t.is_dir()) {
                accepted.insert(name);
            }
        }
    }
    let current = match run.accepted() {
        Ok(m) => m,
        Err(e) => {
            warnings.push(format!("{e:#}"));
            None
        }
    };
    if best_player.is_none() {
        best_player = current.as_ref().map(|m| {
            format!(
                "{} (accepted network {}, not exported yet)",
                run.model_path(m).display(),
                m.name
            )
        });
    }
    totals.games = sum_games;
    totals.positions = sum_positions;
    totals.steps = max_step;
    totals.accepted = accepted.len();

    data.train_events = data.train.len();
    data.selfplay_events = data.selfplay.len();
    data.train = thin(std::mem::take(&mut data.train), MAX_POINTS);
    data.selfplay = thin(std::mem::take(&mut data.selfplay), MAX_POINTS);
    data.ratings = thin(std::mem::take(&mut data.ratings), MAX_POINTS * 4);
    data.gates = thin(std::mem::take(&mut data.gates), MAX_POINTS);

    data.games = latest_games(
        run,
        &run.games_dir(),
        "self-play",
        selfplay_games,
        usize::MAX,
        &mut warnings,
    );
    data.games.extend(latest_games(
        run,
        &run.matches_dir(),
        "match",
        match_games,
        MATCH_GAMES_PER_FILE,
        &mut warnings,
    ));

    let config_path = run.config_path();
    let config = match fs::read(&config_path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            warnings.push(format!("cannot read {}: {e}", config_path.display()));
            None
        }
    };
    let abs = fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
    let name = abs.file_name().map_or_else(
        || abs.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(Report {
        name,
        root: abs,
        config,
        generated: now(),
        events: log.records.len(),
        totals,
        current: current.map(|m| format!("{} (step {})", m.name, m.step)),
        best_player,
        train_latest,
        selfplay_latest,
        warnings,
        data,
    })
}

/// `*.pgn` files of a directory, newest first (modification time, then name).
fn pgn_files_newest_first(dir: &Path, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            warnings.push(format!("cannot list {}: {e}", dir.display()));
            return Vec::new();
        }
    };
    let mut files: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            // Writers rename `.name.tmp` files into place; those are not records yet.
            name.ends_with(".pgn")
                && !name.starts_with('.')
                && e.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|e| {
            let time = e
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (time, e.path())
        })
        .collect();
    files.sort_by(|a, b| b.cmp(a));
    files.into_iter().map(|(_, p)| p).collect()
}

/// The newest `want` games of a directory of PGN files, newest first, at most
/// `per_file` from one file. Unreadable games are skipped and noted.
fn latest_games(
    run: &RunDir,
    dir: &Path,
    kind: &'static str,
    want: usize,
    per_file: usize,
    warnings: &mut Vec<String>,
) -> Vec<ReplayGame> {
    let mut out = Vec::new();
    if want == 0 {
        return out;
    }
    for path in pgn_files_newest_first(dir, warnings)
        .into_iter()
        .take(MAX_FILES)
    {
        let rel = path
            .strip_prefix(run.root())
            .unwrap_or(&path)
            .display()
            .to_string();
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                warnings.push(format!("cannot read {rel}: {e}"));
                continue;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        let parsed = read_pgn(&text);
        let total = parsed.len();
        let mut good: Vec<(usize, PgnGame)> = Vec::new();
        for (i, g) in parsed.into_iter().enumerate() {
            match g {
                Ok(g) => good.push((i + 1, g)),
                Err(e) => warnings.push(format!("{rel}: game {} of {total} skipped: {e}", i + 1)),
            }
        }
        let take = per_file.min(want - out.len());
        for (number, g) in good.into_iter().rev().take(take) {
            out.push(replay(
                kind,
                &format!("{rel}, game {number} of {total}"),
                &g,
                warnings,
            ));
        }
        if out.len() >= want {
            break;
        }
    }
    out
}

/// Replays a game for the board: FENs of every position and the moves in notation.
fn replay(kind: &'static str, source: &str, g: &PgnGame, warnings: &mut Vec<String>) -> ReplayGame {
    let tag = |k: &str| g.header(k).unwrap_or("").to_owned();
    let mut pos = g.start.clone();
    let mut fens = vec![pos.fen()];
    let mut iccs = Vec::new();
    let mut moves = Vec::new();
    let mut note = None;
    for (i, &m) in g.moves.iter().enumerate() {
        if i == MAX_PLIES {
            note = Some(format!(
                "only the first {MAX_PLIES} of {} plies are shown",
                g.moves.len()
            ));
            break;
        }
        let written = format_move(&pos, m, Style::Chinese);
        if let Err(e) = pos.play(m) {
            // read_pgn checks legality, so this would be a disagreement between readers.
            warnings.push(format!(
                "{source}: move {} ({m}) cannot be replayed: {e}",
                i + 1
            ));
            note = Some(format!("replay stopped at move {}", i + 1));
            break;
        }
        moves.push(written);
        iccs.push(m.to_string());
        fens.push(pos.fen());
    }
    let result = g
        .header("Result")
        .map(str::to_owned)
        .or_else(|| g.result.map(|r| r.pgn().to_owned()))
        .unwrap_or_else(|| "*".into());
    let title = match kind {
        "self-play" => {
            let round = tag("Round");
            let worker = tag("Worker");
            let mut t = String::from("Self-play game");
            if !round.is_empty() {
                let _ = write!(t, " {round}");
            }
            if !worker.is_empty() {
                let _ = write!(t, " (worker {worker})");
            }
            t
        }
        _ => {
            let event = tag("Event");
            let round = tag("Round");
            match (event.is_empty(), round.is_empty()) {
                (true, _) => "Match game".to_owned(),
                (false, true) => event,
                (false, false) => format!("{event}, game {round}"),
            }
        }
    };
    ReplayGame {
        kind,
        title,
        red: tag("Red"),
        black: tag("Black"),
        result,
        termination: tag("Termination"),
        source: source.to_owned(),
        fens,
        iccs,
        moves,
        note,
    }
}

// ---------------------------------------------------------------------------------
// The page.

/// Escapes text for HTML element content and quoted attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON for a `<script type="application/json">` element: `<`, `>` and `&` (which
/// JSON only has inside strings) become `\u` escapes, so no `</script>` or `<!--` in
/// the data can end the element early.
fn script_json(v: &impl Serialize) -> Result<String> {
    let json = serde_json::to_string(v).context("cannot encode the report data")?;
    Ok(json
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026"))
}

/// `YYYY-MM-DD HH:MM:SS UTC` of Unix seconds.
fn utc(secs: u64) -> String {
    #[allow(clippy::cast_possible_wrap)]
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn fmt_count(n: Option<u64>) -> String {
    n.map_or_else(|| "—".to_owned(), |n| n.to_string())
}

fn fmt_value(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else if x.abs() >= 0.01 {
        format!("{x:.4}")
    } else {
        // Shortest form that reads back: 0.002, 1e-5.
        format!("{x}")
    }
}

fn fmt_score(score: Option<f64>, games: Option<u64>) -> String {
    match (score, games) {
        (Some(s), Some(g)) => format!("{:.1}% of {g}", s * 100.0),
        (Some(s), None) => format!("{:.1}%", s * 100.0),
        (None, Some(g)) => format!("{g} games"),
        (None, None) => String::new(),
    }
}

/// `+123 [+80, +170]`, or the score's meaning when the Elo is unbounded.
fn fmt_elo(elo: Option<f64>, lo: Option<f64>, hi: Option<f64>, unbounded: Option<&str>) -> String {
    match (elo, unbounded) {
        (_, Some("top")) => "+∞ (won every game)".to_owned(),
        (_, Some(_)) => "−∞ (lost every game)".to_owned(),
        (Some(e), None) => match (lo, hi) {
            (Some(l), Some(h)) => format!("{e:+.0} [{l:+.0}, {h:+.0}]"),
            _ => format!("{e:+.0}"),
        },
        (None, None) => "—".to_owned(),
    }
}

fn empty(out: &mut String, what: &str) {
    let _ = writeln!(out, "<p class=\"empty\">No data yet: {}</p>", esc(what));
}

fn render(r: &Report) -> Result<String> {
    let mut h = String::with_capacity(64 * 1024);
    let d = &r.data;
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"xqz report\">\n\
         <title>xqzero report: {name}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
         <header><h1>xqzero report: <span id=\"run-name\">{name}</span></h1>\
         <p class=\"sub\">Generated {gen} from <code>{root}</code></p></header>\n\
         <nav><a href=\"#summary\">Summary</a> <a href=\"#strength\">Strength</a> \
         <a href=\"#training\">Training</a> <a href=\"#selfplay\">Self-play</a> \
         <a href=\"#games\">Games</a></nav>\n<main>\n",
        name = esc(&r.name),
        gen = esc(&utc(r.generated)),
        root = esc(&r.root.display().to_string()),
    );
    if !r.warnings.is_empty() {
        let _ = write!(
            h,
            "<section id=\"problems\" class=\"warn\"><details open><summary>{} problem(s) \
             reading the run (skipped)</summary><ul>",
            r.warnings.len()
        );
        for w in r.warnings.iter().take(MAX_WARNINGS) {
            let _ = write!(h, "<li>{}</li>", esc(w));
        }
        if r.warnings.len() > MAX_WARNINGS {
            let _ = write!(h, "<li>and {} more</li>", r.warnings.len() - MAX_WARNINGS);
        }
        h.push_str("</ul></details></section>\n");
    }
    render_summary(&mut h, r);
    render_strength(&mut h, d);
    render_training(&mut h, r);
    render_selfplay(&mut h, r);
    h.push_str("<section id=\"games\"><h2>Games</h2>\n");
    if d.games.is_empty() {
        empty(
            &mut h,
            "no self-play or match games recorded (games/*.pgn, matches/*.pgn).",
        );
    } else {
        h.push_str(
            "<p class=\"hint\">The newest self-play games and gating/rating games. Step \
             with the buttons, the arrow keys (click a board first) or a move.</p>\n",
        );
    }
    h.push_str("<div id=\"games-host\"></div></section>\n</main>\n");
    let _ = write!(
        h,
        "<noscript><p class=\"warn\">Charts and boards need JavaScript.</p></noscript>\n\
         <script type=\"application/json\" id=\"xqz-data\">{}</script>\n<script>\n{JS}</script>\n\
         </body>\n</html>\n",
        script_json(d)?
    );
    Ok(h)
}

fn render_summary(h: &mut String, r: &Report) {
    h.push_str("<section id=\"summary\"><h2>Summary</h2>\n<table class=\"kv\">\n");
    let mut row = |k: &str, v: &str| {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    };
    row("Run", &r.name);
    row("Self-play games", &fmt_count(r.totals.games));
    row("Positions", &fmt_count(r.totals.positions));
    row("Training steps", &fmt_count(r.totals.steps));
    row("Accepted networks", &r.totals.accepted.to_string());
    row(
        "Current network",
        r.current.as_deref().unwrap_or("none yet"),
    );
    row(
        "Best player",
        r.best_player.as_deref().unwrap_or("none yet"),
    );
    row("Events", &r.events.to_string());
    row("Generated", &utc(r.generated));
    h.push_str("</table>\n");
    match &r.config {
        Some(c) => {
            let _ = writeln!(
                h,
                "<details class=\"config\"><summary>Configuration (config.toml)</summary>\
                 <pre id=\"config\">{}</pre></details>",
                esc(c)
            );
        }
        None => empty(h, "the run has no config.toml."),
    }
    h.push_str("</section>\n");
}

fn render_strength(h: &mut String, d: &PageData) {
    h.push_str("<section id=\"strength\"><h2>Strength</h2>\n<h3>Elo against the baselines</h3>\n");
    if d.ratings.is_empty() {
        empty(
            h,
            "no rating matches (each accepted network is rated against the baselines).",
        );
    } else {
        h.push_str(
            "<div class=\"chart\" data-chart=\"elo\"></div>\n<p class=\"hint\">Elo of each \
             accepted network (by training step) against each baseline, with 95% intervals. \
             Triangles at an edge: the network won (or lost) every game, so its Elo is \
             unbounded.</p>\n",
        );
        // Latest rating of each (model, opponent).
        let mut opponents: BTreeSet<&str> = BTreeSet::new();
        let mut models: Vec<(Option<u64>, &str)> = Vec::new();
        let mut cell: BTreeMap<(&str, &str), &Rating> = BTreeMap::new();
        for r in &d.ratings {
            opponents.insert(&r.opponent);
            if !models.iter().any(|(_, m)| *m == r.model) {
                models.push((r.step, &r.model));
            }
            cell.insert((&r.model, &r.opponent), r);
        }
        models.sort_by_key(|(s, _)| *s);
        h.push_str("<table class=\"grid\" id=\"ratings\"><thead><tr><th>Network</th><th>Step</th>");
        for o in &opponents {
            let _ = write!(h, "<th>vs {}</th>", esc(o));
        }
        h.push_str("</tr></thead><tbody>\n");
        for (step, m) in &models {
            let _ = write!(h, "<tr><td>{}</td><td>{}</td>", esc(m), fmt_count(*step));
            for o in &opponents {
                match cell.get(&(*m, *o)) {
                    Some(r) => {
                        let _ = write!(
                            h,
                            "<td>{}<br><small>{}</small></td>",
                            esc(&fmt_elo(r.elo, r.lo, r.hi, r.unbounded)),
                            esc(&fmt_score(r.score, r.games))
                        );
                    }
                    None => h.push_str("<td></td>"),
                }
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody></table>\n");
    }
    h.push_str("<h3>Gating</h3>\n");
    if d.gates.is_empty() {
        empty(h, "no gating matches.");
    } else {
        h.push_str(
            "<div class=\"chart\" data-chart=\"gate\"></div>\n<p class=\"hint\">Elo of each \
             candidate against the network accepted at the time, with 95% intervals; filled: \
             accepted, hollow: rejected.</p>\n<table class=\"grid\" id=\"gates\"><thead><tr>\
             <th>Candidate</th><th>Step</th><th>Against</th><th>Games</th><th>Score</th>\
             <th>Elo [95%]</th><th>LLR</th><th>Decision</th><th>Reason</th><th>Time</th></tr>\
             </thead><tbody>\n",
        );
        const MAX_ROWS: usize = 100;
        for g in d.gates.iter().rev().take(MAX_ROWS) {
            let decision = match g.accepted {
                Some(true) => "<td class=\"yes\">accepted</td>",
                Some(false) => "<td class=\"no\">rejected</td>",
                None => "<td>?</td>",
            };
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{decision}<td>{}</td><td>{}</td></tr>",
                esc(&g.candidate),
                fmt_count(g.step),
                esc(g.opponent.as_deref().unwrap_or("")),
                fmt_count(g.games),
                esc(&g
                    .score
                    .map_or(String::new(), |s| format!("{:.1}%", s * 100.0))),
                esc(&fmt_elo(g.elo, g.lo, g.hi, g.unbounded)),
                g.llr.map_or(String::new(), |l| format!("{l:.2}")),
                esc(g.reason.as_deref().unwrap_or("")),
                g.time.map_or(String::new(), utc),
            );
        }
        h.push_str("</tbody></table>\n");
        if d.gates.len() > MAX_ROWS {
            let _ = writeln!(
                h,
                "<p class=\"hint\">The newest {MAX_ROWS} of {} gating matches.</p>",
                d.gates.len()
            );
        }
    }
    h.push_str("</section>\n");
}

fn latest_table(h: &mut String, id: &str, latest: &BTreeMap<String, f64>) {
    let _ = writeln!(
        h,
        "<table class=\"kv\" id=\"{id}\"><tr><th colspan=\"2\">Latest values</th></tr>"
    );
    for (k, v) in latest {
        let _ = writeln!(
            h,
            "<tr><th>{}</th><td>{}</td></tr>",
            esc(k),
            esc(&fmt_value(*v))
        );
    }
    h.push_str("</table>\n");
}

fn thinned_note(h: &mut String, shown: usize, total: usize) {
    if shown < total {
        let _ = writeln!(
            h,
            "<p class=\"hint\">{shown} of {total} events are plotted (evenly spaced).</p>"
        );
    }
}

fn render_training(h: &mut String, r: &Report) {
    h.push_str("<section id=\"training\"><h2>Training</h2>\n");
    if r.data.train.is_empty() {
        empty(h, "no training steps logged.");
    } else {
        h.push_str(
            "<div class=\"charts\"><div class=\"chart\" data-chart=\"loss\"></div>\
             <div class=\"chart\" data-chart=\"accuracy\"></div>\
             <div class=\"chart\" data-chart=\"lr\"></div></div>\n",
        );
        thinned_note(h, r.data.train.len(), r.data.train_events);
        latest_table(h, "train-latest", &r.train_latest);
    }
    h.push_str("</section>\n");
}

fn render_selfplay(h: &mut String, r: &Report) {
    h.push_str("<section id=\"selfplay\"><h2>Self-play</h2>\n");
    if r.data.selfplay.is_empty() {
        empty(h, "no self-play statistics logged.");
    } else {
        h.push_str(
            "<div class=\"charts\"><div class=\"chart\" data-chart=\"results\"></div>\
             <div class=\"chart\" data-chart=\"length\"></div>\
             <div class=\"chart\" data-chart=\"rates\"></div>\
             <div class=\"chart\" data-chart=\"batch\"></div></div>\n",
        );
        thinned_note(h, r.data.selfplay.len(), r.data.selfplay_events);
        latest_table(h, "selfplay-latest", &r.selfplay_latest);
    }
    h.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_the_script_element() {
        let v = serde_json::json!({"name": "</script><script>alert(1)</script><!--"});
        let s = script_json(&v).unwrap();
        assert!(!s.contains('<') && !s.contains('>'), "{s}");
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn html_escaping_covers_markup_and_quotes() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn utc_formats_known_instants() {
        for (secs, want) in [
            (0, "1970-01-01 00:00:00 UTC"),
            (951_782_400, "2000-02-29 00:00:00 UTC"),
            (1_798_761_599, "2026-12-31 23:59:59 UTC"),
        ] {
            assert_eq!(utc(secs), want);
        }
    }

    #[test]
    fn unbounded_elo_follows_infinities_and_perfect_scores() {
        let cases = [
            (serde_json::json!({"elo": null, "score": 1.0}), Some("top")),
            (
                serde_json::json!({"elo": "-inf", "score": 0.0}),
                Some("bottom"),
            ),
            (serde_json::json!({"elo": "inf"}), Some("top")),
            (serde_json::json!({"score": 0.0}), Some("bottom")),
            (serde_json::json!({"elo": 35.0, "score": 0.55}), None),
            (serde_json::json!({"score": 0.5}), None),
        ];
        for (v, want) in cases {
            let m: MatchSummary = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(elo_fields(&m).3, want, "{v}");
        }
    }

    #[test]
    fn thinning_keeps_first_and_last() {
        let v: Vec<u32> = (0..10_000).collect();
        let t = thin(v, 100);
        assert_eq!(t.len(), 100);
        assert_eq!((t[0], t[99]), (0, 9_999));
        assert!(t.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(thin(vec![1, 2, 3], 100), vec![1, 2, 3]);
    }
}
