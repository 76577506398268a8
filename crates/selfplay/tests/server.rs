//! The evaluation server sends every evaluation back to the thread, and the place in
//! its request, that asked for it, whatever the batch composition.

use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::Position;
use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator};
use xq_selfplay::SelfplayConfig;
use xq_selfplay::cache::EvalCache;
use xq_selfplay::resign::{Calibrator, ResignCalibration};
use xq_selfplay::server::{OwnedLeaf, ServerShared, ToGroup, ToServer, serve};
use xq_selfplay::stats::Counters;

/// Writes the position's hash into its output: the policy's first entry carries the
/// low 16 bits, the WDL the next 16, so an answer names the position it belongs to.
struct HashEcho;

fn tag(pos: &Position) -> (f32, f32) {
    let h = pos.hash();
    (
        (h & 0xffff) as f32 / 65536.0,
        ((h >> 16) & 0xffff) as f32 / 65536.0,
    )
}

impl Evaluator for HashEcho {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        batch
            .iter()
            .map(|input| {
                let (a, b) = tag(input.position()?);
                let mut policy = vec![0.0; input.moves.len()];
                policy[0] = a;
                Ok(Evaluation {
                    policy,
                    wdl: [b, 1.0 - b, 0.0],
                })
            })
            .collect()
    }
    fn name(&self) -> String {
        "hash-echo".into()
    }
}

/// `n` distinct positions from a seeded random walk.
fn positions(seed: u64, n: usize) -> Vec<Position> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut pos = Position::startpos();
    while out.len() < n {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            pos = Position::startpos();
            continue;
        }
        pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
        out.push(pos.clone());
    }
    out
}

#[test]
fn every_evaluation_returns_to_the_thread_and_slot_that_asked() {
    let groups = 4;
    let counters = Counters::default();
    let resign = Calibrator::new(ResignCalibration::new(&SelfplayConfig::default()));
    let cache = Mutex::new(EvalCache::new(0));
    let (swap, abort) = (AtomicBool::new(false), AtomicBool::new(false));
    let (to_server, server_rx) = mpsc::channel();
    let (_models_tx, models_rx) = mpsc::channel();
    let mut txs = Vec::new();
    let mut rxs = Vec::new();
    for _ in 0..groups {
        let (tx, rx) = mpsc::channel();
        txs.push(tx);
        rxs.push(rx);
    }
    std::thread::scope(|s| {
        for (g, rx) in rxs.into_iter().enumerate() {
            let tx = to_server.clone();
            s.spawn(move || {
                // Requests of varying sizes (1..=9) so batches mix and split.
                for round in 0..25usize {
                    let n = 1 + (round * 7 + g) % 9;
                    let pos = positions((g * 1000 + round) as u64, n);
                    let leaves: Vec<OwnedLeaf> = pos
                        .iter()
                        .map(|p| OwnedLeaf {
                            history: vec![p.clone()],
                            moves: p.legal_moves().to_vec(),
                        })
                        .collect();
                    tx.send(ToServer::Eval {
                        group: g,
                        leaves,
                        n,
                    })
                    .unwrap();
                    let Ok(ToGroup::Evals { leaves, evals }) = rx.recv() else {
                        panic!("group {g}: no evaluations");
                    };
                    assert_eq!(evals.len(), n);
                    for (i, (leaf, e)) in leaves.iter().zip(&evals).enumerate() {
                        let (a, b) = tag(leaf.history.last().unwrap());
                        assert_eq!(leaf.history[0], pos[i], "buffer order changed");
                        assert_eq!((e.policy[0], e.wdl[0]), (a, b), "group {g} slot {i}");
                    }
                }
                tx.send(ToServer::Done { group: g }).unwrap();
            });
        }
        drop(to_server);
        serve(
            Box::new(HashEcho),
            server_rx,
            txs,
            models_rx,
            5,
            Duration::from_millis(1),
            ServerShared {
                counters: &counters,
                resign: &resign,
                cache: &cache,
                swap_pending: &swap,
                abort: &abort,
            },
        )
        .unwrap();
    });
    let s = counters.snapshot(std::time::Instant::now(), resign.threshold());
    let sent: usize = (0..groups)
        .map(|g| (0..25).map(|r| 1 + (r * 7 + g) % 9).sum::<usize>())
        .sum();
    assert_eq!(s.evaluated, sent as u64);
    // No call exceeded max_batch = 5.
    assert!(s.batches as usize >= sent.div_ceil(5));
}
