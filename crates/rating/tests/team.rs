//! Team events (第12条): board matches, fielding, 场分 / 局分 and the team
//! tie-breaks of 第15条.

use std::collections::HashSet;

use xq_rating::GameResult::{self, Draw, Loss, Win};
use xq_rating::tournament::team::{
    Fielding, Team, TeamError, TeamEventConfig, TeamSection, TeamTournament,
};
use xq_rating::tournament::{
    Format, GameReport, KnockoutTiebreak, Participant, Primary, Score, TieBreak, Withdrawal,
};

/// Teams named A, B, … with members a1, a2, … in board order.
fn event(
    format: Format,
    sizes: &[usize],
    fielding: Fielding,
    boards: Option<u32>,
) -> TeamEventConfig {
    let mut participants = Vec::new();
    let mut teams = Vec::new();
    for (t, &size) in sizes.iter().enumerate() {
        let letter = (b'a' + t as u8) as char;
        let members: Vec<String> = (1..=size).map(|i| format!("{letter}{i}")).collect();
        for m in &members {
            participants.push(Participant::new(m.clone(), "random"));
        }
        teams.push(Team {
            name: letter.to_ascii_uppercase().to_string(),
            members,
        });
    }
    TeamEventConfig {
        name: "teams".into(),
        format,
        seed: 11,
        participants,
        teams,
        team: TeamSection { fielding, boards },
        withdrawals: Vec::new(),
    }
}

/// Plays every round, asking `result(red name, black name)`; returns rounds.
fn play(
    t: &mut TeamTournament,
    mut result: impl FnMut(&str, &str) -> (GameResult, [u32; 2]),
) -> u32 {
    let mut rounds = 0;
    loop {
        let games = t.next_round().unwrap();
        if games.is_empty() {
            return rounds;
        }
        rounds += 1;
        for g in games {
            let (r, b) = (
                t.participants()[g.red].name.clone(),
                t.participants()[g.black].name.clone(),
            );
            let (result, fouls) = result(&r, &b);
            t.record_report(
                g.game,
                GameReport {
                    result: result.into(),
                    forfeit: false,
                    fouls,
                },
            )
            .unwrap();
        }
    }
}

/// Three teams of two, fixed boards (12.1), single round robin. The Berger
/// table of four gives R1 B-C (A rests), R2 A-B (C rests), R3 C-A (B
/// rests); the first-named team has Red on board 1 and Black on board 2
/// (13.2). Every match ends 1-1 (场分 1 each, 2 in all) and every team
/// scores 2 局分:
///
/// ```text
/// R1 B-C: b1-c1 1-0, c2-b2 1-0      wins (全队胜局): A 1, B 2, C 1
/// R2 A-B: a1-b1 1-0, b2-a2 1-0      A and C drew (直胜 1 each)
/// R3 C-A: c1-a1 ½-½, a2-c2 ½-½      c2 committed one foul
/// ```
/// 15.3 ranks B first on 胜局; A and C are level on 直胜 and split by 犯规.
#[test]
fn round_robin_team_golden_crosstable() {
    let mut t = TeamTournament::new(event(
        Format::RoundRobin { cycles: 1 },
        &[2, 2, 2],
        Fielding::FixedBoards,
        Some(2),
    ))
    .unwrap();
    let rounds = play(&mut t, |r, b| match (r, b) {
        ("b1", "c1") | ("c2", "b2") | ("a1", "b1") | ("b2", "a2") => (Win, [0, 0]),
        ("c1", "a1") => (Draw, [0, 0]),
        ("a2", "c2") => (Draw, [0, 1]),
        other => panic!("unexpected board {other:?}"),
    });
    assert_eq!(rounds, 3);
    let s = t.standings();
    assert_eq!(s.primary, Primary::MatchPoints);
    assert_eq!(
        s.tiebreaks,
        [
            TieBreak::GamePoints,
            TieBreak::Wins,
            TieBreak::DirectEncounter,
            TieBreak::Fouls
        ]
    );
    let golden = "\
teams
Rank  Team  MP  GP  Wins  DE  Fouls     R1     R2     R3
   1  B      2   2     2   0      0  3r1-1  2b1-1   rest
   2  A      2   2     1   1      0   rest  1r1-1  3b1-1
   3  C      2   2     1   1      1  1b1-1   rest  2r1-1

R1 B 1-1 C
  board 1: b1 - c1 1 0
  board 2: c2 - b2 1 0
R2 A 1-1 B
  board 1: a1 - b1 1 0
  board 2: b2 - a2 1 0
R3 C 1-1 A
  board 1: c1 - a1 ½ ½
  board 2: a2 - c2 ½ ½
";
    let ct = t.crosstable();
    assert_eq!(ct.to_text(), golden);
    assert_eq!(
        ct.to_csv(),
        "Rank,Team,MP,GP,Wins,DE,Fouls,R1,R2,R3\n\
         1,B,2,2,2,0,0,3r1-1,2b1-1,rest\n\
         2,A,2,2,1,1,0,rest,1r1-1,3b1-1\n\
         3,C,2,2,1,1,1,1b1-1,rest,2r1-1\n"
    );
    let json: serde_json::Value = serde_json::from_str(&ct.to_json()).unwrap();
    assert_eq!(json["seed"], 11);
    assert_eq!(json["fielding"], "fixed_boards");
    assert_eq!(json["matches"][0]["boards"][1]["red"], "c2");
}

