//! Standings and tie-breaks (第15条); see [`Standings`].

use serde::{Deserialize, Serialize};

use super::{Format, PlayerId, Tournament};

/// A tie-break criterion; larger values rank higher.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// 小分: points of the opponents beaten plus half the points of those
    /// drawn.
    SonnebornBerger,
    /// 胜局: games won.
    Wins,
    /// 直胜: points scored in the games among the players still tied.
    DirectEncounter,
    /// 对手分: sum of the opponents' points.
    Buchholz,
    /// Buchholz without the lowest opponent score.
    BuchholzCut1,
    /// Buchholz without the highest and lowest opponent scores.
    MedianBuchholz,
    /// Knockout: the bracket round reached (champion = rounds + 1).
    StageReached,
}

impl TieBreak {
    /// Short column label.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            TieBreak::SonnebornBerger => "SB",
            TieBreak::Wins => "Wins",
            TieBreak::DirectEncounter => "DE",
            TieBreak::Buchholz => "Buch",
            TieBreak::BuchholzCut1 => "BuchC1",
            TieBreak::MedianBuchholz => "BuchM",
            TieBreak::StageReached => "Stage",
        }
    }

    /// The criteria of 第15条 for a format, in order.
    #[must_use]
    pub fn defaults_for(format: &Format) -> Vec<TieBreak> {
        match format {
            Format::RoundRobin { .. } => vec![
                TieBreak::SonnebornBerger,
                TieBreak::Wins,
                TieBreak::DirectEncounter,
            ],
            Format::Swiss { .. } => vec![TieBreak::Buchholz, TieBreak::Wins],
            Format::Knockout { .. } => vec![TieBreak::StageReached],
        }
    }
}

/// One row of the standings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    /// 1-based; equal rows share the rank of the first of them.
    pub rank: usize,
    pub player: PlayerId,
    pub name: String,
    pub points: f64,
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub byes: u32,
    /// Values of [`Standings::tiebreaks`], in the same order.
    pub tiebreaks: Vec<f64>,
}

/// The ranking, best first (第15条).
///
/// Players are ranked by points (14.1: 1 / ½ / 0), then by the format's
/// tie-breaks in order; players equal on everything share a rank (名次并列):
///
/// - round robin (15.1): 小分 = Sonneborn–Berger, then 胜局 = wins, then
///   直胜 = direct encounter;
/// - Swiss (15.2): 对手分 = Buchholz (sum of the final scores of the
///   opponents met), then wins. The text asks for the plain sum, not the
///   median or cut variants; those are available through
///   [`Tournament::standings_with`](super::Tournament::standings_with);
/// - knockout: the bracket round reached (the champion first, then the
///   finalist, then the semi-final losers sharing third place, ...).
///
/// 犯规 (rule violations) are recorded by arbiters, not by this program, so
/// that criterion is not applied. A bye scores 1 point in round robin and
/// Swiss (like a forfeit win, 21.4) but is not a game won, and it adds
/// nothing to Sonneborn–Berger or Buchholz (there is no opponent).
///
/// In a knockout the points column counts every game, tie-break games
/// included; it does not affect the ranking.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standings {
    pub tiebreaks: Vec<TieBreak>,
    pub rows: Vec<Standing>,
}

impl Standings {
    /// The row of a player.
    #[must_use]
    pub fn of(&self, player: PlayerId) -> Option<&Standing> {
        self.rows.iter().find(|r| r.player == player)
    }
}

/// Per-player facts gathered from the finished games.
struct Tally {
    half_points: Vec<u32>,
    wins: Vec<u32>,
    draws: Vec<u32>,
    losses: Vec<u32>,
    byes: Vec<u32>,
    /// (opponent, own half points) for every finished game.
    results: Vec<Vec<(PlayerId, u32)>>,
}

fn tally(t: &Tournament) -> Tally {
    let n = t.participants().len();
    let mut tl = Tally {
        half_points: vec![0; n],
        wins: vec![0; n],
        draws: vec![0; n],
        losses: vec![0; n],
        byes: vec![0; n],
        results: vec![Vec::new(); n],
    };
    for g in t.games() {
        let Some(result) = g.result else { continue };
        let (r, b) = (g.pairing.red, g.pairing.black);
        for (p, q, hp) in [
            (r, b, result.half_points()),
            (b, r, result.reversed().half_points()),
        ] {
            tl.half_points[p] += hp;
            match hp {
                2 => tl.wins[p] += 1,
                1 => tl.draws[p] += 1,
                _ => tl.losses[p] += 1,
            }
            tl.results[p].push((q, hp));
        }
    }
    let bye_points = if matches!(t.config().format, Format::Knockout { .. }) {
        0
    } else {
        2
    };
    for bye in t.byes() {
        tl.byes[bye.player] += 1;
        tl.half_points[bye.player] += bye_points;
    }
    tl
}

