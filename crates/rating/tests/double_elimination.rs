//! Double elimination (11.1): out after two lost mini-matches.

mod common;

use std::collections::HashMap;

use common::{config, play_out};
use rand::{Rng, SeedableRng};
use xq_rating::GameResult::{self, Draw, Loss, Win};
use xq_rating::tournament::{Bracket, Format, KnockoutTiebreak, Tournament};

fn double() -> Format {
    Format::DoubleElimination {
        tiebreak: KnockoutTiebreak::default(),
    }
}

fn lower_wins(red: usize, black: usize) -> GameResult {
    if red < black { Win } else { Loss }
}

/// Mini-matches lost by each player.
fn defeats(t: &Tournament) -> HashMap<usize, usize> {
    let mut d = HashMap::new();
    for m in t.knockout_matches() {
        if let Some(l) = m.loser() {
            *d.entry(l).or_insert(0) += 1;
        }
    }
    d
}

/// For every field size, with random results: everyone but the champion is
/// out after exactly two defeats, and the champion lost at most once.
#[test]
fn nobody_is_out_before_two_defeats() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    for n in 2..=11 {
        for seed in 0..4 {
            let mut t = Tournament::new(config(double(), n, seed)).unwrap();
            play_out(&mut t, |_, _| [Win, Draw, Loss][rng.random_range(0..3)]);
            assert!(t.is_finished());
            let s = t.standings();
            let champion = s.rows[0].player;
            assert_eq!(s.rows[0].rank, 1);
            let d = defeats(&t);
            for p in 0..n {
                let lost = d.get(&p).copied().unwrap_or(0);
                if p == champion {
                    assert!(lost <= 1, "n={n} seed={seed}: champion lost {lost}");
                } else {
                    assert_eq!(lost, 2, "n={n} seed={seed}: p{p} lost {lost}");
                }
            }
        }
    }
}

/// Four players, the lower id always wins: the winners' bracket gives 0 and
/// 1, the losers' bracket 2 over 3, then 1 over 2; 0 beats 1 in the final
/// and no second final is needed. Places follow the round of the second
/// defeat.
#[test]
fn four_players_rank_by_the_round_of_the_second_defeat() {
    let mut t = Tournament::new(config(double(), 4, 0)).unwrap();
    play_out(&mut t, lower_wins);
    let s = t.standings();
    let rows: Vec<(usize, usize, f64)> = s
        .rows
        .iter()
        .map(|r| (r.player, r.rank, r.tiebreaks[0]))
        .collect();
    assert_eq!(rows, [(0, 1, 4.0), (1, 2, 3.0), (2, 3, 2.0), (3, 4, 1.0)]);
    assert!(
        t.knockout_matches()
            .iter()
            .all(|m| m.bracket != Bracket::FinalReset)
    );
}

/// Standings taken during the event list the players still in it above
/// those already out.
#[test]
fn mid_event_standings_put_the_players_still_in_first() {
    let mut t = Tournament::new(config(double(), 4, 0)).unwrap();
    // Winners' round 1 and losers' round 1 (3 is out after losing to 2).
    for _ in 0..2 {
        for g in t.next_round().unwrap() {
            t.record(g.game, lower_wins(g.red, g.black)).unwrap();
        }
    }
    let rows: Vec<(usize, usize)> = t
        .standings()
        .rows
        .iter()
        .map(|r| (r.player, r.rank))
        .collect();
    assert_eq!(rows, [(0, 1), (1, 1), (2, 1), (3, 4)]);
}

/// When the losers'-bracket winner wins the final, both finalists have lost
/// once, so the final is played again.
#[test]
fn the_final_is_replayed_when_the_unbeaten_finalist_loses_it() {
    let mut t = Tournament::new(config(double(), 4, 0)).unwrap();
    // p0 and p1 meet in the winners' final (games 1-2, p0 wins), the final
    // (games 3-4, p1 wins) and the second final (games 5-6, p0 wins);
    // otherwise the lower id wins.
    let mut meetings = 0;
    play_out(&mut t, |r, b| {
        if (r.min(b), r.max(b)) == (0, 1) {
            meetings += 1;
            let p1_wins = (3..=4).contains(&meetings);
            if p1_wins == (r == 1) { Win } else { Loss }
        } else {
            lower_wins(r, b)
        }
    });
    let brackets: Vec<(Bracket, usize, Option<usize>)> = t
        .knockout_matches()
        .iter()
        .filter(|m| matches!(m.bracket, Bracket::Final | Bracket::FinalReset))
        .map(|m| (m.bracket, m.top, m.winner))
        .collect();
    assert_eq!(
        brackets,
        [
            (Bracket::Final, 0, Some(1)),
            (Bracket::FinalReset, 1, Some(0))
        ]
    );
    assert_eq!(t.standings().rows[0].player, 0);
    assert_eq!(defeats(&t)[&1], 2);
}
