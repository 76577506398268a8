//! Gumbel root search (Danihelka, Guez, Schrittwieser, Silver: "Policy improvement by
//! planning with Gumbel", ICLR 2022), following DeepMind's reference implementation
//! (mctx `gumbel_muzero_policy`, `qtransform_completed_by_mix_value`).
//!
//! At the start of a search, Gumbel-Top-k draws m root moves without replacement (the
//! m largest g(a) + logits(a), g ~ Gumbel(0, 1)). Sequential halving then spends the
//! budget in rounds: each remaining move gets the same number of visits, and after each
//! round the better half (by g + logits + σ(q̂)) stays. The move played is the
//! survivor with the largest g + logits + σ(q̂); the policy target is the improved
//! policy softmax(logits + σ(completed Q)), where unvisited moves take the mixed value
//! estimate v_mix instead of a Q. No Dirichlet noise is needed: the Gumbel draw is the
//! exploration.
//!
//! With batching (several leaves in flight) an in-flight visit counts as a visit for
//! the halving schedule, so a batch spreads over the moves of the current round.

use crate::{GumbelParams, ties::Ties, tree::Stat};

/// The Gumbel state of one search at the root.
#[derive(Debug, Clone)]
pub(crate) struct GumbelRoot {
    /// g(a) per root child (0 when sampling is off).
    pub g: Vec<f32>,
    /// log prior per root child (after the root policy temperature).
    pub logits: Vec<f32>,
    /// Root-child offsets of the m sampled moves.
    pub considered: Vec<usize>,
    /// Visits per root child in this search, in-flight ones included.
    pub visits: Vec<u32>,
    /// The halving schedule: simulation k goes to a considered move with exactly
    /// `schedule[k]` visits.
    pub schedule: Vec<u32>,
    /// Simulations started through the root in this search.
    pub started: usize,
    /// Scratch for σ(q̂), reused between simulations.
    sigma: Vec<f32>,
    /// The search's tie-break order over root-child offsets.
    ties: Ties,
}

/// mctx `get_sequence_of_considered_visits`: for each simulation, the visit count
/// that a move must have to receive it.
pub(crate) fn halving_schedule(m: usize, n: usize) -> Vec<u32> {
    if m <= 1 {
        return (0..n as u32).collect();
    }
    let log2max = (m as f64).log2().ceil() as usize;
    let mut seq = Vec::with_capacity(n);
    let mut visits = vec![0u32; m];
    let mut considered = m;
    while seq.len() < n {
        let extra = (n / (log2max * considered)).max(1);
        for _ in 0..extra {
            seq.extend_from_slice(&visits[..considered]);
            for v in &mut visits[..considered] {
                *v += 1;
            }
        }
        considered = (considered / 2).max(2);
    }
    seq.truncate(n);
    seq
}

impl GumbelRoot {
    /// Draws the considered moves for a search of `sims` simulations through the root.
    pub(crate) fn new(
        priors: &[f32],
        g: Vec<f32>,
        params: &GumbelParams,
        sims: usize,
        ties: Ties,
    ) -> GumbelRoot {
        let logits: Vec<f32> = priors.iter().map(|&p| p.max(1e-30).ln()).collect();
        let mut order: Vec<usize> = (0..priors.len()).collect();
        // Ties (g = 0, equal priors) in the search's tie order, not move order.
        order.sort_by(|&a, &b| {
            (g[b] + logits[b])
                .total_cmp(&(g[a] + logits[a]))
                .then(ties.key(b).cmp(&ties.key(a)))
        });
        let m = params.considered_actions.min(priors.len());
        order.truncate(m);
        GumbelRoot {
            schedule: halving_schedule(m, sims),
            visits: vec![0; priors.len()],
            considered: order,
            started: 0,
            sigma: vec![0.0; priors.len()],
            g,
            logits,
            ties,
        }
    }

