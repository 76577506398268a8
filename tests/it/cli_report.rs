//! `xqz report` end to end: a synthetic run directory (events of every kind, a corrupt
//! log line, PGN games including a bad one, a config, post-run strength ratings
//! including a malformed one) becomes one self-contained page whose numbers, escaping,
//! learning curve and embedded games are checked here, and which headless Chromium
//! renders: charts drawn (the learning curve with its anchor lines), boards with the
//! pieces of each game's first position, no script errors. An empty run gives a valid "no data yet" page; a
//! missing one a one-line error.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
};

use serde_json::{Value, json};

use crate::common::assert_ok;

const CHROMIUM: &str = "/usr/bin/chromium";
const START: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";
/// A PGN name that must be escaped everywhere it appears.
const HOSTILE: &str = "<script>alert(\"x\")</script> & 'q'";

fn xqz(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xqz"))
        .arg("report")
        .args(args)
        .output()
        .expect("running xqz")
}

fn report(run: &Path, extra: &[&str]) -> String {
    let out = xqz(&[&["--run", run.to_str().unwrap()], extra].concat());
    assert_ok(&out, "xqz report");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("wrote "), "{stdout}");
    let path = extra
        .windows(2)
        .find(|w| w[0] == "--out")
        .map_or_else(|| run.join("report.html"), |w| PathBuf::from(w[1]));
    fs::read_to_string(path).expect("the report was written")
}

/// Events of every kind the page reads, one a line, with two unreadable lines.
fn events() -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut push = |v: Value| lines.push(v.to_string());
    let t = 1_790_000_000_u64;
    // Running totals per worker: w1 reaches 22 games, w2 8, so the run has 30.
    for (i, (worker, games)) in [("w1", 10_u64), ("w1", 22), ("w2", 8)]
        .into_iter()
        .enumerate()
    {
        let mut ev = json!({"time": t + i as u64 * 60, "kind": "selfplay", "worker": worker, "games": games, "positions": games * 90,
            "red_wins": games / 2, "black_wins": games / 4, "draws": games - games / 2 - games / 4,
            "avg_length": 90.0 - i as f64, "avg_batch": 12.5, "cache_hit_rate": 0.3,
            "resign_false_positive_rate": 0.05});
        // The first as an earlier version wrote it, without the threshold in force.
        if i > 0 {
            ev["resign_threshold"] = json!(-0.9 + 0.05 * i as f64);
        }
        push(ev);
    }
    for step in [100_u64, 200, 300, 400, 500] {
        let s = step as f64;
        let mut ev = json!({"time": t + step, "kind": "train", "step": step, "samples": step * 64,
            "policy_loss": 4.0 - s / 250.0, "value_loss": 0.9 - s / 2000.0, "total_loss": 4.9 - s / 200.0,
            "policy_accuracy": s / 2000.0, "value_accuracy": 0.4 + s / 5000.0, "lr": 0.02});
        if step == 300 {
            // Tolerated: a writer that logs fewer fields.
            ev.as_object_mut()
                .unwrap()
                .retain(|k, _| k != "value_accuracy" && k != "lr");
        }
        push(ev);
    }
    push(
        json!({"time": t + 300, "kind": "holdout", "step": 300, "split": "records",
        "positions": 900, "policy_loss": 3.1, "value_loss": 0.8, "policy_top1": 0.21}),
    );
    push(
        json!({"time": t + 400, "kind": "holdout", "step": 400, "split": "selfplay",
        "positions": 500, "policy_loss": 2.9, "value_loss": null, "policy_top1": 0.3}),
    );
    push(json!({"time": t + 210, "kind": "candidate", "model": "s0000000200", "step": 200}));
    push(
        json!({"time": t + 211, "kind": "gate", "candidate": "s0000000200", "step": 200, "accepted": true, "reason": "first", "games": 0}),
    );
    push(json!({"time": t + 212, "kind": "promote", "model": "s0000000200", "step": 200}));
    push(
        json!({"time": t + 220, "kind": "rating", "model": "s0000000200", "step": 200, "opponent": "random",
        "games": 20, "wins": 16, "draws": 0, "losses": 4, "score": 0.8, "elo": 240.8, "elo_lower": 120.4, "elo_upper": 390.1}),
    );
    push(
        json!({"time": t + 221, "kind": "rating", "model": "s0000000200", "step": 200, "opponent": "greedy",
        "games": 20, "wins": 8, "draws": 2, "losses": 10, "score": 0.45, "elo": -34.9, "elo_lower": -150.0, "elo_upper": 80.0}),
    );
    push(
        json!({"time": t + 510, "kind": "gate", "candidate": "s0000000500", "opponent": "s0000000200", "step": 500,
        "accepted": true, "reason": "sprt", "games": 40, "score": 0.6, "elo": 70.4, "elo_lower": 5.0,
        "elo_upper": 140.0, "sprt": {"llr": 2.95, "lower": -2.94, "upper": 2.94}}),
    );
    push(json!({"time": t + 511, "kind": "promote", "model": "s0000000500", "step": 500}));
    // 100%: the Elo is unbounded (null in JSON); the page shows the score instead.
    push(
        json!({"time": t + 520, "kind": "rating", "model": "s0000000500", "step": 500, "opponent": "random",
        "games": 20, "wins": 20, "draws": 0, "losses": 0, "score": 1.0, "elo": null, "elo_lower": null, "elo_upper": null}),
    );
    push(
        json!({"time": t + 521, "kind": "rating", "model": "s0000000500", "step": 500, "opponent": "greedy",
        "games": 20, "wins": 12, "draws": 2, "losses": 6, "score": 0.65, "elo": 107.5, "elo_lower": 10.0, "elo_upper": 210.0}),
    );
    push(
        json!({"time": t + 600, "kind": "gate", "candidate": "s0000000600", "opponent": "s0000000500", "step": 600,
        "accepted": false, "reason": "threshold", "games": 40, "score": 0.475, "elo": -17.4, "elo_lower": -90.0, "elo_upper": 55.0}),
    );
    // The run's final match, at more visits: a learning-curve point of its own.
    push(
        json!({"time": t + 700, "kind": "rating", "model": "s0000000500", "step": 500, "opponent": "alphabeta:depth=1",
        "final": true, "visits": 800, "games": 40, "wins": 10, "draws": 8, "losses": 22, "score": 0.35,
        "elo": -107.5, "elo_lower": -180.0, "elo_upper": -40.0}),
    );
    // As `xqz run --run some/cwd/run` recorded it before export paths were made
    // relative to the run directory.
    push(
        json!({"time": t + 530, "kind": "export", "model": "s0000000500", "path": "some/cwd/run/players/s0000000500"}),
    );
    lines.insert(4, "{\"kind\": \"train\", \"step\": 7".to_owned()); // torn line
    lines.insert(9, "not json at all".to_owned());
    lines.join("\n") + "\n"
}

