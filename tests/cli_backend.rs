//! Which process loads libtorch: `xqz` never does (it runs the network-free commands
//! itself and hands the others to `xqz-torch`), `xqz-torch` always does.

use std::{
    io::{BufRead, BufReader, Write},
    process::{Command, Stdio},
};

const XQZ: &str = env!("CARGO_BIN_EXE_xqz");
const XQZ_TORCH: &str = env!("CARGO_BIN_EXE_xqz-torch");

/// The shared objects mapped by a running `BIN ucci` process (read from
/// `/proc/PID/maps` once it has answered `ucciok`).
fn mapped_libraries(bin: &str, args: &[&str]) -> Vec<String> {
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "ucci").unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "no ucciok");
        if line.trim() == "ucciok" {
            break;
        }
    }
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", child.id())).unwrap();
    writeln!(stdin, "quit").unwrap();
    child.wait().unwrap();
    let mut libs: Vec<String> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| p.contains(".so"))
        .map(str::to_owned)
        .collect();
    libs.dedup();
    libs
}

#[test]
fn the_front_end_engine_maps_no_libtorch() {
    let libs = mapped_libraries(XQZ, &["ucci"]);
    assert!(!libs.is_empty(), "no shared objects seen at all");
    assert!(
        !libs
            .iter()
            .any(|l| l.contains("torch") || l.contains("c10")),
        "{libs:?}"
    );
}

#[test]
fn the_backend_binary_maps_libtorch() {
    // The same check fails where it should: the test can tell the two apart.
    let libs = mapped_libraries(XQZ_TORCH, &["ucci"]);
    assert!(libs.iter().any(|l| l.contains("libtorch")), "{libs:?}");
}

#[test]
fn network_commands_are_handed_to_the_backend_with_their_arguments() {
    // `train --help` is parsed by xqz-torch: its own flags show.
    let out = Command::new(XQZ)
        .args(["train", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--pgn"), "{text}");
    // So is `help train`.
    let out = Command::new(XQZ).args(["help", "train"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--pgn"), "{text}");
    // A match with a network player loads it on a backend (xqz's native one on a
    // machine without a GPU), which names the bad network.
    let out = Command::new(XQZ)
        .args(["match", "--a", "net:/nonexistent/net.json", "--b", "random"])
        .args(["--games", "2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/net.json"), "{err}");
    assert!(!err.contains("no network backend"), "{err}");
}

#[test]
fn without_the_backend_binary_the_error_says_how_to_build_it() {
    let dir = tempfile::tempdir().unwrap();
    let lone = dir.path().join("xqz");
    std::fs::copy(XQZ, &lone).unwrap();
    let out = Command::new(&lone)
        .args(["train", "--run", "x"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("xqz-torch") && err.contains("--bins"), "{err}");
    // Network-free commands still run.
    let out = Command::new(&lone)
        .args(["perft", "--depth", "1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Nodes searched: 44"));
}

#[test]
fn a_command_reports_its_peak_memory_when_asked() {
    // What `xqz bench startup` reads: the process's own VmHWM, printed as it exits.
    let out = Command::new(XQZ)
        .args(["perft", "--depth", "1"])
        .env(xqzero::PEAK_RSS_ENV, "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let kib: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("peak_rss_kib ")?.parse().ok())
        .unwrap_or_else(|| panic!("no peak_rss_kib line in {err:?}"));
    assert!(kib > 0);
    let quiet = Command::new(XQZ)
        .args(["perft", "--depth", "1"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("peak_rss_kib"));
}
