//! The command-line arguments of the training commands, turned into xq-pipeline's
//! options (the pipeline decides; this file only spells the flags).

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The run's configuration (TOML; see configs/README.md).
    #[arg(long)]
    config: PathBuf,
    /// Run directory (default: `[run] dir` of the config).
    #[arg(long)]
    run: Option<PathBuf>,
}

impl From<RunArgs> for xq_pipeline::run::Options {
    fn from(a: RunArgs) -> Self {
        xq_pipeline::run::Options {
            config: a.config,
            run: a.run,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct SelfplayArgs {
    /// Run directory: chunks go to DIR/data, PGN records to DIR/games.
    #[arg(long, value_name = "DIR")]
    run: PathBuf,
    /// Config file whose [selfplay] section is used; the whole file is read and checked,
    /// as `xqz run` does (default: DIR/config.toml if it exists, else the built-in
    /// defaults).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Games to play (default: until the process is stopped).
    #[arg(long, value_name = "N")]
    games: Option<u64>,
    /// Seed of every random choice (default: drawn at random and recorded in
    /// DIR/workers/<worker>.toml, so workers sharing a run play different games).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Print progress as plain log lines even on a terminal.
    #[arg(long)]
    log_lines: bool,
    /// No progress output, only the final summary.
    #[arg(long, conflicts_with = "log_lines")]
    quiet: bool,
}

impl From<SelfplayArgs> for xq_pipeline::selfplay::Options {
    fn from(a: SelfplayArgs) -> Self {
        xq_pipeline::selfplay::Options {
            run: a.run,
            config: a.config,
            games: a.games,
            seed: a.seed,
            log_lines: a.log_lines,
            quiet: a.quiet,
            interrupt: None,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct TrainArgs {
    /// Run directory: data from DIR/data, checkpoints in DIR/checkpoints.
    #[arg(long, value_name = "DIR")]
    run: PathBuf,
    /// Config file whose [train] section is used; the whole file is read and checked,
    /// as `xqz run` does (default: DIR/config.toml if it exists, else the built-in
    /// defaults).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Optimiser steps to take in this invocation. On self-play data this waits (and
    /// says so) whenever the pacing holds training back, until self-play writes more.
    /// Default: as far as the pacing allows now on self-play data; with --pgn,
    /// `[train.pretrain] steps` or 1000.
    #[arg(long, value_name = "N")]
    steps: Option<u64>,
    /// Train on these PGN files (ICCS moves) instead of the run's self-play data.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pgn: Vec<PathBuf>,
    /// Plain log lines even on a terminal.
    #[arg(long)]
    log_lines: bool,
    /// No progress output, only the summary.
    #[arg(long, conflicts_with = "log_lines")]
    quiet: bool,
}

impl From<TrainArgs> for xq_pipeline::train::Options {
    fn from(a: TrainArgs) -> Self {
        xq_pipeline::train::Options {
            run: a.run,
            config: a.config,
            steps: a.steps,
            pgn: a.pgn,
            log_lines: a.log_lines,
            quiet: a.quiet,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct GateArgs {
    /// Run directory.
    #[arg(long)]
    run: PathBuf,
    /// Config file whose `[gate]` section is used; the whole file is read and checked
    /// (default: the run's config.toml, else defaults).
    #[arg(long)]
    config: Option<PathBuf>,
}

impl From<GateArgs> for xq_pipeline::gate::Options {
    fn from(a: GateArgs) -> Self {
        xq_pipeline::gate::Options {
            run: a.run,
            config: a.config,
        }
    }
}
