//! `xqz`: the xqzero command line.
//!
//! Each subcommand lives in its own module under `cmd/`; `main` only parses arguments
//! and turns errors into a one-line message and a non-zero exit status.

mod cmd;
mod rundir;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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

#[derive(Subcommand, Debug)]
enum Command {
    /// The main job: self-play, training, gating, export and rating until the budget is spent (resumable).
    Run(cmd::run::Args),
    /// Count leaf nodes of the legal move tree (move-generator check and benchmark).
    Perft(cmd::perft::Args),
    /// Speed benchmarks.
    Bench(cmd::bench::Args),
    /// Play ICCS moves from a position and write them in Chinese, WXF or ICCS notation.
    Notation(cmd::notation::Args),
    /// Play ICCS moves and print the position and the game result as JSON.
    Status(cmd::status::Args),
    /// Play self-play games into a run directory (training chunks and PGN records).
    Selfplay(cmd::selfplay::Args),
    /// Play a match between two players (paired openings, Elo, optional SPRT).
    Match(cmd::matches::Args),
    /// Run a round robin, Swiss or knockout tournament from a TOML file.
    Tournament(cmd::tournament::Args),
    /// Rate players by maximum likelihood from PGN files or from games it plays.
    Ladder(cmd::ladder::Args),
    /// Gate the newest candidate network of a run against the accepted one.
    Gate(cmd::gate::Args),
    /// Run the UCCI engine (also UCI) on stdin/stdout.
    Ucci(cmd::ucci::Args),
    /// Write a self-contained UCCI player directory from a training run.
    Export(cmd::export::Args),
    /// Write a self-contained HTML report of a training run (Elo, losses, self-play, games).
    Report(cmd::report::Args),
    /// Train the run's network on its self-play data (paced) or on PGN game records.
    Train(cmd::train::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // One line naming the problem, as for every other bad input.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            eprintln!("error: {first} (see xqz --help)");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Run(args) => cmd::run::run(args),
        Command::Perft(args) => cmd::perft::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Notation(args) => cmd::notation::run(args),
        Command::Status(args) => cmd::status::run(args),
        Command::Selfplay(args) => cmd::selfplay::run(args),
        Command::Match(args) => cmd::matches::run(args),
        Command::Tournament(args) => cmd::tournament::run(args),
        Command::Ladder(args) => cmd::ladder::run(args),
        Command::Gate(args) => cmd::gate::run(args),
        Command::Ucci(args) => cmd::ucci::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Train(args) => cmd::train::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", format_error(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, skipping causes whose text the message
/// before them already ends with. Multi-line messages (TOML's, which draw the source
/// line with a caret) are folded: their source-drawing lines are dropped.
fn format_error(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain().map(|c| one_line(&c.to_string())) {
        if line.is_empty() {
            line = cause;
        } else if !line.ends_with(&cause) {
            line = format!("{line}: {cause}");
        }
    }
    line
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with('|')
                && !l.split_once('|').is_some_and(|(n, _)| {
                    !n.is_empty() && n.trim().chars().all(|c| c.is_ascii_digit())
                })
        })
        .collect::<Vec<_>>()
        .join(": ")
}
