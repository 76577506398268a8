//! Training batches: borrowed host buffers in, device tensors out.
//!
//! [`HostBatch`] borrows flat row-major slices, the layout `xq-data` assembles its
//! batches in, so a batch crosses into torch with one copy per buffer and no reshaping
//! on the host.

use tch::{Device, Kind, Tensor};
use xq_core::hash::{GOLDEN_GAMMA, SplitMix64};
use xq_nn::encode::{BOARD_FILES, BOARD_RANKS, PLANE_SIZE};
use xq_nn::policy::POLICY_SIZE;

use crate::error::TrainError;

/// One batch of `len` samples in host memory.
#[derive(Debug, Clone, Copy)]
pub struct HostBatch<'a> {
    /// Number of samples.
    pub len: usize,
    /// Input planes, `len × planes × 10 × 9`.
    pub inputs: &'a [f32],
    /// Policy targets (visit distribution over the index), `len × 2086`, rows summing to 1
    /// over legal moves (or all zero: no policy target for that sample).
    pub policy: &'a [f32],
    /// Legal moves as 0/1, `len × 2086`; the policy softmax runs over these only.
    pub legal: &'a [u8],
    /// Value targets (win, draw, loss for the side to move), `len × 3`.
    pub value: &'a [f32],
    /// 1 where the sample has a value target, 0 where it has none (a game record without
    /// result): the value loss and accuracy skip those samples. `len` entries.
    pub has_value: &'a [f32],
    /// Per-sample loss weight, `len` entries.
    pub weight: &'a [f32],
    /// The search-time value the value loss is blended with (win, draw, loss for the
    /// side to move), `len × 3`, or empty: the value loss blends it in at its `leaf_weight`.
    pub leaf_wdl: &'a [f32],
}

impl HostBatch<'_> {
    /// Input planes per sample implied by the input buffer's length.
    pub fn planes(&self) -> Result<usize, TrainError> {
        let per = self
            .inputs
            .len()
            .checked_div(self.len)
            .ok_or_else(|| TrainError::BadBatch("empty batch".into()))?;
        if per * self.len != self.inputs.len() || per % PLANE_SIZE != 0 {
            return Err(TrainError::BadBatch(format!(
                "inputs hold {} floats, not {} samples of whole 10×9 planes",
                self.inputs.len(),
                self.len
            )));
        }
        Ok(per / PLANE_SIZE)
    }

    /// Checks every buffer's length against `len` and `planes`.
    pub fn validate(&self, planes: usize) -> Result<(), TrainError> {
        let n = self.len;
        if n == 0 {
            return Err(TrainError::BadBatch("empty batch".into()));
        }
        let checks = [
            ("inputs", self.inputs.len(), n * planes * PLANE_SIZE),
            ("policy", self.policy.len(), n * POLICY_SIZE),
            ("legal", self.legal.len(), n * POLICY_SIZE),
            ("value", self.value.len(), n * 3),
            ("has_value", self.has_value.len(), n),
            ("weight", self.weight.len(), n),
        ];
        if !self.leaf_wdl.is_empty() && self.leaf_wdl.len() != n * 3 {
            return Err(TrainError::BadBatch(format!(
                "leaf_wdl holds {} values, {n} samples need {} or none",
                self.leaf_wdl.len(),
                n * 3
            )));
        }
        for (name, got, want) in checks {
            if got != want {
                return Err(TrainError::BadBatch(format!(
                    "{name} holds {got} values, {n} samples need {want}"
                )));
            }
        }
        Ok(())
    }

    /// Copies the batch to `device`.
    pub fn to_device(&self, planes: usize, device: Device) -> Result<DeviceBatch, TrainError> {
        self.validate(planes)?;
        let n = self.len as i64;
        let p = POLICY_SIZE as i64;
        let up = |t: Tensor| -> Result<Tensor, TrainError> {
            Ok(if device == Device::Cpu {
                t
            } else {
                t.f_to_device(device)?
            })
        };
        Ok(DeviceBatch {
            inputs: up(Tensor::f_from_slice(self.inputs)?.f_view([
                n,
                planes as i64,
                BOARD_RANKS as i64,
                BOARD_FILES as i64,
            ])?)?,
            policy: up(Tensor::f_from_slice(self.policy)?.f_view([n, p])?)?,
            legal: up(Tensor::f_from_slice(self.legal)?.f_view([n, p])?)?.f_to_kind(Kind::Bool)?,
            value: up(Tensor::f_from_slice(self.value)?.f_view([n, 3])?)?,
            has_value: up(Tensor::f_from_slice(self.has_value)?)?,
            weight: up(Tensor::f_from_slice(self.weight)?)?,
            leaf_wdl: if self.leaf_wdl.is_empty() {
                None
            } else {
                Some(up(Tensor::f_from_slice(self.leaf_wdl)?.f_view([n, 3])?)?)
            },
        })
    }
}

impl<'a> HostBatch<'a> {
    /// Borrows the buffers of an `xq_data` batch (no copy). Fails only if an array is
    /// not in standard (contiguous row-major) layout, which `xq_data` never produces.
    pub fn from_data(batch: &'a xq_data::Batch) -> Result<HostBatch<'a>, TrainError> {
        fn flat<'b, T, D: ndarray::Dimension>(
            name: &str,
            a: &'b ndarray::Array<T, D>,
        ) -> Result<&'b [T], TrainError> {
            a.as_slice()
                .ok_or_else(|| TrainError::BadBatch(format!("{name} is not contiguous")))
        }
        Ok(HostBatch {
            len: batch.len(),
            inputs: flat("inputs", &batch.inputs)?,
            policy: flat("policy", &batch.policy)?,
            legal: flat("legal", &batch.legal)?,
            value: flat("value", &batch.value)?,
            has_value: flat("has_value", &batch.has_value)?,
            weight: flat("weight", &batch.weight)?,
            leaf_wdl: flat("leaf_wdl", &batch.leaf_wdl)?,
        })
    }
}

