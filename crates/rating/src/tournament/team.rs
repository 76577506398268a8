//! Team events (团体赛, 第12条): teams of players meeting board against
//! board, or an individual event scored by team (12.5).
//!
//! A board event is a [`Tournament`] whose entrants are the teams: each of
//! its "games" is a team match (场), expanded here into board games between
//! the players. A match is won by the team with more game points (局分) and
//! scores 场分 2 / 1 / 0 (14.2); the 场分 are recorded in the team
//! tournament as a win, draw or loss, so its pairing (Berger tables, Swiss
//! by 场分) and byes work unchanged. The team listed first in a Berger pair
//! (13.2), or the Swiss team given "Red" (先走, 13.3), has Red on the odd
//! boards and Black on the even boards.
//!
//! Fielding (第12条):
//!
//! - 12.1 分台定人制 ([`Fielding::FixedBoards`]): each team lists exactly
//!   `boards` members in board order and always fields them so;
//! - 12.2 分台换人制 ([`Fielding::Substitutes`]): a team lists `boards` or
//!   more members in board order; each match it fields `boards` of them
//!   keeping their order (1-2-3-5 but never 2-1-3-4). The team's choice
//!   ("各队可以从中自选一种") is made for it by a lot from the event seed;
//! - 12.3 临时定台制 ([`Fielding::FreeBoards`]): exactly `boards` members,
//!   placed on the boards anew for every match, by a lot from the seed;
//! - 12.4 全队轮赛制 ([`Fielding::AllPlayAll`]): every member of one team
//!   plays every member of the other. Its games are numbered as boards,
//!   the first team's member `i` against the other's member `j` on board
//!   `i·m + j + 1` (`m` members in the other team), so 13.2's odd boards
//!   give the colours;
//! - 12.5 队员总分制 ([`Fielding::TotalScore`]): no boards; the players play
//!   the individual event of `format`, and the teams are ranked by the sum
//!   of their players' places (15.5).
//!
//! Tie-breaks: 15.3 for round robins (全队总局分, 全队胜局, 直胜, 全队犯规),
//! 15.4 for Swiss (团体对手分, 全队总局分, 全队胜场, 全队犯规), 15.5 for
//! total score (最高个人名次, 次高个人名次, 全队犯规).
//!
//! A Swiss bye is 21.4's "+" for a team: 2 场分 and no 局分; a round-robin
//! bye is a rest round worth nothing. A team that withdraws (第20条)
//! forfeits whole matches (2 场分 to the opponent, no 局分: 21.4 fixes only
//! the 场分). A board both players forfeit (21.3) gives neither team 局分;
//! a match whose every board is forfeited by both sides is forfeited by both
//! teams (0 场分 and a "-" each).
//!
//! The PGN `Round` tag of a board game is `round.match.board`
//! ([`TeamTournament::round_tag`]).

use std::fmt::Write as _;

use rand::{SeedableRng, seq::SliceRandom};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::crosstable::{aligned, csv, number, result_symbol, standing_cells, standing_headers};
use super::standings::{RankInput, rank, tally};
use super::{
    Crosstable, Format, GameEntry, GameId, GameKind, GameReport, Pairing, Participant, PlayerId,
    Primary, Score, Standing, Standings, TieBreak, Tournament, TournamentConfig, TournamentError,
    Withdrawal,
};
use crate::GameResult;
use crate::result::Side;

/// How a team fields its players (第12条).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fielding {
    /// 12.1 分台定人制.
    FixedBoards,
    /// 12.2 分台换人制.
    Substitutes,
    /// 12.3 临时定台制.
    FreeBoards,
    /// 12.4 全队轮赛制.
    AllPlayAll,
    /// 12.5 队员总分制.
    TotalScore,
}

impl Fielding {
    fn article(self) -> &'static str {
        match self {
            Fielding::FixedBoards => "12.1",
            Fielding::Substitutes => "12.2",
            Fielding::FreeBoards => "12.3",
            Fielding::AllPlayAll => "12.4",
            Fielding::TotalScore => "12.5",
        }
    }
}

/// The `[team]` section of a tournament file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamSection {
    pub fielding: Fielding,
    /// Boards per match; required for 12.1-12.3, not allowed otherwise.
    #[serde(default)]
    pub boards: Option<u32>,
}

/// A team: its members are participant names, in board order (12.1, 12.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Team {
    pub name: String,
    pub members: Vec<String>,
}

