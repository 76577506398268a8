//! `xqz perft`: Stockfish-style perft output.

use std::time::Instant;

use anyhow::Result;
use xq_core::perft::{divide, perft};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Position to count from (default: the starting position).
    #[arg(long)]
    fen: Option<String>,
    /// Depth in plies.
    #[arg(long)]
    depth: u32,
    /// Print the count under each legal move first.
    #[arg(long)]
    divide: bool,
}

pub fn run(args: Args) -> Result<()> {
    let pos = super::parse_fen(args.fen.as_deref())?;
    let start = Instant::now();
    let nodes = if args.divide && args.depth > 0 {
        let parts = divide(&pos, args.depth);
        for (m, n) in &parts {
            println!("{m}: {n}");
        }
        println!();
        parts.iter().map(|(_, n)| n).sum()
    } else {
        perft(&pos, args.depth)
    };
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "time {:.3} s, {:.1} Mnodes/s",
        secs,
        nodes as f64 / secs.max(1e-9) / 1e6
    );
    println!("Nodes searched: {nodes}");
    Ok(())
}
