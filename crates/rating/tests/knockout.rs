//! Knockout bracket, mini-matches and tie-breaks.

mod common;

use common::{config, play_out};
use xq_rating::GameResult::{self, Draw, Loss, Win};
use xq_rating::tournament::{
    Format, GameKind, GameReport, KnockoutDecision, KnockoutTiebreak, Score, Tournament,
};

fn knockout(rapid_pairs: u32, armageddon: bool) -> Format {
    Format::Knockout {
        tiebreak: KnockoutTiebreak {
            rapid_pairs,
            armageddon,
        },
    }
}

/// `winner(a, b)`-style result: the lower id wins.
fn lower_wins(red: usize, black: usize) -> GameResult {
    if red < black { Win } else { Loss }
}

#[test]
fn bracket_seeds_the_standard_order() {
    let t = Tournament::new(config(knockout(1, true), 16, 0)).unwrap();
    let firsts: Vec<(usize, Option<usize>)> = t
        .knockout_matches()
        .iter()
        .map(|m| (m.top + 1, m.bottom.map(|b| b + 1)))
        .collect();
    let want: Vec<(usize, Option<usize>)> = [
        (1, 16),
        (8, 9),
        (4, 13),
        (5, 12),
        (2, 15),
        (7, 10),
        (3, 14),
        (6, 11),
    ]
    .iter()
    .map(|&(a, b)| (a, Some(b)))
    .collect();
    assert_eq!(firsts, want);
}

#[test]
fn byes_go_to_the_top_seeds_when_the_field_is_not_a_power_of_two() {
    let mut t = Tournament::new(config(knockout(1, true), 6, 0)).unwrap();
    let games = t.next_round().unwrap();
    // Bracket of 8: 1-bye, 4-5, 2-bye, 3-6 (0-based ids below).
    let byes: Vec<usize> = t.byes().iter().map(|b| b.player).collect();
    assert_eq!(byes, [0, 1]);
    assert_eq!(games.len(), 4);
    let matches: Vec<(usize, usize)> = games
        .chunks(2)
        .map(|g| (g[0].red.min(g[0].black), g[0].red.max(g[0].black)))
        .collect();
    assert_eq!(matches, [(3, 4), (2, 5)]);
    for pair in games.chunks(2) {
        assert_eq!(
            pair[0].red, pair[1].black,
            "colours swap in the second game"
        );
        assert_eq!(pair[0].black, pair[1].red);
        assert!(pair.iter().all(|g| g.kind == GameKind::Regular));
    }
}

#[test]
fn full_knockout_crowns_the_strongest_and_ranks_by_round_reached() {
    let mut t = Tournament::new(config(knockout(1, true), 8, 3)).unwrap();
    let rounds = play_out(&mut t, lower_wins);
    assert_eq!(rounds, 3, "quarter-finals, semi-finals, final");
    assert!(t.is_finished());
    assert!(t.next_round().unwrap().is_empty());
    let s = t.standings();
    let ranks: Vec<(usize, usize)> = s.rows.iter().map(|r| (r.player, r.rank)).collect();
    assert_eq!(
        ranks,
        [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 3),
            (4, 5),
            (5, 5),
            (6, 5),
            (7, 5)
        ]
    );
    assert!(
        t.knockout_matches()
            .iter()
            .all(|m| m.decided_by == Some(KnockoutDecision::Games))
    );
}

#[test]
fn level_mini_match_goes_to_rapid_games_then_armageddon() {
    let mut t = Tournament::new(config(knockout(1, true), 2, 42)).unwrap();
    // Two regular draws: level.
    let regular = t.next_round().unwrap();
    assert_eq!(regular.len(), 2);
    for g in &regular {
        t.record(g.game, Draw).unwrap();
    }
    assert!(!t.is_finished());
    // One pair of rapid games, colours swapped: one win each, still level.
    let rapid = t.next_round().unwrap();
    assert_eq!(rapid.len(), 2);
    assert!(rapid.iter().all(|g| g.kind == GameKind::Rapid));
    assert_eq!(rapid[0].red, rapid[1].black);
    for g in &rapid {
        t.record(g.game, Win).unwrap();
    }
    // Armageddon: a draw sends Black through.
    let arm = t.next_round().unwrap();
    assert_eq!(arm.len(), 1);
    assert_eq!(arm[0].kind, GameKind::Armageddon);
    t.record(arm[0].game, Draw).unwrap();
    assert!(t.is_finished());
    let m = &t.knockout_matches()[0];
    assert_eq!(m.winner, Some(arm[0].black));
    assert_eq!(m.decided_by, Some(KnockoutDecision::Armageddon));
    assert_eq!(m.games.len(), 5);
    assert_eq!(t.standings().rows[0].player, arm[0].black);
}

