//! The chunk format: round trips, and rejection (never a panic) of damaged bytes.

mod common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::{Move, Position};
use xq_data::{
    Chunk, ChunkError, NewRecord, PolicyEntry, RecordError, decode_chunk, encode_chunk,
    format::{HEADER_LEN, parse_header},
    read_chunk, read_chunk_header, write_chunk_atomic,
};

#[test]
fn encode_then_decode_gives_identical_contents() {
    let chunk = common::random_chunk(1, 6, 120);
    assert!(chunk.records.len() > 100, "test chunk too small");
    let bytes = encode_chunk(&chunk).unwrap();
    let back = decode_chunk(&bytes).unwrap();
    assert_eq!(back, chunk);
    let header = parse_header(&bytes).unwrap();
    assert_eq!(header.games, 6);
    assert_eq!(header.records as usize, chunk.records.len());
    assert_eq!(header.seed, 1);
    assert_eq!(header.encoding_version, xq_nn::encode::ENCODING_VERSION);
    assert_eq!(
        header.policy_index_version,
        xq_nn::policy::POLICY_INDEX_VERSION
    );
}

#[test]
fn chunk_from_a_fen_start_round_trips_its_counters() {
    // A mid-game start with a no-capture counter and move number, Black to move.
    let start = Position::from_fen("3akab2/9/4b4/p1p1p1p1p/9/2P6/P3P1P1P/4B4/9/2BAKA3 b - - 17 42")
        .unwrap();
    let mut chunk = Chunk::new(common::meta(9));
    let m = start.legal_moves()[0];
    let g = chunk.add_game(start.clone(), vec![m]).unwrap();
    let rec = NewRecord {
        game: g,
        ply: 1,
        result: None,
        plies_left: 0,
        weight: 0.5,
        root_wdl: [0.0; 3],
    };
    let mut after = start.clone();
    after.play_unchecked(m);
    let reply = after.legal_moves()[0];
    chunk
        .add_record(
            rec,
            &[PolicyEntry {
                mv: reply,
                weight: 7,
            }],
        )
        .unwrap();
    let back = decode_chunk(&encode_chunk(&chunk).unwrap()).unwrap();
    assert_eq!(back, chunk);
    assert_eq!(back.games[0].start.fen(), start.fen());
}

#[test]
fn write_then_read_file_gives_identical_contents_and_leaves_no_tmp() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w0-00000000.xqc");
    let chunk = common::random_chunk(2, 3, 60);
    write_chunk_atomic(&path, &chunk).unwrap();
    assert_eq!(read_chunk(&path).unwrap(), chunk);
    assert_eq!(
        read_chunk_header(&path).unwrap().records as usize,
        chunk.records.len()
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("w0-00000000.xqc")]);
}

#[test]
fn every_single_bit_flip_is_rejected() {
    let chunk = common::random_chunk(3, 1, 12);
    let bytes = encode_chunk(&chunk).unwrap();
    let mut damaged = bytes.clone();
    for i in 0..bytes.len() {
        for bit in 0..8 {
            damaged[i] ^= 1 << bit;
            assert!(
                decode_chunk(&damaged).is_err(),
                "flip of bit {bit} of byte {i} went unnoticed"
            );
            damaged[i] ^= 1 << bit;
        }
    }
}

#[test]
fn every_truncation_and_extension_is_rejected() {
    let chunk = common::random_chunk(4, 2, 30);
    let bytes = encode_chunk(&chunk).unwrap();
    for len in 0..bytes.len() {
        let err = decode_chunk(&bytes[..len]).unwrap_err();
        assert!(
            matches!(err, ChunkError::Truncated { .. }),
            "length {len}: {err}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        decode_chunk(&longer),
        Err(ChunkError::TrailingBytes(1))
    ));
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let valid = encode_chunk(&common::random_chunk(5, 1, 20)).unwrap();
    for round in 0..3000 {
        let bytes: Vec<u8> = match round % 3 {
            // Pure noise.
            0 => (0..rng.random_range(0..200))
                .map(|_| rng.random())
                .collect(),
            // A valid header over a noisy body.
            1 => {
                let mut b = valid.clone();
                for x in &mut b[HEADER_LEN..] {
                    *x = rng.random();
                }
                b
            }
            // Several random byte changes anywhere.
            _ => {
                let mut b = valid.clone();
                for _ in 0..rng.random_range(1..6) {
                    let i = rng.random_range(0..b.len());
                    b[i] = rng.random();
                }
                b
            }
        };
        if bytes != valid {
            assert!(
                decode_chunk(&bytes).is_err(),
                "round {round} decoded damaged bytes"
            );
        }
    }
}

