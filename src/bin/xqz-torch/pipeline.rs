//! The training commands (`run`, `selfplay`, `train`, `gate`): their flags, the call
//! into xq-pipeline, and what they print. The pipeline decides and returns what it
//! did; this file spells the flags and the output.

use std::{
    path::PathBuf,
    sync::{Arc, atomic::AtomicBool},
};

use anyhow::{Result, bail};
use xq_pipeline::{
    config::RunConfig,
    gate::{GateProgress, gate_once},
    run::RunSummary,
    selfplay::{Session, accepted_network, book, play, wait_for_network},
    train::{StopReason, train_once},
};
use xq_run::{RunDir, report::EloView};

use crate::bars;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The run's configuration (TOML; see configs/README.md).
    #[arg(long)]
    config: PathBuf,
    /// Run directory (default: `[run] dir` of the config).
    #[arg(long)]
    run: Option<PathBuf>,
}

/// The flags of a command that works on an existing run: which run, which config.
#[derive(clap::Args, Debug)]
pub struct RunDirArgs {
    /// Run directory: self-play chunks in DIR/data and PGN records in DIR/games,
    /// checkpoints in DIR/checkpoints, networks in DIR/models.
    #[arg(long, value_name = "DIR")]
    run: PathBuf,
    /// The run's config file; the whole file is read and checked, as `xqz run` does
    /// (default: DIR/config.toml if it exists, else the built-in defaults).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// How a long command shows its progress.
#[derive(clap::Args, Debug)]
pub struct ProgressArgs {
    /// Progress as plain log lines even on a terminal.
    #[arg(long)]
    log_lines: bool,
    /// No progress output, only the summary (and warnings).
    #[arg(long, conflicts_with = "log_lines")]
    quiet: bool,
}

impl ProgressArgs {
    fn observer(&self) -> xq_pipeline::progress::SharedObserver {
        bars::for_command(self.quiet, self.log_lines)
    }
}

#[derive(clap::Args, Debug)]
pub struct SelfplayArgs {
    #[command(flatten)]
    dir: RunDirArgs,
    /// Games to play (default: until the process is stopped).
    #[arg(long, value_name = "N")]
    games: Option<u64>,
    /// Seed of every random choice (default: drawn at random and recorded in
    /// DIR/workers/<worker>.toml, so workers sharing a run play different games).
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    #[command(flatten)]
    progress: ProgressArgs,
}

#[derive(clap::Args, Debug)]
pub struct TrainArgs {
    #[command(flatten)]
    dir: RunDirArgs,
    /// Optimiser steps to take in this invocation. On self-play data this waits (and
    /// says so) whenever the pacing holds training back, until self-play writes more.
    /// Default: as far as the pacing allows now on self-play data; with --pgn,
    /// `[train.pretrain] steps` or 1000.
    #[arg(long, value_name = "N")]
    steps: Option<u64>,
    /// Train on these PGN files (ICCS moves) instead of the run's self-play data.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pgn: Vec<PathBuf>,
    #[command(flatten)]
    progress: ProgressArgs,
}

#[derive(clap::Args, Debug)]
pub struct GateArgs {
    #[command(flatten)]
    dir: RunDirArgs,
}

/// `xqz run`: the loop until the budget is spent, then its summary.
pub fn run(a: RunArgs) -> Result<()> {
    let obs = bars::for_run();
    let cfg = RunConfig::load(&a.config)?;
    let dir = match (&a.run, &cfg.run.dir) {
        (Some(d), _) | (None, Some(d)) => d.clone(),
        (None, None) => bail!(
            "no run directory: give --run DIR or set [run] dir in {}",
            a.config.display()
        ),
    };
    let run = RunDir::open(&dir)?;
    let summary = xq_pipeline::run::run(&run, &cfg, &obs)?;
    print_summary(&summary);
    Ok(())
}

fn print_summary(s: &RunSummary) {
    println!("run {} finished", s.dir.display());
    println!(
        "  {:.1} minutes, {} self-play games, {} positions, {} training steps, {} accepted networks",
        s.minutes, s.games, s.positions, s.steps, s.accepted
    );
    let t = &s.loop_time;
    if let Some(share) = t.selfplay_share() {
        println!(
            "  loop {:.1} minutes: self-play {:.0}%, training {:.0}%, gating and rating {:.0}%",
            t.total / 60.0,
            100.0 * share,
            100.0 * t.train / t.total,
            100.0 * t.gate / t.total
        );
    }
    for r in &s.ratings {
        let games = match r.result.cutoff {
            Some(cut) => format!(
                "{} of {} games, {}",
                r.result.games,
                r.result.planned_games,
                cut.describe()
            ),
            None => format!("{} games", r.result.games),
        };
        println!(
            "  {} {} vs {}: score {} ({games}), Elo {}",
            if r.is_final { "final " } else { "rating" },
            r.model,
            r.opponent,
            r.result
                .score
                .map_or("-".into(), |s| format!("{:.1}%", 100.0 * s)),
            EloView::of(&r.result).text(),
        );
    }
    match &s.best_player {
        Some(p) => println!("  best player: {}", p.display()),
        None => println!("  no network was accepted yet"),
    }
}

/// `xqz selfplay`: a worker playing into the run until its games are played or it is
/// stopped. SIGTERM (`scancel`, a pod's eviction) and SIGINT end it cleanly, writing
/// every finished game (a second signal kills at once).
pub fn selfplay(a: SelfplayArgs) -> Result<()> {
    let interrupt = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        // The second signal terminates: registered first, it sees the flag unset.
        signal_hook::flag::register_conditional_shutdown(signal, 1, Arc::clone(&interrupt))?;
        signal_hook::flag::register(signal, Arc::clone(&interrupt))?;
    }
    let obs = a.progress.observer();
    let run = RunDir::open(&a.dir.run)?;
    let run_config = RunConfig::for_run(&run, a.dir.config.as_deref())?;
    let config = &run_config.selfplay;
    let session = Session {
        games: a.games,
        interrupt: Some(interrupt),
        book: book(&run_config)?,
        // A run that pre-trains publishes a network: no game waits for it with the
        // uniform evaluator (issue #45).
        wait_for_network: run_config.train.data.pretrain.is_some(),
        ..Session::worker(a.seed)
    };
    if session.wait_for_network && !wait_for_network(&run, &session, &obs) {
        return Ok(());
    }
    let network = accepted_network(&run, config)?;
    obs.log(&format!(
        "selfplay: worker {}, seed {}, network {}, {} games at once{}",
        session.worker,
        session.seed,
        network.evaluator.name(),
        config.parallel_games,
        run_config
            .file
            .as_ref()
            .map(|p| format!(", config {}", p.display()))
            .unwrap_or_default()
    ));
    let summary = play(&run, config, network, session, &obs)?;
    println!(
        "selfplay: worker {}: {}",
        summary.worker_id,
        summary.stats.line()
    );
    Ok(())
}

