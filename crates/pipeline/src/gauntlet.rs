//! The end-of-run choice of the exported player, at the budget it is exported with.
//!
//! The gate compares networks at the loop's cheap budget, where a player's strength
//! need not say much about the same network at 800 visits with leaf quiescence (issue
//! #23 found the pre-trained network the best 800-visit one of a 2-hour run). So when
//! `[rating] final_gauntlet_games` is set, the run ends with a round robin at
//! `final_visits` among the pre-trained network and the last three accepted ones
//! ([`contenders`]); the one with the best score is exported, rated in the final match
//! and reported as the run's best player.
//!
//! Each network plays at its own leaf quiescence weight. The pre-trained one plays at
//! `final_quiescence`. With `final_quiescence_choices`, the newest self-play network
//! first plays itself at each of those weights, and the self-play networks play the
//! round robin at the best one; otherwise they play at `final_quiescence` too. The
//! order matters: at the README job's scale a self-play network beat its pre-trained
//! one by +354 Elo in plain search and lost by 53 at leaf quiescence 0.75
//! (docs/lab/2026-12-03-selfplay-which-head.md), so a round robin at one weight
//! for all would keep the network that weight suits (there, with the self-play network
//! weaker at 0.5 too, either order keeps the pre-trained one). The winner's weight goes
//! into its `engine.toml`.
//!
//! Each round robin is a `gauntlet` event (every pair's match and the table), and its
//! games are in `matches/gauntlet-*.pgn`. Ties go to the newer network and to
//! `final_quiescence` (the last entry of the weights' round robin), so that a round
//! robin the deadline cut short keeps the accepted network at `final_quiescence`.

use std::time::Instant;

use anyhow::Result;
use xq_eval::spec::PlayerSpec;
use xq_run::{
    ModelRef, RunDir,
    events::{Event, EventLog, GauntletEntry, GauntletEvent, GauntletStage, TrainPhase},
    safe_file_name,
};

use crate::{
    config::RatingSection,
    gate::net_spec,
    progress::SharedObserver,
    rating::{RunMatch, play_match, share},
};

/// How many of the newest accepted networks join the pre-trained one.
const LAST_ACCEPTED: usize = 3;

/// The player a run exports: a network and its leaf quiescence in percent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub model: ModelRef,
    pub quiescence: u8,
}

/// The networks the round robin compares, oldest first, each once, with whether it is
/// the pre-trained one: the last accepted network at or before the last step of
/// pre-training (the `train` events' phase; the first accepted one when the run did not
/// pre-train), then the last [`LAST_ACCEPTED`] accepted ones.
///
/// # Errors
/// If the accepted networks cannot be listed.
pub fn contenders(run: &RunDir, log: &EventLog) -> Result<Vec<(ModelRef, bool)>> {
    let accepted = run.accepted_models()?;
    let pretrain_end = log
        .events()
        .filter_map(|e| match e {
            Event::Train(t) if t.phase == TrainPhase::Supervised => Some(t.step),
            _ => None,
        })
        .max();
    let pretrained = match pretrain_end {
        Some(end) => accepted.iter().rev().find(|m| m.step <= end),
        None => accepted.first(),
    };
    let mut out: Vec<(ModelRef, bool)> =
        pretrained.map(|m| (m.clone(), true)).into_iter().collect();
    let newest = accepted.len().saturating_sub(LAST_ACCEPTED);
    for m in &accepted[newest..] {
        if out.iter().all(|(o, _)| o.name != m.name) {
            out.push((m.clone(), false));
        }
    }
    out.sort_by_key(|(m, _)| m.step);
    Ok(out)
}

/// The last `gauntlet` event's winner: the run's exported player, when a round robin
/// chose it.
pub fn last_winner(log: &EventLog) -> Option<&GauntletEntry> {
    log.events()
        .filter_map(|e| match e {
            Event::Gauntlet(g) => g.entries.get(g.winner),
            _ => None,
        })
        .next_back()
}

/// The games both round robins plan among `networks` networks.
pub fn planned_games(r: &RatingSection, networks: usize) -> usize {
    let weights = distinct_weights(r).len();
    r.final_gauntlet_games * (pairs(networks) + if weights > 1 { pairs(weights) } else { 0 })
}