/// Three teams, one board, Swiss over two rounds where the lower team
/// always wins: R1 A beats B, C has the bye; R2 A beats C, B has the bye. A
/// Swiss bye is 21.4's "+" for a team: 2 场分, no 局分. B and C then tie on
/// everything of 15.4 (团体对手分 4, 局分 0, 胜场 0, 犯规 0) and share
/// second place.
#[test]
fn swiss_team_bye_is_worth_two_match_points_and_no_game_points() {
    let mut t = TeamTournament::new(event(
        Format::Swiss { rounds: 2 },
        &[1, 1, 1],
        Fielding::FixedBoards,
        Some(1),
    ))
    .unwrap();
    play(&mut t, |r, b| (if r < b { Win } else { Loss }, [0, 0]));
    let s = t.standings();
    assert_eq!(
        s.tiebreaks,
        [
            TieBreak::Buchholz,
            TieBreak::GamePoints,
            TieBreak::MatchWins,
            TieBreak::Fouls
        ]
    );
    let rows: Vec<(&str, usize, f64, Vec<f64>)> = s
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.rank, r.points, r.tiebreaks.clone()))
        .collect();
    assert_eq!(
        rows,
        [
            ("A", 1, 4.0, vec![4.0, 2.0, 2.0, 0.0]),
            ("B", 2, 2.0, vec![4.0, 0.0, 0.0, 0.0]),
            ("C", 2, 2.0, vec![4.0, 0.0, 0.0, 0.0]),
        ]
    );
    assert!(t.crosstable().to_csv().contains("bye+"));
}

/// 13.2 / 13.3: the first-named team's players have Red on odd boards and
/// Black on even boards, in every match of a four-board event.
#[test]
fn first_named_team_has_red_on_odd_boards() {
    for format in [
        Format::RoundRobin { cycles: 2 },
        Format::Swiss { rounds: 3 },
    ] {
        let mut t =
            TeamTournament::new(event(format, &[4, 4, 4, 4], Fielding::FixedBoards, Some(4)))
                .unwrap();
        play(&mut t, |_, _| (Draw, [0, 0]));
        assert!(!t.matches().is_empty());
        for m in t.matches() {
            for (i, &g) in m.games.iter().enumerate() {
                let p = t.games()[g].pairing;
                let home_red = t.team_of(p.red) == m.home;
                assert_eq!(home_red, i % 2 == 0, "{format:?} board {}", i + 1);
                // 12.1: board i is each team's i-th member.
                let members = &t.config().teams;
                let (h, a) = if home_red {
                    (p.red, p.black)
                } else {
                    (p.black, p.red)
                };
                assert_eq!(t.participants()[h].name, members[m.home].members[i]);
                assert_eq!(t.participants()[a].name, members[m.away].members[i]);
            }
        }
    }
}

