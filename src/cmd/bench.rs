//! `xqz bench`: speed benchmarks of the pieces of xqzero.

use anyhow::Result;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand, Debug)]
enum What {
    /// Perft nodes/second, single-threaded.
    Perft {
        /// Depth for the starting position.
        #[arg(long, default_value_t = 5)]
        depth: u32,
    },
}

pub fn run(args: Args) -> Result<()> {
    match args.what {
        What::Perft { depth } => {
            let pos = xq_core::Position::startpos();
            let start = std::time::Instant::now();
            let nodes = xq_core::perft::perft(&pos, depth);
            let secs = start.elapsed().as_secs_f64();
            println!(
                "startpos depth {depth}: {nodes} nodes in {secs:.3} s = {:.1} Mnps",
                nodes as f64 / secs / 1e6
            );
            Ok(())
        }
    }
}
