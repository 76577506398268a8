//! The evaluation server sends every evaluation back to the thread, and the place in
//! its request, that asked for it, whatever the batch composition.

use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::Position;
use xq_nn::encode::{EncoderConfig, PackedPlane, encode_packed_into};
use xq_nn::{
    EvalError, EvalInput, Evaluation, Evaluator, POLICY_SIZE, RawEvaluator, RawOutputs,
    packed_positions,
};
use xq_selfplay::SelfplayConfig;
use xq_selfplay::cache::EvalCache;
use xq_selfplay::resign::{Calibrator, ResignCalibration};
use xq_selfplay::server::{OwnedLeaf, Request, ServerShared, ToGroup, ToServer, serve};
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

/// A network stand-in that writes a digest of each packed input into its first value
/// logit, so an answer names the encoding it belongs to.
struct PackedEcho {
    encoder: EncoderConfig,
    policy: Vec<f32>,
    value: Vec<f32>,
}

fn digest(planes: &[PackedPlane]) -> f32 {
    let h = planes.iter().enumerate().fold(0u64, |h, (i, p)| {
        let [lo, hi] = p.mask_words();
        xq_core::hash::splitmix64(
            h ^ lo as u64 ^ (hi as u64).rotate_left(32) ^ p.value.to_bits() as u64 ^ i as u64,
        )
    });
    (h & 0xffff) as f32 / 65536.0
}

impl RawEvaluator for PackedEcho {
    fn encoder(&self) -> EncoderConfig {
        self.encoder
    }
    fn forward_packed(&mut self, parts: &[&[PackedPlane]]) -> Result<RawOutputs<'_>, EvalError> {
        let planes = self.encoder.planes();
        let n = packed_positions(parts, planes)?;
        self.policy = vec![0.0; n * POLICY_SIZE];
        self.value.clear();
        for part in parts {
            for position in part.chunks_exact(planes) {
                self.value.extend([digest(position), 0.0, 0.0]);
            }
        }
        Ok(RawOutputs {
            policy: &self.policy,
            value: &self.value,
        })
    }
}

impl Evaluator for PackedEcho {
    fn evaluate(&mut self, _: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        Err(EvalError::Backend(
            "the server must take the packed path".into(),
        ))
    }
    fn name(&self) -> String {
        "packed-echo".into()
    }
    fn raw(&mut self) -> Option<&mut dyn RawEvaluator> {
        Some(self)
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

/// Four threads send requests of 1-9 leaves for 25 rounds to a server with
/// `max_batch` 5 over `evaluator`, encoding them first with `encoder`; every answer
/// is checked against its own leaf by `check(leaf, request, i)`.
fn serve_four_threads(
    evaluator: Box<dyn Evaluator>,
    encoder: Option<EncoderConfig>,
    check: fn(&[PackedPlane], &Position, &mut Request, usize),
) {
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
                    let mut request = Request {
                        leaves: pos
                            .iter()
                            .map(|p| OwnedLeaf {
                                history: vec![p.clone()],
                                moves: p.legal_moves().to_vec(),
                            })
                            .collect(),
                        n,
                        encoder,
                        ..Request::default()
                    };
                    let planes = encoder.map_or(0, |e| e.planes());
                    if let Some(e) = encoder {
                        request.packed = vec![PackedPlane::ZERO; n * planes];
                        for (p, dst) in pos.iter().zip(request.packed.chunks_exact_mut(planes)) {
                            encode_packed_into(std::slice::from_ref(p), &e, dst).unwrap();
                        }
                    }
                    let sent = request.packed.clone();
                    tx.send(ToServer::Eval { group: g, request }).unwrap();
                    let Ok(ToGroup::Evals { mut request }) = rx.recv() else {
                        panic!("group {g}: no evaluations");
                    };
                    for (i, p) in pos.iter().enumerate() {
                        assert_eq!(request.leaves[i].history[0], *p, "buffer order changed");
                        let packed = &sent[i * planes..(i + 1) * planes];
                        check(packed, p, &mut request, i);
                    }
                }
                tx.send(ToServer::Done { group: g }).unwrap();
            });
        }
        drop(to_server);
        serve(
            evaluator,
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
                lead: true,
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

#[test]
fn every_evaluation_returns_to_the_thread_and_slot_that_asked() {
    serve_four_threads(Box::new(HashEcho), None, |_, pos, request, i| {
        let (a, b) = tag(pos);
        let e = &request.evals[i];
        assert_eq!((e.policy[0], e.wdl[0]), (a, b), "slot {i}");
    });
}

/// With a network, the server hands it the threads' packed inputs and gives each
/// thread its rows of the logits, across calls that cut a request in two.
#[test]
fn every_row_of_logits_returns_to_the_thread_and_slot_that_asked() {
    let encoder = EncoderConfig { history: 1 };
    let echo = PackedEcho {
        encoder,
        policy: Vec::new(),
        value: Vec::new(),
    };
    serve_four_threads(Box::new(echo), Some(encoder), |packed, _, request, i| {
        assert_eq!(request.value[i * 3], digest(packed), "slot {i}");
        assert_eq!(request.policy.len(), request.n * POLICY_SIZE);
        let evals = request.evaluations().unwrap();
        assert_eq!(evals.len(), request.n);
    });
}

/// A thread that encoded for another network is refused with an error, not answered.
#[test]
fn a_request_encoded_for_another_network_is_an_error() {
    let echo = PackedEcho {
        encoder: EncoderConfig { history: 2 },
        policy: Vec::new(),
        value: Vec::new(),
    };
    let counters = Counters::default();
    let resign = Calibrator::new(ResignCalibration::new(&SelfplayConfig::default()));
    let cache = Mutex::new(EvalCache::new(0));
    let (swap, abort) = (AtomicBool::new(false), AtomicBool::new(false));
    let (to_server, server_rx) = mpsc::channel();
    let (_models_tx, models_rx) = mpsc::channel();
    let (tx, rx) = mpsc::channel();
    let pos = Position::startpos();
    let encoder = EncoderConfig { history: 1 };
    let mut packed = vec![PackedPlane::ZERO; encoder.planes()];
    encode_packed_into(std::slice::from_ref(&pos), &encoder, &mut packed).unwrap();
    let request = Request {
        leaves: vec![OwnedLeaf {
            history: vec![pos.clone()],
            moves: pos.legal_moves().to_vec(),
        }],
        n: 1,
        encoder: Some(encoder),
        packed,
        ..Request::default()
    };
    to_server
        .send(ToServer::Eval { group: 0, request })
        .unwrap();
    let err = serve(
        Box::new(echo),
        server_rx,
        vec![tx],
        models_rx,
        5,
        Duration::from_millis(1),
        ServerShared {
            counters: &counters,
            resign: &resign,
            cache: &cache,
            swap_pending: &swap,
            abort: &abort,
            lead: true,
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("encoded for"), "{err}");
    assert!(matches!(rx.recv(), Ok(ToGroup::Failed)));
}
