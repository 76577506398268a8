//! Many writers on one run directory, killed at random: 8 `xqz selfplay` workers and the
//! trainer (`xqz run`, concurrent mode, compacting old chunks) share a directory while,
//! for the first 90 seconds, a seeded killer sends SIGKILL to one of them every 1.5 to 5
//! seconds and restarts it (a killed trainer resumes its run); then the trainer finishes
//! its budget.
//!
//! Afterwards: every chunk reads back whole; every game with a PGN record has a copy in
//! the chunks (the chunk is written first, so no finished game is lost); chunk copies of
//! a game exceed its PGN records at most once a kill (a kill between the two writes), so
//! no chunk is read or merged twice (the trainer merges old chunks while workers write
//! and kills land; a kill inside a merge is rare here, so each of its states is also
//! built by hand in xq-data's window tests); no merge journal and no torn
//! `events.jsonl` line is left; the run finished its budget.
//! The figures are printed (`cargo test --test it many_writers:: -- --nocapture`) and
//! recorded in docs/BENCHMARKS.md.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TINY_GATE_AND_RATING, XQZ, files, tiny_selfplay, tiny_train};
use xq_core::hash::SplitMix64;

const WORKERS: usize = 8;
const KILL_SEED: u64 = 2026;
/// The run's budget in minutes (time the trainer ran; a kill loses what it spent since
/// its last saved state).
const BUDGET_MINUTES: f64 = 1.5;
/// How long the killer works.
const KILL_SECONDS: u64 = 90;
/// How long a worker has lived before the final SIGTERM: one signalled before it has
/// installed its handler (the exec into `xqz-torch`, libtorch's loading) dies by the
/// signal, with no game played yet, and a respawn can come just before the trainer ends.
const STARTUP: Duration = Duration::from_secs(10);

/// The processes of the test, killed when it ends, even by a failed assertion.
struct Fleet(Vec<Child>);

