//! The training loop's building block: one [`Trainer`] owns the network, its EMA twin,
//! the optimiser, the checkpoints of one run directory and its TensorBoard log.
//!
//! The caller drives it: pull a batch, [`Trainer::step`], and [`Trainer::save_checkpoint`]
//! when [`Trainer::checkpoint_due`] (handing over the data pipeline's cursor first, so a
//! resumed run continues with the same data). A run directory holds
//! `checkpoints/` (see [`crate::checkpoint`]) and `tensorboard/`.
//!
//! **Exact resume.** Weights, batch-norm statistics, EMA, optimiser moments and step
//! counts are all saved bit for bit, the learning rate is a function of the step, and the
//! forward pass draws no random numbers (no dropout; torch's RNG only initialises the
//! weights). So on the CPU with a fixed thread count, `N` straight steps and `K` steps,
//! save, resume, `N − K` steps give identical weights (tested), provided the data pipeline
//! replays the same batches from its cursor.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tch::nn::VarStore;
use tch::{Device, Kind, Tensor};
use xq_nn::checkpoint::CheckpointError;
use xq_nn::encode::{BOARD_FILES, BOARD_RANKS};
use xq_nn::policy::POLICY_SIZE;

use crate::batch::{DeviceBatch, HostBatch};
use xq_data::layout::{CHECKPOINTS_DIR, TENSORBOARD_DIR};
use xq_data::tensorboard::TbLogger;

use crate::checkpoint::{
    self, OptimizerState, Sidecar, list_checkpoints, read_tensors, stem, write_tensors,
};
use crate::config::TrainConfig;
use crate::ema::Ema;
use crate::error::TrainError;
use crate::logging::tags;
use crate::loss::{LossWeights, loss, policy_kl};
use crate::net::Net;
use crate::optim::{Optimizer, PackedVars};

/// What one training step measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepStats {
    /// Steps taken after this one (1 after the first step).
    pub step: u64,
    /// Samples in the batch.
    pub samples: usize,
    pub total_loss: f64,
    pub policy_loss: f64,
    pub value_loss: f64,
    pub policy_accuracy: f64,
    pub value_accuracy: f64,
    /// Global gradient norm before clipping.
    pub grad_norm: f64,
    /// Learning rate used for this step.
    pub lr: f64,
    /// On the steps that end a logging interval (every `log_every`): what the trainer
    /// wrote to TensorBoard, for a caller's progress line. The trainer prints nothing.
    pub logged: Option<Logged>,
}

/// The means of one logging interval of the trainer, as its TensorBoard rows hold them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Logged {
    pub means: Means,
    /// The learning rate at the interval's last step.
    pub lr: f64,
    pub samples_per_second: f64,
}

/// Loss and accuracy of a batch evaluated without training (e.g. a held-out split).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EvalStats {
    pub samples: usize,
    pub total_loss: f64,
    pub policy_loss: f64,
    pub value_loss: f64,
    pub policy_accuracy: f64,
    pub value_accuracy: f64,
}

/// Step statistics summed over an interval, and their means: the one place where
/// steps are averaged, for the trainer's TensorBoard rows (and so [`Logged`]) and for
/// the pipeline's `train` events (whose intervals differ).
#[derive(Debug, Clone)]
pub struct StepMeans {
    steps: u64,
    samples: u64,
    sums: [f64; 6],
    started: Instant,
}

/// Means of the losses, accuracies and gradient norm over a [`StepMeans`] interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Means {
    pub total_loss: f64,
    pub policy_loss: f64,
    pub value_loss: f64,
    pub policy_accuracy: f64,
    pub value_accuracy: f64,
    pub grad_norm: f64,
}

impl Default for StepMeans {
    fn default() -> Self {
        StepMeans::new()
    }
}

impl StepMeans {
    /// An empty interval starting now.
    pub fn new() -> StepMeans {
        StepMeans {
            steps: 0,
            samples: 0,
            sums: [0.0; 6],
            started: Instant::now(),
        }
    }

