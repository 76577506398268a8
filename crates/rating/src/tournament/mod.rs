//! Tournaments (CXA rules 第11-15条) as a state machine that never plays a
//! game itself.
//!
//! A runner drives a [`Tournament`]:
//!
//! ```
//! use xq_rating::tournament::{Format, Participant, Tournament, TournamentConfig};
//! use xq_rating::GameResult;
//!
//! let config = TournamentConfig {
//!     name: "demo".into(),
//!     format: Format::RoundRobin { cycles: 1 },
//!     participants: ["a", "b", "c"].map(|n| Participant::new(n, "random")).to_vec(),
//!     seed: 1,
//!     withdrawals: Vec::new(),
//! };
//! let mut t = Tournament::new(config).unwrap();
//! loop {
//!     let games = t.next_round().unwrap();
//!     if games.is_empty() {
//!         break; // finished
//!     }
//!     for g in games {
//!         // Play g.red against g.black here; the result is from Red's view.
//!         t.record(g.game, GameResult::Draw).unwrap();
//!     }
//! }
//! assert_eq!(t.standings().rows.len(), 3);
//! ```
//!
//! Formats (第11条): round robin with Berger tables ([`berger`]), group round
//! robins feeding a final ([`Format::Groups`], 11.3), Swiss (积分编排制,
//! [`Format::Swiss`]), knockout (淘汰制, [`Format::Knockout`]) and double
//! elimination ([`Format::DoubleElimination`], 11.1). Scoring is 1 / ½ / 0
//! (14.1). A round-robin bye is a rest round and scores nothing; a Swiss bye
//! is scored as a win without play ("+", 21.4); a knockout bye only advances
//! the player. Withdrawals follow 第20条 ([`Withdrawal`]). Standings use the
//! tie-breaks of 第15条 ([`Standings`], [`TieBreak`]). Team events (第12条)
//! are built on top of this in [`team`].

pub mod berger;
mod crosstable;
mod double;
mod groups;
mod knockout;
mod standings;
mod swiss;
pub mod team;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use crosstable::{CrossEntry, Crosstable, CrosstableRow, StageTable};
pub use groups::GroupsSummary;
pub use knockout::{Bracket, KnockoutDecision, KnockoutMatch};
pub use standings::{Primary, Standing, Standings, TieBreak};

use crate::GameResult;
pub use crate::result::Score;

/// Index of a participant in [`TournamentConfig::participants`]; the
/// configuration order is the seeding order (Berger number − 1, Swiss
/// initial rank, knockout seed).
pub type PlayerId = usize;

/// Identifies a game handed out by [`Tournament::next_round`].
pub type GameId = usize;

/// One entrant: a display name and an opaque player specification that the
/// match runner knows how to turn into a player (e.g. `"random"`,
/// `"ucci:/usr/games/fairy-stockfish skill=5"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Participant {
    pub name: String,
    pub player: String,
}

impl Participant {
    pub fn new(name: impl Into<String>, player: impl Into<String>) -> Participant {
        Participant {
            name: name.into(),
            player: player.into(),
        }
    }
}

/// Tie-break procedure of a knockout mini-match that ends level (the rules
/// leave it to the organiser, 15.6).
///
/// After the two regular games (colours swapped, 13.5), up to `rapid_pairs`
/// pairs of rapid games are played, each pair with colours swapped, until
/// one pair is won. If still level, one armageddon game is played when
/// `armageddon` is set (Black has draw odds: a draw sends Black through);
/// otherwise, or after it, a draw of lots from the tournament seed decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct KnockoutTiebreak {
    pub rapid_pairs: u32,
    pub armageddon: bool,
}

impl Default for KnockoutTiebreak {
    fn default() -> Self {
        KnockoutTiebreak {
            rapid_pairs: 1,
            armageddon: true,
        }
    }
}

