//! `xqz match`: two players, paired openings, statistics and an optional SPRT.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use xq_eval::{
    clock::TimeControl,
    matches::{MatchConfig, run_match},
    player::{Player, PlayerError},
    referee::GameSettings,
};
use xq_rating::stats::SprtConfig;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// First player (see `xqz match --help` for the forms), e.g. `alphabeta:depth=3`.
    #[arg(long)]
    a: String,
    /// Second player, e.g. `fsf:skill=0`, `ucci:/path/engine`, `net:model.safetensors,visits=200`.
    #[arg(long)]
    b: String,
    /// Games to play at most (rounded up to whole colour-reversed pairs).
    #[arg(long, default_value_t = 100)]
    games: usize,
    #[command(flatten)]
    play: super::MatchFlags,
    /// Append every game to this PGN file.
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// Stop when decided: `ELO0,ELO1[,ALPHA,BETA]` (logistic Elo, pentanomial GSPRT).
    #[arg(long)]
    sprt: Option<String>,
    /// Adjudicate a draw after this many plies.
    #[arg(long, default_value_t = 600)]
    max_plies: usize,
    /// Write the result as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Parses `--sprt ELO0,ELO1[,ALPHA,BETA]`.
pub fn parse_sprt(text: &str) -> Result<SprtConfig> {
    let parts: Vec<f64> = text
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("--sprt {text:?}: expected numbers ELO0,ELO1[,ALPHA,BETA]"))?;
    let (elo0, elo1, alpha, beta) = match parts.as_slice() {
        [e0, e1] => (*e0, *e1, 0.05, 0.05),
        [e0, e1, a, b] => (*e0, *e1, *a, *b),
        _ => bail!("--sprt {text:?}: expected ELO0,ELO1 or ELO0,ELO1,ALPHA,BETA"),
    };
    SprtConfig::new(elo0, elo1, alpha, beta).with_context(|| format!("--sprt {text:?}"))
}

pub fn run(args: Args) -> Result<()> {
    let tc: TimeControl = args.play.time_control()?;
    let a = super::player_spec("a", &args.a)?;
    let b = super::player_spec("b", &args.b)?;
    let sprt = args.sprt.as_deref().map(parse_sprt).transpose()?;
    if args.games == 0 {
        bail!("--games must be at least 1");
    }
    let config = MatchConfig {
        games: args.games,
        concurrency: args.play.concurrency(),
        settings: GameSettings {
            time_control: tc,
            max_plies: args.max_plies,
            ..GameSettings::default()
        },
        openings: super::load_openings(&args.play.openings, args.play.seed)?,
        sprt,
        seed: args.play.seed,
        pgn_out: args.pgn.clone(),
        event: format!("xqz match {} vs {}", args.a, args.b),
    };
    let build_a = || -> Result<Box<dyn Player>, PlayerError> { a.build() };
    let build_b = || -> Result<Box<dyn Player>, PlayerError> { b.build() };
    let report = run_match(&build_a, &build_b, &config, &mut |s| {
        eprintln!("{}", s.line())
    })?;
    let json = report.summary();
    println!("{}", report.status.line());
    if let Some(d) = report.decision {
        println!("SPRT: {d:?}");
    }
    if let Some(path) = &args.json {
        xq_run::write_atomic(path, serde_json::to_string_pretty(&json)?.as_bytes())?;
    }
    Ok(())
}

impl Args {
    /// The two player specifications as given.
    pub fn player_texts(&self) -> [&str; 2] {
        [&self.a, &self.b]
    }
}
