//! The torch-free side of checkpoints: the network architecture ([`NetConfig`]), the
//! JSON sidecar ([`Sidecar`]) and the checkpoint file names.
//!
//! It lives here, not in xq-train, so that every backend reads a checkpoint the same way
//! through one reader: libtorch (xq-train, which also writes them) and the native CPU
//! backend (xq-native), which must not link libtorch. The tensors themselves are
//! safetensors files named by the sidecar; each backend reads those its own way.
//!
//! A checkpoint of step `S` in `DIR` is `ckpt-SSSSSSSSSS.{weights,ema,optim}.safetensors`
//! and the sidecar `ckpt-SSSSSSSSSS.json`; the sidecar is written last, so a checkpoint
//! exists exactly when its sidecar does.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::encode::{ENCODING_VERSION, EncoderConfig};
use crate::policy::{POLICY_INDEX_VERSION, POLICY_SIZE};

/// Value of [`Sidecar::format`].
pub const FORMAT: &str = "xqzero-checkpoint";
/// Version of the sidecar layout.
pub const FORMAT_VERSION: u32 = 1;
/// The directory of a run (or of anything else) that holds its checkpoints; the run
/// directory's layout (`xq_data::layout`) uses this name.
pub const CHECKPOINTS_DIR: &str = "checkpoints";

/// Why a checkpoint's sidecar or its architecture cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: invalid JSON: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The checkpoint was trained on a different input encoding than this build produces.
    #[error(
        "{path}: checkpoint uses input encoding version {found}, this build encodes version \
         {expected}; retrain or convert the network"
    )]
    EncodingVersion {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    /// The checkpoint's policy head follows a different move index.
    #[error(
        "{path}: checkpoint uses policy index version {found} ({found_size} moves), this build \
         uses version {expected} ({expected_size} moves)"
    )]
    PolicyIndexVersion {
        path: PathBuf,
        found: u32,
        found_size: usize,
        expected: u32,
        expected_size: usize,
    },
    /// The file is not a sidecar this build can read, or names an impossible network.
    #[error("{path}: {what}")]
    BadCheckpoint { path: PathBuf, what: String },
    /// No complete checkpoint (one with a sidecar) where one was required.
    #[error("{0}: no checkpoint found (a checkpoint is complete once its .json sidecar exists)")]
    NoCheckpoint(PathBuf),
}

impl CheckpointError {
    fn io(path: impl Into<PathBuf>, source: std::io::Error) -> CheckpointError {
        CheckpointError::Io {
            path: path.into(),
            source,
        }
    }
}

/// A [`NetConfig`] with an impossible size; the message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidNetConfig(pub String);

/// Residual tower shape and heads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetConfig {
    /// Residual blocks in the tower.
    pub blocks: usize,
    /// Channels of every tower convolution.
    pub channels: usize,
    /// History positions the input encoding holds (decides the input planes; see
    /// [`EncoderConfig`]).
    pub history: usize,
    /// KataGo-style global pooling bias in every third block: the block's mean- and
    /// max-pooled activations go through a linear layer and are added as a per-channel
    /// bias. Lets the network see whole-board facts (material, king safety) cheaply.
    pub global_pool: bool,
    /// Channels of the value head's 1×1 convolution.
    pub value_channels: usize,
    /// Hidden units of the value head's fully connected layer.
    pub value_hidden: usize,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig::small()
    }
}

impl NetConfig {
    /// 4 × 48: trains at a useful speed on a CPU; the default.
    pub fn small() -> NetConfig {
        NetConfig {
            blocks: 4,
            channels: 48,
            history: EncoderConfig::default().history,
            global_pool: true,
            value_channels: 8,
            value_hidden: 128,
        }
    }

    /// 10 × 128: a mid-size GPU network.
    pub fn medium() -> NetConfig {
        NetConfig {
            blocks: 10,
            channels: 128,
            value_channels: 32,
            value_hidden: 256,
            ..NetConfig::small()
        }
    }

    /// 20 × 256: a large GPU network.
    pub fn large() -> NetConfig {
        NetConfig {
            blocks: 20,
            channels: 256,
            value_channels: 32,
            value_hidden: 256,
            ..NetConfig::small()
        }
    }

    /// A preset by name: `small`, `medium` (10×128) or `large` (20×256).
    pub fn preset(name: &str) -> Option<NetConfig> {
        match name {
            "small" => Some(NetConfig::small()),
            "medium" | "10x128" => Some(NetConfig::medium()),
            "large" | "20x256" => Some(NetConfig::large()),
            _ => None,
        }
    }

    /// The input encoder this network expects.
    pub fn encoder(&self) -> EncoderConfig {
        EncoderConfig {
            history: self.history,
        }
    }