    /// Adds a step's losses and samples.
    pub fn add(&mut self, s: &StepStats) {
        self.steps += 1;
        self.add_samples(s.samples);
        for (sum, v) in self.sums.iter_mut().zip([
            s.total_loss,
            s.policy_loss,
            s.value_loss,
            s.policy_accuracy,
            s.value_accuracy,
            s.grad_norm,
        ]) {
            *sum += v;
        }
    }

    /// Counts samples of a step whose losses are not averaged (a record batch mixed into
    /// self-play training).
    pub fn add_samples(&mut self, samples: usize) {
        self.samples += samples as u64;
    }

    /// Steps added with [`StepMeans::add`].
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The means (zeros for an empty interval).
    pub fn means(&self) -> Means {
        let n = self.steps.max(1) as f64;
        let m = self.sums.map(|x| x / n);
        Means {
            total_loss: m[0],
            policy_loss: m[1],
            value_loss: m[2],
            policy_accuracy: m[3],
            value_accuracy: m[4],
            grad_norm: m[5],
        }
    }

    /// Wall time since the interval started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Samples per second of wall time.
    pub fn samples_per_second(&self) -> f64 {
        self.samples as f64 / self.elapsed().as_secs_f64().max(1e-9)
    }
}

/// The trainer's logging interval: the step means and the time spent inside steps.
#[derive(Debug)]
struct Interval {
    means: StepMeans,
    in_step: Duration,
}

impl Interval {
    fn new() -> Interval {
        Interval {
            means: StepMeans::new(),
            in_step: Duration::ZERO,
        }
    }
}

/// See the module documentation.
#[derive(Debug)]
pub struct Trainer {
    config: TrainConfig,
    run_dir: PathBuf,
    device: Device,
    kind: Kind,
    vs: VarStore,
    net: Net,
    ema_vs: VarStore,
    ema_net: Net,
    opt: Optimizer,
    ema: Ema,
    step: u64,
    samples_seen: u64,
    data_cursor: Option<serde_json::Value>,
    window_size: Option<u64>,
    /// Multiplies the schedule's rate (see [`Trainer::set_lr_scale`]).
    lr_scale: f64,
    /// Factors of the loss's weights and the leaf value's share in training steps (see
    /// [`Trainer::set_loss_scales`]).
    scales: LossWeights,
    /// The frozen network whose policy `policy_kl` pulls toward, and the term's weight
    /// in training steps (see [`Trainer::anchor_policy`]).
    anchor: Option<(VarStore, Net)>,
    anchor_weight: f64,
    tb: TbLogger,
    /// The failure that stopped TensorBoard logging, until the caller takes it.
    tb_failure: Option<TrainError>,
    interval: Interval,
}

impl Trainer {
    /// Starts a new run in `run_dir` (created if needed) with freshly initialised weights
    /// (seeded by `config.seed`). Refuses a run directory that already has checkpoints.
    pub fn new(run_dir: impl AsRef<Path>, config: TrainConfig) -> Result<Trainer, TrainError> {
        config.validate()?;
        let run_dir = run_dir.as_ref();
        let ckdir = run_dir.join(CHECKPOINTS_DIR);
        if !list_checkpoints(&ckdir)?.is_empty() {
            return Err(TrainError::RunExists(run_dir.to_path_buf()));
        }
        fs::create_dir_all(&ckdir).map_err(|e| TrainError::io(&ckdir, e))?;
        Trainer::build(run_dir, config)
    }

