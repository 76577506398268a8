//! Batch assembly: targets, determinism, mirror augmentation and prefetch/resume.

mod common;

use std::sync::Arc;

use xq_core::{Move, Position, Setup};
use xq_data::{
    Batch, BatchConfig, Chunk, DataCursor, NewRecord, Outcome, PrefetchConfig, Prefetcher, Sample,
    ValueTarget, Window, WindowChunk, assemble, assemble_samples, draw_samples, quantize_policy,
};
use xq_nn::{
    encode::{EncoderConfig, encode_into},
    policy::{POLICY_SIZE, policy_index},
};

fn window(seed: u64, games: usize, plies: usize) -> Window {
    let chunk = Arc::new(common::random_chunk(seed, games, plies));
    Window::from_chunks(vec![WindowChunk {
        name: format!("c{seed}"),
        chunk,
        first: 0,
    }])
}

fn config(mirror: bool) -> BatchConfig {
    BatchConfig {
        batch_size: 32,
        encoder: EncoderConfig::default(),
        mirror,
        seed: 77,
        value: ValueTarget::RESULT,
        leaf_wdl: None,
    }
}

/// The positions of a record's game from its start to the record's ply.
fn replay(window: &Window, index: u64) -> Vec<Position> {
    let (chunk, rec) = window.get(index).unwrap();
    let game = &chunk.games[rec.game as usize];
    let mut out = vec![game.start.clone()];
    for &m in &game.moves[..usize::from(rec.ply)] {
        let mut p = out.last().unwrap().clone();
        p.play_unchecked(m);
        out.push(p);
    }
    out
}

fn mirror_position(pos: &Position) -> Position {
    let s = pos.to_setup();
    let mut m = Setup {
        board: [None; 90],
        ..s.clone()
    };
    for sq in 0..90u32 {
        let sq = xq_core::Square::new(sq);
        m.board[sq.mirror().index()] = s.board[sq.index()];
    }
    Position::from_setup(m).unwrap()
}

fn row<T: Copy>(a: &ndarray::Array2<T>, i: usize) -> Vec<T> {
    a.row(i).to_vec()
}

#[test]
fn unmirrored_sample_carries_the_record_targets() {
    let w = window(1, 8, 30);
    let enc = EncoderConfig::default();
    let samples: Vec<Sample> = (0..w.len())
        .step_by(7)
        .map(|index| Sample {
            index,
            mirrored: false,
        })
        .collect();
    let mut batch = Batch::new(1, &enc);
    assemble_samples(&w, &enc, &samples, &mut batch).unwrap();
    assert_eq!(batch.len(), samples.len());
    for (i, s) in samples.iter().enumerate() {
        let (chunk, rec) = w.get(s.index).unwrap();
        let history = replay(&w, s.index);
        let pos = history.last().unwrap();
        let mut planes = vec![0.0; enc.input_len()];
        encode_into(&history, &enc, &mut planes).unwrap();
        assert_eq!(
            batch
                .inputs
                .index_axis(ndarray::Axis(0), i)
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            planes
        );
        // Policy: normalized shares on the record's moves, zero elsewhere.
        let entries = chunk.policy_of(rec);
        let total: f32 = entries.iter().map(|e| f32::from(e.weight)).sum();
        let mut want = vec![0.0f32; POLICY_SIZE];
        for e in entries {
            want[policy_index(e.mv, pos.turn()).unwrap()] = f32::from(e.weight) / total;
        }
        assert_eq!(row(&batch.policy, i), want);
        let sum: f32 = want.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5);
        // Mask: exactly the legal moves.
        let mut mask = vec![0u8; POLICY_SIZE];
        for m in pos.legal_moves() {
            mask[policy_index(m, pos.turn()).unwrap()] = 1;
        }
        assert_eq!(row(&batch.legal, i), mask);
        assert_eq!(row(&batch.value, i), common::one_hot(rec.result).to_vec());
        assert_eq!(
            batch.has_value[i],
            if rec.result.is_some() { 1.0 } else { 0.0 }
        );
        assert_eq!(batch.weight[i], rec.weight);
        assert_eq!(batch.plies_left[i], f32::from(rec.plies_left));
        assert_eq!(row(&batch.root_wdl, i), rec.root_wdl.to_vec());
    }
    assert!(batch.has_value.iter().any(|&h| h == 0.0) && batch.has_value.iter().any(|&h| h == 1.0));
}