/// A team event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamEventConfig {
    pub name: String,
    /// The system the teams (or, for 12.5, the players) play.
    pub format: Format,
    pub seed: u64,
    pub participants: Vec<Participant>,
    pub teams: Vec<Team>,
    pub team: TeamSection,
    /// Teams that withdraw (players, for 12.5).
    pub withdrawals: Vec<Withdrawal>,
}

/// A team event that cannot be set up or driven.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TeamError {
    #[error(transparent)]
    Tournament(#[from] TournamentError),
    #[error("teams[{team:?}].members: no participant is named {member:?}")]
    UnknownMember { team: String, member: String },
    #[error("teams: {member:?} is listed more than once")]
    MemberTwice { member: String },
    #[error("withdrawals: no team is named {0:?} (a board event withdraws teams)")]
    UnknownWithdrawingTeam(String),
    #[error("[[teams]] needs a [team] section saying how teams field their players")]
    MissingTeamSection,
    #[error(
        "teams: under {article} every team needs the same number of members (15.5 sums their places), got {sizes:?}"
    )]
    UnequalTeams {
        article: &'static str,
        sizes: Vec<usize>,
    },
    #[error("participant {0:?} is in no team")]
    NotInTeam(String),
    #[error("teams[{team:?}] has no members")]
    EmptyTeam { team: String },
    #[error("team.boards is required for fielding {article} and must be at least 1")]
    MissingBoards { article: &'static str },
    #[error("team.boards does not apply to fielding {article}")]
    BoardsNotAllowed { article: &'static str },
    #[error(
        "teams[{team:?}] has {members} members; fielding {article} with {boards} boards needs {need}"
    )]
    TeamSize {
        team: String,
        members: usize,
        boards: u32,
        article: &'static str,
        need: &'static str,
    },
    #[error(
        "team matches are implemented for round_robin and swiss (第12条 with 13.2/13.3), not {0}"
    )]
    UnsupportedFormat(&'static str),
}

/// The seed of the lot that fields `team` in round `round` (12.2, 12.3).
///
/// Member `team` of the family seeded by the event seed and the round
/// ([`xq_core::hash::seed_of`]): what xq-eval's `matches::game_seed` gives game
/// `team` of a match seeded `seed ^ round.rotate_left(32)`, which drew the line-ups
/// before this crate existed. A test pins its values, since a team event replayed
/// from its results must field the same players.
fn lineup_seed(seed: u64, round: u32, team: usize) -> u64 {
    xq_core::hash::seed_of(seed ^ u64::from(round).rotate_left(32), team as u64)
}

/// One team match (场).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamMatch {
    pub round: u32,
    /// The team listed first (13.2) or moving first (13.3): Red on odd boards.
    pub home: usize,
    pub away: usize,
    /// The match's game in the tournament of teams.
    pub team_game: GameId,
    /// The board games, in board order (board `i + 1` is `games[i]`).
    pub games: Vec<GameId>,
}

#[derive(Debug, Clone)]
enum Kind {
    Boards {
        teams: Tournament,
        games: Vec<GameEntry>,
        matches: Vec<TeamMatch>,
        /// Board game → its match.
        match_of: Vec<usize>,
    },
    TotalScore {
        players: Tournament,
    },
}

/// A team event in progress. Like [`Tournament`], it hands out rounds of
/// games between players and takes their results.
#[derive(Debug, Clone)]
pub struct TeamTournament {
    config: TeamEventConfig,
    /// Team of each participant.
    team_of: Vec<usize>,
    /// Members of each team as participant ids, in listed order.
    members: Vec<Vec<PlayerId>>,
    kind: Kind,
}

