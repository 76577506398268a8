//! The `[train]` section of a run config: the trainer's settings (`xq_train::TrainConfig`,
//! same keys) plus what the data side of training needs (batch size, replay window,
//! pacing, candidates, supervised pre-training, held-out evaluation).
//!
//! Every key is optional. An unknown key is an error that names it and its line
//! (`config.toml:3: [train] unknown key "lerning_rate"`), so a typo never silently falls
//! back to a default.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use xq_data::{ReuseCap, ReuseCapError, WindowSize};
use xq_train::{TrainConfig, TrainError};

use crate::config::{self, ConfigError, Node};

/// The replay window (`[train.window]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WindowSection {
    /// The newest `size` positions.
    Fixed { size: u64 },
    /// KataGo's power law (see xq-data's `window` module): all data up to `min_rows`,
    /// then sub-linear growth; `max_rows = 0` means no cap.
    PowerLaw {
        #[serde(default = "default_min_rows")]
        min_rows: u64,
        #[serde(default = "default_expand")]
        expand_per_row: f64,
        #[serde(default = "default_exponent")]
        exponent: f64,
        #[serde(default)]
        max_rows: u64,
    },
}

fn default_min_rows() -> u64 {
    20_000
}
fn default_expand() -> f64 {
    0.4
}
fn default_exponent() -> f64 {
    0.65
}

impl Default for WindowSection {
    /// The power law with `min_rows` lowered to 20,000 (KataGo uses 250,000 for a
    /// cluster; a CPU run produces far less data).
    fn default() -> Self {
        WindowSection::PowerLaw {
            min_rows: default_min_rows(),
            expand_per_row: default_expand(),
            exponent: default_exponent(),
            max_rows: 0,
        }
    }
}

impl WindowSection {
    /// The xq-data window rule.
    pub fn size(&self) -> WindowSize {
        match *self {
            WindowSection::Fixed { size } => WindowSize::Fixed(size),
            WindowSection::PowerLaw {
                min_rows,
                expand_per_row,
                exponent,
                max_rows,
            } => WindowSize::PowerLaw {
                min_rows,
                expand_per_row,
                exponent,
                max_rows: (max_rows > 0).then_some(max_rows),
            },
        }
    }
}

/// Supervised pre-training (`[train.pretrain]`): run first, on a run without checkpoints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PretrainSection {
    /// PGN files with ICCS moves (relative paths are relative to the config file).
    pub pgn: Vec<PathBuf>,
    /// Optimiser steps of supervised training before self-play data is used.
    pub steps: u64,
    /// Games per thousand held out for the move-prediction accuracy (by content hash).
    #[serde(default = "default_held_out")]
    pub held_out_permille: u32,
    /// After pre-training, every `mix_every`-th step trains on a batch of these
    /// records (as in pre-training: the played move as policy target, value only where
    /// a result is known) instead of self-play data; 0 never. A young network's
    /// self-play games never punish a piece left en prise, so their policy targets
    /// slowly unlearn what the records teach about captures; a share of record batches
    /// keeps it (as AlphaStar keeps its supervised policy near). These steps do not
    /// count against the self-play pacing.
    #[serde(default)]
    pub mix_every: u64,
    /// A value target for records without a result (`value_labels`).
    #[serde(default)]
    pub value_labels: ValueLabels,
    /// Held-out evaluations every this many pre-training steps, for the plateau rule
    /// below; 0: only `holdout_every` applies.
    #[serde(default = "default_pretrain_eval_every")]
    pub eval_every: u64,
    /// The plateau rule: an evaluation whose held-out loss (policy + value) is not
    /// below the best so far multiplies the pre-training rate by `lr_drop`, and after
    /// `patience` such evaluations in a row pre-training ends there (`steps` is then
    /// the most it takes). 0: exactly `steps` steps at the configured rate.
    #[serde(default)]
    pub patience: u32,
    /// See `patience`.
    #[serde(default = "default_lr_drop")]
    pub lr_drop: f64,
    /// The value loss's weight on record batches (pre-training and the steps mixed into
    /// self-play), as a factor of `[train] value_loss_weight`; the plateau rule watches
    /// policy + this × value. Every position of a record shares its game's one label, so
    /// the value head memorises games long before the policy stops improving (AlphaGo's
    /// value network overfit the same way on whole games): at 431b6f0 the held-out
    /// value loss was lowest at step 400 of 1,600 (docs/lab/2026-12-03-cpu-2h-431b6f0.md).
    #[serde(default = "default_record_value_weight")]
    pub value_weight: f64,
}

