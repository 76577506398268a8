//! Knockout (淘汰制): a seeded single-elimination bracket of two-game
//! mini-matches.
//!
//! The bracket has the next power of two of slots; seeds are placed in the
//! standard order (1 v 16, 8 v 9, 4 v 13, ... so seeds 1 and 2 can only meet
//! in the final) and the missing seeds are byes, which therefore go to the
//! top seeds. Each mini-match is two games with colours swapped (13.5); who
//! takes Red first is drawn by lot (13.4 猜先) from the seeded RNG. A level
//! mini-match goes to the tie-break of [`KnockoutTiebreak`].

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{GameEntry, GameId, GameKind, KnockoutTiebreak, PlayerId};
use crate::GameResult;

/// How a mini-match was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KnockoutDecision {
    /// No opponent in the first round.
    Bye,
    /// The two regular games.
    Games,
    /// A pair of rapid tie-break games.
    Rapid,
    /// The armageddon game (a draw sends Black through).
    Armageddon,
    /// Drawing of lots from the tournament seed.
    Lots,
}

/// One mini-match of the bracket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnockoutMatch {
    /// Bracket round, from 1 (the final is the last).
    pub stage: u32,
    /// The better-seeded (or upper-bracket) player.
    pub top: PlayerId,
    /// The opponent; `None` for a bye.
    pub bottom: Option<PlayerId>,
    /// Games played so far, in order.
    pub games: Vec<GameId>,
    pub winner: Option<PlayerId>,
    pub decided_by: Option<KnockoutDecision>,
    rapid_pairs: u32,
    armageddon_played: bool,
}

impl KnockoutMatch {
    fn new(stage: u32, top: PlayerId, bottom: Option<PlayerId>) -> KnockoutMatch {
        let bye = bottom.is_none();
        KnockoutMatch {
            stage,
            top,
            bottom,
            games: Vec::new(),
            winner: bye.then_some(top),
            decided_by: bye.then_some(KnockoutDecision::Bye),
            rapid_pairs: 0,
            armageddon_played: false,
        }
    }

    /// The player eliminated by this match, once decided.
    #[must_use]
    pub fn loser(&self) -> Option<PlayerId> {
        let w = self.winner?;
        let b = self.bottom?;
        Some(if w == self.top { b } else { self.top })
    }
}

/// Seed numbers (1-based) in bracket order for a bracket of `size` slots.
fn bracket_order(size: usize) -> Vec<usize> {
    let mut order = vec![1];
    while order.len() < size {
        let m = order.len() * 2;
        order = order.iter().flat_map(|&s| [s, m + 1 - s]).collect();
    }
    order
}

#[derive(Debug, Clone)]
pub(crate) struct KnockoutState {
    tiebreak: KnockoutTiebreak,
    rng: ChaCha8Rng,
    matches: Vec<KnockoutMatch>,
    /// Index in `matches` of the current stage's first match.
    stage_start: usize,
    byes_reported: bool,
}

impl KnockoutState {
    pub(crate) fn new(n: usize, tiebreak: KnockoutTiebreak, seed: u64) -> KnockoutState {
        let size = n.next_power_of_two();
        let order = bracket_order(size);
        let matches = order
            .chunks(2)
            .map(|slot| {
                let (a, b) = (slot[0].min(slot[1]), slot[0].max(slot[1]));
                KnockoutMatch::new(1, a - 1, (b <= n).then(|| b - 1))
            })
            .collect();
        KnockoutState {
            tiebreak,
            rng: ChaCha8Rng::seed_from_u64(seed),
            matches,
            stage_start: 0,
            byes_reported: false,
        }
    }

    pub(crate) fn matches(&self) -> &[KnockoutMatch] {
        &self.matches
    }

    fn current(&self) -> &[KnockoutMatch] {
        &self.matches[self.stage_start..]
    }

    pub(crate) fn champion(&self) -> Option<PlayerId> {
        match self.current() {
            // A stage of one match is the final.
            [only] => only.winner,
            _ => None,
        }
    }

