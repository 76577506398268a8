//! A full disk is a clear error, not a panic, and loses nothing already written:
//! `xqz selfplay` and `xqz train` run on a run directory on a tiny tmpfs (mounted in a
//! user + mount namespace with `unshare -rm`, so no real root is needed) until the
//! filesystem fills up mid-run. They must exit non-zero with one error naming
//! `No space left on device` and the file, never panic, and every chunk, PGN record and
//! checkpoint left in the run directory must read back whole (no half file, no
//! temporary file taken for data); training resumes from the newest checkpoint.
//!
//! The mount is visible only inside the namespace, so the script copies the run
//! directory out (`cp -a`) before it ends, and the checks run on the copy.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{self, XQZ, run_ok};

/// Small and fast: short games, every position a training record, one game a file.
fn tiny_config() -> String {
    common::tiny_selfplay(1.0) + &common::tiny_train("log_every = 1\nevent_every = 1\n")
}

/// What one command did inside the tiny filesystem.
struct Outcome {
    code: Option<i32>,
    stderr: String,
    /// The mount point as the command saw it (the paths its messages name).
    mount: PathBuf,
    /// The run directory, copied out of the tmpfs after the command ended.
    run: PathBuf,
}

/// Mounts a tmpfs of `size_kb` KiB at `base/mnt` in a new user + mount namespace, copies
/// `seed` (a run directory, if any) into `mnt/run`, runs `xqz ARGS --run mnt/run` there,
/// and copies the run directory out to `base/out/run`.
fn in_tiny_fs(base: &Path, size_kb: u32, seed: Option<&Path>, args: &[&str]) -> Outcome {
    let mount = base.join("mnt");
    let out = base.join("out");
    std::fs::create_dir_all(&mount).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let script = r#"
        set -u
        mount -t tmpfs -o "size=${SIZE_KB}k" none "$MNT" || { echo "mount failed" >&2; exit 90; }
        if [ -n "$SEED" ]; then cp -a "$SEED" "$MNT/run" || exit 91; fi
        "$XQZ" "$@" --run "$MNT/run" > "$OUT/stdout" 2> "$OUT/stderr"
        echo $? > "$OUT/rc"
        cp -a "$MNT/run" "$OUT/run" || exit 92
    "#;
    let status = Command::new("unshare")
        .args(["-rm", "sh", "-c", script, "sh"])
        .args(args)
        .env("SIZE_KB", size_kb.to_string())
        .env("MNT", &mount)
        .env("OUT", &out)
        .env("XQZ", XQZ)
        .env("SEED", seed.map(Path::as_os_str).unwrap_or_default())
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `unshare` ({e}): this test needs util-linux's unshare and \
                 unprivileged user namespaces (`unshare -rm true` must work) to mount a tiny \
                 tmpfs; it does not skip, because a disk-full path nobody runs is untested"
            )
        });
    assert!(
        status.success(),
        "the namespace script failed ({status}; 90: `mount -t tmpfs` refused, so user \
         namespaces are probably disabled, try `unshare -rm true`; 91/92: copying the run \
         directory failed)"
    );
    let rc = std::fs::read_to_string(out.join("rc")).unwrap();
    Outcome {
        code: rc.trim().parse().ok(),
        stderr: std::fs::read_to_string(out.join("stderr")).unwrap(),
        mount,
        run: out.join("run"),
    }
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn with_suffix(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    files(dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect()
}

/// The failure is one clear line: non-zero exit, ENOSPC and a path in the run
/// directory named, no panic.
fn assert_clear_disk_full_error(o: &Outcome) {
    let e = &o.stderr;
    assert!(
        o.code.is_some_and(|c| c != 0),
        "exit status {:?}: {e}",
        o.code
    );
    assert!(!e.contains("panicked"), "a panic: {e}");
    assert!(!e.contains("RUST_BACKTRACE"), "a panic: {e}");
    let error = e
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no `error:` line: {e}"));
    assert!(
        error.contains("No space left on device"),
        "the error does not say the disk is full: {e}"
    );
    let run = o.mount.join("run").display().to_string();
    assert!(
        error.contains(&run),
        "the error names no file of the run directory {run}: {e}"
    );
}

/// Nothing half-written is left for a reader: every chunk reads back whole, every PGN
/// file parses into finished games, no temporary file remains anywhere.
fn assert_everything_reads_back(run: &Path) -> usize {
    let chunks = with_suffix(&run.join("data"), ".xqc");
    for c in &chunks {
        let chunk =
            xq_data::read_chunk(c).unwrap_or_else(|e| panic!("a damaged chunk was left: {e}"));
        assert!(!chunk.records.is_empty());
    }
    for p in with_suffix(&run.join("games"), ".pgn") {
        let text = std::fs::read_to_string(&p).unwrap();
        let games = xq_data::read_pgn(&text);
        assert!(!games.is_empty(), "empty PGN file {}", p.display());
        for g in games {
            let g = g.unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(g.result.is_some(), "unfinished game in {}", p.display());
        }
    }
    let tmp: Vec<_> = files(run)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(tmp.is_empty(), "temporary files left behind: {tmp:?}");
    chunks.len()
}

#[test]
fn selfplay_on_a_full_disk_stops_with_an_error_naming_the_file_and_keeps_every_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, tiny_config()).unwrap();
    let config = config.to_str().unwrap();
    // tmpfs allocates whole pages: the worker record takes one, then each game a chunk
    // and a PGN file. An odd and an even number of pages make the disk fill up on a
    // chunk in one run and on a PGN record in the other.
    let mut messages = String::new();
    for (i, size_kb) in [28, 24].into_iter().enumerate() {
        let base = dir.path().join(format!("sp{i}"));
        let o = in_tiny_fs(
            &base,
            size_kb,
            None,
            &[
                "selfplay", "--quiet", "--games", "1000", "--seed", "3", "--config", config,
            ],
        );
        assert_clear_disk_full_error(&o);
        let chunks = assert_everything_reads_back(&o.run);
        assert!(
            chunks >= 1,
            "the disk filled before any chunk was written ({size_kb} KiB): {}",
            o.stderr
        );
        messages.push_str(&o.stderr);
    }
    assert!(
        messages.contains("cannot write chunk "),
        "no run failed on a chunk: {messages}"
    );
    assert!(
        messages.contains(".pgn: No space left on device"),
        "no run failed on a PGN record: {messages}"
    );
}

