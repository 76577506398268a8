//! Which process loads libtorch: `xqz` never does (it runs the network-free commands
//! itself, the commands that read a run directory too, and hands the others to
//! `xqz-torch`), `xqz-torch` always does.

use std::{
    fs,
    io::{BufRead, BufReader, Write},
    path::Path,
    process::{Command, Output, Stdio},
    sync::mpsc,
    time::Duration,
};

use crate::common::{XQZ, assert_ok, run_ok};

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
    let libs = libraries_of(child.id());
    writeln!(stdin, "quit").unwrap();
    child.wait().unwrap();
    libs
}

/// The shared objects process `pid` maps (`/proc/PID/maps`).
fn libraries_of(pid: u32) -> Vec<String> {
    let maps = fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let mut libs: Vec<String> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| p.contains(".so"))
        .map(str::to_owned)
        .collect();
    libs.dedup();
    libs
}

fn maps_torch(libs: &[String]) -> bool {
    libs.iter()
        .any(|l| l.contains("torch") || l.contains("c10"))
}

/// Runs `xqz ARGS` until it opens the FIFO `fifo` to read it, and returns the shared
/// objects it maps then, with its output once it has read `content` through the FIFO
/// and exited. A short command is held at the FIFO so that its maps can be read while
/// it runs (an `exec` of `xqz-torch` would keep the process id and map libtorch).
fn libraries_while_reading(args: &[&str], fifo: &Path, content: &[u8]) -> (Vec<String>, Output) {
    let made = Command::new("mkfifo").arg(fifo).status().unwrap();
    assert!(made.success(), "mkfifo {}", fifo.display());
    let child = Command::new(XQZ)
        .args(args)
        // Networks on the CPU (xqz's own backend) whatever devices the machine has.
        .env("XQZ_BACKEND", "native")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening a FIFO to write waits for its reader: in a thread, so that a command
    // that never gets there fails the test instead of hanging it.
    let (opened, open) = mpsc::channel();
    let path = fifo.to_path_buf();
    std::thread::spawn(move || opened.send(fs::OpenOptions::new().write(true).open(path)));
    let mut writer = match open.recv_timeout(Duration::from_secs(120)) {
        Ok(writer) => writer.unwrap(),
        Err(_) => {
            let mut child = child;
            let _ = child.kill();
            // Releases the thread waiting for a reader.
            let _ = fs::File::open(fifo);
            let out = child.wait_with_output().unwrap();
            panic!(
                "xqz {args:?} never read {}: {}",
                fifo.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    };
    let libs = libraries_of(child.id());
    writer.write_all(content).unwrap();
    drop(writer);
    (libs, child.wait_with_output().unwrap())
}

#[test]
fn the_front_end_engine_maps_no_libtorch() {
    let libs = mapped_libraries(XQZ, &["ucci"]);
    assert!(!libs.is_empty(), "no shared objects seen at all");
    assert!(!maps_torch(&libs), "{libs:?}");
}

#[test]
fn the_report_of_a_run_is_written_without_libtorch() {
    let run = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let page = out.path().join("page.html");
    let events = run.path().join(xq_data::layout::EVENTS_FILE);
    let line = br#"{"time": 1790000000, "kind": "candidate", "model": "s0000000100", "step": 100}"#;
    let (run_arg, page_arg) = (run.path().to_str().unwrap(), page.to_str().unwrap());
    let (libs, done) = libraries_while_reading(
        &["report", "--run", run_arg, "--out", page_arg],
        &events,
        line,
    );
    assert_ok(&done, "xqz report");
    assert!(page.is_file());
    assert!(!libs.is_empty(), "no shared objects seen at all");
    assert!(!maps_torch(&libs), "{libs:?}");
}

#[test]
fn the_networks_of_a_run_are_rated_without_libtorch() {
    // One accepted network whose weights are a FIFO: `xqz strength` holds at loading
    // them, the first time a network is needed.
    let run = tempfile::tempdir().unwrap();
    let model = run
        .path()
        .join(xq_data::layout::ACCEPTED_DIR)
        .join("s0000000001");
    fs::create_dir_all(&model).unwrap();
    let mut sidecar = xq_nn::checkpoint::Sidecar::new(Default::default(), 1, 0, 1);
    sidecar.weights = "weights.safetensors".into();
    sidecar.ema = sidecar.weights.clone();
    let stem = xq_nn::checkpoint::stem(1);
    fs::write(model.join(format!("{stem}.json")), sidecar.to_json()).unwrap();
    let out = tempfile::tempdir().unwrap();
    let (libs, done) = libraries_while_reading(
        &[
            "strength",
            "--run",
            run.path().to_str().unwrap(),
            "--anchors",
            "random",
            "--games",
            "2",
            "--visits",
            "2",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &model.join(&sidecar.weights),
        b"not a safetensors file",
    );
    // The network ran here, on the native backend, which names the weights it
    // could not read.
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(!done.status.success(), "{err}");
    assert!(err.contains("weights.safetensors"), "{err}");
    assert!(!libs.is_empty(), "no shared objects seen at all");
    assert!(!maps_torch(&libs), "{libs:?}");
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
    let out = run_ok(Command::new(XQZ).args(["train", "--help"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--pgn"), "{text}");
    // So is `help train`.
    let out = run_ok(Command::new(XQZ).args(["help", "train"]));
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
    let out = run_ok(Command::new(&lone).args(["perft", "--depth", "1"]));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Nodes searched: 44"));
}

#[test]
fn a_command_reports_its_peak_memory_when_asked() {
    // What `xqz bench startup` reads: the process's own VmHWM, printed as it exits.
    let out = run_ok(
        Command::new(XQZ)
            .args(["perft", "--depth", "1"])
            .env(xqzero::PEAK_RSS_ENV, "1"),
    );
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

/// `xqz` tells the `xqz-torch` it execs which build it is from; a backend from another
/// build (a partial `cargo build --bin xqz`) refuses to run rather than run stale code.
#[test]
fn xqz_torch_from_another_build_refuses_to_run_and_names_both_builds() {
    let run = |front: Option<&str>| {
        let mut cmd = Command::new(XQZ_TORCH);
        cmd.args(["perft", "--depth", "1"]);
        if let Some(id) = front {
            cmd.env("XQZ_FRONT_BUILD_ID", id);
        }
        cmd.output().unwrap()
    };
    let stale = run(Some("0123456789abcdef"));
    assert!(!stale.status.success());
    let err = String::from_utf8_lossy(&stale.stderr);
    assert!(
        err.contains("0123456789abcdef") && err.contains(xqzero::BUILD_ID),
        "{err}"
    );
    for same in [Some(xqzero::BUILD_ID), None] {
        let out = run(same);
        assert_ok(&out, "xqz-torch perft");
        assert!(String::from_utf8_lossy(&out.stdout).contains("44"));
    }
    // Through the front end, the ids agree and the command runs.
    run_ok(Command::new(XQZ).args(["bench", "--help"]));
}
