//! Checkpoints: safetensors files plus a JSON sidecar, written atomically.
//!
//! A checkpoint of step `S` in `DIR` is
//! `ckpt-SSSSSSSSSS.{weights,ema,optim}.safetensors` and the sidecar
//! `ckpt-SSSSSSSSSS.json`. Every file goes to a temporary name, is synced and renamed;
//! the sidecar is written last, so a checkpoint exists exactly when its sidecar does and a
//! crash mid-save leaves the previous checkpoint as the newest complete one.
//!
//! The sidecar is self-describing: architecture, encoding and policy-index versions, step,
//! samples seen, the optimiser's kind and step count, the EMA's update count, the data
//! cursor (opaque JSON owned by the data pipeline) and the seed. Loading checks the
//! versions against this build before touching a tensor.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tch::Tensor;
use xq_data::layout::CHECKPOINTS_DIR;
use xq_nn::encode::ENCODING_VERSION;
use xq_nn::policy::{POLICY_INDEX_VERSION, POLICY_SIZE};

use crate::config::{NetConfig, TrainConfig};
use crate::error::TrainError;

/// Value of [`Sidecar::format`].
pub const FORMAT: &str = "xqzero-checkpoint";
/// Version of the sidecar layout.
pub const FORMAT_VERSION: u32 = 1;

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
    /// The training configuration in force when this was written.
    pub train: Option<TrainConfig>,
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
    pub fn read(path: &Path) -> Result<Sidecar, TrainError> {
        let text = fs::read_to_string(path).map_err(|e| TrainError::io(path, e))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|source| TrainError::Json {
                path: path.into(),
                source,
            })?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(TrainError::BadCheckpoint {
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
            return Err(TrainError::EncodingVersion {
                path: path.into(),
                found,
                expected: ENCODING_VERSION,
            });
        }
        let sidecar: Sidecar =
            serde_json::from_value(value).map_err(|source| TrainError::Json {
                path: path.into(),
                source,
            })?;
        if sidecar.format_version > FORMAT_VERSION {
            return Err(TrainError::BadCheckpoint {
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
            return Err(TrainError::PolicyIndexVersion {
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
            .map_err(|e| TrainError::BadCheckpoint {
                path: path.into(),
                what: e.to_string(),
            })?;
        Ok(sidecar)
    }

    /// Writes the sidecar atomically.
    pub fn write(&self, path: &Path) -> Result<(), TrainError> {
        let text = serde_json::to_string_pretty(self).map_err(|source| TrainError::Json {
            path: path.into(),
            source,
        })?;
        write_atomic(path, |tmp| {
            fs::write(tmp, text.as_bytes()).map_err(|e| TrainError::io(tmp, e))
        })
    }
}

/// Writes `path` through `write` on a temporary file next to it, then syncs and renames
/// it over `path` ([`xq_data::io::write_file_atomic`], the workspace's one atomic
/// write), so readers see the old file or the complete new one, never a torn one.
///
/// # Errors
/// `write`'s error, or [`TrainError::Write`] naming `path` (an I/O error on the
/// temporary file, such as a full disk, is reported as one writing `path`).
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), TrainError>,
) -> Result<(), TrainError> {
    let failed = |source| TrainError::Write {
        path: path.into(),
        source,
    };
    let mut tmp_seen = None;
    xq_data::io::write_file_atomic(
        path,
        |tmp| {
            tmp_seen = Some(tmp.to_path_buf());
            write(tmp)
        },
        failed,
    )
    .map_err(|e| match e {
        TrainError::Io { path: p, source } if Some(&p) == tmp_seen.as_ref() => failed(source),
        e => e,
    })
}

/// Writes named tensors as safetensors, atomically.
pub fn write_tensors(path: &Path, tensors: &[(String, Tensor)]) -> Result<(), TrainError> {
    write_atomic(path, |tmp| {
        // safetensors needs contiguous CPU-readable data; copies are cheap next to I/O.
        let host: Vec<(String, Tensor)> = tensors
            .iter()
            .map(|(n, t)| Ok((n.clone(), t.f_detach()?.f_contiguous()?)))
            .collect::<Result<_, tch::TchError>>()?;
        Tensor::write_safetensors(&host, tmp).map_err(|e| match e {
            tch::TchError::SafeTensorError {
                err: safetensors::SafeTensorError::IoError(source),
                ..
            } => TrainError::io(tmp, source),
            e => e.into(),
        })
    })
}

/// Reads a safetensors file into CPU tensors by name.
pub fn read_tensors(path: &Path) -> Result<HashMap<String, Tensor>, TrainError> {
    if !path.exists() {
        return Err(TrainError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::NotFound, "file not found"),
        ));
    }
    Ok(Tensor::read_safetensors(path)?.into_iter().collect())
}