    /// Input channels (`15 × history + 11`).
    pub fn input_planes(&self) -> usize {
        self.encoder().planes()
    }

    /// Checks the sizes; the error names the offending key.
    pub fn validate(&self) -> Result<(), InvalidNetConfig> {
        let positive = [
            ("net.blocks", self.blocks),
            ("net.channels", self.channels),
            ("net.history", self.history),
            ("net.value_channels", self.value_channels),
            ("net.value_hidden", self.value_hidden),
        ];
        for (key, v) in positive {
            if v == 0 {
                return Err(InvalidNetConfig(format!("{key} must be at least 1")));
            }
        }
        if self.channels > 4096 || self.blocks > 256 || self.history > 64 {
            return Err(InvalidNetConfig(
                "net: blocks ≤ 256, channels ≤ 4096 and history ≤ 64".into(),
            ));
        }
        Ok(())
    }
}

/// The optimiser part of a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptimizerState {
    /// `"sgd"` or `"adamw"`.
    pub kind: String,
    /// Steps taken (Adam's bias correction).
    pub steps: u64,
    /// File of the state tensors, relative to the sidecar's directory.
    pub file: String,
}

/// The JSON sidecar of a checkpoint (or of an exported network, which has no optimiser).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sidecar {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// `xq_nn::encode::ENCODING_VERSION` of the build that trained the weights.
    pub encoding_version: u32,
    /// `xq_nn::policy::POLICY_INDEX_VERSION` of that build.
    pub policy_index_version: u32,
    /// Policy outputs (2,086).
    pub policy_size: usize,
    /// Architecture.
    pub net: NetConfig,
    /// Optimiser steps taken.
    pub step: u64,
    /// Training samples consumed.
    pub samples_seen: u64,
    /// Live weights file, relative to the sidecar's directory.
    pub weights: String,
    /// EMA weights file (what evaluation uses by default), relative to the sidecar.
    pub ema: String,
    /// EMA updates taken.
    pub ema_updates: u64,
    /// Optimiser state; `None` in an exported network.
    pub optimizer: Option<OptimizerState>,
    /// Where the data pipeline stands (opaque; owned by xq-data).
    pub data_cursor: Option<serde_json::Value>,
    /// Seed of the run's torch RNG.
    pub seed: u64,
    /// The training configuration in force when this was written (xq-train's
    /// `TrainConfig` as JSON: kept opaque here so that reading a network needs no
    /// trainer).
    pub train: Option<serde_json::Value>,
    /// Seconds since the Unix epoch at writing.
    pub created_unix: u64,
}

impl Sidecar {
    /// A sidecar for this build's encoding and policy index.
    pub fn new(net: NetConfig, step: u64, samples_seen: u64, seed: u64) -> Sidecar {
        Sidecar {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            encoding_version: ENCODING_VERSION,
            policy_index_version: POLICY_INDEX_VERSION,
            policy_size: POLICY_SIZE,
            net,
            step,
            samples_seen,
            weights: String::new(),
            ema: String::new(),
            ema_updates: 0,
            optimizer: None,
            data_cursor: None,
            seed,
            train: None,
            created_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        }
    }

    /// Reads and checks a sidecar: format, encoding version and policy index must be this
    /// build's, or the error says which differs.
    pub fn read(path: &Path) -> Result<Sidecar, CheckpointError> {
        let text = fs::read_to_string(path).map_err(|e| CheckpointError::io(path, e))?;
        let json = |source| CheckpointError::Json {
            path: path.into(),
            source,
        };
        let value: serde_json::Value = serde_json::from_str(&text).map_err(json)?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(CheckpointError::BadCheckpoint {
                path: path.into(),
                what: format!("not an xqzero checkpoint sidecar (no \"format\": \"{FORMAT}\")"),
            });
        }
        // Check the versions before the full parse, so an old checkpoint gets the version
        // error rather than a missing-field one.
        let version = |key: &str| value.get(key).and_then(|v| v.as_u64()).map(|v| v as u32);
        if let Some(found) = version("encoding_version")
            && found != ENCODING_VERSION
        {
            return Err(CheckpointError::EncodingVersion {
                path: path.into(),
                found,
                expected: ENCODING_VERSION,
            });
        }
        let sidecar: Sidecar = serde_json::from_value(value).map_err(json)?;
        if sidecar.format_version > FORMAT_VERSION {
            return Err(CheckpointError::BadCheckpoint {
                path: path.into(),
                what: format!(
                    "sidecar format version {} is newer than this build's {FORMAT_VERSION}",
                    sidecar.format_version
                ),
            });
        }
        if sidecar.policy_index_version != POLICY_INDEX_VERSION
            || sidecar.policy_size != POLICY_SIZE
        {
            return Err(CheckpointError::PolicyIndexVersion {
                path: path.into(),
                found: sidecar.policy_index_version,
                found_size: sidecar.policy_size,
                expected: POLICY_INDEX_VERSION,
                expected_size: POLICY_SIZE,
            });
        }
        sidecar
            .net
            .validate()
            .map_err(|e| CheckpointError::BadCheckpoint {
                path: path.into(),
                what: e.to_string(),
            })?;
        Ok(sidecar)
    }

    /// The sidecar as the pretty JSON text it is written as.
    pub fn to_json(&self) -> String {
        // A struct of strings, numbers and JSON values always serialises.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The file of the weights to evaluate (`ema` or the live `weights`), next to the
    /// sidecar at `sidecar_path`.
    pub fn weights_path(&self, sidecar_path: &Path, ema: bool) -> PathBuf {
        let file = if ema { &self.ema } else { &self.weights };
        sidecar_path.parent().unwrap_or(Path::new(".")).join(file)
    }
}