/// The competition system (第11条).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Format {
    /// 大循环制: everyone meets everyone, `cycles` times (1 or 2; the second
    /// cycle repeats the Berger table with colours reversed, and the first
    /// cycle plays its last two rounds in swapped order, as FIDE C.05
    /// recommends).
    RoundRobin {
        #[serde(default = "one")]
        cycles: u32,
    },
    /// 积分编排制: `rounds` rounds paired by score.
    Swiss { rounds: u32 },
    /// 淘汰制: single elimination with two-game mini-matches.
    Knockout {
        #[serde(default)]
        tiebreak: KnockoutTiebreak,
    },
    /// 双淘汰制 (11.1): a player is out after losing two mini-matches; a
    /// winners' bracket, a losers' bracket and a grand final (played again
    /// if the losers'-bracket winner wins it, since only then has the other
    /// finalist lost twice).
    DoubleElimination {
        #[serde(default)]
        tiebreak: KnockoutTiebreak,
    },
    /// 分组循环制 (11.3): the seeds (configuration order) are spread over
    /// `groups` round robins (`cycles` each); the top `qualifiers` of every
    /// group play a round robin final (`final_cycles`).
    Groups {
        groups: u32,
        qualifiers: u32,
        #[serde(default = "one")]
        cycles: u32,
        #[serde(default = "one")]
        final_cycles: u32,
    },
}

impl Format {
    /// Whether 第20条 (withdrawals) covers the format: it speaks of 循环制
    /// and 积分编排制 only.
    fn allows_withdrawals(&self) -> bool {
        matches!(self, Format::RoundRobin { .. } | Format::Swiss { .. })
    }

    /// Half points a bye is worth: a Swiss bye is a win without play (21.4's
    /// "+"); a round-robin bye is a rest round (轮休) and an elimination bye
    /// only advances the player.
    #[must_use]
    pub fn bye_half_points(&self) -> u32 {
        match self {
            Format::Swiss { .. } => 2,
            _ => 0,
        }
    }
}

fn one() -> u32 {
    1
}

/// Everything needed to run a tournament; serde-friendly so it can come
/// from a TOML or JSON file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentConfig {
    #[serde(default)]
    pub name: String,
    pub format: Format,
    pub participants: Vec<Participant>,
    /// Seeds every random choice (Swiss first colour, knockout colour lots
    /// and drawing of lots), so a tournament replays identically.
    #[serde(default)]
    pub seed: u64,
    /// Entrants who leave the event (第20条).
    #[serde(default)]
    pub withdrawals: Vec<Withdrawal>,
}

/// An entrant leaving the event (第20条), named as in the participant list.
///
/// `after_round = 0` is a withdrawal before the start (20.2): a round robin is
/// drawn again without the entrant, a Swiss never pairs it. Later, in a round
/// robin (20.3) the entrant's results are annulled if it met fewer than half
/// of its opponents, and otherwise stand with every unplayed game forfeited to
/// the opponent; in a Swiss (20.4) its results stand and it is no longer
/// paired.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Withdrawal {
    pub name: String,
    /// The last round the entrant played (0: withdrew before the start).
    pub after_round: u32,
}

/// Kind of game, so the runner can choose the time control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameKind {
    /// A game at the tournament's normal time control.
    Regular,
    /// A knockout tie-break game at a faster time control.
    Rapid,
    /// A knockout decider in which a draw counts as a win for Black.
    Armageddon,
}

/// A game to be played: `red` moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pairing {
    pub game: GameId,
    /// The batch (round) in which the game was handed out, from 1.
    pub round: u32,
    /// Board number within the round, from 1.
    pub board: u32,
    pub red: PlayerId,
    pub black: PlayerId,
    pub kind: GameKind,
}

/// Errors from building or driving a tournament.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TournamentError {
    #[error("a tournament needs at least 2 participants, got {0}")]
    TooFewParticipants(usize),
    #[error("participant name {0:?} appears twice")]
    DuplicateName(String),
    #[error("participant {index} has an empty name")]
    EmptyName { index: usize },
    #[error("round robin cycles must be 1 or 2, got {0}")]
    BadCycles(u32),
    #[error("a Swiss tournament needs 1 to {max} rounds for {players} players, got {rounds}")]
    BadRounds {
        rounds: u32,
        players: usize,
        max: u32,
    },
    #[error("round {round} still has {pending} unfinished game(s)")]
    RoundInProgress { round: u32, pending: usize },
    #[error("no game with id {0} has been handed out")]
    UnknownGame(GameId),
    #[error("game {0} already has a result")]
    AlreadyRecorded(GameId),
    #[error(
        "no Swiss pairing for round {round} avoids repeating a game (too many rounds for the field?)"
    )]
    NoValidPairing { round: u32 },
    #[error("withdrawals: no participant is named {0:?}")]
    UnknownWithdrawal(String),
    #[error("withdrawals: {0:?} is listed twice")]
    DuplicateWithdrawal(String),
    #[error("withdrawals are defined for round robin and Swiss only (第20条), not for {format}")]
    WithdrawalFormat { format: &'static str },
    #[error(
        "{remaining} participant(s) left after the withdrawals before the start; at least 2 are needed"
    )]
    TooFewAfterWithdrawals { remaining: usize },
    #[error("groups: {why}")]
    BadGroups { why: String },
}