impl Drop for Fleet {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn run_config() -> String {
    format!(
        r#"
[run]
seed = 5
mode = "concurrent"
budget_minutes = {BUDGET_MINUTES}
games_per_generation = 4
final_reserve_minutes = 0.1
{selfplay}{train}{gate_and_rating}"#,
        // Every position a full search, so every game has records and a chunk.
        gate_and_rating = TINY_GATE_AND_RATING,
        selfplay = tiny_selfplay(1.0).replace("search_threads = 2", "search_threads = 1"),
        train = tiny_train("compact_files = 10\n")
            .replace("min_positions = 100", "min_positions = 60")
            .replace("size = 5000", "size = 300"),
    )
}

fn spawn(args: &[&str], run: &Path, log: &Path) -> Child {
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(XQZ)
        .args(args)
        .arg("--run")
        .arg(run)
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap()
}

#[test]
fn eight_workers_and_the_trainer_killed_at_random_lose_no_game_and_tear_nothing() {
    let dir = std::env::temp_dir().join(format!("xqz-many-writers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("tiny.toml");
    std::fs::write(&config, run_config()).unwrap();
    let config = config.to_str().unwrap().to_owned();
    let run = dir.join("run");
    let log = dir.join("processes.log");

    let trainer_args = ["run", "--config", &config];
    let worker_args = ["selfplay", "--config", &config, "--quiet"];
    // fleet.0[0] is the trainer, the others the workers.
    let mut fleet = Fleet(vec![spawn(&trainer_args, &run, &log)]);
    fleet
        .0
        .extend((0..WORKERS).map(|_| spawn(&worker_args, &run, &log)));
    let mut born = [Instant::now(); WORKERS + 1];

    let mut rng = SplitMix64::new(KILL_SEED);
    let (mut worker_kills, mut trainer_kills) = (0u32, 0u32);
    let started = Instant::now();
    let limit = Duration::from_secs(KILL_SECONDS + 240);
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();
    let finished = loop {
        // Sleep 1.5 to 5 s, watching for the trainer's end.
        let pause = Duration::from_millis(1500 + rng.below(3500));
        let until = Instant::now() + pause;
        let mut done = None;
        while Instant::now() < until {
            if let Some(status) = fleet.0[0].try_wait().unwrap() {
                done = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if let Some(status) = done {
            break status;
        }
        assert!(
            started.elapsed() < limit,
            "the run did not finish in time:\n{}",
            log_text()
        );
        if started.elapsed() >= Duration::from_secs(KILL_SECONDS) {
            continue;
        }
        // One kill in six hits the trainer, the others a random worker.
        let i = if rng.below(6) == 0 {
            trainer_kills += 1;
            0
        } else {
            worker_kills += 1;
            1 + rng.below(WORKERS as u64) as usize
        };
        fleet.0[i].kill().unwrap();
        fleet.0[i].wait().unwrap();
        let args: &[&str] = if i == 0 { &trainer_args } else { &worker_args };
        fleet.0[i] = spawn(args, &run, &log);
        born[i] = Instant::now();
    };
    assert!(finished.success(), "trainer failed:\n{}", log_text());
    // The workers end cleanly (SIGTERM: finished games written).
    if let Some(youngest) = born[1..].iter().max() {
        std::thread::sleep(STARTUP.saturating_sub(youngest.elapsed()));
    }
    for w in &fleet.0[1..] {
        let pid = w.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    }
    let stop_by = Instant::now() + Duration::from_secs(60);
    for w in &mut fleet.0[1..] {
        let status = loop {
            if let Some(status) = w.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < stop_by, "a worker ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(100));
        };
        assert!(
            status.success(),
            "a worker failed on SIGTERM:\n{}",
            log_text()
        );
    }

    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["finished"], true, "{state}");

    // Every chunk whole, the held-out games' too.
    let mut chunk_games: HashMap<(String, Vec<xq_core::Move>), usize> = HashMap::new();
    let mut chunk_files = files(&run.join("data"), ".xqc");
    chunk_files.extend(files(&run.join(xq_data::layout::HELD_OUT_DIR), ".xqc"));
    let mut merged_files = 0;
    for path in &chunk_files {
        let chunk = xq_data::read_chunk(path)
            .unwrap_or_else(|e| panic!("{} is not whole: {e}", path.display()));
        merged_files += usize::from(
            path.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("compact-"),
        );
        for g in &chunk.games {
            *chunk_games
                .entry((g.start.fen(), g.moves.clone()))
                .or_default() += 1;
        }
    }
    assert!(
        files(&run.join("data"), ".journal").is_empty(),
        "a merge journal was left"
    );
    assert!(merged_files > 0, "no compaction happened during the test");

    // Games are compared as multisets of (start, moves): a trained network plays the
    // same game again often, so a game's content is no identity. Every PGN record of a
    // game has a chunk copy (none lost), and chunk copies exceed PGN records only where
    // a kill fell between a chunk's rename and its PGN file's, at most once a kill; a
    // chunk read or merged twice would add a whole file's games.
    let mut pgn_games: HashMap<(String, Vec<xq_core::Move>), usize> = HashMap::new();
    for path in files(&run.join("games"), ".pgn") {
        let text = std::fs::read_to_string(&path).unwrap();
        for game in xq_data::read_pgn(&text) {
            let game = game.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            *pgn_games.entry((game.start.fen(), game.moves)).or_default() += 1;
        }
    }
    let played: usize = pgn_games.values().sum();
    let lost: usize = pgn_games
        .iter()
        .map(|(g, &n)| n.saturating_sub(chunk_games.get(g).copied().unwrap_or(0)))
        .sum();
    let extra: usize = chunk_games
        .iter()
        .map(|(g, &n)| n.saturating_sub(pgn_games.get(g).copied().unwrap_or(0)))
        .sum();
    let kills = (worker_kills + trainer_kills) as usize;
    assert!(played > 100, "only {played} games were played");
    assert_eq!(lost, 0, "finished games without a chunk");
    assert!(
        extra <= kills,
        "{extra} chunk games without a PGN record after {kills} kills: data read twice"
    );

    // No torn event line.
    let events = std::fs::read_to_string(run.join("events.jsonl")).unwrap();
    let torn = events
        .lines()
        .filter(|l| serde_json::from_str::<serde_json::Value>(l).is_err())
        .count();
    assert_eq!(torn, 0, "torn lines in events.jsonl");
    let leftover_tmp =
        files(&run.join("data"), ".tmp").len() + files(&run.join("games"), ".tmp").len();

    println!(
        "many writers: {WORKERS} workers + trainer for {:.0} s (kill seed {KILL_SEED}): \
         {worker_kills} worker kills, {trainer_kills} trainer kills; {played} games with \
         PGN records, {} games in {} chunk files ({merged_files} merged); lost 0, chunk \
         games without a PGN record {extra} (at most one a kill), torn event lines 0; \
         {leftover_tmp} temporary files of killed writes left",
        started.elapsed().as_secs_f64(),
        chunk_games.values().sum::<usize>(),
        chunk_files.len()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
