//! The training loss: policy cross-entropy over legal moves plus WDL value
//! cross-entropy, each a weighted mean over the batch.

use tch::{Kind, TchError, Tensor};

use crate::batch::DeviceBatch;

/// Logit given to illegal moves before the softmax: far below any real logit, yet finite
/// so that `0 × log p` stays 0 instead of NaN.
const ILLEGAL_LOGIT: f64 = -1e9;

/// Floor of a blended value probability before its log: a leaf value that rules an
/// outcome out, at weight 1, would otherwise give `0 × log 0`.
const MIN_PROBABILITY: f64 = 1e-7;

/// The parts of one batch's loss. `total` carries gradients; the rest are detached
/// scalars for logging.
#[derive(Debug)]
pub struct Loss {
    /// `policy_weight × policy + value_weight × value`.
    pub total: Tensor,
    /// Weighted mean cross-entropy between the visit distribution and the policy softmax
    /// over legal moves.
    pub policy: Tensor,
    /// Weighted mean cross-entropy between the WDL target and the value softmax, over the
    /// samples that have a value target.
    pub value: Tensor,
    /// Weighted share of samples whose most-visited move is the policy's top legal move.
    pub policy_accuracy: Tensor,
    /// Weighted share of samples (with a value target) whose most likely outcome the value
    /// head picks.
    pub value_accuracy: Tensor,
}

/// How [`loss`] weighs its parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossWeights {
    /// The policy cross-entropy's weight in the total.
    pub policy: f64,
    /// The value cross-entropy's weight in the total.
    pub value: f64,
    /// The leaf value's share in the value loss's prediction (see [`loss`]).
    pub leaf: f64,
}

impl LossWeights {
    /// Policy and value at weight 1, the network's value alone.
    pub const PLAIN: LossWeights = LossWeights {
        policy: 1.0,
        value: 1.0,
        leaf: 0.0,
    };
}

/// Log-probabilities over the legal moves only (illegal entries get ~-1e9).
pub fn masked_log_softmax(policy_logits: &Tensor, legal: &Tensor) -> Result<Tensor, TchError> {
    policy_logits
        .f_masked_fill(&legal.f_logical_not()?, ILLEGAL_LOGIT)?
        .f_log_softmax(1, Kind::Float)
}

/// Computes the loss of `(policy_logits, value_logits)` (f32, as [`crate::Net::forward`]
/// returns them) against `batch`.
///
/// With `leaf_weight` above 0 and a batch that carries `leaf_wdl`, the value loss is the
/// cross-entropy of the target against `(1 − leaf_weight) · softmax(value_logits) +
/// leaf_weight · leaf_wdl`: the win/draw/loss a search with leaf quiescence
/// `leaf_weight` uses at the position. The network's value is then trained for what the
/// leaf value misses, not to repeat it. The value accuracy is that of the same blend.
/// The reported policy and value losses are unweighted.
pub fn loss(
    policy_logits: &Tensor,
    value_logits: &Tensor,
    batch: &DeviceBatch,
    weights: LossWeights,
) -> Result<Loss, TchError> {
    let LossWeights {
        policy: policy_weight,
        value: value_weight,
        leaf: leaf_weight,
    } = weights;
    let w = &batch.weight;
    // Targets outside the legal set would meet a -1e9 log-probability; drop them.
    let target = batch.policy.f_mul(&batch.legal.f_to_kind(Kind::Float)?)?;
    let logp = masked_log_softmax(policy_logits, &batch.legal)?;
    let policy_ce = target
        .f_mul(&logp)?
        .f_sum_dim_intlist(1, false, Kind::Float)?
        .f_neg()?;
    let has_policy = target
        .f_sum_dim_intlist(1, false, Kind::Float)?
        .f_gt(0.0)?
        .f_to_kind(Kind::Float)?;
    let wp = w.f_mul(&has_policy)?;
    let policy = weighted_mean(&policy_ce, &wp)?;

    let logv = match &batch.leaf_wdl {
        Some(leaf) if leaf_weight > 0.0 => value_logits
            .f_softmax(1, Kind::Float)?
            .f_mul_scalar(1.0 - leaf_weight)?
            .f_add(&leaf.f_mul_scalar(leaf_weight)?)?
            .f_clamp_min(MIN_PROBABILITY)?
            .f_log()?,
        _ => value_logits.f_log_softmax(1, Kind::Float)?,
    };
    let value_ce = batch
        .value
        .f_mul(&logv)?
        .f_sum_dim_intlist(1, false, Kind::Float)?
        .f_neg()?;
    let wv = w.f_mul(&batch.has_value)?;
    let value = weighted_mean(&value_ce, &wv)?;
    let total = policy
        .f_mul_scalar(policy_weight)?
        .f_add(&value.f_mul_scalar(value_weight)?)?;

    let (policy_accuracy, value_accuracy) = tch::no_grad(|| -> Result<_, TchError> {
        let hit = logp
            .f_argmax(1, false)?
            .f_eq_tensor(&target.f_argmax(1, false)?)?;
        let pa = weighted_mean(&hit.f_to_kind(Kind::Float)?, &wp)?;
        let hit = logv
            .f_argmax(1, false)?
            .f_eq_tensor(&batch.value.f_argmax(1, false)?)?;
        let va = weighted_mean(&hit.f_to_kind(Kind::Float)?, &wv)?;
        Ok((pa, va))
    })?;
    Ok(Loss {
        total,
        policy: policy.f_detach()?,
        value: value.f_detach()?,
        policy_accuracy,
        value_accuracy,
    })
}

