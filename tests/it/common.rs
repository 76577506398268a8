//! Fixtures shared by the command-line tests: the binary and the tiny configs several
//! tests build on, so each exists once.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The front end, as a user runs it.
pub const XQZ: &str = env!("CARGO_BIN_EXE_xqz");

/// Runs `cmd` to its end and asserts that it succeeded; returns its output. A failure
/// names the command and its exit status and shows its stdout and stderr, so that no
/// test has to say what to print (the one "run, check, show why" of these tests, as
/// ripgrep's `TestCommand`).
#[track_caller]
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => panic!("cannot run {cmd:?}: {e}"),
    };
    assert_ok(&out, &format!("{cmd:?}"));
    out
}

/// Asserts that the process `what` whose `out` this is succeeded, as [`run_ok`] does:
/// for a process spawned and waited on by hand.
#[track_caller]
pub fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `[selfplay]` small enough for a test: few visits, short games, one game a file.
/// `full_probability` is the share of full searches (those become training records).
pub fn tiny_selfplay(full_probability: f64) -> String {
    format!(
        r#"
[selfplay]
parallel_games = 4
search_threads = 2
max_batch = 8
max_plies = 30
games_per_file = 1

[selfplay.search.playout_cap]
full_visits = 8
cheap_visits = 2
full_probability = {full_probability:?}
"#
    )
}

/// `[train]` for a 1 × 8 network on one thread, so every training test takes seconds
/// on two cores; `extra` adds keys of the `[train]` table itself.
pub fn tiny_train(extra: &str) -> String {
    format!(
        r#"
[train]
batch_size = 32
lr = 0.05
warmup_steps = 2
ema_decay = 0.5
device = "cpu"
threads = 1
data_threads = 1
prefetch = 2
min_positions = 100
candidate_every = 4
checkpoint_every = 2
{extra}[train.net]
blocks = 1
channels = 8
history = 2
value_channels = 2
value_hidden = 8
[train.window]
kind = "fixed"
size = 5000
"#
    )
}

/// `[gate]` and `[rating]` for a concurrent test run: two games a match at 4 visits,
/// and every candidate accepted (`threshold = 0`), so networks change hands often.
pub const TINY_GATE_AND_RATING: &str = r#"
[gate]
games = 2
visits = 4
threshold = 0.0

[rating]
opponents = ["random"]
games = 2
visits = 4
final_opponents = ["random"]
final_games = 2
"#;

/// The files of `dir` whose names end in `suffix`, sorted (none if `dir` is missing).
pub fn files(dir: &std::path::Path, suffix: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_string_lossy().ends_with(suffix))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
