//! The arena: nodes in one `Vec`, children of a node stored contiguously, links as
//! `u32` indices. No `Rc`/`RefCell`, no per-node heap allocation; the root is always
//! index 0.

use xq_core::Move;

/// Why an exact value is exact, which a GUI needs to know: UCCI's and UCI's `score
/// mate` means checkmate on the board, and adapters act on it (uci2wb claims the game
/// for `mate 1`), so a result that only the rules' repetition verdicts or move limit
/// decide must not be told as a mate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ending {
    /// Every line of the proof ends with a side that has no legal move (checkmate or
    /// stalemate, 困毙; a loss either way).
    NoMove,
    /// A repetition verdict (perpetual check or chase, repetition draw), the move
    /// limit or insufficient material ends some line of the proof.
    Rule,
}

/// Where a node is in its life. The exact states say why they are exact (see
/// [`Ending`]) in the variant itself, so a node stays 36 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum State {
    /// Never reached: its position's moves are not generated yet.
    Fresh,
    /// Waiting for its evaluation (a leaf request is out).
    Pending,
    /// Evaluated; its children exist.
    Expanded,
    /// The game is over here, the side to move having no legal move; `value` holds the
    /// rules' verdict.
    NoMoveEnd,
    /// The game is over here by a rule (repetition, move limit, insufficient
    /// material); `value` holds the rules' verdict.
    RuleEnd,
    /// Expanded, and its value is proven from exact children (MCTS-solver): `value`
    /// holds the exact result; its children stay for the principal variation. Every
    /// line of the proof ends with no legal move ([`Ending::NoMove`]).
    ProvenNoMove,
    /// [`State::ProvenNoMove`] with a rule ending in the proof ([`Ending::Rule`]).
    ProvenRule,
}

impl State {
    /// The terminal state for a game that ended for `why`.
    pub(crate) fn terminal(why: Ending) -> State {
        match why {
            Ending::NoMove => State::NoMoveEnd,
            Ending::Rule => State::RuleEnd,
        }
    }

    /// The proven state for a proof that ends for `why`.
    pub(crate) fn proven(why: Ending) -> State {
        match why {
            Ending::NoMove => State::ProvenNoMove,
            Ending::Rule => State::ProvenRule,
        }
    }

    /// Whether the node has children.
    #[inline]
    pub(crate) fn has_children(self) -> bool {
        matches!(
            self,
            State::Expanded | State::ProvenNoMove | State::ProvenRule
        )
    }

    /// Whether the node's value is exact (no need to search below it).
    #[inline]
    pub(crate) fn is_exact(self) -> bool {
        self.ending().is_some()
    }

    /// Whether the node's value is proven from its children.
    #[inline]
    pub(crate) fn is_proven(self) -> bool {
        matches!(self, State::ProvenNoMove | State::ProvenRule)
    }

    /// Why the node's value is exact; `None` while it is not.
    #[inline]
    pub(crate) fn ending(self) -> Option<Ending> {
        match self {
            State::NoMoveEnd | State::ProvenNoMove => Some(Ending::NoMove),
            State::RuleEnd | State::ProvenRule => Some(Ending::Rule),
            State::Fresh | State::Pending | State::Expanded => None,
        }
    }
}

/// The part of a node that child selection reads, kept apart (struct of arrays) so a
/// PUCT scan over ~40 children touches 16 bytes each.
///
/// `q_sum` is kept from the view of the player who made the move into the node (the
/// parent's side to move), so a parent picks children by their own Q without sign
/// flips. Sums are `f32`: at a million visits the rounding error of Q stays near 1e-5.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stat {
    /// Sum over completed visits of the value (win − loss) for the mover into the node.
    pub q_sum: f32,
    /// Prior probability of the move in the parent's policy (after root transforms).
    pub prior: f32,
    /// Completed visits.
    pub n: u32,
    /// In-flight visits (virtual loss), each counted as a loss for the mover.
    pub vl: u32,
}

/// The rest of a node: links, its move and life state.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Link {
    /// Sum over completed visits of the draw probability.
    pub d_sum: f32,
    /// The network's value for the side to move here (once evaluated), or the rules'
    /// exact value (−1, 0, 1) for a terminal node.
    pub value: f32,
    pub parent: u32,
    pub first_child: u32,
    pub mv: Move,
    pub num_children: u8,
    pub state: State,
}

pub(crate) const NO_PARENT: u32 = u32::MAX;

/// Bytes of arena per tree node (its statistics and its links).
pub const NODE_BYTES: usize = std::mem::size_of::<Stat>() + std::mem::size_of::<Link>();