/// A batch on the training device.
#[derive(Debug)]
pub struct DeviceBatch {
    pub inputs: Tensor,
    pub policy: Tensor,
    /// Bool mask.
    pub legal: Tensor,
    pub value: Tensor,
    pub has_value: Tensor,
    pub weight: Tensor,
    /// `len × 3`, when the host batch had one.
    pub leaf_wdl: Option<Tensor>,
}

impl DeviceBatch {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.weight.size()[0] as usize
    }

    /// Whether the batch holds no samples (never true for a validated batch).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An owned host batch, for tests, benchmarks and callers without their own buffers.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedBatch {
    pub len: usize,
    pub inputs: Vec<f32>,
    pub policy: Vec<f32>,
    pub legal: Vec<u8>,
    pub value: Vec<f32>,
    pub has_value: Vec<f32>,
    pub weight: Vec<f32>,
    /// `len × 3` or empty.
    pub leaf_wdl: Vec<f32>,
}

impl OwnedBatch {
    /// Borrows the buffers as a [`HostBatch`].
    pub fn view(&self) -> HostBatch<'_> {
        HostBatch {
            len: self.len,
            inputs: &self.inputs,
            policy: &self.policy,
            legal: &self.legal,
            value: &self.value,
            has_value: &self.has_value,
            weight: &self.weight,
            leaf_wdl: &self.leaf_wdl,
        }
    }

    /// A deterministic synthetic batch (for tests and benchmarks): sparse random 0/1
    /// input planes, 5–40 random legal moves per sample with a random visit
    /// distribution over them, and a random one-hot result. Not chess, but learnable:
    /// the same seed gives the same batch.
    pub fn synthetic(len: usize, planes: usize, seed: u64) -> OwnedBatch {
        let mut rng = SplitMix64::new(seed ^ GOLDEN_GAMMA);
        let mut b = OwnedBatch {
            len,
            inputs: vec![0.0; len * planes * PLANE_SIZE],
            policy: vec![0.0; len * POLICY_SIZE],
            legal: vec![0; len * POLICY_SIZE],
            value: vec![0.0; len * 3],
            has_value: vec![1.0; len],
            weight: vec![1.0; len],
            leaf_wdl: Vec::new(),
        };
        for i in 0..len {
            for x in &mut b.inputs[i * planes * PLANE_SIZE..(i + 1) * planes * PLANE_SIZE] {
                *x = f32::from(rng.below(10) == 0);
            }
            let moves = 5 + rng.below(36) as usize;
            let row = i * POLICY_SIZE;
            let mut total = 0.0;
            for _ in 0..moves {
                let m = rng.below(POLICY_SIZE as u64) as usize;
                b.legal[row + m] = 1;
                let v = (1 + rng.below(100)) as f32;
                b.policy[row + m] += v;
                total += v;
            }
            for p in &mut b.policy[row..row + POLICY_SIZE] {
                *p /= total;
            }
            b.value[i * 3 + rng.below(3) as usize] = 1.0;
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mis_sized_buffers_are_refused_naming_the_buffer() {
        let b = OwnedBatch::synthetic(4, 3, 1);
        assert!(b.view().validate(3).is_ok());
        let mut short = b.clone();
        short.weight.pop();
        let err = short.view().validate(3).unwrap_err().to_string();
        assert!(err.contains("weight"), "{err}");
        let err = b.view().validate(4).unwrap_err().to_string();
        assert!(err.contains("inputs"), "{err}");
        assert_eq!(b.view().planes().unwrap(), 3);
    }

    #[test]
    fn synthetic_batches_are_reproducible_and_well_formed() {
        let a = OwnedBatch::synthetic(8, 2, 7);
        assert_eq!(a, OwnedBatch::synthetic(8, 2, 7));
        assert_ne!(a, OwnedBatch::synthetic(8, 2, 8));
        for i in 0..8 {
            let row = &a.policy[i * POLICY_SIZE..(i + 1) * POLICY_SIZE];
            let sum: f32 = row.iter().sum();
            assert!((sum - 1.0).abs() < 1e-4);
            for (j, &p) in row.iter().enumerate() {
                assert!(p == 0.0 || a.legal[i * POLICY_SIZE + j] == 1);
            }
        }
        let d = a.view().to_device(2, Device::Cpu).unwrap();
        assert_eq!(d.inputs.size(), [8, 2, 10, 9]);
        assert_eq!(d.legal.kind(), Kind::Bool);
    }

    /// Benchmarks and tests compare runs over synthetic batches: pinned.
    #[test]
    fn synthetic_batches_are_pinned() {
        let b = OwnedBatch::synthetic(1, 1, 1);
        let ones: Vec<usize> = (0..PLANE_SIZE).filter(|&j| b.inputs[j] == 1.0).collect();
        assert_eq!(ones.len(), 7);
        assert_eq!(ones[..5], [7, 22, 27, 43, 59]);
        let legal: Vec<usize> = (0..POLICY_SIZE).filter(|&m| b.legal[m] == 1).collect();
        assert_eq!(legal.len(), 40);
        assert_eq!(legal[..5], [60, 61, 122, 125, 137]);
        assert_eq!(legal[35..], [1973, 2018, 2024, 2035, 2062]);
        assert_eq!(b.value, [0.0, 0.0, 1.0]);
    }
}
