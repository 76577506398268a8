//! `xqz train`: trains paced on a run's chunks and resumes the step count (also after
//! SIGKILL); an interrupted run's weights equal an uninterrupted one's; PGN training
//! beats the uniform guess on held-out games; bad config keys are named.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use xq_data::{Chunk, ChunkMeta, ChunkWriter, read_pgn, supervised::add_game};

use crate::common::{self, XQZ, run_ok};
const GAMES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/hu_ronghua_1391_iccs.pgn"
);

/// A tiny network and batch, so every test takes seconds on two cores.
fn tiny() -> String {
    common::tiny_train("log_every = 0\nevent_every = 2\nholdout_max = 600\n")
}

fn games() -> Vec<xq_data::PgnGame> {
    let text = std::fs::read_to_string(GAMES).unwrap();
    read_pgn(&text).into_iter().filter_map(Result::ok).collect()
}

/// Writes games `range` of the master collection as one chunk into `RUN/data`; returns
/// the positions written.
fn write_chunk(run: &Path, worker: &str, range: std::ops::Range<usize>) -> usize {
    let mut chunk = Chunk::new(ChunkMeta {
        encoding_version: xq_nn::encode::ENCODING_VERSION,
        policy_index_version: xq_nn::policy::POLICY_INDEX_VERSION,
        creator: "cli_train test".into(),
        seed: 0,
    });
    for g in &games()[range] {
        add_game(&mut chunk, &g.start, &g.moves, g.result).unwrap();
    }
    ChunkWriter::new(run.join("data"), worker)
        .unwrap()
        .write(&chunk)
        .unwrap();
    chunk.records.len()
}

fn setup(extra: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let config = dir.path().join("train.toml");
    // Extra `[train]` keys go right after the `[train]` header.
    std::fs::write(
        &config,
        tiny().replacen("[train]\n", &format!("[train]\n{extra}"), 1),
    )
    .unwrap();
    (dir, run, config)
}

fn train(run: &Path, config: &Path, extra: &[&str]) -> Output {
    run_ok(
        Command::new(XQZ)
            .args(["train", "--quiet", "--run"])
            .arg(run)
            .arg("--config")
            .arg(config)
            .args(extra),
    )
}

/// The step in the `step N (...)` summary line.
fn final_step(out: &Output) -> u64 {
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("step ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no step line in {stdout}"))
}

fn events(run: &Path, kind: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["kind"] == kind)
        .collect()
}

#[test]
fn training_is_paced_to_the_data_and_resumes_where_it_stopped() {
    // 0.25 samples per position: P positions allow floor(P / 4 / 32) steps.
    let (_dir, run, config) = setup("samples_per_position = 0.25\n");
    let p1 = write_chunk(&run, "w0", 0..4) as u64;
    let out = train(&run, &config, &[]);
    let first = final_step(&out);
    assert_eq!(
        first,
        p1 / 4 / 32,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("stopped for more self-play data"));

    // Nothing new: a second call takes no step.
    assert_eq!(final_step(&train(&run, &config, &[])), first);

    // New data lets it continue from its checkpoint.
    let p2 = write_chunk(&run, "w1", 4..10) as u64;
    let out = train(&run, &config, &[]);
    assert_eq!(final_step(&out), (p1 + p2) / 4 / 32);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ckpt = stdout
        .lines()
        .find_map(|l| l.strip_prefix("checkpoint "))
        .unwrap();
    assert!(Path::new(ckpt).is_file(), "{ckpt}");

    let ev = events(&run, "train");
    assert!(!ev.is_empty());
    for key in [
        "step",
        "samples",
        "policy_loss",
        "value_loss",
        "total_loss",
        "policy_accuracy",
        "value_accuracy",
        "lr",
        "grad_norm",
        "samples_per_second",
        "window",
        "data_wait_share",
    ] {
        assert!(
            ev[0].get(key).is_some(),
            "train event lacks {key}: {}",
            ev[0]
        );
    }
    let steps: Vec<u64> = ev.iter().map(|e| e["step"].as_u64().unwrap()).collect();
    assert!(
        steps.windows(2).all(|w| w[0] < w[1]),
        "steps repeat after resume: {steps:?}"
    );
    assert!(run.join("models/candidates/s0000000004").is_dir());
}

