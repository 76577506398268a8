//! `xqz export`: writes a self-contained UCCI player directory from a training run.

use std::path::PathBuf;

use anyhow::{Context, Result};
use xq_eval::net::NetSettings;
use xq_pipeline::export::{ExportError, ExportOptions, export_player, model_to_export};
use xq_run::RunDir;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
The network is the run's accepted one (models/accepted.json), or the newest checkpoint \
when nothing has been accepted yet, or --model NAME (models/accepted/NAME, \
models/candidates/NAME, checkpoints/NAME.json, or a sidecar path). OUT (default RUN/players/<model>, where `xqz run` exports too) receives \
network.safetensors (EMA weights), network.json, engine.toml, README.txt, a copy of this \
xqz binary and the launcher xqzero-engine, which a GUI starts with no arguments. OUT is \
built under a temporary name and renamed into place.")]
pub struct Args {
    /// The training run directory.
    #[arg(long, value_name = "DIR")]
    run: PathBuf,
    /// A model by name instead of the accepted one.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// The player directory to write (default: RUN/players/<model>).
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
    /// Replace OUT if it exists.
    #[arg(long)]
    force: bool,
    /// The engine's name (default xqzero-<run>-<step>).
    #[arg(long)]
    name: Option<String>,
    /// Root visits per move when the GUI gives no time or node limit.
    #[arg(long, default_value_t = NetSettings::default().visits)]
    visits: u32,
    /// Leaves per network call.
    #[arg(long, default_value_t = NetSettings::default().batch)]
    batch: usize,
    /// CPU threads of the network (0 = the backend's default: one natively, all cores with libtorch).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Weight in percent of a quiescence search mixed into every leaf's value and of a
    /// winning-capture prior mixed into its policy (0 = plain AlphaZero search).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=100))]
    quiescence: u8,
}

pub fn run(args: Args) -> Result<()> {
    let binary = std::env::current_exe().context("cannot find the running xqz binary")?;
    let settings = NetSettings {
        visits: args.visits,
        batch: args.batch,
        threads: args.threads,
        leaf_quiescence: f32::from(args.quiescence) / 100.0,
        ..NetSettings::default()
    };
    // A run that is not there has no network to export (and none is created for it).
    let run = RunDir::existing(&args.run).map_err(|e| ExportError::NoModel {
        run: args.run.clone(),
        why: e.to_string(),
    })?;
    let model = model_to_export(&run, args.model.as_deref())?;
    let summary = export_player(
        &run,
        &model,
        &ExportOptions {
            out: args.out,
            binary,
            settings,
            name: args.name,
            force: args.force,
        },
    )?;
    println!(
        "exported {} (step {}, from {}) to {}",
        summary.name,
        summary.step,
        summary.source_checkpoint.display(),
        summary.out.display()
    );
    Ok(())
}