/// The round robins' share of the final reserve; the final match has the rest, and
/// whatever time the round robins leave.
///
/// The reserve is shared by network searches, not by games: a round-robin game
/// searches at `final_visits` on both sides, a final-match game against an anchor on
/// one. Shared by games, the run at 431b6f0 cut three of the round robins' pairs to 4
/// games while its final match left 11.6 minutes unused; a round-robin game had taken
/// 2.5 times as long as a final-match game against alpha-beta at depth 3 (48 games in
/// 19 minutes against 60 in 9.5; docs/lab/2026-12-03-cpu-2h-431b6f0.md).
pub fn reserve_share(r: &RatingSection, networks: usize) -> f64 {
    let round_robins = 2 * planned_games(r, networks);
    let final_match: usize = r
        .final_opponents
        .iter()
        .map(|o| r.final_games * network_sides(o))
        .sum();
    round_robins as f64 / (round_robins + final_match).max(1) as f64
}

/// The sides of a final-match game against `opponent` that search with a network: the
/// run's player, and the opponent when it is a network too.
fn network_sides(opponent: &str) -> usize {
    match opponent.parse::<PlayerSpec>() {
        Ok(PlayerSpec::Net { .. } | PlayerSpec::Exported(_)) => 2,
        _ => 1,
    }
}

/// The pairs of a round robin of `n` players.
const fn pairs(n: usize) -> usize {
    n * n.saturating_sub(1) / 2
}

/// `final_quiescence_choices`, each once: ascending, but `final_quiescence` (when
/// among them) last, so that it wins ties.
fn distinct_weights(r: &RatingSection) -> Vec<u8> {
    let mut w = r.final_quiescence_choices.clone();
    w.sort_unstable_by_key(|&q| (q == r.final_quiescence, q));
    w.dedup();
    w
}

/// Plays the round robins of the module docs among `networks` (the [`contenders`]) by
/// `deadline` and returns the exported player; `accepted` at `final_quiescence` when
/// they are off, and `accepted` at its best weight when there is one network.
///
/// # Errors
/// A player that cannot be built or played, or a run directory that cannot be written.
pub fn choose(
    obs: &SharedObserver,
    run: &RunDir,
    accepted: ModelRef,
    networks: Vec<(ModelRef, bool)>,
    r: &RatingSection,
    deadline: Option<Instant>,
) -> Result<Choice> {
    if r.final_gauntlet_games == 0 {
        return Ok(Choice {
            model: accepted,
            quiescence: r.final_quiescence,
        });
    }
    let weights = distinct_weights(r);
    // The weights' round robin gets its share of the time up front.
    let planned = planned_games(r, networks.len()).max(1);
    let weights_share = deadline.map(|d| {
        let now = Instant::now();
        let first = r.final_gauntlet_games * pairs(weights.len());
        now + d
            .saturating_duration_since(now)
            .mul_f64(first as f64 / planned as f64)
    });
    // The newest self-play network's weight is the self-play networks' weight.
    let newest = networks
        .iter()
        .rev()
        .find(|(_, pretrained)| !pretrained)
        .map_or(accepted, |(m, _)| m.clone());
    let mut selfplay_weight = r.final_quiescence;
    if weights.len() > 1 {
        let entries = weights
            .iter()
            .map(|&quiescence| Contender {
                model: newest.clone(),
                quiescence,
                pretrained: false,
            })
            .collect();
        let won = round_robin(
            obs,
            run,
            r,
            GauntletStage::Quiescence,
            entries,
            weights_share,
        )?;
        selfplay_weight = won.quiescence;
    }
    if networks.len() < 2 {
        return Ok(Choice {
            model: newest,
            quiescence: selfplay_weight,
        });
    }
    let entries = networks
        .into_iter()
        .map(|(model, pretrained)| Contender {
            model,
            quiescence: if pretrained {
                r.final_quiescence
            } else {
                selfplay_weight
            },
            pretrained,
        })
        .collect();
    let won = round_robin(obs, run, r, GauntletStage::Networks, entries, deadline)?;
    Ok(Choice {
        model: won.model,
        quiescence: won.quiescence,
    })
}

