//! `xqz ucci`: the UCCI 3.0 engine (also speaking UCI) on stdin/stdout.
//!
//! With `--player DIR` it plays with an exported player's network and settings (what
//! the exported launcher runs); with `--checkpoint PATH` with a training checkpoint and
//! default search settings; with neither, with the built-in alpha-beta engine, so the
//! protocol can always be tried.

use std::path::PathBuf;

use anyhow::{Context, Result};
use xq_eval::{
    net::NetSettings,
    player_dir::load_player_backend,
    ucci::{
        baseline::AlphaBetaBackend,
        engine::{Backend, Engine, Output},
        mcts_backend::MctsBackend,
    },
};

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Reads UCCI commands (ucci, setoption, position, banmoves, go, stop, ponderhit, isready, \
probe, quit) or UCI ones (uci, setoption name X value Y, go wtime/btime/winc/binc) on \
stdin and answers on stdout. Errors in the input are reported on `info string` lines; \
the engine keeps running.")]
pub struct Args {
    /// An exported player directory (see `xqz export`).
    #[arg(long, value_name = "DIR", conflicts_with = "checkpoint")]
    player: Option<PathBuf>,
    /// A network checkpoint (sidecar .json, checkpoint directory or run directory).
    #[arg(long, value_name = "PATH")]
    checkpoint: Option<PathBuf>,
    /// Root visits per move when `go` gives no time or node limit (with --checkpoint).
    #[arg(long, value_name = "N", requires = "checkpoint")]
    visits: Option<u32>,
}

pub fn run(args: Args) -> Result<()> {
    let backend: Box<dyn Backend> = if let Some(dir) = &args.player {
        Box::new(
            load_player_backend(dir)
                .with_context(|| format!("cannot load player {}", dir.display()))?,
        )
    } else if let Some(ckpt) = &args.checkpoint {
        let mut settings = NetSettings::default();
        if let Some(v) = args.visits {
            settings.visits = v;
        }
        let name = format!("xqzero {}", env!("CARGO_PKG_VERSION"));
        Box::new(MctsBackend::from_checkpoint(ckpt, settings, name)?)
    } else {
        Box::new(AlphaBetaBackend::new())
    };
    Engine::new(backend, Output::new(std::io::stdout())).run(std::io::stdin().lock());
    Ok(())
}

impl Args {
    /// Whether the engine plays with a network (`--player` or `--checkpoint`).
    pub fn loads_network(&self) -> bool {
        self.player.is_some() || self.checkpoint.is_some()
    }
}