impl TeamTournament {
    /// Validates the teams against the participants and the fielding.
    ///
    /// # Errors
    ///
    /// A member who is not a participant or is in two teams, a participant
    /// in no team, a team of the wrong size for the fielding, a board match
    /// format other than round robin or Swiss, or any error of
    /// [`Tournament::new`] for the tournament of teams (or of players, 12.5).
    pub fn new(config: TeamEventConfig) -> Result<TeamTournament, TeamError> {
        let n = config.participants.len();
        let mut team_of = vec![usize::MAX; n];
        let mut members = Vec::with_capacity(config.teams.len());
        for (t, team) in config.teams.iter().enumerate() {
            if team.members.is_empty() {
                return Err(TeamError::EmptyTeam {
                    team: team.name.clone(),
                });
            }
            let mut ids = Vec::with_capacity(team.members.len());
            for m in &team.members {
                let Some(p) = config.participants.iter().position(|p| &p.name == m) else {
                    return Err(TeamError::UnknownMember {
                        team: team.name.clone(),
                        member: m.clone(),
                    });
                };
                if team_of[p] != usize::MAX {
                    return Err(TeamError::MemberTwice { member: m.clone() });
                }
                team_of[p] = t;
                ids.push(p);
            }
            members.push(ids);
        }
        if let Some(p) = team_of.iter().position(|&t| t == usize::MAX) {
            return Err(TeamError::NotInTeam(config.participants[p].name.clone()));
        }
        let fielding = config.team.fielding;
        if fielding != Fielding::TotalScore
            && let Some(w) = config
                .withdrawals
                .iter()
                .find(|w| !config.teams.iter().any(|t| t.name == w.name))
        {
            return Err(TeamError::UnknownWithdrawingTeam(w.name.clone()));
        }
        let article = fielding.article();
        match (fielding, config.team.boards) {
            (
                Fielding::FixedBoards | Fielding::Substitutes | Fielding::FreeBoards,
                None | Some(0),
            ) => {
                return Err(TeamError::MissingBoards { article });
            }
            (Fielding::AllPlayAll | Fielding::TotalScore, Some(_)) => {
                return Err(TeamError::BoardsNotAllowed { article });
            }
            (_, Some(boards)) => {
                for team in &config.teams {
                    let k = team.members.len();
                    let (ok, need) = match fielding {
                        Fielding::Substitutes => (k >= boards as usize, "at least that many"),
                        _ => (k == boards as usize, "exactly that many"),
                    };
                    if !ok {
                        return Err(TeamError::TeamSize {
                            team: team.name.clone(),
                            members: k,
                            boards,
                            article,
                            need,
                        });
                    }
                }
            }
            (Fielding::TotalScore, None) => {
                // 15.5 ranks by the sum of the members' places, fewer first: a smaller
                // team would have a smaller sum without playing better.
                let sizes: Vec<usize> = config.teams.iter().map(|t| t.members.len()).collect();
                if sizes.windows(2).any(|w| w[0] != w[1]) {
                    return Err(TeamError::UnequalTeams { article, sizes });
                }
            }
            (_, None) => {}
        }
        let kind = if fielding == Fielding::TotalScore {
            Kind::TotalScore {
                players: Tournament::new(TournamentConfig {
                    name: config.name.clone(),
                    format: config.format,
                    participants: config.participants.clone(),
                    seed: config.seed,
                    withdrawals: config.withdrawals.clone(),
                })?,
            }
        } else {
            if !matches!(
                config.format,
                Format::RoundRobin { .. } | Format::Swiss { .. }
            ) {
                return Err(TeamError::UnsupportedFormat(super::format_name(
                    &config.format,
                )));
            }
            let teams = Tournament::new(TournamentConfig {
                name: config.name.clone(),
                format: config.format,
                participants: config
                    .teams
                    .iter()
                    .map(|t| Participant::new(t.name.clone(), "team"))
                    .collect(),
                seed: config.seed,
                withdrawals: config.withdrawals.clone(),
            })?;
            Kind::Boards {
                teams,
                games: Vec::new(),
                matches: Vec::new(),
                match_of: Vec::new(),
            }
        };
        Ok(TeamTournament {
            config,
            team_of,
            members,
            kind,
        })
    }

    #[must_use]
    pub fn config(&self) -> &TeamEventConfig {
        &self.config
    }

    #[must_use]
    pub fn participants(&self) -> &[Participant] {
        &self.config.participants
    }

    /// The team of a participant.
    #[must_use]
    pub fn team_of(&self, player: PlayerId) -> usize {
        self.team_of[player]
    }

    /// Every board game handed out so far (12.5: every game of the
    /// individual event).
    #[must_use]
    pub fn games(&self) -> &[GameEntry] {
        match &self.kind {
            Kind::Boards { games, .. } => games,
            Kind::TotalScore { players } => players.games(),
        }
    }

    /// Every team match so far (empty for 12.5).
    #[must_use]
    pub fn matches(&self) -> &[TeamMatch] {
        match &self.kind {
            Kind::Boards { matches, .. } => matches,
            Kind::TotalScore { .. } => &[],
        }
    }

    /// The tournament of teams (board events) or of players (12.5).
    #[must_use]
    pub fn inner(&self) -> &Tournament {
        match &self.kind {
            Kind::Boards { teams, .. } => teams,
            Kind::TotalScore { players } => players,
        }
    }