/// A player of a round robin.
#[derive(Debug, Clone)]
struct Contender {
    model: ModelRef,
    quiescence: u8,
    pretrained: bool,
}

impl Contender {
    fn label(&self) -> String {
        format!("{}@q{}", self.model.name, self.quiescence)
    }
}

/// Every pair of `entries` plays `final_gauntlet_games` at `final_visits`, the pairs
/// sharing the time to `deadline`; records the `gauntlet` event and returns the winner.
fn round_robin(
    obs: &SharedObserver,
    run: &RunDir,
    r: &RatingSection,
    stage: GauntletStage,
    entries: Vec<Contender>,
    deadline: Option<Instant>,
) -> Result<Contender> {
    let visits = r.final_visits();
    let pairs: Vec<(usize, usize)> = (0..entries.len())
        .flat_map(|i| (i + 1..entries.len()).map(move |j| (i, j)))
        .collect();
    let mut table: Vec<GauntletEntry> = entries
        .iter()
        .map(|c| GauntletEntry {
            model: c.model.name.clone(),
            step: c.model.step,
            quiescence: c.quiescence,
            pretrained: c.pretrained,
            points: 0.0,
            games: 0,
        })
        .collect();
    let mut matches = Vec::with_capacity(pairs.len());
    obs.log(&format!(
        "gauntlet ({stage:?}): {} at {visits} visits, {} games a pair",
        entries
            .iter()
            .map(Contender::label)
            .collect::<Vec<_>>()
            .join(", "),
        r.final_gauntlet_games
    ));
    for (k, &(i, j)) in pairs.iter().enumerate() {
        let spec = |c: &Contender| net_spec(run, &c.model, visits, c.quiescence);
        let (a, b) = (spec(&entries[i]), spec(&entries[j]));
        let (la, lb) = (entries[i].label(), entries[j].label());
        let game = RunMatch {
            tag: "gauntlet",
            a: &a,
            b: &b,
            games: r.final_gauntlet_games,
            seed: r.seed ^ (k as u64 + 1).wrapping_mul(xq_core::hash::GOLDEN_GAMMA),
            file: format!(
                "gauntlet-{}-vs-{}",
                safe_file_name(&la),
                safe_file_name(&lb)
            ),
            event: format!("gauntlet {la} vs {lb}"),
        };
        let report = play_match(obs, run, r, &game, share(deadline, pairs.len() - k))?;
        let mut summary = report.summary();
        (summary.a, summary.b) = (la, lb);
        let draws = summary.draws as f64 / 2.0;
        table[i].points += summary.wins as f64 + draws;
        table[j].points += summary.losses as f64 + draws;
        table[i].games += summary.games;
        table[j].games += summary.games;
        matches.push(summary);
    }
    let winner = winner(&table);
    for e in &table {
        obs.log(&format!(
            "gauntlet: {}@q{}{}: {} of {}",
            e.model,
            e.quiescence,
            if e.pretrained { " (pre-trained)" } else { "" },
            e.points,
            e.games
        ));
    }
    obs.log(&format!(
        "gauntlet: {}@q{} chosen",
        table[winner].model, table[winner].quiescence
    ));
    run.record(Event::Gauntlet(GauntletEvent {
        stage,
        visits,
        entries: table,
        matches,
        winner,
    }))?;
    Ok(entries[winner].clone())
}

