//! What `xqz report` shows, gathered from a run directory: ratings and gating results,
//! the learning curve on the anchored scale ([`crate::curve`]), training and self-play
//! curves (thinned), totals, warnings about what could not be read, and recent games
//! prepared for replay. The binary renders it as HTML and a few lines of text.
//!
//! Reading is tolerant because a report is most wanted when something went wrong: a
//! torn event line, an incomplete event, an unreadable PGN file or an illegal move in
//! it, or a malformed strength file is skipped and named in [`Report::warnings`],
//! never an error.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
    time::SystemTime,
};

use serde::Serialize;
use serde_json::Value;
use xq_core::notation::{Style, format_move};
use xq_data::pgn::{PgnGame, read_pgn};
use xq_rating::{stats::fmt_elo, strength::AnchorTable, summary::MatchSummary};

use crate::{
    RunDir, RunError,
    curve::{CurvePoint, SelfplayTotals, learning_curve, read_strength_records},
    events::{Event, GauntletEvent, HoldoutSplit, WarningWhat},
    model_step, now,
};

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
/// One rating match of an accepted network against a baseline.
#[derive(Debug, Clone, Serialize)]
pub struct Rating {
    pub model: String,
    pub step: Option<u64>,
    pub opponent: String,
    pub games: Option<u64>,
    pub score: Option<f64>,
    #[serde(flatten)]
    pub elo: EloView,
    pub time: Option<u64>,
}

/// One gating match of a candidate against the accepted network.
#[derive(Debug, Clone, Serialize)]
pub struct Gate {
    pub candidate: String,
    pub step: Option<u64>,
    pub opponent: Option<String>,
    pub accepted: Option<bool>,
    pub games: Option<u64>,
    pub score: Option<f64>,
    #[serde(flatten)]
    pub elo: EloView,
    pub reason: Option<String>,
    pub llr: Option<f64>,
    pub time: Option<u64>,
}

/// An anchor's rating, drawn as a reference line under the learning curve.
#[derive(Debug, Clone, Serialize)]
pub struct AnchorLine {
    pub name: String,
    pub elo: f64,
}

/// A game prepared for the board: one FEN per position, ply 0 the start.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayGame {
    /// `self-play` or `match`.
    pub kind: &'static str,
    pub title: String,
    pub red: String,
    pub black: String,
    pub result: String,
    pub termination: String,
    /// The file (relative to the run) and the game's number in it.
    pub source: String,
    pub fens: Vec<String>,
    pub iccs: Vec<String>,
    /// Chinese notation, one per move.
    pub moves: Vec<String>,
    pub note: Option<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct PageData {
    pub ratings: Vec<Rating>,
    pub gates: Vec<Gate>,
    /// The accepted networks on the anchored scale, by source and step.
    pub curve: Vec<CurvePoint>,
    /// The anchors of that scale, weakest first.
    pub anchors: Vec<AnchorLine>,
    /// Numeric fields of `train` events; each point has `step`.
    pub train: Vec<BTreeMap<String, f64>>,
    /// Numeric fields of `selfplay` events, plus `x`: games played so far (or the event
    /// number when events carry no game counts).
    pub selfplay: Vec<BTreeMap<String, f64>>,
    /// Held-out losses and top-1 agreement, one point per `holdout` event: `step` and
    /// `holdout_<split>_{policy_loss,value_loss,policy_accuracy}`, drawn beside the
    /// training curves.
    pub holdout: Vec<BTreeMap<String, f64>>,
    /// The end-of-run round robins that chose the exported player, in order.
    pub gauntlets: Vec<GauntletEvent>,
    /// Events before thinning, when thinned (chart captions say so).
    pub train_events: usize,
    pub selfplay_events: usize,
    pub games: Vec<ReplayGame>,
}

#[derive(Debug, Default)]
pub struct Totals {
    pub games: Option<u64>,
    pub positions: Option<u64>,
    pub steps: Option<u64>,
    pub accepted: usize,
}

#[derive(Debug)]
pub struct Report {
    pub name: String,
    pub root: PathBuf,
    pub config: Option<String>,
    pub generated: u64,
    pub events: usize,
    pub totals: Totals,
    pub current: Option<String>,
    pub best_player: Option<String>,
    /// Latest value of each numeric field of the `train` and `selfplay` events.
    pub train_latest: BTreeMap<String, f64>,
    pub selfplay_latest: BTreeMap<String, f64>,
    pub warnings: Vec<String>,
    /// The run's own `warning` events (files skipped or repaired, exports that
    /// failed), counted by what they were about; `other` for those that do not say.
    pub run_warnings: BTreeMap<&'static str, u64>,
    /// The messages of the run's warnings about its training itself (a self-play colour
    /// imbalance), which the page shows in full rather than counted.
    pub alerts: Vec<String>,
    pub data: PageData,
}