/// A game handed out, with its result once recorded (from Red's view).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameEntry {
    pub pairing: Pairing,
    pub result: Option<Score>,
    /// Decided without play (21.4: shown as "+" and "-").
    #[serde(default)]
    pub forfeit: bool,
    /// Fouls (犯规, 第9条) of Red and Black in this game.
    #[serde(default)]
    pub fouls: [u32; 2],
    /// Annulled by a withdrawal (20.3): the game counts for nobody.
    #[serde(default)]
    pub cancelled: bool,
}

impl GameEntry {
    /// A game just handed out, without a result.
    fn pending(pairing: Pairing) -> GameEntry {
        GameEntry {
            pairing,
            result: None,
            forfeit: false,
            fouls: [0, 0],
            cancelled: false,
        }
    }

    /// Records how the game ended: the one place a result enters a game, played
    /// or forfeited, in an individual event or on a team's board.
    ///
    /// # Errors
    ///
    /// The game already has a result.
    fn record(&mut self, report: GameReport) -> Result<(), TournamentError> {
        if self.result.is_some() {
            return Err(TournamentError::AlreadyRecorded(self.pairing.game));
        }
        self.result = Some(report.result);
        self.forfeit = report.forfeit;
        self.fouls = report.fouls;
        Ok(())
    }
}

/// Everything the tournament keeps about a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameReport {
    /// From Red's view; a double forfeit (21.3) scores nothing for either side.
    pub result: Score,
    /// Decided without play (21.4).
    pub forfeit: bool,
    /// Fouls of Red and Black.
    pub fouls: [u32; 2],
}

impl From<GameResult> for GameReport {
    fn from(result: GameResult) -> GameReport {
        GameReport {
            result: result.into(),
            forfeit: false,
            fouls: [0, 0],
        }
    }
}

/// How a withdrawal took effect (第20条).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WithdrawalEffect {
    /// Before the start (20.2): never scheduled.
    BeforeStart,
    /// Round robin, fewer than half the opponents met (20.3): every result
    /// annulled.
    Annulled,
    /// Round robin, at least half met (20.3): results stand, the rest is
    /// forfeited to the opponents.
    Forfeited,
    /// Swiss (20.4): results stand, no longer paired.
    Unpaired,
}

/// A round in which a player had no opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bye {
    pub round: u32,
    pub player: PlayerId,
}

/// The rounds of a round robin: `(red, black)` boards, `None` for a bye.
type Schedule = Vec<Vec<(PlayerId, Option<PlayerId>)>>;

#[derive(Debug, Clone)]
enum Engine {
    RoundRobin(Schedule),
    Swiss(swiss::SwissState),
    Knockout(Box<knockout::KnockoutState>),
    Double(Box<double::DoubleState>),
    Groups(Box<groups::GroupsState>),
}

/// A tournament in progress: hands out rounds, takes results, and reports
/// standings. Independent of how games are played.
#[derive(Debug, Clone)]
pub struct Tournament {
    config: TournamentConfig,
    games: Vec<GameEntry>,
    byes: Vec<Bye>,
    round: u32,
    engine: Engine,
    /// Per participant, how its withdrawal took effect, once it has.
    withdrawn: Vec<Option<WithdrawalEffect>>,
}

