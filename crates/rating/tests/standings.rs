//! Tie-breaks of 第15条 on crosstables built by hand.

mod common;

use common::{config, play_out};
use xq_rating::GameResult::{self, Draw, Loss, Win};
use xq_rating::tournament::{Format, GameReport, Score, TieBreak, Tournament};

/// Looks up a result by (red, black) in 1-based Berger numbers.
fn by_table(table: &[((usize, usize), GameResult)]) -> impl FnMut(usize, usize) -> GameResult + '_ {
    move |red, black| {
        table
            .iter()
            .find(|((r, b), _)| (*r, *b) == (red + 1, black + 1))
            .unwrap_or_else(|| panic!("no result for {}-{}", red + 1, black + 1))
            .1
    }
}

/// Player numbers (1-based), ranks, points and tie-break values, best first.
fn summary(t: &Tournament) -> Vec<(usize, usize, f64, Vec<f64>)> {
    t.standings()
        .rows
        .iter()
        .map(|s| (s.player + 1, s.rank, s.points, s.tiebreaks.clone()))
        .collect()
}

/// Five players, single round robin (Berger table for 6, number 6 = bye).
/// A bye is a rest round and scores nothing.
///
/// ```text
/// R1 2-5 1-0   3-4 0-1   (1 rests)   Points:
/// R2 5-3 1-0   1-2 1-0   (4 rests)     1: W2 L3 D4 D5 = 2
/// R3 3-1 1-0   4-5 ½-½   (2 rests)     2: W5 L1 W3 D4 = 2.5
/// R4 1-4 ½-½   2-3 1-0   (5 rests)     3: L4 L5 W1 L2 = 1
/// R5 4-2 ½-½   5-1 ½-½   (3 rests)     4: W3 D5 D1 D2 = 2.5
///                                      5: L2 W3 D4 D1 = 2
/// SB: 1 = 2.5 + ½·2.5 + ½·2 = 4.75     2 = 2 + 1 + ½·2.5 = 4.25
///     3 = 2                            4 = 1 + ½(2 + 2 + 2.5) = 4.25
///     5 = 1 + ½(2.5 + 2) = 3.25
/// ```
/// 2 and 4 tie on points and SB; 2 has two wins to 4's one.
/// 1 and 5 tie on points; SB puts 1 ahead.
#[test]
fn round_robin_ties_are_broken_by_sonneborn_berger_then_wins() {
    let table = [
        ((2, 5), Win),
        ((3, 4), Loss),
        ((5, 3), Win),
        ((1, 2), Win),
        ((3, 1), Win),
        ((4, 5), Draw),
        ((1, 4), Draw),
        ((2, 3), Win),
        ((4, 2), Draw),
        ((5, 1), Draw),
    ];
    let mut t = Tournament::new(config(Format::RoundRobin { cycles: 1 }, 5, 0)).unwrap();
    assert_eq!(play_out(&mut t, by_table(&table)), 5);
    let standings = t.standings();
    assert_eq!(
        standings.tiebreaks,
        [
            TieBreak::SonnebornBerger,
            TieBreak::Wins,
            TieBreak::DirectEncounter,
            TieBreak::Fouls
        ]
    );
    let got = summary(&t);
    let order: Vec<usize> = got.iter().map(|r| r.0).collect();
    assert_eq!(order, [2, 4, 1, 5, 3]);
    let ranks: Vec<usize> = got.iter().map(|r| r.1).collect();
    assert_eq!(ranks, [1, 2, 3, 4, 5]);
    let points: Vec<f64> = got.iter().map(|r| r.2).collect();
    assert_eq!(points, [2.5, 2.5, 2.0, 2.0, 1.0]);
    let total: f64 = points.iter().sum();
    assert_eq!(total, 10.0, "ten games, rests score nothing");
    let sb: Vec<f64> = got.iter().map(|r| r.3[0]).collect();
    assert_eq!(sb, [4.25, 4.25, 4.75, 3.25, 2.0]);
    let wins: Vec<f64> = got.iter().map(|r| r.3[1]).collect();
    assert_eq!(wins, [2.0, 1.0, 1.0, 1.0, 1.0]);
    assert!(standings.rows.iter().all(|r| r.byes == 1));
}

