//! Rating inside a run: short matches of each newly accepted network against the fixed
//! baselines of `[rating]`, and the final, longer match of the best player at the end
//! of `xqz run`. Each match appends a `rating` event, writes its games to `matches/`
//! and its score (and Elo, after a promotion) to TensorBoard.

use std::time::Instant;

use anyhow::{Context, Result};
use xq_data::tensorboard::TbLogger;
use xq_eval::{
    matches::{MatchConfig, MatchReport, run_match_until},
    player::{Player, PlayerError},
    referee::GameSettings,
    spec::PlayerSpec,
};
use xq_run::{
    ModelRef, RunDir,
    events::{Event, RatingEvent},
    safe_file_name,
};

use crate::{
    config::RatingSection,
    gate::net_spec,
    progress::{SharedObserver, Task, Update},
};

/// Which rating a match belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The short rating after each promotion, at the loop's leaf quiescence
    /// ([`crate::config::RunConfig::loop_quiescence`]).
    Promotion { quiescence: u8 },
    /// The final match of the best player.
    Final,
}

/// What a stage plays: its opponents, games against each, the network's visits and
/// quiescence, and the tag of its events and files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan<'a> {
    opponents: &'a [String],
    games: usize,
    visits: u32,
    quiescence: u8,
    tag: &'static str,
}

impl Stage {
    fn plan(self, r: &RatingSection) -> Plan<'_> {
        match self {
            // The short ratings keep the loop's time for self-play: the search self-play
            // plays, at `visits`.
            Stage::Promotion { quiescence } => Plan {
                opponents: &r.opponents,
                games: r.games,
                visits: r.visits,
                quiescence,
                tag: "rating",
            },
            // The final figure is the player users get.
            Stage::Final => Plan {
                opponents: &r.final_opponents,
                games: r.final_games,
                visits: r.final_visits(),
                quiescence: r.final_quiescence,
                tag: "final",
            },
        }
    }
}

/// One match of a run's ratings or end-of-run round robins, under `[rating]`'s time
/// control, openings and concurrency.
pub(crate) struct RunMatch<'a> {
    /// The live display's tag, also the start of `file`.
    pub tag: &'static str,
    pub a: &'a PlayerSpec,
    pub b: &'a PlayerSpec,
    pub games: usize,
    pub seed: u64,
    /// The PGN's name in `matches/`, without `.pgn`.
    pub file: String,
    /// The PGN's `Event` tag.
    pub event: String,
}

/// Plays `game` by `deadline`, drawing its progress when `obs` is live, and logs its
/// result line (and how far a deadline cut it).
///
/// # Errors
/// A player that cannot be built or played, or a bad `[rating]` time control or
/// openings.
pub(crate) fn play_match(
    obs: &SharedObserver,
    run: &RunDir,
    r: &RatingSection,
    game: &RunMatch<'_>,
    deadline: Option<Instant>,
) -> Result<MatchReport> {
    let tag = game.tag;
    let openings = xq_eval::openings::from_spec(&r.openings, r.seed)
        .with_context(|| format!("[rating] openings {:?}", r.openings))?;
    let config = MatchConfig {
        games: game.games,
        concurrency: r.concurrency.max(1),
        settings: GameSettings {
            time_control: r.time_control.parse()?,
            ..GameSettings::default()
        },
        openings,
        sprt: None,
        seed: game.seed,
        pgn_out: Some(run.matches_dir().join(format!("{}.pgn", game.file))),
        event: game.event.clone(),
    };
    let build_a = || -> Result<Box<dyn Player>, PlayerError> { game.a.build() };
    let build_b = || -> Result<Box<dyn Player>, PlayerError> { game.b.build() };
    let mut task = obs.live().then(|| obs.begin(Task::Match { tag }));
    let report = run_match_until(&build_a, &build_b, &config, deadline, &mut |s| {
        if let Some(t) = &mut task {
            t.update(Update::Match(s));
        }
    })?;
    drop(task);
    obs.log(&format!("{tag}: {}", report.status.line()));
    if let Some(cut) = report.cutoff {
        obs.log(&format!(
            "{tag}: {} of {} planned games played ({}; {} of cut pairs discarded)",
            report.games.len(),
            report.status.planned_games,
            cut.describe(),
            match report.discarded_games {
                1 => "1 game".to_owned(),
                n => format!("{n} games"),
            }
        ));
    }
    Ok(report)
}