fn selfplay_pgn() -> String {
    format!(
        "[Event \"xqzero self-play\"]\n[Round \"1\"]\n[Red \"{hostile}\"]\n[Black \"s0000000500\"]\n\
         [Result \"*\"]\n[Variant \"xiangqi\"]\n[FEN \"{START}\"]\n[Worker \"w0\"]\n\n\
         1. h2e2 {{炮二平五}} h9g7 2. h0g2 i9h9 3. b0c2 b9c7 *\n\n\
         [Event \"xqzero self-play\"]\n[Round \"2\"]\n[Red \"s0000000500\"]\n[Black \"s0000000500\"]\n\
         [Result \"*\"]\n[Variant \"xiangqi\"]\n[FEN \"3k5/9/9/9/9/9/9/9/9/4K3R b - - 0 20\"]\n[Worker \"w0\"]\n\n\
         20... d9d8 21. i0i1 d8d9 22. i1i0 *\n\n\
         [Event \"xqzero self-play\"]\n[Round \"3\"]\n[Result \"*\"]\n[Variant \"xiangqi\"]\n[FEN \"{START}\"]\n\n\
         1. h2e2 e2e9 *\n\n",
        hostile = HOSTILE.replace('\\', "\\\\").replace('"', "\\\"")
    )
}

fn match_pgn() -> String {
    format!(
        "[Event \"gate s0000000600 vs s0000000500\"]\n[Round \"1.1\"]\n[Red \"s0000000600\"]\n\
         [Black \"s0000000500\"]\n[Result \"1-0\"]\n[Variant \"xiangqi\"]\n[FEN \"{START}\"]\n\
         [Termination \"adjudication\"]\n\n1. b2e2 b9c7 2. b0c2 1-0\n\n"
    )
}

