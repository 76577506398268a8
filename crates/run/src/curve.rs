//! The learning curve: every accepted network of a run placed on the anchored strength
//! scale ([`xq_rating::strength`]), against the wall time, self-play positions and
//! training steps it took to get there.
//!
//! Two kinds of rating feed it. During a run, each newly accepted network plays a few
//! games at low visits against `[rating] opponents` (`rating` events), and the final
//! match plays more at the final visits (`rating` events with `final`); their results
//! against anchors are fitted here with [`AnchorLookup::rate`], results against
//! opponents that are not anchors are left out. After a run, `xqz strength` rates
//! players thoroughly and writes one [`StrengthRecord`] a player into `RUN/strength/`.
//! The sources are kept apart ([`CurveSource`]) because a cheap rating and a thorough
//! one of the same network are not the same measurement, and a curve that mixed them
//! would zigzag with the method, not with the network.
//!
//! Reading is tolerant like the rest of the report: a strength file that cannot be read
//! or is not a rating becomes a warning naming the file.

use std::{collections::BTreeMap, fs, path::Path};

use serde::Serialize;
use xq_eval::{anchors::AnchorLookup, spec::PlayerSpec};
use xq_rating::{
    stats::AnchorGames,
    strength::{AnchorTable, StrengthRecord},
};

use crate::{
    events::{Event, EventLog, SelfplayEvent},
    model_step,
};

/// Where a point's rating comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CurveSource {
    /// The short rating after the network's promotion (few games, low visits).
    InRun,
    /// The run's final match (more games, the final visits).
    Final,
    /// A rating by `xqz strength` after the run (`RUN/strength/*.json`).
    PostRun,
}

impl CurveSource {
    /// The name the page and the text summary show.
    pub const fn label(self) -> &'static str {
        match self {
            CurveSource::InRun => "in-run",
            CurveSource::Final => "final",
            CurveSource::PostRun => "post-run",
        }
    }
}

/// One network on the anchored scale.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurvePoint {
    pub model: String,
    /// The training step of the network.
    pub step: Option<u64>,
    /// Wall-clock seconds from the run's first event to the network's acceptance
    /// (pauses between restarts included). `None` when its acceptance is not logged.
    pub seconds: Option<u64>,
    /// Self-play positions of the whole run when the network was accepted.
    pub positions: Option<u64>,
    pub elo: f64,
    /// The 95% interval.
    pub lower: f64,
    pub upper: f64,
    /// Real games against anchors.
    pub games: u64,
    pub source: CurveSource,
    /// Search visits of the network in its rating games.
    pub visits: Option<u32>,
    /// Leaf-quiescence weight of that search, in percent (0: the plain AlphaZero
    /// search; rating events written before the field existed read as 0, which is what
    /// those runs played); `None` for a post-run rating of another kind of player.
    pub quiescence: Option<u8>,
    /// The time control of a post-run rating, as `xqz strength` states it.
    pub time_control: Option<String>,
    /// The games behind the rating, one entry an anchor.
    pub anchors: Vec<AnchorGames>,
}

/// Reads every `*.json` of `dir`, sorted by file name. A directory that does not exist
/// holds no records; a file that cannot be read or parsed is named in `warnings` (as
/// `strength/NAME`) and skipped.
pub fn read_strength_records(dir: &Path, warnings: &mut Vec<String>) -> Vec<StrengthRecord> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            warnings.push(format!("cannot list {}: {e}", dir.display()));
            return Vec::new();
        }
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        // Temporaries end in `.tmp` (xq_data::io::tmp_path), so are not taken.
        .filter(|n| n.ends_with(".json") && !n.starts_with('.'))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let shown = Path::new(xq_data::layout::STRENGTH_DIR).join(&name);
        let parsed = fs::read(dir.join(&name))
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()));
        match parsed {
            Ok(r) => out.push(r),
            Err(e) => warnings.push(format!(
                "{}: skipped, not a strength rating: {e}",
                shown.display()
            )),
        }
    }
    out
}

/// Self-play totals of a run so far: each worker's events carry its running totals,
/// so the largest value of each worker is summed.
#[derive(Debug, Default)]
pub struct SelfplayTotals {
    per_worker: BTreeMap<String, (u64, u64)>,
}

impl SelfplayTotals {
    pub fn observe(&mut self, e: &SelfplayEvent) {
        let w = self.per_worker.entry(e.worker.clone()).or_default();
        w.0 = w.0.max(e.games);
        w.1 = w.1.max(e.positions);
    }
    pub fn games(&self) -> u64 {
        self.per_worker.values().map(|w| w.0).sum()
    }
    pub fn positions(&self) -> u64 {
        self.per_worker.values().map(|w| w.1).sum()
    }
}

