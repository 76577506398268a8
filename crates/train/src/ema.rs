//! Exponential moving average of the weights, the network that gets exported and
//! evaluated: it is smoother than the live weights of a noisy self-play optimisation
//! (the role of KataGo's and lc0's SWA).

use std::collections::HashMap;

use tch::{TchError, Tensor};

/// Shadow copies of every variable (trainable weights and batch-norm running statistics
/// alike, so the averaged network is self-consistent), sorted by name.
#[derive(Debug)]
pub struct Ema {
    decay: f64,
    entries: Vec<(String, Tensor, Tensor)>,
    updates: u64,
}

impl Ema {
    /// Averages the `live` variables into `shadow` (same names and shapes: the variables
    /// of a second network of the same architecture, which then *is* the EMA network),
    /// starting from the current live values.
    pub fn new(
        decay: f64,
        live: &HashMap<String, Tensor>,
        shadow: &HashMap<String, Tensor>,
    ) -> Result<Ema, TchError> {
        let mut entries = Vec::with_capacity(live.len());
        for (name, l) in live {
            let mut s = shadow
                .get(name)
                .ok_or_else(|| TchError::Shape(format!("EMA network lacks variable {name}")))?
                .shallow_clone();
            tch::no_grad(|| s.f_copy_(l))?;
            entries.push((name.clone(), l.shallow_clone(), s));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Ema {
            decay,
            entries,
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
        tch::no_grad(|| {
            for (_, live, shadow) in &mut self.entries {
                if d == 0.0 {
                    shadow.f_copy_(live)?;
                } else {
                    let _ = shadow.f_lerp_(live, 1.0 - d)?;
                }
            }
            Ok(())
        })
    }

    /// The averaged variables, by name (for saving).
    pub fn tensors(&self) -> Vec<(String, Tensor)> {
        self.entries
            .iter()
            .map(|(n, _, s)| (n.clone(), s.shallow_clone()))
            .collect()
    }

    /// Restores saved averages; the error names the first missing or mis-shaped tensor.
    pub fn load(&mut self, saved: &HashMap<String, Tensor>, updates: u64) -> Result<(), String> {
        for (name, _, shadow) in &mut self.entries {
            let src = saved
                .get(name)
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
