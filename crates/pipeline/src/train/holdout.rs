//! Held-out evaluation: the PGN records' held-out split, the held-out self-play games,
//! and the pre-training plateau rule that watches the former.

use anyhow::{Context, Result, bail};
use xq_data::{Batch, Window, assemble_range};
use xq_run::events::{Event, HoldoutEvent, HoldoutSplit};
use xq_train::{HostBatch, Trainer};

use super::{HoldoutStats, TrainSession};
use crate::config::train::TrainSection;

impl TrainSession {
    /// The pre-training plateau rule at `step` of pre-training: a held-out evaluation
    /// every `eval_every` steps when `patience` is set, the rate lowered on a plateau,
    /// and pre-training ended here after `patience` of them. Returns whether it
    /// evaluated.
    pub(super) fn plateau_step(&mut self, step: u64) -> Result<bool> {
        let Some(p) = self.cfg.data.pretrain.as_ref() else {
            return Ok(false);
        };
        let (patience, lr_drop, every, value_weight) =
            (p.patience, p.lr_drop, p.eval_every, p.value_weight);
        if patience == 0
            || every == 0
            || !step.is_multiple_of(every)
            || step >= self.saved.pretrain_steps
            || self.ensure_supervised()?.held_out.is_empty()
        {
            return Ok(false);
        }
        let h = self.holdout()?;
        let end = self
            .saved
            .plateau
            .observe(h.plateau_loss(value_weight), patience, lr_drop);
        self.trainer.set_lr_scale(self.saved.plateau.lr_scale);
        if end {
            self.obs.log(&format!(
                "pre-training ends at step {step} of at most {}: the held-out loss has not \
                 improved on {:.4} for {patience} evaluations",
                self.saved.pretrain_steps,
                self.saved.plateau.best.unwrap_or(f64::NAN)
            ));
            self.saved.pretrain_steps = step;
        } else if self.saved.plateau.since_best > 0 {
            self.obs.log(&format!(
                "step {step}: held-out loss on a plateau, pre-training rate × {:.3}",
                self.saved.plateau.lr_scale
            ));
        }
        Ok(true)
    }

    /// Loss and top-1 move-prediction accuracy of the EMA network on the held-out PGN
    /// split (its first `holdout_max` positions), logged to TensorBoard as `holdout/*`.
    ///
    /// # Errors
    /// No held-out split, or a failed forward pass.
    pub fn holdout(&mut self) -> Result<HoldoutStats> {
        if !self.has_supervised() {
            bail!("no PGN records: no held-out split");
        }
        self.ensure_supervised()?;
        let sup = self.supervised.as_ref().context("no PGN records loaded")?;
        let Some(h) = evaluate_window(&mut self.trainer, &self.cfg, &sup.held_out)? else {
            bail!("the held-out split is empty");
        };
        self.holdout_top1 = Some(h.policy_top1);
        self.record_holdout(HoldoutSplit::Records, "holdout", "held-out", &h)?;
        Ok(h)
    }

    /// The same evaluation on the newest `holdout_max` positions of the held-out
    /// self-play games (`RUN/data/held-out`, rescanned now), logged to TensorBoard as
    /// `holdout_selfplay/*`. `None` while there are none: a run that has not held out
    /// a game yet, or one with `[selfplay] held_out_permille = 0`.
    ///
    /// # Errors
    /// A held-out directory that cannot be listed, or a failed forward pass.
    pub fn holdout_selfplay(&mut self) -> Result<Option<HoldoutStats>> {
        self.selfplay.held_out_step = Some(self.trainer.step_count());
        let (window, report) = match self.selfplay.held_out.refresh() {
            Ok(found) => found,
            // Workers create it with their first output.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("cannot read {}", self.run.selfplay_held_out_dir().display())
                });
            }
        };
        self.warn_skipped(report.skipped);
        self.warn_removed(&report.removed);
        let Some(h) = evaluate_window(&mut self.trainer, &self.cfg, &window)? else {
            return Ok(None);
        };
        self.record_holdout(
            HoldoutSplit::Selfplay,
            "holdout_selfplay",
            "held-out self-play",
            &h,
        )?;
        Ok(Some(h))
    }

    /// Logs a held-out evaluation: TensorBoard scalars `TAG/*`, a line naming the
    /// split as `name`, and a `holdout` event.
    fn record_holdout(
        &mut self,
        split: HoldoutSplit,
        tag: &str,
        name: &str,
        h: &HoldoutStats,
    ) -> Result<()> {
        self.trainer
            .log_scalar(&format!("{tag}/policy_top1"), h.policy_top1);
        self.trainer
            .log_scalar(&format!("{tag}/policy_loss"), h.policy_loss);
        if let Some(v) = h.value_loss {
            self.trainer.log_scalar(&format!("{tag}/value_loss"), v);
        }
        self.warn_if_tensorboard_stopped();
        let step = self.trainer.step_count();
        self.obs.log(&format!(
            "step {step}: {name} top-1 {:.3} (uniform {:.3}) policy loss {:.3} value loss {} (constant guess {}) on {} positions",
            h.policy_top1,
            h.uniform_top1,
            h.policy_loss,
            h.value_loss.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}")),
            h.constant_value_loss.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}")),
            h.positions
        ));
        self.run.record(Event::Holdout(HoldoutEvent {
            step,
            split,
            positions: h.positions,
            policy_loss: h.policy_loss,
            value_loss: h.value_loss,
            policy_top1: h.policy_top1,
        }))?;
        Ok(())
    }
}