/// 12.2: with substitutes a team fields `boards` of its members in their
/// listed order; 12.3: the members in any order, drawn for each match.
#[test]
fn substitutes_keep_board_order_and_free_boards_permute() {
    let mut t = TeamTournament::new(event(
        Format::RoundRobin { cycles: 1 },
        &[4, 5, 3, 4],
        Fielding::Substitutes,
        Some(3),
    ))
    .unwrap();
    play(&mut t, |_, _| (Draw, [0, 0]));
    let mut lineups = HashSet::new();
    for m in t.matches() {
        for team in [m.home, m.away] {
            let listed = &t.config().teams[team].members;
            let fielded: Vec<usize> = m
                .games
                .iter()
                .map(|&g| {
                    let p = t.games()[g].pairing;
                    let me = if t.team_of(p.red) == team {
                        p.red
                    } else {
                        p.black
                    };
                    listed
                        .iter()
                        .position(|n| *n == t.participants()[me].name)
                        .unwrap()
                })
                .collect();
            assert_eq!(fielded.len(), 3);
            assert!(fielded.windows(2).all(|w| w[0] < w[1]), "{fielded:?}");
            lineups.insert((team, fielded));
        }
    }
    assert!(lineups.len() > 4, "the lots vary the line-ups: {lineups:?}");

    let mut t = TeamTournament::new(event(
        Format::RoundRobin { cycles: 2 },
        &[3, 3],
        Fielding::FreeBoards,
        Some(3),
    ))
    .unwrap();
    play(&mut t, |_, _| (Draw, [0, 0]));
    for m in t.matches() {
        let home: Vec<String> = m
            .games
            .iter()
            .map(|&g| {
                let p = t.games()[g].pairing;
                let me = if t.team_of(p.red) == m.home {
                    p.red
                } else {
                    p.black
                };
                t.participants()[me].name.clone()
            })
            .collect();
        let mut sorted = home.clone();
        sorted.sort();
        assert_eq!(sorted, t.config().teams[m.home].members);
    }
    assert_eq!(t.matches().len(), 2);
    // Same seed, same draw.
    let mut again = TeamTournament::new(t.config().clone()).unwrap();
    play(&mut again, |_, _| (Draw, [0, 0]));
    assert_eq!(again.games(), t.games());
}

/// 12.4: every member of one team plays every member of the other; game
/// `i·m + j + 1` is member i against member j, and the odd ones give the
/// first-named team Red.
#[test]
fn all_play_all_meets_every_opponent_once() {
    let mut t = TeamTournament::new(event(
        Format::RoundRobin { cycles: 1 },
        &[2, 3],
        Fielding::AllPlayAll,
        None,
    ))
    .unwrap();
    // a1 wins everything, a2 loses everything: A 3, B 3 局分 -> drawn match.
    play(&mut t, |r, b| {
        let res = match (r, b) {
            ("a1", _) | (_, "a2") => Win,
            (_, "a1") | ("a2", _) => Loss,
            other => panic!("not an A-B board: {other:?}"),
        };
        (res, [0, 0])
    });
    let m = &t.matches()[0];
    let boards: Vec<(String, String)> = m
        .games
        .iter()
        .map(|&g| {
            let p = t.games()[g].pairing;
            (
                t.participants()[p.red].name.clone(),
                t.participants()[p.black].name.clone(),
            )
        })
        .collect();
    let want = [
        ("a1", "b1"),
        ("b2", "a1"),
        ("a1", "b3"),
        ("b1", "a2"),
        ("a2", "b2"),
        ("b3", "a2"),
    ];
    assert_eq!(
        boards,
        want.map(|(r, b)| (r.to_owned(), b.to_owned())).to_vec()
    );
    let s = t.standings();
    assert!(
        s.rows
            .iter()
            .all(|r| r.points == 1.0 && r.tiebreaks[0] == 3.0)
    );
}

/// 12.5 / 15.5: the players play an individual round robin; teams rank by
/// the sum of their players' places, then the best place. Lower id wins:
/// places a1 1, a2 2, b1 3, b2 4 with teams {a1, b2} and {a2, b1}, both
/// summing 5; the first team has the better best place.
#[test]
fn total_score_ranks_by_the_sum_of_places() {
    let mut c = event(
        Format::RoundRobin { cycles: 1 },
        &[2, 2],
        Fielding::TotalScore,
        None,
    );
    c.teams[0].members = vec!["a1".into(), "b2".into()];
    c.teams[1].members = vec!["a2".into(), "b1".into()];
    let mut t = TeamTournament::new(c).unwrap();
    let order = ["a1", "a2", "b1", "b2"];
    let idx = |n: &str| order.iter().position(|o| *o == n).unwrap();
    let rounds = play(&mut t, |r, b| {
        (if idx(r) < idx(b) { Win } else { Loss }, [0, 0])
    });
    assert_eq!(rounds, 3);
    let s = t.standings();
    assert_eq!(s.primary, Primary::RankSum);
    let rows: Vec<(&str, usize, f64, Vec<f64>)> = s
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.rank, r.points, r.tiebreaks.clone()))
        .collect();
    assert_eq!(
        rows,
        [
            ("A", 1, 5.0, vec![1.0, 4.0, 0.0]),
            ("B", 2, 5.0, vec![2.0, 3.0, 0.0]),
        ]
    );
    let text = t.crosstable().to_text();
    assert!(text.contains("RankSum") && text.contains("a1 b2"), "{text}");
}

