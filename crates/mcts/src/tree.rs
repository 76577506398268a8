//! The arena: nodes in one `Vec`, children of a node stored contiguously, links as
//! `u32` indices. No `Rc`/`RefCell`, no per-node heap allocation; the root is always
//! index 0.

use xq_core::Move;

/// Where a node is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum State {
    /// Never reached: its position's moves are not generated yet.
    Fresh,
    /// Waiting for its evaluation (a leaf request is out).
    Pending,
    /// Evaluated; its children exist.
    Expanded,
    /// The game is over here; `value` holds the rules' verdict.
    Terminal,
    /// Expanded, and its value is proven from terminal children (MCTS-solver):
    /// `value` holds the exact result; its children stay for the principal variation.
    Proven,
}

impl State {
    /// Whether the node has children.
    #[inline]
    pub(crate) fn has_children(self) -> bool {
        matches!(self, State::Expanded | State::Proven)
    }

    /// Whether the node's value is exact (no need to search below it).
    #[inline]
    pub(crate) fn is_exact(self) -> bool {
        matches!(self, State::Terminal | State::Proven)
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
            if l.state == State::Proven {
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
    /// rewritten), so its parent's selection sees the proof at once.
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
            let value = if v == 1.0 {
                1.0
            } else {
                let mut best = f32::NEG_INFINITY;
                for c in self.link[p].children() {
                    if !self.link[c].state.is_exact() {
                        return;
                    }
                    best = best.max(-self.link[c].value);
                }
                best
            };
            let l = &mut self.link[p];
            l.state = State::Proven;
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
}
