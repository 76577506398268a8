//! Network architecture and training configuration.
//!
//! Everything is plain serde data: the architecture ([`NetConfig`]) is written into every
//! checkpoint's sidecar so a checkpoint can be loaded without knowing how it was trained,
//! and the training configuration ([`TrainConfig`]) can come from a user's config file
//! (xq-pipeline reads the `[train]` table into it). Unknown keys are rejected
//! (`deny_unknown_fields`) so a typo never silently falls back to a default; value
//! ranges are checked by [`TrainConfig::validate`], whose errors name the key.

use serde::{Deserialize, Serialize};

use crate::error::TrainError;

pub use xq_nn::checkpoint::NetConfig;

/// Which device trains or evaluates (defined beside the backend seam, so that torch-free
/// crates can name one in [`xq_nn::LoadOptions`]).
pub use xq_nn::DeviceChoice;

/// The tch device `choice` stands for on this machine.
pub fn tch_device(choice: DeviceChoice) -> tch::Device {
    match choice {
        DeviceChoice::Auto => tch::Device::cuda_if_available(),
        DeviceChoice::Cpu => tch::Device::Cpu,
        DeviceChoice::Cuda(n) => tch::Device::Cuda(n),
    }
}

/// `cpu` or `cuda:N`, as PyTorch names a device: what events, evaluator names and
/// `bench train` report.
pub fn device_name(device: tch::Device) -> String {
    match device {
        tch::Device::Cpu => "cpu".into(),
        tch::Device::Cuda(n) => format!("cuda:{n}"),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// Arithmetic precision of the forward and backward pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// bf16 on a GPU, f32 on the CPU (where bf16 is slow without AMX and buys nothing).
    #[default]
    Auto,
    /// float32 everywhere.
    F32,
    /// bf16 convolutions and matrix products with f32 master weights, batch-norm
    /// statistics, losses and optimizer state. bf16 keeps f32's exponent range, so unlike
    /// fp16 it needs no loss scaling.
    Bf16,
}

impl Precision {
    /// The compute kind for `device`.
    pub fn compute_kind(self, device: tch::Device) -> tch::Kind {
        match (self, device) {
            (Precision::F32, _) => tch::Kind::Float,
            (Precision::Bf16, _) => tch::Kind::BFloat16,
            (Precision::Auto, tch::Device::Cuda(_)) => tch::Kind::BFloat16,
            (Precision::Auto, _) => tch::Kind::Float,
        }
    }
}

/// The optimiser and its hyper-parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum OptimizerConfig {
    /// SGD with (Nesterov) momentum and coupled L2 weight decay (PyTorch `SGD` semantics).
    Sgd {
        #[serde(default = "default_momentum")]
        momentum: f64,
        #[serde(default = "default_true")]
        nesterov: bool,
        #[serde(default = "default_sgd_wd")]
        weight_decay: f64,
    },
    /// AdamW with decoupled weight decay (PyTorch `AdamW` semantics).
    Adamw {
        #[serde(default = "default_beta1")]
        beta1: f64,
        #[serde(default = "default_beta2")]
        beta2: f64,
        #[serde(default = "default_eps")]
        eps: f64,
        #[serde(default = "default_adamw_wd")]
        weight_decay: f64,
    },
}

fn default_momentum() -> f64 {
    0.9
}
fn default_true() -> bool {
    true
}
fn default_sgd_wd() -> f64 {
    1e-4
}
fn default_beta1() -> f64 {
    0.9
}
fn default_beta2() -> f64 {
    0.999
}
fn default_eps() -> f64 {
    1e-8
}
fn default_adamw_wd() -> f64 {
    0.01
}

impl Default for OptimizerConfig {
    fn default() -> Self {
        OptimizerConfig::Sgd {
            momentum: default_momentum(),
            nesterov: true,
            weight_decay: default_sgd_wd(),
        }
    }
}

impl OptimizerConfig {
    /// `"sgd"` or `"adamw"`: the optimiser state files of different kinds don't mix.
    pub fn kind(&self) -> &'static str {
        match self {
            OptimizerConfig::Sgd { .. } => "sgd",
            OptimizerConfig::Adamw { .. } => "adamw",
        }
    }
}

/// Learning-rate schedule after the warmup.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum LrSchedule {
    /// The base rate forever.
    #[default]
    Constant,
    /// The base rate times `factors[i]` from step `boundaries[i]` on (lc0 style piecewise).
    Step {
        boundaries: Vec<u64>,
        factors: Vec<f64>,
    },
    /// Cosine decay from the base rate to `base × final_fraction` at `total_steps`, then flat.
    Cosine {
        total_steps: u64,
        #[serde(default)]
        final_fraction: f64,
    },
}