/// A withdrawn team forfeits its remaining matches (20.3): 2 场分 to the
/// opponent (21.4), marked "+", with no board games.
#[test]
fn a_withdrawn_team_forfeits_whole_matches() {
    let mut c = event(
        Format::RoundRobin { cycles: 1 },
        &[1, 1, 1, 1],
        Fielding::FixedBoards,
        Some(1),
    );
    c.withdrawals.push(Withdrawal {
        name: "D".into(),
        after_round: 2,
    });
    let mut t = TeamTournament::new(c).unwrap();
    play(&mut t, |_, _| (Draw, [0, 0]));
    assert_eq!(t.matches().len(), 5, "six pairings, one forfeited");
    let s = t.standings();
    let total: f64 = s.rows.iter().map(|r| r.points).sum();
    assert_eq!(total, 12.0, "six matches worth 2 场分 each");
    let csv = t.crosstable().to_csv();
    assert!(csv.contains("r+") || csv.contains("b+"), "{csv}");
}

/// A team leaving before it met half its opponents has its matches
/// annulled (20.3): neither the 场分 nor the boards' 局分 and wins count.
#[test]
fn an_annulled_team_match_counts_for_nobody() {
    let mut c = event(
        Format::RoundRobin { cycles: 1 },
        &[1, 1, 1, 1],
        Fielding::FixedBoards,
        Some(1),
    );
    c.withdrawals.push(Withdrawal {
        name: "A".into(),
        after_round: 1,
    });
    let mut t = TeamTournament::new(c).unwrap();
    // The lower team wins every board: A beats D in round 1, then leaves.
    play(&mut t, |r, b| (if r < b { Win } else { Loss }, [0, 0]));
    let s = t.standings();
    let d = s.rows.iter().find(|r| r.name == "D").unwrap();
    let a = s.rows.last().unwrap();
    assert_eq!(a.name, "A");
    assert_eq!((a.points, a.tiebreaks[0], a.tiebreaks[1]), (0.0, 0.0, 0.0));
    // D lost to B and C; its annulled loss to A is gone, as are A's 局分.
    assert_eq!((d.points, d.games), (0.0, 2));
    let total: f64 = s.rows.iter().map(|r| r.tiebreaks[0]).sum();
    assert_eq!(total, 3.0, "three counted one-board matches");
}

/// For every fielding, both team formats and several field sizes, with
/// random results: the event finishes, every match is scored 2 场分 in all
/// (14.2), a Swiss bye adds 2, and every board game belongs to a match
/// between two different teams.
#[test]
fn every_fielding_and_format_scores_two_match_points_per_match() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    for fielding in [
        Fielding::FixedBoards,
        Fielding::Substitutes,
        Fielding::FreeBoards,
        Fielding::AllPlayAll,
    ] {
        for teams in 2..=6 {
            for format in [
                Format::RoundRobin { cycles: 1 },
                Format::RoundRobin { cycles: 2 },
                Format::Swiss {
                    rounds: 2.min(teams as u32 - 1),
                },
            ] {
                let size = if fielding == Fielding::Substitutes {
                    4
                } else {
                    3
                };
                let boards = (fielding != Fielding::AllPlayAll).then_some(3);
                let mut t =
                    TeamTournament::new(event(format, &vec![size; teams], fielding, boards))
                        .unwrap();
                play(&mut t, |_, _| {
                    ([Win, Draw, Loss][rng.random_range(0..3)], [0, 0])
                });
                assert!(t.is_finished());
                let s = t.standings();
                let mp: f64 = s.rows.iter().map(|r| r.points).sum();
                let byes = if matches!(format, Format::Swiss { .. }) {
                    t.inner().byes().len()
                } else {
                    0
                };
                let what = format!("{fielding:?} {format:?} {teams} teams");
                assert_eq!(mp, 2.0 * (t.matches().len() + byes) as f64, "{what}");
                let per_match = if fielding == Fielding::AllPlayAll {
                    9
                } else {
                    3
                };
                for m in t.matches() {
                    assert_ne!(m.home, m.away, "{what}");
                    assert_eq!(m.games.len(), per_match, "{what}");
                    for &g in &m.games {
                        let p = t.games()[g].pairing;
                        let pair = [t.team_of(p.red), t.team_of(p.black)];
                        assert!(pair.contains(&m.home) && pair.contains(&m.away), "{what}");
                    }
                }
            }
        }
    }
}

