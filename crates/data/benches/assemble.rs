//! Batch assembly throughput (samples/s), single-threaded and on all cores, with the
//! default 8-step history. Run: `cargo bench -p xq-data --bench assemble`.
//!
//! The window is made of seeded random games of up to 200 plies, so each sample
//! replays ~100 plies on average, about what self-play games cost.

use std::{sync::Arc, time::Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::{Move, Position};
use xq_data::{
    Batch, BatchConfig, Chunk, ChunkMeta, DataCursor, PrefetchConfig, Prefetcher, Window,
    WindowChunk, assemble, supervised::add_game,
};
use xq_nn::encode::EncoderConfig;

fn random_games(seed: u64, n: usize, max_plies: usize) -> Chunk {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let meta = ChunkMeta {
        encoding_version: 1,
        policy_index_version: 1,
        creator: "bench".into(),
        seed,
    };
    let mut chunk = Chunk::new(meta);
    for _ in 0..n {
        let mut pos = Position::startpos();
        let mut moves: Vec<Move> = Vec::new();
        while moves.len() < max_plies {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[rng.random_range(0..legal.len())];
            pos.play_unchecked(m);
            moves.push(m);
        }
        add_game(
            &mut chunk,
            &Position::startpos(),
            &moves,
            Some(xq_data::Outcome::Draw),
        )
        .unwrap();
    }
    chunk
}

fn main() {
    let t = Instant::now();
    let chunk = Arc::new(random_games(1, 200, 200));
    println!(
        "built {} records in {:.2?}",
        chunk.records.len(),
        t.elapsed()
    );
    let window = Arc::new(Window::from_chunks(vec![WindowChunk {
        name: "bench".into(),
        chunk,
        first: 0,
    }]));
    for batch_size in [256usize, 1024] {
        let cfg = BatchConfig {
            batch_size,
            encoder: EncoderConfig::default(),
            mirror: true,
            seed: 1,
            value: xq_data::ValueTarget::RESULT,
            leaf_wdl: None,
        };
        let mut batch = Batch::new(batch_size, &cfg.encoder);
        for threads in [1usize, 0] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let steps = 20u64;
            pool.install(|| assemble(&window, &cfg, 0, &mut batch))
                .unwrap(); // warm-up
            let t = Instant::now();
            for step in 0..steps {
                pool.install(|| assemble(&window, &cfg, step, &mut batch))
                    .unwrap();
            }
            let secs = t.elapsed().as_secs_f64();
            let label = if threads == 0 {
                "all cores".to_string()
            } else {
                format!("{threads} thread")
            };
            println!(
                "assemble batch {batch_size:5} ({label:9}): {:8.0} samples/s, {:6.2} ms/batch",
                (steps as f64 * batch_size as f64) / secs,
                secs * 1000.0 / steps as f64
            );
        }
    }
    // Prefetcher: a consumer that takes batches as fast as it can.
    let cfg = BatchConfig {
        batch_size: 256,
        encoder: EncoderConfig::default(),
        mirror: true,
        seed: 1,
        value: xq_data::ValueTarget::RESULT,
        leaf_wdl: None,
    };
    let mut p = Prefetcher::new(
        Arc::clone(&window),
        cfg,
        DataCursor::start(1, &window),
        PrefetchConfig::default(),
    )
    .unwrap();
    let t = Instant::now();
    for _ in 0..40 {
        let b = p.next_batch().unwrap();
        p.recycle(b);
    }
    println!(
        "prefetcher batch 256: {:.0} samples/s with an idle consumer (waited {:.2?} of {:.2?})",
        40.0 * 256.0 / t.elapsed().as_secs_f64(),
        p.wait_time(),
        t.elapsed()
    );

    drop(p);
    // A consumer that works 5 ms per batch of 256 (a ~51k samples/s trainer, far faster
    // than a CPU trainer): the share of its time spent waiting for data.
    let mut p = Prefetcher::new(
        Arc::clone(&window),
        cfg,
        DataCursor::start(1, &window),
        PrefetchConfig::default(),
    )
    .unwrap();
    let first = p.next_batch().unwrap(); // the pipeline's start-up is not steady state
    p.recycle(first);
    let (t, waited0) = (Instant::now(), p.wait_time());
    for _ in 0..100 {
        let b = p.next_batch().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        p.recycle(b);
    }
    println!(
        "prefetcher batch 256, 5 ms/step consumer: waited {:.1}% of {:.2?} (start-up wait {:.2?})",
        100.0 * (p.wait_time() - waited0).as_secs_f64() / t.elapsed().as_secs_f64(),
        t.elapsed(),
        waited0
    );
}
