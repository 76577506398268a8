//! SGD (Nesterov) momentum and AdamW written on tensors, so that their state (momentum
//! buffers, Adam moments, step count) can be saved and restored exactly. tch's own
//! optimisers keep their state inside libtorch where it cannot be read out.
//!
//! The update rules are PyTorch's (`torch.optim.SGD` with `dampening = 0`, and
//! `torch.optim.AdamW`), so the Python reference benchmark runs the same arithmetic.
//! Weight decay applies to convolution and linear weights only (tensors of 2 or more
//! dimensions), not to biases or batch-norm scales, as is usual for residual networks.
//!
//! **Flat buffers.** [`PackedVars`] moves a network's variables into one contiguous
//! buffer (each variable becomes a view into it, as apex's and FSDP's flat parameters
//! do), ordered decayed weights, other trainable variables, then the rest (batch-norm
//! statistics). The optimiser keeps the gradients and its state in flat buffers of the
//! same layout, so zeroing, clipping and every update are a handful of element-wise ops
//! over the whole network instead of several small ops per variable (what PyTorch's
//! multi-tensor `_foreach_*` kernels achieve; tch does not bind those). Element-wise
//! ops on a flat buffer compute exactly what they compute per variable; only the global
//! gradient norm is now one reduction instead of a norm of per-variable norms (the same
//! value up to float rounding). The state files still hold one tensor per variable.

use std::collections::HashMap;

use tch::{Device, Kind, TchError, Tensor};

use crate::config::OptimizerConfig;

/// Every variable starts at a multiple of this many elements (64 bytes for `f32`, the
/// alignment of libtorch's own CPU allocations), so kernels see the same alignment as
/// with separately allocated variables. The gaps stay zero in every buffer.
const ALIGN: i64 = 16;

fn align(n: i64) -> i64 {
    (n + ALIGN - 1) / ALIGN * ALIGN
}

/// What a variable is to the optimiser; the layout orders by this, then by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    /// Trainable, 2 or more dimensions: weight decay applies.
    Decayed,
    /// Trainable, fewer dimensions (biases, batch-norm scales).
    Trainable,
    /// Not trainable (batch-norm running statistics).
    Fixed,
}

/// One variable's place in a flat buffer.
#[derive(Debug)]
struct Slot {
    name: String,
    role: Role,
    offset: i64,
    shape: Vec<i64>,
    /// The variable itself, now a view into the buffer.
    var: Tensor,
}

impl Slot {
    fn numel(&self) -> i64 {
        self.shape.iter().product()
    }

    /// This slot's view into `flat`, a buffer of the same layout.
    fn view(&self, flat: &Tensor) -> Result<Tensor, TchError> {
        flat.f_narrow(0, self.offset, self.numel())?
            .f_view(self.shape.as_slice())
    }
}

/// A network's variables packed into one contiguous buffer (see the module
/// documentation). The variables keep their identity: every handle to them (the
/// `VarStore`, the layers) sees the packed storage.
#[derive(Debug)]
pub struct PackedVars {
    flat: Tensor,
    slots: Vec<Slot>,
}

impl PackedVars {
    /// Packs `vars` (name → tensor, as `VarStore::variables()` gives them; one kind and
    /// device) in the optimiser's layout.
    pub fn new(vars: &HashMap<String, Tensor>) -> Result<PackedVars, TchError> {
        let mut layout: Vec<(Role, String, Vec<i64>)> = vars
            .iter()
            .map(|(name, t)| {
                let role = match (t.requires_grad(), t.dim() >= 2) {
                    (true, true) => Role::Decayed,
                    (true, false) => Role::Trainable,
                    (false, _) => Role::Fixed,
                };
                (role, name.clone(), t.size())
            })
            .collect();
        layout.sort();
        Self::pack(layout, vars)
    }

    /// Packs `vars` in the layout of `self`: the same names and shapes (the variables of
    /// a second network of the same architecture, e.g. the EMA twin).
    pub fn pack_like(&self, vars: &HashMap<String, Tensor>) -> Result<PackedVars, TchError> {
        let layout = self
            .slots
            .iter()
            .map(|s| (s.role, s.name.clone(), s.shape.clone()))
            .collect();
        if vars.len() != self.slots.len() {
            return Err(TchError::Shape(format!(
                "{} variables to pack like {}",
                vars.len(),
                self.slots.len()
            )));
        }
        Self::pack(layout, vars)
    }

