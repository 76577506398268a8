//! `xqz selfplay`: a tiny run produces chunks and PGN records that read back; a worker
//! killed with SIGKILL leaves no chunk a reader would take for whole; bad configs are
//! one-line errors naming the key.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, XQZ, assert_ok, run_ok};

/// A config small enough for a test: few visits, short games.
fn tiny() -> String {
    common::tiny_selfplay(0.5)
}

fn files_with(dir: &Path, suffix: &str) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(suffix))
        .collect();
    v.sort();
    v
}

#[test]
fn a_tiny_run_writes_chunks_and_pgn_records_that_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let config = dir.path().join("selfplay.toml");
    std::fs::write(&config, tiny()).unwrap();
    let out = run_ok(
        Command::new(XQZ)
            .args([
                "selfplay", "--quiet", "--games", "6", "--seed", "3", "--run",
            ])
            .arg(&run)
            .arg("--config")
            .arg(&config),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("games 6"), "{stdout}");

    let chunks = files_with(&run.join("data"), ".xqc");
    assert!(!chunks.is_empty(), "no chunks");
    let mut records = 0;
    for c in &chunks {
        let chunk = xq_data::read_chunk(c).unwrap();
        assert_eq!(chunk.meta.encoding_version, xq_nn::ENCODING_VERSION);
        records += chunk.records.len();
    }
    assert!(records > 0);

    let pgns = files_with(&run.join("games"), ".pgn");
    assert_eq!(pgns.len(), 6, "one PGN file per game");
    let mut rounds = Vec::new();
    for p in &pgns {
        let text = std::fs::read_to_string(p).unwrap();
        assert!(text.contains("[Variant \"xiangqi\"]"));
        assert!(text.contains("[Red \"uniform\"]"), "{text}");
        for g in xq_data::read_pgn(&text) {
            let g = g.unwrap();
            assert!(!g.moves.is_empty());
            assert!(g.result.is_some());
            rounds.push(g.header("Round").unwrap().parse::<u64>().unwrap());
        }
    }
    rounds.sort();
    assert_eq!(rounds, (0..6).collect::<Vec<_>>());
    assert_eq!(files_with(&run.join("workers"), ".toml").len(), 1);
    // The final counters are logged as one `selfplay` event.
    let events = std::fs::read_to_string(run.join("events.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(events.lines().last().unwrap()).unwrap();
    assert_eq!(last["kind"], "selfplay");
    assert_eq!(last["games"], 6);
    assert!(last["average_batch"].as_f64().unwrap() >= 1.0);
    let device = last["device"].as_str().unwrap_or_default();
    assert!(device == "cpu" || device.starts_with("cuda:"), "{last}");
    assert!(files_with(&run.join("data"), ".tmp").is_empty());
}

#[test]
fn a_worker_killed_with_sigkill_leaves_only_whole_chunks_or_ignored_tmp_files() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let config = dir.path().join("selfplay.toml");
    std::fs::write(&config, tiny()).unwrap();
    let mut child = Command::new(XQZ)
        .args(["selfplay", "--quiet", "--seed", "9", "--run"])
        .arg(&run)
        .arg("--config")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once a few chunks exist, i.e. in the middle of writing more.
    let start = Instant::now();
    while files_with(&run.join("data"), ".xqc").len() < 3
        && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    let chunks = files_with(&run.join("data"), ".xqc");
    assert!(
        chunks.len() >= 3,
        "the worker wrote no chunks before the kill"
    );
    for c in &chunks {
        let chunk = xq_data::read_chunk(c).unwrap_or_else(|e| panic!("{e}"));
        assert!(!chunk.records.is_empty());
    }
    // Anything else in the directory is a temporary file readers never open, or the
    // held-out games' directory.
    for entry in std::fs::read_dir(run.join("data")).unwrap() {
        let p = entry.unwrap().path();
        if p == run.join(xq_data::layout::HELD_OUT_DIR) {
            continue;
        }
        let name = p.to_str().unwrap();
        assert!(
            name.ends_with(".xqc") || name.ends_with(".xqc.tmp"),
            "{name}"
        );
    }
    for p in files_with(&run.join("games"), ".pgn") {
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(xq_data::read_pgn(&text).iter().all(Result::is_ok));
    }
}

