//! An exported player runs anywhere: its directory holds the libtorch-free `xqz`, the
//! weights and engine.toml; copied away from the project and started with a bare
//! environment (no `.venv` on the PATH, no LD_LIBRARY_PATH) it answers `ucci`, maps no
//! libtorch, stays small, and plays a move on the native CPU backend.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use xq_train::{DeviceChoice, NetConfig, TrainConfig, Trainer};

use crate::common::run_ok;

const XQZ_TORCH: &str = env!("CARGO_BIN_EXE_xqz-torch");

/// A run directory with one checkpoint of a randomly initialised 3 × 32 network.
fn run_with_a_checkpoint(dir: &Path) {
    let cfg = TrainConfig {
        net: NetConfig {
            blocks: 3,
            channels: 32,
            ..NetConfig::small()
        },
        device: DeviceChoice::Cpu,
        log_every: 0,
        ..TrainConfig::default()
    };
    let mut t = Trainer::new(dir, cfg).unwrap();
    t.save_checkpoint().unwrap();
}

/// Reads lines until one equals `want` or starts with it; panics on end of output.
fn read_until(out: &mut impl BufRead, want: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "no {want:?} line");
        if line.trim_end().starts_with(want) {
            return line.trim_end().to_owned();
        }
    }
}

#[test]
fn an_exported_player_runs_without_libtorch_the_project_or_the_venv() {
    let work = tempfile::tempdir().unwrap();
    let run = work.path().join("run");
    run_with_a_checkpoint(&run);
    let exported = work.path().join("player");
    run_ok(
        Command::new(XQZ_TORCH)
            .args(["export", "--run"])
            .arg(&run)
            .arg("--out")
            .arg(&exported)
            .args(["--visits", "40"]),
    );

    // Copied elsewhere, the run and the build gone from its reach.
    let away = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&exported).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), away.path().join(entry.file_name())).unwrap();
    }
    std::fs::remove_dir_all(&run).unwrap();
    let size = std::fs::metadata(away.path().join("xqz")).unwrap().len();

    let start = Instant::now();
    let mut child = Command::new(away.path().join("xqzero-engine"))
        .current_dir(away.path())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "ucci").unwrap();
    read_until(&mut out, "ucciok");
    let answered = start.elapsed();
    let pid = child.id();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    assert!(
        !maps.contains("libtorch") && !maps.contains("libc10"),
        "the player maps libtorch"
    );
    writeln!(stdin, "position startpos").unwrap();
    writeln!(stdin, "go depth 1").unwrap();
    let best = read_until(&mut out, "bestmove");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    writeln!(stdin, "quit").unwrap();
    assert!(child.wait().unwrap().success());
    eprintln!(
        "player: xqz {:.1} MB, ucciok after {:.1} ms, peak RSS after a 40-visit search {:.1} MB, {best}",
        size as f64 / 1e6,
        answered.as_secs_f64() * 1e3,
        peak_kib as f64 / 1024.0
    );
    assert!(best.len() > "bestmove ".len(), "{best}");
    assert!(peak_kib < 50 * 1024, "peak RSS {peak_kib} KiB");
    // Generous for a loaded test machine; BENCHMARKS.md has the measured start-up.
    assert!(answered < Duration::from_secs(2), "{answered:?}");
}