/// A match's Elo as the report and the run's summary show it: finite values only,
/// and the edge an unbounded one is drawn at. It is serialised flat into its rating
/// or gate row (`elo`, `lo`, `hi`, `unbounded`), which the page's charts read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct EloView {
    pub elo: Option<f64>,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    /// `"top"` / `"bottom"` when the Elo is infinite or missing because the score was
    /// 100% / 0%: the chart then draws a marker at its edge and the table the score.
    pub unbounded: Option<&'static str>,
}

impl EloView {
    /// The Elo of match `m`.
    pub fn of(m: &MatchSummary) -> EloView {
        // JSON has no infinity: an unbounded Elo (a 100% or 0% score) is written as null.
        let unbounded = match (m.elo, m.score) {
            (Some(e), _) if e == f64::INFINITY => Some("top"),
            (Some(e), _) if e == f64::NEG_INFINITY => Some("bottom"),
            (Some(_), _) => None,
            (None, Some(s)) if s >= 1.0 => Some("top"),
            (None, Some(s)) if s <= 0.0 => Some("bottom"),
            _ => None,
        };
        EloView {
            elo: m.elo.filter(|e| e.is_finite()),
            lo: m.elo_lower.filter(|e| e.is_finite()),
            hi: m.elo_upper.filter(|e| e.is_finite()),
            unbounded,
        }
    }