fn synthetic_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in [
        "games",
        "matches",
        "models/accepted/s0000000200",
        "models/accepted/s0000000500",
        "players/s0000000500",
        "strength",
    ] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    fs::write(root.join("events.jsonl"), events()).unwrap();
    fs::write(root.join("games/w0-000001.pgn"), selfplay_pgn()).unwrap();
    fs::write(
        root.join("games/.w0-000002.pgn.123.tmp"),
        "[Event \"half written\"]\n",
    )
    .unwrap();
    fs::write(root.join("matches/gate-s0000000600.pgn"), match_pgn()).unwrap();
    fs::write(
        root.join("strength/s0000000500.json"),
        json!({"player": "s0000000500", "model": "s0000000500", "step": 500,
            "time_control": "800 visits",
            "rating": {"elo": -60.0, "stderr": 30.0, "elo_lower": -118.8, "elo_upper": -1.2,
                "confidence": 0.95, "games": 200, "points": 80.0, "prior_games": 1.0},
            "anchors": [{"anchor": "alphabeta:depth=1", "anchor_elo": 225.0, "wins": 60,
                "draws": 40, "losses": 100}]})
        .to_string(),
    )
    .unwrap();
    fs::write(root.join("strength/broken.json"), "{\"player\": ").unwrap();
    fs::write(
        root.join("config.toml"),
        "# synthetic <run> & co\n[selfplay]\ngames = 30\n",
    )
    .unwrap();
    dir
}

/// The JSON blob the page's script draws from.
fn page_data(html: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"xqz-data\">";
    let start = html.find(open).expect("data blob") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).expect("the blob is JSON")
}

fn pieces_in(fen: &str) -> usize {
    fen.split(' ')
        .next()
        .unwrap()
        .chars()
        .filter(char::is_ascii_alphabetic)
        .count()
}

