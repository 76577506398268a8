//! `xqz report`: one self-contained HTML page about a training run.
//!
//! The page is built from what the run directory already holds (see ARCHITECTURE.md,
//! "The run directory"): the event log for the summary, learning curve, strength,
//! training and self-play sections, `strength/*.json` (ratings by `xqz strength`) for
//! the post-run points of the learning curve, and the newest PGN records of `games/` and `matches/` for games
//! replayable move by move. It needs no network: the CSS and JavaScript (in
//! `report/`) are inlined, and the charts and boards are SVG drawn by that script from
//! one JSON blob that this module fills.
//!
//! What the page shows is gathered by [`xq_run::report::gather`] (tolerant of
//! torn or incomplete events and unreadable games, which are listed on the page); this
//! module renders it, and prints the learning curve's newest and best points as text.
//! An empty run still gives a valid page with "no data yet"; only a run directory that
//! does not exist is an error. Reading a run needs no network, so `xqz` runs it
//! without libtorch.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Write as _,
    path::PathBuf,
};

use anyhow::{Context, Result};
use serde::Serialize;
use xq_rating::{stats::fmt_elo, strength::AnchorTable};
use xq_run::{
    RunDir,
    curve::{CurvePoint, CurveSource},
    events::GauntletStage,
    report::{EloView, PageData, Rating, Report, gather},
    write_atomic,
};

const CSS: &str = include_str!("report/report.css");
const JS: &str = include_str!("report/report.js");

/// Problems listed on the page; the rest are counted.
const MAX_WARNINGS: usize = 50;
/// Learning-curve points printed in full as text; longer curves print each source's
/// newest and best.
const MAX_TEXT_POINTS: usize = 10;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Writes RUN/report.html (or --out FILE), replaced atomically: a summary (config, totals, \
best player), the learning curve (each accepted network's Elo on the anchored scale of \
`xqz strength` against wall time, self-play positions and training steps, from the \
in-run ratings, the final match and RUN/strength/*.json), the Elo of each accepted \
network against the baselines and the gating results with 95% intervals, loss and accuracy curves, self-play statistics, and the \
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
    let out = args.out.clone().unwrap_or_else(|| run.report_path());
    write_atomic(&out, html.as_bytes())
        .with_context(|| format!("cannot write the report to {}", out.display()))?;
    println!("wrote {}", out.display());
    for line in curve_text(&report.data.curve) {
        println!("{line}");
    }
    for alert in &report.alerts {
        println!("warning: {alert}");
    }
    if !report.run_warnings.is_empty() {
        println!(
            "warnings recorded by the run: {}",
            warning_counts(&report.run_warnings)
        );
    }
    if !report.warnings.is_empty() {
        eprintln!(
            "report: skipped {} unreadable item(s); they are listed on the page",
            report.warnings.len()
        );
    }
    Ok(())
}

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
    let (y, m, d) = xq_data::pgn::civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
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

