//! The generated Berger tables equal the published ones (CXA 附录一 /
//! FIDE C.05 Annex 1). Tables are typed in as printed: "a-b" means a plays
//! Red; for an odd number of players the highest number is the bye (the
//! Chinese tables print it as 0).

use xq_rating::tournament::berger::berger_table;

const TABLE_4: &str = "
1-4 2-3
4-3 1-2
2-4 3-1";

const TABLE_6: &str = "
1-6 2-5 3-4
6-4 5-3 1-2
2-6 3-1 4-5
6-5 1-4 2-3
3-6 4-2 5-1";

const TABLE_10: &str = "
1-10 2-9 3-8 4-7 5-6
10-6 7-5 8-4 9-3 1-2
2-10 3-1 4-9 5-8 6-7
10-7 8-6 9-5 1-4 2-3
3-10 4-2 5-1 6-9 7-8
10-8 9-7 1-6 2-5 3-4
4-10 5-3 6-2 7-1 8-9
10-9 1-8 2-7 3-6 4-5
5-10 6-4 7-3 8-2 9-1";

/// The 7-team example of the Chinese 贝格尔编排法 description, with 0 as
/// the bye, checks the odd-count convention against a second source.
const TABLE_7_WITH_ZERO: &str = "
1-0 2-7 3-6 4-5
0-5 6-4 7-3 1-2
2-0 3-1 4-7 5-6
0-6 7-5 1-4 2-3
3-0 4-2 5-1 6-7
0-7 1-6 2-5 3-4
4-0 5-3 6-2 7-1";

/// Parses a printed table into rounds of (red, black) with the bye number
/// (`bye`, or 0) as `None`, the bye player first as `berger_table` lists it.
fn parse(table: &str, bye: usize) -> Vec<Vec<(usize, Option<usize>)>> {
    table
        .trim()
        .lines()
        .map(|line| {
            line.split_whitespace()
                .map(|pair| {
                    let (a, b) = pair.split_once('-').unwrap();
                    let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
                    let is_bye = |x: usize| x == bye || x == 0;
                    match (is_bye(a), is_bye(b)) {
                        (false, false) => (a, Some(b)),
                        (true, false) => (b, None),
                        (false, true) => (a, None),
                        (true, true) => panic!("two byes in {pair}"),
                    }
                })
                .collect()
        })
        .collect()
}

#[test]
fn four_players_match_the_standard_table() {
    assert_eq!(berger_table(4), parse(TABLE_4, usize::MAX));
}

#[test]
fn three_players_use_the_four_player_table_with_a_bye() {
    assert_eq!(berger_table(3), parse(TABLE_4, 4));
}

#[test]
fn five_players_use_the_six_player_table_with_a_bye() {
    assert_eq!(berger_table(5), parse(TABLE_6, 6));
}

#[test]
fn six_players_match_the_standard_table() {
    assert_eq!(berger_table(6), parse(TABLE_6, usize::MAX));
}

#[test]
fn seven_players_match_the_chinese_example_with_zero_as_bye() {
    assert_eq!(berger_table(7), parse(TABLE_7_WITH_ZERO, 8));
}

#[test]
fn nine_players_use_the_ten_player_table_with_a_bye() {
    assert_eq!(berger_table(9), parse(TABLE_10, 10));
}

#[test]
fn ten_players_match_the_standard_table() {
    assert_eq!(berger_table(10), parse(TABLE_10, usize::MAX));
}

#[test]
fn every_pair_meets_exactly_once_for_many_sizes() {
    for n in 2..=16 {
        let table = berger_table(n);
        assert_eq!(table.len(), if n % 2 == 0 { n - 1 } else { n });
        let mut met = std::collections::HashMap::new();
        for round in &table {
            let mut seen = vec![false; n + 1];
            for &(a, b) in round {
                assert!(!seen[a], "n={n}: {a} twice in a round");
                seen[a] = true;
                if let Some(b) = b {
                    assert!(!seen[b], "n={n}: {b} twice in a round");
                    seen[b] = true;
                    *met.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                }
            }
        }
        for a in 1..=n {
            for b in a + 1..=n {
                let times = met.get(&(a, b)).copied().unwrap_or(0);
                assert_eq!(times, 1, "n={n}: {a} and {b} met {times} times");
            }
        }
    }
}