/// The page's DOM after its scripts ran, from headless Chromium.
fn render(html_path: &Path) -> String {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: run scripts/setup (it installs Debian's chromium) to test the report page"
    );
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("timeout")
        .arg("90")
        .arg(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", html_path.display()))
        .output()
        .expect("running chromium");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && dom.contains("</html>"),
        "chromium failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    dom
}

#[test]
fn report_summarises_a_run_and_embeds_its_games() {
    let run = synthetic_run();
    let html = report(run.path(), &[]);

    assert!(html.starts_with("<!DOCTYPE html>"));
    // Self-contained: nothing fetched from elsewhere.
    for remote in ["src=\"http", "href=\"http", "<link", "@import", "url(http"] {
        assert!(
            !html.contains(remote),
            "the page refers to a remote resource ({remote})"
        );
    }
    // Totals: games and positions summed over selfplay events, the largest step, two
    // accepted networks, the newest export as the best player.
    for row in [
        "<th>Self-play games</th><td>30</td>",
        "<th>Positions</th><td>2700</td>",
        "<th>Training steps</th><td>500</td>",
        "<th>Accepted networks</th><td>2</td>",
    ] {
        assert!(html.contains(row), "missing {row:?}");
    }
    // The exported player's path names the run directory once, even as an older log
    // recorded it (relative to the writer's working directory).
    let best = format!(
        "<th>Best player</th><td>{}/players/s0000000500 (network s0000000500)</td>",
        run.path().display()
    );
    assert!(html.contains(&best), "missing {best:?}");
    // The config verbatim, escaped; the problems listed.
    assert!(html.contains("# synthetic &lt;run&gt; &amp; co\n[selfplay]\ngames = 30"));
    assert!(
        html.contains("events.jsonl: 2 unreadable line(s) skipped (line 5, 10)"),
        "corrupt lines mentioned"
    );
    assert!(
        html.contains("games/w0-000001.pgn: game 3 of 3 skipped"),
        "bad PGN game mentioned"
    );
    assert!(
        html.contains("strength/broken.json: skipped, not a strength rating"),
        "malformed strength file mentioned"
    );
    assert!(
        html.contains("<tr><th>resign_threshold</th><td>-0.8000</td></tr>"),
        "the newest resignation threshold"
    );
    // Ratings: finite Elo with its interval; a perfect score as unbounded.
    assert!(html.contains("+241 [+120, +390]"));
    assert!(html.contains("+∞ (won every game)<br><small>100.0% of 20</small>"));
    assert!(html.contains("<td class=\"no\">rejected</td>") && html.contains("<td>2.95</td>"));
    // The hostile PGN name never appears as markup.
    assert!(!html.contains("<script>alert"), "unescaped PGN tag");
    assert_eq!(
        html.matches("<script").count(),
        2,
        "only the data and the page script"
    );

    let data = page_data(&html);
    let games = data["games"].as_array().unwrap();
    let kinds: Vec<&str> = games.iter().map(|g| g["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["self-play", "self-play", "match"],
        "newest first, bad game skipped"
    );
    let first = &games[1];
    assert_eq!(first["red"], HOSTILE, "names survive the escaping exactly");
    assert_eq!(first["fens"][0], START);
    assert_eq!(
        first["fens"][6],
        "r1bakabr1/9/1cn3nc1/p1p1p1p1p/9/9/P1P1P1P1P/1CN1C1N2/9/R1BAKAB1R w - - 6 4"
    );
    assert_eq!(first["moves"][0], "炮二平五");
    for g in games {
        assert_eq!(
            g["fens"].as_array().unwrap().len(),
            g["moves"].as_array().unwrap().len() + 1
        );
    }
    assert_eq!(games[0]["fens"][4], "3k5/9/9/9/9/9/9/9/9/4K3R b - - 4 22");
    assert_eq!(
        data["train"].as_array().unwrap().len(),
        5,
        "the torn train line is not a point"
    );
    // Held-out points are drawn beside the training losses, by split; a missing value
    // loss is no point.
    let holdout = data["holdout"].as_array().unwrap();
    assert_eq!(holdout.len(), 2);
    assert_eq!(holdout[0]["holdout_records_value_loss"], json!(0.8));
    assert_eq!(holdout[1]["holdout_selfplay_policy_accuracy"], json!(0.3));
    assert!(holdout[1].get("holdout_selfplay_value_loss").is_none());
    let unbounded: Vec<&Value> = data["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["unbounded"])
        .collect();
    assert_eq!(
        unbounded,
        [
            &Value::Null,
            &Value::Null,
            &json!("top"),
            &Value::Null,
            &Value::Null
        ]
    );
    // The learning curve: both accepted networks' in-run ratings, the final match and
    // the post-run rating, each with the run's measures at the network's acceptance.
    let curve = data["curve"].as_array().unwrap();
    let points: Vec<(&str, &str, u64, u64, u64)> = curve
        .iter()
        .map(|p| {
            (
                p["model"].as_str().unwrap(),
                p["source"].as_str().unwrap(),
                p["step"].as_u64().unwrap(),
                p["seconds"].as_u64().unwrap(),
                p["positions"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        points,
        [
            ("s0000000200", "in-run", 200, 211, 2700),
            ("s0000000500", "in-run", 500, 510, 2700),
            ("s0000000500", "final", 500, 510, 2700),
            ("s0000000500", "post-run", 500, 510, 2700),
        ]
    );
    assert!(curve.iter().all(
        |p| p["lower"].as_f64() < p["elo"].as_f64() && p["elo"].as_f64() < p["upper"].as_f64()
    ));
    assert_eq!(curve[2]["visits"], 800);
    assert_eq!(curve[3]["elo"], -60.0);
    assert!(html.contains("<table class=\"grid\" id=\"curve-points\">"));
    assert!(
        html.contains("<td>post-run</td><td>-60 [-119, -1]</td><td>200</td><td>800 visits</td>"),
        "the post-run point's row"
    );
    assert!(
        html.contains("alphabeta:depth=1 +10 =8 -22"),
        "the final match's games"
    );

    // Rendered: every chart drawn, one board per game with its start position's pieces.
    let dom = render(&run.path().join("report.html"));
    assert!(
        dom.contains("data-rendered=\"ok\""),
        "the script finished without errors"
    );
    assert!(!dom.contains("class=\"js-error\""));
    for chart in [
        "curve-time",
        "curve-positions",
        "curve-steps",
        "elo",
        "gate",
        "loss",
        "accuracy",
        "lr",
        "results",
        "length",
        "rates",
        "resign",
        "batch",
    ] {
        assert!(
            dom.contains(&format!("data-chart=\"{chart}\" data-drawn=\"1\"")),
            "chart {chart} not drawn"
        );
    }
    assert!(dom.matches("class=\"chart-svg\"").count() >= 12);
    // Anchor lines over the curve's intervals (about −560 to +230 here) and the nearest
    // anchor beyond each end, none farther away.
    for anchor in [
        "random",
        "greedy",
        "fsf:skill=0",
        "alphabeta:depth=1",
        "alphabeta:depth=2",
    ] {
        assert_eq!(
            dom.matches(&format!("data-ref=\"{anchor} (")).count(),
            3,
            "the {anchor} line on each curve chart"
        );
    }
    assert!(!dom.contains("data-ref=\"fsf:skill=5") && !dom.contains("data-ref=\"fsf:skill=20"));
    assert_eq!(dom.matches("class=\"board\"").count(), games.len());
    let want: usize = games
        .iter()
        .map(|g| pieces_in(g["fens"][0].as_str().unwrap()))
        .sum();
    assert_eq!(
        dom.matches("class=\"piece ").count(),
        want,
        "pieces of each first position"
    );
    assert!(dom.contains("data-square=\"i0\" data-piece=\"R\""));
    assert!(dom.contains("data-square=\"e9\" data-piece=\"k\""));
    assert!(dom.contains("炮二平五"), "move list");
    assert!(
        dom.contains("class=\"point clamp\""),
        "the unbounded rating drawn at the edge"
    );
}

#[test]
fn empty_run_gives_a_valid_page_with_no_data_sections() {
    let run = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("page.html");
    let html = report(run.path(), &["--out", out.to_str().unwrap()]);
    assert!(
        !run.path().join("report.html").exists(),
        "--out is respected"
    );
    assert!(
        fs::read_dir(run.path()).unwrap().next().is_none(),
        "the run directory is left untouched"
    );
    assert!(
        html.matches("No data yet").count() >= 6,
        "each section says it has no data"
    );
    assert!(html.contains("<th>Accepted networks</th><td>0</td>"));
    assert!(!html.contains("problem(s)"));

    let dom = render(&out);
    assert!(dom.contains("data-rendered=\"ok\""));
    assert!(!dom.contains("class=\"chart-svg\"") && !dom.contains("class=\"board\""));
}

#[test]
fn missing_run_directory_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-run");
    let out = xqz(&["--run", missing.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(
        err.contains("does not exist") && !err.contains("panicked"),
        "{err}"
    );
    assert!(!missing.exists(), "no run directory is created");
}

#[test]
fn unreadable_inputs_are_listed_never_fatal() {
    let run = tempfile::tempdir().unwrap();
    let root = run.path();
    for d in ["games", "matches", "models"] {
        fs::create_dir_all(root.join(d)).unwrap();
    }
    // A log of nothing but damage, a corrupt model pointer, PGN that is not UTF-8 or
    // not PGN, and a config that cannot be read (a directory).
    fs::write(
        root.join("events.jsonl"),
        b"\xff\xfe garbage\n[1, 2]\n{\"kind\": \"rating\", \"score\": 0.5}\n",
    )
    .unwrap();
    fs::write(root.join("models/accepted.json"), "{not json").unwrap();
    fs::write(
        root.join("games/a.pgn"),
        b"[Event \"x\xff\"]\n\n1. h2e2 h9g7 *\n\n[Event \"y\"]\n\n1. z9z9 *\n",
    )
    .unwrap();
    fs::write(root.join("matches/m.pgn"), "this is not a game record\n").unwrap();
    fs::create_dir(root.join("config.toml")).unwrap();

    let html = report(root, &[]);
    for problem in [
        "events.jsonl: 2 unreadable line(s) skipped (line 1, 2)",
        "events.jsonl: 1 rating event(s) without their key fields skipped",
        "corrupt model pointer",
        "games/a.pgn: game 2 of 2 skipped",
        "matches/m.pgn: game 1 of 1 skipped",
        "config.toml",
    ] {
        assert!(html.contains(problem), "problem not listed: {problem:?}");
    }
    let data = page_data(&html);
    assert_eq!(
        data["games"].as_array().unwrap().len(),
        1,
        "the readable game is kept"
    );
    assert_eq!(data["games"][0]["iccs"], json!(["h2e2", "h9g7"]));
}