#[test]
fn mirrored_sample_is_the_encoding_and_targets_of_the_mirrored_position() {
    let w = window(2, 3, 80);
    let enc = EncoderConfig::default();
    let samples: Vec<Sample> = (0..w.len())
        .step_by(5)
        .map(|index| Sample {
            index,
            mirrored: true,
        })
        .collect();
    let mut batch = Batch::new(samples.len(), &enc);
    assemble_samples(&w, &enc, &samples, &mut batch).unwrap();
    for (i, s) in samples.iter().enumerate() {
        let (chunk, rec) = w.get(s.index).unwrap();
        let history: Vec<Position> = replay(&w, s.index).iter().map(mirror_position).collect();
        let pos = history.last().unwrap();
        let mut planes = vec![0.0; enc.input_len()];
        encode_into(&history, &enc, &mut planes).unwrap();
        assert_eq!(
            batch
                .inputs
                .index_axis(ndarray::Axis(0), i)
                .iter()
                .copied()
                .collect::<Vec<_>>(),
            planes
        );
        // The mask is the mirrored position's legal moves ...
        let mut mask = vec![0u8; POLICY_SIZE];
        for m in pos.legal_moves() {
            mask[policy_index(m, pos.turn()).unwrap()] = 1;
        }
        assert_eq!(row(&batch.legal, i), mask);
        // ... and the target sits on the mirrored moves, all of them legal there.
        for e in chunk.policy_of(rec) {
            let mirrored: Move = e.mv.mirror();
            assert!(pos.is_legal(mirrored));
            assert!(batch.policy[[i, policy_index(mirrored, pos.turn()).unwrap()]] > 0.0);
        }
        for k in 0..POLICY_SIZE {
            if batch.policy[[i, k]] > 0.0 {
                assert_eq!(batch.legal[[i, k]], 1, "target on an illegal move");
            }
        }
    }
}

#[test]
fn same_seed_and_step_give_the_same_batch_whatever_the_thread_count() {
    let w = window(3, 4, 60);
    let cfg = config(true);
    let mut a = Batch::new(cfg.batch_size, &cfg.encoder);
    assemble(&w, &cfg, 5, &mut a).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut b = Batch::new(3, &cfg.encoder); // different size: reallocated to fit
    pool.install(|| assemble(&w, &cfg, 5, &mut b)).unwrap();
    assert_eq!(a.samples, b.samples);
    assert_eq!(a.inputs, b.inputs);
    assert_eq!(a.policy, b.policy);
    assert_eq!(a.legal, b.legal);
    assert_eq!(a.value, b.value);
    assert_eq!(a.weight, b.weight);
    // Another step, or another seed, draws other samples.
    let mut c = Batch::new(cfg.batch_size, &cfg.encoder);
    assemble(&w, &cfg, 6, &mut c).unwrap();
    assert_ne!(a.samples, c.samples);
    assemble(&w, &BatchConfig { seed: 78, ..cfg }, 5, &mut c).unwrap();
    assert_ne!(a.samples, c.samples);
}

#[test]
fn sampling_covers_the_window_and_mirrors_about_half() {
    let mut samples = Vec::new();
    let mut seen = [false; 100];
    let mut mirrored = 0;
    for step in 0..50 {
        draw_samples(9, step, 64, true, 100, &mut samples).unwrap();
        for s in &samples {
            seen[s.index as usize] = true;
            mirrored += usize::from(s.mirrored);
        }
    }
    assert!(seen.iter().all(|&s| s));
    let share = mirrored as f64 / (50.0 * 64.0);
    assert!((0.45..0.55).contains(&share), "{share}");
    draw_samples(9, 0, 64, false, 100, &mut samples).unwrap();
    assert!(samples.iter().all(|s| !s.mirrored));
    assert!(draw_samples(9, 0, 64, true, 0, &mut samples).is_err());
}