    /// The Elo as [`fmt_elo`] writes it, or `—` when there is none.
    pub fn text(&self) -> String {
        match (self.unbounded, self.elo) {
            (Some("top"), _) => fmt_elo(f64::INFINITY, None),
            (Some(_), _) => fmt_elo(f64::NEG_INFINITY, None),
            (None, Some(e)) => fmt_elo(e, self.lo.zip(self.hi)),
            (None, None) => "—".to_owned(),
        }
    }
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

/// An event as JSON, for [`numeric_fields`] (an event holds numbers, strings and JSON
/// values, so it always converts).
fn json_of(event: &impl Serialize) -> Value {
    serde_json::to_value(event).unwrap_or(Value::Null)
}

/// Gathers what `xqz report` shows of `run`, with the newest `selfplay_games` self-play
/// games and `match_games` match games (see the module documentation).
///
/// # Errors
/// Only if the event log exists but cannot be read; everything else unreadable is
/// listed in [`Report::warnings`].
pub fn gather(run: &RunDir, selfplay_games: usize, match_games: usize) -> Result<Report, RunError> {
    let root = run.root().to_path_buf();
    let mut warnings = Vec::new();
    let mut run_warnings = BTreeMap::new();
    let mut alerts = Vec::new();
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
    let mut selfplay_totals: Option<SelfplayTotals> = None;
    let mut max_step: Option<u64> = None;
    let mut train_latest = BTreeMap::new();
    let mut selfplay_latest = BTreeMap::new();

    for record in &log.records {
        let time = record.time;
        match &record.event {
            Event::Rating(r) => {
                let m = &r.result;
                data.ratings.push(Rating {
                    step: r.step.or_else(|| model_step(&r.model)),
                    model: r.model.clone(),
                    opponent: r.opponent.clone(),
                    games: Some(m.games),
                    score: m.score,
                    elo: EloView::of(m),
                    time,
                });
            }
            Event::Gate(g) => {
                let m = &g.result;
                let elo = EloView::of(m);
                if g.accepted {
                    accepted.insert(g.candidate.clone());
                }
                // A gate decided without games (the first network) has no score.
                let played = m.games != 0;
                data.gates.push(Gate {
                    step: Some(g.step)
                        .filter(|s| *s > 0)
                        .or_else(|| model_step(&g.candidate)),
                    opponent: g
                        .opponent
                        .clone()
                        .or_else(|| Some(m.b.clone()).filter(|b| !b.is_empty())),
                    candidate: g.candidate.clone(),
                    accepted: Some(g.accepted),
                    games: Some(m.games),
                    score: m.score.filter(|_| played),
                    elo: EloView {
                        unbounded: elo.unbounded.filter(|_| played),
                        ..elo
                    },
                    reason: Some(g.reason.clone()).filter(|r| !r.is_empty()),
                    llr: m.sprt.map(|s| s.llr).filter(|x| x.is_finite()),
                    time,
                });
            }
            Event::Train(t) => {
                let fields = numeric_fields(&json_of(t));
                max_step = max_step.max(Some(t.step));
                train_latest.extend(fields.clone());
                data.train.push(fields);
            }
            Event::Holdout(h) => {
                let split = match h.split {
                    HoldoutSplit::Records => "records",
                    HoldoutSplit::Selfplay => "selfplay",
                    HoldoutSplit::Other => "other",
                };
                #[allow(clippy::cast_precision_loss)]
                let mut point = BTreeMap::from([("step".to_owned(), h.step as f64)]);
                let mut put = |what: &str, v: Option<f64>| {
                    if let Some(v) = v.filter(|v| v.is_finite()) {
                        point.insert(format!("holdout_{split}_{what}"), v);
                    }
                };
                put("policy_loss", Some(h.policy_loss));
                put("value_loss", h.value_loss);
                put("policy_accuracy", Some(h.policy_top1));
                data.holdout.push(point);
            }
            Event::Candidate { step, .. } => {
                max_step = max_step.max(Some(*step));
            }
            Event::Selfplay(sp) => {
                let mut fields = numeric_fields(&json_of(sp));
                let sums = selfplay_totals.get_or_insert_with(SelfplayTotals::default);
                sums.observe(sp);
                #[allow(clippy::cast_precision_loss)]
                let x = sums.games() as f64;
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
                let p = recorded_path(run, path);
                let model = model
                    .as_ref()
                    .map(|m| format!(" (network {m})"))
                    .unwrap_or_default();
                best_player = Some(format!("{}{model}", p.display()));
            }
            Event::Gauntlet(g) => data.gauntlets.push(g.clone()),
            Event::Warning { what, message, .. } => {
                let what = what.unwrap_or(WarningWhat::Other);
                *run_warnings.entry(what.as_str()).or_default() += 1;
                if what == WarningWhat::ColourBalance {
                    alerts.push(message.clone());
                }
            }
        }
    }
    for (k, n) in incomplete {
        warnings.push(format!(
            "events.jsonl: {n} {k} event(s) without their key fields skipped"
        ));
    }
    match run.accepted_models() {
        Ok(models) => accepted.extend(models.into_iter().map(|m| m.name)),
        Err(e) => warnings.push(e.to_string()),
    }
    let current = match run.accepted() {
        Ok(m) => m,
        Err(e) => {
            warnings.push(e.to_string());
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
    totals.games = selfplay_totals.as_ref().map(SelfplayTotals::games);
    totals.positions = selfplay_totals.as_ref().map(SelfplayTotals::positions);
    totals.steps = max_step;
    totals.accepted = accepted.len();

    data.train_events = data.train.len();
    data.selfplay_events = data.selfplay.len();
    data.train = thin(std::mem::take(&mut data.train), MAX_POINTS);
    data.selfplay = thin(std::mem::take(&mut data.selfplay), MAX_POINTS);
    data.holdout = thin(std::mem::take(&mut data.holdout), MAX_POINTS);
    data.ratings = thin(std::mem::take(&mut data.ratings), MAX_POINTS * 4);
    data.gates = thin(std::mem::take(&mut data.gates), MAX_POINTS);

    let anchors = AnchorTable::builtin();
    let strength = read_strength_records(&run.strength_dir(), &mut warnings);
    data.curve = learning_curve(&log, &strength, anchors);
    data.anchors = anchors
        .anchors
        .iter()
        .map(|a| AnchorLine {
            name: a.spec.clone(),
            elo: a.elo,
        })
        .collect();

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
        run_warnings,
        alerts,
        data,
    })
}

/// A path recorded in the event log, to show: relative paths are relative to the run
/// directory. Logs written before the export event recorded it that way hold the path
/// relative to the writer's working directory (`runs/q/players/s…` for `--run runs/q`),
/// which joined onto the root would name the run twice; for those, the longest tail of
/// the path that exists in the run directory is taken.
fn recorded_path(run: &RunDir, path: &Path) -> PathBuf {
    if path.is_absolute() || run.root().join(path).exists() {
        return run.root().join(path);
    }
    let parts: Vec<_> = path.components().collect();
    (1..parts.len())
        .map(|i| run.root().join(parts[i..].iter().collect::<PathBuf>()))
        .find(|p| p.exists())
        .unwrap_or_else(|| run.root().join(path))
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
            // Temporaries (`*.tmp`, xq_data::io::tmp_path) and hidden files are not
            // records yet.
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

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(EloView::of(&m).unbounded, want, "{v}");
        }
    }

    #[test]
    fn elo_is_shown_with_its_interval_or_as_the_edge_it_runs_off() {
        let view = |elo, lo, hi, unbounded| EloView {
            elo,
            lo,
            hi,
            unbounded,
        };
        assert_eq!(
            view(Some(35.4), Some(-10.0), Some(80.6), None).text(),
            "+35 [-10, +81]"
        );
        assert_eq!(view(Some(-5.0), None, None, None).text(), "-5");
        assert_eq!(
            view(None, None, None, Some("top")).text(),
            "+∞ (won every game)"
        );
        assert_eq!(
            view(None, None, None, Some("bottom")).text(),
            "−∞ (lost every game)"
        );
        assert_eq!(EloView::default().text(), "—");
    }

    #[test]
    fn recorded_paths_name_the_run_directory_once() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path().join("q")).unwrap();
        let player = run.players_dir().join("s0000000600");
        fs::create_dir_all(&player).unwrap();
        for recorded in [
            "players/s0000000600",
            // As logs before the fix wrote it for `--run runs/q`.
            "runs/q/players/s0000000600",
        ] {
            assert_eq!(
                recorded_path(&run, Path::new(recorded)),
                player,
                "{recorded}"
            );
        }
        assert_eq!(recorded_path(&run, &player), player);
        let gone = Path::new("players/s0000000750");
        assert_eq!(recorded_path(&run, gone), run.root().join(gone));
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
