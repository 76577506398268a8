//! `xqz run`: the whole loop on a tiny configuration, killed with SIGKILL at several
//! moments and resumed, and its errors for unusable run directories and configs.

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use crate::common::{XQZ, files, run_ok};

/// A run of about 40 seconds of budget: 1×8 network, a few games a generation.
const TINY: &str = r#"
[run]
seed = 3
mode = "sync"
budget_minutes = 0.7
games_per_generation = 4
final_reserve_minutes = 0.1

[selfplay]
parallel_games = 4
search_threads = 1
max_batch = 8
max_plies = 60

[selfplay.search.playout_cap]
full_visits = 8
cheap_visits = 2
full_probability = 0.5

[train]
net = { blocks = 1, channels = 8 }
warmup_steps = 5
ema_decay = 0.9
checkpoint_every = 10
batch_size = 16
window = { kind = "fixed", size = 5000 }
samples_per_position = 2
min_positions = 20
candidate_every = 10
event_every = 5

[gate]
games = 2
visits = 4
threshold = 0.5

[rating]
opponents = ["random"]
games = 2
visits = 4
final_opponents = ["random"]
final_games = 2
final_gauntlet_games = 2
final_quiescence_choices = [0, 50]
"#;

/// `xqz run --config CONFIG --run RUN`.
fn xqz_run(config: &Path, run: &Path) -> Command {
    let mut cmd = Command::new(XQZ);
    cmd.args(["run", "--config"])
        .arg(config)
        .arg("--run")
        .arg(run);
    cmd
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xqz-cli-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every chunk file is whole (the reader accepts it); `.tmp` files are left over only.
fn assert_chunks_whole(run: &Path) {
    for path in files(&run.join("data"), ".xqc") {
        xq_data::read_chunk(&path)
            .unwrap_or_else(|e| panic!("{} is not whole: {e}", path.display()));
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn state(run: &Path) -> serde_json::Value {
    std::fs::read_to_string(run.join("state.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

#[test]
fn a_run_killed_at_several_moments_resumes_and_finishes() {
    let dir = temp("kill");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    let run = dir.join("run");
    let mut last_games = 0;
    let mut last_step = 0;
    // Kill during start-up/training, during self-play and later.
    for kill_after in [3, 9, 16] {
        let mut child = xqz_run(&config, &run)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs(kill_after));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        assert_chunks_whole(&run);
        let s = state(&run);
        let games = s["games"].as_u64().unwrap_or(0);
        assert!(
            games >= last_games,
            "games went back from {last_games} to {games}"
        );
        last_games = games;
        let step = files(&run.join("checkpoints"), ".json")
            .iter()
            .filter_map(|p| {
                p.file_name()?
                    .to_str()?
                    .strip_prefix("ckpt-")?
                    .strip_suffix(".json")?
                    .parse::<u64>()
                    .ok()
            })
            .max()
            .unwrap_or(0);
        assert!(
            step >= last_step,
            "training went back from step {last_step} to {step}"
        );
        last_step = step;
    }
    // The same command again finishes the budget and the final rating.
    let t = Instant::now();
    let out = run_ok(&mut xqz_run(&config, &run));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        t.elapsed() < Duration::from_secs(240),
        "took {:?}",
        t.elapsed()
    );
    assert!(stdout.contains("finished"), "{stdout}");
    assert_chunks_whole(&run);
    let s = state(&run);
    assert_eq!(s["finished"], serde_json::Value::Bool(true), "{s}");
    assert!(s["games"].as_u64().unwrap() >= last_games);
    // Where the loop's time went, kept across the kills and printed in the summary.
    let time = &s["loop_time"];
    let (selfplay, total) = (
        time["selfplay"].as_f64().unwrap(),
        time["total"].as_f64().unwrap(),
    );
    assert!(selfplay > 0.0 && total >= selfplay, "{s}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("  loop ") && l.contains("self-play") && l.contains('%')),
        "{stdout}"
    );
    assert!(
        run.join("models/accepted.json").exists(),
        "no network was accepted\n{stderr}"
    );
    // Every event line is JSON, and the final rating was recorded.
    let events = std::fs::read_to_string(run.join("events.jsonl")).unwrap();
    let parsed: Vec<serde_json::Value> = events
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad event line {l:?}: {e}")))
        .collect();
    assert!(
        parsed
            .iter()
            .any(|e| e["kind"] == "rating" && e["final"] == true),
        "no final rating"
    );
    // The run ended by choosing its player: the newest network's weight among 0 and
    // 50% first, then the networks' round robin with the self-play ones at that weight;
    // the winner of the last round robin is the one rated in the final match and
    // exported with its weight.
    let gauntlets: Vec<&serde_json::Value> =
        parsed.iter().filter(|e| e["kind"] == "gauntlet").collect();
    let winner =
        |g: &serde_json::Value| g["entries"][g["winner"].as_u64().unwrap() as usize].clone();
    let weights = gauntlets.first().expect("no gauntlet event");
    assert_eq!(weights["stage"], "quiescence", "{weights}");
    assert_eq!(weights["matches"].as_array().unwrap().len(), 1, "{weights}");
    let selfplay_weight = &winner(weights)["quiescence"];
    let networks = gauntlets.last().unwrap();
    assert_eq!(networks["stage"], "networks", "{networks}");
    for e in networks["entries"].as_array().unwrap() {
        if e["pretrained"] == false {
            assert_eq!(&e["quiescence"], selfplay_weight, "{networks}");
        }
    }
    let chosen = &winner(networks);
    let final_rating = parsed
        .iter()
        .rfind(|e| e["kind"] == "rating" && e["final"] == true)
        .unwrap();
    assert_eq!(final_rating["model"], chosen["model"], "{final_rating}");
    assert_eq!(
        final_rating["quiescence"], chosen["quiescence"],
        "{final_rating}"
    );
    let engine = std::fs::read_to_string(
        run.join("players")
            .join(chosen["model"].as_str().unwrap())
            .join("engine.toml"),
    )
    .unwrap();
    let weight = chosen["quiescence"].as_f64().unwrap() / 100.0;
    assert!(
        engine.contains(&format!("leaf_quiescence = {weight:?}")),
        "{engine}"
    );
    assert!(
        stdout.contains(chosen["model"].as_str().unwrap()),
        "{stdout}"
    );
    // Exported players are recorded relative to the run directory, so that a reader
    // joining the path onto the run directory names it once.
    for e in parsed.iter().filter(|e| e["kind"] == "export") {
        let model = e["model"].as_str().unwrap();
        assert_eq!(e["path"], format!("players/{model}"), "{e}");
        assert!(run.join(e["path"].as_str().unwrap()).is_dir(), "{e}");
    }
    // TensorBoard logs of every part: self-play, training, gating, rating.
    for part in ["selfplay", "train", "gate", "rating"] {
        let dir = run.join("logs").join(part);
        let found = walk(&dir)
            .iter()
            .any(|p| p.to_string_lossy().contains("tfevents"));
        assert!(found, "no TensorBoard events in {}", dir.display());
    }
    // Running it once more does nothing new: the budget is spent.
    run_ok(&mut xqz_run(&config, &run));
    assert_eq!(state(&run)["games"], s["games"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The budget bounds the whole run, final match included: a final match far too long
/// for its reserve is cut (in both modes), and the summary and events say so.
#[test]
fn a_run_ends_within_its_budget_even_when_the_final_match_cannot_fit() {
    const BUDGET_SECONDS: f64 = 30.0;
    for mode in ["sync", "concurrent"] {
        let dir = temp(&format!("budget-{mode}"));
        let config = dir.join("tiny.toml");
        std::fs::write(
            &config,
            TINY.replace("mode = \"sync\"", &format!("mode = \"{mode}\""))
                .replace("budget_minutes = 0.7", "budget_minutes = 0.5")
                .replace(
                    "final_reserve_minutes = 0.1",
                    "final_reserve_minutes = 0.15",
                )
                .replace("final_games = 2", "final_games = 5000\nfinal_visits = 32"),
        )
        .unwrap();
        let run = dir.join("run");
        let t = Instant::now();
        let out = run_ok(&mut xqz_run(&config, &run));
        let wall = t.elapsed().as_secs_f64();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // The budget is counted from the loop's start; process start-up (libtorch
        // included) and the last move of each cut game are the tolerance.
        let spent = state(&run)["elapsed_seconds"].as_f64().unwrap();
        assert!(
            spent <= BUDGET_SECONDS + 3.0,
            "{mode}: {spent} s spent\n{stderr}"
        );
        assert!(
            wall <= BUDGET_SECONDS + 10.0,
            "{mode}: {wall} s of wall time"
        );
        let events = std::fs::read_to_string(run.join("events.jsonl")).unwrap();
        for e in events.lines() {
            let e: serde_json::Value = serde_json::from_str(e).unwrap();
            if e["kind"] == "rating" && e["final"] == true {
                assert_eq!(e["planned_games"], 5000, "{e}");
                assert!(e["games"].as_u64().unwrap() < 5000, "{e}");
                assert!(e["cutoff"].is_string(), "{e}");
                assert!(stdout.contains("of 5000 games"), "{stdout}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn concurrent_mode_trains_gates_and_finishes() {
    let dir = temp("concurrent");
    let config = dir.join("tiny.toml");
    std::fs::write(
        &config,
        TINY.replace("mode = \"sync\"", "mode = \"concurrent\"")
            .replace("budget_minutes = 0.7", "budget_minutes = 0.5"),
    )
    .unwrap();
    let run = dir.join("run");
    let out = run_ok(&mut xqz_run(&config, &run));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("finished"), "{stdout}");
    assert_chunks_whole(&run);
    let s = state(&run);
    assert_eq!(s["finished"], serde_json::Value::Bool(true), "{s}");
    assert!(s["games"].as_u64().unwrap() > 0, "{s}");
    assert!(
        !files(&run.join("checkpoints"), ".json").is_empty(),
        "the training thread saved no checkpoint\n{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every self-play game of the run was played by a network (the PGN records name
/// the evaluator as both players): none by the uniform evaluator (issue #45).
fn assert_no_uniform_games(run: &Path) -> usize {
    let records = files(&run.join("games"), ".pgn");
    let mut games = 0;
    for path in &records {
        let text = std::fs::read_to_string(path).unwrap();
        games += text.matches("[Red ").count();
        assert!(
            !text.contains("[Red \"uniform"),
            "{} holds a game of the uniform evaluator",
            path.display()
        );
    }
    games
}

/// The run's first `promote` event.
fn first_promote(run: &Path) -> serde_json::Value {
    let events = std::fs::read_to_string(run.join("events.jsonl")).unwrap();
    events
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["kind"] == "promote")
        .expect("no network was accepted")
}

#[test]
fn a_run_without_pretraining_starts_from_a_fresh_network_not_uniform_play() {
    let dir = temp("fresh");
    let config = dir.join("tiny.toml");
    std::fs::write(
        &config,
        TINY.replace("budget_minutes = 0.7", "budget_minutes = 0.3"),
    )
    .unwrap();
    let run = dir.join("run");
    run_ok(&mut xqz_run(&config, &run));
    let first_promote = first_promote(&run);
    assert_eq!(
        first_promote["details"]["reason"], "initial",
        "{first_promote}"
    );
    assert!(assert_no_uniform_games(&run) > 0, "no self-play game");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_concurrent_run_with_pretraining_plays_no_game_before_its_first_network() {
    let dir = temp("pretrain-concurrent");
    let config = dir.join("tiny.toml");
    let pgn = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hu_ronghua_1391_iccs.pgn");
    std::fs::write(
        &config,
        TINY.replace("mode = \"sync\"", "mode = \"concurrent\"")
            // Time for pre-training (reading 1,391 games), the backend's start-up
            // measurement and self-play after them, also on a machine busy with other
            // tests.
            .replace("budget_minutes = 0.7", "budget_minutes = 1.2")
            + &format!(
                "\n[train.pretrain]\npgn = [{:?}]\nsteps = 10\n",
                pgn.display().to_string()
            ),
    )
    .unwrap();
    let run = dir.join("run");
    run_ok(&mut xqz_run(&config, &run));
    assert!(assert_no_uniform_games(&run) > 0, "no self-play game");
    // The first chunk was written after the first network was accepted.
    let first_promote = first_promote(&run);
    let accepted_at = first_promote["time"].as_f64().unwrap();
    for chunk in files(&run.join("data"), ".xqc") {
        let written = std::fs::metadata(&chunk)
            .unwrap()
            .modified()
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            written + 1.0 >= accepted_at,
            "{} written at {written}, the first network accepted at {accepted_at}",
            chunk.display()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unusable_run_directory_is_a_one_line_error() {
    let dir = temp("blocked");
    let config = dir.join("tiny.toml");
    std::fs::write(&config, TINY).unwrap();
    // A regular file where the run directory should be.
    let blocker = dir.join("run");
    std::fs::write(&blocker, "not a directory").unwrap();
    let out = xqz_run(&config, &blocker).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("cannot create") && stderr.contains("run"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_config_key_is_named() {
    let dir = temp("badkey");
    let config = dir.join("bad.toml");
    std::fs::write(
        &config,
        TINY.replace("games_per_generation", "games_per_generaton"),
    )
    .unwrap();
    let out = xqz_run(&config, &dir.join("run")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("games_per_generaton"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