/// The step of the newest complete checkpoint (one with a sidecar).
fn newest_checkpoint(run: &Path) -> Option<u64> {
    with_suffix(&run.join("checkpoints"), ".json")
        .iter()
        .filter_map(|p| {
            p.file_name()?
                .to_str()?
                .strip_prefix("ckpt-")?
                .strip_suffix(".json")?
                .parse()
                .ok()
        })
        .max()
}

#[test]
fn training_on_a_full_disk_stops_with_an_error_and_resumes_from_its_last_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, tiny_config()).unwrap();
    let config = config.to_str().unwrap();
    // Self-play data on the real disk, then training with room for only a few
    // checkpoints (about 90 KiB each with the tiny network, plus candidates and logs).
    let seed = dir.path().join("seed");
    run_ok(
        Command::new(XQZ)
            .args(["selfplay", "--quiet", "--games", "24", "--seed", "1"])
            .args(["--config", config, "--run"])
            .arg(&seed),
    );
    let before = files(&seed.join("data"));
    let o = in_tiny_fs(
        &dir.path().join("train"),
        512,
        Some(&seed),
        &["train", "--quiet", "--steps", "200", "--config", config],
    );
    assert_clear_disk_full_error(&o);
    let chunks = assert_everything_reads_back(&o.run);
    assert_eq!(chunks, before.len(), "training lost self-play data");

    // At least one checkpoint was written before the disk filled, and the newest one is
    // whole: training continues from it on a disk with space.
    let step = newest_checkpoint(&o.run)
        .unwrap_or_else(|| panic!("the disk filled before the first checkpoint: {}", o.stderr));
    for f in files(&o.run.join("checkpoints")) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let step_of = |n: &str| n.strip_prefix("ckpt-")?.get(..10)?.parse::<u64>().ok();
        assert!(
            step_of(&name).is_some_and(|s| s <= step),
            "{name}: files of an unfinished checkpoint newer than step {step} were left"
        );
    }
    // It resumes after the disk filled.
    let out = run_ok(
        Command::new(XQZ)
            .args([
                "train", "--quiet", "--steps", "2", "--config", config, "--run",
            ])
            .arg(&o.run),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("step {} (2 this run)", step + 2)),
        "did not resume from step {step}: {stdout}"
    );
}