/// Bytes whose checksums are right but whose content is wrong (a writer bug, not
/// transmission damage) are still rejected, by content validation.
#[test]
fn consistent_checksums_do_not_save_invalid_content() {
    let mut chunk = common::random_chunk(6, 1, 10);
    // A policy move that is not legal in the record's position.
    chunk.policy[0].mv = Move::from_iccs("a0a9").unwrap();
    assert!(matches!(
        encode_chunk(&chunk),
        Err(ChunkError::Invalid(RecordError::IllegalPolicyMove { .. }))
    ));
    let mut chunk = common::random_chunk(6, 1, 10);
    chunk.records[3].ply = 200;
    assert!(matches!(
        encode_chunk(&chunk),
        Err(ChunkError::Invalid(RecordError::PlyPastEnd { .. }))
    ));
    let mut chunk = common::random_chunk(6, 1, 10);
    chunk.records[0].weight = f32::NAN;
    assert!(matches!(
        encode_chunk(&chunk),
        Err(ChunkError::Invalid(RecordError::BadWeight { .. }))
    ));
}

#[test]
fn add_record_rejects_an_illegal_or_empty_policy() {
    let mut chunk = Chunk::new(common::meta(7));
    let g = chunk.add_game(Position::startpos(), vec![]).unwrap();
    let rec = NewRecord {
        game: g,
        ply: 0,
        result: None,
        plies_left: 0,
        weight: 1.0,
        root_wdl: [0.0; 3],
    };
    let illegal = PolicyEntry {
        mv: Move::from_iccs("a0a9").unwrap(),
        weight: 1,
    };
    assert!(matches!(
        chunk.add_record(rec, &[illegal]),
        Err(RecordError::IllegalPolicyMove { .. })
    ));
    assert!(matches!(
        chunk.add_record(rec, &[]),
        Err(RecordError::EmptyPolicy { .. })
    ));
    let m = Move::from_iccs("h2e2").unwrap();
    let twice = [
        PolicyEntry { mv: m, weight: 1 },
        PolicyEntry { mv: m, weight: 2 },
    ];
    assert!(matches!(
        chunk.add_record(rec, &twice),
        Err(RecordError::DuplicatePolicyMove { .. })
    ));
    assert!(chunk.records.is_empty() && chunk.policy.is_empty());
}

#[test]
fn add_game_rejects_an_illegal_move() {
    let mut chunk = Chunk::new(common::meta(8));
    let moves = vec![
        Move::from_iccs("h2e2").unwrap(),
        Move::from_iccs("h2e2").unwrap(),
    ];
    let err = chunk.add_game(Position::startpos(), moves).unwrap_err();
    assert!(
        matches!(err, RecordError::IllegalGameMove { ply: 1, .. }),
        "{err}"
    );
}

#[test]
fn quantize_policy_scales_the_largest_entry_to_u16_max() {
    let a = Move::from_iccs("h2e2").unwrap();
    let b = Move::from_iccs("b2e2").unwrap();
    let c = Move::from_iccs("h0g2").unwrap();
    let q = xq_data::quantize_policy(&[(a, 300.0), (b, 100.0), (c, 0.0)]);
    assert_eq!(
        q,
        vec![
            PolicyEntry {
                mv: a,
                weight: 65535
            },
            PolicyEntry {
                mv: b,
                weight: 21845
            }
        ]
    );
    assert!(xq_data::quantize_policy(&[(a, 0.0)]).is_empty());
    assert!(xq_data::quantize_policy(&[(a, f32::NAN)]).is_empty());
}

#[test]
fn add_game_with_targets_fills_results_and_plies_left_and_is_all_or_nothing() {
    use xq_data::{Outcome, PlyTarget, Wdl};
    let moves: Vec<Move> = ["h2e2", "h9g7", "h0g2"]
        .iter()
        .map(|m| Move::from_iccs(m).unwrap())
        .collect();
    let p0 = [PolicyEntry {
        mv: moves[0],
        weight: 9,
    }];
    let p1 = [
        PolicyEntry {
            mv: moves[1],
            weight: 3,
        },
        PolicyEntry {
            mv: Move::from_iccs("b9c7").unwrap(),
            weight: 1,
        },
    ];
    let target = |ply, policy| PlyTarget {
        ply,
        policy,
        root_wdl: [0.2, 0.5, 0.3],
        weight: 1.0,
    };
    let mut chunk = Chunk::new(common::meta(12));
    // Targets out of order are fine.
    let g = chunk
        .add_game_with_targets(
            Position::startpos(),
            moves.clone(),
            Some(Outcome::BlackWins),
            &[target(1, &p1), target(0, &p0)],
        )
        .unwrap();
    assert_eq!(g, 0);
    assert_eq!(chunk.records.len(), 2);
    let by_ply = |ply| chunk.records.iter().find(|r| r.ply == ply).unwrap();
    assert_eq!(by_ply(0).result, Some(Wdl::Loss));
    assert_eq!(by_ply(1).result, Some(Wdl::Win));
    assert_eq!(by_ply(0).plies_left, 3);
    assert_eq!(chunk.policy_of(by_ply(1)), &p1);
    chunk.validate().unwrap();
    // A bad target (ply 2's policy is Black's move, but Red is to move) leaves the chunk as it was.
    let before = chunk.clone();
    let err = chunk
        .add_game_with_targets(
            Position::startpos(),
            moves,
            None,
            &[target(0, &p0), target(2, &p1)],
        )
        .unwrap_err();
    assert!(
        matches!(err, RecordError::IllegalPolicyMove { .. }),
        "{err}"
    );
    assert_eq!(chunk, before);
}