    /// Picks the root child offset for the next simulation and counts it.
    pub(crate) fn select(
        &mut self,
        children: &[Stat],
        root_value: f32,
        params: &GumbelParams,
    ) -> usize {
        sigma(children, root_value, params, &mut self.sigma);
        let want = self.schedule.get(self.started).copied();
        let score = |a: usize| self.g[a] + self.logits[a] + self.sigma[a];
        let pick = want
            .and_then(|w| {
                self.considered
                    .iter()
                    .copied()
                    .filter(|&a| self.visits[a] == w)
                    .max_by(|&a, &b| score(a).total_cmp(&score(b)).then(self.tie(a, b)))
            })
            .or_else(|| {
                // Off schedule (budget raised mid-search): the least-visited survivor.
                self.considered
                    .iter()
                    .copied()
                    .min_by_key(|&a| (self.visits[a], std::cmp::Reverse(self.ties.key(a))))
            })
            .expect("at least one considered move");
        self.visits[pick] += 1;
        self.started += 1;
        pick
    }

    /// Forgets a simulation through root child `a` that was abandoned.
    pub(crate) fn undo(&mut self, a: usize) {
        self.visits[a] -= 1;
        self.started -= 1;
    }

    /// The move to play: among the considered moves with the most visits in this
    /// search, the largest g + logits + σ(q̂).
    pub(crate) fn action(
        &self,
        children: &[Stat],
        root_value: f32,
        params: &GumbelParams,
    ) -> usize {
        let mut s = vec![0.0; children.len()];
        sigma(children, root_value, params, &mut s);
        let most = self
            .considered
            .iter()
            .map(|&a| self.visits[a])
            .max()
            .unwrap_or(0);
        let score = |a: usize| self.g[a] + self.logits[a] + s[a];
        self.considered
            .iter()
            .copied()
            .filter(|&a| self.visits[a] == most)
            .max_by(|&a, &b| score(a).total_cmp(&score(b)).then(self.tie(a, b)))
            .expect("at least one considered move")
    }

    /// How root children `a` and `b` compare when their scores are equal.
    fn tie(&self, a: usize, b: usize) -> std::cmp::Ordering {
        self.ties.key(a).cmp(&self.ties.key(b))
    }

    /// The improved policy softmax(logits + σ(completed Q)) over all root children.
    pub(crate) fn improved_policy(
        &self,
        children: &[Stat],
        root_value: f32,
        params: &GumbelParams,
    ) -> Vec<f32> {
        self.improved_policy_on(&self.logits, children, root_value, params)
    }

    /// softmax(logits + σ(completed Q)) with other logits than the search's (the
    /// network's own prior under leaf quiescence); σ is this root's.
    pub(crate) fn improved_policy_on(
        &self,
        logits: &[f32],
        children: &[Stat],
        root_value: f32,
        params: &GumbelParams,
    ) -> Vec<f32> {
        let mut s = vec![0.0; children.len()];
        sigma(children, root_value, params, &mut s);
        let z: Vec<f32> = logits.iter().zip(&s).map(|(l, s)| l + s).collect();
        softmax(&z)
    }
}

/// Completed Q for every root child (from the root mover's view, in [-1, 1]): the
/// child's Q if visited, else v_mix = (v + ΣN · Σ_visited π q / Σ_visited π) / (1 + ΣN)
/// with v the network's value of the root and π the prior.
pub(crate) fn completed_q(children: &[Stat], root_value: f32, out: &mut [f32]) {
    let mut sum_n = 0f64;
    let (mut pq, mut p) = (0f64, 0f64);
    for c in children {
        if let Some(q) = c.q() {
            sum_n += c.n as f64;
            pq += c.prior as f64 * q as f64;
            p += c.prior as f64;
        }
    }
    let v_mix = if p > 0.0 {
        ((root_value as f64 + sum_n * pq / p) / (1.0 + sum_n)) as f32
    } else {
        root_value
    };
    for (o, c) in out.iter_mut().zip(children) {
        *o = c.q().unwrap_or(v_mix);
    }
}

/// σ(q̂) = (c_visit + max_b N(b)) · c_scale · q̂, with q̂ the completed Q mapped to
/// [0, 1] (min-max over the root's moves, or (Q + 1) / 2).
pub(crate) fn sigma(children: &[Stat], root_value: f32, params: &GumbelParams, out: &mut [f32]) {
    completed_q(children, root_value, out);
    if params.rescale_values {
        let lo = out.iter().cloned().fold(f32::INFINITY, f32::min);
        let hi = out.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let span = (hi - lo).max(1e-8);
        out.iter_mut().for_each(|q| *q = (*q - lo) / span);
    } else {
        out.iter_mut().for_each(|q| *q = (*q + 1.0) / 2.0);
    }
    let max_n = children.iter().map(|c| c.n).max().unwrap_or(0) as f32;
    let scale = (params.c_visit + max_n) * params.c_scale;
    out.iter_mut().for_each(|q| *q *= scale);
}

