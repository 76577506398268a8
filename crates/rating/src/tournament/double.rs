//! Double elimination (双淘汰制, 11.1): out after two lost mini-matches.
//!
//! 11.1 names the system without describing it; this is the usual bracket,
//! built so that nobody is out before losing twice:
//!
//! - the winners' bracket is the knockout bracket (seeded in the standard
//!   order, missing seeds are byes for the top seeds);
//! - the losers of winners'-bracket round 1 meet in losers'-bracket round 1;
//!   after that, every winners'-bracket round `r ≥ 2` sends its losers into a
//!   losers'-bracket round against the survivors (in reversed order in even
//!   rounds, so that two players who just met do not meet again at once),
//!   followed, while more than one survivor is left, by a round among the
//!   survivors;
//! - the grand final puts the winners'-bracket winner against the
//!   losers'-bracket winner; if the latter wins, both have lost once and the
//!   final is played again.
//!
//! Every meeting is a mini-match as in the knockout (two games with colours
//! swapped, then [`KnockoutTiebreak`]). A slot left empty by a bye passes the
//! other player through without a game.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::knockout::{bracket_order, mini_match_games, update_match};
use super::{Bracket, GameEntry, GameId, GameKind, KnockoutMatch, KnockoutTiebreak, PlayerId};

/// Where a bracket node takes a player from.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// A seed, or `None` for a bye.
    Seed(Option<PlayerId>),
    Winner(usize),
    Loser(usize),
}

#[derive(Debug, Clone)]
struct Node {
    bracket: Bracket,
    round: u32,
    a: Slot,
    b: Slot,
    /// The mini-match, once both players are known.
    game: Option<usize>,
    /// `(winner, loser)` once decided; `None` entries are empty slots.
    resolved: Option<(Option<PlayerId>, Option<PlayerId>)>,
}

#[derive(Debug, Clone)]
pub(crate) struct DoubleState {
    tiebreak: KnockoutTiebreak,
    rng: ChaCha8Rng,
    nodes: Vec<Node>,
    matches: Vec<KnockoutMatch>,
    /// Number of losers'-bracket rounds.
    losers_rounds: u32,
    byes_reported: bool,
}

impl DoubleState {
    pub(crate) fn new(n: usize, tiebreak: KnockoutTiebreak, seed: u64) -> DoubleState {
        let size = n.next_power_of_two().max(2);
        fn push(nodes: &mut Vec<Node>, bracket: Bracket, round: u32, a: Slot, b: Slot) -> usize {
            nodes.push(Node {
                bracket,
                round,
                a,
                b,
                game: None,
                resolved: None,
            });
            nodes.len() - 1
        }
        let mut nodes = Vec::new();
        let order = bracket_order(size);
        let mut winners: Vec<Vec<usize>> = vec![
            order
                .chunks(2)
                .map(|slot| {
                    let (a, b) = (slot[0].min(slot[1]), slot[0].max(slot[1]));
                    let seed = |s: usize| Slot::Seed((s <= n).then(|| s - 1));
                    push(&mut nodes, Bracket::Main, 1, seed(a), seed(b))
                })
                .collect(),
        ];
        while winners.last().expect("a round").len() > 1 {
            let prev = winners.last().expect("a round").clone();
            let round = winners.len() as u32 + 1;
            winners.push(
                prev.chunks(2)
                    .map(|p| {
                        push(
                            &mut nodes,
                            Bracket::Main,
                            round,
                            Slot::Winner(p[0]),
                            Slot::Winner(p[1]),
                        )
                    })
                    .collect(),
            );
        }
        let mut lround = 0;
        let losers_champion = if winners.len() == 1 {
            Slot::Loser(winners[0][0])
        } else {
            lround += 1;
            let mut survivors: Vec<usize> = winners[0]
                .chunks(2)
                .map(|p| {
                    push(
                        &mut nodes,
                        Bracket::Losers,
                        lround,
                        Slot::Loser(p[0]),
                        Slot::Loser(p[1]),
                    )
                })
                .collect();
            for (r, wround) in winners.iter().enumerate().skip(1) {
                let mut dropping: Vec<usize> = wround.clone();
                if r % 2 == 1 {
                    dropping.reverse();
                }
                lround += 1;
                survivors = survivors
                    .iter()
                    .zip(&dropping)
                    .map(|(&s, &d)| {
                        push(
                            &mut nodes,
                            Bracket::Losers,
                            lround,
                            Slot::Loser(d),
                            Slot::Winner(s),
                        )
                    })
                    .collect();
                if survivors.len() > 1 {
                    lround += 1;
                    survivors = survivors
                        .chunks(2)
                        .map(|p| {
                            push(
                                &mut nodes,
                                Bracket::Losers,
                                lround,
                                Slot::Winner(p[0]),
                                Slot::Winner(p[1]),
                            )
                        })
                        .collect();
                }
            }
            Slot::Winner(survivors[0])
        };
        let top = *winners.last().expect("a round").first().expect("a final");
        let fin = push(
            &mut nodes,
            Bracket::Final,
            1,
            Slot::Winner(top),
            losers_champion,
        );
        push(
            &mut nodes,
            Bracket::FinalReset,
            1,
            Slot::Winner(fin),
            Slot::Loser(fin),
        );
        DoubleState {
            tiebreak,
            rng: ChaCha8Rng::seed_from_u64(seed),
            nodes,
            matches: Vec::new(),
            losers_rounds: lround,
            byes_reported: false,
        }
    }