    fn pack(
        layout: Vec<(Role, String, Vec<i64>)>,
        vars: &HashMap<String, Tensor>,
    ) -> Result<PackedVars, TchError> {
        let (kind, device) = vars
            .values()
            .next()
            .map_or((Kind::Float, Device::Cpu), |t| (t.kind(), t.device()));
        let mut slots = Vec::with_capacity(layout.len());
        let mut end = 0;
        for (role, name, shape) in layout {
            let var = vars
                .get(&name)
                .ok_or_else(|| TchError::Shape(format!("variable {name} is missing")))?;
            if var.size() != shape || var.kind() != kind || var.device() != device {
                return Err(TchError::Shape(format!(
                    "variable {name} is {:?} {:?} on {:?}, expected {shape:?} {kind:?} on {device:?}",
                    var.size(),
                    var.kind(),
                    var.device()
                )));
            }
            let slot = Slot {
                name,
                role,
                offset: end,
                shape,
                var: var.shallow_clone(),
            };
            end = align(end + slot.numel());
            slots.push(slot);
        }
        let flat = Tensor::f_zeros([end], (kind, device))?;
        for slot in &mut slots {
            let mut view = slot.view(&flat)?;
            tch::no_grad(|| view.f_copy_(&slot.var))?;
            slot.var.f_set_data(&view)?;
        }
        Ok(PackedVars { flat, slots })
    }

    /// The whole buffer.
    pub(crate) fn flat(&self) -> &Tensor {
        &self.flat
    }

    /// Elements of the trainable prefix (decayed, then other trainable variables).
    fn trainable_len(&self) -> i64 {
        self.end_of(Role::Trainable)
    }

    /// Elements of the decayed prefix.
    fn decayed_len(&self) -> i64 {
        self.end_of(Role::Decayed)
    }

    /// Where the slots up to `role` end (the next slot's offset, or the buffer's end).
    fn end_of(&self, role: Role) -> i64 {
        self.slots
            .iter()
            .find(|s| s.role > role)
            .map_or(self.flat.size()[0], |s| s.offset)
    }

    /// The packed variables by name, in layout order.
    pub fn tensors(&self) -> Vec<(String, Tensor)> {
        self.slots
            .iter()
            .map(|s| (s.name.clone(), s.var.shallow_clone()))
            .collect()
    }
}

/// The optimiser: config, the packed variables it updates, their gradients (each
/// variable's `.grad` is a view into `grad`) and one or two flat state buffers.
#[derive(Debug)]
pub struct Optimizer {
    config: OptimizerConfig,
    /// Trainable slots (name, layout position) of the packed variables.
    slots: Vec<Slot>,
    /// The trainable prefix of the packed buffer.
    params: Tensor,
    /// Gradients, same layout as `params`.
    grad: Tensor,
    /// Elements of `params` that decay (a prefix).
    decayed: i64,
    /// SGD: `[momentum]`; AdamW: `[exp_avg, exp_avg_sq]`, each like `params`.
    state: Vec<Tensor>,
    steps: u64,
    /// Whether the gradients were seen to stay in `grad` after a backward pass.
    grads_checked: bool,
}

impl Optimizer {
    /// An optimiser over the trainable variables of `vars`, with zeroed state. Gives
    /// every trainable variable a zero gradient that is a view into one flat buffer
    /// (autograd then accumulates into it in place).
    pub fn new(config: OptimizerConfig, vars: &PackedVars) -> Result<Optimizer, TchError> {
        let len = vars.trainable_len();
        let params = vars.flat().f_narrow(0, 0, len)?;
        let slots: Vec<Slot> = vars
            .slots
            .iter()
            .filter(|s| s.role != Role::Fixed)
            .map(|s| Slot {
                name: s.name.clone(),
                role: s.role,
                offset: s.offset,
                shape: s.shape.clone(),
                var: s.var.shallow_clone(),
            })
            .collect();
        let grad = params.f_zeros_like()?;
        if !slots.is_empty() {
            // A gradient is needed before it can be pointed at the buffer: one backward
            // pass through the sum of all variables creates them.
            tch::with_grad(|| -> Result<(), TchError> {
                let sums = slots
                    .iter()
                    .map(|s| s.var.f_sum(s.var.kind()))
                    .collect::<Result<Vec<_>, _>>()?;
                Tensor::f_stack(&sums, 0)?.f_sum(None::<Kind>)?.f_backward()
            })?;
            for s in &slots {
                s.var.grad().f_set_data(&s.view(&grad)?)?;
            }
        }
        let per = Self::state_names(&config).len();
        let state = (0..per)
            .map(|_| params.f_zeros_like())
            .collect::<Result<_, _>>()?;
        let mut opt = Optimizer {
            config,
            slots,
            params,
            grad,
            decayed: vars.decayed_len(),
            state,
            steps: 0,
            grads_checked: false,
        };
        opt.check_grads()?;
        opt.grads_checked = false;
        Ok(opt)
    }