fn default_held_out() -> u32 {
    50
}
fn default_pretrain_eval_every() -> u64 {
    100
}
fn default_lr_drop() -> f64 {
    0.3
}
fn default_record_value_weight() -> f64 {
    1.0
}

/// How records without a result get a value target (`[train.pretrain] value_labels`):
/// the final position searched by the built-in alpha-beta engine (xq-eval's
/// `adjudicate` module says the rule). Master game records stop at a resignation or an
/// agreed draw and say neither, so without labels the value head learns nothing
/// before self-play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ValueLabels {
    /// Search depth in plies; 0 leaves such records without a value target.
    pub depth: u32,
    /// Centipawns (a horse is 270) from which the side to move is judged won or lost.
    pub margin_cp: i32,
}

impl Default for ValueLabels {
    fn default() -> Self {
        ValueLabels {
            depth: 4,
            margin_cp: 180,
        }
    }
}

impl ValueLabels {
    /// The adjudicator, or `None` when labelling is off.
    pub fn adjudicator(self) -> Option<xq_eval::adjudicate::Adjudicator> {
        (self.depth > 0).then_some(xq_eval::adjudicate::Adjudicator {
            depth: self.depth,
            margin_cp: self.margin_cp,
        })
    }
}

/// How the learning rate of self-play training follows the run's progress
/// (`[train] lr_anneal`), on top of the trainer's own `schedule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LrAnneal {
    /// The trainer's rate throughout.
    #[default]
    Constant,
    /// Half a cosine from the full rate at the start of the run to `lr_anneal_final` of it at
    /// the end of its budget.
    Cosine,
}

