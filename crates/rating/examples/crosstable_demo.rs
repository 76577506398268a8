//! Prints the crosstables of a small seeded round robin, Swiss and knockout
//! with simulated results, and a rating ladder fitted to all their games.
//!
//! `cargo run -p xq-eval --example crosstable_demo`

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_rating::stats::{LadderConfig, fit_ladder};
use xq_rating::tournament::{Format, KnockoutTiebreak, Participant, Tournament, TournamentConfig};
use xq_rating::{GameRecord, GameResult};

fn main() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut records = Vec::new();
    for (name, format, n) in [
        ("Round robin", Format::RoundRobin { cycles: 1 }, 5),
        ("Swiss", Format::Swiss { rounds: 4 }, 9),
        (
            "Knockout",
            Format::Knockout {
                tiebreak: KnockoutTiebreak::default(),
            },
            6,
        ),
    ] {
        let config = TournamentConfig {
            name: name.into(),
            format,
            participants: (0..n)
                .map(|i| Participant::new(format!("player{i}"), "random"))
                .collect(),
            seed: 7,
            withdrawals: Vec::new(),
        };
        let mut t = Tournament::new(config).expect("valid config");
        loop {
            let games = t.next_round().expect("pairing");
            if games.is_empty() {
                break;
            }
            for g in games {
                // Lower numbers are stronger.
                let edge = (g.black as f64 - g.red as f64) * 0.05;
                let x: f64 = rng.random();
                let r = if x < 0.35 + edge {
                    GameResult::Win
                } else if x < 0.7 {
                    GameResult::Draw
                } else {
                    GameResult::Loss
                };
                t.record(g.game, r).expect("known game");
                records.push(GameRecord::new(
                    t.participants()[g.red].name.clone(),
                    t.participants()[g.black].name.clone(),
                    r,
                ));
            }
        }
        println!("{}", t.crosstable().to_text());
        println!("{}", t.crosstable().to_csv());
    }
    let ladder =
        fit_ladder(&records, &LadderConfig::default().anchored("player0", 0.0)).expect("rateable");
    println!("{}", ladder.to_text());
}