#[test]
fn prefetched_batches_equal_direct_assembly_and_resume_continues_exactly() {
    let w = Arc::new(window(4, 3, 50));
    let cfg = config(true);
    let prefetch = PrefetchConfig {
        depth: 2,
        threads: 1,
    };
    let cursor = DataCursor::start(cfg.seed, &w);
    let mut p = Prefetcher::new(Arc::clone(&w), cfg, cursor, prefetch).unwrap();
    let mut uninterrupted = Vec::new();
    for _ in 0..5 {
        let b = p.next_batch().unwrap();
        uninterrupted.push((
            b.step,
            b.samples.clone(),
            b.inputs.clone(),
            b.policy.clone(),
        ));
        p.recycle(b);
    }
    drop(p);
    for (step, samples, inputs, policy) in &uninterrupted {
        let mut direct = Batch::new(cfg.batch_size, &cfg.encoder);
        assemble(&w, &cfg, *step, &mut direct).unwrap();
        assert_eq!(&direct.samples, samples);
        assert_eq!(&direct.inputs, inputs);
        assert_eq!(&direct.policy, policy);
    }
    // Stop after 2 batches, save the cursor, resume: batches 2, 3, 4 again.
    let mut p = Prefetcher::new(Arc::clone(&w), cfg, cursor, prefetch).unwrap();
    for _ in 0..2 {
        p.next_batch().unwrap();
    }
    let saved = p.cursor();
    assert_eq!(saved.step, 2);
    assert_eq!(saved.samples, 2 * cfg.batch_size as u64);
    assert!(saved.matches(&w));
    drop(p);
    let json = serde_json::to_string(&saved).unwrap();
    let restored: DataCursor = serde_json::from_str(&json).unwrap();
    let mut resumed = Prefetcher::new(Arc::clone(&w), cfg, restored, prefetch).unwrap();
    for (step, samples, inputs, _) in &uninterrupted[2..] {
        let b = resumed.next_batch().unwrap();
        assert_eq!(b.step, *step);
        assert_eq!(&b.samples, samples);
        assert_eq!(&b.inputs, inputs);
    }
    let _ = resumed.wait_time();
}

#[test]
fn prefetcher_refuses_an_empty_window() {
    let w = Arc::new(Window::default());
    let cfg = config(false);
    let cursor = DataCursor::start(cfg.seed, &w);
    assert!(Prefetcher::new(w, cfg, cursor, PrefetchConfig::default()).is_err());
}

/// Repetitions are counted over the whole game since the last capture, not only over
/// the encoder's last `history` positions: the start position recurs at plies 0, 4, 8
/// and 12, and at ply 12 the plies-0 and -4 occurrences are outside an 8-step history.
#[test]
fn repetitions_before_the_history_window_still_count() {
    let shuffle = ["h0g2", "h9g7", "g2h0", "g7h9"];
    let moves: Vec<Move> = shuffle
        .iter()
        .cycle()
        .take(13)
        .map(|m| Move::from_iccs(m).unwrap())
        .collect();
    let mut chunk = xq_data::Chunk::new(common::meta(0));
    xq_data::supervised::add_game(&mut chunk, &Position::startpos(), &moves, None).unwrap();
    let w = Window::from_chunks(vec![WindowChunk {
        name: "rep".into(),
        chunk: Arc::new(chunk),
        first: 0,
    }]);
    let enc = EncoderConfig::default();
    let mut batch = Batch::new(1, &enc);
    let at = |batch: &Batch, ch: usize| batch.inputs[[0, ch, 0, 0]];
    assemble_samples(
        &w,
        &enc,
        &[Sample {
            index: 12,
            mirrored: false,
        }],
        &mut batch,
    )
    .unwrap();
    // Two or more earlier occurrences: the repetition plane of the current step is 1.
    assert_eq!(at(&batch, enc.repetition_plane(0)), 1.0);
    assemble_samples(
        &w,
        &enc,
        &[Sample {
            index: 4,
            mirrored: false,
        }],
        &mut batch,
    )
    .unwrap();
    assert_eq!(at(&batch, enc.repetition_plane(0)), 0.5);
    assemble_samples(
        &w,
        &enc,
        &[Sample {
            index: 3,
            mirrored: false,
        }],
        &mut batch,
    )
    .unwrap();
    assert_eq!(at(&batch, enc.repetition_plane(0)), 0.0);
}

#[test]
fn assemble_range_walks_the_window_in_order_without_mirroring() {
    let w = window(5, 2, 20);
    let enc = EncoderConfig::default();
    let mut batch = Batch::new(8, &enc);
    let mut expect = Batch::new(8, &enc);
    let mut start = 0;
    while start < w.len() {
        let end = (start + 8).min(w.len());
        xq_data::assemble_range(&w, &enc, start..end, &mut batch).unwrap();
        let samples: Vec<Sample> = (start..end)
            .map(|index| Sample {
                index,
                mirrored: false,
            })
            .collect();
        assemble_samples(&w, &enc, &samples, &mut expect).unwrap();
        assert_eq!(batch.samples, samples);
        assert_eq!(batch.inputs, expect.inputs);
        assert_eq!(batch.policy, expect.policy);
        start = end;
    }
    assert!(xq_data::assemble_range(&w, &enc, 0..w.len() + 1, &mut batch).is_err());
}