/// When a network was accepted, in the run's own measures.
#[derive(Debug, Clone, Copy, Default)]
struct Acceptance {
    step: Option<u64>,
    seconds: Option<u64>,
    positions: u64,
}

/// The learning curve of a run: one point per accepted network and rating source
/// (and per visit count, should a network be rated at two), ordered by source and
/// then step. Networks without games against any anchor have no point.
pub fn learning_curve(
    log: &EventLog,
    records: &[StrengthRecord],
    anchors: &AnchorTable,
) -> Vec<CurvePoint> {
    let start = log.records.iter().find_map(|r| r.time);
    let mut totals = SelfplayTotals::default();
    let mut accepted: BTreeMap<&str, Acceptance> = BTreeMap::new();
    // (model, source, visits, quiescence) -> games against each opponent, in log order.
    type Key<'a> = (&'a str, CurveSource, u32, u8);
    let mut rated: BTreeMap<Key, Vec<(&str, u64, u64, u64)>> = BTreeMap::new();
    let mut rated_steps: BTreeMap<&str, u64> = BTreeMap::new();
    for record in &log.records {
        let acceptance = |step: u64, totals: &SelfplayTotals| Acceptance {
            step: Some(step).filter(|s| *s > 0),
            seconds: since(start, record.time),
            positions: totals.positions(),
        };
        match &record.event {
            Event::Selfplay(s) => totals.observe(s),
            Event::Promote { model, step, .. } => {
                accepted.entry(model).or_insert(acceptance(*step, &totals));
            }
            Event::Gate(g) if g.accepted => {
                accepted
                    .entry(&g.candidate)
                    .or_insert(acceptance(g.step, &totals));
            }
            Event::Rating(r) => {
                let source = if r.is_final {
                    CurveSource::Final
                } else {
                    CurveSource::InRun
                };
                let m = &r.result;
                rated
                    .entry((&r.model, source, r.visits, r.quiescence))
                    .or_default()
                    .push((&r.opponent, m.wins, m.draws, m.losses));
                if let Some(s) = r.step {
                    rated_steps.insert(&r.model, s);
                }
            }
            _ => {}
        }
    }
    let mut points = Vec::new();
    for ((model, source, visits, quiescence), results) in rated {
        let games = anchor_games(anchors, &results);
        let Ok(rating) = anchors.rate(
            games
                .iter()
                .map(|g| (g.anchor.as_str(), g.wins, g.draws, g.losses)),
        ) else {
            continue;
        };
        let at = accepted.get(model).copied().unwrap_or_default();
        points.push(CurvePoint {
            model: model.to_owned(),
            step: at
                .step
                .or_else(|| rated_steps.get(model).copied())
                .or_else(|| model_step(model)),
            seconds: at.seconds,
            positions: accepted.contains_key(model).then_some(at.positions),
            elo: rating.elo,
            lower: rating.elo_lower,
            upper: rating.elo_upper,
            games: rating.games,
            source,
            visits: Some(visits).filter(|v| *v > 0),
            quiescence: Some(quiescence),
            time_control: None,
            anchors: games,
        });
    }
    for r in records {
        let model = r
            .model
            .clone()
            .or_else(|| model_step(&r.player).map(|_| r.player.clone()));
        let at = model.as_deref().and_then(|m| accepted.get(m).copied());
        // A network's own budget is its visits (and quiescence), said by its spec.
        let (visits, quiescence) = match r.player.parse() {
            Ok(PlayerSpec::Net {
                visits,
                quiescence_pct,
                ..
            }) => (Some(visits), Some(quiescence_pct)),
            _ => (None, None),
        };
        points.push(CurvePoint {
            step: r
                .step
                .or_else(|| at.and_then(|a| a.step))
                .or_else(|| model.as_deref().and_then(model_step)),
            model: model.unwrap_or_else(|| r.player.clone()),
            seconds: at.and_then(|a| a.seconds),
            positions: at.map(|a| a.positions),
            elo: r.rating.elo,
            lower: r.rating.elo_lower,
            upper: r.rating.elo_upper,
            games: r.rating.games,
            source: CurveSource::PostRun,
            visits,
            quiescence,
            time_control: Some(r.time_control.clone()).filter(|tc| tc != "own"),
            anchors: r.anchors.clone(),
        });
    }
    points.sort_by_key(|p| (p.source, p.step));
    points
}

