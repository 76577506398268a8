//! `xqz tournament`: an individual or team event (round robin, groups, Swiss, knockout,
//! double elimination) from a TOML file.

use std::path::PathBuf;

use anyhow::{Context, Result};
use xq_eval::{
    clock::TimeControl,
    referee::GameSettings,
    spec::PlayerSpec,
    tournament::{TournamentFile, TournamentPlay, resolve_openings, run_event},
};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Tournament file (TOML; see configs/tournament-baselines.toml).
    #[arg(long)]
    config: PathBuf,
    /// Directory for the crosstable (text, JSON, CSV) and the PGN (default: next to the config).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let text = std::fs::read_to_string(&args.config)
        .with_context(|| format!("cannot read {}", args.config.display()))?;
    let file: TournamentFile = toml::from_str(&text)
        .with_context(|| format!("invalid tournament file {}", args.config.display()))?;
    let tc: TimeControl = file.time_control.parse().context("time_control")?;
    let rapid: TimeControl = match &file.rapid_time_control {
        Some(t) => t.parse().context("rapid_time_control")?,
        None => tc,
    };
    for p in &file.participants {
        p.player
            .parse::<PlayerSpec>()
            .with_context(|| format!("participant {:?}", p.name))?;
    }
    let out = args.out.unwrap_or_else(|| {
        args.config
            .parent()
            .map(|p| p.to_path_buf())
            .unwrap_or_default()
    });
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let stem = if file.name.is_empty() {
        "tournament".to_owned()
    } else {
        file.name.replace(['/', ' '], "_")
    };
    let play = TournamentPlay {
        settings: GameSettings {
            time_control: tc,
            ..GameSettings::default()
        },
        rapid,
        concurrency: file.concurrency.max(1),
        openings: resolve_openings(&file.openings).map_err(anyhow::Error::msg)?,
        pgn_out: Some(
            file.pgn
                .clone()
                .unwrap_or_else(|| out.join(format!("{stem}.pgn"))),
        ),
    };
    let event = file
        .event()
        .with_context(|| format!("invalid tournament file {}", args.config.display()))?;
    let build = |spec: &str| PlayerSpec::build_from_text(spec);
    let (t, games) = run_event(event, &play, &build, &mut |line| eprintln!("{line}"))?;
    let text = t.crosstable_text();
    println!("{text}");
    xq_run::write_atomic(&out.join(format!("{stem}.crosstable.txt")), text.as_bytes())?;
    xq_run::write_atomic(
        &out.join(format!("{stem}.crosstable.json")),
        t.crosstable_json().as_bytes(),
    )?;
    xq_run::write_atomic(
        &out.join(format!("{stem}.crosstable.csv")),
        t.crosstable_csv().as_bytes(),
    )?;
    eprintln!(
        "{} games; crosstable and PGN in {}",
        games.len(),
        out.display()
    );
    Ok(())
}

impl Args {
    /// Every string in the tournament file that could name a player (an unreadable
    /// file gives none: `run` reports it). Read generically from the TOML so that any
    /// layout of participants and teams is covered.
    pub fn player_texts(&self) -> Vec<String> {
        fn strings(v: &toml::Value, out: &mut Vec<String>) {
            match v {
                toml::Value::String(s) => out.push(s.clone()),
                toml::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
                toml::Value::Table(t) => t.values().for_each(|v| strings(v, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        if let Some(v) = std::fs::read_to_string(&self.config)
            .ok()
            .and_then(|t| t.parse::<toml::Table>().ok())
        {
            strings(&toml::Value::Table(v), &mut out);
        }
        out
    }
}