    /// Whether every game has been handed out and played.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        match &self.kind {
            Kind::Boards { teams, .. } => teams.is_finished(),
            Kind::TotalScore { players } => players.is_finished(),
        }
    }

    /// A team's line-up for a match of round `round`: who plays, in board
    /// order (all members for 12.4).
    fn lineup(&self, team: usize, round: u32) -> Vec<PlayerId> {
        let members = &self.members[team];
        let boards = self.config.team.boards.unwrap_or(0) as usize;
        let mut rng = ChaCha8Rng::seed_from_u64(lineup_seed(self.config.seed, round, team));
        match self.config.team.fielding {
            Fielding::Substitutes => {
                let mut chosen =
                    rand::seq::index::sample(&mut rng, members.len(), boards).into_vec();
                chosen.sort_unstable();
                chosen.into_iter().map(|i| members[i]).collect()
            }
            Fielding::FreeBoards => {
                let mut order = members.clone();
                order.shuffle(&mut rng);
                order
            }
            Fielding::FixedBoards | Fielding::AllPlayAll | Fielding::TotalScore => members.clone(),
        }
    }

    /// Hands out the next round's board games; empty when finished.
    ///
    /// # Errors
    ///
    /// As [`Tournament::next_round`].
    pub fn next_round(&mut self) -> Result<Vec<Pairing>, TournamentError> {
        let pending = self.games().iter().filter(|g| g.result.is_none()).count();
        let team_pairings = match &mut self.kind {
            Kind::TotalScore { players } => return players.next_round(),
            Kind::Boards { teams, .. } => {
                if pending > 0 {
                    return Err(TournamentError::RoundInProgress {
                        round: teams.rounds_played(),
                        pending,
                    });
                }
                teams.next_round()?
            }
        };
        let all_play_all = self.config.team.fielding == Fielding::AllPlayAll;
        let mut planned = Vec::new();
        for tp in &team_pairings {
            let home = self.lineup(tp.red, tp.round);
            let away = self.lineup(tp.black, tp.round);
            let boards: Vec<(PlayerId, PlayerId)> = if all_play_all {
                home.iter()
                    .flat_map(|&h| away.iter().map(move |&a| (h, a)))
                    .collect()
            } else {
                home.iter().copied().zip(away.iter().copied()).collect()
            };
            planned.push((*tp, boards));
        }
        let Kind::Boards {
            games,
            matches,
            match_of,
            ..
        } = &mut self.kind
        else {
            unreachable!("total score returned above");
        };
        let mut out = Vec::new();
        for (tp, boards) in planned {
            let mut ids = Vec::with_capacity(boards.len());
            for (i, (h, a)) in boards.into_iter().enumerate() {
                // 13.2 / 13.3: the first team has Red on odd boards.
                let (red, black) = if i % 2 == 0 { (h, a) } else { (a, h) };
                let pairing = Pairing {
                    game: games.len(),
                    round: tp.round,
                    board: out.len() as u32 + 1,
                    red,
                    black,
                    kind: GameKind::Regular,
                };
                ids.push(pairing.game);
                games.push(GameEntry::pending(pairing));
                match_of.push(matches.len());
                out.push(pairing);
            }
            matches.push(TeamMatch {
                round: tp.round,
                home: tp.red,
                away: tp.black,
                team_game: tp.game,
                games: ids,
            });
        }
        Ok(out)
    }

    /// Where a game stands, for the PGN `Round` tag: in a board event
    /// `round.match.board` (`3.2.1`: round 3, its second match, board 1 of
    /// that match), the PGN standard's dotted sub-levels of a round; under
    /// 12.5 the individual event's `round.board`. A pairing's `board` numbers
    /// the games of the whole round, which does not say which match a game
    /// belongs to.
    #[must_use]
    pub fn round_tag(&self, pairing: &Pairing) -> String {
        if let Kind::Boards {
            matches, match_of, ..
        } = &self.kind
            && let Some(&index) = match_of.get(pairing.game)
            && let Some(board) = matches[index].games.iter().position(|&g| g == pairing.game)
        {
            let round = matches[index].round;
            let number = matches[..index].iter().filter(|m| m.round == round).count() + 1;
            return format!("{round}.{number}.{}", board + 1);
        }
        format!("{}.{}", pairing.round, pairing.board)
    }

    /// Records a board game; a match whose boards are all finished is
    /// scored (14.2) in the tournament of teams.
    ///
    /// # Errors
    ///
    /// The game was never handed out or already has a result.
    pub fn record_report(
        &mut self,
        game: GameId,
        report: GameReport,
    ) -> Result<(), TournamentError> {
        let (teams, games, matches, match_of) = match &mut self.kind {
            Kind::TotalScore { players } => return players.record_report(game, report),
            Kind::Boards {
                teams,
                games,
                matches,
                match_of,
            } => (teams, games, matches, match_of),
        };
        games
            .get_mut(game)
            .ok_or(TournamentError::UnknownGame(game))?
            .record(report)?;
        let m = &matches[match_of[game]];
        let boards: Vec<&GameEntry> = m.games.iter().map(|&g| &games[g]).collect();
        if boards.iter().any(|g| g.result.is_none()) {
            return Ok(());
        }
        let (mut home, mut away) = (0u32, 0u32);
        let mut fouls = [0u32; 2];
        let mut double_forfeits = 0;
        for g in &boards {
            let Some(score) = g.result else { continue };
            double_forfeits += usize::from(score == Score::DoubleForfeit);
            let home_red = self.team_of[g.pairing.red] == m.home;
            let (h, a) = (score.half_points(Side::Red), score.half_points(Side::Black));
            let (h, a) = if home_red { (h, a) } else { (a, h) };
            home += h;
            away += a;
            let (hf, af) = if home_red {
                (g.fouls[0], g.fouls[1])
            } else {
                (g.fouls[1], g.fouls[0])
            };
            fouls[0] += hf;
            fouls[1] += af;
        }
        // 14.2: 局分多者为胜. A board both players forfeit (21.3) gives neither
        // team 局分; a match in which every board is forfeited by both sides
        // was not played by either team, so both teams forfeit it (0 场分).
        let result = if double_forfeits == boards.len() {
            Score::DoubleForfeit
        } else {
            match home.cmp(&away) {
                std::cmp::Ordering::Greater => Score::Win,
                std::cmp::Ordering::Equal => Score::Draw,
                std::cmp::Ordering::Less => Score::Loss,
            }
        };
        teams.record_report(
            m.team_game,
            GameReport {
                result,
                forfeit: boards.iter().all(|g| g.forfeit),
                fouls,
            },
        )
    }

    /// The team standings: 15.3 (round robin) or 15.4 (Swiss) for board
    /// events, 15.5 for total score.
    #[must_use]
    pub fn standings(&self) -> Standings {
        match &self.kind {
            Kind::Boards {
                teams,
                games,
                matches,
                ..
            } => self.board_standings(teams, games, matches),
            Kind::TotalScore { players } => self.total_score_standings(players),
        }
    }

    fn board_standings(
        &self,
        teams: &Tournament,
        games: &[GameEntry],
        matches: &[TeamMatch],
    ) -> Standings {
        let nt = self.config.teams.len();
        let swiss = matches!(self.config.format, Format::Swiss { .. });
        let tiebreaks = if swiss {
            vec![
                TieBreak::Buchholz,
                TieBreak::GamePoints,
                TieBreak::MatchWins,
                TieBreak::Fouls,
            ]
        } else {
            vec![
                TieBreak::GamePoints,
                TieBreak::Wins,
                TieBreak::DirectEncounter,
                TieBreak::Fouls,
            ]
        };
        // 场分 in half-point units are exactly 2 / 1 / 0 per match.
        let tl = tally(
            nt,
            teams.games(),
            teams.byes(),
            self.config.format.bye_half_points(),
        );
        let mut game_points = vec![0u32; nt];
        let mut game_wins = vec![0u32; nt];
        // Boards of matches annulled by a withdrawal (20.3) count for nobody.
        let counted = matches
            .iter()
            .filter(|m| !teams.games()[m.team_game].cancelled)
            .flat_map(|m| m.games.iter().map(|&g| &games[g]));
        for g in counted {
            let Some(r) = g.result else { continue };
            let (rt, bt) = (self.team_of[g.pairing.red], self.team_of[g.pairing.black]);
            game_points[rt] += r.half_points(Side::Red);
            game_points[bt] += r.half_points(Side::Black);
            match r {
                Score::Win => game_wins[rt] += 1,
                Score::Loss => game_wins[bt] += 1,
                Score::Draw | Score::DoubleForfeit => {}
            }
        }
        let mp = |t: usize| f64::from(tl.half_points[t]);
        let value = |t: usize, tb: TieBreak| match tb {
            TieBreak::GamePoints => f64::from(game_points[t]) / 2.0,
            TieBreak::Wins => f64::from(game_wins[t]),
            TieBreak::MatchWins => f64::from(tl.wins[t]),
            TieBreak::Buchholz => tl.results[t].iter().map(|&(q, _)| mp(q)).sum::<f64>(),
            TieBreak::Fouls => f64::from(tl.fouls[t]),
            _ => 0.0,
        };
        let direct = |t: usize, group: &[usize]| {
            tl.results[t]
                .iter()
                .filter(|(q, _)| group.contains(q))
                .map(|&(_, hp)| f64::from(hp))
                .sum::<f64>()
        };
        let last = |t: usize| {
            matches!(
                teams.withdrawal(t),
                Some(super::WithdrawalEffect::Annulled | super::WithdrawalEffect::BeforeStart)
            )
        };
        let entrants: Vec<usize> = (0..nt).collect();
        let ranked = rank(
            &RankInput {
                entrants: &entrants,
                primary: &mp,
                value: &value,
                direct: &direct,
                last: &last,
            },
            &tiebreaks,
        );
        let rows = ranked
            .into_iter()
            .map(|(t, rank, values)| Standing {
                rank,
                player: t,
                name: self.config.teams[t].name.clone(),
                points: mp(t),
                games: tl.wins[t] + tl.draws[t] + tl.losses[t],
                wins: tl.wins[t],
                draws: tl.draws[t],
                losses: tl.losses[t],
                byes: tl.byes[t],
                fouls: tl.fouls[t],
                withdrawn: teams.withdrawal(t),
                tiebreaks: values,
            })
            .collect();
        Standings {
            primary: Primary::MatchPoints,
            tiebreaks,
            rows,
        }
    }

    fn total_score_standings(&self, players: &Tournament) -> Standings {
        let nt = self.config.teams.len();
        let individual = players.standings();
        let n = self.config.participants.len();
        // A team with one member has no second place; it counts as one
        // below the last place.
        let places = |t: usize| -> Vec<usize> {
            let mut v: Vec<usize> = self.members[t]
                .iter()
                .map(|&p| individual.of(p).map_or(n + 1, |s| s.rank))
                .collect();
            v.sort_unstable();
            v
        };
        let fouls = |t: usize| -> u32 {
            self.members[t]
                .iter()
                .map(|&p| individual.of(p).map_or(0, |s| s.fouls))
                .sum()
        };
        let rank_sum = |t: usize| places(t).iter().sum::<usize>() as f64;
        let tiebreaks = vec![
            TieBreak::BestRank,
            TieBreak::SecondBestRank,
            TieBreak::Fouls,
        ];
        let value = |t: usize, tb: TieBreak| match tb {
            TieBreak::BestRank => places(t)[0] as f64,
            TieBreak::SecondBestRank => places(t).get(1).copied().unwrap_or(n + 1) as f64,
            TieBreak::Fouls => f64::from(fouls(t)),
            _ => 0.0,
        };
        let primary = |t: usize| -rank_sum(t);
        let entrants: Vec<usize> = (0..nt).collect();
        let ranked = rank(
            &RankInput {
                entrants: &entrants,
                primary: &primary,
                value: &value,
                direct: &|_, _| 0.0,
                last: &|_| false,
            },
            &tiebreaks,
        );
        let rows = ranked
            .into_iter()
            .map(|(t, rank, values)| {
                let sum = |f: fn(&Standing) -> u32| -> u32 {
                    self.members[t]
                        .iter()
                        .filter_map(|&p| individual.of(p))
                        .map(f)
                        .sum()
                };
                Standing {
                    rank,
                    player: t,
                    name: self.config.teams[t].name.clone(),
                    points: rank_sum(t),
                    games: sum(|s| s.games),
                    wins: sum(|s| s.wins),
                    draws: sum(|s| s.draws),
                    losses: sum(|s| s.losses),
                    byes: sum(|s| s.byes),
                    fouls: fouls(t),
                    withdrawn: None,
                    tiebreaks: values,
                }
            })
            .collect();
        Standings {
            primary: Primary::RankSum,
            tiebreaks,
            rows,
        }
    }

    /// The team crosstable.
    #[must_use]
    pub fn crosstable(&self) -> TeamCrosstable {
        let standings = self.standings();
        let rank_of = |t: usize| standings.of(t).map(|s| s.rank);
        let mut rows: Vec<TeamRow> = standings
            .rows
            .iter()
            .map(|s| TeamRow {
                rank: s.rank,
                team: s.player,
                name: s.name.clone(),
                points: s.points,
                tiebreaks: s.tiebreaks.clone(),
                members: self.members[s.player]
                    .iter()
                    .map(|&p| self.config.participants[p].name.clone())
                    .collect(),
                entries: Vec::new(),
            })
            .collect();
        let mut matches_view = Vec::new();
        let individual = match &self.kind {
            Kind::TotalScore { players } => Some(players.crosstable()),
            Kind::Boards {
                teams,
                games,
                matches,
                ..
            } => {
                let points_of = |m: &TeamMatch, team: usize| -> u32 {
                    m.games
                        .iter()
                        .filter_map(|&g| {
                            let e = &games[g];
                            let side = if self.team_of[e.pairing.red] == team {
                                Side::Red
                            } else {
                                Side::Black
                            };
                            Some(e.result?.half_points(side))
                        })
                        .sum()
                };
                let row_of = |t: usize| rows.iter().position(|r| r.team == t).expect("every team");
                let mut cells: Vec<(usize, TeamEntry)> = Vec::new();
                for e in teams.games() {
                    let p = &e.pairing;
                    let m = matches.iter().find(|m| m.team_game == p.game);
                    for (me, opp, first) in [(p.red, p.black, true), (p.black, p.red, false)] {
                        cells.push((
                            row_of(me),
                            TeamEntry {
                                round: p.round,
                                opponent: Some(opp),
                                opponent_rank: rank_of(opp),
                                first: Some(first),
                                game_points: m.map(|m| {
                                    (
                                        f64::from(points_of(m, me)) / 2.0,
                                        f64::from(points_of(m, opp)) / 2.0,
                                    )
                                }),
                                result: e.result.map(|r| r.for_side(Side::red_if(first))),
                                forfeit: e.forfeit,
                                cancelled: e.cancelled,
                            },
                        ));
                    }
                }
                for b in teams.byes() {
                    cells.push((
                        row_of(b.player),
                        TeamEntry {
                            round: b.round,
                            opponent: None,
                            opponent_rank: None,
                            first: None,
                            game_points: None,
                            result: None,
                            forfeit: false,
                            cancelled: false,
                        },
                    ));
                }
                for (row, cell) in cells {
                    rows[row].entries.push(cell);
                }
                for m in matches {
                    matches_view.push(MatchView {
                        round: m.round,
                        home: self.config.teams[m.home].name.clone(),
                        away: self.config.teams[m.away].name.clone(),
                        home_points: f64::from(points_of(m, m.home)) / 2.0,
                        away_points: f64::from(points_of(m, m.away)) / 2.0,
                        boards: m
                            .games
                            .iter()
                            .enumerate()
                            .map(|(i, &g)| {
                                let e = &games[g];
                                BoardView {
                                    board: i as u32 + 1,
                                    red: self.config.participants[e.pairing.red].name.clone(),
                                    black: self.config.participants[e.pairing.black].name.clone(),
                                    result: e.result,
                                    forfeit: e.forfeit,
                                }
                            })
                            .collect(),
                    });
                }
                None
            }
        };
        for row in &mut rows {
            row.entries.sort_by_key(|e| e.round);
        }
        TeamCrosstable {
            name: self.config.name.clone(),
            format: self.config.format,
            fielding: self.config.team.fielding,
            boards: self.config.team.boards,
            seed: self.config.seed,
            rounds: self.inner().rounds_played(),
            round_robin: matches!(self.config.format, Format::RoundRobin { .. }),
            standings,
            rows,
            matches: matches_view,
            individual,
        }
    }
}