/// The keys of `[train]` that are not `TrainConfig`'s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DataSection {
    /// Samples per optimiser step.
    pub batch_size: usize,
    pub window: WindowSection,
    /// At most this many training samples per self-play position written (KataGo's
    /// pacing): the trainer waits for data instead of overfitting a small window.
    pub samples_per_position: f64,
    /// Do not train on self-play data before the data directory holds this many positions.
    pub min_positions: u64,
    /// Caps the replay window so that each self-play position is drawn at most this many
    /// times in expectation (xq-data's `ReuseCap`; it must exceed
    /// `samples_per_position`, the mean under any window); `None`: no cap.
    pub max_reuse: Option<f64>,
    /// How the rate of self-play training anneals over the run: the trainer's rate is
    /// multiplied by [`DataSection::lr_factor`] of the run's progress. Pre-training
    /// keeps its plateau rule instead.
    pub lr_anneal: LrAnneal,
    /// The share of the rate that `lr_anneal = "cosine"` reaches at the end of the run.
    pub lr_anneal_final: f64,
    /// Self-play training's rate as a share of the trainer's `lr` (before `lr_anneal`).
    /// Pre-training's plateau rule ends it at a small share of `lr` (0.027 after three
    /// drops of 0.3); going back to the full rate when self-play starts moves the network
    /// away from what it learned, and a share below 1 fine-tunes it instead (at the README
    /// job's scale 0.1 halved the drift but did not make the exported player stronger:
    /// docs/lab/2026-12-03-selfplay-lr.md).
    pub selfplay_lr_scale: f64,
    /// Publish a candidate network to `models/candidates/` every this many steps.
    pub candidate_every: u64,
    /// Evaluate the held-out PGN split (when there is one) and the held-out self-play
    /// games (`data/held-out`) every this many steps, the latter also at the end of
    /// each training call on self-play data; 0 never.
    pub holdout_every: u64,
    /// At most this many held-out positions are evaluated: the PGN split's first ones,
    /// the held-out self-play games' newest.
    pub holdout_max: u64,
    /// Append a `train` event to `events.jsonl` every this many steps.
    pub event_every: u64,
    /// Adopt new self-play chunks into the window at most every this many steps.
    pub refresh_every: u64,
    /// Merge chunk files older than twice the window into files of this many chunks
    /// (xq-data's `compact`), so a long run's data directory keeps a file count near
    /// its window's; 0 never merges.
    pub compact_files: usize,
    /// Mirror samples left-right at random (the board's one symmetry).
    pub mirror: bool,
    /// Share in [0, 1] of a self-play value target taken from the search's root value
    /// rather than the game result (lc0's `q_ratio`; xq-data's batch docs).
    pub q_ratio: f64,
    /// With `q_ratio` above 0, the search value mixed in is the short-term value over
    /// this many plies (KataGo's TD value targets: the root values of the position and
    /// the game's later ones, weighted by `λ = 1 − 1/horizon` a ply, the result taking
    /// the weight left at the end; xq-data's batch docs) rather than the position's own
    /// root value. 0 (the default) mixes in the own root value.
    pub value_horizon: f64,
    /// Share in (0, 1] of the self-play positions that carry a value target, the same
    /// positions in every batch (by a hash of the position); the others train the
    /// policy only. Successive positions of a game share their result, so a small
    /// network can learn a game's label by heart instead of judging its positions;
    /// AlphaGo trained its value network on one position per game. 1 (the default)
    /// values every position.
    pub selfplay_value_share: f64,
    /// The leaf quiescence weight whose blend self-play's value loss trains (xq-train's
    /// `loss`): the cross-entropy of a self-play result against
    /// `(1 − w) · network + w · quiescence`, the value the exported player's search uses
    /// at that weight, so that the network's value learns what the quiescence search
    /// misses rather than repeating it. 0 (the default) trains the network's value alone;
    /// record batches always do.
    pub value_quiescence: f64,
    /// The value loss's weight on self-play batches, as a factor of `[train]
    /// value_loss_weight` (record batches have `[train.pretrain] value_weight`). 0 trains
    /// only the policy on self-play data and leaves the value head to the record steps
    /// (`mix_every`): at the README job's scale self-play's game results taught a value
    /// that played far better in plain search but worse inside the exported player's
    /// blend with leaf quiescence than the pre-trained value, whose labels came from
    /// alpha-beta (docs/lab/2026-12-03-selfplay-which-head.md). Measured at 0
    /// there, the exported player was no stronger for it ("Self-play that trains the
    /// policy only").
    pub selfplay_value_weight: f64,
    /// The policy loss's weight on self-play batches (record batches weigh it by 1). 0
    /// trains only the value on self-play data and leaves the policy to the record steps
    /// (`mix_every`), as AlphaGo's value network learned from self-play games whose
    /// moves came from a policy trained on human games. At the README job's scale,
    /// with self-play at leaf quiescence 0.75, 0 left the exported player level with its
    /// pre-trained network, not stronger
    /// (docs/lab/2026-12-05-selfplay-value-only.md). Not 0 together with `selfplay_value_weight`.
    pub selfplay_policy_weight: f64,
    /// Weight of a pull toward the pre-trained network's policy on self-play batches:
    /// that weight times KL(pre-trained ‖ network) over the legal moves is added to the
    /// loss (xq-train's `policy_kl`). The anchor is the EMA network as pre-training left
    /// it, frozen at the first self-play step and kept in the run directory as
    /// `policy-anchor.safetensors`, so a resumed run keeps it. It keeps what the master
    /// games taught the policy while self-play's targets, noisy at a few dozen visits,
    /// move it (issue #45). 0 (the default) adds nothing; above 0 it needs
    /// `[train.pretrain]`.
    pub policy_anchor: f64,
    /// Threads assembling batches (0 = rayon's global pool).
    pub data_threads: usize,
    /// Batches assembled ahead of the trainer.
    pub prefetch: usize,
    pub pretrain: Option<PretrainSection>,
}