/// Value of a criterion that does not depend on the tied group.
fn plain_value(t: &Tournament, tl: &Tally, p: PlayerId, tb: TieBreak) -> f64 {
    let pts = |q: PlayerId| f64::from(tl.half_points[q]) / 2.0;
    let opp_scores = || -> Vec<f64> {
        let mut v: Vec<f64> = tl.results[p].iter().map(|&(q, _)| pts(q)).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    match tb {
        TieBreak::SonnebornBerger => tl.results[p]
            .iter()
            .map(|&(q, hp)| pts(q) * f64::from(hp) / 2.0)
            .sum(),
        TieBreak::Wins => f64::from(tl.wins[p]),
        TieBreak::Buchholz => opp_scores().iter().sum(),
        TieBreak::BuchholzCut1 => opp_scores().iter().skip(1).sum(),
        TieBreak::MedianBuchholz => {
            let v = opp_scores();
            if v.len() <= 2 {
                0.0
            } else {
                v[1..v.len() - 1].iter().sum()
            }
        }
        TieBreak::StageReached => stage_reached(t, p),
        TieBreak::DirectEncounter => 0.0, // filled in per tied group
    }
}

/// Knockout: the last bracket round the player took part in, +1 for the
/// champion.
fn stage_reached(t: &Tournament, p: PlayerId) -> f64 {
    let mut best = 0.0f64;
    for m in t.knockout_matches() {
        if m.top == p || m.bottom == Some(p) {
            let reached = if m.winner == Some(p) && m.stage == last_stage(t) && m.bottom.is_some() {
                m.stage + 1
            } else {
                m.stage
            };
            best = best.max(f64::from(reached));
        }
    }
    best
}

fn last_stage(t: &Tournament) -> u32 {
    let n = t.participants().len();
    n.next_power_of_two().trailing_zeros()
}

pub(super) fn compute(t: &Tournament, tiebreaks: &[TieBreak]) -> Standings {
    let n = t.participants().len();
    let tl = tally(t);
    let knockout = matches!(t.config().format, Format::Knockout { .. });
    let mut values: Vec<Vec<f64>> = (0..n)
        .map(|p| {
            tiebreaks
                .iter()
                .map(|&tb| plain_value(t, &tl, p, tb))
                .collect()
        })
        .collect();
    let points = |p: PlayerId| f64::from(tl.half_points[p]) / 2.0;

    // Sort key: points (not for knockout, where the bracket decides), then
    // tie-breaks; direct encounter is computed within the group tied on
    // everything before it.
    let key = |p: PlayerId, upto: usize, values: &Vec<Vec<f64>>| -> Vec<f64> {
        let mut k = if knockout {
            Vec::new()
        } else {
            vec![points(p)]
        };
        k.extend_from_slice(&values[p][..upto]);
        k
    };
    let cmp_keys = |a: &Vec<f64>, b: &Vec<f64>| {
        b.iter()
            .zip(a)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };

    let mut order: Vec<PlayerId> = (0..n).collect();
    for (i, &tb) in tiebreaks.iter().enumerate() {
        if tb != TieBreak::DirectEncounter {
            continue;
        }
        order.sort_by(|&a, &b| cmp_keys(&key(a, i, &values), &key(b, i, &values)).then(a.cmp(&b)));
        let mut start = 0;
        while start < n {
            let k0 = key(order[start], i, &values);
            let mut end = start + 1;
            while end < n && cmp_keys(&key(order[end], i, &values), &k0).is_eq() {
                end += 1;
            }
            let group = &order[start..end];
            if group.len() > 1 {
                for &p in group {
                    let de: u32 = tl.results[p]
                        .iter()
                        .filter(|(q, _)| group.contains(q))
                        .map(|&(_, hp)| hp)
                        .sum();
                    values[p][i] = f64::from(de) / 2.0;
                }
            }
            start = end;
        }
    }

    let all = tiebreaks.len();
    order.sort_by(|&a, &b| cmp_keys(&key(a, all, &values), &key(b, all, &values)).then(a.cmp(&b)));
    let mut rows: Vec<Standing> = Vec::with_capacity(n);
    for (pos, &p) in order.iter().enumerate() {
        let rank = match rows.last() {
            Some(prev)
                if cmp_keys(&key(prev.player, all, &values), &key(p, all, &values)).is_eq() =>
            {
                prev.rank
            }
            _ => pos + 1,
        };
        rows.push(Standing {
            rank,
            player: p,
            name: t.participants()[p].name.clone(),
            points: points(p),
            games: tl.wins[p] + tl.draws[p] + tl.losses[p],
            wins: tl.wins[p],
            draws: tl.draws[p],
            losses: tl.losses[p],
            byes: tl.byes[p],
            tiebreaks: values[p].clone(),
        });
    }
    Standings {
        tiebreaks: tiebreaks.to_vec(),
        rows,
    }
}