    /// Red for the first game of a pair, by lot.
    fn lot(&mut self, a: PlayerId, b: PlayerId) -> (PlayerId, PlayerId) {
        if self.rng.random_bool(0.5) {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// The next games to play (ids `first_id..` in order) and, on the first
    /// call, the first-round byes. Empty when the champion is known.
    pub(crate) fn next_batch(
        &mut self,
        games: &[GameEntry],
        first_id: GameId,
    ) -> (Vec<(PlayerId, PlayerId, GameKind)>, Vec<PlayerId>) {
        let byes = if self.byes_reported {
            Vec::new()
        } else {
            self.byes_reported = true;
            self.matches
                .iter()
                .filter(|m| m.decided_by == Some(KnockoutDecision::Bye))
                .map(|m| m.top)
                .collect()
        };
        loop {
            self.update(games);
            if self.current().iter().all(|m| m.winner.is_some()) {
                if self.champion().is_some() {
                    return (Vec::new(), byes);
                }
                let stage = self.current()[0].stage + 1;
                let winners: Vec<PlayerId> =
                    self.current().iter().filter_map(|m| m.winner).collect();
                self.stage_start = self.matches.len();
                for pair in winners.chunks(2) {
                    self.matches
                        .push(KnockoutMatch::new(stage, pair[0], Some(pair[1])));
                }
                continue;
            }
            let mut batch = Vec::new();
            for i in self.stage_start..self.matches.len() {
                if self.matches[i].winner.is_some() {
                    continue;
                }
                let (top, bottom) = (
                    self.matches[i].top,
                    self.matches[i]
                        .bottom
                        .expect("undecided matches have two players"),
                );
                let m = &self.matches[i];
                let new_games: Vec<(PlayerId, PlayerId, GameKind)> = if m.games.is_empty() {
                    let (r, b) = self.lot(top, bottom);
                    vec![(r, b, GameKind::Regular), (b, r, GameKind::Regular)]
                } else if m.rapid_pairs < self.tiebreak.rapid_pairs {
                    self.matches[i].rapid_pairs += 1;
                    let (r, b) = self.lot(top, bottom);
                    vec![(r, b, GameKind::Rapid), (b, r, GameKind::Rapid)]
                } else if self.tiebreak.armageddon && !m.armageddon_played {
                    self.matches[i].armageddon_played = true;
                    let (r, b) = self.lot(top, bottom);
                    vec![(r, b, GameKind::Armageddon)]
                } else {
                    let winner = if self.rng.random_bool(0.5) {
                        top
                    } else {
                        bottom
                    };
                    self.matches[i].winner = Some(winner);
                    self.matches[i].decided_by = Some(KnockoutDecision::Lots);
                    Vec::new()
                };
                for g in new_games {
                    self.matches[i].games.push(first_id + batch.len());
                    batch.push(g);
                }
            }
            if !batch.is_empty() {
                return (batch, byes);
            }
        }
    }

    /// Decides every match whose games are all finished and decisive.
    pub(crate) fn update(&mut self, games: &[GameEntry]) {
        for m in &mut self.matches[self.stage_start..] {
            if m.winner.is_some() || m.games.is_empty() {
                continue;
            }
            let entries: Vec<&GameEntry> = m.games.iter().filter_map(|&id| games.get(id)).collect();
            if entries.len() != m.games.len() || entries.iter().any(|g| g.result.is_none()) {
                continue;
            }
            if let Some((winner, how)) = decide(m.top, &entries) {
                m.winner = Some(winner);
                m.decided_by = Some(how);
            }
        }
    }
}

/// Points scored by `player` in `games` (all finished).
fn points_of(player: PlayerId, games: &[&GameEntry]) -> u32 {
    games
        .iter()
        .map(|g| {
            let r = g.result.expect("finished");
            if g.pairing.red == player {
                r.half_points()
            } else {
                r.reversed().half_points()
            }
        })
        .sum()
}

/// The winner of a finished sequence of mini-match games, if decided.
fn decide(top: PlayerId, games: &[&GameEntry]) -> Option<(PlayerId, KnockoutDecision)> {
    let other = |g: &GameEntry| {
        if g.pairing.red == top {
            g.pairing.black
        } else {
            g.pairing.red
        }
    };
    let bottom = other(games.first()?);
    let by_points = |set: &[&GameEntry]| -> Option<PlayerId> {
        let (a, b) = (points_of(top, set), points_of(bottom, set));
        (a != b).then_some(if a > b { top } else { bottom })
    };
    let regular: Vec<&GameEntry> = games
        .iter()
        .copied()
        .filter(|g| g.pairing.kind == GameKind::Regular)
        .collect();
    if let Some(w) = by_points(&regular) {
        return Some((w, KnockoutDecision::Games));
    }
    let rapid: Vec<&GameEntry> = games
        .iter()
        .copied()
        .filter(|g| g.pairing.kind == GameKind::Rapid)
        .collect();
    for pair in rapid.chunks(2) {
        if let Some(w) = by_points(pair) {
            return Some((w, KnockoutDecision::Rapid));
        }
    }
    let armageddon = games
        .iter()
        .find(|g| g.pairing.kind == GameKind::Armageddon)?;
    let winner = match armageddon.result? {
        GameResult::Win => armageddon.pairing.red,
        GameResult::Draw | GameResult::Loss => armageddon.pairing.black,
    };
    Some((winner, KnockoutDecision::Armageddon))
}