/// `xqz train`: one invocation's training, then where it stands.
pub fn train(a: TrainArgs) -> Result<()> {
    let run = RunDir::open(&a.dir.run)?;
    let cfg = RunConfig::for_run(&run, a.dir.config.as_deref())?.train;
    let trained = train_once(&run, &cfg, a.steps, &a.pgn, &a.progress.observer())?;
    if let Some(h) = &trained.holdout {
        println!(
            "held-out top-1 {:.4} (uniform baseline {:.4}) policy loss {:.4} on {} positions",
            h.policy_top1, h.uniform_top1, h.policy_loss, h.positions
        );
    }
    let p = &trained.progress;
    if p.reason == StopReason::NeedData {
        println!(
            "stopped for more self-play data: {} positions, {} self-play samples trained",
            p.positions, p.selfplay_samples
        );
    }
    println!(
        "step {} ({} this run), {} samples",
        p.step, p.steps_taken, p.samples
    );
    match &p.checkpoint {
        Some(path) => println!("checkpoint {}", path.display()),
        None => println!("no checkpoint written (no steps taken)"),
    }
    Ok(())
}

/// `xqz gate`: gates the newest candidate, the match's status on stderr after each
/// pair, the decision on stdout.
pub fn gate(a: GateArgs) -> Result<()> {
    let run = RunDir::open(&a.dir.run)?;
    let cfg = RunConfig::for_run(&run, a.dir.config.as_deref())?;
    let mut print = |p: GateProgress<'_>| match p {
        GateProgress::Note(line) => eprintln!("{line}"),
        GateProgress::Match(s) => eprintln!("gate: {}", s.line()),
    };
    match gate_once(&run, &cfg.gate, cfg.loop_quiescence(), None, &mut print)? {
        None => println!(
            "nothing to gate: no pending candidate in {}",
            run.candidates_dir().display()
        ),
        Some(true) => println!("accepted"),
        Some(false) => println!("rejected"),
    }
    Ok(())
}