#[test]
fn an_unknown_config_key_is_a_one_line_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("bad.toml");
    std::fs::write(&config, "[selfplay]\nparalel_games = 4\n").unwrap();
    let out = Command::new(XQZ)
        .args(["selfplay", "--games", "1", "--run"])
        .arg(dir.path().join("run"))
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("paralel_games"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn the_accepted_network_plays_when_the_run_has_one() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    // A fresh (untrained) network, saved as the trainer saves checkpoints, and the
    // pointer the gatekeeper writes (ARCHITECTURE.md: {"name", "path", "step", "time"}).
    let mut trainer = xq_train::Trainer::new(&run, xq_train::TrainConfig::default()).unwrap();
    trainer.save_checkpoint().unwrap();
    drop(trainer);
    std::fs::create_dir_all(run.join("models")).unwrap();
    std::fs::write(
        run.join("models/accepted.json"),
        r#"{"name": "s0", "path": "checkpoints", "step": 0, "time": 0}"#,
    )
    .unwrap();
    let config = dir.path().join("selfplay.toml");
    std::fs::write(&config, tiny().replace("max_plies = 30", "max_plies = 6")).unwrap();
    run_ok(
        Command::new(XQZ)
            .args([
                "selfplay", "--quiet", "--games", "2", "--seed", "1", "--run",
            ])
            .arg(&run)
            .arg("--config")
            .arg(&config),
    );
    let pgns = files_with(&run.join("games"), ".pgn");
    assert_eq!(pgns.len(), 2);
    for p in pgns {
        let text = std::fs::read_to_string(&p).unwrap();
        // The network plays, on whichever backend `XQZ_BACKEND=auto` chose (on a CPU
        // the fastest it measured, libtorch with CUDA), not the uniform stand-in.
        assert!(
            text.contains("[Red \"native(") || text.contains("[Red \"torch("),
            "{text}"
        );
    }

    // A pointer to nothing is a clear error, not a silent fall-back to uniform.
    std::fs::write(
        run.join("models/accepted.json"),
        r#"{"name": "s9", "path": "models/accepted/s9", "step": 9, "time": 0}"#,
    )
    .unwrap();
    let out = Command::new(XQZ)
        .args(["selfplay", "--quiet", "--games", "1", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("models/accepted/s9"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

#[test]
fn several_workers_share_one_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let config = dir.path().join("selfplay.toml");
    std::fs::write(&config, tiny()).unwrap();
    // Same seed on purpose: the worker ids alone keep their files apart.
    let children: Vec<_> = (0..3)
        .map(|_| {
            Command::new(XQZ)
                .args([
                    "selfplay", "--quiet", "--games", "3", "--seed", "5", "--run",
                ])
                .arg(&run)
                .arg("--config")
                .arg(&config)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        assert_ok(&c.wait_with_output().unwrap(), "xqz selfplay");
    }
    let workers = files_with(&run.join("workers"), ".toml");
    assert_eq!(workers.len(), 3, "worker ids collided");
    assert_eq!(files_with(&run.join("games"), ".pgn").len(), 9);
    let mut ids = std::collections::BTreeSet::new();
    for c in files_with(&run.join("data"), ".xqc") {
        xq_data::read_chunk(&c).unwrap();
        let name = c.file_name().unwrap().to_str().unwrap().to_owned();
        ids.insert(name.rsplit_once('-').unwrap().0.to_owned());
    }
    assert_eq!(ids.len(), 3, "{ids:?}");
    let events = std::fs::read_to_string(run.join("events.jsonl")).unwrap();
    assert_eq!(events.lines().count(), 3);
    for line in events.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["games"], 3);
    }
}