#[test]
fn bad_team_configs_are_errors_naming_the_problem() {
    let base = || {
        event(
            Format::RoundRobin { cycles: 1 },
            &[2, 2],
            Fielding::FixedBoards,
            Some(2),
        )
    };
    let mut c = base();
    c.teams[0].members[1] = "zz".into();
    let e = TeamTournament::new(c).unwrap_err();
    assert_eq!(
        e,
        TeamError::UnknownMember {
            team: "A".into(),
            member: "zz".into()
        }
    );
    assert!(e.to_string().contains("\"zz\""));
    let mut c = base();
    c.teams[1].members[0] = "a1".into();
    assert!(matches!(
        TeamTournament::new(c).unwrap_err(),
        TeamError::MemberTwice { .. }
    ));
    let mut c = base();
    c.team.boards = Some(3);
    let e = TeamTournament::new(c).unwrap_err().to_string();
    assert!(e.contains("12.1") && e.contains("3 boards"), "{e}");
    let mut c = base();
    c.team.boards = None;
    assert!(matches!(
        TeamTournament::new(c).unwrap_err(),
        TeamError::MissingBoards { .. }
    ));
    let mut c = base();
    c.team.fielding = Fielding::AllPlayAll;
    assert!(matches!(
        TeamTournament::new(c).unwrap_err(),
        TeamError::BoardsNotAllowed { .. }
    ));
    // 12.5 / 15.5: a smaller team would win on the sum of places without playing better.
    let c = event(
        Format::RoundRobin { cycles: 1 },
        &[2, 1],
        Fielding::TotalScore,
        None,
    );
    let e = TeamTournament::new(c).unwrap_err();
    assert!(matches!(e, TeamError::UnequalTeams { .. }), "{e}");
    assert!(e.to_string().contains("12.5"), "{e}");
    let mut c = base();
    c.format = Format::Knockout {
        tiebreak: KnockoutTiebreak::default(),
    };
    let e = TeamTournament::new(c).unwrap_err().to_string();
    assert!(e.contains("knockout"), "{e}");
    let mut c = base();
    c.withdrawals.push(Withdrawal {
        name: "a1".into(),
        after_round: 1,
    });
    assert_eq!(
        TeamTournament::new(c).unwrap_err(),
        TeamError::UnknownWithdrawingTeam("a1".into())
    );
    let mut c = base();
    c.participants.push(Participant::new("loner", "random"));
    assert_eq!(
        TeamTournament::new(c).unwrap_err(),
        TeamError::NotInTeam("loner".into())
    );
}

/// Plays every round, recording `report(red name, black name)`.
fn play_reports(t: &mut TeamTournament, mut report: impl FnMut(&str, &str) -> GameReport) {
    loop {
        let games = t.next_round().unwrap();
        if games.is_empty() {
            return;
        }
        for g in games {
            let r = report(
                &t.participants()[g.red].name,
                &t.participants()[g.black].name,
            );
            t.record_report(g.game, r).unwrap();
        }
    }
}

const DOUBLE_FORFEIT: GameReport = GameReport {
    result: Score::DoubleForfeit,
    forfeit: true,
    fouls: [0, 0],
};

