//! Tournaments (CXA rules 第11-15条) as a state machine that never plays a
//! game itself.
//!
//! A runner drives a [`Tournament`]:
//!
//! ```
//! use xq_eval::tournament::{Format, Participant, Tournament, TournamentConfig};
//! use xq_eval::GameResult;
//!
//! let config = TournamentConfig {
//!     name: "demo".into(),
//!     format: Format::RoundRobin { cycles: 1 },
//!     participants: ["a", "b", "c"].map(|n| Participant::new(n, "random")).to_vec(),
//!     seed: 1,
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
//! Formats: round robin with Berger tables ([`berger`]), Swiss (积分编排制,
//! [`Format::Swiss`]) and knockout (淘汰制, [`Format::Knockout`]). Scoring is
//! 1 / ½ / 0 (14.1); a bye scores 1 point in round robin and Swiss (as a
//! game won by forfeit, 21.4) and only advances the player in a knockout.
//! Standings use the tie-breaks of 第15条 ([`Standings`], [`TieBreak`]).

pub mod berger;
mod crosstable;
mod knockout;
pub mod runner;
mod standings;
mod swiss;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use crosstable::{CrossEntry, Crosstable, CrosstableRow};
pub use knockout::{KnockoutDecision, KnockoutMatch};
pub use standings::{Standing, Standings, TieBreak};

use crate::GameResult;

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
#[serde(tag = "kind", rename_all = "snake_case")]
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
}

/// A game handed out, with its result once recorded (from Red's view).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameEntry {
    pub pairing: Pairing,
    pub result: Option<GameResult>,
}

/// A round in which a player had no opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bye {
    pub round: u32,
    pub player: PlayerId,
}

#[derive(Debug, Clone)]
enum Engine {
    RoundRobin(Vec<Vec<(PlayerId, Option<PlayerId>)>>),
    Swiss(swiss::SwissState),
    Knockout(Box<knockout::KnockoutState>),
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
}

impl Tournament {
    /// Validates the config and prepares the schedule.
    ///
    /// # Errors
    ///
    /// Fewer than 2 participants, duplicate or empty names, or a format
    /// parameter out of range.
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
        let engine = match config.format {
            Format::RoundRobin { cycles } => {
                if !(1..=2).contains(&cycles) {
                    return Err(TournamentError::BadCycles(cycles));
                }
                let table = berger::berger_table(n);
                let mut rounds: Vec<Vec<(PlayerId, Option<PlayerId>)>> = table
                    .iter()
                    .map(|r| r.iter().map(|&(a, b)| (a - 1, b.map(|b| b - 1))).collect())
                    .collect();
                if cycles == 2 {
                    // The second cycle is the table again with colours
                    // reversed. As FIDE C.05 recommends, the last two rounds
                    // of the first cycle are swapped, so nobody gets the same
                    // colour three times in a row across the change of cycle.
                    let reversed: Vec<_> = rounds
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
                Engine::RoundRobin(rounds)
            }
            Format::Swiss { rounds } => {
                // Everyone can meet everyone at most once; beyond n−1 rounds
                // (n rounds with a bye) a repeat is unavoidable.
                let max = (n - 1 + n % 2) as u32;
                if rounds == 0 || rounds > max {
                    return Err(TournamentError::BadRounds {
                        rounds,
                        players: n,
                        max,
                    });
                }
                Engine::Swiss(swiss::SwissState::new(config.seed))
            }
            Format::Knockout { tiebreak } => Engine::Knockout(Box::new(
                knockout::KnockoutState::new(n, tiebreak, config.seed),
            )),
        };
        Ok(Tournament {
            config,
            games: Vec::new(),
            byes: Vec::new(),
            round: 0,
            engine,
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

    /// Every game handed out so far, in order of [`GameId`].
    #[must_use]
    pub fn games(&self) -> &[GameEntry] {
        &self.games
    }

    /// Every bye so far.
    #[must_use]
    pub fn byes(&self) -> &[Bye] {
        &self.byes
    }

    /// Number of rounds handed out so far.
    #[must_use]
    pub fn rounds_played(&self) -> u32 {
        self.round
    }

    /// Knockout mini-matches so far (empty for other formats).
    #[must_use]
    pub fn knockout_matches(&self) -> &[KnockoutMatch] {
        match &self.engine {
            Engine::Knockout(k) => k.matches(),
            _ => &[],
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
        }
    }

    /// Hands out the next round's games (byes are recorded automatically).
    /// An empty list means the tournament is finished.
    ///
    /// For a knockout, a "round" is the next batch of games that can be
    /// played now: both regular games of every mini-match, or the tie-break
    /// games of the mini-matches that ended level.
    ///
    /// # Errors
    ///
    /// Games of the previous round still lack results, or (Swiss) no pairing
    /// without a repeated game exists.
    pub fn next_round(&mut self) -> Result<Vec<Pairing>, TournamentError> {
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
        let (pairs, byes): (Vec<(PlayerId, PlayerId, GameKind)>, Vec<PlayerId>) = match &mut self
            .engine
        {
            Engine::RoundRobin(rounds) => {
                let mut pairs = Vec::new();
                let mut byes = Vec::new();
                for &(red, black) in &rounds[self.round as usize] {
                    match black {
                        Some(black) => pairs.push((red, black, GameKind::Regular)),
                        None => byes.push(red),
                    }
                }
                (pairs, byes)
            }
            Engine::Swiss(state) => {
                let history =
                    swiss::History::build(self.config.participants.len(), &self.games, &self.byes);
                let (pairs, bye) = state.pair_round(&history, round)?;
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
        };
        if pairs.is_empty() && byes.is_empty() {
            return Ok(Vec::new());
        }
        self.round = round;
        for player in byes {
            self.byes.push(Bye { round, player });
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
            self.games.push(GameEntry {
                pairing,
                result: None,
            });
            out.push(pairing);
        }
        Ok(out)
    }

    /// Rebuilds a tournament from its config and the results recorded so
    /// far, in [`GameId`] order (as [`Tournament::games`] lists them).
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
    pub fn replay(
        config: TournamentConfig,
        results: &[GameResult],
    ) -> Result<Tournament, TournamentError> {
        let mut t = Tournament::new(config)?;
        let mut next = 0;
        while next < results.len() {
            let games = t.next_round()?;
            if games.is_empty() {
                return Err(TournamentError::UnknownGame(next));
            }
            for g in games {
                if let Some(&r) = results.get(g.game) {
                    t.record(g.game, r)?;
                    next = next.max(g.game + 1);
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
        let entry = self
            .games
            .get_mut(game)
            .ok_or(TournamentError::UnknownGame(game))?;
        if entry.result.is_some() {
            return Err(TournamentError::AlreadyRecorded(game));
        }
        entry.result = Some(result);
        if let Engine::Knockout(state) = &mut self.engine {
            state.update(&self.games);
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