/// Everything that decides how the trainer trains.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// Architecture (used for a new run; a resumed run must match its checkpoint).
    pub net: NetConfig,
    pub optimizer: OptimizerConfig,
    /// Peak learning rate.
    pub lr: f64,
    /// Linear warmup from 0 to `lr` over this many steps.
    pub warmup_steps: u64,
    pub schedule: LrSchedule,
    /// Clip the global gradient norm to this (0 = no clipping).
    pub grad_clip: f64,
    /// Decay of the exponential moving average of the weights (0 = no EMA, the EMA file
    /// then holds the live weights). The EMA is what gets exported and evaluated.
    pub ema_decay: f64,
    /// Weight of the value loss relative to the policy loss.
    pub value_loss_weight: f64,
    pub device: DeviceChoice,
    pub precision: Precision,
    /// Intra-op CPU threads for libtorch (0 = libtorch's default). Global to the process.
    pub threads: usize,
    /// Seed of the weight initialisation (and every other torch random draw).
    pub seed: u64,
    /// Write TensorBoard scalars every this many steps (0 = never).
    pub log_every: u64,
    /// Checkpoint every this many steps: [`crate::Trainer::checkpoint_due`] says when
    /// (0 = only when asked).
    pub checkpoint_every: u64,
    /// Keep this many newest checkpoints (0 = keep all).
    pub keep_checkpoints: usize,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            net: NetConfig::default(),
            optimizer: OptimizerConfig::default(),
            lr: 0.02,
            warmup_steps: 200,
            schedule: LrSchedule::Constant,
            grad_clip: 10.0,
            ema_decay: 0.999,
            value_loss_weight: 1.0,
            device: DeviceChoice::Auto,
            precision: Precision::Auto,
            threads: 0,
            seed: 1,
            log_every: 10,
            checkpoint_every: 1000,
            keep_checkpoints: 5,
        }
    }
}