/// Copies `saved` into the variables `vars` (by name; kinds and devices are converted).
/// Every variable must be present with its exact shape, and nothing else may be in the
/// file: a mismatch means the file belongs to another architecture.
pub fn load_into(
    vars: &HashMap<String, Tensor>,
    saved: &HashMap<String, Tensor>,
    path: &Path,
) -> Result<(), TrainError> {
    let bad = |what: String| TrainError::BadCheckpoint {
        path: path.into(),
        what,
    };
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort();
    for name in names {
        let src = saved
            .get(name)
            .ok_or_else(|| bad(format!("tensor {name} is missing")))?;
        let mut dst = vars[name].shallow_clone();
        if src.size() != dst.size() {
            return Err(bad(format!(
                "tensor {name} has shape {:?}, the network expects {:?}",
                src.size(),
                dst.size()
            )));
        }
        tch::no_grad(|| dst.f_copy_(src))?;
    }
    if let Some(extra) = saved.keys().find(|k| !vars.contains_key(*k)) {
        return Err(bad(format!(
            "unexpected tensor {extra} (another architecture?)"
        )));
    }
    Ok(())
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
pub fn list_checkpoints(dir: &Path) -> Result<Vec<(u64, PathBuf)>, TrainError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(TrainError::io(dir, e)),
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| TrainError::io(dir, e))?;
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
pub fn resolve(path: &Path) -> Result<PathBuf, TrainError> {
    if path.is_file() {
        return Ok(path.to_path_buf());
    }
    if !path.exists() {
        return Err(TrainError::io(
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
    Err(TrainError::NoCheckpoint(path.to_path_buf()))
}

/// Deletes all but the newest `keep` checkpoints in `dir` (sidecar first, so a
/// half-deleted checkpoint is never mistaken for a complete one).
pub fn prune(dir: &Path, keep: usize) -> Result<(), TrainError> {
    let all = list_checkpoints(dir)?;
    if keep == 0 || all.len() <= keep {
        return Ok(());
    }
    for (step, sidecar) in &all[..all.len() - keep] {
        fs::remove_file(sidecar).map_err(|e| TrainError::io(sidecar, e))?;
        for kind in ["weights", "ema", "optim"] {
            let f = dir.join(format!("{}.{kind}.safetensors", stem(*step)));
            match fs::remove_file(&f) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(TrainError::io(&f, e)),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("xq-train-ckpt-{tag}-{}", std::process::id()));
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
        // Tensors without a sidecar are an unfinished save: not a checkpoint.
        fs::write(d.join(format!("{}.weights.safetensors", stem(900))), "").unwrap();
        fs::write(d.join("ckpt-junk.json"), "{}").unwrap();
        let steps: Vec<u64> = list_checkpoints(&d).unwrap().iter().map(|c| c.0).collect();
        assert_eq!(steps, [5, 20, 100]);
        assert_eq!(resolve(&d).unwrap(), d.join(format!("{}.json", stem(100))));
        prune(&d, 2).unwrap();
        let steps: Vec<u64> = list_checkpoints(&d).unwrap().iter().map(|c| c.0).collect();
        assert_eq!(steps, [20, 100]);
        let empty = temp_dir("empty");
        assert!(matches!(resolve(&empty), Err(TrainError::NoCheckpoint(_))));
        fs::remove_dir_all(&d).unwrap();
        fs::remove_dir_all(&empty).unwrap();
    }

    #[test]
    fn sidecar_of_another_encoding_version_is_refused_by_name() {
        let d = temp_dir("enc");
        let path = d.join("ckpt-0000000001.json");
        let mut s = Sidecar::new(NetConfig::small(), 1, 10, 0);
        s.write(&path).unwrap();
        assert_eq!(Sidecar::read(&path).unwrap(), s);
        s.encoding_version = ENCODING_VERSION + 1;
        s.write(&path).unwrap();
        let err = Sidecar::read(&path).unwrap_err();
        assert!(matches!(err, TrainError::EncodingVersion { .. }), "{err}");
        assert!(err.to_string().contains("encoding version"), "{err}");
        fs::write(&path, "{\"format\": \"something else\"}").unwrap();
        assert!(matches!(
            Sidecar::read(&path),
            Err(TrainError::BadCheckpoint { .. })
        ));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn atomic_write_leaves_no_temporary_and_a_failed_write_keeps_the_old_file() {
        let d = temp_dir("atomic");
        let path = d.join("x.json");
        xq_data::io::write_bytes_atomic(&path, b"one").unwrap();
        let r = write_atomic(&path, |tmp| {
            fs::write(tmp, b"half").unwrap();
            Err(TrainError::Config("simulated failure".into()))
        });
        assert!(r.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"one");
        let names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from("x.json")]);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_disk_that_fills_mid_file_is_a_write_error_naming_the_file_and_keeps_the_old_one() {
        let d = temp_dir("enospc");
        let path = d.join("ckpt-0000000002.json");
        xq_data::io::write_bytes_atomic(&path, b"old").unwrap();
        let err = write_atomic(&path, |tmp| {
            fs::write(tmp, b"ha").unwrap();
            Err(TrainError::io(
                tmp,
                std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left on device"),
            ))
        })
        .unwrap_err();
        match &err {
            TrainError::Write { path: p, source } => {
                assert_eq!(p, &path);
                assert_eq!(source.kind(), std::io::ErrorKind::StorageFull);
            }
            other => panic!("expected TrainError::Write, got {other:?}"),
        }
        let text = err.to_string();
        assert!(text.starts_with("cannot write "), "{text}");
        assert!(
            text.contains("ckpt-0000000002.json: No space left"),
            "{text}"
        );
        assert_eq!(fs::read(&path).unwrap(), b"old");
        let names: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from("ckpt-0000000002.json")]);
        fs::remove_dir_all(&d).unwrap();
    }
}