/// Four players:
///
/// ```text
/// R1 1-4 1-0   2-3 1-0       Points: 1 = 1.5, 2 = 2.5, 3 = 0.5, 4 = 1.5
/// R2 4-3 1-0   1-2 0-1       SB: 1 = 1.5 + ½·0.5 = 1.75
/// R3 2-4 ½-½   3-1 ½-½           4 = 0.5 + ½·2.5 = 1.75
/// ```
/// 1 and 4 tie on points, SB and wins (one each); 1 beat 4, so direct
/// encounter puts 1 ahead.
#[test]
fn round_robin_direct_encounter_breaks_remaining_tie() {
    let table = [
        ((1, 4), Win),
        ((2, 3), Win),
        ((4, 3), Win),
        ((1, 2), Loss),
        ((2, 4), Draw),
        ((3, 1), Draw),
    ];
    let mut t = Tournament::new(config(Format::RoundRobin { cycles: 1 }, 4, 0)).unwrap();
    play_out(&mut t, by_table(&table));
    let got = summary(&t);
    assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 1, 4, 3]);
    assert_eq!(got.iter().map(|r| r.1).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert_eq!(got[1].3, [1.75, 1.0, 1.0, 0.0]);
    assert_eq!(got[2].3, [1.75, 1.0, 0.0, 0.0]);
}

/// Same table but 1 beats 2 and 3 beats 1; 2 and 4 drew each other:
/// points 1 = 2, 2 = 1.5, 3 = 1, 4 = 1.5; SB 2 = 1 + ½·1.5 = 1.75 and
/// 4 = 1 + ½·1.5 = 1.75; one win each; their game was drawn, so they share
/// second place (名次并列) and 3 is fourth.
#[test]
fn round_robin_complete_tie_shares_the_rank() {
    let table = [
        ((1, 4), Win),
        ((2, 3), Win),
        ((4, 3), Win),
        ((1, 2), Win),
        ((2, 4), Draw),
        ((3, 1), Win),
    ];
    let mut t = Tournament::new(config(Format::RoundRobin { cycles: 1 }, 4, 0)).unwrap();
    play_out(&mut t, by_table(&table));
    let got = summary(&t);
    assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2, 4, 3]);
    assert_eq!(got.iter().map(|r| r.1).collect::<Vec<_>>(), [1, 2, 2, 4]);
    assert_eq!(got[1].3, [1.75, 1.0, 0.5, 0.0]);
    assert_eq!(got[2].3, [1.75, 1.0, 0.5, 0.0]);
}

#[test]
fn double_round_robin_repeats_the_table_with_colours_reversed_after_the_swap() {
    let mut t = Tournament::new(config(Format::RoundRobin { cycles: 2 }, 4, 0)).unwrap();
    let rounds = play_out(&mut t, |_, _| Draw);
    assert_eq!(rounds, 6);
    let round = |r: u32| -> Vec<(usize, usize)> {
        t.games()
            .iter()
            .filter(|g| g.pairing.round == r)
            .map(|g| (g.pairing.red, g.pairing.black))
            .collect()
    };
    let flip = |v: Vec<(usize, usize)>| v.into_iter().map(|(a, b)| (b, a)).collect::<Vec<_>>();
    // First cycle: table rounds 1, 3, 2 (last two swapped); second cycle:
    // table rounds 1, 2, 3 with colours reversed.
    assert_eq!(round(1), [(0, 3), (1, 2)]);
    assert_eq!(round(2), [(1, 3), (2, 0)]);
    assert_eq!(round(3), [(3, 2), (0, 1)]);
    assert_eq!(flip(round(4)), round(1));
    assert_eq!(flip(round(5)), round(3));
    assert_eq!(flip(round(6)), round(2));
    let text = t.crosstable().to_text();
    assert!(text.contains("½½"), "matrix shows both games:\n{text}");
}

#[test]
fn crosstable_formats_agree_with_standings() {
    let table = [
        ((1, 4), Win),
        ((2, 3), Win),
        ((4, 3), Win),
        ((1, 2), Loss),
        ((2, 4), Draw),
        ((3, 1), Draw),
    ];
    let mut t = Tournament::new(config(Format::RoundRobin { cycles: 1 }, 4, 0)).unwrap();
    play_out(&mut t, by_table(&table));
    let ct = t.crosstable();

    let csv = ct.to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "Rank,Name,Pts,SB,Wins,DE,Fouls,R1,R2,R3");
    // Player 2 (p1): beat 3 (rank 4) with Red, beat 1 (rank 2) with Black,
    // drew 4 (rank 3) with Red.
    assert_eq!(lines[1], "1,p1,2.5,2.75,2,0,0,4r1,2b1,3r½");

    let json: serde_json::Value = serde_json::from_str(&ct.to_json()).unwrap();
    assert_eq!(json["rows"][0]["name"], "p1");
    assert_eq!(json["rows"][0]["points"], 2.5);
    assert_eq!(json["rows"][0]["entries"].as_array().unwrap().len(), 3);

    let text = ct.to_text();
    assert!(
        text.lines()
            .any(|l| l.starts_with("   1  p1") && l.ends_with("3r½")),
        "{text}"
    );
}