    /// Resumes `run_dir` from its newest complete checkpoint. The checkpoint's
    /// architecture and optimiser kind must match `config`; other settings (learning
    /// rate, schedule, clipping, EMA decay, logging) come from `config`, so a run can be
    /// continued with new hyper-parameters.
    pub fn resume(run_dir: impl AsRef<Path>, config: TrainConfig) -> Result<Trainer, TrainError> {
        config.validate()?;
        let run_dir = run_dir.as_ref();
        let ckdir = run_dir.join(CHECKPOINTS_DIR);
        let (_, path) = list_checkpoints(&ckdir)?.pop().ok_or_else(|| {
            TrainError::Checkpoint(CheckpointError::NoCheckpoint(run_dir.to_path_buf()))
        })?;
        let sc = Sidecar::read(&path)?;
        if sc.net != config.net {
            return Err(TrainError::Mismatch(format!(
                "net: {} was trained with {}, the config asks for {}",
                path.display(),
                serde_json::to_string(&sc.net).unwrap_or_default(),
                serde_json::to_string(&config.net).unwrap_or_default(),
            )));
        }
        let opt_state = sc
            .optimizer
            .clone()
            .ok_or_else(|| TrainError::BadCheckpoint {
                path: path.clone(),
                what: "no optimizer state: an exported network, not a training checkpoint".into(),
            })?;
        if opt_state.kind != config.optimizer.kind() {
            return Err(TrainError::Mismatch(format!(
                "optimizer.kind: {} was trained with {}, the config asks for {}",
                path.display(),
                opt_state.kind,
                config.optimizer.kind()
            )));
        }
        let mut t = Trainer::build(run_dir, config)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let weights = dir.join(&sc.weights);
        checkpoint::load_into(&t.vs.variables(), &read_tensors(&weights)?, &weights)?;
        let ema_path = dir.join(&sc.ema);
        t.ema
            .load(&read_tensors(&ema_path)?, sc.ema_updates)
            .map_err(|what| TrainError::BadCheckpoint {
                path: ema_path.clone(),
                what,
            })?;
        let opt_path = dir.join(&opt_state.file);
        t.opt
            .load_state(&read_tensors(&opt_path)?, opt_state.steps)
            .map_err(|what| TrainError::BadCheckpoint {
                path: opt_path.clone(),
                what,
            })?;
        t.step = sc.step;
        t.samples_seen = sc.samples_seen;
        t.data_cursor = sc.data_cursor;
        Ok(t)
    }

    /// [`Trainer::resume`] if `run_dir` has a checkpoint, else [`Trainer::new`].
    pub fn open(run_dir: impl AsRef<Path>, config: TrainConfig) -> Result<Trainer, TrainError> {
        let ckdir = run_dir.as_ref().join(CHECKPOINTS_DIR);
        if list_checkpoints(&ckdir)?.is_empty() {
            Trainer::new(run_dir, config)
        } else {
            Trainer::resume(run_dir, config)
        }
    }

    fn build(run_dir: &Path, config: TrainConfig) -> Result<Trainer, TrainError> {
        crate::set_num_threads(config.threads);
        let device = crate::config::tch_device(config.device);
        if let Device::Cuda(i) = device
            && i >= tch::Cuda::device_count() as usize
        {
            return Err(TrainError::Config(format!(
                "device: cuda:{i} requested but libtorch sees {} CUDA device(s)",
                tch::Cuda::device_count()
            )));
        }
        let kind = config.precision.compute_kind(device);
        // torch's RNG is global: hold a lock from seeding to the last random draw so two
        // trainers built at once on different threads still get their seed's weights.
        let guard = crate::net::init_lock();
        tch::manual_seed(config.seed as i64);
        let vs = VarStore::new(device);
        let net = Net::new(&vs.root(), &config.net)?;
        let ema_vs = VarStore::new(device);
        let ema_net = Net::new(&ema_vs.root(), &config.net)?;
        drop(guard);
        // One contiguous buffer for the weights (and one for the EMA's, the gradients
        // and each optimiser state), so the per-step updates are a few ops in all.
        let vars = PackedVars::new(&vs.variables())?;
        let opt = Optimizer::new(config.optimizer.clone(), &vars)?;
        let ema = Ema::new(config.ema_decay, &vars, &ema_vs.variables())?;
        Ok(Trainer {
            tb: TbLogger::new(run_dir.join(TENSORBOARD_DIR)),
            tb_failure: None,
            run_dir: run_dir.to_path_buf(),
            device,
            kind,
            vs,
            net,
            ema_vs,
            ema_net,
            opt,
            ema,
            step: 0,
            samples_seen: 0,
            lr_scale: 1.0,
            scales: LossWeights::PLAIN,
            anchor: None,
            anchor_weight: 0.0,
            data_cursor: None,
            window_size: None,
            interval: Interval::new(),
            config,
        })
    }