/// An equal part of the time to `deadline` for the next of `left` matches (what one
/// leaves unused goes to the ones after it).
pub(crate) fn share(deadline: Option<Instant>, left: usize) -> Option<Instant> {
    deadline.map(|d| {
        let now = Instant::now();
        now + d.saturating_duration_since(now) / u32::try_from(left.max(1)).unwrap_or(u32::MAX)
    })
}

/// Rates `model` against each opponent of `stage` by `deadline`, which the opponents
/// share: each gets an equal part of the time left when its match starts (what one
/// leaves unused goes to the next). Appends `rating` events; a match cut by the
/// deadline says how many of its planned games were played.
///
/// # Errors
/// An opponent that cannot be built or played, or a run directory that cannot be
/// written.
pub fn rate(
    obs: &SharedObserver,
    run: &RunDir,
    model: &ModelRef,
    r: &RatingSection,
    stage: Stage,
    deadline: Option<Instant>,
) -> Result<()> {
    let Plan {
        opponents,
        games,
        visits,
        quiescence,
        tag,
    } = stage.plan(r);
    if games == 0 {
        return Ok(());
    }
    let me = net_spec(run, model, visits, quiescence);
    let mut tb = TbLogger::new(run.rating_logs_dir());
    for (k, opponent) in opponents.iter().enumerate() {
        let spec: PlayerSpec = opponent.parse()?;
        let game = RunMatch {
            tag,
            a: &me,
            b: &spec,
            games,
            seed: r.seed ^ model.step,
            file: format!("{tag}-{}-vs-{}", model.name, safe_file_name(opponent)),
            event: format!("{tag} {} vs {opponent}", model.name),
        };
        let report = play_match(obs, run, r, &game, share(deadline, opponents.len() - k))?;
        if let Some(repaired) = run.record(Event::Rating(RatingEvent {
            model: model.name.clone(),
            opponent: opponent.clone(),
            step: Some(model.step),
            is_final: stage == Stage::Final,
            visits,
            quiescence,
            result: report.summary(),
        }))? {
            obs.warn(&repaired);
        }
        if let (Some(e), Stage::Promotion { .. }) =
            (report.status.elo.filter(|e| e.elo.is_finite()), stage)
        {
            tb.scalar(
                &format!("rating/elo_vs_{}", safe_file_name(opponent)),
                e.elo,
                model.step,
            )?;
        }
        if let Some(score) = report.status.games.score() {
            tb.scalar(
                &format!("{tag}/score_vs_{}", safe_file_name(opponent)),
                score,
                model.step,
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RunConfig;

    #[test]
    fn the_final_match_uses_final_visits_and_quiescence_and_promotion_ratings_do_not() {
        let cfg =
            RunConfig::parse("[rating]\nvisits = 24\nfinal_visits = 200\nfinal_quiescence = 30\n")
                .unwrap();
        let promotion = Stage::Promotion { quiescence: 0 }.plan(&cfg.rating);
        assert_eq!((promotion.visits, promotion.quiescence), (24, 0));
        let blended = Stage::Promotion { quiescence: 75 }.plan(&cfg.rating);
        assert_eq!((blended.visits, blended.quiescence), (24, 75));
        assert_eq!(promotion.tag, "rating");
        let last = Stage::Final.plan(&cfg.rating);
        assert_eq!((last.visits, last.quiescence), (200, 30));
        assert_eq!(last.opponents, cfg.rating.final_opponents);
        let cfg = RunConfig::parse("[rating]\nvisits = 24\n").unwrap();
        assert_eq!(
            Stage::Final.plan(&cfg.rating).visits,
            24,
            "defaults to visits"
        );
    }
}