    pub(crate) fn matches(&self) -> &[KnockoutMatch] {
        &self.matches
    }

    fn slot(&self, s: Slot) -> Option<Option<PlayerId>> {
        match s {
            Slot::Seed(p) => Some(p),
            Slot::Winner(i) => self.nodes[i].resolved.map(|r| r.0),
            Slot::Loser(i) => self.nodes[i].resolved.map(|r| r.1),
        }
    }

    /// Resolves every node that can be: walkovers past empty slots, decided
    /// mini-matches, and the second final when it is not needed.
    fn advance(&mut self) {
        loop {
            let mut changed = false;
            for i in 0..self.nodes.len() {
                if self.nodes[i].resolved.is_some() {
                    continue;
                }
                let (Some(a), Some(b)) = (self.slot(self.nodes[i].a), self.slot(self.nodes[i].b))
                else {
                    continue;
                };
                let resolved = match (a, b) {
                    (None, None) => Some((None, None)),
                    (Some(x), None) | (None, Some(x)) => Some((Some(x), None)),
                    (Some(x), Some(y)) => {
                        let node = &self.nodes[i];
                        if node.bracket == Bracket::FinalReset {
                            // `x` won the first final: it was the
                            // winners'-bracket finalist unless it came from
                            // the losers' bracket.
                            let first = match node.a {
                                Slot::Winner(f) => f,
                                _ => unreachable!("the reset follows the final"),
                            };
                            let unbeaten = self.slot(self.nodes[first].a).flatten();
                            if unbeaten == Some(x) {
                                self.nodes[i].resolved = Some((Some(x), None));
                                changed = true;
                                continue;
                            }
                        }
                        match self.nodes[i].game {
                            None => {
                                let mut m = KnockoutMatch::new(node.round, x, Some(y));
                                m.bracket = node.bracket;
                                self.matches.push(m);
                                self.nodes[i].game = Some(self.matches.len() - 1);
                                changed = true;
                                None
                            }
                            Some(g) => {
                                let m = &self.matches[g];
                                m.winner.map(|w| (Some(w), m.loser()))
                            }
                        }
                    }
                };
                if let Some(r) = resolved {
                    self.nodes[i].resolved = Some(r);
                    changed = true;
                }
            }
            if !changed {
                return;
            }
        }
    }

    pub(crate) fn champion(&self) -> Option<PlayerId> {
        self.nodes.last().and_then(|n| n.resolved).and_then(|r| r.0)
    }

    /// The round of the second defeat: losers'-bracket round `j` gives `j`,
    /// the runner-up `L + 1`, the champion `L + 2` (`L` losers'-bracket
    /// rounds). A player still in the event also has `L + 1`, so that
    /// standings taken mid-event list it above everyone already out.
    pub(crate) fn stage_reached(&self, p: PlayerId) -> f64 {
        let l = self.losers_rounds;
        if self.champion() == Some(p) {
            return f64::from(l + 2);
        }
        for node in &self.nodes {
            if let Some((_, Some(loser))) = node.resolved
                && loser == p
            {
                match node.bracket {
                    Bracket::Losers => return f64::from(node.round),
                    Bracket::FinalReset => return f64::from(l + 1),
                    // The unbeaten finalist losing the first final is not out.
                    Bracket::Final if self.slot(node.a).flatten() != Some(p) => {
                        return f64::from(l + 1);
                    }
                    _ => {}
                }
            }
        }
        f64::from(l + 1)
    }

    /// Updates the mini-matches from the games' results, and the bracket
    /// from the mini-matches (so standings see every defeat at once).
    pub(crate) fn update(&mut self, games: &[GameEntry]) {
        for m in &mut self.matches {
            update_match(m, games);
        }
        self.advance();
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
            self.nodes
                .iter()
                .filter(|n| n.bracket == Bracket::Main && n.round == 1)
                .filter_map(|n| match (n.a, n.b) {
                    (Slot::Seed(Some(p)), Slot::Seed(None)) => Some(p),
                    _ => None,
                })
                .collect()
        };
        loop {
            self.update(games);
            if self.champion().is_some() {
                return (Vec::new(), byes);
            }
            let mut batch = Vec::new();
            for m in &mut self.matches {
                if m.winner.is_some() {
                    continue;
                }
                let bottom = m.bottom.expect("matches are made with two players");
                let top = m.top;
                for g in mini_match_games(m, top, bottom, self.tiebreak, &mut self.rng) {
                    m.games.push(first_id + batch.len());
                    batch.push(g);
                }
            }
            if !batch.is_empty() {
                return (batch, byes);
            }
        }
    }
}
