//! SGD (Nesterov) momentum and AdamW written on tensors, so that their state (momentum
//! buffers, Adam moments, step count) can be saved and restored exactly. tch's own
//! optimisers keep their state inside libtorch where it cannot be read out.
//!
//! The update rules are PyTorch's (`torch.optim.SGD` with `dampening = 0`, and
//! `torch.optim.AdamW`), so the Python reference benchmark runs the same arithmetic.
//! Weight decay applies to convolution and linear weights only (tensors of 2 or more
//! dimensions), not to biases or batch-norm scales, as is usual for residual networks.

use std::collections::HashMap;

use tch::{Kind, TchError, Tensor};

use crate::config::OptimizerConfig;

/// A trainable variable with its name (the checkpoint key) and whether it decays.
#[derive(Debug)]
struct Param {
    name: String,
    var: Tensor,
    decay: bool,
}

/// The optimiser: config, the parameters it updates (sorted by name, so the update order
/// and the state file are deterministic) and one or two state tensors per parameter.
#[derive(Debug)]
pub struct Optimizer {
    config: OptimizerConfig,
    params: Vec<Param>,
    /// SGD: `[momentum]`; AdamW: `[exp_avg, exp_avg_sq]` — per parameter.
    state: Vec<Vec<Tensor>>,
    steps: u64,
}