/// File stem of the checkpoint of `step`.
pub fn stem(step: u64) -> String {
    format!("ckpt-{step:010}")
}

/// The step of a sidecar file name `ckpt-SSSSSSSSSS.json`.
fn sidecar_step(name: &str) -> Option<u64> {
    name.strip_prefix("ckpt-")?
        .strip_suffix(".json")?
        .parse()
        .ok()
}

/// Complete checkpoints (sidecar paths) in `dir`, oldest first.
pub fn list_checkpoints(dir: &Path) -> Result<Vec<(u64, PathBuf)>, CheckpointError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(CheckpointError::io(dir, e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| CheckpointError::io(dir, e))?;
        if let Some(step) = entry.file_name().to_str().and_then(sidecar_step) {
            found.push((step, entry.path()));
        }
    }
    found.sort();
    Ok(found)
}

/// Resolves what a user may call "a checkpoint": a sidecar `.json` file, a checkpoint
/// directory, or a run directory (its `checkpoints/`), the latter two meaning their newest
/// complete checkpoint.
pub fn resolve(path: &Path) -> Result<PathBuf, CheckpointError> {
    if path.is_file() {
        return Ok(path.to_path_buf());
    }
    if !path.exists() {
        return Err(CheckpointError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such checkpoint file or directory",
            ),
        ));
    }
    for dir in [path.join(CHECKPOINTS_DIR), path.to_path_buf()] {
        if let Some((_, latest)) = list_checkpoints(&dir)?.pop() {
            return Ok(latest);
        }
    }
    Err(CheckpointError::NoCheckpoint(path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("xq-nn-ckpt-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn newest_complete_checkpoint_is_the_one_with_the_highest_sidecar() {
        let d = temp_dir("list");
        for step in [5u64, 100, 20] {
            fs::write(d.join(format!("{}.json", stem(step))), "{}").unwrap();
        }
        fs::write(d.join(format!("{}.weights.safetensors", stem(900))), "").unwrap();
        fs::write(d.join("ckpt-junk.json"), "{}").unwrap();
        let steps: Vec<u64> = list_checkpoints(&d).unwrap().iter().map(|c| c.0).collect();
        assert_eq!(steps, [5, 20, 100]);
        assert_eq!(resolve(&d).unwrap(), d.join(format!("{}.json", stem(100))));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_sidecar_round_trips_and_another_encoding_is_refused_by_name() {
        let d = temp_dir("enc");
        let path = d.join("ckpt-0000000001.json");
        let mut s = Sidecar::new(NetConfig::small(), 1, 10, 0);
        s.train = Some(serde_json::json!({"lr": 0.1}));
        fs::write(&path, s.to_json()).unwrap();
        assert_eq!(Sidecar::read(&path).unwrap(), s);
        s.encoding_version = ENCODING_VERSION + 1;
        fs::write(&path, s.to_json()).unwrap();
        let err = Sidecar::read(&path).unwrap_err();
        assert!(
            matches!(err, CheckpointError::EncodingVersion { .. }),
            "{err}"
        );
        fs::write(&path, "{\"format\": \"something else\"}").unwrap();
        assert!(matches!(
            Sidecar::read(&path),
            Err(CheckpointError::BadCheckpoint { .. })
        ));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_network_without_channels_is_invalid_and_names_the_key() {
        let cfg = NetConfig {
            channels: 0,
            ..NetConfig::small()
        };
        assert!(cfg.validate().unwrap_err().0.contains("net.channels"));
        assert!(NetConfig::medium().validate().is_ok());
    }
}
