//! `xqz match`: two players, paired openings, statistics and an optional SPRT.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use xq_eval::{
    clock::TimeControl,
    matches::{MatchConfig, MatchReport, run_match},
    openings::{self, Opening},
    player::{Player, PlayerError},
    referee::GameSettings,
    spec::PlayerSpec,
    stats::SprtConfig,
};

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
    /// Time control: `40/90m,10/15m`, `5m+2s`, `movetime=500ms`, `nodes=800`, `depth=3`, or
    /// `own` (each player's own settings, e.g. an alpha-beta player's depth).
    #[arg(long, default_value = "own")]
    tc: String,
    /// Game pairs played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Openings: `builtin`, `start`, `random:N` (N random balanced plies) or a file.
    #[arg(long, default_value = "builtin")]
    openings: String,
    /// Append every game to this PGN file.
    #[arg(long)]
    pgn: Option<PathBuf>,
    /// Stop when decided: `ELO0,ELO1[,ALPHA,BETA]` (logistic Elo, pentanomial GSPRT).
    #[arg(long)]
    sprt: Option<String>,
    /// Seed of the openings and the players' randomness.
    #[arg(long, default_value_t = 1)]
    seed: u64,
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

/// Resolves an `--openings` value.
pub fn load_openings(text: &str, seed: u64) -> Result<Vec<Opening>> {
    Ok(match text {
        "builtin" => openings::builtin(),
        "start" => vec![Opening {
            name: "start".into(),
            start: xq_core::Position::startpos(),
            moves: Vec::new(),
        }],
        t if t.starts_with("random:") => {
            let plies: usize = t["random:".len()..]
                .parse()
                .with_context(|| format!("--openings {t:?}: expected random:PLIES"))?;
            if !(1..=40).contains(&plies) {
                bail!("--openings {t:?}: plies must be 1-40");
            }
            openings::random_balanced(64, plies, seed)
        }
        path => {
            let body = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read openings file {path}"))?;
            openings::parse_file(path, &body)?
        }
    })
}

/// Parses a player specification and checks that it can be built.
pub fn player_spec(flag: &str, text: &str) -> Result<PlayerSpec> {
    let spec: PlayerSpec = text.parse().with_context(|| format!("--{flag}"))?;
    spec.build().with_context(|| format!("--{flag} {text}"))?;
    Ok(spec)
}

/// The summary printed at the end and written as JSON.
pub fn report_json(report: &MatchReport) -> serde_json::Value {
    let s = &report.status;
    serde_json::json!({
        "a": s.a,
        "b": s.b,
        "games": s.games.wins + s.games.draws + s.games.losses,
        "wins": s.games.wins,
        "draws": s.games.draws,
        "losses": s.games.losses,
        "score": s.games.score(),
        "draw_ratio": s.games.draw_ratio(),
        "elo": s.elo.map(|e| e.elo),
        "elo_lower": s.elo.map(|e| e.elo_lower),
        "elo_upper": s.elo.map(|e| e.elo_upper),
        "los": s.los,
        "pentanomial": s.pairs.counts,
        "sprt": s.sprt.map(|t| serde_json::json!({"llr": t.llr, "lower": t.lower, "upper": t.upper})),
        "decision": report.decision,
    })
}

pub fn run(args: Args) -> Result<()> {
    let tc: TimeControl = args.tc.parse()?;
    let a = player_spec("a", &args.a)?;
    let b = player_spec("b", &args.b)?;
    let sprt = args.sprt.as_deref().map(parse_sprt).transpose()?;
    if args.games == 0 {
        bail!("--games must be at least 1");
    }
    let config = MatchConfig {
        games: args.games,
        concurrency: args.concurrency.max(1),
        settings: GameSettings {
            time_control: tc,
            max_plies: args.max_plies,
            ..GameSettings::default()
        },
        openings: load_openings(&args.openings, args.seed)?,
        sprt,
        seed: args.seed,
        pgn_out: args.pgn.clone(),
        event: format!("xqz match {} vs {}", args.a, args.b),
    };
    let build_a = || -> Result<Box<dyn Player>, PlayerError> { a.build() };
    let build_b = || -> Result<Box<dyn Player>, PlayerError> { b.build() };
    let report = run_match(&build_a, &build_b, &config, &mut |s| {
        eprintln!("{}", s.line())
    })?;
    let json = report_json(&report);
    println!("{}", report.status.line());
    if let Some(d) = report.decision {
        println!("SPRT: {d:?}");
    }
    if let Some(path) = &args.json {
        crate::cmd::write_atomic(path, serde_json::to_string_pretty(&json)?.as_bytes())?;
    }
    Ok(())
}