/// 21.3 on one board of a 12.1 match: a1 and b1 both forfeit, so board 1
/// gives neither team 局分. Board 2 decides the match (14.2): won by b2,
/// B wins 1-0 (2 场分); drawn, the match is drawn ½-½ (1 场分 each).
#[test]
fn a_board_both_players_forfeit_gives_neither_team_game_points() {
    for (board2, want_mp, want_gp) in [
        (GameResult::Win, [0.0, 2.0], [0.0, 1.0]),
        (GameResult::Draw, [1.0, 1.0], [0.5, 0.5]),
    ] {
        let mut t = TeamTournament::new(event(
            Format::RoundRobin { cycles: 1 },
            &[2, 2],
            Fielding::FixedBoards,
            Some(2),
        ))
        .unwrap();
        play_reports(&mut t, |red, _| match red {
            "a1" => DOUBLE_FORFEIT,
            // Board 2: b2 has Red (13.2).
            "b2" => board2.into(),
            other => panic!("unexpected board with {other} as Red"),
        });
        let s = t.standings();
        for (team, (mp, gp)) in want_mp.iter().zip(want_gp).enumerate() {
            let row = s.of(team).unwrap();
            assert_eq!(row.points, *mp, "{row:?}");
            assert_eq!(row.tiebreaks[0], gp, "全队总局分 {row:?}");
        }
        let text = t.crosstable().to_text();
        assert!(text.contains("board 1: a1 - b1 - -"), "{text}");
        assert!(!text.contains(" 1r-") && !text.contains(" 1b-"), "{text}");
    }
}

/// A match in which every board is forfeited by both players was played by
/// neither team: both teams forfeit it, 0 场分 and a "-" each, no 局分.
#[test]
fn a_match_every_board_of_which_both_players_forfeit_is_lost_by_both_teams() {
    let mut t = TeamTournament::new(event(
        Format::RoundRobin { cycles: 1 },
        &[2, 2],
        Fielding::FixedBoards,
        Some(2),
    ))
    .unwrap();
    play_reports(&mut t, |_, _| DOUBLE_FORFEIT);
    assert!(t.is_finished());
    let team_game = t.inner().games()[0];
    assert_eq!(team_game.result, Some(Score::DoubleForfeit));
    assert!(team_game.forfeit);
    let s = t.standings();
    for row in &s.rows {
        assert_eq!((row.points, row.wins, row.losses), (0.0, 0, 1), "{row:?}");
        assert_eq!(row.tiebreaks[0], 0.0, "no 局分: {row:?}");
    }
    let text = t.crosstable().to_text();
    assert!(text.contains("1r-") && text.contains("1b-"), "{text}");
    assert!(text.contains("board 2: b2 - a2 - -"), "{text}");
}

/// The PGN round tag of a board game is round.match.board: in round 1 of
/// four teams (Berger: A-D, B-C), match 2's first board is "1.2.1", while
/// the pairing's `board` counts the games of the whole round.
#[test]
fn board_games_are_tagged_by_round_match_and_board() {
    let mut t = TeamTournament::new(event(
        Format::RoundRobin { cycles: 1 },
        &[2, 2, 2, 2],
        Fielding::FixedBoards,
        Some(2),
    ))
    .unwrap();
    let round = t.next_round().unwrap();
    let tags: Vec<String> = round.iter().map(|p| t.round_tag(p)).collect();
    assert_eq!(tags, ["1.1.1", "1.1.2", "1.2.1", "1.2.2"]);
    assert_eq!(
        round.iter().map(|p| p.board).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    // Each tag names the match's own boards, in the crosstable's order.
    let view = t.crosstable();
    for (p, tag) in round.iter().zip(&tags) {
        let m: usize = tag.split('.').nth(1).unwrap().parse().unwrap();
        let b: usize = tag.split('.').nth(2).unwrap().parse().unwrap();
        let board = &view.matches[m - 1].boards[b - 1];
        assert_eq!(board.red, t.participants()[p.red].name);
        assert_eq!(board.black, t.participants()[p.black].name);
    }
    // 12.4: all four games of a match are boards of that match.
    let mut t = TeamTournament::new(event(
        Format::RoundRobin { cycles: 1 },
        &[2, 2],
        Fielding::AllPlayAll,
        None,
    ))
    .unwrap();
    let round = t.next_round().unwrap();
    let tags: Vec<String> = round.iter().map(|p| t.round_tag(p)).collect();
    assert_eq!(tags, ["1.1.1", "1.1.2", "1.1.3", "1.1.4"]);
    // 12.5 has no boards: the individual event's round.board.
    let mut t = TeamTournament::new(event(
        Format::RoundRobin { cycles: 1 },
        &[2, 2],
        Fielding::TotalScore,
        None,
    ))
    .unwrap();
    let round = t.next_round().unwrap();
    let tags: Vec<String> = round.iter().map(|p| t.round_tag(p)).collect();
    assert_eq!(tags, ["1.1", "1.2"]);
}