#[test]
fn q_ratio_mixes_the_search_value_into_results_but_not_into_records_without_a_search() {
    let mut chunk = common::random_chunk(9, 6, 40);
    // Every other record stands for supervised data: no search, root value all zeros.
    for r in chunk.records.iter_mut().step_by(2) {
        r.root_wdl = [0.0; 3];
    }
    let w = Window::from_chunks(vec![WindowChunk {
        name: "mixed".into(),
        chunk: Arc::new(chunk),
        first: 0,
    }]);
    let plain = config(false);
    let mixed = BatchConfig {
        value: ValueTarget {
            q_ratio: 0.25,
            ..ValueTarget::RESULT
        },
        ..plain
    };
    let (mut a, mut b) = (
        Batch::new(plain.batch_size, &plain.encoder),
        Batch::new(plain.batch_size, &plain.encoder),
    );
    assemble(&w, &plain, 2, &mut a).unwrap();
    assemble(&w, &mixed, 2, &mut b).unwrap();
    assert_eq!(a.samples, b.samples);
    let (mut mixed_rows, mut kept_rows) = (0, 0);
    for i in 0..a.len() {
        let (z, root, got) = (row(&a.value, i), row(&a.root_wdl, i), row(&b.value, i));
        let searched = root.iter().sum::<f32>() > 0.5;
        if a.has_value[i] > 0.0 && searched {
            for k in 0..3 {
                assert!((got[k] - (0.75 * z[k] + 0.25 * root[k])).abs() < 1e-6);
            }
            mixed_rows += 1;
        } else {
            assert_eq!(
                got, z,
                "sample {i}: no result or no search keeps the target"
            );
            kept_rows += 1;
        }
    }
    assert!(
        mixed_rows > 0 && kept_rows > 0,
        "{mixed_rows} mixed, {kept_rows} kept"
    );
}

/// One game of four plies won by Red, with searched records at plies 0, 1 and 3 (none
/// at ply 2, as a cheap search records nothing), each with its own root value.
fn short_term_window() -> Window {
    let mut chunk = Chunk::new(common::meta(5));
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(5);
    let moves = common::random_game(&mut rng, 4);
    assert_eq!(moves.len(), 4);
    let start = Position::startpos();
    let g = chunk.add_game(start.clone(), moves.clone()).unwrap();
    let roots = [[0.5, 0.3, 0.2], [0.1, 0.2, 0.7], [0.6, 0.4, 0.0]];
    for (&ply, root) in [0u16, 1, 3].iter().zip(roots) {
        let mut pos = start.clone();
        for &m in &moves[..usize::from(ply)] {
            pos.play_unchecked(m);
        }
        let policy = quantize_policy(&[(moves[usize::from(ply)], 1.0)]);
        chunk
            .add_record(
                NewRecord {
                    game: g,
                    ply,
                    result: Some(Outcome::RedWins.for_side(pos.turn())),
                    plies_left: 4 - ply,
                    weight: 1.0,
                    root_wdl: root,
                },
                &policy,
            )
            .unwrap();
    }
    Window::from_chunks(vec![WindowChunk {
        name: "short-term".into(),
        chunk: Arc::new(chunk),
        first: 0,
    }])
}