    /// Writes TensorBoard scalars to `dir` instead of `RUN/tensorboard` (the `xqz`
    /// run directory keeps every process's logs under `logs/`). Call before training:
    /// the event file is created on the first scalar.
    pub fn set_tensorboard_dir(&mut self, dir: impl Into<PathBuf>) {
        self.tb = TbLogger::new(dir);
    }

    /// The error that stopped TensorBoard logging (a full disk), once: a failed write
    /// of the curves does not fail the step, so the caller asks for it after steps
    /// and turns it into a warning.
    pub fn take_tensorboard_failure(&mut self) -> Option<TrainError> {
        self.tb_failure.take()
    }

    /// Logs a scalar; a failure stops the logger and is kept for
    /// [`Trainer::take_tensorboard_failure`].
    fn tb_scalar(&mut self, tag: &str, value: f64, step: u64) {
        if let Err(e) = self.tb.scalar(tag, value, step) {
            self.tb_failure = Some(e.into());
        }
    }

    /// One optimiser step on `batch`. A batch whose loss is NaN or infinite is refused
    /// (`TrainError::Diverged`) before the weights change.
    pub fn step(&mut self, batch: &HostBatch<'_>) -> Result<StepStats, TrainError> {
        let t0 = Instant::now();
        let planes = self.config.net.input_planes();
        // SAFETY: `d` and every tensor made from it (activations, the autograd graph,
        // the loss) are locals of this call, dropped before it returns; nothing kept in
        // `self` refers to them.
        let d = unsafe { borrowed_batch(batch, planes, self.device)? };
        self.opt.zero_grad()?;
        let (pl, vl) = self.net.forward(&d.inputs, true, self.kind)?;
        let weights = LossWeights {
            value: self.config.value_loss_weight * self.scales.value,
            ..self.scales
        };
        let mut l = loss(&pl, &vl, &d, weights)?;
        if self.anchor_weight > 0.0 {
            let Some((_, anchor)) = &self.anchor else {
                return Err(TrainError::Config(
                    "a policy anchor weight is set but no anchor network (Trainer::anchor_policy)"
                        .into(),
                ));
            };
            let (al, _) = tch::no_grad(|| anchor.forward(&d.inputs, false, self.kind))?;
            let kl = policy_kl(&pl, &al, &d)?;
            l.total = l.total.f_add(&kl.f_mul_scalar(self.anchor_weight)?)?;
        }
        l.total.f_backward()?;
        let grad_norm = self.opt.clip_grad_norm(self.config.grad_clip)?;
        let host = scalars(&[
            &l.total,
            &l.policy,
            &l.value,
            &l.policy_accuracy,
            &l.value_accuracy,
            &grad_norm,
        ])?;
        if host.iter().any(|x| !x.is_finite()) {
            self.opt.zero_grad()?;
            return Err(TrainError::Diverged {
                step: self.step,
                loss: host[0],
            });
        }
        let lr = self.config.lr_at(self.step) * self.lr_scale;
        self.opt.step(lr)?;
        self.ema.update()?;
        self.step += 1;
        self.samples_seen += batch.len as u64;
        let mut stats = StepStats {
            step: self.step,
            samples: batch.len,
            total_loss: host[0],
            policy_loss: host[1],
            value_loss: host[2],
            policy_accuracy: host[3],
            value_accuracy: host[4],
            grad_norm: host[5],
            lr,
            logged: None,
        };
        self.interval.in_step += t0.elapsed();
        stats.logged = self.record(&stats);
        Ok(stats)
    }

