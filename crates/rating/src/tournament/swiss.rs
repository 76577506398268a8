//! Swiss pairing (积分编排制).
//!
//! Each round:
//! 1. Players are ranked by score, then by seed (configuration order).
//! 2. With an odd number of players the bye goes to the lowest-ranked
//!    player who has not had one (and for whom the rest can be paired). It
//!    scores like a win without play (21.4's "+"; 20.2 lets an organiser
//!    add an entrant instead, which is a change to the field, not to the
//!    pairing). Withdrawn players (20.4) are no longer paired.
//! 3. From the top, each unpaired player is paired within its score group,
//!    top half against bottom half (the top player of the group meets the
//!    first of the bottom half), preferring opponents with a compatible
//!    colour preference; a player with no partner left in its group floats
//!    down to the next group. A depth-first search backtracks when a choice
//!    leaves the rest unpairable.
//! 4. Hard constraints: no two players meet twice; and, if any pairing
//!    allows it, nobody gets the same colour three times in a row and no
//!    player's Red−Black count leaves [−2, 2]. Only when no pairing meets
//!    the colour constraints are they dropped (a repeat is never allowed).
//! 5. Colours: both get their preference when they differ; otherwise the
//!    stronger preference wins (an absolute preference > an imbalance > a
//!    wish to alternate), then the players alternate relative to the last
//!    round in which their colours differed, then the higher-ranked player
//!    gets its preference. Two players with no games yet draw colours from
//!    the seeded lot: the top board's colour in round 1 is drawn from the
//!    seed and boards alternate below it (13.3).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Bye, GameEntry, PlayerId, TournamentError};
use crate::result::Side;

/// Upper bound on search steps per pass (strict colours, then relaxed),
/// shared by all bye candidates. The first greedy descent almost always
/// succeeds; the bound only keeps a hopeless search (no valid pairing at all)
/// from running for minutes on a large field.
const SEARCH_BUDGET: u64 = 1_000_000;

/// What the pairing needs to know about the rounds so far.
#[derive(Debug, Clone)]
pub(crate) struct History {
    half_points: Vec<u32>,
    colours: Vec<Vec<Side>>,
    met: Vec<Vec<bool>>,
    had_bye: Vec<bool>,
}

impl History {
    pub(crate) fn build(n: usize, games: &[GameEntry], byes: &[Bye]) -> History {
        let mut h = History {
            half_points: vec![0; n],
            colours: vec![Vec::new(); n],
            met: vec![vec![false; n]; n],
            had_bye: vec![false; n],
        };
        for g in games {
            let (r, b) = (g.pairing.red, g.pairing.black);
            h.colours[r].push(Side::Red);
            h.colours[b].push(Side::Black);
            h.met[r][b] = true;
            h.met[b][r] = true;
            if let Some(result) = g.result {
                h.half_points[r] += result.half_points(Side::Red);
                h.half_points[b] += result.half_points(Side::Black);
            }
        }
        for bye in byes {
            h.had_bye[bye.player] = true;
            h.half_points[bye.player] += 2;
        }
        h
    }

    fn diff(&self, p: PlayerId) -> i32 {
        self.colours[p]
            .iter()
            .map(|&c| if c == Side::Red { 1 } else { -1 })
            .sum()
    }

    /// Whether giving `p` colour `c` would break a hard colour rule.
    fn forbidden(&self, p: PlayerId, c: Side) -> bool {
        let hist = &self.colours[p];
        let three_in_row =
            hist.len() >= 2 && hist[hist.len() - 1] == c && hist[hist.len() - 2] == c;
        let new_diff = self.diff(p) + if c == Side::Red { 1 } else { -1 };
        three_in_row || new_diff.abs() > 2
    }

    fn colour_feasible(&self, p: PlayerId, q: PlayerId) -> bool {
        (!self.forbidden(p, Side::Red) && !self.forbidden(q, Side::Black))
            || (!self.forbidden(p, Side::Black) && !self.forbidden(q, Side::Red))
    }

    /// Preferred colour and its strength: 3 absolute (the other colour is
    /// forbidden), 2 imbalance, 1 alternation; `None` before any game.
    fn preference(&self, p: PlayerId) -> Option<(Side, u8)> {
        let last = *self.colours[p].last()?;
        let diff = self.diff(p);
        let (side, strength) = if diff > 0 {
            (Side::Black, 2)
        } else if diff < 0 {
            (Side::Red, 2)
        } else {
            (last.other(), 1)
        };
        if self.forbidden(p, side.other()) {
            Some((side, 3))
        } else {
            Some((side, strength))
        }
    }
}

/// `(red, black)` boards in ranking order, and the player with the bye.
pub(crate) type SwissRound = (Vec<(PlayerId, PlayerId)>, Option<PlayerId>);

#[derive(Debug, Clone)]
pub(crate) struct SwissState {
    /// Whether the top board's higher-ranked player takes Red when neither
    /// player has a colour history (drawn once from the seed).
    top_board_red: bool,
}

impl SwissState {
    pub(crate) fn new(seed: u64) -> SwissState {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        SwissState {
            top_board_red: rng.random_bool(0.5),
        }
    }