#[test]
fn the_short_term_value_weighs_later_root_values_by_their_distance_and_the_result_by_the_rest() {
    let w = short_term_window();
    let cfg = BatchConfig {
        value: ValueTarget {
            q_ratio: 1.0,
            horizon: 2.0,
            share: 1.0,
        },
        ..config(false)
    };
    let mut batch = Batch::new(cfg.batch_size, &cfg.encoder);
    assemble(&w, &cfg, 0, &mut batch).unwrap();
    // λ = 1/2 a ply. Ply 0 (Red to move, Red won, z = win): its own root for the one
    // ply to the next record (1/2), ply 1's root turned to Red's side for two plies
    // (1/2 · 3/4), ply 3's turned for one ply (1/8 · 1/2), the result the last 1/16.
    let red = [
        0.5 * 0.5 + 0.375 * 0.7 + 0.0625 * 0.0 + 0.0625,
        0.5 * 0.3 + 0.375 * 0.2 + 0.0625 * 0.4,
        0.5 * 0.2 + 0.375 * 0.1 + 0.0625 * 0.6,
    ];
    // Ply 1 (Black to move, z = loss): its own root for two plies (3/4), ply 3's (the
    // same side) for one (1/4 · 1/2), the loss the last 1/8.
    let black = [
        0.75 * 0.1 + 0.125 * 0.6,
        0.75 * 0.2 + 0.125 * 0.4,
        0.75 * 0.7 + 0.125 * 0.0 + 0.125,
    ];
    // Ply 3 (Black to move): its root for the game's last ply (1/2), the loss the rest.
    let last = [0.5 * 0.6, 0.5 * 0.4, 0.5 * 0.0 + 0.5];
    let mut seen = [false; 3];
    for i in 0..batch.len() {
        let index = batch.samples[i].index as usize;
        let want = [red, black, last][index];
        let got = row(&batch.value, i);
        for k in 0..3 {
            assert!(
                (got[k] - want[k]).abs() < 1e-5,
                "record {index}: {got:?} against {want:?}"
            );
        }
        assert!((got.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        seen[index] = true;
    }
    assert_eq!(seen, [true; 3], "the batch drew every record");
}

#[test]
fn a_horizon_of_one_ply_mixes_the_records_own_root_value_as_q_ratio_alone_does() {
    let w = short_term_window();
    let own = BatchConfig {
        value: ValueTarget {
            q_ratio: 0.5,
            ..ValueTarget::RESULT
        },
        ..config(false)
    };
    let one_ply = BatchConfig {
        value: ValueTarget {
            horizon: 1.0,
            ..own.value
        },
        ..own
    };
    let (mut a, mut b) = (
        Batch::new(own.batch_size, &own.encoder),
        Batch::new(own.batch_size, &own.encoder),
    );
    assemble(&w, &own, 3, &mut a).unwrap();
    assemble(&w, &one_ply, 3, &mut b).unwrap();
    assert_eq!(a.value, b.value);
}

#[test]
fn a_value_share_keeps_the_same_positions_valued_in_every_batch_and_every_record_without_a_search()
{
    let mut chunk = common::random_chunk(11, 12, 60);
    for r in chunk.records.iter_mut().step_by(3) {
        r.root_wdl = [0.0; 3];
    }
    let w = Window::from_chunks(vec![WindowChunk {
        name: "share".into(),
        chunk: Arc::new(chunk),
        first: 0,
    }]);
    let cfg = BatchConfig {
        value: ValueTarget {
            share: 0.25,
            ..ValueTarget::RESULT
        },
        ..config(true)
    };
    let mut valued = std::collections::HashMap::new();
    let mut batch = Batch::new(cfg.batch_size, &cfg.encoder);
    for step in 0..40 {
        assemble(&w, &cfg, step, &mut batch).unwrap();
        for i in 0..batch.len() {
            let index = batch.samples[i].index;
            let (_, rec) = w.get(index).unwrap();
            let has = batch.has_value[i] > 0.0;
            if rec.result.is_none() {
                assert!(!has);
                continue;
            }
            if rec.root_wdl.iter().sum::<f32>() < 0.5 {
                assert!(has, "record {index} has no search and keeps its result");
                continue;
            }
            let before = valued.insert(index, has);
            assert!(before.is_none_or(|b| b == has), "record {index} changed");
        }
    }
    let kept = valued.values().filter(|&&h| h).count() as f64 / valued.len() as f64;
    assert!(
        (0.1..0.4).contains(&kept),
        "{kept:.3} of {} searched records keep a value",
        valued.len()
    );
}

/// A stand-in for the quiescence value: a function of the position alone, so a row
/// can be checked against its record's replayed position.
fn material_wdl(pos: &Position) -> [f32; 3] {
    let n = pos.occupied().count() as f32 / 32.0;
    [n, 1.0 - n, 0.0]
}

#[test]
fn leaf_wdl_is_the_function_of_each_samples_position_and_empty_without_one() {
    let w = window(3, 8, 40);
    let plain = config(true);
    let mut batch = Batch::new(plain.batch_size, &plain.encoder);
    assemble(&w, &plain, 1, &mut batch).unwrap();
    assert_eq!(batch.leaf_wdl.nrows(), 0, "no function, no rows");

    let with_leaf = BatchConfig {
        leaf_wdl: Some(material_wdl),
        ..plain
    };
    let mut leafy = Batch::new(plain.batch_size, &plain.encoder);
    assemble(&w, &with_leaf, 1, &mut leafy).unwrap();
    assert_eq!(leafy.samples, batch.samples);
    assert_eq!(leafy.value, batch.value, "the targets are unchanged");
    assert_eq!(leafy.leaf_wdl.nrows(), leafy.len());
    let mut distinct = std::collections::HashSet::new();
    for (i, s) in leafy.samples.iter().enumerate() {
        let pos = replay(&w, s.index).pop().unwrap();
        assert_eq!(
            row(&leafy.leaf_wdl, i),
            material_wdl(&pos).to_vec(),
            "sample {i}"
        );
        distinct.insert(pos.occupied().count());
    }
    assert!(
        distinct.len() > 1,
        "the batch covers positions with different material"
    );
}