/// The weighted mean over the batch of KL(anchor ‖ policy) over the legal moves: how far
/// the policy has moved from an anchor network's (the pre-trained one, `[train]
/// policy_anchor`). The anchor's logits carry no gradient, so the term pulls the policy
/// toward the anchor's and never the other way; its gradient is that of the
/// cross-entropy to the anchor's policy, and the anchor's entropy only shifts the value
/// so that it reads 0 where the two agree.
pub fn policy_kl(
    policy_logits: &Tensor,
    anchor_logits: &Tensor,
    batch: &DeviceBatch,
) -> Result<Tensor, TchError> {
    let logp = masked_log_softmax(policy_logits, &batch.legal)?;
    let logq = masked_log_softmax(&anchor_logits.f_detach()?, &batch.legal)?;
    // Illegal moves: q = 0 against a finite difference of two masked log-probabilities.
    let kl = logq
        .f_exp()?
        .f_mul(&logq.f_sub(&logp)?)?
        .f_sum_dim_intlist(1, false, Kind::Float)?;
    weighted_mean(&kl, &batch.weight)
}

/// `Σ w·x / Σ w`, or 0 when every weight is 0 (no sample carries this target).
fn weighted_mean(x: &Tensor, w: &Tensor) -> Result<Tensor, TchError> {
    let den = w.f_sum(Kind::Float)?.f_clamp_min(1e-12)?;
    x.f_mul(w)?.f_sum(Kind::Float)?.f_div(&den)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::OwnedBatch;
    use tch::Device;
    use xq_nn::policy::POLICY_SIZE;

    #[test]
    fn loss_is_the_cross_entropy_over_legal_moves_only() {
        // One sample, two legal moves with targets 0.75 / 0.25; logits 0 everywhere
        // except a huge one on an illegal move, which must not matter.
        let mut b = OwnedBatch::synthetic(1, 1, 1);
        b.policy.fill(0.0);
        b.legal.fill(0);
        b.legal[10] = 1;
        b.legal[20] = 1;
        b.policy[10] = 0.75;
        b.policy[20] = 0.25;
        b.value = vec![1.0, 0.0, 0.0];
        let d = b.view().to_device(1, Device::Cpu).unwrap();
        let mut logits = vec![0.0f32; POLICY_SIZE];
        logits[30] = 50.0;
        let pl = Tensor::from_slice(&logits).view([1, -1]);
        let vl = Tensor::from_slice(&[0.0f32, 0.0, 0.0]).view([1, 3]);
        let l = loss(&pl, &vl, &d, LossWeights::PLAIN).unwrap();
        let p = f64::try_from(&l.policy).unwrap();
        let v = f64::try_from(&l.value).unwrap();
        assert!((p - 2f64.ln()).abs() < 1e-6, "policy loss {p}");
        assert!((v - 3f64.ln()).abs() < 1e-6, "value loss {v}");
        assert!((f64::try_from(&l.total).unwrap() - (p + v)).abs() < 1e-6);
        let weights = LossWeights {
            policy: 0.5,
            value: 2.0,
            leaf: 0.0,
        };
        let l = loss(&pl, &vl, &d, weights).unwrap();
        assert!((f64::try_from(&l.total).unwrap() - (0.5 * p + 2.0 * v)).abs() < 1e-6);
        assert!((f64::try_from(&l.policy).unwrap() - p).abs() < 1e-6);
    }

    #[test]
    fn samples_without_a_value_target_add_no_value_loss() {
        let mut b = OwnedBatch::synthetic(2, 1, 2);
        b.has_value = vec![1.0, 0.0];
        b.value = vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0];
        let d = b.view().to_device(1, Device::Cpu).unwrap();
        let pl = Tensor::zeros([2, POLICY_SIZE as i64], (Kind::Float, Device::Cpu));
        // The first sample predicts its win; the second (no target) predicts the wrong result.
        let vl = Tensor::from_slice(&[9.0f32, 0.0, 0.0, 9.0, 0.0, 0.0]).view([2, 3]);
        let l = loss(&pl, &vl, &d, LossWeights::PLAIN).unwrap();
        assert!(f64::try_from(&l.value).unwrap() < 1e-3);
        assert_eq!(f64::try_from(&l.value_accuracy).unwrap(), 1.0);
    }

    #[test]
    fn a_leaf_weight_trains_the_blend_of_network_and_leaf_value() {
        // Target: a draw. The network says win/draw/loss 1/3 each; the leaf value says
        // a sure draw. At weight 0.75 the blend's draw probability is
        // 0.25 × 1/3 + 0.75 = 5/6; without the leaf value (weight 0, or a batch
        // without leaf_wdl) it is 1/3.
        let mut b = OwnedBatch::synthetic(1, 1, 3);
        b.value = vec![0.0, 1.0, 0.0];
        let pl = Tensor::zeros([1, POLICY_SIZE as i64], (Kind::Float, Device::Cpu));
        let vl = Tensor::from_slice(&[0.0f32, 0.0, 0.0]).view([1, 3]);
        let plain = b.view().to_device(1, Device::Cpu).unwrap();
        b.leaf_wdl = vec![0.0, 1.0, 0.0];
        let leafy = b.view().to_device(1, Device::Cpu).unwrap();
        let leaf = |leaf| LossWeights {
            leaf,
            ..LossWeights::PLAIN
        };
        let value = |d: &DeviceBatch, w: f64| {
            f64::try_from(&loss(&pl, &vl, d, leaf(w)).unwrap().value).unwrap()
        };
        let third = (1.0f64 / 3.0).ln().abs();
        assert!((value(&plain, 0.75) - third).abs() < 1e-6);
        assert!((value(&leafy, 0.0) - third).abs() < 1e-6);
        assert!((value(&leafy, 0.75) - (5.0f64 / 6.0).ln().abs()).abs() < 1e-6);

        // At weight 1 the network's value has no say, so its logits get no gradient.
        let vl = vl.set_requires_grad(true);
        loss(&pl, &vl, &leafy, leaf(1.0)).unwrap().total.backward();
        assert_eq!(vl.grad().abs().sum(Kind::Float).double_value(&[]), 0.0);
    }

    #[test]
    fn the_anchor_term_is_the_kl_over_legal_moves_and_trains_the_policy_only() {
        // Two legal moves; the anchor says 3:1, the policy 1:1; an illegal move with a
        // huge logit on either side must not count.
        let mut b = OwnedBatch::synthetic(1, 1, 4);
        b.legal.fill(0);
        b.legal[10] = 1;
        b.legal[20] = 1;
        let d = b.view().to_device(1, Device::Cpu).unwrap();
        let mut anchor = vec![0.0f32; POLICY_SIZE];
        anchor[10] = 3f32.ln();
        anchor[30] = 50.0;
        let mut policy = vec![0.0f32; POLICY_SIZE];
        policy[40] = 50.0;
        let al = Tensor::from_slice(&anchor)
            .view([1, -1])
            .set_requires_grad(true);
        let pl = Tensor::from_slice(&policy)
            .view([1, -1])
            .set_requires_grad(true);
        let kl = policy_kl(&pl, &al, &d).unwrap();
        let want = 0.75 * (0.75f64 / 0.5).ln() + 0.25 * (0.25f64 / 0.5).ln();
        let got = f64::try_from(&kl).unwrap();
        assert!((got - want).abs() < 1e-6, "KL {got}, want {want}");
        kl.backward();
        assert!(pl.grad().abs().sum(Kind::Float).double_value(&[]) > 0.0);
        assert!(!al.grad().defined() || al.grad().abs().sum(Kind::Float).double_value(&[]) == 0.0);
        // Equal policies: nothing to pull.
        let same = policy_kl(&al.detach(), &al.detach(), &d).unwrap();
        assert!(f64::try_from(&same).unwrap().abs() < 1e-7);
    }
}