fn since(start: Option<u64>, time: Option<u64>) -> Option<u64> {
    Some(time?.saturating_sub(start?))
}

/// The games against anchors among `results`, summed per anchor: a network rated twice
/// against one anchor (after a restart) has one entry, so the fit's prior counts once.
fn anchor_games(anchors: &AnchorTable, results: &[(&str, u64, u64, u64)]) -> Vec<AnchorGames> {
    let mut out: Vec<AnchorGames> = Vec::new();
    for &(name, wins, draws, losses) in results {
        let Some(a) = anchors.get(name) else { continue };
        match out.iter_mut().find(|g| g.anchor == a.spec) {
            Some(g) => {
                g.wins += wins;
                g.draws += draws;
                g.losses += losses;
            }
            None => out.push(AnchorGames {
                anchor: a.spec.clone(),
                anchor_elo: a.elo,
                wins,
                draws,
                losses,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    const T0: u64 = 1_790_000_000;

    fn rating(time: u64, model: &str, opponent: &str, wdl: [u64; 3], extra: Value) -> Value {
        let mut v = json!({"time": time, "kind": "rating", "model": model, "opponent": opponent,
            "visits": 24, "games": wdl.iter().sum::<u64>(), "wins": wdl[0], "draws": wdl[1],
            "losses": wdl[2]});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    }

    /// A run of three accepted networks: s100 rated in-run against two anchors and a
    /// network that is no anchor, s200 never rated, s300 rated in-run and in the final
    /// match; s400 only against a non-anchor.
    fn log() -> EventLog {
        let lines = [
            json!({"time": T0, "kind": "train", "step": 25}),
            json!({"time": T0 + 10, "kind": "selfplay", "worker": "a", "games": 4, "positions": 400}),
            json!({"time": T0 + 20, "kind": "selfplay", "worker": "b", "games": 2, "positions": 150}),
            json!({"time": T0 + 60, "kind": "gate", "candidate": "s0000000100", "step": 100, "accepted": true, "reason": "first"}),
            json!({"time": T0 + 60, "kind": "promote", "model": "s0000000100", "step": 100}),
            rating(
                T0 + 61,
                "s0000000100",
                "random",
                [8, 0, 0],
                json!({"step": 100}),
            ),
            rating(
                T0 + 62,
                "s0000000100",
                "greedy",
                [3, 2, 3],
                json!({"step": 100}),
            ),
            rating(
                T0 + 63,
                "s0000000100",
                "s0000000050",
                [8, 0, 0],
                json!({"step": 100}),
            ),
            // Cumulative per worker: a's 400 become 900, b stays at 150.
            json!({"time": T0 + 100, "kind": "selfplay", "worker": "a", "games": 9, "positions": 900}),
            json!({"time": T0 + 120, "kind": "promote", "model": "s0000000200", "step": 200}),
            json!({"time": T0 + 200, "kind": "promote", "model": "s0000000300", "step": 300}),
            rating(
                T0 + 201,
                "s0000000300",
                "alphabeta:depth=1",
                [4, 0, 4],
                json!({"step": 300}),
            ),
            rating(
                T0 + 300,
                "s0000000300",
                "greedy",
                [90, 4, 6],
                json!({"step": 300, "final": true, "visits": 800, "quiescence": 75}),
            ),
            json!({"time": T0 + 400, "kind": "promote", "model": "s0000000400", "step": 400}),
            rating(
                T0 + 401,
                "s0000000400",
                "net:somewhere.json",
                [5, 0, 3],
                json!({}),
            ),
        ];
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        let log = EventLog::parse(&text.join("\n"));
        assert_eq!(log.records.len(), lines.len(), "every synthetic line reads");
        log
    }

    fn find(curve: &[CurvePoint], model: &str, source: CurveSource) -> CurvePoint {
        curve
            .iter()
            .find(|p| p.model == model && p.source == source)
            .unwrap_or_else(|| panic!("no {source:?} point for {model}: {curve:#?}"))
            .clone()
    }

    #[test]
    fn each_rated_network_is_placed_at_its_acceptance() {
        let anchors = AnchorTable::builtin();
        let curve = learning_curve(&log(), &[], anchors);
        let p = find(&curve, "s0000000100", CurveSource::InRun);
        assert_eq!(
            (p.step, p.seconds, p.positions, p.visits),
            (Some(100), Some(60), Some(550), Some(24))
        );
        let q = find(&curve, "s0000000300", CurveSource::InRun);
        assert_eq!(
            (q.step, q.seconds, q.positions),
            (Some(300), Some(200), Some(1050))
        );
        // The rating is the anchored fit of the games against anchors only.
        let want = anchors
            .rate([("random", 8, 0, 0), ("greedy", 3, 2, 3)])
            .unwrap();
        assert_eq!(
            (p.elo, p.lower, p.upper, p.games),
            (want.elo, want.elo_lower, want.elo_upper, 16)
        );
        let names: Vec<&str> = p.anchors.iter().map(|a| a.anchor.as_str()).collect();
        assert_eq!(
            names,
            ["random", "greedy"],
            "the non-anchor opponent is left out"
        );
        assert!(p.lower < p.elo && p.elo < p.upper);
    }

    #[test]
    fn cheap_and_final_ratings_stay_apart() {
        let curve = learning_curve(&log(), &[], AnchorTable::builtin());
        let cheap = find(&curve, "s0000000300", CurveSource::InRun);
        let full = find(&curve, "s0000000300", CurveSource::Final);
        assert_eq!(
            (cheap.games, cheap.visits, cheap.quiescence),
            (8, Some(24), Some(0))
        );
        assert_eq!(
            (full.games, full.visits, full.quiescence),
            (100, Some(800), Some(75))
        );
        assert_eq!(full.anchors.len(), 1);
        assert!(full.upper - full.lower < cheap.upper - cheap.lower);
    }

    #[test]
    fn networks_without_games_against_anchors_have_no_point() {
        let curve = learning_curve(&log(), &[], AnchorTable::builtin());
        let models: Vec<(&str, CurveSource)> =
            curve.iter().map(|p| (p.model.as_str(), p.source)).collect();
        assert_eq!(
            models,
            [
                ("s0000000100", CurveSource::InRun),
                ("s0000000300", CurveSource::InRun),
                ("s0000000300", CurveSource::Final),
            ]
        );
    }

    fn record(model: Option<&str>, player: &str) -> StrengthRecord {
        serde_json::from_value(json!({
            "player": player, "model": model, "time_control": "depth 8",
            "rating": {"elo": 150.0, "stderr": 40.0, "elo_lower": 71.6, "elo_upper": 228.4,
                "confidence": 0.95, "games": 200, "points": 120.0, "prior_games": 1.0},
            "anchors": [{"anchor": "alphabeta:depth=1", "anchor_elo": 225.0, "wins": 90,
                "draws": 20, "losses": 90}],
            "written_by": "a newer xqz strength"
        }))
        .unwrap()
    }

    #[test]
    fn post_run_ratings_join_their_networks_acceptance() {
        let records = [
            record(Some("s0000000200"), "run-s200"),
            record(None, "s0000000300"),
            record(None, "fsf-skill5-reference"),
        ];
        let curve = learning_curve(&log(), &records, AnchorTable::builtin());
        let p = find(&curve, "s0000000200", CurveSource::PostRun);
        assert_eq!(
            (p.step, p.seconds, p.positions, p.games, p.elo),
            (Some(200), Some(120), Some(1050), 200, 150.0)
        );
        assert_eq!(p.time_control.as_deref(), Some("depth 8"));
        let q = find(&curve, "s0000000300", CurveSource::PostRun);
        assert_eq!(
            q.step,
            Some(300),
            "the model is found from the player's name"
        );
        let other = find(&curve, "fsf-skill5-reference", CurveSource::PostRun);
        assert_eq!(
            (other.step, other.seconds, other.positions),
            (None, None, None)
        );
    }

    #[test]
    fn strength_files_are_read_and_bad_ones_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut warnings = Vec::new();
        let missing = dir.path().join("strength");
        assert!(read_strength_records(&missing, &mut warnings).is_empty());
        assert!(warnings.is_empty(), "an absent directory is no problem");

        fs::create_dir(&missing).unwrap();
        let good = serde_json::to_string(&record(Some("s0000000100"), "p")).unwrap();
        fs::write(missing.join("s0000000100.json"), &good).unwrap();
        fs::write(missing.join("s0000000300.4711-0.json.tmp"), &good).unwrap();
        fs::write(missing.join("notes.txt"), "not a rating").unwrap();
        fs::write(missing.join("bad.json"), r#"{"player": "x"}"#).unwrap();
        fs::write(missing.join("torn.json"), &good[..good.len() / 2]).unwrap();
        let read = read_strength_records(&missing, &mut warnings);
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].model.as_deref(), Some("s0000000100"));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].starts_with("strength/bad.json: skipped"),
            "{warnings:?}"
        );
        assert!(
            warnings[1].starts_with("strength/torn.json: skipped"),
            "{warnings:?}"
        );
    }
}
