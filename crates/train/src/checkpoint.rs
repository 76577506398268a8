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
//! versions against this build before touching a tensor. Its type, its reader and the
//! checkpoint file names are torch-free and live in [`xq_nn::checkpoint`] (every
//! backend reads checkpoints through them); this module adds the tensors and the
//! atomic writes.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use tch::nn::VarStore;
use tch::{Device, Tensor};
pub use xq_nn::checkpoint::{
    FORMAT, FORMAT_VERSION, NetConfig, OptimizerState, Sidecar, list_checkpoints, resolve, stem,
};

use crate::error::TrainError;
use crate::net::{Net, randomise_for_comparison};

/// Writes `sidecar` to `path` atomically (see [`write_atomic`]).
pub fn write_sidecar(sidecar: &Sidecar, path: &Path) -> Result<(), TrainError> {
    let text = sidecar.to_json();
    write_atomic(path, |tmp| {
        fs::write(tmp, text.as_bytes()).map_err(|e| TrainError::io(tmp, e))
    })
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

/// Writes a checkpoint of `cfg` into `dir` (created if need be): a network initialised
/// from `seed` and then [`randomise_for_comparison`]-ed, as both its weights and its
/// EMA, at step 1. Returns the sidecar's path. For tests and benchmarks that compare
/// evaluators on one network.
pub fn write_random(dir: &Path, cfg: &NetConfig, seed: i64) -> Result<PathBuf, TrainError> {
    fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
    let vs = VarStore::new(Device::Cpu);
    {
        let _guard = crate::net::init_lock();
        tch::manual_seed(seed);
        Net::new(&vs.root(), cfg)?;
    }
    randomise_for_comparison(&vs)?;
    let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    write_tensors(&dir.join("net.safetensors"), &vars)?;
    let mut sc = Sidecar::new(cfg.clone(), 1, 0, seed as u64);
    sc.weights = "net.safetensors".into();
    sc.ema = "net.safetensors".into();
    let path = dir.join("ckpt-0000000001.json");
    write_sidecar(&sc, &path)?;
    Ok(path)
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
    use crate::config::NetConfig;
    use std::path::PathBuf;
    use xq_nn::checkpoint::CheckpointError;
    use xq_nn::encode::ENCODING_VERSION;

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
        assert!(matches!(
            resolve(&empty).map_err(TrainError::from),
            Err(TrainError::Checkpoint(CheckpointError::NoCheckpoint(_)))
        ));
        fs::remove_dir_all(&d).unwrap();
        fs::remove_dir_all(&empty).unwrap();
    }

    #[test]
    fn sidecar_of_another_encoding_version_is_refused_by_name() {
        let d = temp_dir("enc");
        let path = d.join("ckpt-0000000001.json");
        let mut s = Sidecar::new(NetConfig::small(), 1, 10, 0);
        write_sidecar(&s, &path).unwrap();
        assert_eq!(Sidecar::read(&path).unwrap(), s);
        s.encoding_version = ENCODING_VERSION + 1;
        write_sidecar(&s, &path).unwrap();
        let err = TrainError::from(Sidecar::read(&path).unwrap_err());
        assert!(
            matches!(
                err,
                TrainError::Checkpoint(CheckpointError::EncodingVersion { .. })
            ),
            "{err}"
        );
        assert!(err.to_string().contains("encoding version"), "{err}");
        fs::write(&path, "{\"format\": \"something else\"}").unwrap();
        assert!(matches!(
            Sidecar::read(&path).map_err(TrainError::from),
            Err(TrainError::Checkpoint(
                CheckpointError::BadCheckpoint { .. }
            ))
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
