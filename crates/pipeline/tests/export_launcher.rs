//! Player export: model selection in a run directory, the files of a player directory,
//! atomic replacement, and the launcher handing its directory to the binary. (The real
//! `xqz` binary behind the launcher, playing Fairy-Stockfish, is tested in the root
//! package's `tests/it/cli_ucci.rs`, which can build it.)

mod common;

use std::{
    fs,
    path::{Path, PathBuf},
    process::Command,
};

use xq_eval::{
    net::NetSettings,
    player_dir::{ENGINE_TOML, LAUNCHER, NETWORK_META, NETWORK_WEIGHTS, load_player_config},
};
use xq_nn::{EvalInput, Evaluator};
use xq_pipeline::export::{
    ExportError, ExportOptions, ExportSummary, export_player, model_to_export,
};
use xq_run::{RunDir, RunError};
use xq_train::{
    TorchEvaluator, TrainConfig, Trainer,
    checkpoint::{Sidecar, list_checkpoints},
};

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xq-eval-export-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// A run with checkpoints at steps 0 and 2 of a 1 × 8 network.
fn tiny_run(dir: &Path) {
    xq_train::register_backend();
    let cfg = common::tiny_train_config(TrainConfig::default().seed);
    let planes = cfg.net.input_planes();
    let mut t = Trainer::new(dir, cfg).unwrap();
    t.save_checkpoint().unwrap();
    for i in 0..2 {
        t.step(&xq_train::OwnedBatch::synthetic(4, planes, i).view())
            .unwrap();
    }
    t.save_checkpoint().unwrap();
}