    /// Adds a step to the logging interval; at its end, writes the interval's
    /// TensorBoard rows and returns them.
    fn record(&mut self, s: &StepStats) -> Option<Logged> {
        let iv = &mut self.interval;
        iv.means.add(s);
        let log_now = self.config.log_every > 0 && self.step.is_multiple_of(self.config.log_every);
        if !log_now {
            return None;
        }
        let wall = iv.means.elapsed().as_secs_f64().max(1e-9);
        let rate = iv.means.samples_per_second();
        let m = iv.means.means();
        let wait = 1.0 - (iv.in_step.as_secs_f64() / wall).min(1.0);
        let step = self.step;
        let mut rows = vec![
            (tags::TOTAL_LOSS, m.total_loss),
            (tags::POLICY_LOSS, m.policy_loss),
            (tags::VALUE_LOSS, m.value_loss),
            (tags::POLICY_ACCURACY, m.policy_accuracy),
            (tags::VALUE_ACCURACY, m.value_accuracy),
            (tags::GRAD_NORM, m.grad_norm),
            (tags::LEARNING_RATE, s.lr),
            (tags::SAMPLES_PER_SEC, rate),
            (tags::DATA_WAIT, wait),
        ];
        if let Some(w) = self.window_size {
            rows.push((tags::WINDOW_SIZE, w as f64));
        }
        for (tag, v) in rows {
            self.tb_scalar(tag, v, step);
        }
        self.interval = Interval::new();
        Some(Logged {
            means: m,
            lr: s.lr,
            samples_per_second: rate,
        })
    }

    /// Loss and accuracy of the EMA network on `batch`, without training (batch norm in
    /// inference mode). For a held-out split.
    pub fn evaluate(&mut self, batch: &HostBatch<'_>) -> Result<EvalStats, TrainError> {
        let d: DeviceBatch = batch.to_device(self.config.net.input_planes(), self.device)?;
        let host = tch::no_grad(|| -> Result<Vec<f64>, TrainError> {
            let (pl, vl) = self.ema_net.forward(&d.inputs, false, self.kind)?;
            let weights = LossWeights {
                value: self.config.value_loss_weight,
                ..LossWeights::PLAIN
            };
            let l = loss(&pl, &vl, &d, weights)?;
            scalars(&[
                &l.total,
                &l.policy,
                &l.value,
                &l.policy_accuracy,
                &l.value_accuracy,
            ])
        })?;
        Ok(EvalStats {
            samples: batch.len,
            total_loss: host[0],
            policy_loss: host[1],
            value_loss: host[2],
            policy_accuracy: host[3],
            value_accuracy: host[4],
        })
    }

    /// Logs a scalar to the run's TensorBoard at the current step (e.g.
    /// `heldout/policy_top1` from [`Trainer::evaluate`]); a failure is kept for
    /// [`Trainer::take_tensorboard_failure`].
    pub fn log_scalar(&mut self, tag: &str, value: f64) {
        let step = self.step;
        self.tb_scalar(tag, value, step);
    }

    /// Whether `config.checkpoint_every` says the current step should be saved.
    pub fn checkpoint_due(&self) -> bool {
        self.config.checkpoint_every > 0
            && self.step > 0
            && self.step.is_multiple_of(self.config.checkpoint_every)
    }

    /// Writes a checkpoint of the current step (see [`crate::checkpoint`]) and prunes old
    /// ones beyond `config.keep_checkpoints`; returns the sidecar's path.
    ///
    /// # Errors
    /// A file that cannot be written (a full disk): the error names it, the files of
    /// this unfinished checkpoint are removed again (unless a complete checkpoint of the
    /// same step already existed), and earlier checkpoints are untouched.
    pub fn save_checkpoint(&mut self) -> Result<PathBuf, TrainError> {
        let dir = self.run_dir.join(CHECKPOINTS_DIR);
        fs::create_dir_all(&dir).map_err(|e| TrainError::io(&dir, e))?;
        let stem = stem(self.step);
        let path = dir.join(format!("{stem}.json"));
        let existed = path.exists();
        let result = self.write_checkpoint_files(&dir, &stem, &path);
        if result.is_err() && !existed && !path.exists() {
            // Tensor files without a sidecar are no checkpoint, only wasted space.
            for kind in ["weights", "ema", "optim"] {
                let _ = fs::remove_file(dir.join(format!("{stem}.{kind}.safetensors")));
            }
        }
        result?;
        checkpoint::prune(&dir, self.config.keep_checkpoints)?;
        Ok(path)
    }

