//! Helpers shared by the tournament tests.
#![allow(dead_code)]

use xq_rating::GameResult;
use xq_rating::tournament::{Format, Participant, Tournament, TournamentConfig};

pub fn config(format: Format, n: usize, seed: u64) -> TournamentConfig {
    TournamentConfig {
        name: format!("test {n}"),
        format,
        participants: (0..n)
            .map(|i| Participant::new(format!("p{i}"), format!("spec{i}")))
            .collect(),
        seed,
        withdrawals: Vec::new(),
    }
}

/// Plays the tournament to the end, asking `result(red, black)` for every
/// game (from Red's view). Returns the number of rounds played.
pub fn play_out(t: &mut Tournament, mut result: impl FnMut(usize, usize) -> GameResult) -> u32 {
    let mut rounds = 0;
    loop {
        let games = t.next_round().expect("next round");
        if games.is_empty() {
            return rounds;
        }
        rounds += 1;
        for g in games {
            t.record(g.game, result(g.red, g.black)).expect("record");
        }
    }
}