/// FIDE C.05: in a double round robin the last two rounds of the first cycle
/// are swapped, so that nobody has the same colour three times in a row
/// across the change of cycle.
#[test]
fn double_round_robin_never_gives_three_same_colours_in_a_row() {
    for n in 3..=14 {
        let mut t = Tournament::new(config(Format::RoundRobin { cycles: 2 }, n, 0)).unwrap();
        play_out(&mut t, |_, _| Draw);
        let mut meetings = std::collections::HashMap::new();
        for p in 0..n {
            let colours: Vec<bool> = t
                .games()
                .iter()
                .filter_map(|g| {
                    (g.pairing.red == p || g.pairing.black == p).then_some(g.pairing.red == p)
                })
                .collect();
            assert!(
                !colours.windows(3).any(|w| w[0] == w[1] && w[1] == w[2]),
                "n={n}: player {p} colours {colours:?}"
            );
        }
        for g in t.games() {
            *meetings
                .entry((g.pairing.red, g.pairing.black))
                .or_insert(0) += 1;
        }
        // Each ordered pair exactly once: everyone has Red once against each.
        assert_eq!(meetings.len(), n * (n - 1));
        assert!(meetings.values().all(|&c| c == 1));
    }
}

/// The same four-player table as above, where 1 and 4 tie on points, SB,
/// wins and direct encounter once their game is drawn; 15.1 then ranks the
/// player with fewer fouls (犯规) first.
#[test]
fn round_robin_fouls_break_a_tie_that_direct_encounter_leaves() {
    let table = [
        ((1, 4), Draw),
        ((2, 3), Win),
        ((4, 3), Win),
        ((1, 2), Loss),
        ((2, 4), Win),
        ((3, 1), Loss),
    ];
    // Points 2 = 3, 1 = 4 = 1.5, 3 = 0; SB of 1 and 4 = ½·1.5; one win each;
    // their game drawn.
    for (fouls_of_1, want) in [(2, [2, 4, 1, 3]), (0, [2, 1, 4, 3])] {
        let mut t = Tournament::new(config(Format::RoundRobin { cycles: 1 }, 4, 0)).unwrap();
        loop {
            let games = t.next_round().unwrap();
            if games.is_empty() {
                break;
            }
            for g in games {
                let r = by_table(&table)(g.red, g.black);
                // Player 1 (id 0) commits its fouls in its game with 3.
                let fouls = if (g.red, g.black) == (2, 0) {
                    [0, fouls_of_1]
                } else {
                    [0, 0]
                };
                t.record_report(
                    g.game,
                    GameReport {
                        result: r.into(),
                        forfeit: false,
                        fouls,
                    },
                )
                .unwrap();
            }
        }
        let got = summary(&t);
        assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), want);
        let one = t.standings().of(0).unwrap().clone();
        assert_eq!(one.fouls, fouls_of_1);
        assert_eq!(one.tiebreaks[3], f64::from(fouls_of_1));
    }
}

/// 15.2: Swiss ties go to Buchholz, then wins, then fewer fouls.
#[test]
fn swiss_default_tiebreaks_end_with_fouls() {
    assert_eq!(
        TieBreak::defaults_for(&Format::Swiss { rounds: 3 }),
        [TieBreak::Buchholz, TieBreak::Wins, TieBreak::Fouls]
    );
    assert!(TieBreak::Fouls.lower_is_better());
    assert!(!TieBreak::Wins.lower_is_better());
}