/// The paper's deterministic non-root selection (mctx
/// `gumbel_muzero_interior_action_selection`): argmax over children of
/// π'(a) − N(a) / (1 + Σ_b N(b)), with π' = softmax(logits + σ(completed Q)) and
/// in-flight visits counted in N, ties broken by `ties` (the children are the tree's
/// slots from `first`). `value` is the node's network value; `scratch` is reused between
/// calls. Returns the child offset.
pub(crate) fn interior_select(
    children: &[Stat],
    value: f32,
    params: &GumbelParams,
    scratch: &mut Vec<f32>,
    ties: Ties,
    first: usize,
) -> usize {
    scratch.clear();
    scratch.resize(children.len(), 0.0);
    sigma(children, value, params, scratch);
    let mut max = f32::NEG_INFINITY;
    for (s, c) in scratch.iter_mut().zip(children) {
        *s += c.prior.max(1e-30).ln();
        max = max.max(*s);
    }
    let mut sum = 0.0;
    for s in scratch.iter_mut() {
        *s = (*s - max).exp();
        sum += *s;
    }
    let total: u32 = children.iter().map(|c| c.n + c.vl).sum();
    let scale = 1.0 / (1 + total) as f32;
    let mut best = 0;
    let mut best_score = f32::NEG_INFINITY;
    for (i, (s, c)) in scratch.iter().zip(children).enumerate() {
        let score = s / sum - (c.n + c.vl) as f32 * scale;
        if ties.beats(score, first + i, best_score, first + best) {
            best_score = score;
            best = i;
        }
    }
    best
}

fn softmax(z: &[f32]) -> Vec<f32> {
    let max = z.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
    let mut e: Vec<f32> = z.iter().map(|x| (x - max).exp()).collect();
    let sum: f32 = e.iter().sum();
    e.iter_mut().for_each(|x| *x /= sum);
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halving_schedule_follows_the_mctx_definition() {
        // Worked by hand from the definition.
        assert_eq!(halving_schedule(1, 6), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(halving_schedule(2, 8), vec![0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(
            halving_schedule(4, 16),
            vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
        );
        assert_eq!(halving_schedule(16, 16), vec![0; 16]);
        // m = 3: one round of 3, then rounds of the best 2.
        assert_eq!(halving_schedule(3, 10), vec![0, 0, 0, 1, 1, 2, 2, 3, 3, 4]);
    }

    fn stat(prior: f32, n: u32, q: f32) -> Stat {
        Stat {
            q_sum: q * n as f32,
            prior,
            n,
            vl: 0,
        }
    }

    #[test]
    fn interior_selection_follows_prior_then_q_then_spreads_visits() {
        let p = GumbelParams::default();
        let mut scratch = Vec::new();
        // Nothing visited: the highest prior.
        let kids = [stat(0.2, 0, 0.0), stat(0.5, 0, 0.0), stat(0.3, 0, 0.0)];
        assert_eq!(
            interior_select(&kids, 0.0, &p, &mut scratch, Ties::new(0), 0),
            1
        );
        // A winning child beats a losing one and an unvisited one.
        let kids = [stat(0.3, 0, 0.0), stat(0.4, 3, -1.0), stat(0.3, 3, 1.0)];
        assert_eq!(
            interior_select(&kids, 0.0, &p, &mut scratch, Ties::new(0), 0),
            2
        );
        // Equal Q and prior: the less visited child (visits, in flight included).
        let mut kids = [stat(0.5, 4, 0.2), stat(0.5, 4, 0.2)];
        kids[0].vl = 2;
        assert_eq!(
            interior_select(&kids, 0.0, &p, &mut scratch, Ties::new(0), 0),
            1
        );
    }

    #[test]
    fn softmax_is_a_distribution_that_orders_like_its_input() {
        let p = softmax(&[1.0, 3.0, 2.0, f32::NEG_INFINITY]);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(p[1] > p[2] && p[2] > p[0] && p[3] == 0.0);
    }
}