#[test]
fn an_interrupted_run_ends_with_the_same_weights_as_an_uninterrupted_one() {
    let weights = |run: &Path, step: u64| {
        std::fs::read(run.join(format!("checkpoints/ckpt-{step:010}.weights.safetensors"))).unwrap()
    };
    let (_d1, straight, config) = setup("");
    write_chunk(&straight, "w0", 0..6);
    assert_eq!(final_step(&train(&straight, &config, &["--steps", "6"])), 6);

    let (_d2, split, _) = setup("");
    write_chunk(&split, "w0", 0..6);
    assert_eq!(final_step(&train(&split, &config, &["--steps", "3"])), 3);
    assert_eq!(final_step(&train(&split, &config, &["--steps", "3"])), 6);
    assert!(
        weights(&straight, 6) == weights(&split, 6),
        "resumed weights differ"
    );
}

#[test]
fn quiet_training_still_warns_about_a_corrupt_chunk_records_it_and_the_report_counts_it() {
    let (_dir, run, config) = setup("samples_per_position = 0.25\n");
    write_chunk(&run, "w0", 0..4);
    std::fs::write(run.join("data/bad-00000001.xqc"), b"not a chunk at all").unwrap();
    let out = train(&run, &config, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: data/bad-00000001.xqc") && stderr.contains("(skipped)"),
        "--quiet hid the warning: {stderr:?}"
    );
    let warnings = events(&run, "warning");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0]["what"], "chunk");
    assert_eq!(warnings[0]["action"], "skipped");
    assert_eq!(warnings[0]["path"], "data/bad-00000001.xqc");
    assert!(final_step(&out) > 0, "the good chunk still trains");

    // A second process meets the file afresh and says so again.
    train(&run, &config, &[]);
    assert_eq!(events(&run, "warning").len(), 2);
    let report = Command::new(XQZ)
        .args(["report", "--run"])
        .arg(&run)
        .output()
        .unwrap();
    assert!(report.status.success());
    let stdout = String::from_utf8_lossy(&report.stdout);
    assert!(
        stdout.contains("warnings recorded by the run: 2 (chunk 2)"),
        "{stdout}"
    );
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(page.contains("<th>Warnings</th><td>2 (chunk 2)</td>"));
}

/// The newest checkpoint's step, if any.
fn newest_checkpoint(run: &Path) -> Option<u64> {
    std::fs::read_dir(run.join("checkpoints"))
        .ok()?
        .filter_map(|e| {
            let n = e.ok()?.file_name().into_string().ok()?;
            n.strip_prefix("ckpt-")?
                .strip_suffix(".json")?
                .parse::<u64>()
                .ok()
        })
        .max()
}

