//! `xqz ladder`: maximum-likelihood ratings from PGN files, or from a round robin of
//! players it plays itself.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use xq_eval::{
    clock::TimeControl,
    matches::{MatchConfig, run_match},
    player::{Player, PlayerError},
    referee::GameSettings,
};
use xq_rating::{
    GameRecord, GameResult,
    stats::{LadderConfig, fit_ladder},
};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// PGN files to rate (their Red, Black and Result tags).
    #[arg(long, num_args = 1..)]
    pgn: Vec<PathBuf>,
    /// Players to rate by playing a round robin (player specifications).
    #[arg(long, num_args = 1..)]
    players: Vec<String>,
    /// Games per pairing when playing.
    #[arg(long, default_value_t = 10)]
    games: usize,
    #[command(flatten)]
    play: super::MatchFlags,
    /// Fix one player's rating: `NAME=ELO` (e.g. `random=0`).
    #[arg(long)]
    anchor: Option<String>,
    /// Also write the ladder as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Reads the results of every game in a PGN file; games without a result are skipped.
pub fn records_from_pgn(path: &std::path::Path) -> Result<Vec<GameRecord>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = Vec::new();
    for (i, game) in xq_data::pgn::read_pgn(&text).into_iter().enumerate() {
        let game = game.with_context(|| format!("{}: game {}", path.display(), i + 1))?;
        let (Some(red), Some(black)) = (game.header("Red"), game.header("Black")) else {
            continue;
        };
        let Some(result) = game.header("Result").and_then(GameResult::parse) else {
            continue;
        };
        out.push(GameRecord::new(red, black, result));
    }
    Ok(out)
}

pub fn run(args: Args) -> Result<()> {
    let mut records = Vec::new();
    for path in &args.pgn {
        records.extend(records_from_pgn(path)?);
    }
    if !args.players.is_empty() {
        if args.players.len() < 2 {
            bail!("--players needs at least two players");
        }
        let specs: Vec<_> = args
            .players
            .iter()
            .map(|p| super::player_spec("players", p))
            .collect::<Result<_>>()?;
        let tc: TimeControl = args.play.time_control()?;
        let openings = super::load_openings(&args.play.openings, args.play.seed)?;
        for i in 0..specs.len() {
            for j in i + 1..specs.len() {
                let (a, b) = (&specs[i], &specs[j]);
                let config = MatchConfig {
                    games: args.games,
                    concurrency: args.play.concurrency(),
                    settings: GameSettings {
                        time_control: tc,
                        ..GameSettings::default()
                    },
                    openings: openings.clone(),
                    sprt: None,
                    seed: args.play.seed.wrapping_add((i * 1000 + j) as u64),
                    pgn_out: None,
                    event: "xqz ladder".into(),
                };
                let build_a = || -> Result<Box<dyn Player>, PlayerError> { a.build() };
                let build_b = || -> Result<Box<dyn Player>, PlayerError> { b.build() };
                let report = run_match(&build_a, &build_b, &config, &mut |_| {})?;
                eprintln!("{}", report.status.line());
                for g in &report.games {
                    let result = match g.winner {
                        Some(xq_core::Color::Red) => GameResult::Win,
                        Some(xq_core::Color::Black) => GameResult::Loss,
                        None => GameResult::Draw,
                    };
                    records.push(GameRecord::new(&g.red, &g.black, result));
                }
            }
        }
    }
    if records.is_empty() {
        bail!("no rated games: give --pgn files with results or --players to play");
    }
    let mut config = LadderConfig::default();
    if let Some(anchor) = &args.anchor {
        let (name, elo) = anchor
            .split_once('=')
            .with_context(|| format!("--anchor {anchor:?}: expected NAME=ELO"))?;
        let elo: f64 = elo
            .parse()
            .with_context(|| format!("--anchor {anchor:?}: {elo:?} is not a number"))?;
        config = config.anchored(name, elo);
    }
    let ladder = fit_ladder(&records, &config)?;
    println!("{}", ladder.to_text());
    if let Some(path) = &args.json {
        xq_run::write_atomic(path, serde_json::to_string_pretty(&ladder)?.as_bytes())?;
    }
    Ok(())
}

impl Args {
    /// The player specifications of `--players`.
    pub fn player_texts(&self) -> &[String] {
        &self.players
    }
}