/// One match (or bye) of a team, from that team's view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TeamEntry {
    pub round: u32,
    /// `None` for a bye.
    pub opponent: Option<usize>,
    pub opponent_rank: Option<usize>,
    /// Whether the team was listed first (Red on odd boards); `None` for a
    /// bye.
    pub first: Option<bool>,
    /// (own, opponent's) 局分; `None` for a bye or a forfeited match.
    pub game_points: Option<(f64, f64)>,
    /// The match result; `None` for a bye or while unplayed.
    pub result: Option<GameResult>,
    /// Forfeited without play (21.4).
    pub forfeit: bool,
    /// Annulled by a withdrawal (20.3).
    pub cancelled: bool,
}

impl TeamEntry {
    fn cell(&self, round_robin: bool) -> String {
        let (Some(rank), Some(first)) = (self.opponent_rank, self.first) else {
            return if round_robin { "rest" } else { "bye+" }.to_owned();
        };
        let colour = if first { 'r' } else { 'b' };
        let body = if self.forfeit {
            match self.result {
                Some(GameResult::Win) => "+".to_owned(),
                Some(GameResult::Loss) => "-".to_owned(),
                other => result_symbol(other).to_owned(),
            }
        } else {
            match (self.game_points, self.result) {
                (Some((a, b)), Some(_)) => format!("{}-{}", number(a), number(b)),
                _ => "?".to_owned(),
            }
        };
        let cell = format!("{rank}{colour}{body}");
        if self.cancelled {
            format!("({cell})")
        } else {
            cell
        }
    }
}