/// Mean losses and top-1 move-prediction accuracy of `trainer`'s EMA network on the
/// first `holdout_max` positions of `window` (every held-out split's one loop); `None`
/// when it is empty. The value loss is a mean over the positions with a value target.
fn evaluate_window(
    trainer: &mut Trainer,
    cfg: &TrainSection,
    window: &Window,
) -> Result<Option<HoldoutStats>> {
    let n = window.len().min(cfg.data.holdout_max.max(1));
    if n == 0 {
        return Ok(None);
    }
    let encoder = cfg.trainer.net.encoder();
    let size = cfg.data.batch_size as u64;
    let mut batch = Batch::new(cfg.data.batch_size, &encoder);
    let (mut top1, mut pl, mut uniform) = (0.0, 0.0, 0.0);
    let (mut vl, mut valued) = (0.0, 0.0);
    let mut mean_target = [0.0f64; 3];
    let mut start = 0;
    while start < n {
        let end = (start + size).min(n);
        assemble_range(window, &encoder, start..end, &mut batch)?;
        let host = HostBatch::from_data(&batch)?;
        let e = trainer.evaluate(&host)?;
        let k = e.samples as f64;
        top1 += e.policy_accuracy * k;
        pl += e.policy_loss * k;
        let v = batch
            .has_value
            .iter()
            .take(e.samples)
            .filter(|&&x| x > 0.0)
            .count() as f64;
        vl += e.value_loss * v;
        valued += v;
        for (row, _) in batch
            .value
            .rows()
            .into_iter()
            .zip(&batch.has_value)
            .take(e.samples)
            .filter(|(_, h)| **h > 0.0)
        {
            for (m, &t) in mean_target.iter_mut().zip(row) {
                *m += f64::from(t);
            }
        }
        for row in batch.legal.rows() {
            let legal = row.iter().filter(|&&x| x != 0).count().max(1);
            uniform += 1.0 / legal as f64;
        }
        start = end;
    }
    let nf = n as f64;
    Ok(Some(HoldoutStats {
        positions: n,
        policy_top1: top1 / nf,
        policy_loss: pl / nf,
        value_loss: (valued > 0.0).then(|| vl / valued),
        uniform_top1: uniform / nf,
        constant_value_loss: (valued > 0.0).then(|| entropy_of_mean(mean_target, valued)),
    }))
}

/// The entropy of the mean of `n` value targets whose components sum to `sums`: the
/// cross-entropy loss of always guessing that mean, the best constant guess.
fn entropy_of_mean(sums: [f64; 3], n: f64) -> f64 {
    sums.iter()
        .map(|&s| s / n)
        .filter(|&p| p > 0.0)
        .map(|p| -p * p.ln())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::entropy_of_mean;

    #[test]
    fn the_constant_guess_loss_is_ln_3_for_even_results_and_less_for_uneven_ones() {
        assert!((entropy_of_mean([10.0, 10.0, 10.0], 30.0) - 3f64.ln()).abs() < 1e-12);
        assert_eq!(entropy_of_mean([0.0, 8.0, 0.0], 8.0), 0.0);
        let skewed = entropy_of_mean([2.0, 6.0, 2.0], 10.0);
        let want = -(0.2f64 * 0.2f64.ln()) * 2.0 - 0.6 * 0.6f64.ln();
        assert!((skewed - want).abs() < 1e-12 && skewed < 3f64.ln());
    }
}