#[test]
fn a_run_killed_with_sigkill_at_any_moment_continues_from_its_last_checkpoint() {
    // (what, kill once a checkpoint of at least this step exists (None: 300 ms after
    // the start, before any), pre-training steps)
    for (what, kill_at, pretrain) in [
        ("while starting", None, 0),
        ("after the first checkpoint", Some(2), 0),
        ("later on", Some(6), 0),
        ("while pre-training", Some(4), 1000),
    ] {
        let (dir, run, config) = setup("");
        write_chunk(&run, "w0", 0..6);
        if pretrain > 0 {
            let text = std::fs::read_to_string(GAMES).unwrap();
            let cut = text
                .match_indices("[Event")
                .nth(20)
                .map_or(text.len(), |(i, _)| i);
            std::fs::write(dir.path().join("slice.pgn"), &text[..cut]).unwrap();
            let mut cfg = std::fs::read_to_string(&config).unwrap();
            cfg.push_str(&format!(
                "\n[train.pretrain]\npgn = [\"slice.pgn\"]\nsteps = {pretrain}\n"
            ));
            std::fs::write(&config, cfg).unwrap();
        }
        let mut child = Command::new(XQZ)
            .args(["train", "--quiet", "--steps", "100000", "--run"])
            .arg(&run)
            .arg("--config")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        match kill_at {
            None => std::thread::sleep(Duration::from_millis(300)),
            Some(step) => {
                let deadline = Instant::now() + Duration::from_secs(120);
                while newest_checkpoint(&run).is_none_or(|s| s < step) {
                    assert!(Instant::now() < deadline, "{what}: no checkpoint appeared");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let last = newest_checkpoint(&run).unwrap_or(0);
        let out = train(&run, &config, &["--steps", "2"]);
        assert_eq!(final_step(&out), last + 2, "{what}");
        if pretrain > 0 {
            // Still pre-training: the resumed steps are supervised ones.
            let ev = events(&run, "train");
            let after: Vec<_> = ev
                .iter()
                .filter(|e| e["step"].as_u64().unwrap() > last)
                .collect();
            assert!(
                !after.is_empty() && after.iter().all(|e| e["phase"] == "supervised"),
                "{what}: {ev:?}"
            );
        }
    }
}

#[test]
fn pgn_training_predicts_held_out_master_moves_better_than_a_uniform_guess() {
    let dir = tempfile::tempdir().unwrap();
    let slice = dir.path().join("slice.pgn");
    // The first 60 games: about 5,000 positions.
    let text = std::fs::read_to_string(GAMES).unwrap();
    let cut = text
        .match_indices("[Event")
        .nth(60)
        .map_or(text.len(), |(i, _)| i);
    std::fs::write(&slice, &text[..cut]).unwrap();
    let config = dir.path().join("train.toml");
    std::fs::write(
        &config,
        format!(
            "{}\n[train.pretrain]\npgn = [\"slice.pgn\"]\nsteps = 40\nheld_out_permille = 150\n",
            tiny()
        )
        .replace("channels = 8", "channels = 16"),
    )
    .unwrap();
    let run = dir.path().join("run");
    let out = train(
        &run,
        &config,
        &["--pgn"]
            .iter()
            .copied()
            .chain([slice.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("held-out top-1"))
        .unwrap();
    let nums: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    let (top1, uniform) = (nums[1], nums[2]);
    assert!(top1 > 1.5 * uniform, "{line}");
    assert_eq!(final_step(&out), 40);
    // The figure is in TensorBoard too (tags are stored as plain text in event files).
    let logs = run.join("logs/train");
    let tagged = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .any(|bytes| bytes.windows(19).any(|w| w == b"holdout/policy_top1"));
    assert!(
        tagged,
        "no holdout/policy_top1 scalar in {}",
        logs.display()
    );
}

#[test]
fn bad_config_keys_are_one_line_errors_naming_the_key() {
    for (text, want) in [
        (
            "[train]\nlerning_rate = 0.1\n",
            "unknown key \"lerning_rate\"",
        ),
        (
            "[train.window]\nkind = \"fixed\"\nsise = 5\n",
            "unknown key \"sise\"",
        ),
        ("[train]\nbatch_size = 0\n", "batch_size"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("bad.toml");
        std::fs::write(&config, text).unwrap();
        let out = Command::new(XQZ)
            .args(["train", "--run"])
            .arg(dir.path().join("run"))
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(stderr.contains(want), "{text:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
}

#[test]
fn a_new_run_pretrains_on_its_pgn_records_then_trains_paced_on_self_play_data() {
    let (dir, run, config) = setup("samples_per_position = 0.25\nholdout_every = 0\n");
    let slice = dir.path().join("slice.pgn");
    let text = std::fs::read_to_string(GAMES).unwrap();
    let cut = text
        .match_indices("[Event")
        .nth(20)
        .map_or(text.len(), |(i, _)| i);
    std::fs::write(
        &slice,
        &text[cut..][..text[cut..].match_indices("[Event").nth(20).unwrap().0],
    )
    .unwrap();
    let mut cfg = std::fs::read_to_string(&config).unwrap();
    cfg.push_str("\n[train.pretrain]\npgn = [\"slice.pgn\"]\nsteps = 6\nheld_out_permille = 200\n");
    std::fs::write(&config, cfg).unwrap();
    let positions = write_chunk(&run, "w0", 0..4) as u64;

    let out = train(&run, &config, &[]);
    assert_eq!(final_step(&out), 6 + positions / 4 / 32);
    let train_events = events(&run, "train");
    assert!(
        train_events
            .iter()
            .all(|e| e["device"] == "cpu" || e["device"].as_str().unwrap().starts_with("cuda:")),
        "{train_events:?}"
    );
    let phases: Vec<(u64, String)> = train_events
        .iter()
        .map(|e| {
            (
                e["step"].as_u64().unwrap(),
                e["phase"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        phases.iter().all(|(s, p)| (p == "supervised") == (*s <= 6)),
        "{phases:?}"
    );
    assert!(phases.iter().any(|(_, p)| p == "selfplay"), "{phases:?}");
    // The pre-trained network is offered for gating as soon as pre-training ends.
    assert!(run.join("models/candidates/s0000000006").is_dir());

    // Resumed, the run does not pre-train again: no new data, no new step.
    assert_eq!(
        final_step(&train(&run, &config, &[])),
        6 + positions / 4 / 32
    );
}

/// Runs `xqz bench train` at the smallest size with `extra` arguments (the evaluator's
/// batch sizes last); returns its stdout after checking that it succeeded.
fn bench_train(extra: &[&str], eval_batches: &str) -> String {
    let out = run_ok(
        Command::new(XQZ)
            .args(["bench", "train"])
            .args(extra)
            .args([
                "--batch",
                "8",
                "--steps",
                "1",
                "--rounds",
                "1",
                "--threads",
                "1",
            ])
            .args(["--eval-batches", eval_batches, "--eval-seconds", "0.05"]),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bench_train_reports_trainer_and_evaluator_speed() {
    let stdout = bench_train(&["--no-python"], "1,4");
    assert!(stdout.contains("train: rust "), "{stdout}");
    // Each evaluator line names what ran it (`evaluator (torch-f32): batch …`).
    assert_eq!(stdout.matches("evaluator (torch-").count(), 2, "{stdout}");
    assert_eq!(stdout.matches("): batch ").count(), 2, "{stdout}");
}

/// The PyTorch reference (the `.venv`'s torch, `XQZ_PYTHON`) runs on the Rust trainer's
/// device and reports it, so the ratio compares like with like: `bench train` refuses a
/// reference that ran elsewhere (a CPU reference against a GPU trainer once read as 57x).
#[test]
fn bench_train_runs_the_pytorch_reference_on_the_trainers_device() {
    let stdout = bench_train(&["--device", "cpu"], "1");
    assert!(stdout.contains(", pytorch "), "{stdout}");
    assert!(stdout.contains("(both on cpu)"), "{stdout}");
}

#[test]
fn a_config_whose_network_differs_from_the_checkpoint_is_refused() {
    let (_dir, run, config) = setup("");
    write_chunk(&run, "w0", 0..3);
    assert_eq!(final_step(&train(&run, &config, &["--steps", "1"])), 1);
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("channels = 8", "channels = 12")).unwrap();
    let out = Command::new(XQZ)
        .args(["train", "--quiet", "--steps", "1", "--run"])
        .arg(&run)
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("net"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}
