//! Trainer behaviour: learning, exact resume, checkpoints, the torch evaluator and the
//! version checks. Tiny networks and a few dozen steps keep this fast on two cores.

use std::fs;
use std::path::{Path, PathBuf};

use tch::{Device, Kind, Tensor};
use xq_core::{Move, Position};
use xq_nn::checkpoint::CheckpointError;
use xq_nn::encode::{PackedPlane, encode_into, encode_packed_into};
use xq_nn::policy::{POLICY_SIZE, policy_index};
use xq_nn::{EvalInput, Evaluator};
use xq_train::net::Layout;
use xq_train::{
    DeviceChoice, EvaluatorOptions, LossWeights, NetConfig, OptimizerConfig, OwnedBatch,
    TorchEvaluator, TrainConfig, TrainError, Trainer, WeightsChoice,
};

fn run_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xq-train-test-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    d
}

fn tiny_config(optimizer: OptimizerConfig) -> TrainConfig {
    TrainConfig {
        net: NetConfig {
            blocks: 3,
            channels: 16,
            history: 1,
            global_pool: true,
            value_channels: 2,
            value_hidden: 16,
        },
        optimizer,
        lr: 0.01,
        warmup_steps: 3,
        device: DeviceChoice::Cpu,
        threads: 1,
        seed: 11,
        log_every: 0,
        ema_decay: 0.9,
        ..TrainConfig::default()
    }
}

fn adamw() -> OptimizerConfig {
    OptimizerConfig::Adamw {
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.01,
    }
}

fn trainer(dir: &Path, cfg: TrainConfig) -> Trainer {
    Trainer::new(dir, cfg).unwrap()
}

fn planes(cfg: &TrainConfig) -> usize {
    cfg.net.input_planes()
}

fn assert_same_tensors(a: &[(String, Tensor)], b: &[(String, Tensor)], what: &str) {
    assert_eq!(a.len(), b.len());
    for ((na, ta), (nb, tb)) in a.iter().zip(b) {
        assert_eq!(na, nb);
        assert!(ta.equal(tb), "{what}: {na} differs after resume");
    }
}