#[test]
fn a_won_rapid_pair_decides_the_match() {
    let mut t = Tournament::new(config(knockout(2, true), 2, 1)).unwrap();
    for g in t.next_round().unwrap() {
        t.record(g.game, Win).unwrap(); // 1-1 on the board: each won with Red
    }
    let rapid = t.next_round().unwrap();
    // p1 wins both rapid games.
    for g in &rapid {
        t.record(g.game, if g.red == 1 { Win } else { Loss })
            .unwrap();
    }
    assert!(t.is_finished());
    let m = &t.knockout_matches()[0];
    assert_eq!(
        (m.winner, m.decided_by),
        (Some(1), Some(KnockoutDecision::Rapid))
    );
}

#[test]
fn without_tiebreak_games_a_seeded_draw_of_lots_decides() {
    let winner = |seed: u64| {
        let mut t = Tournament::new(config(knockout(0, false), 2, seed)).unwrap();
        for g in t.next_round().unwrap() {
            t.record(g.game, Draw).unwrap();
        }
        assert!(t.next_round().unwrap().is_empty(), "lots need no games");
        assert!(t.is_finished());
        let m = t.knockout_matches()[0].clone();
        assert_eq!(m.decided_by, Some(KnockoutDecision::Lots));
        m.winner.unwrap()
    };
    assert_eq!(winner(5), winner(5));
    let winners: std::collections::HashSet<usize> = (0..20).map(winner).collect();
    assert_eq!(winners.len(), 2, "both players can win the lots");
}

#[test]
fn later_rounds_wait_for_tiebreaks_of_the_current_round() {
    let mut t = Tournament::new(config(knockout(1, true), 4, 9)).unwrap();
    let first = t.next_round().unwrap();
    assert_eq!(first.len(), 4);
    // Match 0-3 decided, match 1-2 level.
    for g in &first {
        let (a, b) = (g.red.min(g.black), g.red.max(g.black));
        let result = if (a, b) == (0, 3) {
            lower_wins(g.red, g.black)
        } else {
            Draw
        };
        t.record(g.game, result).unwrap();
    }
    let second = t.next_round().unwrap();
    assert_eq!(second.len(), 2);
    assert!(
        second
            .iter()
            .all(|g| g.kind == GameKind::Rapid && g.red != 0 && g.black != 0)
    );
    let err = t.next_round().unwrap_err();
    assert!(err.to_string().contains("unfinished"), "{err}");
}

const DOUBLE_FORFEIT: GameReport = GameReport {
    result: Score::DoubleForfeit,
    forfeit: true,
    fouls: [0, 0],
};

/// A game both players forfeit (21.3) scores nothing for either: the
/// mini-match is decided by its other game.
#[test]
fn a_double_forfeit_scores_nothing_and_the_other_game_decides() {
    let mut t = Tournament::new(config(knockout(1, true), 2, 3)).unwrap();
    let regular = t.next_round().unwrap();
    t.record_report(regular[0].game, DOUBLE_FORFEIT).unwrap();
    t.record(regular[1].game, Win).unwrap();
    assert!(t.is_finished());
    let m = &t.knockout_matches()[0];
    assert_eq!(
        (m.winner, m.decided_by),
        (Some(regular[1].red), Some(KnockoutDecision::Games))
    );
    // Two double forfeits leave the match level: on to the tie-break.
    let mut t = Tournament::new(config(knockout(1, true), 2, 3)).unwrap();
    for g in t.next_round().unwrap() {
        t.record_report(g.game, DOUBLE_FORFEIT).unwrap();
    }
    let rapid = t.next_round().unwrap();
    assert!(rapid.iter().all(|g| g.kind == GameKind::Rapid), "{rapid:?}");
}

/// An armageddon game both players forfeit is no draw, so it gives Black
/// no draw odds: the match stays level and the lots decide.
#[test]
fn an_armageddon_both_players_forfeit_is_decided_by_lots() {
    let mut t = Tournament::new(config(knockout(0, true), 2, 8)).unwrap();
    for g in t.next_round().unwrap() {
        t.record_report(g.game, DOUBLE_FORFEIT).unwrap();
    }
    let arm = t.next_round().unwrap();
    assert_eq!(arm.len(), 1);
    assert_eq!(arm[0].kind, GameKind::Armageddon);
    t.record_report(arm[0].game, DOUBLE_FORFEIT).unwrap();
    assert!(t.next_round().unwrap().is_empty(), "lots need no games");
    assert!(t.is_finished());
    let m = &t.knockout_matches()[0];
    assert_eq!(m.decided_by, Some(KnockoutDecision::Lots));
    assert!(m.winner.is_some());
}