impl Optimizer {
    /// An optimiser over the trainable variables of `vars` (name → tensor, as
    /// `VarStore::variables()` gives them), with zeroed state.
    pub fn new(
        config: OptimizerConfig,
        vars: &HashMap<String, Tensor>,
    ) -> Result<Optimizer, TchError> {
        let mut params: Vec<Param> = vars
            .iter()
            .filter(|(_, t)| t.requires_grad())
            .map(|(name, t)| Param {
                name: name.clone(),
                var: t.shallow_clone(),
                decay: t.dim() >= 2,
            })
            .collect();
        params.sort_by(|a, b| a.name.cmp(&b.name));
        let per = Self::state_names(&config).len();
        let state = params
            .iter()
            .map(|p| {
                (0..per)
                    .map(|_| p.var.f_zeros_like())
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<_, _>>()?;
        Ok(Optimizer {
            config,
            params,
            state,
            steps: 0,
        })
    }

    fn state_names(config: &OptimizerConfig) -> &'static [&'static str] {
        match config {
            OptimizerConfig::Sgd { .. } => &["momentum"],
            OptimizerConfig::Adamw { .. } => &["exp_avg", "exp_avg_sq"],
        }
    }

    /// Optimiser steps taken (Adam's bias correction depends on it).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// The configuration (hyper-parameters may change between runs; the kind may not).
    pub fn config(&self) -> &OptimizerConfig {
        &self.config
    }

    /// Replaces the hyper-parameters (same kind only; returns false otherwise).
    pub fn set_config(&mut self, config: OptimizerConfig) -> bool {
        if config.kind() != self.config.kind() {
            return false;
        }
        self.config = config;
        true
    }

    /// Zeroes every parameter's gradient.
    pub fn zero_grad(&mut self) {
        for p in &mut self.params {
            p.var.zero_grad();
        }
    }

    /// Scales the gradients so their global L2 norm is at most `max_norm` (as
    /// `torch.nn.utils.clip_grad_norm_`, with its 1e-6 epsilon) and returns the norm
    /// before clipping, as a device scalar (no host synchronisation). `max_norm = 0`
    /// measures without clipping.
    pub fn clip_grad_norm(&mut self, max_norm: f64) -> Result<Tensor, TchError> {
        tch::no_grad(|| {
            let norms = self
                .params
                .iter()
                .map(|p| p.var.grad())
                .filter(|g| g.defined())
                .map(|g| g.f_norm())
                .collect::<Result<Vec<_>, _>>()?;
            if norms.is_empty() {
                return Tensor::f_zeros([], (Kind::Float, tch::Device::Cpu));
            }
            let total = Tensor::f_stack(&norms, 0)?.f_norm()?;
            if max_norm > 0.0 {
                let coef = total
                    .f_add_scalar(1e-6)?
                    .f_reciprocal()?
                    .f_mul_scalar(max_norm)?
                    .f_clamp_max(1.0)?;
                for p in &self.params {
                    let mut g = p.var.grad();
                    if g.defined() {
                        let _ = g.f_mul_(&coef)?;
                    }
                }
            }
            Ok(total)
        })
    }

    /// One update with learning rate `lr` from the current gradients.
    pub fn step(&mut self, lr: f64) -> Result<(), TchError> {
        self.steps += 1;
        let t = self.steps as i32;
        tch::no_grad(|| {
            for (p, state) in self.params.iter_mut().zip(&mut self.state) {
                let g = p.var.grad();
                if !g.defined() {
                    continue;
                }
                match self.config {
                    OptimizerConfig::Sgd {
                        momentum,
                        nesterov,
                        weight_decay,
                    } => {
                        let g = if p.decay && weight_decay > 0.0 {
                            g.f_add(&p.var.f_mul_scalar(weight_decay)?)?
                        } else {
                            g
                        };
                        let buf = &mut state[0];
                        // First step: buf = 0·m + g = g exactly, as PyTorch's clone(g).
                        let _ = buf.f_mul_scalar_(momentum)?;
                        let _ = buf.f_add_(&g)?;
                        let d = if nesterov {
                            g.f_add(&buf.f_mul_scalar(momentum)?)?
                        } else {
                            buf.shallow_clone()
                        };
                        let _ = p.var.f_add_(&d.f_mul_scalar(-lr)?)?;
                    }
                    OptimizerConfig::Adamw {
                        beta1,
                        beta2,
                        eps,
                        weight_decay,
                    } => {
                        if p.decay && weight_decay > 0.0 {
                            let _ = p.var.f_mul_scalar_(1.0 - lr * weight_decay)?;
                        }
                        let (m, v) = state.split_at_mut(1);
                        let (m, v) = (&mut m[0], &mut v[0]);
                        let _ = m.f_lerp_(&g, 1.0 - beta1)?;
                        let _ = v.f_mul_scalar_(beta2)?;
                        let _ = v.f_addcmul_(&g, &g.f_mul_scalar(1.0 - beta2)?)?;
                        let bc1 = 1.0 - beta1.powi(t);
                        let bc2 = 1.0 - beta2.powi(t);
                        let denom = v.f_sqrt()?.f_div_scalar(bc2.sqrt())?.f_add_scalar(eps)?;
                        let _ = p.var.f_add_(&m.f_div(&denom)?.f_mul_scalar(-lr / bc1)?)?;
                    }
                }
            }
            Ok(())
        })
    }

    /// The state as named tensors (`momentum/<var>`, `exp_avg/<var>`, …) for saving.
    pub fn state_tensors(&self) -> Vec<(String, Tensor)> {
        let names = Self::state_names(&self.config);
        let mut out = Vec::new();
        for (p, state) in self.params.iter().zip(&self.state) {
            for (n, t) in names.iter().zip(state) {
                out.push((format!("{n}/{}", p.name), t.shallow_clone()));
            }
        }
        out
    }

    /// Restores the state saved by [`Optimizer::state_tensors`] and the step count; the
    /// error names the first missing or mis-shaped tensor.
    pub fn load_state(
        &mut self,
        saved: &HashMap<String, Tensor>,
        steps: u64,
    ) -> Result<(), String> {
        let names = Self::state_names(&self.config);
        for (p, state) in self.params.iter().zip(&mut self.state) {
            for (n, t) in names.iter().zip(state.iter_mut()) {
                let key = format!("{n}/{}", p.name);
                let src = saved
                    .get(&key)
                    .ok_or_else(|| format!("missing optimizer tensor {key}"))?;
                if src.size() != t.size() {
                    return Err(format!(
                        "optimizer tensor {key} has shape {:?}, expected {:?}",
                        src.size(),
                        t.size()
                    ));
                }
                tch::no_grad(|| t.f_copy_(src)).map_err(|e| format!("{key}: {e}"))?;
            }
        }
        let expected = self.params.len() * names.len();
        if saved.len() != expected {
            return Err(format!(
                "optimizer file holds {} tensors, a {} optimizer over this network has {expected}",
                saved.len(),
                self.config.kind()
            ));
        }
        self.steps = steps;
        Ok(())
    }
}
