//! Group round robins feeding a final (11.3).

mod common;

use common::{config, play_out};
use xq_rating::GameResult::{self, Loss, Win};
use xq_rating::tournament::{Format, Tournament};

fn lower_wins(red: usize, black: usize) -> GameResult {
    if red < black { Win } else { Loss }
}

fn groups(groups: u32, qualifiers: u32) -> Format {
    Format::Groups {
        groups,
        qualifiers,
        cycles: 1,
        final_cycles: 1,
    }
}

/// Eight seeds in two groups by serpentine: group 1 = seeds 1, 4, 5, 8 and
/// group 2 = seeds 2, 3, 6, 7 (ids 0, 3, 4, 7 and 1, 2, 5, 6). The top two
/// of each group play a four-player final, group winners numbered first.
#[test]
fn seeds_are_spread_and_the_top_of_each_group_plays_the_final() {
    let mut t = Tournament::new(config(groups(2, 2), 8, 0)).unwrap();
    let rounds = play_out(&mut t, lower_wins);
    assert_eq!(rounds, 3 + 3);
    let summary = t.groups().unwrap();
    assert_eq!(summary.members, [vec![0, 3, 4, 7], vec![1, 2, 5, 6]]);
    // No game crosses the groups before the final.
    for g in t.games().iter().filter(|g| g.pairing.round <= 3) {
        let group = |p| summary.members[0].contains(&p);
        assert_eq!(group(g.pairing.red), group(g.pairing.black));
    }
    let finalists: Vec<usize> = summary
        .final_standings
        .as_ref()
        .unwrap()
        .rows
        .iter()
        .map(|r| r.player)
        .collect();
    assert_eq!(finalists, [0, 1, 2, 3]);
    // The final's Berger number 1 is group 1's winner (p0), 2 group 2's (p1).
    let first_final_round: Vec<(usize, usize)> = t
        .games()
        .iter()
        .filter(|g| g.pairing.round == 4)
        .map(|g| (g.pairing.red, g.pairing.black))
        .collect();
    assert_eq!(first_final_round, [(0, 2), (1, 3)]);
    // Overall: the final, then third places (shared), then fourth places.
    let overall: Vec<(usize, usize)> = t
        .standings()
        .rows
        .iter()
        .map(|r| (r.player, r.rank))
        .collect();
    assert_eq!(
        overall,
        [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (4, 5),
            (5, 5),
            (7, 7),
            (6, 7)
        ]
    );
    let text = t.crosstable().to_text();
    assert!(text.contains("Group 1") && text.contains("Final"), "{text}");
}

/// Groups of different sizes play their rounds side by side; a group of
/// three has a rest round that scores nothing.
#[test]
fn uneven_groups_rest_and_score_nothing_for_it() {
    let mut t = Tournament::new(config(groups(2, 1), 7, 0)).unwrap();
    play_out(&mut t, lower_wins);
    let s = t.groups().unwrap();
    assert_eq!(s.members, [vec![0, 3, 4], vec![1, 2, 5, 6]]);
    let g1 = &s.groups[0];
    let points: f64 = g1.rows.iter().map(|r| r.points).sum();
    assert_eq!(points, 3.0, "three games, rests worth nothing");
    let finalists: Vec<usize> = s
        .final_standings
        .unwrap()
        .rows
        .iter()
        .map(|r| r.player)
        .collect();
    assert_eq!(finalists, [0, 1]);
}

#[test]
fn impossible_groups_are_errors() {
    for (format, needle) in [
        (groups(1, 1), "at least 2 groups"),
        (groups(4, 1), "cannot fill"),
        (groups(2, 4), "qualifiers must be 1 to 3"),
        (groups(2, 0), "qualifiers must be 1 to 3"),
        (
            Format::Groups {
                groups: 2,
                qualifiers: 1,
                cycles: 3,
                final_cycles: 1,
            },
            "cycles must be 1 or 2",
        ),
    ] {
        let e = Tournament::new(config(format, 7, 0))
            .unwrap_err()
            .to_string();
        assert!(e.contains(needle), "{e}");
    }
}