/// Round robin rounds for `players` (Berger numbers in this order), played
/// `cycles` times.
fn round_robin_schedule(players: &[PlayerId], cycles: u32) -> Schedule {
    let table = berger::berger_table(players.len());
    let mut rounds: Schedule = table
        .iter()
        .map(|r| {
            r.iter()
                .map(|&(a, b)| (players[a - 1], b.map(|b| players[b - 1])))
                .collect()
        })
        .collect();
    if cycles == 2 {
        // The second cycle is the table again with colours reversed. As FIDE
        // C.05 recommends, the last two rounds of the first cycle are swapped,
        // so nobody gets the same colour three times in a row across the
        // change of cycle.
        let reversed: Schedule = rounds
            .iter()
            .map(|r| {
                r.iter()
                    .map(|&(a, b)| match b {
                        Some(b) => (b, Some(a)),
                        None => (a, None),
                    })
                    .collect()
            })
            .collect();
        let len = rounds.len();
        if len >= 2 {
            rounds.swap(len - 1, len - 2);
        }
        rounds.extend(reversed);
    }
    rounds
}

pub(crate) fn format_name(format: &Format) -> &'static str {
    match format {
        Format::RoundRobin { .. } => "round_robin",
        Format::Swiss { .. } => "swiss",
        Format::Knockout { .. } => "knockout",
        Format::DoubleElimination { .. } => "double_elimination",
        Format::Groups { .. } => "groups",
    }
}

impl Tournament {
    /// Validates the config and prepares the schedule.
    ///
    /// # Errors
    ///
    /// Fewer than 2 participants, duplicate or empty names, a format
    /// parameter out of range, or a withdrawal naming nobody or in a format
    /// 第20条 does not cover.
    pub fn new(config: TournamentConfig) -> Result<Tournament, TournamentError> {
        let n = config.participants.len();
        if n < 2 {
            return Err(TournamentError::TooFewParticipants(n));
        }
        let mut seen = std::collections::HashSet::new();
        for (index, p) in config.participants.iter().enumerate() {
            if p.name.trim().is_empty() {
                return Err(TournamentError::EmptyName { index });
            }
            if !seen.insert(p.name.as_str()) {
                return Err(TournamentError::DuplicateName(p.name.clone()));
            }
        }
        let mut withdrawn = vec![None; n];
        let mut listed = std::collections::HashSet::new();
        for w in &config.withdrawals {
            let Some(p) = config.participants.iter().position(|p| p.name == w.name) else {
                return Err(TournamentError::UnknownWithdrawal(w.name.clone()));
            };
            if !listed.insert(p) {
                return Err(TournamentError::DuplicateWithdrawal(w.name.clone()));
            }
            if !config.format.allows_withdrawals() {
                return Err(TournamentError::WithdrawalFormat {
                    format: format_name(&config.format),
                });
            }
            if w.after_round == 0 {
                withdrawn[p] = Some(WithdrawalEffect::BeforeStart);
            }
        }
        // 20.2: those who leave before the start are not in the draw.
        let active: Vec<PlayerId> = (0..n).filter(|&p| withdrawn[p].is_none()).collect();
        if active.len() < 2 {
            return Err(TournamentError::TooFewAfterWithdrawals {
                remaining: active.len(),
            });
        }
        let engine = match config.format {
            Format::RoundRobin { cycles } => {
                if !(1..=2).contains(&cycles) {
                    return Err(TournamentError::BadCycles(cycles));
                }
                Engine::RoundRobin(round_robin_schedule(&active, cycles))
            }
            Format::Swiss { rounds } => {
                // Everyone can meet everyone at most once; beyond n−1 rounds
                // (n rounds with a bye) a repeat is unavoidable.
                let m = active.len();
                let max = (m - 1 + m % 2) as u32;
                if rounds == 0 || rounds > max {
                    return Err(TournamentError::BadRounds {
                        rounds,
                        players: m,
                        max,
                    });
                }
                Engine::Swiss(swiss::SwissState::new(config.seed))
            }
            Format::Knockout { tiebreak } => Engine::Knockout(Box::new(
                knockout::KnockoutState::new(n, tiebreak, config.seed),
            )),
            Format::DoubleElimination { tiebreak } => {
                Engine::Double(Box::new(double::DoubleState::new(n, tiebreak, config.seed)))
            }
            Format::Groups {
                groups,
                qualifiers,
                cycles,
                final_cycles,
            } => Engine::Groups(Box::new(groups::GroupsState::new(
                n,
                groups,
                qualifiers,
                cycles,
                final_cycles,
            )?)),
        };
        Ok(Tournament {
            config,
            games: Vec::new(),
            byes: Vec::new(),
            round: 0,
            engine,
            withdrawn,
        })
    }