/// Wall time as the curve's table shows it: seconds, minutes or hours.
fn fmt_duration(secs: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let s = secs as f64;
    if secs < 120 {
        format!("{secs} s")
    } else if secs < 2 * 3600 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// How a curve point was measured: the time control of an equal-time rating, else the
/// network's visits and its leaf-quiescence weight when it used one.
fn point_settings(p: &CurvePoint) -> String {
    let quiescence = match p.quiescence {
        Some(q) if q > 0 => format!(", quiescence {q}%"),
        _ => String::new(),
    };
    match (&p.time_control, p.visits) {
        (Some(tc), _) => tc.clone(),
        (None, Some(v)) => format!("{v} visits{quiescence}"),
        (None, None) => String::new(),
    }
}

/// The learning curve as text lines (empty without points): every point of a short
/// curve; of a long one, each source's newest and best (in curve order), since the
/// page has the rest.
fn curve_text(curve: &[CurvePoint]) -> Vec<String> {
    if curve.is_empty() {
        return Vec::new();
    }
    let shown: Vec<&CurvePoint> = if curve.len() <= MAX_TEXT_POINTS {
        curve.iter().collect()
    } else {
        let mut keep = BTreeSet::new();
        for source in [CurveSource::InRun, CurveSource::Final, CurveSource::PostRun] {
            let of = || curve.iter().enumerate().filter(|(_, p)| p.source == source);
            keep.extend(
                of().max_by(|a, b| a.1.elo.total_cmp(&b.1.elo))
                    .map(|(i, _)| i),
            );
            keep.extend(of().next_back().map(|(i, _)| i));
        }
        keep.into_iter().map(|i| &curve[i]).collect()
    };
    let mut lines = vec![if shown.len() == curve.len() {
        "learning curve (anchored Elo, 95% interval):".to_owned()
    } else {
        format!(
            "learning curve (anchored Elo, 95% interval; the best and newest of {} points, \
             all on the page):",
            curve.len()
        )
    }];
    for p in shown {
        let mut line = format!(
            "  {:<12} step {:>8}  {:>9}  {:>9} positions  {:<8} {}  {} games",
            p.model,
            fmt_count(p.step),
            p.seconds.map_or_else(|| "—".to_owned(), fmt_duration),
            fmt_count(p.positions),
            p.source.label(),
            fmt_elo(p.elo, Some((p.lower, p.upper))),
            p.games,
        );
        let settings = point_settings(p);
        if !settings.is_empty() {
            let _ = write!(line, " ({settings})");
        }
        lines.push(line);
    }
    lines
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
         <nav><a href=\"#summary\">Summary</a> <a href=\"#curve\">Learning curve</a> \
         <a href=\"#strength\">Strength</a> \
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
    if !r.alerts.is_empty() {
        h.push_str("<section id=\"alerts\" class=\"warn\"><ul>");
        for a in &r.alerts {
            let _ = write!(h, "<li>{}</li>", esc(a));
        }
        h.push_str("</ul></section>\n");
    }
    render_summary(&mut h, r);
    render_curve(&mut h, d);
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
    row("Warnings", &warning_counts(&r.run_warnings));
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

fn render_curve(h: &mut String, d: &PageData) {
    h.push_str("<section id=\"curve\"><h2>Learning curve</h2>\n");
    if d.curve.is_empty() {
        empty(
            h,
            "no network has games against the anchors (in-run ratings against anchor \
             opponents, or ratings by xqz strength in strength/*.json).",
        );
        h.push_str("</section>\n");
        return;
    }
    let scale = AnchorTable::builtin();
    let _ = writeln!(
        h,
        "<div class=\"charts\"><div class=\"chart\" data-chart=\"curve-time\"></div>\
         <div class=\"chart\" data-chart=\"curve-positions\"></div>\
         <div class=\"chart\" data-chart=\"curve-steps\"></div></div>\n\
         <p class=\"hint\">Each accepted network's Elo on the anchored scale ({}; dashed \
         lines: the anchors near the curve) with its 95% interval, placed at its \
         acceptance: wall time since the run's first event, self-play positions, training \
         step. In-run: the short rating after its promotion (few games, low visits); final: \
         the run's final match; post-run: <code>xqz strength</code> \
         (<code>strength/*.json</code>). Only games against anchors count.</p>",
        esc(&scale.scale)
    );
    h.push_str(
        "<table class=\"grid\" id=\"curve-points\"><thead><tr><th>Network</th><th>Step</th>\
         <th>Wall time</th><th>Positions</th><th>Source</th><th>Elo [95%]</th><th>Games</th>\
         <th>Settings</th><th>Against</th></tr></thead><tbody>\n",
    );
    for p in &d.curve {
        let against: Vec<String> = p
            .anchors
            .iter()
            .map(|a| format!("{} +{} ={} -{}", a.anchor, a.wins, a.draws, a.losses))
            .collect();
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td></tr>",
            esc(&p.model),
            fmt_count(p.step),
            p.seconds.map_or_else(String::new, fmt_duration),
            fmt_count(p.positions),
            p.source.label(),
            esc(&fmt_elo(p.elo, Some((p.lower, p.upper)))),
            p.games,
            esc(&point_settings(p)),
            esc(&against.join(", ")),
        );
    }
    h.push_str("</tbody></table>\n</section>\n");
}

/// The run's warning events by what they were about: `3 (chunk 2, pgn_game 1)`, or
/// `none`, so skipped files are seen without reading `events.jsonl`.
fn warning_counts(counts: &BTreeMap<&str, u64>) -> String {
    let total: u64 = counts.values().sum();
    if total == 0 {
        return "none".to_owned();
    }
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    format!("{total} ({})", parts.join(", "))
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
                            esc(&r.elo.text()),
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
    render_gauntlets(h, d);
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
                esc(&g.elo.text()),
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

/// The end-of-run round robins (`[rating] final_gauntlet_games`): each player's score
/// and every pair's match, the chosen player marked.
fn render_gauntlets(h: &mut String, d: &PageData) {
    if d.gauntlets.is_empty() {
        return;
    }
    h.push_str(
        "<h3>The exported player's choice</h3>\n<p class=\"hint\">Round robins at the \
         exported budget: the newest self-play network at each leaf quiescence weight, \
         then the pre-trained network and the last accepted ones, the self-play ones at \
         the chosen weight; the best score is exported.</p>\n",
    );
    for (k, g) in d.gauntlets.iter().enumerate() {
        let what = match g.stage {
            GauntletStage::Networks => "networks",
            GauntletStage::Quiescence => "leaf quiescence",
        };
        let _ = writeln!(
            h,
            "<table class=\"grid\" id=\"gauntlet-{k}\"><caption>{what}, {} visits</caption>\
             <thead><tr><th>Network</th><th>Step</th><th>Quiescence</th><th>Points</th>\
             <th>Score</th><th></th></tr></thead><tbody>",
            g.visits
        );
        for (i, e) in g.entries.iter().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let score = (e.games > 0).then(|| e.points / e.games as f64);
            let _ = writeln!(
                h,
                "<tr><td>{}{}</td><td>{}</td><td>{}%</td><td>{} of {}</td><td>{}</td>{}</tr>",
                esc(&e.model),
                if e.pretrained { " (pre-trained)" } else { "" },
                e.step,
                e.quiescence,
                e.points,
                e.games,
                esc(&fmt_score(score, None)),
                if i == g.winner {
                    "<td class=\"yes\">chosen</td>"
                } else {
                    "<td></td>"
                }
            );
        }
        h.push_str("</tbody></table>\n<table class=\"grid\"><thead><tr><th>Pair</th><th>Result</th><th>Score</th><th>Elo [95%]</th></tr></thead><tbody>\n");
        for m in &g.matches {
            let _ = writeln!(
                h,
                "<tr><td>{} – {}</td><td>+{} ={} −{}</td><td>{}</td><td>{}</td></tr>",
                esc(&m.a),
                esc(&m.b),
                m.wins,
                m.draws,
                m.losses,
                esc(&fmt_score(m.score, Some(m.games))),
                esc(&EloView::of(m).text())
            );
        }
        h.push_str("</tbody></table>\n");
    }
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

/// A section of charts drawn from one event stream: its charts (filled in by the page's
/// script), a note when the stream was thinned, and the stream's latest values.
struct ChartSection<'a> {
    id: &'a str,
    title: &'a str,
    charts: &'a [&'a str],
    missing: &'a str,
    shown: usize,
    total: usize,
    latest: &'a BTreeMap<String, f64>,
}

