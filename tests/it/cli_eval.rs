//! The evaluation commands end to end: `xqz match`, `xqz tournament`, `xqz ladder`,
//! `xqz gate`, and their one-line errors.

use std::{path::PathBuf, process::Command};

const XQZ: &str = env!("CARGO_BIN_EXE_xqz");

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xqz-cli-eval-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn xqz(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(XQZ).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_match_writes_pgn_and_json_and_the_stronger_side_wins() {
    let dir = temp("match");
    let pgn = dir.join("m.pgn");
    let json = dir.join("m.json");
    let (ok, stdout, stderr) = xqz(&[
        "match",
        "--a",
        "alphabeta:depth=1",
        "--b",
        "random",
        "--games",
        "6",
        "--concurrency",
        "2",
        "--pgn",
        pgn.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("alphabeta-d1 vs random"), "{stdout}");
    let text = std::fs::read_to_string(&pgn).unwrap();
    assert_eq!(text.matches("[Variant \"xiangqi\"]").count(), 6);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["games"], 6);
    assert!(report["wins"].as_u64().unwrap() >= 5, "{report}");
    // The PGN games rate the players.
    let (ok, stdout, stderr) = xqz(&[
        "ladder",
        "--pgn",
        pgn.to_str().unwrap(),
        "--anchor",
        "random=0",
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("alphabeta-d1") && stdout.contains("random"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_tournament_writes_its_crosstable() {
    let dir = temp("tournament");
    let config = dir.join("t.toml");
    std::fs::write(
        &config,
        r#"
name = "mini"
seed = 2
time_control = "depth=1"
concurrency = 2
openings = "builtin"
format = { kind = "swiss", rounds = 2 }
[[participants]]
name = "r"
player = "random"
[[participants]]
name = "g"
player = "greedy"
[[participants]]
name = "a"
player = "alphabeta:depth=1"
[[participants]]
name = "r2"
player = "random"
"#,
    )
    .unwrap();
    let (ok, stdout, stderr) = xqz(&["tournament", "--config", config.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("Rank"), "{stdout}");
    for ext in ["crosstable.txt", "crosstable.json", "crosstable.csv", "pgn"] {
        assert!(dir.join(format!("mini.{ext}")).exists(), "no mini.{ext}");
    }
    let pgn = std::fs::read_to_string(dir.join("mini.pgn")).unwrap();
    assert_eq!(
        pgn.matches("[Variant \"xiangqi\"]").count(),
        4,
        "two rounds of two boards"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The example team file runs: board matches, the team crosstable in the
/// three forms.
#[test]
fn a_team_tournament_writes_its_crosstable() {
    let dir = temp("team");
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/tournament-team.toml");
    let (ok, stdout, stderr) = xqz(&[
        "tournament",
        "--config",
        config,
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("MP") && stdout.contains("board 2"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(dir.join("team-baselines.crosstable.csv")).unwrap();
    assert!(
        csv.starts_with("Rank,Team,MP,GP,Wins,DE,Fouls,R1,R2,R3"),
        "{csv}"
    );
    let json = std::fs::read_to_string(dir.join("team-baselines.crosstable.json")).unwrap();
    assert!(json.contains("\"fielding\": \"fixed_boards\""), "{json}");
    let pgn = std::fs::read_to_string(dir.join("team-baselines.pgn")).unwrap();
    assert_eq!(pgn.matches("[Variant \"xiangqi\"]").count(), 6);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gate_without_candidates_has_nothing_to_do() {
    let dir = temp("gate");
    let (ok, stdout, stderr) = xqz(&["gate", "--run", dir.join("run").to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("nothing to gate"), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_arguments_are_one_line_errors_naming_the_problem() {
    let dir = temp("bad");
    let bad_tournament = dir.join("bad.toml");
    std::fs::write(&bad_tournament, "name = \"x\"\ntime_control = \"depth=1\"\nformat = { kind = \"swiss\", rounds = 1 }\ncolour = 3\n").unwrap();
    for (args, needle) in [
        (vec!["match", "--a", "randm", "--b", "random"], "randm"),
        (
            vec!["match", "--a", "random", "--b", "random", "--tc", "fast"],
            "fast",
        ),
        (
            vec!["match", "--a", "random", "--b", "random", "--sprt", "5"],
            "--sprt",
        ),
        (
            vec!["match", "--a", "random", "--b", "ucci:/nonexistent/engine"],
            "/nonexistent/engine",
        ),
        (
            vec![
                "match",
                "--a",
                "random",
                "--b",
                "random",
                "--openings",
                "/nonexistent.txt",
            ],
            "nonexistent.txt",
        ),
        (
            vec!["tournament", "--config", bad_tournament.to_str().unwrap()],
            "colour",
        ),
        (vec!["ladder", "--anchor", "x"], "no rated games"),
    ] {
        let (ok, _, stderr) = xqz(&args);
        assert!(!ok, "{args:?} succeeded");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn strength_rates_a_player_on_the_anchored_scale_with_its_games() {
    let dir = temp("strength");
    let out = dir.join("ratings");
    let (ok, stdout, stderr) = xqz(&[
        "strength",
        "--player",
        "greedy",
        "--anchors",
        "random,alphabeta:depth=1",
        "--games",
        "4",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("greedy: Elo"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("greedy.json")).unwrap()).unwrap();
    let anchors = json["anchors"].as_array().unwrap();
    assert_eq!(anchors.len(), 2);
    assert_eq!(anchors[0]["anchor"], "random");
    let games: u64 = anchors
        .iter()
        .map(|a| {
            ["wins", "draws", "losses"]
                .iter()
                .map(|k| a[k].as_u64().unwrap())
                .sum::<u64>()
        })
        .sum();
    assert_eq!(games, 8);
    assert_eq!(json["rating"]["games"], 8);
    // Greedy beats random and loses to alpha-beta: its rating lies between theirs.
    let elo = json["rating"]["elo"].as_f64().unwrap();
    let anchor_elo = |i: usize| anchors[i]["anchor_elo"].as_f64().unwrap();
    assert!(anchor_elo(0) < elo && elo < anchor_elo(1), "{json}");
    let pgn = std::fs::read_to_string(out.join("greedy.pgn")).unwrap();
    assert_eq!(pgn.matches("[Result ").count(), 8);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn strength_calibration_writes_an_anchor_table() {
    let dir = temp("calibrate");
    let (ok, _, stderr) = xqz(&[
        "strength",
        "--calibrate",
        "--anchors",
        "random,greedy,alphabeta:depth=1",
        "--games",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let table: xq_rating::strength::AnchorTable =
        serde_json::from_str(&std::fs::read_to_string(dir.join("anchors.json")).unwrap()).unwrap();
    let specs: Vec<&str> = table.anchors.iter().map(|a| a.spec.as_str()).collect();
    assert_eq!(specs, ["random", "greedy", "alphabeta:depth=1"]);
    // Without Fairy-Stockfish among them the weakest is fixed at 0.
    assert_eq!(table.anchors[0].elo, 0.0);
    assert_eq!(table.calibration.games, 6);
    let pgn = std::fs::read_to_string(dir.join("calibration.pgn")).unwrap();
    assert_eq!(pgn.matches("[Result ").count(), 6);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn strength_refuses_an_unknown_anchor_and_a_missing_output() {
    let (ok, _, stderr) = xqz(&[
        "strength",
        "--player",
        "greedy",
        "--anchors",
        "alphabeta:depth=9",
        "--out",
        "/tmp/x",
    ]);
    assert!(!ok);
    assert!(stderr.contains("not an anchor"), "{stderr}");
    let (ok, _, stderr) = xqz(&["strength", "--player", "greedy"]);
    assert!(!ok);
    assert!(stderr.contains("--out"), "{stderr}");
}

#[test]
fn the_embedded_anchor_ratings_are_the_fit_of_the_committed_calibration_games() {
    let dir = temp("refit");
    let pgn = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/strength/calibration/calibration.pgn"
    );
    let (ok, _, stderr) = xqz(&[
        "strength",
        "--calibrate",
        "--pgn",
        pgn,
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let refit: xq_rating::strength::AnchorTable =
        serde_json::from_str(&std::fs::read_to_string(dir.join("anchors.json")).unwrap()).unwrap();
    let embedded = xq_rating::strength::AnchorTable::builtin();
    assert_eq!(refit.anchors, embedded.anchors);
    assert_eq!(refit.calibration.games, embedded.calibration.games);
    std::fs::remove_dir_all(&dir).unwrap();
}