impl DataSection {
    /// KataGo's pacing: whether another batch of self-play samples may be drawn when
    /// `used` have been drawn from a directory of `positions`.
    pub fn pacing_allows(&self, used: u64, positions: u64) -> bool {
        positions >= self.min_positions.max(1)
            && (used + self.batch_size as u64) as f64
                <= positions as f64 * self.samples_per_position
    }

    /// The self-play window's reuse cap (`max_reuse`), if one is set.
    ///
    /// # Errors
    /// A `max_reuse` not above `samples_per_position`.
    pub fn reuse_cap(&self) -> Result<Option<ReuseCap>, ReuseCapError> {
        self.max_reuse
            .map(|r| ReuseCap::new(self.samples_per_position, r))
            .transpose()
    }

    /// The factor of the learning rate of self-play training `fraction` of the way
    /// through the run (clamped to [0, 1]): `selfplay_lr_scale` times 1 throughout for
    /// `"constant"`, and for `"cosine"` times
    /// `lr_anneal_final + (1 − lr_anneal_final)·(1 + cos(π·fraction))/2`, from 1 down to `lr_anneal_final`.
    pub fn lr_factor(&self, fraction: f64) -> f64 {
        let anneal = match self.lr_anneal {
            LrAnneal::Constant => 1.0,
            LrAnneal::Cosine => {
                let cos = 0.5 * (1.0 + (std::f64::consts::PI * fraction.clamp(0.0, 1.0)).cos());
                self.lr_anneal_final + (1.0 - self.lr_anneal_final) * cos
            }
        };
        self.selfplay_lr_scale * anneal
    }
}

impl Default for DataSection {
    fn default() -> Self {
        DataSection {
            batch_size: 256,
            window: WindowSection::default(),
            samples_per_position: 4.0,
            min_positions: 5_000,
            max_reuse: None,
            lr_anneal: LrAnneal::Constant,
            lr_anneal_final: 0.1,
            selfplay_lr_scale: 1.0,
            candidate_every: 1_000,
            holdout_every: 500,
            holdout_max: 10_000,
            event_every: 100,
            refresh_every: 50,
            compact_files: 1000,
            mirror: true,
            q_ratio: 0.0,
            value_horizon: 0.0,
            selfplay_value_share: 1.0,
            value_quiescence: 0.0,
            selfplay_value_weight: 1.0,
            selfplay_policy_weight: 1.0,
            policy_anchor: 0.0,
            data_threads: 0,
            prefetch: 4,
            pretrain: None,
        }
    }
}

/// The whole `[train]` section.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrainSection {
    pub trainer: TrainConfig,
    pub data: DataSection,
}

impl TrainSection {
    /// Reads the `[train]` table (`node`, from the one parse of the config file). The
    /// table mixes the trainer's keys with the data side's: each key goes to the struct
    /// that owns it, the key sets being the structs' own field lists, and a key neither
    /// owns is an unknown key of `[train]`. Then both halves are range-checked.
    ///
    /// # Errors
    /// An unknown key or a bad value, naming the key path (and, before the range
    /// checks, placed at its line by [`ConfigError::locate`]).
    pub fn from_node(node: Node<'_>) -> Result<TrainSection, ConfigError> {
        let [trainer, data] = config::split_table(
            node,
            "train",
            [
                config::fields_of::<TrainConfig>(),
                config::fields_of::<DataSection>(),
            ],
        )?;
        let s = TrainSection {
            trainer: config::deserialize(trainer, "train")?,
            data: config::deserialize(data, "train")?,
        };
        s.trainer.validate().map_err(|e| match e {
            TrainError::Config(m) => ConfigError::invalid(format!("[train] {m}")),
            other => ConfigError::invalid(format!("[train] {other}")),
        })?;
        s.validate()?;
        Ok(s)
    }

