//! The native CPU backend (xq-native) against libtorch: the same checkpoint, the same
//! encoded positions, the same outputs within a stated tolerance.
//!
//! Every parameter is randomised, batch-norm statistics included (a freshly built
//! network has identity batch norms and zeroed residual branches, which would hide a
//! wrong fold or a wrong residual), for networks of several shapes: with and without
//! global pooling, one and eight history steps, up to the 10 × 128 preset.
//!
//! **Tolerance.** Policy and value logits may differ by at most
//! `1e-4 · (1 + max |logit|)` of the batch, and the policy and WDL probabilities by at
//! most `1e-4`. Both backends compute in f32; they differ in summation order (GEMM
//! blocking, the sparse first layer's order, batch norm folded into the weights), which
//! moves results by a few units in the last place per layer.

use xq_core::Position;
use xq_native::NativeEvaluator;
use xq_nn::checkpoint::Sidecar;
use xq_nn::encode::PackedPlane;
use xq_nn::encode_packed_batch;
use xq_nn::{EvalInput, Evaluator};
use xq_train::checkpoint::{write_random, write_sidecar};
use xq_train::{DeviceChoice, EvaluatorOptions, NetConfig, TorchEvaluator};

/// Positions of seeded random games, each with its history.
fn histories(count: usize, seed: u64) -> Vec<Vec<Position>> {
    let mut state = seed;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    let mut out = Vec::new();
    while out.len() < count {
        let mut game = vec![Position::startpos()];
        let plies = next() % 60;
        for _ in 0..plies {
            let pos = game.last().unwrap();
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let mut p = pos.clone();
            p.play(moves[next() % moves.len()]).unwrap();
            game.push(p);
        }
        out.push(game);
    }
    out
}

fn max_abs(x: &[f32]) -> f32 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

fn nets() -> Vec<(&'static str, NetConfig)> {
    vec![
        (
            "1x8 h1 plain",
            NetConfig {
                blocks: 1,
                channels: 8,
                history: 1,
                global_pool: false,
                value_channels: 2,
                value_hidden: 8,
            },
        ),
        (
            "3x32 quickstart",
            NetConfig {
                blocks: 3,
                channels: 32,
                ..NetConfig::small()
            },
        ),
        ("4x48 small", NetConfig::small()),
        (
            "6x24 h2",
            NetConfig {
                blocks: 6,
                channels: 24,
                history: 2,
                value_channels: 3,
                value_hidden: 20,
                ..NetConfig::small()
            },
        ),
        ("10x128 medium", NetConfig::medium()),
    ]
}

#[test]
fn native_outputs_equal_libtorch_within_tolerance_on_several_networks_and_positions() {
    let root = std::env::temp_dir().join(format!("xq-native-equiv-{}", std::process::id()));
    let games = histories(11, 5);
    for (i, (label, cfg)) in nets().into_iter().enumerate() {
        let dir = root.join(format!("net{i}"));
        write_random(&dir, &cfg, 100 + i as i64).unwrap();
        let mut torch = TorchEvaluator::load(
            &dir,
            EvaluatorOptions {
                device: DeviceChoice::Cpu,
                threads: 1,
                ..EvaluatorOptions::default()
            },
        )
        .unwrap();
        let mut native = NativeEvaluator::load(&dir, 1).unwrap();
        let moves: Vec<Vec<_>> = games
            .iter()
            .map(|g| g.last().unwrap().legal_moves().to_vec())
            .collect();
        let batch: Vec<EvalInput<'_>> = games
            .iter()
            .zip(&moves)
            .map(|(g, m)| EvalInput {
                history: g,
                moves: m,
            })
            .collect();
        let encoder = cfg.encoder();
        let mut inputs = vec![PackedPlane::ZERO; batch.len() * encoder.planes()];
        encode_packed_batch(&batch, &encoder, &mut inputs).unwrap();
        let (tp, tv) = torch.forward_raw(&inputs, batch.len()).unwrap();
        let (np, nv) = native.forward_raw(&inputs, batch.len()).unwrap();
        let (dp, dv) = (max_diff(&tp, &np), max_diff(&tv, &nv));
        let (sp, sv) = (1e-4 * (1.0 + max_abs(&tp)), 1e-4 * (1.0 + max_abs(&tv)));
        eprintln!(
            "{label}: policy logits max |Δ| {dp:.2e} (max |logit| {:.2}), value logits {dv:.2e} (max {:.2})",
            max_abs(&tp),
            max_abs(&tv)
        );
        assert!(dp <= sp, "{label}: policy logits differ by {dp} > {sp}");
        assert!(dv <= sv, "{label}: value logits differ by {dv} > {sv}");
        // Through the Evaluator contract, one position at a time and all together.
        let t = torch.evaluate(&batch).unwrap();
        let n = native.evaluate(&batch).unwrap();
        for (k, (a, b)) in t.iter().zip(&n).enumerate() {
            assert!(
                max_diff(&a.policy, &b.policy) <= 1e-4,
                "{label}, position {k}: policy"
            );
            assert!(
                max_diff(&a.wdl, &b.wdl) <= 1e-4,
                "{label}, position {k}: wdl"
            );
            let alone = native.evaluate(&batch[k..=k]).unwrap();
            assert!(
                max_diff(&alone[0].policy, &b.policy) <= 1e-5,
                "{label}, {k}: batch of one"
            );
        }
        // A batch split over threads gives what one thread gives, up to rounding: the
        // GEMM kernels block a product by its width, so a part of the batch may sum in
        // another order than the whole (a wrong split would differ by whole logits).
        let mut threaded = NativeEvaluator::load(&dir, 3).unwrap();
        let (p3, v3) = threaded.forward_raw(&inputs, batch.len()).unwrap();
        let (tp3, tv3) = (1e-6 * (1.0 + max_abs(&np)), 1e-6 * (1.0 + max_abs(&nv)));
        assert!(
            max_diff(&p3, &np) <= tp3 && max_diff(&v3, &nv) <= tv3,
            "{label}: threads differ by {:e} (policy) and {:e} (value)",
            max_diff(&p3, &np),
            max_diff(&v3, &nv)
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn weights_of_another_architecture_are_refused_by_name() {
    let dir = std::env::temp_dir().join(format!("xq-native-arch-{}", std::process::id()));
    let small = NetConfig {
        blocks: 1,
        channels: 8,
        history: 1,
        global_pool: false,
        value_channels: 2,
        value_hidden: 8,
    };
    let path = write_random(&dir, &small, 1).unwrap();
    // The sidecar now claims more channels than the weights have.
    let mut sc = Sidecar::read(&path).unwrap();
    sc.net.channels = 16;
    write_sidecar(&sc, &path).unwrap();
    let err = NativeEvaluator::load(&dir, 1).unwrap_err().to_string();
    assert!(
        err.contains("stem.conv.weight") && err.contains("shape"),
        "{err}"
    );
    // And one block fewer leaves a tensor nobody takes.
    sc.net.channels = 8;
    sc.net.blocks = 0;
    write_sidecar(&sc, &path).unwrap();
    let err = NativeEvaluator::load(&dir, 1).unwrap_err().to_string();
    assert!(
        err.contains("at least 1") || err.contains("unexpected tensor"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
