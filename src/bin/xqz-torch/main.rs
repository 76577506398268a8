//! `xqz-torch`: the xqzero command line with libtorch linked: the trainer, and the
//! network backend where a CUDA device is present (on the CPU, networks run on the
//! native backend unless `XQZ_BACKEND=torch`). `xqz` hands it the training-run
//! commands and any network command that should run on libtorch; it runs each itself.
//! `xqz report` is not among them: it reads a run directory, which `xqz` does alone.

mod bars;
mod bench;
mod export;
mod pipeline;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use xqzero::LocalCommand;

#[derive(Parser, Debug)]
#[command(
    name = "xqz",
    bin_name = "xqz",
    version,
    about = "xqzero: train and measure Xiangqi engines the AlphaZero way"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The main job: self-play, training, gating, export and rating until the budget is spent (resumable).
    Run(pipeline::RunArgs),
    /// Play self-play games into a run directory (training chunks and PGN records).
    Selfplay(pipeline::SelfplayArgs),
    /// Train the run's network on its self-play data (paced) or on PGN game records.
    Train(pipeline::TrainArgs),
    /// Gate the newest candidate network of a run against the accepted one.
    Gate(pipeline::GateArgs),
    /// Write a self-contained UCCI player directory from a training run.
    Export(export::Args),
    /// Speed benchmarks.
    Bench(bench::Args),
    #[command(flatten)]
    Local(LocalCommand),
}

fn main() -> ExitCode {
    if let Err(e) = xqzero::check_front_build() {
        return xqzero::finish(Err(e));
    }
    // Registered before any command runs, so that every network of the process (self-play,
    // players, the UCCI engine) loads on the one backend `XQZ_BACKEND` chooses.
    if let Err(e) = xq_pipeline::backend::network_backend() {
        return xqzero::finish(Err(e.into()));
    }
    let cli: Cli = xqzero::parse_or_exit();
    xqzero::finish(match cli.command {
        Command::Run(a) => pipeline::run(a),
        Command::Selfplay(a) => pipeline::selfplay(a),
        Command::Train(a) => pipeline::train(a),
        Command::Gate(a) => pipeline::gate(a),
        Command::Export(a) => export::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Local(c) => c.run(),
    })
}