fn render_charts(h: &mut String, s: ChartSection) {
    let _ = writeln!(h, "<section id=\"{}\"><h2>{}</h2>", s.id, s.title);
    if s.shown == 0 {
        empty(h, s.missing);
    } else {
        h.push_str("<div class=\"charts\">");
        for chart in s.charts {
            let _ = write!(h, "<div class=\"chart\" data-chart=\"{chart}\"></div>");
        }
        h.push_str("</div>\n");
        thinned_note(h, s.shown, s.total);
        latest_table(h, &format!("{}-latest", s.id), s.latest);
    }
    h.push_str("</section>\n");
}

fn render_training(h: &mut String, r: &Report) {
    render_charts(
        h,
        ChartSection {
            id: "training",
            title: "Training",
            charts: &["loss", "accuracy", "lr"],
            missing: "no training steps logged.",
            shown: r.data.train.len(),
            total: r.data.train_events,
            latest: &r.train_latest,
        },
    );
}

fn render_selfplay(h: &mut String, r: &Report) {
    render_charts(
        h,
        ChartSection {
            id: "selfplay",
            title: "Self-play",
            charts: &["results", "length", "rates", "resign", "batch"],
            missing: "no self-play statistics logged.",
            shown: r.data.selfplay.len(),
            total: r.data.selfplay_events,
            latest: &r.selfplay_latest,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_json_cannot_close_the_script_element() {
        let v = serde_json::json!({"name": "</script><script>alert(1)</script><!--"});
        let s = script_json(&v).unwrap();
        assert!(!s.contains('<') && !s.contains('>'), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn html_escaping_covers_markup_and_quotes() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    fn point(model: &str, step: u64, source: CurveSource, elo: f64) -> CurvePoint {
        CurvePoint {
            model: model.into(),
            step: Some(step),
            seconds: Some(step * 3),
            positions: Some(step * 100),
            elo,
            lower: elo - 100.0,
            upper: elo + 100.0,
            games: 24,
            source,
            visits: Some(24),
            quiescence: Some(if source == CurveSource::Final { 75 } else { 0 }),
            time_control: None,
            anchors: Vec::new(),
        }
    }

    #[test]
    fn a_long_curve_prints_each_sources_best_and_newest() {
        let mut curve: Vec<CurvePoint> = (1..=20)
            .map(|i| {
                point(
                    &format!("s{i:010}"),
                    i * 100,
                    CurveSource::InRun,
                    -300.0 + 10.0 * i as f64,
                )
            })
            .collect();
        // The best in-run point is not the newest.
        curve[4] = point("s0000000005", 500, CurveSource::InRun, 500.0);
        curve.push(point("s0000002000", 2000, CurveSource::Final, 90.0));
        let text = curve_text(&curve);
        assert!(
            text[0].contains("the best and newest of 21 points"),
            "{text:?}"
        );
        let models: Vec<&str> = text[1..]
            .iter()
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(models, ["s0000000005", "s0000000020", "s0000002000"]);
        assert!(
            text[1].contains("+500 [+400, +600]  24 games (24 visits)"),
            "{text:?}"
        );
        assert!(
            text[2].contains(" in-run ") && text[3].contains(" final "),
            "{text:?}"
        );
        assert!(
            text[3].contains("(24 visits, quiescence 75%)"),
            "the final match's leaf quiescence is named: {text:?}"
        );
        assert!(
            text[1].contains("25.0 min") && text[1].contains("50000 positions"),
            "{text:?}"
        );
        assert!(curve_text(&[]).is_empty());
        assert_eq!(
            curve_text(&curve[..3]).len(),
            4,
            "a short curve prints every point"
        );
    }

    #[test]
    fn warning_counts_name_each_kind_and_the_total() {
        assert_eq!(warning_counts(&BTreeMap::new()), "none");
        let counts = BTreeMap::from([("chunk", 2), ("pgn_game", 1)]);
        assert_eq!(warning_counts(&counts), "3 (chunk 2, pgn_game 1)");
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
}