/// A stand-in binary that prints its arguments (the launcher must pass
/// `ucci --player DIR`).
fn fake_binary(dir: &Path) -> PathBuf {
    let p = dir.join("fake-xqz");
    fs::write(&p, "#!/bin/sh\necho \"args: $*\"\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

fn options(out: &Path, binary: &Path) -> ExportOptions {
    ExportOptions {
        out: Some(out.into()),
        binary: binary.into(),
        settings: NetSettings {
            visits: 50,
            batch: 4,
            ..NetSettings::default()
        },
        name: None,
        force: false,
    }
}

/// Exports the network `model` names (the run's latest without one), as `xqz export`.
fn export(
    run: &Path,
    model: Option<&str>,
    opts: &ExportOptions,
) -> Result<ExportSummary, ExportError> {
    let run = RunDir::existing(run)?;
    let model = model_to_export(&run, model)?;
    export_player(&run, &model, opts)
}

#[test]
fn model_selection_follows_the_pointer_else_the_newest_checkpoint() {
    let dir = temp("select");
    let run = RunDir::open(&dir).unwrap();
    let err = model_to_export(&run, None).unwrap_err();
    assert!(matches!(err, ExportError::NoModel { .. }), "{err}");
    tiny_run(&dir);
    let ckpts = list_checkpoints(&run.checkpoints_dir()).unwrap();
    assert_eq!(ckpts.len(), 2);
    let sidecar = |name: Option<&str>| run.sidecar(&model_to_export(&run, name).unwrap()).unwrap();
    assert_eq!(sidecar(None), ckpts[1].1);
    // By name: a checkpoint stem.
    assert_eq!(sidecar(Some("ckpt-0000000000")), ckpts[0].1);
    let err = model_to_export(&run, Some("nope")).unwrap_err().to_string();
    assert!(
        err.contains("\"nope\"") && err.contains("models/accepted"),
        "{err}"
    );
    // The accepted pointer (ARCHITECTURE.md: {"name", "path", "step", "time"}).
    fs::write(
        run.pointer_path(),
        r#"{"name": "first", "path": "checkpoints/ckpt-0000000000.json", "step": 0, "time": 1}"#,
    )
    .unwrap();
    assert_eq!(sidecar(None), ckpts[0].1);
    fs::write(run.pointer_path(), "not json").unwrap();
    assert!(matches!(
        model_to_export(&run, None),
        Err(ExportError::Run(RunError::Pointer { .. }))
    ));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn export_writes_a_complete_player_that_loads_and_launches() {
    let root = temp("player");
    let run = root.join("run");
    tiny_run(&run);
    let binary = fake_binary(&root);
    let out = root.join("player");
    let summary = export(&run, None, &options(&out, &binary)).unwrap();
    assert_eq!(summary.step, 2);
    assert_eq!(summary.name, "xqzero-run-2");
    for f in [
        NETWORK_WEIGHTS,
        NETWORK_META,
        ENGINE_TOML,
        "README.txt",
        "xqz",
        LAUNCHER,
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    // The metadata: a loadable sidecar without optimiser state, naming its source.
    let meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join(NETWORK_META)).unwrap()).unwrap();
    assert_eq!(meta["ema"], NETWORK_WEIGHTS);
    assert!(meta["optimizer"].is_null());
    assert_eq!(meta["step"], 2);
    // Where it came from, without the exporting machine's paths.
    assert_eq!(meta["source_run"], "run");
    assert_eq!(
        meta["source_checkpoint"],
        "checkpoints/ckpt-0000000002.json"
    );
    let sidecar = Sidecar::read(&out.join(NETWORK_META)).unwrap();
    assert_eq!(sidecar.net.channels, 8);
    // The exported weights are the run's EMA weights: same outputs.
    let src = list_checkpoints(&run.join("checkpoints")).unwrap()[1]
        .1
        .clone();
    let history = [xq_core::Position::startpos()];
    let moves: Vec<_> = history[0].legal_moves().to_vec();
    let input = [EvalInput {
        history: &history,
        moves: &moves,
    }];
    let a = TorchEvaluator::load(&src, Default::default())
        .unwrap()
        .evaluate(&input)
        .unwrap();
    let b = TorchEvaluator::load(out.join(NETWORK_META), Default::default())
        .unwrap()
        .evaluate(&input)
        .unwrap();
    assert_eq!(a, b);
    // engine.toml round-trips the settings.
    let config = load_player_config(&out).unwrap();
    assert_eq!(config.network, NETWORK_META);
    assert_eq!(config.search.visits, 50);
    assert_eq!(config.search.batch, 4);
    assert_eq!(config.source.step, 2);
    assert_eq!(config.source.run, "run");
    assert_eq!(config.source.checkpoint, "checkpoints/ckpt-0000000002.json");
    let toml = fs::read_to_string(out.join(ENGINE_TOML)).unwrap();
    let root_text = fs::canonicalize(&root).unwrap().display().to_string();
    assert!(
        !toml.contains(&root_text),
        "an absolute path in engine.toml:\n{toml}"
    );
    // The launcher runs the copied binary on its own directory, also through a symlink.
    let link = root.join("engine-link");
    #[cfg(unix)]
    std::os::unix::fs::symlink(out.join(LAUNCHER), &link).unwrap();
    for launcher in [out.join(LAUNCHER), link] {
        let o = Command::new(&launcher).output().unwrap();
        assert!(o.status.success(), "{launcher:?}: {o:?}");
        let text = String::from_utf8_lossy(&o.stdout);
        let want = format!(
            "args: ucci --player {}",
            fs::canonicalize(&out).unwrap().display()
        );
        assert_eq!(text.trim(), want);
    }
    // No temporary directories left behind.
    let names: Vec<String> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // (Temporary names end in `.tmp`: xq_data::io::tmp_path.)
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn export_refuses_to_overwrite_without_force_and_replaces_with_it() {
    let root = temp("force");
    let run = root.join("run");
    tiny_run(&run);
    let binary = fake_binary(&root);
    let out = root.join("player");
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("old.txt"), "old").unwrap();
    let err = export(&run, None, &options(&out, &binary)).unwrap_err();
    assert!(matches!(err, ExportError::Exists { .. }), "{err}");
    assert!(err.to_string().contains("--force"), "{err}");
    assert!(out.join("old.txt").exists(), "untouched");
    let mut o = options(&out, &binary);
    o.force = true;
    o.name = Some("mine".into());
    let s = export(&run, Some("ckpt-0000000000"), &o).unwrap();
    assert_eq!((s.step, s.name.as_str()), (0, "mine"));
    assert!(!out.join("old.txt").exists());
    assert!(out.join(LAUNCHER).is_file());
    // A failed export (no such model) leaves the existing player as it was.
    assert!(export(&run, Some("missing"), &o).is_err());
    assert_eq!(load_player_config(&out).unwrap().name, "mine");
    // Without --out the player goes to RUN/players/<model name>, as `xqz run` exports.
    o.out = None;
    o.name = None;
    let s = export(&run, None, &o).unwrap();
    assert_eq!(s.out, run.join("players/ckpt-0000000002"));
    assert!(s.out.join(LAUNCHER).is_file());
    let names: Vec<String> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // Neither the new directory's temporary nor the old one moved aside is left.
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_broken_engine_toml_is_named_in_the_error() {
    let dir = temp("badtoml");
    fs::write(
        dir.join(ENGINE_TOML),
        "name = \"x\"\nnetwork = \"n.json\"\n[search]\nvisitz = 3\n",
    )
    .unwrap();
    let e = load_player_config(&dir).unwrap_err().to_string();
    assert!(e.contains("engine.toml") && e.contains("visitz"), "{e}");
    fs::write(
        dir.join(ENGINE_TOML),
        "name = \"x\"\nnetwork = \"n.json\"\n[search]\nbatch = 0\n",
    )
    .unwrap();
    let e = load_player_config(&dir).unwrap_err().to_string();
    assert!(e.contains("batch"), "{e}");
    fs::remove_dir_all(&dir).unwrap();
}
