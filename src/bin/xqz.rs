//! `xqz`: the xqzero command line's front end. It links no libtorch: the commands
//! that need no network run here (`xqz report` among them: it only reads a run
//! directory), and so do matches, tournaments, ratings (`xqz strength --run` too) and
//! the UCCI engine with network players, on the native CPU backend (xq-native), unless
//! `XQZ_BACKEND` asks for libtorch (`torch`, or `auto` on a machine with an NVIDIA
//! GPU). The others (training, gating, export, benchmarks) are handed to `xqz-torch`
//! next to it, which replaces this process (see the `xqzero` library).

use std::{ffi::OsString, process::ExitCode};

use clap::{Parser, Subcommand};
use xqzero::LocalCommand;

#[derive(Parser, Debug)]
#[command(
    name = "xqz",
    version,
    about = "xqzero: train and measure Xiangqi engines the AlphaZero way"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The arguments of a command that `xqz-torch` parses (`--help` included).
#[derive(clap::Args, Debug)]
#[command(disable_help_flag = true)]
struct Forward {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    args: Vec<OsString>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The main job: self-play, training, gating, export and rating until the budget is spent (resumable).
    Run(Forward),
    /// Play self-play games into a run directory (training chunks and PGN records).
    Selfplay(Forward),
    /// Train the run's network on its self-play data (paced) or on PGN game records.
    Train(Forward),
    /// Gate the newest candidate network of a run against the accepted one.
    Gate(Forward),
    /// Write a self-contained UCCI player directory from a training run.
    Export(Forward),
    /// Write a self-contained HTML report of a training run (Elo, losses, self-play, games).
    Report(xqzero::cmd::report::Args),
    /// Speed benchmarks.
    Bench(Forward),
    #[command(flatten)]
    Local(LocalCommand),
}

/// The commands whose flags only `xqz-torch` knows (for `xqz help COMMAND`).
const FORWARDED: [&str; 6] = ["run", "selfplay", "train", "gate", "export", "bench"];

fn main() -> ExitCode {
    // `xqz help train` would show the forwarding stub's empty usage: the backend
    // answers it, as it answers `xqz train --help`.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let [help, command, ..] = args.as_slice()
        && help == "help"
        && FORWARDED.iter().any(|c| command == c)
    {
        return xqzero::finish(Err(xqzero::exec_backend(args)));
    }
    let cli: Cli = xqzero::parse_or_exit();
    let native = match xq_nn::BackendChoice::from_env() {
        // `auto` with a GPU hands networks to libtorch, when xqz-torch is here to take
        // them (an exported player has only this binary).
        Ok(choice) => {
            choice.is_native(|| xq_nn::cuda_device_present() && xqzero::backend_binary().is_ok())
        }
        Err(e) => return xqzero::finish(Err(e.into())),
    };
    match cli.command {
        // Reads a run directory, never a network.
        Command::Report(a) => xqzero::finish(xqzero::cmd::report::run(a)),
        Command::Local(c) if !c.needs_backend() => xqzero::finish(c.run()),
        // Networks on the CPU run here, on the native backend, without libtorch.
        Command::Local(c) if native => {
            xq_native::register_backend();
            xqzero::finish(c.run())
        }
        _ => xqzero::finish(Err(xqzero::exec_backend(std::env::args_os().skip(1)))),
    }
}