/// A team's row of the crosstable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TeamRow {
    pub rank: usize,
    pub team: usize,
    pub name: String,
    /// 场分, or for 12.5 the sum of places.
    pub points: f64,
    pub tiebreaks: Vec<f64>,
    pub members: Vec<String>,
    pub entries: Vec<TeamEntry>,
}

/// One board of a match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoardView {
    pub board: u32,
    pub red: String,
    pub black: String,
    /// From Red's view.
    pub result: Option<Score>,
    pub forfeit: bool,
}

/// A match with its boards.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchView {
    pub round: u32,
    pub home: String,
    pub away: String,
    pub home_points: f64,
    pub away_points: f64,
    pub boards: Vec<BoardView>,
}

/// The crosstable of a team event; serialize it with serde for JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TeamCrosstable {
    pub name: String,
    pub format: Format,
    pub fielding: Fielding,
    pub boards: Option<u32>,
    /// The event seed (line-up lots, Swiss colours).
    pub seed: u64,
    pub rounds: u32,
    round_robin: bool,
    pub standings: Standings,
    pub rows: Vec<TeamRow>,
    /// Board events: every match with its boards.
    pub matches: Vec<MatchView>,
    /// 12.5: the individual event's crosstable.
    pub individual: Option<Crosstable>,
}

