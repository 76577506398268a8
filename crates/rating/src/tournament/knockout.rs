//! Knockout (淘汰制): a seeded single-elimination bracket of two-game
//! mini-matches.
//!
//! The bracket has the next power of two of slots; seeds are placed in the
//! standard order (1 v 16, 8 v 9, 4 v 13, ... so seeds 1 and 2 can only meet
//! in the final) and the missing seeds are byes, which therefore go to the
//! top seeds. Each mini-match is two games with colours swapped (13.5); who
//! takes Red first is drawn by lot (13.4 猜先) from the seeded RNG. A level
//! mini-match goes to the tie-break of [`KnockoutTiebreak`]. A game both
//! players forfeit (21.3) scores nothing for either: the mini-match is
//! decided by its other games, and an armageddon game both forfeit is no
//! draw, so it gives Black nothing and the lots decide.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{GameEntry, GameId, GameKind, KnockoutTiebreak, PlayerId, Score};
use crate::result::Side;

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

/// Which part of an elimination a mini-match belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Bracket {
    /// The knockout bracket, or the winners' bracket of a double elimination.
    #[default]
    Main,
    /// The losers' bracket of a double elimination.
    Losers,
    /// The grand final of a double elimination.
    Final,
    /// The second grand final, played when the losers'-bracket winner won the
    /// first (only then has the other finalist lost twice).
    FinalReset,
}

/// One mini-match of the bracket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnockoutMatch {
    #[serde(default)]
    pub bracket: Bracket,
    /// Round within its bracket, from 1 (the knockout final is the last).
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
    pub(crate) fn new(stage: u32, top: PlayerId, bottom: Option<PlayerId>) -> KnockoutMatch {
        let bye = bottom.is_none();
        KnockoutMatch {
            bracket: Bracket::Main,
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
pub(crate) fn bracket_order(size: usize) -> Vec<usize> {
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

    /// The last bracket round `p` took part in, +1 for the champion.
    pub(crate) fn stage_reached(&self, p: PlayerId, n: usize) -> f64 {
        let last_stage = n.next_power_of_two().trailing_zeros();
        let mut best = 0.0f64;
        for m in &self.matches {
            if m.top == p || m.bottom == Some(p) {
                let reached = if m.winner == Some(p) && m.stage == last_stage && m.bottom.is_some()
                {
                    m.stage + 1
                } else {
                    m.stage
                };
                best = best.max(f64::from(reached));
            }
        }
        best
    }

    pub(crate) fn champion(&self) -> Option<PlayerId> {
        match self.current() {
            // A stage of one match is the final.
            [only] => only.winner,
            _ => None,
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
                let new_games = mini_match_games(
                    &mut self.matches[i],
                    top,
                    bottom,
                    self.tiebreak,
                    &mut self.rng,
                );
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
            update_match(m, games);
        }
    }
}

/// Red for the first game of a pair, by lot (13.4 猜先).
fn lot(rng: &mut ChaCha8Rng, a: PlayerId, b: PlayerId) -> (PlayerId, PlayerId) {
    if rng.random_bool(0.5) { (a, b) } else { (b, a) }
}

/// The next games of an undecided mini-match between `top` and `bottom`:
/// the two regular games, a pair of rapid games, the armageddon game, or
/// none when a draw of lots decides it here and now.
pub(crate) fn mini_match_games(
    m: &mut KnockoutMatch,
    top: PlayerId,
    bottom: PlayerId,
    tiebreak: KnockoutTiebreak,
    rng: &mut ChaCha8Rng,
) -> Vec<(PlayerId, PlayerId, GameKind)> {
    if m.games.is_empty() {
        let (r, b) = lot(rng, top, bottom);
        vec![(r, b, GameKind::Regular), (b, r, GameKind::Regular)]
    } else if m.rapid_pairs < tiebreak.rapid_pairs {
        m.rapid_pairs += 1;
        let (r, b) = lot(rng, top, bottom);
        vec![(r, b, GameKind::Rapid), (b, r, GameKind::Rapid)]
    } else if tiebreak.armageddon && !m.armageddon_played {
        m.armageddon_played = true;
        let (r, b) = lot(rng, top, bottom);
        vec![(r, b, GameKind::Armageddon)]
    } else {
        let winner = if rng.random_bool(0.5) { top } else { bottom };
        m.winner = Some(winner);
        m.decided_by = Some(KnockoutDecision::Lots);
        Vec::new()
    }
}

/// Decides `m` from its games when they are all finished and decisive.
pub(crate) fn update_match(m: &mut KnockoutMatch, games: &[GameEntry]) {
    if m.winner.is_some() || m.games.is_empty() {
        return;
    }
    let entries: Vec<&GameEntry> = m.games.iter().filter_map(|&id| games.get(id)).collect();
    if entries.len() != m.games.len() || entries.iter().any(|g| g.result.is_none()) {
        return;
    }
    if let Some((winner, how)) = decide(m.top, &entries) {
        m.winner = Some(winner);
        m.decided_by = Some(how);
    }
}

/// Points scored by `player` in `games` (unfinished ones score nothing; a
/// double forfeit, 21.3, scores nothing for either player).
fn points_of(player: PlayerId, games: &[&GameEntry]) -> u32 {
    games
        .iter()
        .filter_map(|g| {
            let side = if g.pairing.red == player {
                Side::Red
            } else {
                Side::Black
            };
            Some(g.result?.half_points(side))
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
        Score::Win => armageddon.pairing.red,
        Score::Draw | Score::Loss => armageddon.pairing.black,
        // Not a draw, so no draw odds for Black: the match stays level and the
        // lots decide it.
        Score::DoubleForfeit => return None,
    };
    Some((winner, KnockoutDecision::Armageddon))
}
