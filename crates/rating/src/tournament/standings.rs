//! Standings and tie-breaks (第15条); see [`Standings`].

use crate::result::Side;
use serde::{Deserialize, Serialize};

use super::{Bye, Format, GameEntry, PlayerId, Tournament, WithdrawalEffect};

/// A tie-break criterion. Most rank larger values higher; those for which
/// [`TieBreak::lower_is_better`] holds (fouls, individual places) rank smaller
/// values higher.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TieBreak {
    /// 小分: points of the opponents beaten plus half the points of those
    /// drawn.
    SonnebornBerger,
    /// 胜局: games won (a team's: games won by its players).
    Wins,
    /// 直胜: points (a team's: 场分) scored in the games (matches) among the
    /// entrants still tied.
    DirectEncounter,
    /// 对手分: sum of the opponents' points (团体对手分: their 场分).
    Buchholz,
    /// Buchholz without the lowest opponent score.
    BuchholzCut1,
    /// Buchholz without the highest and lowest opponent scores.
    MedianBuchholz,
    /// Knockout: the bracket round reached (champion = rounds + 1); double
    /// elimination: the losers'-bracket round of the second defeat.
    StageReached,
    /// 犯规: fouls committed (fewer is better).
    Fouls,
    /// 全队总局分: a team's game points over all its matches.
    GamePoints,
    /// 全队胜场: a team's matches won.
    MatchWins,
    /// 最高个人名次: a team's best individual place (smaller is better).
    BestRank,
    /// 次高个人名次: a team's second-best individual place.
    SecondBestRank,
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
            TieBreak::Fouls => "Fouls",
            TieBreak::GamePoints => "GP",
            TieBreak::MatchWins => "MW",
            TieBreak::BestRank => "Best",
            TieBreak::SecondBestRank => "Second",
        }
    }

    /// Whether a smaller value ranks higher.
    #[must_use]
    pub fn lower_is_better(self) -> bool {
        matches!(
            self,
            TieBreak::Fouls | TieBreak::BestRank | TieBreak::SecondBestRank
        )
    }

    /// The criteria of 第15条 for an individual event, in order: 15.1 for
    /// round robins (also each stage of 11.3), 15.2 for Swiss. Eliminations
    /// rank by the round reached.
    #[must_use]
    pub fn defaults_for(format: &Format) -> Vec<TieBreak> {
        match format {
            Format::RoundRobin { .. } | Format::Groups { .. } => vec![
                TieBreak::SonnebornBerger,
                TieBreak::Wins,
                TieBreak::DirectEncounter,
                TieBreak::Fouls,
            ],
            Format::Swiss { .. } => vec![TieBreak::Buchholz, TieBreak::Wins, TieBreak::Fouls],
            Format::Knockout { .. } | Format::DoubleElimination { .. } => {
                vec![TieBreak::StageReached]
            }
        }
    }
}

/// What the first column ranks by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Primary {
    /// 积分 (14.1), more first.
    #[default]
    Points,
    /// 场分 (14.2), more first.
    MatchPoints,
    /// 15.5: the sum of the team's individual places, fewer first.
    RankSum,
    /// Eliminations: nothing; the bracket decides.
    None,
}

impl Primary {
    /// Column label.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Primary::Points => "Pts",
            Primary::MatchPoints => "MP",
            Primary::RankSum => "RankSum",
            Primary::None => "Pts",
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
    /// The [`Standings::primary`] value (for eliminations: points scored,
    /// which do not rank).
    pub points: f64,
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub byes: u32,
    /// Fouls (犯规) in the counted games.
    pub fouls: u32,
    /// Set once the entrant has withdrawn (第20条).
    pub withdrawn: Option<WithdrawalEffect>,
    /// Values of [`Standings::tiebreaks`], in the same order.
    pub tiebreaks: Vec<f64>,
}