    #[must_use]
    pub fn config(&self) -> &TournamentConfig {
        &self.config
    }

    #[must_use]
    pub fn participants(&self) -> &[Participant] {
        &self.config.participants
    }

    /// The participant behind an id.
    #[must_use]
    pub fn participant(&self, id: PlayerId) -> Option<&Participant> {
        self.config.participants.get(id)
    }

    /// Every game handed out so far, in order of [`GameId`], including games
    /// forfeited by a withdrawal (never handed out; `forfeit` is set).
    #[must_use]
    pub fn games(&self) -> &[GameEntry] {
        &self.games
    }

    /// Every bye so far.
    #[must_use]
    pub fn byes(&self) -> &[Bye] {
        &self.byes
    }

    /// How a participant's withdrawal took effect, if it has.
    #[must_use]
    pub fn withdrawal(&self, player: PlayerId) -> Option<WithdrawalEffect> {
        self.withdrawn.get(player).copied().flatten()
    }

    /// Number of rounds handed out so far.
    #[must_use]
    pub fn rounds_played(&self) -> u32 {
        self.round
    }

    /// Knockout mini-matches so far (both brackets and the final of a double
    /// elimination; empty for other formats).
    #[must_use]
    pub fn knockout_matches(&self) -> &[KnockoutMatch] {
        match &self.engine {
            Engine::Knockout(k) => k.matches(),
            Engine::Double(d) => d.matches(),
            _ => &[],
        }
    }

    /// Elimination formats: how far `p` got (see [`TieBreak::StageReached`]).
    pub(crate) fn stage_reached(&self, p: PlayerId) -> f64 {
        match &self.engine {
            Engine::Knockout(k) => k.stage_reached(p, self.participants().len()),
            Engine::Double(d) => d.stage_reached(p),
            _ => 0.0,
        }
    }

    /// Group stage and final of an 11.3 event (`None` for other formats).
    #[must_use]
    pub fn groups(&self) -> Option<GroupsSummary> {
        match &self.engine {
            Engine::Groups(g) => Some(g.summary(self)),
            _ => None,
        }
    }

    /// Games handed out that still lack a result.
    #[must_use]
    pub fn pending_games(&self) -> Vec<Pairing> {
        self.games
            .iter()
            .filter(|g| g.result.is_none())
            .map(|g| g.pairing)
            .collect()
    }

    fn pending(&self) -> usize {
        self.games.iter().filter(|g| g.result.is_none()).count()
    }

