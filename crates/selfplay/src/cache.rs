//! The evaluation cache: a bounded map from "what the encoder sees" to the network's
//! answer, with clock (second-chance) replacement.
//!
//! The key ([`eval_key`]) hashes the Zobrist hash of every position in the request's
//! history window (oldest first), the window's length and the newest position's
//! no-capture counter. That is everything the input planes are built from (piece
//! planes per history step, repetition planes derived from the window, side to move,
//! the 60-move counter), so two requests with the same key get the same network
//! output. The legal moves follow from the newest position, so the stored policy's
//! order matches; the move count is checked on lookup anyway.
//!
//! Clock replacement instead of exact LRU: a hit only sets a bit (no list splicing),
//! and eviction sweeps a hand over the slots, giving recently used entries a second
//! chance. It approximates LRU at a fraction of the bookkeeping.

use std::collections::HashMap;

use xq_core::{Position, hash::splitmix64};
use xq_nn::Evaluation;

/// The cache key of a request: see the module documentation.
pub fn eval_key(history: &[Position]) -> u64 {
    let mut h = splitmix64(0x5851_5A45_524F_4331 ^ history.len() as u64);
    for p in history {
        h = splitmix64(h ^ p.hash());
    }
    if let Some(last) = history.last() {
        h = splitmix64(h ^ u64::from(last.halfmoves().min(1 << 16)) << 1);
    }
    h
}

#[derive(Debug)]
struct Slot {
    key: u64,
    eval: Evaluation,
    referenced: bool,
}

/// A bounded evaluation cache with clock replacement. Capacity 0 stores nothing.
#[derive(Debug)]
pub struct EvalCache {
    capacity: usize,
    slots: Vec<Slot>,
    index: HashMap<u64, usize>,
    hand: usize,
    lookups: u64,
    hits: u64,
}

impl EvalCache {
    pub fn new(capacity: usize) -> EvalCache {
        EvalCache {
            capacity,
            slots: Vec::new(),
            index: HashMap::new(),
            hand: 0,
            lookups: 0,
            hits: 0,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The cached evaluation for `key` if it has `moves` policy entries; marks it used.
    pub fn get(&mut self, key: u64, moves: usize) -> Option<&Evaluation> {
        self.lookups += 1;
        let &i = self.index.get(&key)?;
        let slot = &mut self.slots[i];
        if slot.eval.policy.len() != moves {
            return None;
        }
        slot.referenced = true;
        self.hits += 1;
        Some(&slot.eval)
    }

    /// Stores an evaluation, evicting the first entry the clock hand finds unused
    /// since its last pass when the cache is full.
    pub fn insert(&mut self, key: u64, eval: Evaluation) {
        if self.capacity == 0 {
            return;
        }
        if let Some(&i) = self.index.get(&key) {
            self.slots[i].eval = eval;
            self.slots[i].referenced = true;
            return;
        }
        if self.slots.len() < self.capacity {
            self.index.insert(key, self.slots.len());
            self.slots.push(Slot {
                key,
                eval,
                referenced: false,
            });
            return;
        }
        loop {
            let i = self.hand;
            self.hand = (self.hand + 1) % self.capacity;
            let slot = &mut self.slots[i];
            if slot.referenced {
                slot.referenced = false;
                continue;
            }
            self.index.remove(&slot.key);
            *slot = Slot {
                key,
                eval,
                referenced: false,
            };
            self.index.insert(key, i);
            return;
        }
    }

    /// Drops every entry (a new network answers differently). Counters are kept.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.index.clear();
        self.hand = 0;
    }

    /// (lookups, hits) since creation.
    pub fn counters(&self) -> (u64, u64) {
        (self.lookups, self.hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_core::Game;

    fn eval(tag: f32, n: usize) -> Evaluation {
        Evaluation {
            policy: vec![1.0 / n as f32; n],
            wdl: [tag, 1.0 - tag, 0.0],
        }
    }

    #[test]
    fn stores_and_returns_until_full_then_evicts_unreferenced_entries_first() {
        let mut c = EvalCache::new(3);
        for k in 0..3u64 {
            c.insert(k, eval(k as f32 / 10.0, 2));
        }
        assert_eq!(c.len(), 3);
        // Touch 0 and 2: the next insertion must evict 1.
        assert!(c.get(0, 2).is_some());
        assert!(c.get(2, 2).is_some());
        c.insert(9, eval(0.9, 2));
        assert_eq!(c.len(), 3);
        assert!(c.get(1, 2).is_none(), "unreferenced entry survived");
        assert_eq!(c.get(9, 2).unwrap().wdl[0], 0.9);
        assert_eq!(c.get(0, 2).unwrap().wdl[0], 0.0);
        assert_eq!(c.get(2, 2).unwrap().wdl[0], 0.2);
        assert_eq!(c.counters(), (6, 5));
    }

    #[test]
    fn a_policy_of_another_length_is_a_miss_and_zero_capacity_stores_nothing() {
        let mut c = EvalCache::new(4);
        c.insert(5, eval(0.5, 3));
        assert!(c.get(5, 4).is_none());
        let mut none = EvalCache::new(0);
        none.insert(1, eval(0.1, 1));
        assert!(none.get(1, 1).is_none());
        c.clear();
        assert!(c.get(5, 3).is_none());
    }

    #[test]
    fn the_key_sees_history_and_the_no_capture_counter() {
        // Same final position reached by two move orders: different history windows.
        let mut a = Game::default();
        let mut b = Game::default();
        for m in ["h2e2", "h9g7", "b0c2", "b9c7"] {
            a.play_iccs(m).unwrap();
        }
        for m in ["b0c2", "b9c7", "h2e2", "h9g7"] {
            b.play_iccs(m).unwrap();
        }
        assert_eq!(a.position().hash(), b.position().hash());
        let hist = |g: &Game| -> Vec<Position> {
            (0..=g.ply())
                .map(|p| g.position_at(p).unwrap().clone())
                .collect()
        };
        let (ha, hb) = (hist(&a), hist(&b));
        assert_ne!(eval_key(&ha), eval_key(&hb));
        // Only the newest position in the window: same key.
        assert_eq!(eval_key(&ha[4..]), eval_key(&hb[4..]));
        // Same pieces, different no-capture counter: different key.
        let mut setup = ha[4].to_setup();
        setup.halfmoves += 3;
        let p = Position::from_setup(setup).unwrap();
        assert_eq!(p.hash(), ha[4].hash());
        assert_ne!(eval_key(&[p]), eval_key(&ha[4..]));
    }

    /// Keys are compared across processes (and with stored statistics): pinned.
    #[test]
    fn keys_are_pinned() {
        let mut g = Game::default();
        g.play_iccs("h2e2").unwrap();
        let hist = [g.position_at(0).unwrap().clone(), g.position().clone()];
        assert_eq!(eval_key(&[]), 0x653b_41dc_b28f_a3b7);
        assert_eq!(eval_key(&hist[..1]), 0x692c_37fe_ae57_40d3);
        assert_eq!(eval_key(&hist), 0xc295_644a_c5e5_1171);
    }
}