#[test]
fn the_loss_scales_weigh_the_policy_and_value_losses_in_training_steps() {
    let cfg = TrainConfig {
        value_loss_weight: 2.0,
        ..tiny_config(adamw())
    };
    let dir = run_dir("value-scale");
    let mut t = trainer(&dir, cfg.clone());
    let batch = OwnedBatch::synthetic(8, planes(&cfg), 3);
    let s = t.step(&batch.view()).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() < 1e-4 * b.abs().max(1.0);
    assert!(
        close(s.total_loss, s.policy_loss + 2.0 * s.value_loss),
        "{s:?}"
    );
    let scaled = |policy, value| LossWeights {
        policy,
        value,
        ..LossWeights::PLAIN
    };
    t.set_loss_scales(scaled(1.0, 0.25));
    let s = t.step(&batch.view()).unwrap();
    assert!(
        close(s.total_loss, s.policy_loss + 0.5 * s.value_loss),
        "{s:?}"
    );
    t.set_loss_scales(scaled(1.0, 0.0));
    let s = t.step(&batch.view()).unwrap();
    assert!(
        s.value_loss > 0.0 && close(s.total_loss, s.policy_loss),
        "{s:?}"
    );
    t.set_loss_scales(scaled(0.0, 1.0));
    let s = t.step(&batch.view()).unwrap();
    assert!(
        s.policy_loss > 0.0 && close(s.total_loss, 2.0 * s.value_loss),
        "{s:?}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn training_on_a_fixed_batch_drives_the_loss_down() {
    let cfg = TrainConfig {
        lr: 0.003,
        ..tiny_config(adamw())
    };
    let dir = run_dir("overfit");
    let mut t = trainer(&dir, cfg.clone());
    // One-hot policy targets (a played move, as in supervised data), so a perfect fit
    // has zero loss and "down" has room to mean a lot.
    let mut batch = OwnedBatch::synthetic(32, planes(&cfg), 5);
    for row in batch.policy.chunks_exact_mut(POLICY_SIZE) {
        let best = (0..POLICY_SIZE)
            .max_by(|&a, &b| row[a].total_cmp(&row[b]))
            .unwrap();
        row.fill(0.0);
        row[best] = 1.0;
    }
    let first = t.step(&batch.view()).unwrap();
    let mut last = first;
    for _ in 0..40 {
        last = t.step(&batch.view()).unwrap();
    }
    eprintln!("loss {} -> {}", first.total_loss, last.total_loss);
    assert!(
        last.total_loss < 0.25 * first.total_loss,
        "loss {} -> {}",
        first.total_loss,
        last.total_loss
    );
    assert!(last.policy_accuracy > first.policy_accuracy);
    assert_eq!(t.step_count(), 41);
    assert_eq!(t.samples_seen(), 41 * 32);
    fs::remove_dir_all(&dir).unwrap();
}

/// N straight steps == K steps, checkpoint, resume in a fresh trainer, N − K steps: the
/// live weights, batch-norm statistics, EMA and optimiser state all agree bit for bit.
#[test]
fn resumed_run_matches_an_uninterrupted_one_exactly() {
    for opt in [OptimizerConfig::default(), adamw()] {
        let cfg = tiny_config(opt.clone());
        let batches: Vec<OwnedBatch> = (0..6)
            .map(|i| OwnedBatch::synthetic(8, planes(&cfg), 100 + i))
            .collect();

        let straight_dir = run_dir(&format!("straight-{}", opt.kind()));
        let mut straight = trainer(&straight_dir, cfg.clone());
        for b in &batches {
            straight.step(&b.view()).unwrap();
        }

        let split_dir = run_dir(&format!("split-{}", opt.kind()));
        let mut first = trainer(&split_dir, cfg.clone());
        for b in &batches[..2] {
            first.step(&b.view()).unwrap();
        }
        first.set_data_cursor(serde_json::json!({"batch": 2}));
        first.save_checkpoint().unwrap();
        drop(first);
        let mut resumed = Trainer::resume(&split_dir, cfg.clone()).unwrap();
        assert_eq!(resumed.step_count(), 2);
        assert_eq!(
            resumed.data_cursor(),
            Some(&serde_json::json!({"batch": 2}))
        );
        for b in &batches[2..] {
            resumed.step(&b.view()).unwrap();
        }
        assert_same_tensors(&straight.weights(), &resumed.weights(), opt.kind());
        assert_same_tensors(&straight.ema_weights(), &resumed.ema_weights(), opt.kind());
        // The initial weights must actually have moved, or the comparison proves nothing.
        let fresh = trainer(&run_dir(&format!("fresh-{}", opt.kind())), cfg.clone());
        let moved = fresh
            .weights()
            .iter()
            .zip(straight.weights())
            .any(|((_, a), (_, b))| !a.equal(&b));
        assert!(moved);
        for d in [
            straight_dir,
            split_dir,
            run_dir(&format!("fresh-{}", opt.kind())),
        ] {
            let _ = fs::remove_dir_all(d);
        }
    }
}

fn encoded(positions: &[Position], history: usize) -> Vec<f32> {
    let enc = xq_nn::encode::EncoderConfig { history };
    let mut out = vec![0.0; positions.len() * enc.input_len()];
    for (p, chunk) in positions.iter().zip(out.chunks_exact_mut(enc.input_len())) {
        encode_into(std::slice::from_ref(p), &enc, chunk).unwrap();
    }
    out
}

/// The same positions packed, as evaluators take them.
fn packed(positions: &[Position], history: usize) -> Vec<PackedPlane> {
    let enc = xq_nn::encode::EncoderConfig { history };
    let mut out = vec![PackedPlane::ZERO; positions.len() * enc.planes()];
    for (p, chunk) in positions.iter().zip(out.chunks_exact_mut(enc.planes())) {
        encode_packed_into(std::slice::from_ref(p), &enc, chunk).unwrap();
    }
    out
}

fn sample_positions() -> Vec<Position> {
    [
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1",
        "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1",
        "3k5/9/9/9/9/9/9/9/4A4/4K4 w - - 0 1",
        "2bak4/4a4/4b4/9/9/9/9/9/4A4/3AK4 b - - 20 40",
    ]
    .iter()
    .map(|f| Position::from_fen(f).unwrap())
    .collect()
}

#[test]
fn checkpoint_round_trip_gives_identical_outputs() {
    let cfg = tiny_config(OptimizerConfig::default());
    let dir = run_dir("roundtrip");
    let mut t = trainer(&dir, cfg.clone());
    for i in 0..3 {
        t.step(&OwnedBatch::synthetic(8, planes(&cfg), i).view())
            .unwrap();
    }
    let sidecar = t.save_checkpoint().unwrap();
    let positions = sample_positions();
    let x = encoded(&positions, cfg.net.history);
    let n = positions.len() as i64;
    let input = Tensor::from_slice(&x).view([n, planes(&cfg) as i64, 10, 9]);
    for (which, net) in [
        (WeightsChoice::Ema, t.ema_net()),
        (WeightsChoice::Live, t.net()),
    ] {
        // The evaluator runs the network folded for inference: exactly that, and within
        // float rounding of the network as trained.
        let (p, v) = tch::no_grad(|| {
            net.fold(Kind::Float, Layout::ChannelsLast)
                .unwrap()
                .forward(&input)
        })
        .unwrap();
        let (pt, vt) = tch::no_grad(|| net.forward(&input, false, Kind::Float)).unwrap();
        let scale = 1.0 + pt.abs().max().double_value(&[]);
        assert!((&p - &pt).abs().max().double_value(&[]) < 1e-5 * scale);
        assert!((&v - &vt).abs().max().double_value(&[]) < 1e-5 * scale);
        let mut ev = TorchEvaluator::load(
            &dir,
            EvaluatorOptions {
                device: DeviceChoice::Cpu,
                weights: which,
                half: None,
                threads: 0,
                workers: 0,
            },
        )
        .unwrap();
        assert_eq!(ev.sidecar().step, 3);
        let (p2, v2) = ev
            .forward_raw(&packed(&positions, cfg.net.history), positions.len())
            .unwrap();
        assert_eq!(
            Vec::<f32>::try_from(&p.reshape([-1])).unwrap(),
            p2,
            "{which:?} policy"
        );
        assert_eq!(
            Vec::<f32>::try_from(&v.reshape([-1])).unwrap(),
            v2,
            "{which:?} value"
        );
    }
    // EMA and live weights differ after training, so both loads were really exercised.
    let w = t.weights();
    let e = t.ema_weights();
    assert!(w.iter().zip(&e).any(|((_, a), (_, b))| !a.equal(b)));
    assert!(sidecar.exists());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_evaluator_sets_its_threads_on_the_thread_that_evaluates() {
    let cfg = tiny_config(OptimizerConfig::default());
    let dir = run_dir("evaluator-threads");
    trainer(&dir, cfg).save_checkpoint().unwrap();
    let mut ev = TorchEvaluator::load(
        &dir,
        EvaluatorOptions {
            device: DeviceChoice::Cpu,
            threads: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let positions = sample_positions();
    // libtorch's thread count is per thread: a fresh thread starts with its default,
    // and the evaluator must set its own on whichever thread runs it.
    let threads = std::thread::spawn(move || {
        tch::set_num_threads(2);
        let moves = positions[0].legal_moves().to_vec();
        let history = [positions[0].clone()];
        let input = EvalInput {
            history: &history,
            moves: &moves,
        };
        ev.evaluate(&[input]).unwrap();
        tch::get_num_threads()
    })
    .join()
    .unwrap();
    assert_eq!(threads, 1);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_evaluator_with_several_copies_returns_the_outputs_of_one_in_order() {
    let cfg = tiny_config(OptimizerConfig::default());
    let dir = run_dir("evaluator-workers");
    let mut t = trainer(&dir, cfg.clone());
    t.step(&OwnedBatch::synthetic(8, planes(&cfg), 1).view())
        .unwrap();
    t.save_checkpoint().unwrap();
    let load = |workers| {
        TorchEvaluator::load(
            &dir,
            EvaluatorOptions {
                device: DeviceChoice::Cpu,
                threads: 1,
                workers,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let mut one = load(1);
    let mut three = load(3);
    assert_eq!((one.workers(), three.workers()), (1, 3));
    let positions = sample_positions();
    assert!(
        positions.len() >= 4,
        "the batch must be split among all copies"
    );
    let x = packed(&positions, cfg.net.history);
    let len = x.len() / positions.len();
    // Every batch size from one position (fewer positions than copies) to all of them,
    // twice over, so that a part left over from one batch would show in the next.
    for _ in 0..2 {
        for n in 1..=positions.len() {
            let (p1, v1) = one.forward_raw(&x[..n * len], n).unwrap();
            let (p3, v3) = three.forward_raw(&x[..n * len], n).unwrap();
            assert_eq!((p3.len(), v3.len()), (p1.len(), v1.len()), "{n} positions");
            for (a, b) in p1.iter().zip(&p3).chain(v1.iter().zip(&v3)) {
                assert!(
                    (a - b).abs() <= 1e-4 * (1.0 + a.abs()),
                    "{n} positions: {a} vs {b}"
                );
            }
        }
    }
    assert!(
        three.forward_raw(&x[..len], 2).is_err(),
        "a short input is refused"
    );
    drop(three);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn torch_evaluator_agrees_with_a_direct_forward_pass() {
    let cfg = tiny_config(OptimizerConfig::default());
    let dir = run_dir("evaluator");
    let mut t = trainer(&dir, cfg.clone());
    t.step(&OwnedBatch::synthetic(8, planes(&cfg), 1).view())
        .unwrap();
    t.save_checkpoint().unwrap();
    let mut ev = TorchEvaluator::load(
        &dir,
        EvaluatorOptions {
            device: DeviceChoice::Cpu,
            ..Default::default()
        },
    )
    .unwrap();
    let positions = sample_positions();
    let moves: Vec<Vec<Move>> = positions.iter().map(|p| p.legal_moves().to_vec()).collect();
    let histories: Vec<[Position; 1]> = positions.iter().map(|p| [p.clone()]).collect();
    let batch: Vec<EvalInput<'_>> = histories
        .iter()
        .zip(&moves)
        .map(|(h, m)| EvalInput {
            history: h,
            moves: m,
        })
        .collect();
    let out = ev.evaluate(&batch).unwrap();
    assert_eq!(out.len(), positions.len());
    let x = encoded(&positions, cfg.net.history);
    let input = Tensor::from_slice(&x).view([positions.len() as i64, planes(&cfg) as i64, 10, 9]);
    let (p, v) = tch::no_grad(|| t.ema_net().forward(&input, false, Kind::Float)).unwrap();
    for (i, (pos, e)) in positions.iter().zip(&out).enumerate() {
        let logits: Vec<f32> = Vec::try_from(&p.get(i as i64)).unwrap();
        let idx: Vec<usize> = moves[i]
            .iter()
            .map(|&m| policy_index(m, pos.turn()).unwrap())
            .collect();
        let legal = Tensor::from_slice(&idx.iter().map(|&k| logits[k]).collect::<Vec<f32>>());
        let expected: Vec<f32> = Vec::try_from(&legal.softmax(0, Kind::Float)).unwrap();
        assert_eq!(e.policy.len(), moves[i].len());
        for (a, b) in e.policy.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-6, "policy {a} vs {b}");
        }
        let wdl: Vec<f32> = Vec::try_from(&v.get(i as i64).softmax(0, Kind::Float)).unwrap();
        for (a, b) in e.wdl.iter().zip(&wdl) {
            assert!((a - b).abs() < 1e-6, "wdl {a} vs {b}");
        }
        assert!((e.policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
    // The same position gives the same answer whatever else is in the batch.
    let alone = ev.evaluate(&batch[2..3]).unwrap();
    assert_eq!(alone[0].wdl.len(), 3);
    for (a, b) in alone[0].policy.iter().zip(&out[2].policy) {
        assert!((a - b).abs() < 1e-6);
    }
    assert!(ev.name().starts_with("torch("));
    // A move that is no move of the side to move's index is bad input, not a panic.
    let bogus = [Move::new(xq_core::Square::new(0), xq_core::Square::new(89))];
    let bad = [EvalInput {
        history: &histories[0],
        moves: &bogus,
    }];
    assert!(ev.evaluate(&bad).is_err());
    assert_eq!(POLICY_SIZE, 2086);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn checkpoint_of_another_encoding_version_is_refused() {
    let cfg = tiny_config(OptimizerConfig::default());
    let dir = run_dir("encoding");
    let mut t = trainer(&dir, cfg.clone());
    t.step(&OwnedBatch::synthetic(4, planes(&cfg), 1).view())
        .unwrap();
    let sidecar = t.save_checkpoint().unwrap();
    drop(t);
    let mut json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&sidecar).unwrap()).unwrap();
    json["encoding_version"] = serde_json::json!(xq_nn::encode::ENCODING_VERSION + 7);
    fs::write(&sidecar, serde_json::to_string(&json).unwrap()).unwrap();
    let err = TorchEvaluator::load(&dir, EvaluatorOptions::default()).unwrap_err();
    assert!(
        matches!(
            err,
            TrainError::Checkpoint(CheckpointError::EncodingVersion { .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("encoding version"), "{err}");
    let err = Trainer::resume(&dir, cfg).unwrap_err();
    assert!(
        matches!(
            err,
            TrainError::Checkpoint(CheckpointError::EncodingVersion { .. })
        ),
        "{err}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn resuming_with_another_architecture_or_optimizer_is_refused_by_key() {
    let cfg = tiny_config(OptimizerConfig::default());
    let dir = run_dir("mismatch");
    let mut t = trainer(&dir, cfg.clone());
    t.step(&OwnedBatch::synthetic(4, planes(&cfg), 1).view())
        .unwrap();
    t.save_checkpoint().unwrap();
    drop(t);
    let mut wider = cfg.clone();
    wider.net.channels = 32;
    let err = Trainer::resume(&dir, wider).unwrap_err().to_string();
    assert!(
        err.starts_with("config contradicts the checkpoint: net:"),
        "{err}"
    );
    let err = Trainer::resume(&dir, tiny_config(adamw()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("optimizer.kind"), "{err}");
    assert!(matches!(
        Trainer::new(&dir, cfg.clone()),
        Err(TrainError::RunExists(_))
    ));
    let empty = run_dir("mismatch-empty");
    assert!(matches!(
        Trainer::resume(&empty, cfg),
        Err(TrainError::Checkpoint(CheckpointError::NoCheckpoint(_)))
    ));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_corrupt_weights_file_is_an_error_naming_it() {
    let cfg = tiny_config(OptimizerConfig::default());
    let dir = run_dir("corrupt");
    let mut t = trainer(&dir, cfg.clone());
    t.step(&OwnedBatch::synthetic(4, planes(&cfg), 1).view())
        .unwrap();
    let sidecar = t.save_checkpoint().unwrap();
    drop(t);
    let ema = sidecar.with_file_name("ckpt-0000000001.ema.safetensors");
    fs::write(&ema, b"not safetensors").unwrap();
    let err = TorchEvaluator::load(
        &dir,
        EvaluatorOptions {
            device: DeviceChoice::Cpu,
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("ema.safetensors"), "{err}");
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bf16_training_runs_and_learns_on_the_cpu() {
    let cfg = TrainConfig {
        precision: xq_train::Precision::Bf16,
        lr: 0.003,
        ..tiny_config(adamw())
    };
    let dir = run_dir("bf16");
    let mut t = trainer(&dir, cfg.clone());
    let batch = OwnedBatch::synthetic(16, planes(&cfg), 9);
    let first = t.step(&batch.view()).unwrap();
    let mut last = first;
    for _ in 0..15 {
        last = t.step(&batch.view()).unwrap();
    }
    assert!(
        last.total_loss < first.total_loss,
        "{} -> {}",
        first.total_loss,
        last.total_loss
    );
    // Master weights stay f32.
    assert!(t.weights().iter().all(|(_, w)| w.kind() == Kind::Float));
    assert_eq!(t.device(), Device::Cpu);
    fs::remove_dir_all(&dir).unwrap();
}