    /// Whether every game has been handed out and played.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        if self.pending() > 0 {
            return false;
        }
        match &self.engine {
            Engine::RoundRobin(rounds) => self.round as usize >= rounds.len(),
            Engine::Swiss(_) => match self.config.format {
                Format::Swiss { rounds } => self.round >= rounds,
                _ => unreachable!("engine matches format"),
            },
            Engine::Knockout(k) => k.champion().is_some(),
            Engine::Double(d) => d.champion().is_some(),
            Engine::Groups(g) => g.is_finished(self.round),
        }
    }

    /// Applies the withdrawals that take effect in round `round` (20.3, 20.4).
    fn apply_withdrawals(&mut self, round: u32) {
        for w in &self.config.withdrawals {
            let Some(p) = self
                .config
                .participants
                .iter()
                .position(|q| q.name == w.name)
            else {
                continue;
            };
            if self.withdrawn[p].is_some() || w.after_round + 1 != round {
                continue;
            }
            self.withdrawn[p] = Some(match &self.engine {
                Engine::RoundRobin(rounds) => {
                    let scheduled: std::collections::HashSet<PlayerId> = rounds
                        .iter()
                        .flatten()
                        .filter_map(|&(a, b)| match b {
                            Some(b) if a == p => Some(b),
                            Some(b) if b == p => Some(a),
                            _ => None,
                        })
                        .collect();
                    let met: std::collections::HashSet<PlayerId> = self
                        .games
                        .iter()
                        .filter(|g| g.result.is_some() && !g.cancelled)
                        .filter_map(|g| match (g.pairing.red, g.pairing.black) {
                            (r, b) if r == p => Some(b),
                            (r, b) if b == p => Some(r),
                            _ => None,
                        })
                        .collect();
                    // 20.3: 已赛对手不足半数 → 所有已赛结果一概注销.
                    if 2 * met.len() < scheduled.len() {
                        for g in &mut self.games {
                            if g.pairing.red == p || g.pairing.black == p {
                                g.cancelled = true;
                            }
                        }
                        WithdrawalEffect::Annulled
                    } else {
                        WithdrawalEffect::Forfeited
                    }
                }
                _ => WithdrawalEffect::Unpaired,
            });
        }
    }

    /// Hands out the next round's games (byes are recorded automatically).
    /// An empty list means the tournament is finished.
    ///
    /// For a knockout or double elimination, a "round" is the next batch of
    /// games that can be played now: both regular games of every mini-match
    /// that is ready, or the tie-break games of those that ended level.
    /// Games forfeited by a withdrawal are recorded at once and not handed
    /// out; a round with nothing left to play is skipped.
    ///
    /// # Errors
    ///
    /// Games of the previous round still lack results, or (Swiss) no pairing
    /// without a repeated game exists.
    pub fn next_round(&mut self) -> Result<Vec<Pairing>, TournamentError> {
        loop {
            let pending = self.pending();
            if pending > 0 {
                return Err(TournamentError::RoundInProgress {
                    round: self.round,
                    pending,
                });
            }
            if self.is_finished() {
                return Ok(Vec::new());
            }
            let round = self.round + 1;
            self.apply_withdrawals(round);
            if let Engine::Groups(g) = &self.engine
                && g.needs_final(round)
            {
                let finalists = g.qualifiers(self);
                if let Engine::Groups(g) = &mut self.engine {
                    g.set_final(finalists);
                }
            }
            let mut forfeits: Vec<(PlayerId, PlayerId, GameResult)> = Vec::new();
            let (pairs, byes): (Vec<(PlayerId, PlayerId, GameKind)>, Vec<PlayerId>) =
                match &mut self.engine {
                    Engine::RoundRobin(rounds) => {
                        let mut pairs = Vec::new();
                        let mut byes = Vec::new();
                        for &(red, black) in &rounds[self.round as usize] {
                            let Some(black) = black else {
                                if self.withdrawn[red].is_none() {
                                    byes.push(red);
                                }
                                continue;
                            };
                            match (self.withdrawn[red], self.withdrawn[black]) {
                                (None, None) => pairs.push((red, black, GameKind::Regular)),
                                (Some(_), Some(_)) => {}
                                // 20.3: an annulled player's opponent rests.
                                (Some(WithdrawalEffect::Annulled), None) => byes.push(black),
                                (None, Some(WithdrawalEffect::Annulled)) => byes.push(red),
                                // 20.3: 其余未赛对局均作弃权,对方获胜.
                                (Some(_), None) => forfeits.push((red, black, GameResult::Loss)),
                                (None, Some(_)) => forfeits.push((red, black, GameResult::Win)),
                            }
                        }
                        (pairs, byes)
                    }
                    Engine::Swiss(state) => {
                        let history = swiss::History::build(
                            self.config.participants.len(),
                            &self.games,
                            &self.byes,
                        );
                        let active: Vec<bool> =
                            self.withdrawn.iter().map(Option::is_none).collect();
                        let (pairs, bye) = state.pair_round(&history, &active, round)?;
                        (
                            pairs
                                .into_iter()
                                .map(|(r, b)| (r, b, GameKind::Regular))
                                .collect(),
                            bye.into_iter().collect(),
                        )
                    }
                    Engine::Knockout(state) => {
                        let first_id = self.games.len();
                        state.next_batch(&self.games, first_id)
                    }
                    Engine::Double(state) => {
                        let first_id = self.games.len();
                        state.next_batch(&self.games, first_id)
                    }
                    Engine::Groups(state) => state.next_round(round),
                };
            if pairs.is_empty() && byes.is_empty() && forfeits.is_empty() {
                if matches!(self.engine, Engine::RoundRobin(_)) {
                    // Only withdrawn players were scheduled: the round passes.
                    self.round = round;
                    continue;
                }
                return Ok(Vec::new());
            }
            self.round = round;
            for player in byes {
                self.byes.push(Bye { round, player });
            }
            for (board, (red, black, result)) in forfeits.into_iter().enumerate() {
                let mut entry = GameEntry::pending(Pairing {
                    game: self.games.len(),
                    round,
                    board: (pairs.len() + board) as u32 + 1,
                    red,
                    black,
                    kind: GameKind::Regular,
                });
                entry.record(GameReport {
                    result: result.into(),
                    forfeit: true,
                    fouls: [0, 0],
                })?;
                self.games.push(entry);
            }
            let mut out = Vec::with_capacity(pairs.len());
            for (board, (red, black, kind)) in pairs.into_iter().enumerate() {
                let pairing = Pairing {
                    game: self.games.len(),
                    round,
                    board: board as u32 + 1,
                    red,
                    black,
                    kind,
                };
                self.games.push(GameEntry::pending(pairing));
                out.push(pairing);
            }
            if !out.is_empty() {
                return Ok(out);
            }
        }
    }

    /// Rebuilds a tournament from its config and the reports recorded so
    /// far, in [`GameId`] order of the games handed out (as
    /// [`Tournament::pending_games`] lists them; forfeits recorded by the
    /// tournament itself are not part of the list).
    ///
    /// Pairing is deterministic given the config (including its seed) and
    /// the results, so this restores the exact state, e.g. after a crash:
    /// the runner only needs to persist the config and the result list.
    /// Games of the last round that have no result yet stay handed out:
    /// play them from [`Tournament::pending_games`] before calling
    /// [`Tournament::next_round`].
    ///
    /// # Errors
    ///
    /// As [`Tournament::new`] and [`Tournament::next_round`]; more results
    /// than the tournament has games gives [`TournamentError::UnknownGame`].
    pub fn replay<R: Copy + Into<GameReport>>(
        config: TournamentConfig,
        results: &[R],
    ) -> Result<Tournament, TournamentError> {
        let mut t = Tournament::new(config)?;
        let mut next = 0;
        while next < results.len() {
            let games = t.next_round()?;
            if games.is_empty() {
                return Err(TournamentError::UnknownGame(next));
            }
            for g in games {
                if let Some(&r) = results.get(next) {
                    t.record_report(g.game, r.into())?;
                    next += 1;
                }
            }
        }
        Ok(t)
    }

    /// Records the result of a game, from Red's point of view.
    ///
    /// # Errors
    ///
    /// The game was never handed out or already has a result.
    pub fn record(&mut self, game: GameId, result: GameResult) -> Result<(), TournamentError> {
        self.record_report(game, result.into())
    }

    /// Records a game with its forfeit flag and fouls.
    ///
    /// # Errors
    ///
    /// The game was never handed out or already has a result.
    pub fn record_report(
        &mut self,
        game: GameId,
        report: GameReport,
    ) -> Result<(), TournamentError> {
        self.games
            .get_mut(game)
            .ok_or(TournamentError::UnknownGame(game))?
            .record(report)?;
        match &mut self.engine {
            Engine::Knockout(state) => state.update(&self.games),
            Engine::Double(state) => state.update(&self.games),
            _ => {}
        }
        Ok(())
    }

    /// Current standings with the tie-breaks of 第15条 for this format.
    #[must_use]
    pub fn standings(&self) -> Standings {
        standings::compute(self, &TieBreak::defaults_for(&self.config.format))
    }

    /// Standings with a custom list of tie-breaks (e.g. median Buchholz).
    #[must_use]
    pub fn standings_with(&self, tiebreaks: &[TieBreak]) -> Standings {
        standings::compute(self, tiebreaks)
    }

    /// The crosstable: standings plus every player's games round by round.
    #[must_use]
    pub fn crosstable(&self) -> Crosstable {
        crosstable::build(self)
    }
}