    /// Pairs one round: `(red, black)` boards in ranking order, and the bye.
    /// Only players with `active[p]` are paired (the others withdrew, 20.4).
    pub(crate) fn pair_round(
        &self,
        h: &History,
        active: &[bool],
        round: u32,
    ) -> Result<SwissRound, TournamentError> {
        let n = h.half_points.len();
        let mut ranking: Vec<PlayerId> = (0..n).filter(|&p| active[p]).collect();
        ranking.sort_by_key(|&p| (std::cmp::Reverse(h.half_points[p]), p));
        if ranking.len() < 2 {
            return Ok((Vec::new(), ranking.first().copied()));
        }

        for strict in [true, false] {
            let mut budget = SEARCH_BUDGET;
            let bye_candidates: Vec<Option<PlayerId>> = if ranking.len() % 2 == 1 {
                ranking
                    .iter()
                    .rev()
                    .copied()
                    .filter(|&p| !h.had_bye[p])
                    .map(Some)
                    .collect()
            } else {
                vec![None]
            };
            for bye in bye_candidates {
                let order: Vec<PlayerId> = ranking
                    .iter()
                    .copied()
                    .filter(|&p| Some(p) != bye)
                    .collect();
                let mut search = Search {
                    h,
                    strict,
                    used: vec![false; n],
                    pairs: Vec::new(),
                    budget,
                };
                let found = search.run(&order);
                budget = search.budget;
                if found {
                    let boards = search
                        .pairs
                        .iter()
                        .enumerate()
                        .map(|(board, &(p, q))| self.allocate(h, p, q, board, strict))
                        .collect();
                    return Ok((boards, bye));
                }
            }
        }
        Err(TournamentError::NoValidPairing { round })
    }

    /// Colours for `p` (higher-ranked) and `q` on board index `board`.
    fn allocate(
        &self,
        h: &History,
        p: PlayerId,
        q: PlayerId,
        board: usize,
        strict: bool,
    ) -> (PlayerId, PlayerId) {
        let p_side = match (h.preference(p), h.preference(q)) {
            (Some((cp, _)), Some((cq, _))) if cp != cq => cp,
            (Some((cp, sp)), Some((_, sq))) if sp > sq => cp,
            (Some((cp, sp)), Some((_, sq))) if sq > sp => cp.other(),
            (Some((cp, _)), Some(_)) => {
                // Equal wishes for the same colour: alternate relative to
                // the most recent round in which their colours differed.
                let (hp, hq) = (&h.colours[p], &h.colours[q]);
                hp.iter()
                    .rev()
                    .zip(hq.iter().rev())
                    .find(|(a, b)| a != b)
                    .map_or(cp, |(a, _)| a.other())
            }
            (Some((cp, _)), None) => cp,
            (None, Some((cq, _))) => cq.other(),
            (None, None) => {
                if self.top_board_red == board.is_multiple_of(2) {
                    Side::Red
                } else {
                    Side::Black
                }
            }
        };
        let ok = |ps: Side| !h.forbidden(p, ps) && !h.forbidden(q, ps.other());
        let p_side = if strict && !ok(p_side) {
            p_side.other()
        } else {
            p_side
        };
        match p_side {
            Side::Red => (p, q),
            Side::Black => (q, p),
        }
    }
}

struct Search<'a> {
    h: &'a History,
    strict: bool,
    used: Vec<bool>,
    pairs: Vec<(PlayerId, PlayerId)>,
    budget: u64,
}

impl Search<'_> {
    fn run(&mut self, order: &[PlayerId]) -> bool {
        let Some(pos) = order.iter().position(|&p| !self.used[p]) else {
            return true;
        };
        let p = order[pos];
        self.used[p] = true;
        for q in self.candidates(order, p) {
            if self.budget == 0 {
                break;
            }
            self.budget -= 1;
            if self.h.met[p][q] || (self.strict && !self.h.colour_feasible(p, q)) {
                continue;
            }
            self.used[q] = true;
            self.pairs.push((p, q));
            if self.run(order) {
                return true;
            }
            self.pairs.pop();
            self.used[q] = false;
        }
        self.used[p] = false;
        false
    }

    /// Opponents for `p` (the highest-ranked unpaired player) in order of
    /// preference: own score group first (bottom half from its top, then the
    /// top half upwards), then lower groups in ranking order; within each
    /// group, opponents whose colour preference clashes with `p`'s come last.
    fn candidates(&self, order: &[PlayerId], p: PlayerId) -> Vec<PlayerId> {
        let h = self.h;
        let rest: Vec<PlayerId> = order.iter().copied().filter(|&q| !self.used[q]).collect();
        let score = h.half_points[p];
        let group: Vec<PlayerId> = rest
            .iter()
            .copied()
            .filter(|&q| h.half_points[q] == score)
            .collect();
        // Group including p has size g; its bottom half starts at g/2, which
        // is index g/2 − 1 once p (at the top) is removed.
        let g = group.len() + 1;
        let split = (g / 2).saturating_sub(1).min(group.len());
        let mut ordered: Vec<PlayerId> = group[split..].to_vec();
        ordered.extend(group[..split].iter().rev());
        ordered.extend(rest.iter().copied().filter(|&q| h.half_points[q] != score));

        let clash = |q: PlayerId| match (h.preference(p), h.preference(q)) {
            (Some((a, _)), Some((b, _))) => a == b,
            _ => false,
        };
        // Stable sort: score distance first, then colour clash; the order
        // built above breaks the remaining ties.
        ordered.sort_by_key(|&q| (score.abs_diff(h.half_points[q]), clash(q)));
        ordered
    }
}
