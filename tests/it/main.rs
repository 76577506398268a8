//! The root package's integration tests, one binary with a module per area (as ripgrep
//! does): the workspace links libtorch into one test executable, not one per file.
//! Run one area with a filter, e.g. `cargo test --test it cli_run::`.

mod common;
/// The pipeline's trainer fixtures, shared with `crates/pipeline/tests`.
#[path = "../../crates/pipeline/tests/common/mod.rs"]
mod trainer_fixtures;

mod architecture;
mod cli_backend;
mod cli_eval;
mod cli_native;
mod cli_notation;
mod cli_report;
mod cli_run;
mod cli_selfplay;
mod cli_status;
mod cli_train;
mod cli_ucci;
mod deploy;
mod disk_full;
mod many_writers;
mod slurm;
mod xboard;