    /// The tensor files, then the sidecar (which makes the checkpoint complete).
    fn write_checkpoint_files(
        &self,
        dir: &Path,
        stem: &str,
        path: &Path,
    ) -> Result<(), TrainError> {
        let weights = format!("{stem}.weights.safetensors");
        let ema = format!("{stem}.ema.safetensors");
        let optim = format!("{stem}.optim.safetensors");
        write_tensors(&dir.join(&weights), &sorted(self.vs.variables()))?;
        write_tensors(&dir.join(&ema), &self.ema.tensors())?;
        write_tensors(&dir.join(&optim), &self.opt.state_tensors()?)?;
        let mut sc = Sidecar::new(
            self.config.net.clone(),
            self.step,
            self.samples_seen,
            self.config.seed,
        );
        sc.weights = weights;
        sc.ema = ema;
        sc.ema_updates = self.ema.updates();
        sc.optimizer = Some(OptimizerState {
            kind: self.opt.config().kind().into(),
            steps: self.opt.steps(),
            file: optim,
        });
        sc.data_cursor = self.data_cursor.clone();
        sc.train = serde_json::to_value(&self.config).ok();
        checkpoint::write_sidecar(&sc, path)
    }

    /// Stores the data pipeline's cursor; the next checkpoint saves it.
    pub fn set_data_cursor(&mut self, cursor: serde_json::Value) {
        self.data_cursor = Some(cursor);
    }

    /// The data cursor restored from the checkpoint (or last set).
    pub fn data_cursor(&self) -> Option<&serde_json::Value> {
        self.data_cursor.as_ref()
    }

    /// Multiplies the configured schedule's rate by `scale` from the next step on (1 by
    /// default). Not saved in checkpoints: a caller with its own rule for the rate (the
    /// pipeline's pre-training plateau) keeps that rule's state in the data cursor and
    /// sets the scale again after a resume.
    pub fn set_lr_scale(&mut self, scale: f64) {
        self.lr_scale = scale;
    }

    /// Sets, from the next training step on, how the loss treats the batches
    /// (evaluation always measures the network alone at the configured weights):
    /// `policy` and `value` multiply the policy loss's weight (1) and
    /// `value_loss_weight`, and `leaf` is the leaf value's share in the value loss's
    /// prediction: a batch that carries `leaf_wdl` trains `(1 − leaf) · network + leaf ·
    /// leaf value`, the value a search with leaf quiescence `leaf` uses ([`loss`]).
    /// [`LossWeights::PLAIN`] by default. Not saved in checkpoints: the caller sets it
    /// per batch, for its source (the pipeline's `[train.pretrain] value_weight` on
    /// record batches, `[train] selfplay_policy_weight`, `selfplay_value_weight` and
    /// `value_quiescence` on self-play ones).
    pub fn set_loss_scales(&mut self, scales: LossWeights) {
        self.scales = scales;
    }

    /// Current replay-window size, logged with the next scalars.
    pub fn set_window_size(&mut self, samples: u64) {
        self.window_size = Some(samples);
    }

    /// Optimiser steps taken.
    pub fn step_count(&self) -> u64 {
        self.step
    }

    /// Training samples consumed.
    pub fn samples_seen(&self) -> u64 {
        self.samples_seen
    }

    /// The configuration in force.
    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// The run directory.
    pub fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// The device training runs on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The live network.
    pub fn net(&self) -> &Net {
        &self.net
    }

    /// The EMA network (what checkpoints export for evaluation).
    pub fn ema_net(&self) -> &Net {
        &self.ema_net
    }

    /// Freezes a copy of the EMA network as the policy anchor and writes its weights to
    /// `path` (atomically), so that a resumed run anchors to the same network; with
    /// `path` already there, loads the anchor from it instead. From then on, steps with
    /// an anchor weight ([`Trainer::set_anchor_weight`]) add that weight times
    /// [`policy_kl`] to the loss.
    ///
    /// # Errors
    /// An unreadable or mismatched anchor file, or one that cannot be written.
    pub fn anchor_policy(&mut self, path: &Path) -> Result<(), TrainError> {
        let vs = VarStore::new(self.device);
        let net = {
            let _guard = crate::net::init_lock();
            Net::new(&vs.root(), &self.config.net)?
        };
        if path.exists() {
            let saved = crate::checkpoint::read_tensors(path)?;
            crate::checkpoint::load_into(&vs.variables(), &saved, path)?;
        } else {
            let ema = self.ema_vs.variables();
            tch::no_grad(|| -> Result<(), TrainError> {
                for (name, mut var) in vs.variables() {
                    let src = ema.get(&name).ok_or_else(|| {
                        TrainError::Config(format!("the EMA network has no variable {name}"))
                    })?;
                    var.f_copy_(src)?;
                }
                Ok(())
            })?;
            crate::checkpoint::write_tensors(path, &sorted(vs.variables()))?;
        }
        let mut vs = vs;
        vs.freeze();
        self.anchor = Some((vs, net));
        Ok(())
    }

