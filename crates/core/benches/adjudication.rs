//! What the horizon of the 棋例's searches costs (`GameConfig::horizon`: the most
//! consecutive checks of a mate threat, 28.2, and before the capture of a chase, 29.1).
//!
//! Replays the 1,391 master games of `tests/data/hu_ronghua_1391_iccs.pgn` under the
//! CXA settings (a repetition judged at its third occurrence) and under the search's
//! (every repetition judged at its second, as MCTS does inside its tree, so about twice
//! the judgements), once for each horizon, and prints the median time of each replay,
//! its ratio to the shipped horizon measured in the same run, the slowest single game
//! (what one judgement can cost a search), and how many games end differently from the
//! shipped horizon. The horizon `0/0` (no mate threat, no chase
//! through checks) is the floor: the replay's move generation and the direct chases.
//! `docs/RULES.md` quotes the figures.

use std::{hint::black_box, path::Path, time::Instant};

use xq_core::{
    Game, GameConfig, Move, Position,
    game::{Ending, cycle::Horizon},
};

const HORIZONS: &[(u32, u32)] = &[
    (0, 0),
    (1, 1),
    (3, 2),
    (4, 2),
    (3, 3),
    (4, 3),
    (5, 3),
    (4, 4),
    (5, 4),
    (6, 5),
];

fn repeats() -> usize {
    std::env::var("XQZ_BENCH_REPEATS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(3)
}

/// The games' moves: a game starts at each `[Event` header; movetext tokens that are
/// ICCS moves are its moves (move numbers and results are skipped).
fn master_games() -> Vec<Vec<Move>> {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/hu_ronghua_1391_iccs.pgn"
    ));
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut games: Vec<Vec<Move>> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("[Event ") {
            games.push(Vec::new());
        } else if !line.starts_with('[') {
            let game = games.last_mut().expect("movetext after a header");
            game.extend(
                line.split_whitespace()
                    .filter_map(|t| t.parse::<Move>().ok()),
            );
        }
    }
    games
}

/// Plays every game to its end or its first ending; returns each game's first ending
/// and the seconds of the slowest game.
fn replay(games: &[Vec<Move>], config: GameConfig) -> (Vec<Option<Ending>>, f64) {
    let mut slowest: f64 = 0.0;
    let endings = games
        .iter()
        .map(|moves| {
            let start = Instant::now();
            let mut game = Game::with_config(Position::startpos(), config);
            for &m in moves {
                game.play(m).expect("master games are legal");
                if game.first_ending().is_some() {
                    break;
                }
            }
            slowest = slowest.max(start.elapsed().as_secs_f64());
            game.first_ending()
        })
        .collect();
    (endings, slowest)
}

fn main() {
    // `cargo test --benches` runs this binary with `--bench` absent; keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    let mut games = master_games();
    assert_eq!(games.len(), 1391, "the master file holds 1,391 games");
    if quick {
        games.truncate(50);
    }
    let n = if quick { 1 } else { repeats() };
    for (name, base) in [("CXA", GameConfig::CXA), ("search", GameConfig::SEARCH)] {
        println!("{name}: {} games, median of {n} replays", games.len());
        let (shipped, _) = replay(&games, base);
        let mut reference = None;
        let mut rows = Vec::new();
        for &(mate_checks, chase_checks) in HORIZONS {
            let config = GameConfig {
                horizon: Horizon {
                    mate_checks,
                    chase_checks,
                },
                ..base
            };
            let mut secs = Vec::with_capacity(n);
            let mut endings = Vec::new();
            let mut slowest = f64::INFINITY;
            for _ in 0..n {
                let start = Instant::now();
                let (e, s) = black_box(replay(&games, config));
                secs.push(start.elapsed().as_secs_f64());
                (endings, slowest) = (e, slowest.min(s));
            }
            secs.sort_by(f64::total_cmp);
            let median = secs[secs.len() / 2];
            let changed = endings.iter().zip(&shipped).filter(|(a, b)| a != b).count();
            if config.horizon == Horizon::DEFAULT {
                reference = Some(median);
            }
            rows.push((mate_checks, chase_checks, median, slowest, changed));
        }
        let reference = reference.expect("the shipped horizon is among those measured");
        for (m, c, median, slowest, changed) in rows {
            println!(
                "  horizon {m}/{c}: {median:>8.3} s  {:>6.2}x the shipped {}/{}  \
                 slowest game {:>8.1} ms  {changed} games end differently",
                median / reference,
                Horizon::DEFAULT.mate_checks,
                Horizon::DEFAULT.chase_checks,
                slowest * 1e3,
            );
        }
    }
}
