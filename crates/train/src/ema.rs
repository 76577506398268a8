//! Exponential moving average of the weights, the network that gets exported and
//! evaluated: it is smoother than the live weights of a noisy self-play optimisation
//! (the role of KataGo's and lc0's SWA).

use std::collections::HashMap;

use tch::{TchError, Tensor};

use crate::optim::PackedVars;

/// Shadow copies of every variable (trainable weights and batch-norm running statistics
/// alike, so the averaged network is self-consistent). Live and shadow variables are
/// packed in the same layout ([`PackedVars`]), so an update is one op over the whole
/// network.
#[derive(Debug)]
pub struct Ema {
    decay: f64,
    live: Tensor,
    shadow: PackedVars,
    updates: u64,
}

impl Ema {
    /// Averages the `live` variables into `shadow` (same names and shapes: the variables
    /// of a second network of the same architecture, which then *is* the EMA network;
    /// they are packed like `live`), starting from the current live values.
    pub fn new(
        decay: f64,
        live: &PackedVars,
        shadow: &HashMap<String, Tensor>,
    ) -> Result<Ema, TchError> {
        let shadow = live
            .pack_like(shadow)
            .map_err(|e| TchError::Shape(format!("EMA network: {e}")))?;
        let live = live.flat().shallow_clone();
        tch::no_grad(|| shadow.flat().shallow_clone().f_copy_(&live))?;
        Ok(Ema {
            decay,
            live,
            shadow,
            updates: 0,
        })
    }

    /// Updates taken (the warmup of the effective decay depends on it).
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// Sets the decay (a resumed run may change it).
    pub fn set_decay(&mut self, decay: f64) {
        self.decay = decay;
    }

    /// Moves the average towards the live values. The effective decay starts low,
    /// `min(decay, (1 + n) / (10 + n))`, so the average forgets the random
    /// initialisation quickly instead of trailing it for thousands of steps.
    pub fn update(&mut self) -> Result<(), TchError> {
        let n = self.updates as f64;
        self.updates += 1;
        let d = self.decay.min((1.0 + n) / (10.0 + n));
        let mut shadow = self.shadow.flat().shallow_clone();
        tch::no_grad(|| {
            if d == 0.0 {
                shadow.f_copy_(&self.live)
            } else {
                shadow.f_lerp_(&self.live, 1.0 - d).map(drop)
            }
        })
    }

    /// The averaged variables, by name (for saving).
    pub fn tensors(&self) -> Vec<(String, Tensor)> {
        self.shadow.tensors()
    }

    /// Restores saved averages; the error names the first missing or mis-shaped tensor.
    pub fn load(&mut self, saved: &HashMap<String, Tensor>, updates: u64) -> Result<(), String> {
        for (name, mut shadow) in self.shadow.tensors() {
            let src = saved
                .get(&name)
                .ok_or_else(|| format!("missing EMA tensor {name}"))?;
            if src.size() != shadow.size() {
                return Err(format!(
                    "EMA tensor {name} has shape {:?}, expected {:?}",
                    src.size(),
                    shadow.size()
                ));
            }
            tch::no_grad(|| shadow.f_copy_(src)).map_err(|e| format!("{name}: {e}"))?;
        }
        self.updates = updates;
        Ok(())
    }
}