    /// Makes relative PGN paths of `[train.pretrain]` relative to `base` (the config
    /// file's directory).
    pub fn resolve_paths(&mut self, base: &Path) {
        if let Some(p) = &mut self.data.pretrain {
            for f in &mut p.pgn {
                if f.is_relative() {
                    *f = base.join(&*f);
                }
            }
        }
    }

    /// Range checks of the data keys (`TrainConfig` checks its own); names the key.
    ///
    /// # Errors
    /// The first bad key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let d = &self.data;
        let check = |ok: bool, key: &str, need: &str| {
            if ok {
                Ok(())
            } else {
                Err(ConfigError::invalid(format!(
                    "[train] {key} must be {need}"
                )))
            }
        };
        check(
            (1..=1 << 16).contains(&d.batch_size),
            "batch_size",
            "in 1..=65536",
        )?;
        check(
            d.samples_per_position.is_finite() && d.samples_per_position > 0.0,
            "samples_per_position",
            "a positive number",
        )?;
        check(d.prefetch >= 1, "prefetch", "at least 1")?;
        check(
            (0.0..=1.0).contains(&d.lr_anneal_final),
            "lr_anneal_final",
            "in [0, 1]",
        )?;
        check(
            d.selfplay_lr_scale > 0.0 && d.selfplay_lr_scale <= 1.0,
            "selfplay_lr_scale",
            "in (0, 1]",
        )?;
        d.reuse_cap()
            .map_err(|e| ConfigError::invalid(format!("[train] {e}")))?;
        check((0.0..=1.0).contains(&d.q_ratio), "q_ratio", "in [0, 1]")?;
        check(
            d.value_horizon == 0.0 || (d.value_horizon >= 1.0 && d.value_horizon <= 1e4),
            "value_horizon",
            "0 (off) or between 1 and 10000 plies",
        )?;
        check(
            d.value_horizon == 0.0 || d.q_ratio > 0.0,
            "value_horizon",
            "0 when q_ratio is 0 (the short-term value is what q_ratio mixes in)",
        )?;
        check(
            d.selfplay_value_share > 0.0 && d.selfplay_value_share <= 1.0,
            "selfplay_value_share",
            "in (0, 1]",
        )?;
        check(
            (0.0..1.0).contains(&d.value_quiescence),
            "value_quiescence",
            "in [0, 1)",
        )?;
        check(
            d.selfplay_value_weight.is_finite() && d.selfplay_value_weight >= 0.0,
            "selfplay_value_weight",
            "a number ≥ 0",
        )?;
        check(
            d.selfplay_policy_weight.is_finite() && d.selfplay_policy_weight >= 0.0,
            "selfplay_policy_weight",
            "a number ≥ 0",
        )?;
        check(
            d.selfplay_policy_weight > 0.0 || d.selfplay_value_weight > 0.0,
            "selfplay_policy_weight",
            "above 0 when selfplay_value_weight is 0 (self-play batches would train nothing)",
        )?;
        check(
            d.policy_anchor.is_finite() && d.policy_anchor >= 0.0,
            "policy_anchor",
            "a number ≥ 0",
        )?;
        check(
            d.policy_anchor == 0.0 || d.pretrain.is_some(),
            "policy_anchor",
            "0 without [train.pretrain] (the anchor is the pre-trained network)",
        )?;
        check(d.refresh_every >= 1, "refresh_every", "at least 1")?;
        check(
            d.compact_files != 1,
            "compact_files",
            "0 (never) or at least 2",
        )?;
        match d.window {
            WindowSection::Fixed { size } => check(size >= 1, "window.size", "at least 1")?,
            WindowSection::PowerLaw {
                min_rows,
                expand_per_row,
                exponent,
                ..
            } => {
                check(min_rows >= 1, "window.min_rows", "at least 1")?;
                check(
                    expand_per_row.is_finite() && expand_per_row > 0.0,
                    "window.expand_per_row",
                    "a positive number",
                )?;
                check(
                    exponent.is_finite() && exponent > 0.0 && exponent <= 1.0,
                    "window.exponent",
                    "in (0, 1]",
                )?;
            }
        }
        if let Some(p) = &d.pretrain {
            check(
                !p.pgn.is_empty(),
                "pretrain.pgn",
                "a non-empty list of PGN files",
            )?;
            check(
                p.held_out_permille <= 1000,
                "pretrain.held_out_permille",
                "in 0..=1000",
            )?;
            check(
                p.mix_every != 1,
                "pretrain.mix_every",
                "0 (never) or at least 2 (1 would leave no step for self-play data)",
            )?;
            check(
                p.value_labels.depth <= 8,
                "pretrain.value_labels.depth",
                "0 (off) to 8",
            )?;
            check(
                p.value_labels.margin_cp > 0,
                "pretrain.value_labels.margin_cp",
                "a positive number of centipawns",
            )?;
            check(
                p.lr_drop > 0.0 && p.lr_drop <= 1.0,
                "pretrain.lr_drop",
                "in (0, 1]",
            )?;
            check(
                p.value_weight.is_finite() && p.value_weight >= 0.0,
                "pretrain.value_weight",
                "a number ≥ 0",
            )?;
            check(
                p.patience == 0 || p.eval_every > 0,
                "pretrain.eval_every",
                "at least 1 when patience is set",
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RunConfig;

    /// `[train]` as the one parse of a whole config file reads it.
    fn parse(text: &str) -> Result<TrainSection, ConfigError> {
        RunConfig::parse(text).map(|c| c.train)
    }

    #[test]
    fn an_empty_or_missing_section_gives_the_defaults() {
        assert_eq!(parse("").unwrap(), TrainSection::default());
        assert_eq!(
            parse("[selfplay]\nparallel_games = 1\n[train]\n").unwrap(),
            TrainSection::default()
        );
    }

    #[test]
    fn every_kind_of_key_is_read() {
        let s = parse(
            r#"
            [train]
            lr = 0.1
            batch_size = 32
            samples_per_position = 2.5
            device = "cpu"
            [train.net]
            blocks = 2
            channels = 16
            [train.optimizer]
            kind = "adamw"
            weight_decay = 0.05
            [train.window]
            kind = "fixed"
            size = 1000
            [train.pretrain]
            pgn = ["a.pgn"]
            steps = 10
            value_weight = 0.25
            "#,
        )
        .unwrap();
        assert_eq!(s.trainer.lr, 0.1);
        assert_eq!((s.trainer.net.blocks, s.trainer.net.channels), (2, 16));
        assert_eq!(s.trainer.optimizer.kind(), "adamw");
        assert_eq!(s.data.batch_size, 32);
        assert_eq!(s.data.samples_per_position, 2.5);
        assert_eq!(s.data.window, WindowSection::Fixed { size: 1000 });
        assert_eq!(s.data.pretrain.as_ref().map(|p| p.steps), Some(10));
        assert_eq!(s.data.pretrain.as_ref().map(|p| p.value_weight), Some(0.25));
    }

    #[test]
    fn bad_keys_and_values_are_errors_naming_the_key() {
        for (text, want) in [
            (
                "[train]\nlerning_rate = 0.1\n",
                "[train] unknown key \"lerning_rate\"",
            ),
            (
                "[train.net]\nblocs = 2\n",
                "[train.net] unknown key \"blocs\"",
            ),
            (
                "[train.window]\nkind = \"fixed\"\nsise = 3\n",
                "unknown key \"sise\"",
            ),
            (
                "[train.pretrain]\npgn = [\"a\"]\nsteps = 1\nstep = 2\n",
                "unknown key \"step\"",
            ),
            ("[train]\nbatch_size = 0\n", "batch_size"),
            ("[train]\nlr = -1.0\n", "lr"),
            (
                "[train]\nsamples_per_position = 0.0\n",
                "samples_per_position",
            ),
            (
                "[train.pretrain]\npgn = [\"a\"]\nsteps = 1\nvalue_weight = -0.5\n",
                "pretrain.value_weight",
            ),
            ("[train.net]\nblocks = \"four\"\n", "net.blocks"),
            ("[train]\ndevice = \"tpu\"\n", "device"),
        ] {
            let err = format!("{:#}", parse(text).unwrap_err());
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    #[test]
    fn errors_name_the_line_and_the_table_of_the_key() {
        let text = "[run]\nseed = 3\n\n[train]\nlr = 0.1\n[train.net]\nblocks = 2\nblocs = 2\n";
        let err = RunConfig::parse(text).unwrap_err().to_string();
        assert_eq!(
            err,
            "line 8: [train.net] unknown key \"blocs\" (did you mean \"blocks\"?)"
        );
        // A key neither the trainer nor the data side owns, at the top of `[train]`.
        let err = parse("[train]\nbatch_size = 8\nlerning_rate = 0.1\n")
            .unwrap_err()
            .to_string();
        assert_eq!(err, "line 3: [train] unknown key \"lerning_rate\"");
        // Inside an internally tagged table, which serde reads from a buffer.
        let err = parse("[train]\n[train.window]\nkind = \"fixed\"\nsise = 3\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "line 4: [train.window] unknown key \"sise\" (did you mean \"size\"?)"
        );
        // A value of the wrong type: the full key path at the value's line.
        let err = parse("[train.net]\nchannels = 8\nblocks = \"four\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("line 3: train.net.blocks: invalid type: string \"four\""),
            "{err}"
        );
        // Range checks name the section and key.
        let err = parse("[train]\nlr = -1.0\n").unwrap_err().to_string();
        assert_eq!(err, "[train] lr must be a positive number");
        let err = parse("[train]\nprefetch = 0\n").unwrap_err().to_string();
        assert_eq!(err, "[train] prefetch must be at least 1");
    }

    #[test]
    fn the_run_schedule_and_reuse_keys_are_read_and_range_checked() {
        let d = parse("").unwrap().data;
        assert_eq!(
            (d.lr_anneal, d.lr_anneal_final, d.max_reuse),
            (LrAnneal::Constant, 0.1, None)
        );
        assert_eq!(d.reuse_cap(), Ok(None));
        assert_eq!((d.value_horizon, d.selfplay_value_share), (0.0, 1.0));
        let d = parse("[train]\nq_ratio = 0.5\nvalue_horizon = 6\nselfplay_value_share = 0.25\n")
            .unwrap()
            .data;
        assert_eq!(
            (d.q_ratio, d.value_horizon, d.selfplay_value_share),
            (0.5, 6.0, 0.25)
        );
        let d = parse(
            "[train]\nlr_anneal = \"cosine\"\nlr_anneal_final = 0.2\nsamples_per_position = 3\nmax_reuse = 4\nvalue_quiescence = 0.75\nselfplay_value_weight = 0\nselfplay_policy_weight = 0.5\n[selfplay.search]\nleaf_quiescence = 0.75\n",
        )
        .unwrap()
        .data;
        assert_eq!(
            (
                d.lr_anneal,
                d.lr_anneal_final,
                d.max_reuse,
                d.value_quiescence,
                d.selfplay_value_weight,
                d.selfplay_policy_weight
            ),
            (LrAnneal::Cosine, 0.2, Some(4.0), 0.75, 0.0, 0.5)
        );
        assert!(d.reuse_cap().unwrap().is_some());
        for (text, want) in [
            ("[train]\nlr_anneal = \"linear\"\n", "lr_anneal"),
            (
                "[train]\nlr_anneal_final = 1.5\n",
                "[train] lr_anneal_final must be in [0, 1]",
            ),
            (
                "[train]\nlr_anneal_final = -0.1\n",
                "[train] lr_anneal_final must be in [0, 1]",
            ),
            ("[train]\nmax_reuse = 0.0\n", "[train] max_reuse must be"),
            (
                "[train]\nselfplay_lr_scale = 0.0\n",
                "[train] selfplay_lr_scale must be in (0, 1]",
            ),
            (
                "[train]\nselfplay_lr_scale = 2.0\n",
                "[train] selfplay_lr_scale must be in (0, 1]",
            ),
            (
                "[train]\nvalue_quiescence = 1.0\n",
                "[train] value_quiescence must be in [0, 1)",
            ),
            (
                "[train]\nvalue_quiescence = -0.5\n",
                "[train] value_quiescence must be in [0, 1)",
            ),
            (
                "[train]\nselfplay_value_weight = -1.0\n",
                "[train] selfplay_value_weight must be a number ≥ 0",
            ),
            (
                "[train]\nselfplay_policy_weight = inf\n",
                "[train] selfplay_policy_weight must be a number ≥ 0",
            ),
            (
                "[train]\nselfplay_policy_weight = 0\nselfplay_value_weight = 0\n",
                "[train] selfplay_policy_weight must be above 0 when selfplay_value_weight is 0",
            ),
            (
                "[train]\npolicy_anchor = -0.1\n",
                "[train] policy_anchor must be a number ≥ 0",
            ),
            (
                "[train]\npolicy_anchor = 0.5\n",
                "[train] policy_anchor must be 0 without [train.pretrain] (the anchor is the pre-trained network)",
            ),
            (
                "[train]\nq_ratio = 0.5\nvalue_horizon = 0.5\n",
                "[train] value_horizon must be 0 (off) or between 1 and 10000 plies",
            ),
            (
                "[train]\nvalue_horizon = 6\n",
                "[train] value_horizon must be 0 when q_ratio is 0",
            ),
            (
                "[train]\nselfplay_value_share = 0\n",
                "[train] selfplay_value_share must be in (0, 1]",
            ),
            (
                "[train]\nselfplay_value_share = 1.5\n",
                "[train] selfplay_value_share must be in (0, 1]",
            ),
            (
                "[train]\nsamples_per_position = 6\nmax_reuse = 4\n",
                "[train] max_reuse must be a number greater than samples_per_position (6), got 4",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
        let err = parse("[train]\nlr_anneal = \"linear\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("constant") && err.contains("cosine"), "{err}");
    }

    #[test]
    fn the_cosine_factor_falls_from_one_to_lr_final_and_constant_stays_at_one() {
        let cosine = DataSection {
            lr_anneal: LrAnneal::Cosine,
            lr_anneal_final: 0.1,
            ..DataSection::default()
        };
        assert_eq!(cosine.lr_factor(0.0), 1.0);
        assert!((cosine.lr_factor(0.5) - 0.55).abs() < 1e-12);
        assert!((cosine.lr_factor(1.0) - 0.1).abs() < 1e-12);
        let factors: Vec<f64> = (0..=100)
            .map(|i| cosine.lr_factor(f64::from(i) / 100.0))
            .collect();
        assert!(factors.windows(2).all(|w| w[1] < w[0]), "{factors:?}");
        // Past the end it stays at the end.
        assert!((cosine.lr_factor(1.5) - 0.1).abs() < 1e-12);
        let constant = DataSection::default();
        assert!(
            [0.0, 0.3, 1.0]
                .iter()
                .all(|&f| constant.lr_factor(f) == 1.0)
        );
        // The self-play share scales both schedules.
        let scaled = DataSection {
            selfplay_lr_scale: 0.1,
            ..cosine
        };
        assert!((scaled.lr_factor(0.0) - 0.1).abs() < 1e-12);
        assert!((scaled.lr_factor(1.0) - 0.01).abs() < 1e-12);
    }

    #[test]
    fn the_trainer_and_data_keys_are_the_structs_own_and_disjoint() {
        let trainer = config::fields_of::<TrainConfig>();
        let data = config::fields_of::<DataSection>();
        assert!(
            trainer.contains(&"lr") && trainer.contains(&"net"),
            "{trainer:?}"
        );
        assert!(
            data.contains(&"batch_size") && data.contains(&"pretrain"),
            "{data:?}"
        );
        assert!(
            !trainer.iter().any(|k| data.contains(k)),
            "{trainer:?} {data:?}"
        );
    }
}