    fn state_names(config: &OptimizerConfig) -> &'static [&'static str] {
        match config {
            OptimizerConfig::Sgd { .. } => &["momentum"],
            OptimizerConfig::Adamw { .. } => &["exp_avg", "exp_avg_sq"],
        }
    }

    /// Fails unless every trainable variable's gradient is still its view of `grad`
    /// (checked once after the first backward pass: autograd accumulates in place).
    fn check_grads(&mut self) -> Result<(), TchError> {
        if self.grads_checked {
            return Ok(());
        }
        for s in &self.slots {
            let g = s.var.grad();
            if !g.defined() || g.data_ptr() != s.view(&self.grad)?.data_ptr() {
                return Err(TchError::Torch(format!(
                    "the gradient of {} is not in the optimizer's flat gradient buffer",
                    s.name
                )));
            }
        }
        self.grads_checked = true;
        Ok(())
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

    /// Zeroes every parameter's gradient (one op: they share a buffer).
    pub fn zero_grad(&mut self) -> Result<(), TchError> {
        tch::no_grad(|| self.grad.f_zero_().map(drop))
    }

    /// Scales the gradients so their global L2 norm is at most `max_norm` (as
    /// `torch.nn.utils.clip_grad_norm_`, with its 1e-6 epsilon) and returns the norm
    /// before clipping, as a device scalar (no host synchronisation). `max_norm = 0`
    /// measures without clipping.
    pub fn clip_grad_norm(&mut self, max_norm: f64) -> Result<Tensor, TchError> {
        self.check_grads()?;
        tch::no_grad(|| {
            let total = self.grad.f_norm()?;
            if max_norm > 0.0 {
                let coef = total
                    .f_add_scalar(1e-6)?
                    .f_reciprocal()?
                    .f_mul_scalar(max_norm)?
                    .f_clamp_max(1.0)?;
                let _ = self.grad.f_mul_(&coef)?;
            }
            Ok(total)
        })
    }

    /// One update with learning rate `lr` from the current gradients.
    pub fn step(&mut self, lr: f64) -> Result<(), TchError> {
        self.check_grads()?;
        self.steps += 1;
        let t = self.steps as i32;
        let p = &mut self.params;
        let g = &mut self.grad;
        tch::no_grad(|| {
            match self.config {
                OptimizerConfig::Sgd {
                    momentum,
                    nesterov,
                    weight_decay,
                } => {
                    if weight_decay > 0.0 && self.decayed > 0 {
                        // g += wd·p on the decayed prefix (PyTorch: grad.add(param, alpha=wd)).
                        let decay = p.f_narrow(0, 0, self.decayed)?.f_mul_scalar(weight_decay)?;
                        let _ = g.f_narrow(0, 0, self.decayed)?.f_add_(&decay)?;
                    }
                    let buf = &mut self.state[0];
                    // First step: buf = 0·m + g = g exactly, as PyTorch's clone(g).
                    let _ = buf.f_mul_scalar_(momentum)?;
                    let _ = buf.f_add_(g)?;
                    let d = if nesterov {
                        g.f_add_(&buf.f_mul_scalar(momentum)?)?
                    } else {
                        buf.shallow_clone()
                    };
                    let _ = p.f_add_(&d.f_mul_scalar(-lr)?)?;
                }
                OptimizerConfig::Adamw {
                    beta1,
                    beta2,
                    eps,
                    weight_decay,
                } => {
                    if weight_decay > 0.0 && self.decayed > 0 {
                        let _ = p
                            .f_narrow(0, 0, self.decayed)?
                            .f_mul_scalar_(1.0 - lr * weight_decay)?;
                    }
                    let (m, v) = self.state.split_at_mut(1);
                    let (m, v) = (&mut m[0], &mut v[0]);
                    let _ = m.f_lerp_(g, 1.0 - beta1)?;
                    let _ = v.f_mul_scalar_(beta2)?;
                    let _ = v.f_addcmul_(g, &g.f_mul_scalar(1.0 - beta2)?)?;
                    let bc1 = 1.0 - beta1.powi(t);
                    let bc2 = 1.0 - beta2.powi(t);
                    let denom = v.f_sqrt()?.f_div_scalar(bc2.sqrt())?.f_add_scalar(eps)?;
                    let _ = p.f_add_(&m.f_div(&denom)?.f_mul_scalar(-lr / bc1)?)?;
                }
            }
            Ok(())
        })
    }

    /// The state as named tensors (`momentum/<var>`, `exp_avg/<var>`, …), one per
    /// variable and state kind, for saving.
    pub fn state_tensors(&self) -> Result<Vec<(String, Tensor)>, TchError> {
        let names = Self::state_names(&self.config);
        let mut out = Vec::new();
        for s in &self.slots {
            for (n, t) in names.iter().zip(&self.state) {
                out.push((format!("{n}/{}", s.name), s.view(t)?));
            }
        }
        Ok(out)
    }

    /// Restores the state saved by [`Optimizer::state_tensors`] and the step count; the
    /// error names the first missing or mis-shaped tensor.
    pub fn load_state(
        &mut self,
        saved: &HashMap<String, Tensor>,
        steps: u64,
    ) -> Result<(), String> {
        let names = Self::state_names(&self.config);
        for s in &self.slots {
            for (n, t) in names.iter().zip(&self.state) {
                let key = format!("{n}/{}", s.name);
                let src = saved
                    .get(&key)
                    .ok_or_else(|| format!("missing optimizer tensor {key}"))?;
                if src.size() != s.shape {
                    return Err(format!(
                        "optimizer tensor {key} has shape {:?}, expected {:?}",
                        src.size(),
                        s.shape
                    ));
                }
                tch::no_grad(|| s.view(t)?.f_copy_(src)).map_err(|e| format!("{key}: {e}"))?;
            }
        }
        let expected = self.slots.len() * names.len();
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

#[cfg(test)]
mod tests {
    use super::*;
    use tch::nn::{Init, VarStore};

    /// A few variables of each role, with gradients from a loss that uses all of them.
    fn store() -> VarStore {
        tch::manual_seed(3);
        let vs = VarStore::new(Device::Cpu);
        let root = vs.root();
        let _ = root.var(
            "a_weight",
            &[3, 5],
            Init::Randn {
                mean: 0.0,
                stdev: 1.0,
            },
        );
        let _ = root.var(
            "b_bias",
            &[5],
            Init::Randn {
                mean: 0.0,
                stdev: 1.0,
            },
        );
        let _ = root.var(
            "c_conv",
            &[2, 3, 3, 3],
            Init::Randn {
                mean: 0.0,
                stdev: 1.0,
            },
        );
        let _ = root.zeros_no_train("d_running", &[7]);
        vs
    }

    fn backward(vars: &HashMap<String, Tensor>, seed: i64) {
        tch::manual_seed(seed);
        let x = Tensor::randn([4, 3], (Kind::Float, Device::Cpu));
        let h = x.matmul(&vars["a_weight"]) + &vars["b_bias"];
        let loss =
            h.tanh().sum(None::<Kind>) + vars["c_conv"].pow_tensor_scalar(3).sum(None::<Kind>);
        loss.backward();
    }

    /// The per-variable update rules the flat optimiser replaced.
    fn reference_step(
        config: &OptimizerConfig,
        params: &mut [(Tensor, Tensor, bool)],
        state: &mut [Vec<Tensor>],
        lr: f64,
        t: i32,
    ) {
        for ((p, g, decay), st) in params.iter_mut().zip(state) {
            match *config {
                OptimizerConfig::Sgd {
                    momentum,
                    nesterov,
                    weight_decay,
                } => {
                    let g = if *decay {
                        g.shallow_clone() + &*p * weight_decay
                    } else {
                        g.shallow_clone()
                    };
                    st[0] = &st[0] * momentum + &g;
                    let d = if nesterov {
                        g + &st[0] * momentum
                    } else {
                        st[0].shallow_clone()
                    };
                    *p = &*p + d * (-lr);
                }
                OptimizerConfig::Adamw {
                    beta1,
                    beta2,
                    eps,
                    weight_decay,
                } => {
                    if *decay {
                        *p = &*p * (1.0 - lr * weight_decay);
                    }
                    st[0] = st[0].lerp(g, 1.0 - beta1);
                    st[1] = (&st[1] * beta2).addcmul(g, &(&*g * (1.0 - beta2)));
                    let bc1 = 1.0 - beta1.powi(t);
                    let bc2 = 1.0 - beta2.powi(t);
                    let denom = st[1].sqrt() / bc2.sqrt() + eps;
                    *p = &*p + (&st[0] / denom) * (-lr / bc1);
                }
            }
        }
    }

    #[test]
    fn flat_updates_match_the_per_variable_rules() {
        let adamw = OptimizerConfig::Adamw {
            beta1: 0.9,
            beta2: 0.99,
            eps: 1e-8,
            weight_decay: 0.1,
        };
        let sgd = OptimizerConfig::Sgd {
            momentum: 0.9,
            nesterov: true,
            weight_decay: 0.01,
        };
        for config in [sgd, adamw] {
            let vs = store();
            let vars = vs.variables();
            let packed = PackedVars::new(&vars).unwrap();
            let mut opt = Optimizer::new(config.clone(), &packed).unwrap();
            let names = ["a_weight", "b_bias", "c_conv"];
            let mut reference: Vec<(Tensor, Tensor, bool)> = names
                .iter()
                .map(|n| (vars[*n].detach().copy(), Tensor::new(), vars[*n].dim() >= 2))
                .collect();
            let per = Optimizer::state_names(&config).len();
            let mut state: Vec<Vec<Tensor>> = reference
                .iter()
                .map(|(p, _, _)| (0..per).map(|_| p.zeros_like()).collect())
                .collect();
            for t in 1..=3 {
                opt.zero_grad().unwrap();
                backward(&vars, 10 + t as i64);
                // Clipped in the flat buffer; the reference takes the clipped gradients.
                let _ = opt.clip_grad_norm(1.0).unwrap();
                for ((_, g, _), n) in reference.iter_mut().zip(names) {
                    *g = vars[n].grad().copy();
                }
                opt.step(0.1).unwrap();
                tch::no_grad(|| reference_step(&config, &mut reference, &mut state, 0.1, t));
                for ((p, _, _), n) in reference.iter().zip(names) {
                    assert!(p.equal(&vars[n]), "{} step {t}: {n} differs", config.kind());
                }
            }
            // The fixed variable is packed but untouched; the state files name each tensor.
            assert!(vars["d_running"].equal(&Tensor::zeros([7], (Kind::Float, Device::Cpu))));
            let saved = opt.state_tensors().unwrap();
            assert_eq!(saved.len(), 3 * per);
            let by_name: HashMap<String, Tensor> =
                saved.iter().map(|(n, t)| (n.clone(), t.copy())).collect();
            let mut fresh = Optimizer::new(
                config.clone(),
                &PackedVars::new(&store().variables()).unwrap(),
            )
            .unwrap();
            fresh.load_state(&by_name, 3).unwrap();
            for ((a, x), (b, y)) in saved.iter().zip(fresh.state_tensors().unwrap()) {
                assert_eq!(a, &b);
                assert!(x.equal(&y));
            }
        }
    }

    #[test]
    fn clipping_scales_the_gradients_to_the_global_norm() {
        let vs = store();
        let vars = vs.variables();
        let packed = PackedVars::new(&vars).unwrap();
        let mut opt = Optimizer::new(OptimizerConfig::default(), &packed).unwrap();
        opt.zero_grad().unwrap();
        backward(&vars, 5);
        let grads: Vec<Tensor> = ["a_weight", "b_bias", "c_conv"]
            .iter()
            .map(|n| vars[*n].grad().copy())
            .collect();
        let norms: Vec<Tensor> = grads.iter().map(|g| g.norm()).collect();
        let expected = Tensor::stack(&norms, 0).norm().double_value(&[]);
        let total = opt.clip_grad_norm(0.5).unwrap().double_value(&[]);
        assert!(
            (total - expected).abs() <= 1e-5 * expected,
            "{total} vs {expected}"
        );
        let after: Vec<Tensor> = ["a_weight", "b_bias", "c_conv"]
            .iter()
            .map(|n| vars[*n].grad().norm())
            .collect();
        let clipped = Tensor::stack(&after, 0).norm().double_value(&[]);
        assert!((clipped - 0.5).abs() < 1e-5, "{clipped}");
    }
}
