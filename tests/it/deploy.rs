//! The deployment files: `scripts/k8s/run.yaml` validates against the Kubernetes schema
//! (kubernetes-validate, installed into .venv by scripts/setup, strict: unknown fields
//! are errors), and the validator does reject a broken manifest. The Slurm job files
//! run on a real cluster in tests/it/slurm.rs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::assert_ok;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn validate(manifest: &Path) -> Output {
    let validator = repo().join(".venv/bin/kubernetes-validate");
    Command::new(&validator)
        .args(["--strict", "--quiet"])
        .arg(manifest)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup)", validator.display()))
}

#[test]
fn the_kubernetes_manifest_validates_against_the_schema() {
    let out = validate(&repo().join("scripts/k8s/run.yaml"));
    assert_ok(&out, "kubernetes-validate");
}

#[test]
fn the_validator_rejects_a_misspelt_field() {
    let manifest = std::fs::read_to_string(repo().join("scripts/k8s/run.yaml")).unwrap();
    assert!(manifest.contains("workingDir:"));
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("run.yaml");
    std::fs::write(&broken, manifest.replace("workingDir:", "workDir:")).unwrap();
    let out = validate(&broken);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("workDir"), "{text}");
}

/// The job files ask for no GPU themselves: a CPU-only cluster rejects `--gres=gpu`, and
/// a GPU cluster adds it on the command line (their headers say how).
#[test]
fn the_slurm_job_files_request_no_gpu_in_their_headers() {
    for job in ["trainer.sbatch", "selfplay.sbatch"] {
        let text = std::fs::read_to_string(repo().join("scripts/slurm").join(job)).unwrap();
        for line in text.lines().filter(|l| l.starts_with("#SBATCH")) {
            assert!(!line.contains("--gres"), "{job}: {line}");
        }
        assert!(
            text.contains("--gres=gpu:1"),
            "{job} documents the GPU case"
        );
        assert!(
            text.contains("exec \"$XQZ\""),
            "{job}: signals must reach xqz"
        );
    }
}