    /// Whether a policy anchor is set ([`Trainer::anchor_policy`]).
    pub fn has_policy_anchor(&self) -> bool {
        self.anchor.is_some()
    }

    /// The weight of the pull toward the policy anchor in the following steps (0: none).
    /// Not saved in checkpoints: the caller sets it, by the batch's source.
    pub fn set_anchor_weight(&mut self, weight: f64) {
        self.anchor_weight = weight;
    }

    /// The live weights by name (sorted), e.g. to compare two runs.
    pub fn weights(&self) -> Vec<(String, Tensor)> {
        sorted(self.vs.variables())
    }

    /// The EMA weights by name (sorted).
    pub fn ema_weights(&self) -> Vec<(String, Tensor)> {
        sorted(self.ema_vs.variables())
    }
}

/// Variables sorted by name.
fn sorted(vars: HashMap<String, Tensor>) -> Vec<(String, Tensor)> {
    let mut v: Vec<_> = vars.into_iter().collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The batch as tensors on `device`. On the CPU they borrow `batch`'s buffers (no
/// copy, as `torch.from_numpy`; only the legal-move mask is converted to `Bool`); on
/// other devices each buffer is copied once, host to device.
///
/// # Safety
///
/// On the CPU the tensors (and any view or autograd record of them) must be dropped
/// before `batch`'s buffers are, and must not be written to.
unsafe fn borrowed_batch(
    batch: &HostBatch<'_>,
    planes: usize,
    device: Device,
) -> Result<DeviceBatch, TrainError> {
    batch.validate(planes)?;
    let n = batch.len as i64;
    let p = POLICY_SIZE as i64;
    fn borrow<T: tch::kind::Element>(
        data: &[T],
        size: &[i64],
        device: Device,
    ) -> Result<Tensor, TrainError> {
        // SAFETY: `data` holds exactly `size`'s product of `T` (checked by `validate`)
        // and outlives the tensor (the caller's contract).
        let t =
            unsafe { Tensor::f_from_blob(data.as_ptr().cast(), size, &[], T::KIND, Device::Cpu)? };
        Ok(if device == Device::Cpu {
            t
        } else {
            t.f_to_device(device)?
        })
    }
    let (ranks, files) = (BOARD_RANKS as i64, BOARD_FILES as i64);
    Ok(DeviceBatch {
        inputs: borrow(batch.inputs, &[n, planes as i64, ranks, files], device)?,
        policy: borrow(batch.policy, &[n, p], device)?,
        legal: borrow(batch.legal, &[n, p], device)?.f_to_kind(Kind::Bool)?,
        value: borrow(batch.value, &[n, 3], device)?,
        has_value: borrow(batch.has_value, &[n], device)?,
        weight: borrow(batch.weight, &[n], device)?,
        leaf_wdl: if batch.leaf_wdl.is_empty() {
            None
        } else {
            Some(borrow(batch.leaf_wdl, &[n, 3], device)?)
        },
    })
}

/// Copies scalar tensors to the host in one transfer.
fn scalars(ts: &[&Tensor]) -> Result<Vec<f64>, TrainError> {
    let flat: Vec<Tensor> = ts
        .iter()
        .map(|t| t.f_to_kind(Kind::Double)?.f_reshape([1]))
        .collect::<Result<_, _>>()?;
    let all = Tensor::f_cat(&flat, 0)?.f_to_device(Device::Cpu)?;
    Ok(Vec::<f64>::try_from(&all)?)
}
