//! The Slurm job files on a real (single-node) Slurm cluster: `scripts/slurm/trainer.sbatch`
//! and an array of `scripts/slurm/selfplay.sbatch` workers share one run directory.
//!
//! Needs the cluster of `scripts/slurm/cluster up` (root), so it is ignored by a plain
//! `cargo test`; `scripts/test` brings the cluster up, runs it with `--ignored`, and
//! takes the cluster down again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{TINY_GATE_AND_RATING, XQZ, files, run_ok, tiny_selfplay, tiny_train};

const WORKERS: usize = 2;

fn tiny_config() -> String {
    format!(
        r#"
[run]
seed = 11
mode = "concurrent"
budget_minutes = 1.5
games_per_generation = 4
final_reserve_minutes = 0.1
{selfplay}{train}{gate_and_rating}"#,
        // Four games a file: a worker holds finished games in memory, which scancel
        // must not lose.
        gate_and_rating = TINY_GATE_AND_RATING,
        selfplay = tiny_selfplay(0.5)
            .replace(
                "games_per_file = 1",
                "games_per_file = 4\nmodel_poll_seconds = 1"
            )
            .replace("search_threads = 2", "search_threads = 1"),
        train = tiny_train("").replace("min_positions = 100", "min_positions = 40"),
    )
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run_cmd(cmd: &mut Command) -> String {
    String::from_utf8_lossy(&run_ok(cmd).stdout).into_owned()
}

/// Submits a job file with `sbatch`, returning the job id.
fn sbatch(dir: &Path, config: &Path, run: &Path, extra: &[&str], job: &str) -> String {
    let export = format!(
        "ALL,RUN={},CONFIG={},XQZERO={},XQZ={}",
        run.display(),
        config.display(),
        repo().display(),
        XQZ
    );
    let mut cmd = Command::new("sbatch");
    cmd.arg("--parsable")
        .arg("--cpus-per-task=1")
        .arg(format!("--export={export}"))
        .arg(format!("--output={}/%x-%A_%a.out", dir.display()))
        .args(extra)
        .arg(repo().join("scripts/slurm").join(job));
    run_cmd(&mut cmd).trim().to_owned()
}

/// The job's state letters in `squeue` (empty once it has left the queue).
fn squeue(job: &str) -> String {
    run_cmd(Command::new("squeue").args(["-h", "-j", job, "-o", "%t"]))
        .trim()
        .to_owned()
}

/// Waits until `done`, failing after `limit` or as soon as one of `jobs` has left the
/// queue early, with the jobs' output in the message.
fn wait_for(
    what: &str,
    limit: Duration,
    dir: &Path,
    jobs: &[&str],
    mut done: impl FnMut() -> bool,
) {
    let t = Instant::now();
    while !done() {
        let gone: Vec<&&str> = jobs.iter().filter(|j| squeue(j).is_empty()).collect();
        if t.elapsed() > limit || !gone.is_empty() {
            let mut outputs = String::new();
            for f in files(dir, ".out") {
                let text = std::fs::read_to_string(&f).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(15).collect();
                outputs += &format!("== {}\n", file_name(&f));
                for l in tail.iter().rev() {
                    outputs += l;
                    outputs.push('\n');
                }
            }
            panic!("waiting for {what}: jobs that left the queue {gone:?}\n{outputs}");
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The worker id a self-play job prints on its first line.
fn worker_of(output: &Path) -> Option<String> {
    let text = std::fs::read_to_string(output).ok()?;
    let line = text.lines().find(|l| l.starts_with("selfplay: worker "))?;
    let rest = line.strip_prefix("selfplay: worker ")?;
    Some(rest.split([',', ':']).next()?.trim().to_owned())
}

/// Games in a worker's PGN files (one `[Result` tag a game).
fn pgn_games(run: &Path, worker: &str) -> usize {
    files(&run.join("games"), ".pgn")
        .iter()
        .filter(|p| file_name(p).starts_with(&format!("{worker}-")))
        .map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .matches("[Result ")
                .count()
        })
        .sum()
}

/// Chunks by worker: (files, files written with a network rather than the uniform
/// evaluator). Every chunk must read back whole (one the trainer merged away since the
/// listing is passed over; a merged file names the worker of its first chunk).
fn chunks(run: &Path) -> BTreeMap<String, (usize, usize)> {
    let mut by_worker: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for path in files(&run.join("data"), ".xqc") {
        let chunk = match xq_data::read_chunk(&path) {
            Ok(c) => c,
            // Merged into a `compact-*` file by the trainer since the listing.
            Err(_) if !path.exists() => continue,
            Err(e) => panic!("{} is not whole: {e}", path.display()),
        };
        let creator = &chunk.meta.creator;
        let worker = creator
            .split_whitespace()
            .find_map(|w| w.strip_prefix("worker="))
            .unwrap_or_else(|| panic!("{creator}"))
            .to_owned();
        let with_network = creator
            .split_whitespace()
            .find_map(|w| w.strip_prefix("model="))
            .is_some_and(|m| m != "uniform");
        let e = by_worker.entry(worker).or_default();
        e.0 += 1;
        e.1 += usize::from(with_network);
    }
    by_worker
}

fn events(run: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("torn event line {l:?}: {e}")))
        .collect()
}