impl Stat {
    pub(crate) fn new(prior: f32) -> Stat {
        Stat {
            q_sum: 0.0,
            prior,
            n: 0,
            vl: 0,
        }
    }

    /// Q for the mover into this node over completed visits; `None` if unvisited.
    #[inline]
    pub(crate) fn q(&self) -> Option<f32> {
        (self.n > 0).then(|| self.q_sum / self.n as f32)
    }
}

impl Link {
    pub(crate) fn new(mv: Move, parent: u32) -> Link {
        Link {
            d_sum: 0.0,
            value: 0.0,
            parent,
            first_child: 0,
            mv,
            num_children: 0,
            state: State::Fresh,
        }
    }

    /// The children's index range in the arena.
    #[inline]
    pub(crate) fn children(&self) -> std::ops::Range<usize> {
        let first = self.first_child as usize;
        first..first + self.num_children as usize
    }
}

/// The arena: `stat[i]` and `link[i]` are node i; the root is node 0.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tree {
    pub stat: Vec<Stat>,
    pub link: Vec<Link>,
}

impl Tree {
    pub(crate) fn len(&self) -> usize {
        self.stat.len()
    }

    /// Empties the arena (keeping its memory) and puts a fresh root in it.
    pub(crate) fn reset(&mut self) {
        self.stat.clear();
        self.link.clear();
        self.stat.push(Stat::new(1.0));
        // The root's move is a placeholder that is never read.
        self.link.push(Link::new(
            Move::from_u16(0).expect("a0a0 decodes"),
            NO_PARENT,
        ));
    }

    /// Adds one completed visit with value `v_stm` (for the side to move at `leaf`)
    /// and draw probability `d` to `leaf` and its ancestors, removing the in-flight
    /// mark each carries. From a proven node upwards the visit carries the proven value
    /// instead (a leaf that was in flight when its ancestor got proven).
    #[inline]
    pub(crate) fn backup(&mut self, leaf: usize, v_stm: f32, d: f32) {
        let mut v = -v_stm;
        let mut d = d;
        let mut i = leaf;
        loop {
            let l = &mut self.link[i];
            if l.state.is_proven() {
                v = -l.value;
                d = if l.value == 0.0 { 1.0 } else { 0.0 };
            }
            l.d_sum += d;
            let s = &mut self.stat[i];
            s.n += 1;
            s.vl -= 1;
            s.q_sum += v;
            let l = &self.link[i];
            if l.parent == NO_PARENT {
                return;
            }
            i = l.parent as usize;
            v = -v;
        }
    }

    /// Removes one in-flight mark from `leaf` and its ancestors (an abandoned
    /// descent). Returns the root child the path went through, if any.
    pub(crate) fn undo_virtual(&mut self, leaf: usize) -> Option<usize> {
        let mut i = leaf;
        let mut below = None;
        loop {
            self.stat[i].vl -= 1;
            let parent = self.link[i].parent;
            if parent == NO_PARENT {
                return below;
            }
            below = Some(i);
            i = parent as usize;
        }
    }

    /// MCTS-solver step after `node` got an exact value (terminal or proven): proves
    /// its parent when one child wins for the parent's mover, or when every child is
    /// exact (the parent's value is then the best of them), and goes on upwards. The
    /// root is never proven, so it keeps searching and reporting all its moves.
    ///
    /// A newly proven node's Q is set to its exact value (the mean over its visits is
    /// rewritten), so its parent's selection sees the proof at once. Its [`Ending`] is
    /// [`Ending::NoMove`] only when the proof holds without the rules' verdicts: a win
    /// through any exact child that ends with no legal move, a loss when every child
    /// does (the loser may pick the line a rule ends).
    pub(crate) fn prove_upwards(&mut self, mut node: usize) {
        loop {
            let parent = self.link[node].parent;
            if parent == NO_PARENT || parent == 0 {
                return;
            }
            let p = parent as usize;
            if self.link[p].state != State::Expanded {
                return;
            }
            // Values for the parent's side to move are minus the children's.
            let v = -self.link[node].value;
            let children = self.link[p].children();
            let exact = |c: usize| {
                let l = &self.link[c];
                l.state.ending().map(|why| (-l.value, why))
            };
            let (value, why) = if v == 1.0 {
                let no_move = children
                    .filter_map(exact)
                    .any(|(v, why)| v == 1.0 && why == Ending::NoMove);
                (
                    1.0,
                    if no_move {
                        Ending::NoMove
                    } else {
                        Ending::Rule
                    },
                )
            } else {
                let mut best = f32::NEG_INFINITY;
                let mut why = Ending::NoMove;
                for c in children {
                    let Some((v, w)) = exact(c) else {
                        return;
                    };
                    best = best.max(v);
                    if w == Ending::Rule {
                        why = Ending::Rule;
                    }
                }
                (best, why)
            };
            let l = &mut self.link[p];
            l.state = State::proven(why);
            l.value = value;
            let s = &mut self.stat[p];
            s.q_sum = -value * s.n as f32;
            l.d_sum = if value == 0.0 { s.n as f32 } else { 0.0 };
            node = p;
        }
    }