/// The entry with the best score (points a game; ½ without games), the later one on a
/// tie: entries come oldest network first, and `final_quiescence` last among weights.
fn winner(table: &[GauntletEntry]) -> usize {
    let score = |e: &GauntletEntry| {
        if e.games == 0 {
            0.5
        } else {
            e.points / e.games as f64
        }
    };
    let mut best = 0;
    for (i, e) in table.iter().enumerate() {
        if score(e) >= score(&table[best]) {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(points: f64, games: u64) -> GauntletEntry {
        GauntletEntry {
            model: String::new(),
            step: 0,
            quiescence: 75,
            pretrained: false,
            points,
            games,
        }
    }

    #[test]
    fn the_best_score_wins_and_a_tie_goes_to_the_later_entry() {
        assert_eq!(winner(&[entry(12.0, 20), entry(8.0, 20)]), 0);
        assert_eq!(winner(&[entry(10.0, 20), entry(10.0, 20)]), 1);
        // A score, not a total: a deadline can leave entries with fewer games.
        assert_eq!(winner(&[entry(9.0, 12), entry(10.0, 20)]), 0);
        // No games at all keeps the newest.
        assert_eq!(winner(&[entry(0.0, 0), entry(0.0, 0), entry(0.0, 0)]), 2);
    }

    fn names(contenders: &[(ModelRef, bool)]) -> Vec<(String, bool)> {
        contenders
            .iter()
            .map(|(m, p)| (m.name.clone(), *p))
            .collect()
    }

    #[test]
    fn the_pre_trained_network_and_the_last_three_accepted_ones_contend_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::open(dir.path()).unwrap();
        for step in [100, 200, 300, 400, 500] {
            std::fs::create_dir_all(run.accepted_dir().join(xq_run::model_name(step))).unwrap();
        }
        let s = |step: u64| (xq_run::model_name(step), false);
        let pre = |step: u64| (xq_run::model_name(step), true);
        // Pre-training ended at step 220: the network accepted last before it.
        let log = EventLog::parse(
            "{\"kind\":\"train\",\"step\":150,\"phase\":\"supervised\"}\n\
             {\"kind\":\"train\",\"step\":220,\"phase\":\"supervised\"}\n\
             {\"kind\":\"train\",\"step\":450,\"phase\":\"selfplay\"}\n",
        );
        assert_eq!(
            names(&contenders(&run, &log).unwrap()),
            [pre(200), s(300), s(400), s(500)]
        );
        // Without pre-training, the first accepted network is where self-play started.
        let log = EventLog::parse("{\"kind\":\"train\",\"step\":450,\"phase\":\"selfplay\"}\n");
        assert_eq!(
            names(&contenders(&run, &log).unwrap()),
            [pre(100), s(300), s(400), s(500)]
        );
        // A pre-trained network among the newest ones is listed once.
        let log = EventLog::parse("{\"kind\":\"train\",\"step\":420,\"phase\":\"supervised\"}\n");
        assert_eq!(
            names(&contenders(&run, &log).unwrap()),
            [s(300), pre(400), s(500)]
        );
    }

    #[test]
    fn both_round_robins_share_the_reserve_by_their_planned_games() {
        let r = RatingSection {
            final_gauntlet_games: 10,
            final_quiescence: 75,
            final_quiescence_choices: vec![100, 50, 75, 75],
            ..RatingSection::default()
        };
        // 4 networks: 6 pairs; weights 50, 75, 100: 3 pairs.
        assert_eq!(planned_games(&r, 4), 90);
        // `final_quiescence` (75) comes last, to win a tie.
        assert_eq!(distinct_weights(&r), [50, 100, 75]);
        let one_weight = RatingSection {
            final_quiescence_choices: vec![75],
            ..r
        };
        assert_eq!(planned_games(&one_weight, 2), 10);
    }

    #[test]
    fn the_reserve_is_shared_by_network_searches_not_by_games() {
        // configs/cpu-2h.toml: 4 networks, 6 games a pair, weights 0, 50 and 75, and 60
        // final games against alpha-beta: 54 round-robin games with two searching
        // sides against 60 with one.
        let r = RatingSection {
            final_gauntlet_games: 6,
            final_quiescence: 75,
            final_quiescence_choices: vec![0, 50, 75],
            final_opponents: vec!["alphabeta:depth=3".into()],
            final_games: 60,
            ..RatingSection::default()
        };
        assert_eq!(planned_games(&r, 4), 54);
        assert!((reserve_share(&r, 4) - 108.0 / 168.0).abs() < 1e-12);
        // A network opponent searches too.
        let against_a_network = RatingSection {
            final_opponents: vec!["alphabeta:depth=3".into(), "net:n.json,visits=800".into()],
            ..r.clone()
        };
        assert!((reserve_share(&against_a_network, 4) - 108.0 / 288.0).abs() < 1e-12);
        // Without round robins the final match has the whole reserve.
        let none = RatingSection {
            final_gauntlet_games: 0,
            ..r
        };
        assert_eq!(reserve_share(&none, 4), 0.0);
    }
}