/// The worker's last `selfplay` event (written when it exits).
fn last_selfplay_event(run: &Path, worker: &str) -> Option<serde_json::Value> {
    events(run)
        .into_iter()
        .rfind(|e| e["kind"] == "selfplay" && e["worker"] == worker)
}

#[test]
#[ignore = "needs the Slurm cluster of scripts/slurm/cluster (root); scripts/test runs it"]
fn a_trainer_job_and_a_selfplay_array_share_a_run_directory_and_scancel_loses_nothing() {
    let dir = std::env::temp_dir().join(format!("xqz-slurm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("tiny.toml");
    std::fs::write(&config, tiny_config()).unwrap();
    let run = dir.join("run");

    let trainer = sbatch(&dir, &config, &run, &[], "trainer.sbatch");
    let array = sbatch(
        &dir,
        &config,
        &run,
        &[&format!("--array=0-{}", WORKERS - 1)],
        "selfplay.sbatch",
    );
    eprintln!("slurm: trainer job {trainer}, self-play array {array}");
    let outputs: Vec<PathBuf> = (0..WORKERS)
        .map(|i| dir.join(format!("xqz-selfplay-{array}_{i}.out")))
        .collect();
    let mut workers: Vec<String> = Vec::new();
    let running = [trainer.as_str(), array.as_str()];
    wait_for(
        "both self-play workers to start",
        Duration::from_secs(120),
        &dir,
        &running,
        || {
            workers = outputs.iter().filter_map(|o| worker_of(o)).collect();
            workers.len() == WORKERS
        },
    );

    // Chunks from every worker, and from at least one a chunk played with a network
    // the trainer accepted after the worker started (a model swap).
    wait_for(
        "chunks from every worker, one played by an accepted network",
        Duration::from_secs(150),
        &dir,
        &running,
        || {
            let c = chunks(&run);
            workers.iter().all(|w| c.get(w).is_some_and(|e| e.0 > 0))
                && workers.iter().any(|w| c.get(w).is_some_and(|e| e.1 > 0))
        },
    );

    // scancel the first worker mid-run: SIGTERM, then (after KillWait) SIGKILL.
    let victim = format!("{array}_0");
    run_cmd(Command::new("scancel").arg(&victim));
    wait_for(
        "the cancelled worker to leave the queue",
        Duration::from_secs(60),
        &dir,
        &[],
        || squeue(&victim).is_empty(),
    );
    wait_for(
        "the trainer to finish its budget",
        Duration::from_secs(240),
        &dir,
        &[],
        || squeue(&trainer).is_empty(),
    );
    let survivor = format!("{array}_1");
    run_cmd(Command::new("scancel").arg(&survivor));
    wait_for(
        "the second worker to leave the queue",
        Duration::from_secs(60),
        &dir,
        &[],
        || squeue(&survivor).is_empty(),
    );

    let trainer_out =
        std::fs::read_to_string(dir.join(format!("xqz-train-{trainer}_4294967294.out")))
            .or_else(|_| std::fs::read_to_string(dir.join(format!("xqz-train-{trainer}.out"))))
            .unwrap_or_default();
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["finished"], true, "{state}\n{trainer_out}");

    // Every worker's summary counts exactly the games in its files: a cancelled worker
    // loses no finished game.
    let by_worker = chunks(&run);
    let mut swaps = 0;
    for (w, out) in workers.iter().zip(&outputs) {
        let text = std::fs::read_to_string(out).unwrap();
        let summary = text
            .lines()
            .find(|l| l.starts_with(&format!("selfplay: worker {w}: ")))
            .unwrap_or_else(|| panic!("worker {w} wrote no summary (killed?):\n{text}"));
        let games: usize = summary
            .split(": ")
            .nth(2)
            .and_then(|s| s.strip_prefix("games "))
            .and_then(|s| s.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{summary}"));
        assert!(games > 0, "{summary}");
        assert_eq!(pgn_games(&run, w), games, "worker {w}: {summary}");
        let event = last_selfplay_event(&run, w).unwrap_or_else(|| panic!("no event of {w}"));
        assert_eq!(event["games"], games, "{event}");
        swaps += event["model_swaps"].as_u64().unwrap();
        eprintln!(
            "slurm: worker {w}: {games} games, {} chunks, model swaps {}",
            by_worker.get(w).map_or(0, |e| e.0),
            event["model_swaps"]
        );
    }
    assert!(swaps >= 1, "no worker picked up an accepted network");

    // Candidates were trained and gated with games (not only the first acceptance).
    let all = events(&run);
    let gated = all
        .iter()
        .filter(|e| e["kind"] == "gate" && e["reason"] != "first")
        .count();
    assert!(gated >= 1, "no candidate was gated with games");
    // Nothing half-written is left behind.
    for sub in ["data", "games", "models", "checkpoints"] {
        let tmp = files(&run.join(sub), ".tmp");
        assert!(tmp.is_empty(), "{sub}: {tmp:?}");
    }
    eprintln!(
        "slurm: {} chunks, {gated} candidates gated with games, {swaps} model swaps",
        by_worker.values().map(|e| e.0).sum::<usize>()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