impl TeamCrosstable {
    /// Column headers shared by text and CSV.
    fn headers(&self) -> Vec<String> {
        let mut h = standing_headers(&self.standings, "Team");
        if self.individual.is_some() {
            h.push("Members".to_owned());
        } else {
            h.extend((1..=self.rounds).map(|r| format!("R{r}")));
        }
        h
    }

    fn cells(&self, row: &TeamRow) -> Vec<String> {
        let mut c = standing_cells(row.rank, &row.name, row.points, &row.tiebreaks);
        if self.individual.is_some() {
            c.push(row.members.join(" "));
        } else {
            for r in 1..=self.rounds {
                c.push(
                    row.entries
                        .iter()
                        .filter(|e| e.round == r)
                        .map(|e| e.cell(self.round_robin))
                        .collect::<Vec<_>>()
                        .join(" "),
                );
            }
        }
        c
    }

    /// Aligned plain text: the team table, then every match board by board
    /// (or, for 12.5, the individual crosstable).
    #[must_use]
    pub fn to_text(&self) -> String {
        let body: Vec<Vec<String>> = self.rows.iter().map(|r| self.cells(r)).collect();
        let mut out = String::new();
        if !self.name.is_empty() {
            let _ = writeln!(out, "{}", self.name);
        }
        out.push_str(&aligned(&self.headers(), &body));
        if !self.matches.is_empty() {
            out.push('\n');
            for m in &self.matches {
                let _ = writeln!(
                    out,
                    "R{} {} {}-{} {}",
                    m.round,
                    m.home,
                    number(m.home_points),
                    number(m.away_points),
                    m.away
                );
                for b in &m.boards {
                    let result = match (b.forfeit, b.result) {
                        (true, Some(Score::Win)) => "+ -".to_owned(),
                        (true, Some(Score::Loss)) => "- +".to_owned(),
                        (_, Some(Score::DoubleForfeit)) => "- -".to_owned(),
                        (_, r) => format!(
                            "{} {}",
                            result_symbol(r.map(|r| r.for_side(Side::Red))),
                            result_symbol(r.map(|r| r.for_side(Side::Black)))
                        ),
                    };
                    let _ = writeln!(out, "  board {}: {} - {} {result}", b.board, b.red, b.black);
                }
            }
        }
        if let Some(ind) = &self.individual {
            out.push('\n');
            out.push_str(&ind.to_text());
        }
        out
    }

    /// CSV (RFC 4180 quoting) of the team table.
    #[must_use]
    pub fn to_csv(&self) -> String {
        let body: Vec<Vec<String>> = self.rows.iter().map(|r| self.cells(r)).collect();
        csv(&self.headers(), &body)
    }

    /// Pretty-printed JSON of the whole table.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("crosstable serializes: plain data")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values `xq_eval::matches::game_seed` gives (pinned there too): line-ups
    /// of events recorded before the seed was derived here stay the same.
    #[test]
    fn lineup_seeds_are_pinned() {
        assert_eq!(lineup_seed(0, 0, 0), 0);
        assert_eq!(lineup_seed(1, 0, 2), 0xbeeb_8da1_658e_ec67);
        assert_eq!(lineup_seed(42, 0, 7), 0x53ad_348a_f3dd_af4b);
        assert_eq!(lineup_seed(u64::MAX, 0, 1000), 0xdf2f_5074_f4ee_ff31);
        // The round enters through the seed's high half.
        assert_eq!(lineup_seed(1 ^ (3 << 32), 0, 2), lineup_seed(1, 3, 2));
    }
}
