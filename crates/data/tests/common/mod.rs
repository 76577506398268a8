//! Test data: seeded random games and chunks built from them.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::{Move, Position};
use xq_data::{Chunk, ChunkMeta, NewRecord, Outcome, PolicyEntry, Wdl, quantize_policy};

pub fn meta(seed: u64) -> ChunkMeta {
    ChunkMeta {
        encoding_version: xq_nn::encode::ENCODING_VERSION,
        policy_index_version: xq_nn::policy::POLICY_INDEX_VERSION,
        creator: format!("xq-data tests seed={seed}"),
        seed,
    }
}

/// A random legal game of at most `max_plies` plies from the start position.
pub fn random_game(rng: &mut ChaCha8Rng, max_plies: usize) -> Vec<Move> {
    let mut pos = Position::startpos();
    let mut moves = Vec::new();
    while moves.len() < max_plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = legal[rng.random_range(0..legal.len())];
        pos.play_unchecked(m);
        moves.push(m);
    }
    moves
}

/// A chunk of `games` random games with a record at every ply: a random visit
/// distribution over some legal moves, a random root value, the game's (random)
/// result and weight.
pub fn random_chunk(seed: u64, games: usize, max_plies: usize) -> Chunk {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut chunk = Chunk::new(meta(seed));
    for _ in 0..games {
        let moves = random_game(&mut rng, max_plies);
        let outcome = match rng.random_range(0..4) {
            0 => Some(Outcome::RedWins),
            1 => Some(Outcome::Draw),
            2 => Some(Outcome::BlackWins),
            _ => None,
        };
        let start = Position::startpos();
        let g = chunk.add_game(start.clone(), moves.clone()).unwrap();
        let mut pos = start;
        for (ply, &played) in moves.iter().enumerate() {
            let legal = pos.legal_moves();
            let mut visits: Vec<(Move, f32)> = Vec::new();
            for &m in &legal {
                if m == played || rng.random_bool(0.3) {
                    visits.push((m, rng.random_range(0..800) as f32));
                }
            }
            if visits.iter().all(|&(_, v)| v == 0.0) {
                visits[0].1 = 1.0;
            }
            let policy: Vec<PolicyEntry> = quantize_policy(&visits);
            let w: f32 = rng.random();
            let d: f32 = rng.random::<f32>() * (1.0 - w);
            chunk
                .add_record(
                    NewRecord {
                        game: g,
                        ply: ply as u16,
                        result: outcome.map(|o| o.for_side(pos.turn())),
                        plies_left: (moves.len() - ply) as u16,
                        weight: if rng.random_bool(0.25) { 1.0 } else { 0.25 },
                        root_wdl: [w, d, 1.0 - w - d],
                    },
                    &policy,
                )
                .unwrap();
            pos.play_unchecked(played);
        }
    }
    chunk
}

/// Result for the side to move, as a one-hot.
pub fn one_hot(w: Option<Wdl>) -> [f32; 3] {
    w.map_or([0.0; 3], |w| w.one_hot())
}