/// The ranking, best first (第15条).
///
/// Players are ranked by points (14.1: 1 / ½ / 0), then by the format's
/// tie-breaks in order; players equal on everything share a rank (名次并列):
///
/// - round robin (15.1): 小分 = Sonneborn–Berger, 胜局 = wins, 直胜 = direct
///   encounter, 犯规 = fouls (fewer first);
/// - Swiss (15.2): 对手分 = Buchholz (sum of the final scores of the
///   opponents met), 胜局, 犯规. The text asks for the plain sum, not the
///   median or cut variants; those are available through
///   [`Tournament::standings_with`](super::Tournament::standings_with);
/// - knockout: the bracket round reached (the champion first, then the
///   finalist, then the semi-final losers sharing third place, ...); double
///   elimination likewise by the round of the second defeat.
///
/// A round-robin bye is a rest round worth nothing; a Swiss bye is worth a
/// point (21.4's "+") but is not a game won and adds nothing to
/// Sonneborn–Berger or Buchholz (there is no opponent). A game forfeited
/// without play counts like a played one (21.4: "+" = 1, "-" = 0); in a
/// double forfeit (21.3) both sides have a "-". Games
/// annulled by a withdrawal (20.3) count for nobody, and entrants whose
/// results were annulled or who left before the start (20.2) are listed
/// last.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standings {
    #[serde(default)]
    pub primary: Primary,
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

/// Per-player facts gathered from the counted games.
pub(crate) struct Tally {
    pub(crate) half_points: Vec<u32>,
    pub(crate) wins: Vec<u32>,
    pub(crate) draws: Vec<u32>,
    pub(crate) losses: Vec<u32>,
    pub(crate) byes: Vec<u32>,
    pub(crate) fouls: Vec<u32>,
    /// (opponent, own half points) for every counted game.
    pub(crate) results: Vec<Vec<(PlayerId, u32)>>,
}

/// Tallies `games` (finished, not annulled ones count) and `byes` worth
/// `bye_half_points` each, for `n` entrants.
pub(crate) fn tally<'a>(
    n: usize,
    games: impl IntoIterator<Item = &'a GameEntry>,
    byes: impl IntoIterator<Item = &'a Bye>,
    bye_half_points: u32,
) -> Tally {
    let mut tl = Tally {
        half_points: vec![0; n],
        wins: vec![0; n],
        draws: vec![0; n],
        losses: vec![0; n],
        byes: vec![0; n],
        fouls: vec![0; n],
        results: vec![Vec::new(); n],
    };
    for g in games {
        let Some(result) = g.result else { continue };
        if g.cancelled {
            continue;
        }
        let (r, b) = (g.pairing.red, g.pairing.black);
        // A double forfeit (21.3) is a loss without play for each side.
        for (p, q, hp, fouls) in [
            (r, b, result.half_points(Side::Red), g.fouls[0]),
            (b, r, result.half_points(Side::Black), g.fouls[1]),
        ] {
            tl.half_points[p] += hp;
            tl.fouls[p] += fouls;
            match hp {
                2 => tl.wins[p] += 1,
                1 => tl.draws[p] += 1,
                _ => tl.losses[p] += 1,
            }
            tl.results[p].push((q, hp));
        }
    }
    for bye in byes {
        tl.byes[bye.player] += 1;
        tl.half_points[bye.player] += bye_half_points;
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
        TieBreak::StageReached => t.stage_reached(p),
        TieBreak::Fouls => f64::from(tl.fouls[p]),
        // Team criteria do not apply to players.
        TieBreak::GamePoints
        | TieBreak::MatchWins
        | TieBreak::BestRank
        | TieBreak::SecondBestRank => 0.0,
        TieBreak::DirectEncounter => 0.0, // filled in per tied group
    }
}

/// What [`rank`] needs to order entrants.
pub(crate) struct RankInput<'a> {
    pub(crate) entrants: &'a [PlayerId],
    /// Per entrant id: the primary score, larger first (callers negate a
    /// smaller-first score).
    pub(crate) primary: &'a dyn Fn(PlayerId) -> f64,
    /// Value of a tie-break other than direct encounter.
    pub(crate) value: &'a dyn Fn(PlayerId, TieBreak) -> f64,
    /// Direct encounter of an entrant within a tied group.
    pub(crate) direct: &'a dyn Fn(PlayerId, &[PlayerId]) -> f64,
    /// Entrants listed after all others (annulled or withdrawn before the
    /// start).
    pub(crate) last: &'a dyn Fn(PlayerId) -> bool,
}