/// Plays out `t`, recording the game between `a` and `b` (ids) as a
/// double forfeit (21.3) and asking `result` for the others.
fn play_with_double_forfeit(
    t: &mut Tournament,
    (a, b): (usize, usize),
    mut result: impl FnMut(usize, usize) -> GameResult,
) {
    loop {
        let games = t.next_round().unwrap();
        if games.is_empty() {
            return;
        }
        for g in games {
            let report = if (g.red.min(g.black), g.red.max(g.black)) == (a, b) {
                GameReport {
                    result: Score::DoubleForfeit,
                    forfeit: true,
                    fouls: [0, 0],
                }
            } else {
                result(g.red, g.black).into()
            };
            t.record_report(g.game, report).unwrap();
        }
    }
}

/// 21.3: when neither player can start, both forfeit. Round robin of three:
/// 1-2 is a double forfeit, 1 beats 3, 2 and 3 draw. Nobody scores from
/// 1-2: points 1, ½, ½ (2 in all, not 3); each of 1 and 2 has a loss and no
/// win from it, and it adds nothing to 小分 (1: ½·1 from 3; 2 and 3: ½·½).
/// The crosstable marks it "-" in both rows (21.4).
#[test]
fn a_double_forfeit_scores_nothing_for_either_player() {
    let mut t = Tournament::new(config(Format::RoundRobin { cycles: 1 }, 3, 0)).unwrap();
    play_with_double_forfeit(&mut t, (0, 1), |r, b| match (r.min(b), r.max(b)) {
        (0, 2) if r == 0 => Win,
        (0, 2) => Loss,
        _ => Draw,
    });
    assert_eq!(
        summary(&t),
        [
            (1, 1, 1.0, vec![0.5, 1.0, 0.0, 0.0]),
            (2, 2, 0.5, vec![0.25, 0.0, 0.5, 0.0]),
            (3, 2, 0.5, vec![0.25, 0.0, 0.5, 0.0]),
        ]
    );
    let s = t.standings();
    for p in [0, 1] {
        let row = s.of(p).unwrap();
        assert_eq!((row.games, row.losses), (2, 1), "{row:?}");
    }
    assert_eq!(s.of(0).unwrap().wins, 1);
    assert_eq!(s.of(1).unwrap().wins, 0);
    let csv = t.crosstable().to_csv();
    let row = |name: &str| {
        csv.lines()
            .find(|l| l.contains(&format!(",{name},")))
            .unwrap()
            .to_owned()
    };
    // Player 1 is first, players 2 and 3 share second place.
    assert!(
        row("p0").contains("2r-") || row("p0").contains("2b-"),
        "{csv}"
    );
    assert!(
        row("p1").contains("1r-") || row("p1").contains("1b-"),
        "{csv}"
    );
    assert!(!row("p2").contains('-'), "{csv}");
}

/// A Swiss double forfeit scores nothing for either player, and the two
/// have met: they are not paired again, and each counts the other in 对手分.
#[test]
fn a_swiss_double_forfeit_scores_nothing_and_counts_as_met() {
    let mut t = Tournament::new(config(Format::Swiss { rounds: 3 }, 4, 5)).unwrap();
    let first = t.next_round().unwrap();
    let (df, other) = (first[0], first[1]);
    t.record_report(
        df.game,
        GameReport {
            result: Score::DoubleForfeit,
            forfeit: true,
            fouls: [0, 0],
        },
    )
    .unwrap();
    t.record(other.game, Win).unwrap();
    let s = t.standings();
    assert_eq!(s.of(df.red).unwrap().points, 0.0);
    assert_eq!(s.of(df.black).unwrap().points, 0.0);
    assert_eq!(s.of(other.red).unwrap().points, 1.0);
    let total: f64 = s.rows.iter().map(|r| r.points).sum();
    assert_eq!(total, 1.0);
    let mut games = 0;
    while !t.is_finished() {
        for g in t.next_round().unwrap() {
            assert_ne!(
                (g.red.min(g.black), g.red.max(g.black)),
                (df.red.min(df.black), df.red.max(df.black)),
                "paired again"
            );
            t.record(g.game, Draw).unwrap();
            games += 1;
        }
    }
    assert_eq!(games, 4);
    // Buchholz (the first tie-break) sums every opponent's points.
    let s = t.standings();
    for row in &s.rows {
        let opponents: f64 = t
            .games()
            .iter()
            .filter_map(|g| {
                let q = if g.pairing.red == row.player {
                    g.pairing.black
                } else if g.pairing.black == row.player {
                    g.pairing.red
                } else {
                    return None;
                };
                Some(s.of(q).unwrap().points)
            })
            .sum();
        assert_eq!(row.tiebreaks[0], opponents, "{row:?}");
    }
}
