//! The TensorBoard event files the trainer writes are readable by TensorBoard itself:
//! loaded with the `tensorboard` package's `EventAccumulator` from the project's .venv.

use std::path::PathBuf;
use std::process::Command;

use xq_train::logging::tags;
use xq_train::{DeviceChoice, NetConfig, OwnedBatch, TrainConfig, Trainer};

/// The project's Python (`$XQZ_PYTHON`, else `<workspace>/.venv/bin/python`).
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("XQZ_PYTHON") {
        return p.into();
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run scripts/setup to create the .venv with the tensorboard package \
         (this test reads the event files with TensorBoard's own reader)",
        p.display()
    );
    p
}

const READER: &str = r#"
import json, sys
from tensorboard.backend.event_processing import event_accumulator
acc = event_accumulator.EventAccumulator(sys.argv[1], size_guidance={"scalars": 0})
acc.Reload()
out = {tag: [[e.step, e.value] for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}
print(json.dumps(out))
"#;

#[test]
fn tensorboard_reader_finds_every_training_scalar() {
    let dir = std::env::temp_dir().join(format!("xq-train-test-tb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cfg = TrainConfig {
        net: NetConfig {
            blocks: 1,
            channels: 8,
            history: 1,
            global_pool: false,
            value_channels: 1,
            value_hidden: 8,
        },
        device: DeviceChoice::Cpu,
        threads: 1,
        log_every: 2,
        ..TrainConfig::default()
    };
    let planes = cfg.net.input_planes();
    {
        let mut t = Trainer::new(&dir, cfg).unwrap();
        t.set_window_size(12345);
        for i in 0..4 {
            t.step(&OwnedBatch::synthetic(4, planes, i).view()).unwrap();
        }
        t.log_scalar("heldout/policy_top1", 0.25);
        assert!(t.take_tensorboard_failure().is_none());
    }
    let py = python();
    let out = Command::new(&py)
        .arg("-c")
        .arg(READER)
        .arg(dir.join("tensorboard"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", py.display()));
    assert!(
        out.status.success(),
        "TensorBoard reader failed (is the tensorboard package installed in the .venv? run \
         scripts/setup):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scalars: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for tag in [
        tags::POLICY_LOSS,
        tags::VALUE_LOSS,
        tags::TOTAL_LOSS,
        tags::POLICY_ACCURACY,
        tags::VALUE_ACCURACY,
        tags::LEARNING_RATE,
        tags::GRAD_NORM,
        tags::SAMPLES_PER_SEC,
        tags::WINDOW_SIZE,
        tags::DATA_WAIT,
    ] {
        let points = scalars[tag]
            .as_array()
            .unwrap_or_else(|| panic!("tag {tag} missing from {scalars}"));
        let steps: Vec<u64> = points.iter().map(|p| p[0].as_u64().unwrap()).collect();
        assert_eq!(steps, [2, 4], "{tag}");
    }
    assert_eq!(scalars[tags::WINDOW_SIZE][0][1].as_f64(), Some(12345.0));
    assert_eq!(
        scalars["heldout/policy_top1"][0],
        serde_json::json!([4, 0.25])
    );
    let loss = scalars[tags::TOTAL_LOSS][0][1].as_f64().unwrap();
    assert!(loss.is_finite() && loss > 0.0);
    std::fs::remove_dir_all(&dir).unwrap();
}
