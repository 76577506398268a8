//! `xqz strength`: rates players on the anchored scale of [`xq_rating::strength`], or
//! calibrates the anchors themselves.
//!
//! Every rated player gets `NAME.json` (the rating with its 95% interval, the results
//! against each anchor, the match summaries, the settings and seed) and `NAME.pgn` (every
//! game) in the output directory, so that any figure can be recomputed from the files.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use xq_eval::{
    anchors::{AnchorLookup, player_name},
    clock::TimeControl,
    matches::{MatchConfig, run_match},
    player::{Player, PlayerError},
    referee::GameSettings,
    spec::PlayerSpec,
};
use xq_rating::{
    GameRecord, GameResult,
    stats::{AnchorGames, LadderConfig, fit_ladder, fmt_elo},
    strength::{Anchor, AnchorTable, Calibration, StrengthRecord, calibration_pairs},
    summary::MatchSummary,
};
use xq_run::{ModelRef, RunDir, RunError, safe_file_name};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The player to rate (any player specification: `player:DIR`, `net:CKPT,visits=800`,
    /// `alphabeta:depth=4`, `ucci:PATH` ...). Repeat to rate several.
    #[arg(long)]
    player: Vec<String>,
    /// Rate every accepted network of this run directory (as `net:` players with
    /// `--visits` and `--quiescence`), writing into RUN/strength unless --out is given.
    #[arg(long, value_name = "RUN")]
    run: Option<PathBuf>,
    /// With --run: only every Nth accepted network (the last one always).
    #[arg(long, default_value_t = 1, value_name = "N")]
    every: usize,
    /// With --run: only these accepted networks (`s0000004350,...`).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    models: Vec<String>,
    /// Root visits of the networks rated with --run.
    #[arg(long, default_value_t = 800)]
    visits: u32,
    /// Leaf quiescence weight in percent of the networks rated with --run (0 = plain
    /// AlphaZero search).
    #[arg(long, default_value_t = 0)]
    quiescence: u8,
    /// Play the anchors against each other (each against its next two up the ladder)
    /// and write the fitted table as `anchors.json` in --out.
    #[arg(long)]
    calibrate: bool,
    /// Anchors to play, weakest first (default: all of the built-in table).
    #[arg(long, value_delimiter = ',')]
    anchors: Vec<String>,
    /// Games against each anchor (rounded up to colour-reversed pairs).
    #[arg(long, default_value_t = 20)]
    games: usize,
    #[command(flatten)]
    play: super::MatchFlags,
    /// With --calibrate: fit the anchors from the games in these PGN files (a earlier
    /// calibration's `calibration.pgn`) instead of playing.
    #[arg(long, num_args = 1..)]
    pgn: Vec<PathBuf>,
    /// Output directory.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// A player to rate: its specification and, for a run's network, its model name and
/// step.
type ToRate = (String, Option<String>, Option<u64>);

pub fn run(args: Args) -> Result<()> {
    ensure!(args.games > 0, "--games must be at least 1");
    let tc: TimeControl = args.play.time_control()?;
    let table = AnchorTable::builtin();
    let anchors: Vec<String> = if args.anchors.is_empty() {
        table.specs().into_iter().map(str::to_owned).collect()
    } else {
        args.anchors.clone()
    };
    if args.calibrate {
        ensure!(
            args.player.is_empty() && args.run.is_none(),
            "--calibrate rates the anchors themselves: no --player or --run"
        );
        let out = args.out.as_deref().context("--calibrate needs --out DIR")?;
        return calibrate(&args, &anchors, tc, out);
    }
    for a in &anchors {
        ensure!(
            table.get(a).is_some(),
            "--anchors: {a:?} is not an anchor of the built-in table ({})",
            table.specs().join(", ")
        );
    }
    let mut players: Vec<ToRate> = args
        .player
        .iter()
        .map(|p| (p.clone(), None, None))
        .collect();
    let run = args.run.as_ref().map(RunDir::existing).transpose()?;
    if let Some(run) = &run {
        players.extend(run_players(
            run,
            args.every,
            &args.models,
            args.visits,
            args.quiescence,
        )?);
    }
    ensure!(
        !players.is_empty(),
        "nothing to rate: give --player, --run or --calibrate"
    );
    let out = match (&args.out, &run) {
        (Some(o), _) => o.clone(),
        (None, Some(run)) => run.strength_dir(),
        (None, None) => bail!("--out DIR is needed with --player"),
    };
    for (text, model, step) in players {
        let spec = super::player_spec("player", &text)?;
        let name = model.clone().unwrap_or_else(|| file_stem_for(&spec));
        let pgn = out.join(format!("{name}.pgn"));
        remove_stale(&pgn)?;
        let mut results = Vec::new();
        let mut matches = Vec::new();
        for (i, anchor_text) in anchors.iter().enumerate() {
            let anchor = super::player_spec("anchors", anchor_text)?;
            let summary = play(
                &args,
                &spec,
                &anchor,
                tc,
                args.play.seed.wrapping_add(i as u64 * 7919),
                &pgn,
            )?;
            let a = table.get(anchor_text).context("anchor checked above")?;
            results.push(AnchorGames {
                anchor: a.spec.clone(),
                anchor_elo: a.elo,
                wins: summary.wins,
                draws: summary.draws,
                losses: summary.losses,
            });
            matches.push(summary);
        }
        let rating = table.rate(
            results
                .iter()
                .map(|g| (g.anchor.as_str(), g.wins, g.draws, g.losses)),
        )?;
        println!(
            "{name}: Elo {} ({} games, {} points)",
            fmt_elo(rating.elo, Some((rating.elo_lower, rating.elo_upper))),
            rating.games,
            rating.points
        );
        let file = StrengthRecord {
            player: text,
            model,
            step,
            time_control: args.play.tc.clone(),
            seed: args.play.seed,
            games_per_anchor: args.games,
            rating,
            anchors: results,
            matches,
            calibration: Some(table.calibration.clone()),
        };
        xq_run::write_atomic(
            &out.join(format!("{name}.json")),
            serde_json::to_string_pretty(&file)?.as_bytes(),
        )?;
    }
    Ok(())
}

/// One match of `player` against `anchor`, its games appended to `pgn`.
fn play(
    args: &Args,
    player: &PlayerSpec,
    anchor: &PlayerSpec,
    tc: TimeControl,
    seed: u64,
    pgn: &Path,
) -> Result<MatchSummary> {
    let config = MatchConfig {
        games: args.games,
        concurrency: args.play.concurrency(),
        settings: GameSettings {
            time_control: tc,
            ..GameSettings::default()
        },
        openings: super::load_openings(&args.play.openings, seed)?,
        sprt: None,
        seed,
        pgn_out: Some(pgn.to_path_buf()),
        event: format!("xqz strength {player} vs {anchor}"),
    };
    let build_a = || -> Result<Box<dyn Player>, PlayerError> { player.build() };
    let build_b = || -> Result<Box<dyn Player>, PlayerError> { anchor.build() };
    let report = run_match(&build_a, &build_b, &config, &mut |_| {})
        .with_context(|| format!("{player} vs {anchor}"))?;
    eprintln!("{}", report.status.line());
    Ok(report.summary())
}

/// Plays the calibration pairings and writes `anchors.json`, `calibration.pgn` and the
/// full ladder (`ladder.json`) into `out`.
fn calibrate(args: &Args, anchors: &[String], tc: TimeControl, out: &Path) -> Result<()> {
    let specs: Vec<PlayerSpec> = anchors
        .iter()
        .map(|a| super::player_spec("anchors", a))
        .collect::<Result<_>>()?;
    ensure!(specs.len() >= 2, "--calibrate needs at least two anchors");
    let fixed = anchors
        .iter()
        .find(|a| player_name(a) == "fsf-skill0")
        .unwrap_or(&anchors[0]);
    let mut records = Vec::new();
    for path in &args.pgn {
        records.extend(super::ladder::records_from_pgn(path)?);
    }
    let names: Vec<String> = anchors.iter().map(|a| player_name(a)).collect();
    records.retain(|r| names.contains(&r.a) && names.contains(&r.b));
    ensure!(
        args.pgn.is_empty() || !records.is_empty(),
        "--pgn: no game between two of the anchors ({})",
        names.join(", ")
    );
    let pgn = out.join("calibration.pgn");
    if args.pgn.is_empty() {
        remove_stale(&pgn)?;
    }
    let pairings = if args.pgn.is_empty() {
        calibration_pairs(specs.len())
    } else {
        Vec::new()
    };
    for (k, (i, j)) in pairings.into_iter().enumerate() {
        let seed = args.play.seed.wrapping_add(k as u64 * 7919);
        let summary = play(args, &specs[i], &specs[j], tc, seed, &pgn)?;
        let (a, b) = (player_name(&anchors[i]), player_name(&anchors[j]));
        for (n, result) in [
            (summary.wins, GameResult::Win),
            (summary.draws, GameResult::Draw),
            (summary.losses, GameResult::Loss),
        ] {
            records.extend((0..n).map(|_| GameRecord::new(&a, &b, result)));
        }
    }
    let ladder = fit_ladder(
        &records,
        &LadderConfig::default().anchored(player_name(fixed), 0.0),
    )?;
    println!("{}", ladder.to_text());
    let mut table = AnchorTable {
        scale: format!("logistic Elo, {fixed} = 0"),
        calibration: Calibration {
            command: std::env::args()
                .map(|a| a.replace(char::is_whitespace, "_"))
                .collect::<Vec<_>>()
                .join(" "),
            commit: String::new(),
            games: records.len() as u64,
            time_control: args.play.tc.clone(),
        },
        anchors: anchors
            .iter()
            .map(|a| {
                let r = ladder
                    .get(&player_name(a))
                    .with_context(|| format!("anchor {a} played no game"))?;
                Ok(Anchor {
                    spec: a.clone(),
                    elo: r.elo.round(),
                    stderr: r.stderr.round(),
                })
            })
            .collect::<Result<_>>()?,
    };
    table.anchors.sort_by(|a, b| a.elo.total_cmp(&b.elo));
    xq_run::write_atomic(
        &out.join("anchors.json"),
        serde_json::to_string_pretty(&table)?.as_bytes(),
    )?;
    xq_run::write_atomic(
        &out.join("ladder.json"),
        serde_json::to_string_pretty(&ladder)?.as_bytes(),
    )?;
    Ok(())
}

/// The accepted networks of a run, oldest first, as `net:` players: every `every`th
/// and the last, or those named in `only`. A network directory without a checkpoint
/// is passed over.
fn run_players(
    run: &RunDir,
    every: usize,
    only: &[String],
    visits: u32,
    quiescence: u8,
) -> Result<Vec<ToRate>> {
    ensure!(every >= 1, "--every must be at least 1");
    let mut models: Vec<(ModelRef, PathBuf)> = Vec::new();
    for model in run.accepted_models()? {
        match run.sidecar(&model) {
            Ok(sidecar) => models.push((model, sidecar)),
            Err(RunError::NoCheckpoint(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let dir = run.accepted_dir();
    ensure!(
        !models.is_empty(),
        "{} holds no accepted network",
        dir.display()
    );
    if let Some(missing) = only
        .iter()
        .find(|n| !models.iter().any(|(m, _)| &m.name == *n))
    {
        bail!(
            "--models: {missing} is not an accepted network of {}",
            dir.display()
        );
    }
    let last = models.len() - 1;
    Ok(models
        .into_iter()
        .enumerate()
        .filter(|(i, (model, _))| {
            if only.is_empty() {
                i % every == 0 || *i == last
            } else {
                only.contains(&model.name)
            }
        })
        .map(|(_, (model, sidecar))| {
            (
                net_text(&sidecar, visits, quiescence),
                Some(model.name),
                Some(model.step),
            )
        })
        .collect())
}

/// The `net:` specification of a checkpoint sidecar.
fn net_text(sidecar: &Path, visits: u32, quiescence: u8) -> String {
    let mut spec = format!("net:{},visits={visits}", sidecar.display());
    if quiescence > 0 {
        spec += &format!(",quiescence={quiescence}");
    }
    spec
}

/// A file name for a player rated without a model name.
fn file_stem_for(spec: &PlayerSpec) -> String {
    let text = match spec {
        PlayerSpec::Exported(dir) => dir
            .file_name()
            .map_or_else(|| "player".into(), |n| n.to_string_lossy().into_owned()),
        other => player_name(&other.to_string()),
    };
    safe_file_name(&text)
}

/// The match runner appends to its PGN: a rating's file starts empty (and its
/// directory exists).
fn remove_stale(pgn: &Path) -> Result<()> {
    if let Some(dir) = pgn.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    match std::fs::remove_file(pgn) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot replace {}", pgn.display()))
        }
        _ => Ok(()),
    }
}

impl Args {
    /// Whether a player of this command needs the network backend.
    pub fn loads_network(&self) -> bool {
        self.run.is_some()
            || self.player.iter().any(|p| {
                p.parse::<PlayerSpec>()
                    .is_ok_and(|s| s.needs_network_backend())
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_run(dir: &Path, steps: &[u64]) -> RunDir {
        let run = RunDir::open(dir).unwrap();
        for &s in steps {
            let model = run.accepted_dir().join(xq_run::model_name(s));
            std::fs::create_dir_all(&model).unwrap();
            let sidecar = format!("{}.json", xq_nn::checkpoint::stem(s));
            std::fs::write(model.join(sidecar), "{}").unwrap();
        }
        run
    }

    fn names(players: &[ToRate]) -> Vec<&str> {
        players.iter().map(|p| p.1.as_deref().unwrap()).collect()
    }

    #[test]
    fn a_run_is_rated_every_nth_network_and_the_last_or_the_named_ones() {
        let dir = tempfile::tempdir().unwrap();
        let run = fake_run(dir.path(), &[100, 200, 300, 400, 500]);
        // A network directory without a checkpoint is no network to rate.
        std::fs::create_dir(run.accepted_dir().join(xq_run::model_name(600))).unwrap();
        let every = run_players(&run, 2, &[], 800, 0).unwrap();
        assert_eq!(names(&every), ["s0000000100", "s0000000300", "s0000000500"]);
        assert!(
            every[0].0.ends_with("ckpt-0000000100.json,visits=800"),
            "{}",
            every[0].0
        );
        let named = run_players(&run, 1, &["s0000000400".into()], 800, 75).unwrap();
        assert_eq!(names(&named), ["s0000000400"]);
        assert_eq!(named[0].2, Some(400));
        assert!(
            named[0].0.ends_with(",visits=800,quiescence=75"),
            "{}",
            named[0].0
        );
        let err = run_players(&run, 1, &["s9".into()], 800, 0).unwrap_err();
        assert!(err.to_string().contains("s9"), "{err}");
    }
}