    /// Makes the subtree under `new_root` the whole arena: copies it into `spare`
    /// breadth first (children stay contiguous), then swaps, leaving the old arena in
    /// `spare` for reuse.
    pub(crate) fn compact(&mut self, spare: &mut Tree, new_root: usize) {
        spare.stat.clear();
        spare.link.clear();
        spare.stat.push(self.stat[new_root]);
        let mut root = self.link[new_root];
        root.parent = NO_PARENT;
        spare.link.push(root);
        let mut i = 0;
        while i < spare.len() {
            let node = spare.link[i];
            if node.num_children > 0 {
                let range = node.children();
                let first = spare.len();
                spare.stat.extend_from_slice(&self.stat[range.clone()]);
                spare.link.extend_from_slice(&self.link[range]);
                for c in &mut spare.link[first..] {
                    c.parent = i as u32;
                }
                spare.link[i].first_child = first as u32;
            }
            i += 1;
        }
        std::mem::swap(self, spare);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_stay_small() {
        // 16 bytes scanned by selection, 20 more for links: a wide tree of a million
        // nodes fits in 36 MB.
        assert_eq!(std::mem::size_of::<Stat>(), 16);
        assert_eq!(std::mem::size_of::<Link>(), 20);
        assert_eq!(NODE_BYTES, 36);
    }

    /// Root, one expanded node under it (node 1), and its children 2.. with the given
    /// states and values (for their own side to move); unlisted ones stay fresh.
    fn tree_with(kids: &[(State, f32)], fresh: usize) -> Tree {
        let mut t = Tree::default();
        t.reset();
        let m = t.link[0].mv;
        t.link[0].state = State::Expanded;
        t.link[0].first_child = 1;
        t.link[0].num_children = 1;
        t.stat.push(Stat::new(1.0));
        t.link.push(Link::new(m, 0));
        t.link[1].state = State::Expanded;
        t.link[1].first_child = 2;
        t.link[1].num_children = (kids.len() + fresh) as u8;
        for &(state, value) in kids {
            t.stat.push(Stat::new(0.5));
            let mut l = Link::new(m, 1);
            l.state = state;
            l.value = value;
            t.link.push(l);
        }
        for _ in 0..fresh {
            t.stat.push(Stat::new(0.5));
            t.link.push(Link::new(m, 1));
        }
        t
    }

    #[test]
    fn a_proof_ends_with_no_move_only_when_no_rule_verdict_is_needed() {
        // Wins for node 1's mover (children lost for their side to move).
        let t = |kids: &[(State, f32)], fresh| {
            let mut t = tree_with(kids, fresh);
            t.prove_upwards(2);
            (t.link[1].state, t.link[1].value)
        };
        assert_eq!(t(&[(State::RuleEnd, -1.0)], 1), (State::ProvenRule, 1.0));
        assert_eq!(
            t(&[(State::NoMoveEnd, -1.0)], 1),
            (State::ProvenNoMove, 1.0)
        );
        // A mate among the winning moves makes the win a mate, whichever proved it.
        assert_eq!(
            t(&[(State::RuleEnd, -1.0), (State::ProvenNoMove, -1.0)], 0),
            (State::ProvenNoMove, 1.0)
        );
        // Losses: a mate only when every defence is mated.
        assert_eq!(
            t(&[(State::NoMoveEnd, 1.0), (State::ProvenNoMove, 1.0)], 0),
            (State::ProvenNoMove, -1.0)
        );
        assert_eq!(
            t(&[(State::NoMoveEnd, 1.0), (State::RuleEnd, 1.0)], 0),
            (State::ProvenRule, -1.0)
        );
        // A draw is always the rules' verdict.
        assert_eq!(
            t(&[(State::NoMoveEnd, 1.0), (State::RuleEnd, 0.0)], 0),
            (State::ProvenRule, 0.0)
        );
        // Not every child exact and none winning: nothing is proven yet.
        assert_eq!(t(&[(State::NoMoveEnd, 1.0)], 1), (State::Expanded, 0.0));
    }
}
