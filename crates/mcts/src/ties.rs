//! How a search breaks ties: in a random order drawn from its seed, never by move
//! order.
//!
//! Moves are generated in square order, so "the first of equal children" is not a
//! neutral choice: from the start position Red's first moves are back-rank shuffles and
//! Black's are soldier pushes and a cannon that takes a horse. A network that outputs
//! equal priors (the uniform evaluator, a fresh network) then plays each colour a
//! different opening, and self-play learns the colour from it (issue #45: a zero run
//! whose Black won 2,314 games to Red's 13). So every argmax over children breaks ties
//! by a key that is a fixed hash of the search's seed and the child: random across
//! searches, reproducible from the seed, and free of the RNG stream (drawing from it
//! would shift every later noise and Gumbel draw).

use xq_core::hash::{seed_of, splitmix64};

/// A search's tie-break order: `key(child)` is a pseudo-random number per child slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ties(u64);

impl Ties {
    /// The order of a search seeded `seed`.
    pub(crate) const fn new(seed: u64) -> Ties {
        Ties(splitmix64(seed))
    }

    /// The tie-break key of child slot `child` (its index in the tree, so each node's
    /// children have their own order): among equal scores, the largest key wins.
    #[inline]
    pub(crate) const fn key(self, child: usize) -> u64 {
        seed_of(self.0, child as u64)
    }

    /// Whether `score` at slot `child` beats the best so far, `best_score` at slot
    /// `best`: a higher score, or an equal one with a higher key.
    #[inline]
    pub(crate) fn beats(self, score: f32, child: usize, best_score: f32, best: usize) -> bool {
        score > best_score || (score == best_score && self.key(child) > self.key(best))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_scores_go_to_different_children_under_different_seeds() {
        let winners: std::collections::HashSet<usize> = (0..64)
            .map(|seed| {
                let ties = Ties::new(seed);
                (0..10)
                    .reduce(|best, c| {
                        if ties.beats(0.5, c, 0.5, best) {
                            c
                        } else {
                            best
                        }
                    })
                    .unwrap()
            })
            .collect();
        assert!(winners.len() >= 8, "ties always go to {winners:?}");
    }

    #[test]
    fn a_higher_score_always_wins_and_ties_are_reproducible() {
        let ties = Ties::new(7);
        assert!(ties.beats(0.6, 3, 0.5, 2) && !ties.beats(0.4, 3, 0.5, 2));
        assert_eq!(
            ties.beats(0.5, 3, 0.5, 2),
            Ties::new(7).beats(0.5, 3, 0.5, 2)
        );
        assert_ne!(ties.beats(0.5, 3, 0.5, 2), ties.beats(0.5, 2, 0.5, 3));
    }
}