/// Orders entrants by the primary score, then the tie-breaks in order
/// (direct encounter computed within the group tied on everything before
/// it); returns `(entrant, shared rank, tie-break values)` best first.
pub(crate) fn rank(
    input: &RankInput<'_>,
    tiebreaks: &[TieBreak],
) -> Vec<(PlayerId, usize, Vec<f64>)> {
    let n = input.entrants.len();
    let mut values: std::collections::HashMap<PlayerId, Vec<f64>> = input
        .entrants
        .iter()
        .map(|&p| {
            (
                p,
                tiebreaks
                    .iter()
                    // + 0.0 turns the -0.0 of an empty f64 sum into 0.
                    .map(|&tb| (input.value)(p, tb) + 0.0)
                    .collect::<Vec<f64>>(),
            )
        })
        .collect();
    let key = |p: PlayerId, upto: usize, values: &std::collections::HashMap<PlayerId, Vec<f64>>| {
        let mut k = vec![if (input.last)(p) { -1.0 } else { 0.0 }, (input.primary)(p)];
        k.extend(
            values[&p][..upto]
                .iter()
                .zip(tiebreaks)
                .map(|(&v, tb)| if tb.lower_is_better() { -v } else { v }),
        );
        k
    };
    let cmp_keys = |a: &Vec<f64>, b: &Vec<f64>| {
        b.iter()
            .zip(a)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    let mut order: Vec<PlayerId> = input.entrants.to_vec();
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
            let group = order[start..end].to_vec();
            if group.len() > 1 {
                for &p in &group {
                    let v = (input.direct)(p, &group);
                    values.get_mut(&p).expect("entrant")[i] = v;
                }
            }
            start = end;
        }
    }
    let all = tiebreaks.len();
    order.sort_by(|&a, &b| cmp_keys(&key(a, all, &values), &key(b, all, &values)).then(a.cmp(&b)));
    let mut out: Vec<(PlayerId, usize, Vec<f64>)> = Vec::with_capacity(n);
    for (pos, &p) in order.iter().enumerate() {
        let rank = match out.last() {
            Some(prev) if cmp_keys(&key(prev.0, all, &values), &key(p, all, &values)).is_eq() => {
                prev.1
            }
            _ => pos + 1,
        };
        out.push((p, rank, values[&p].clone()));
    }
    out
}

/// Standings of `players` over `games` and `byes` only (a whole event, or
/// one stage of it).
pub(crate) fn compute_over(
    t: &Tournament,
    players: &[PlayerId],
    games: &[&GameEntry],
    byes: &[&Bye],
    bye_half_points: u32,
    tiebreaks: &[TieBreak],
) -> Standings {
    let n = t.participants().len();
    let tl = tally(
        n,
        games.iter().copied(),
        byes.iter().copied(),
        bye_half_points,
    );
    let elimination = matches!(
        t.config().format,
        Format::Knockout { .. } | Format::DoubleElimination { .. }
    );
    let points = |p: PlayerId| f64::from(tl.half_points[p]) / 2.0;
    let primary = |p: PlayerId| if elimination { 0.0 } else { points(p) };
    let value = |p: PlayerId, tb: TieBreak| plain_value(t, &tl, p, tb);
    let direct = |p: PlayerId, group: &[PlayerId]| {
        let de: u32 = tl.results[p]
            .iter()
            .filter(|(q, _)| group.contains(q))
            .map(|&(_, hp)| hp)
            .sum();
        f64::from(de) / 2.0
    };
    let last = |p: PlayerId| {
        matches!(
            t.withdrawal(p),
            Some(WithdrawalEffect::Annulled | WithdrawalEffect::BeforeStart)
        )
    };
    let ranked = rank(
        &RankInput {
            entrants: players,
            primary: &primary,
            value: &value,
            direct: &direct,
            last: &last,
        },
        tiebreaks,
    );
    let rows = ranked
        .into_iter()
        .map(|(p, rank, tiebreaks)| Standing {
            rank,
            player: p,
            name: t.participants()[p].name.clone(),
            points: points(p),
            games: tl.wins[p] + tl.draws[p] + tl.losses[p],
            wins: tl.wins[p],
            draws: tl.draws[p],
            losses: tl.losses[p],
            byes: tl.byes[p],
            fouls: tl.fouls[p],
            withdrawn: t.withdrawal(p),
            tiebreaks,
        })
        .collect();
    Standings {
        primary: if elimination {
            Primary::None
        } else {
            Primary::Points
        },
        tiebreaks: tiebreaks.to_vec(),
        rows,
    }
}

pub(super) fn compute(t: &Tournament, tiebreaks: &[TieBreak]) -> Standings {
    if let Some(groups) = t.groups() {
        return groups.overall;
    }
    let players: Vec<PlayerId> = (0..t.participants().len()).collect();
    let games: Vec<&GameEntry> = t.games().iter().collect();
    let byes: Vec<&Bye> = t.byes().iter().collect();
    compute_over(
        t,
        &players,
        &games,
        &byes,
        t.config().format.bye_half_points(),
        tiebreaks,
    )
}