impl TrainConfig {
    /// Checks value ranges; the error names the key.
    pub fn validate(&self) -> Result<(), TrainError> {
        self.net.validate()?;
        let bad = |key: &str, what: &str| Err(TrainError::Config(format!("{key} {what}")));
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return bad("lr", "must be a positive number");
        }
        if !(self.grad_clip.is_finite() && self.grad_clip >= 0.0) {
            return bad("grad_clip", "must be ≥ 0");
        }
        if !(0.0..1.0).contains(&self.ema_decay) {
            return bad("ema_decay", "must be in [0, 1)");
        }
        if !(self.value_loss_weight.is_finite() && self.value_loss_weight >= 0.0) {
            return bad("value_loss_weight", "must be ≥ 0");
        }
        match &self.optimizer {
            OptimizerConfig::Sgd {
                momentum,
                weight_decay,
                ..
            } => {
                if !(0.0..1.0).contains(momentum) {
                    return bad("optimizer.momentum", "must be in [0, 1)");
                }
                if !(weight_decay.is_finite() && *weight_decay >= 0.0) {
                    return bad("optimizer.weight_decay", "must be ≥ 0");
                }
            }
            OptimizerConfig::Adamw {
                beta1,
                beta2,
                eps,
                weight_decay,
            } => {
                if !(0.0..1.0).contains(beta1) {
                    return bad("optimizer.beta1", "must be in [0, 1)");
                }
                if !(0.0..1.0).contains(beta2) {
                    return bad("optimizer.beta2", "must be in [0, 1)");
                }
                if !(eps.is_finite() && *eps > 0.0) {
                    return bad("optimizer.eps", "must be > 0");
                }
                if !(weight_decay.is_finite() && *weight_decay >= 0.0) {
                    return bad("optimizer.weight_decay", "must be ≥ 0");
                }
            }
        }
        match &self.schedule {
            LrSchedule::Constant => {}
            LrSchedule::Step {
                boundaries,
                factors,
            } => {
                if boundaries.len() != factors.len() {
                    return bad(
                        "schedule.factors",
                        "must have one entry per schedule.boundaries entry",
                    );
                }
                if boundaries.windows(2).any(|w| w[0] >= w[1]) {
                    return bad("schedule.boundaries", "must be strictly increasing");
                }
                if factors.iter().any(|f| !(f.is_finite() && *f >= 0.0)) {
                    return bad("schedule.factors", "must be ≥ 0");
                }
            }
            LrSchedule::Cosine {
                total_steps,
                final_fraction,
            } => {
                if *total_steps == 0 {
                    return bad("schedule.total_steps", "must be at least 1");
                }
                if !(0.0..=1.0).contains(final_fraction) {
                    return bad("schedule.final_fraction", "must be in [0, 1]");
                }
            }
        }
        Ok(())
    }

    /// The learning rate for optimiser step `step` (0-based): linear warmup, then the
    /// schedule. A pure function of the step, so a resumed run continues the same curve.
    pub fn lr_at(&self, step: u64) -> f64 {
        if step < self.warmup_steps {
            return self.lr * (step + 1) as f64 / self.warmup_steps as f64;
        }
        match &self.schedule {
            LrSchedule::Constant => self.lr,
            LrSchedule::Step {
                boundaries,
                factors,
            } => {
                let mut f = 1.0;
                for (b, k) in boundaries.iter().zip(factors) {
                    if step >= *b {
                        f = *k;
                    }
                }
                self.lr * f
            }
            LrSchedule::Cosine {
                total_steps,
                final_fraction,
            } => {
                let t = (step.min(*total_steps)) as f64 / *total_steps as f64;
                let cos = 0.5 * (1.0 + (std::f64::consts::PI * t).cos());
                self.lr * (final_fraction + (1.0 - final_fraction) * cos)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads a config as a sidecar does, then checks the ranges.
    fn from_json(text: &str) -> Result<TrainConfig, String> {
        let cfg: TrainConfig = serde_json::from_str(text).map_err(|e| e.to_string())?;
        cfg.validate().map_err(|e| e.to_string())?;
        Ok(cfg)
    }

    #[test]
    fn unknown_keys_are_refused() {
        let err = from_json(r#"{"optimizer": {"kind": "sgd", "momentun": 0.9}}"#).unwrap_err();
        assert!(err.contains("momentun"), "{err}");
        let err = from_json(r#"{"net": {"blocs": 4}}"#).unwrap_err();
        assert!(err.contains("blocs"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_refused_with_their_key() {
        for (json, key) in [
            (r#"{"lr": -1}"#, "lr"),
            (r#"{"ema_decay": 1.5}"#, "ema_decay"),
            (r#"{"net": {"channels": 0}}"#, "net.channels"),
            (
                r#"{"schedule": {"kind": "step", "boundaries": [10, 5], "factors": [0.1, 0.01]}}"#,
                "schedule.boundaries",
            ),
        ] {
            let err = from_json(json).unwrap_err();
            assert!(err.contains(key), "{json}: {err}");
        }
    }

    #[test]
    fn config_round_trips_through_json() {
        let cfg = TrainConfig {
            optimizer: OptimizerConfig::Adamw {
                beta1: 0.8,
                beta2: 0.99,
                eps: 1e-7,
                weight_decay: 0.1,
            },
            schedule: LrSchedule::Cosine {
                total_steps: 1000,
                final_fraction: 0.1,
            },
            device: DeviceChoice::Cuda(1),
            precision: Precision::Bf16,
            net: NetConfig::large(),
            ..TrainConfig::default()
        };
        let text = serde_json::to_string(&cfg).unwrap();
        assert_eq!(from_json(&text).unwrap(), cfg);
    }

    #[test]
    fn lr_warms_up_then_follows_the_schedule() {
        let cfg = TrainConfig {
            lr: 1.0,
            warmup_steps: 4,
            schedule: LrSchedule::Step {
                boundaries: vec![10, 20],
                factors: vec![0.1, 0.01],
            },
            ..TrainConfig::default()
        };
        let lrs: Vec<f64> = [0, 1, 3, 4, 9, 10, 19, 20, 1000]
            .iter()
            .map(|&s| cfg.lr_at(s))
            .collect();
        assert_eq!(lrs, [0.25, 0.5, 1.0, 1.0, 1.0, 0.1, 0.1, 0.01, 0.01]);
        let cos = TrainConfig {
            lr: 1.0,
            warmup_steps: 0,
            schedule: LrSchedule::Cosine {
                total_steps: 100,
                final_fraction: 0.0,
            },
            ..TrainConfig::default()
        };
        assert_eq!(cos.lr_at(0), 1.0);
        assert!((cos.lr_at(50) - 0.5).abs() < 1e-12);
        assert!(cos.lr_at(100).abs() < 1e-12);
        assert!(cos.lr_at(500).abs() < 1e-12);
    }

    #[test]
    fn presets_have_the_documented_sizes() {
        assert_eq!(
            NetConfig::preset("small").map(|c| (c.blocks, c.channels)),
            Some((4, 48))
        );
        assert_eq!(
            NetConfig::preset("10x128").map(|c| (c.blocks, c.channels)),
            Some((10, 128))
        );
        assert_eq!(
            NetConfig::preset("large").map(|c| (c.blocks, c.channels)),
            Some((20, 256))
        );
        assert_eq!(NetConfig::preset("huge"), None);
        assert_eq!(
            "cuda:2".parse::<DeviceChoice>().unwrap(),
            DeviceChoice::Cuda(2)
        );
        assert!("tpu".parse::<DeviceChoice>().is_err());
    }
}
