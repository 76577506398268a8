//! Withdrawals (第20条) and the forfeit marks of 21.4.

mod common;

use common::{config, play_out};
use xq_rating::GameResult::{self, Loss, Win};
use xq_rating::tournament::{
    Format, KnockoutTiebreak, Score, Tournament, TournamentError, Withdrawal, WithdrawalEffect,
};

/// The lower id wins every game.
fn lower_wins(red: usize, black: usize) -> GameResult {
    if red < black { Win } else { Loss }
}

fn withdrawing(format: Format, n: usize, name: &str, after_round: u32) -> Tournament {
    let mut c = config(format, n, 0);
    c.withdrawals.push(Withdrawal {
        name: name.into(),
        after_round,
    });
    Tournament::new(c).unwrap()
}

/// Five players (Berger table of 6): number 5 (p4) meets 2 in round 1 and 3
/// in round 2, rests in round 4, and would meet 4 in round 3 and 1 in round
/// 5. Leaving after round 1 it has met one opponent of four, fewer than half:
/// its result is annulled and its later opponents rest (20.3).
#[test]
fn round_robin_withdrawal_before_half_annuls_every_result() {
    let mut t = withdrawing(Format::RoundRobin { cycles: 1 }, 5, "p4", 1);
    play_out(&mut t, lower_wins);
    assert_eq!(t.withdrawal(4), Some(WithdrawalEffect::Annulled));
    let with_p4: Vec<_> = t
        .games()
        .iter()
        .filter(|g| g.pairing.red == 4 || g.pairing.black == 4)
        .collect();
    assert_eq!(with_p4.len(), 1, "only the round-1 game was played");
    assert!(with_p4[0].cancelled);
    let s = t.standings();
    let last = s.rows.last().unwrap();
    assert_eq!((last.player, last.points, last.games), (4, 0.0, 0));
    assert!(
        last.tiebreaks.iter().all(|v| v.is_sign_positive()),
        "no -0 in the table: {:?}",
        last.tiebreaks
    );
    // Six games among p0-p3 count; p1 lost its round-1 win over p4.
    let total: f64 = s.rows.iter().map(|r| r.points).sum();
    assert_eq!(total, 6.0);
    assert_eq!(s.of(1).unwrap().points, 2.0);
    // Each of p0-p3 rests once by the table and once for p4's games after it
    // left (p1's round-1 game with p4 was played, then annulled).
    let rests: Vec<u32> = (0..4).map(|p| s.of(p).unwrap().byes).collect();
    assert_eq!(rests, [2, 1, 2, 2]);
    // p1 beat p4 (last, rank 5) with Red in round 1; the game is shown
    // annulled.
    let csv = t.crosstable().to_csv();
    let p1 = csv.lines().find(|l| l.contains(",p1,")).unwrap();
    assert!(p1.contains("(5r1)"), "{p1}");
}

/// Leaving after round 2, p4 has met two of four opponents (half): its
/// results stand and the games of rounds 3 and 5 are forfeited to the
/// opponents (20.3), marked "+" and "-" (21.4) and worth 1 and 0.
#[test]
fn round_robin_withdrawal_at_half_forfeits_the_rest() {
    let mut t = withdrawing(Format::RoundRobin { cycles: 1 }, 5, "p4", 2);
    let rounds = play_out(&mut t, lower_wins);
    assert_eq!(rounds, 5);
    assert_eq!(t.withdrawal(4), Some(WithdrawalEffect::Forfeited));
    let forfeits: Vec<(u32, usize, usize, Score)> = t
        .games()
        .iter()
        .filter(|g| g.forfeit)
        .map(|g| {
            (
                g.pairing.round,
                g.pairing.red,
                g.pairing.black,
                g.result.unwrap(),
            )
        })
        .collect();
    assert_eq!(forfeits, [(3, 3, 4, Score::Win), (5, 4, 0, Score::Loss)]);
    let s = t.standings();
    assert_eq!(s.of(4).unwrap().games, 4);
    assert_eq!(s.of(4).unwrap().points, 0.0);
    assert_eq!(s.of(3).unwrap().points, 1.0, "p3 beat only p4, by forfeit");
    let total: f64 = s.rows.iter().map(|r| r.points).sum();
    assert_eq!(total, 10.0);
    let csv = t.crosstable().to_csv();
    let p3 = csv.lines().find(|l| l.contains(",p3,")).unwrap();
    let p4 = csv.lines().find(|l| l.contains(",p4,")).unwrap();
    assert!(p3.contains("r+"), "{p3}");
    assert!(p4.contains("b-") && p4.contains("r-"), "{p4}");
    // The result matrix (成绩表) carries the same marks.
    let text = t.crosstable().to_text();
    let matrix_p4 = text.lines().rev().find(|l| l.contains(" p4 ")).unwrap();
    assert_eq!(matrix_p4.matches('-').count(), 2, "{text}");
}

/// 20.4: in a Swiss the results stand and the player is no longer paired;
/// the field becomes odd, so a bye appears.
#[test]
fn swiss_withdrawal_keeps_results_and_stops_pairing() {
    let mut t = withdrawing(Format::Swiss { rounds: 3 }, 6, "p5", 1);
    play_out(&mut t, lower_wins);
    assert_eq!(t.withdrawal(5), Some(WithdrawalEffect::Unpaired));
    let rounds_of_p5: Vec<u32> = t
        .games()
        .iter()
        .filter(|g| g.pairing.red == 5 || g.pairing.black == 5)
        .map(|g| g.pairing.round)
        .collect();
    assert_eq!(rounds_of_p5, [1]);
    assert_eq!(t.byes().iter().map(|b| b.round).collect::<Vec<_>>(), [2, 3]);
    assert!(t.byes().iter().all(|b| b.player != 5));
    let s = t.standings();
    assert_eq!(s.of(5).unwrap().games, 1);
    assert!(t.games().iter().all(|g| !g.cancelled && !g.forfeit));
}

/// 20.2: leaving before the start, a round robin is drawn again without the
/// player: four players, three rounds, no byes.
#[test]
fn withdrawal_before_the_start_redraws_the_round_robin() {
    let mut t = withdrawing(Format::RoundRobin { cycles: 1 }, 5, "p2", 0);
    let rounds = play_out(&mut t, lower_wins);
    assert_eq!(rounds, 3);
    assert!(t.byes().is_empty());
    assert_eq!(t.games().len(), 6);
    assert_eq!(t.withdrawal(2), Some(WithdrawalEffect::BeforeStart));
    let s = t.standings();
    assert_eq!(s.rows.last().unwrap().player, 2);
}

#[test]
fn bad_withdrawals_are_errors_naming_the_problem() {
    let mut c = config(Format::RoundRobin { cycles: 1 }, 4, 0);
    c.withdrawals.push(Withdrawal {
        name: "nobody".into(),
        after_round: 1,
    });
    assert_eq!(
        Tournament::new(c).unwrap_err(),
        TournamentError::UnknownWithdrawal("nobody".into())
    );
    let mut c = config(
        Format::Knockout {
            tiebreak: KnockoutTiebreak::default(),
        },
        4,
        0,
    );
    c.withdrawals.push(Withdrawal {
        name: "p1".into(),
        after_round: 1,
    });
    let e = Tournament::new(c).unwrap_err();
    assert!(e.to_string().contains("knockout"), "{e}");
    let mut c = config(Format::RoundRobin { cycles: 1 }, 3, 0);
    for name in ["p0", "p1"] {
        c.withdrawals.push(Withdrawal {
            name: name.into(),
            after_round: 0,
        });
    }
    assert_eq!(
        Tournament::new(c).unwrap_err(),
        TournamentError::TooFewAfterWithdrawals { remaining: 1 }
    );
}

/// Round robins and Swiss of several sizes with one player leaving after a
/// random round and random results: the event finishes, and the points
/// handed out equal the counted (not annulled) games, plus one per Swiss bye.
#[test]
fn points_always_equal_the_counted_games() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    for n in 3..=9 {
        for format in [
            Format::RoundRobin { cycles: 1 },
            Format::RoundRobin { cycles: 2 },
            Format::Swiss {
                rounds: 3.min(n as u32 - 1),
            },
        ] {
            let leaver = rng.random_range(0..n);
            let after = rng.random_range(0..5);
            let mut t = withdrawing(format, n, &format!("p{leaver}"), after);
            play_out(&mut t, |_, _| [Win, Loss][rng.random_range(0..2)]);
            assert!(t.is_finished());
            let counted = t.games().iter().filter(|g| !g.cancelled).count();
            let swiss_byes = if matches!(format, Format::Swiss { .. }) {
                t.byes().len()
            } else {
                0
            };
            let points: f64 = t.standings().rows.iter().map(|r| r.points).sum();
            assert_eq!(
                points,
                (counted + swiss_byes) as f64,
                "n={n} {format:?} p{leaver} after {after}"
            );
            // Nobody plays after leaving.
            for g in t.games().iter().filter(|g| !g.forfeit) {
                for p in [g.pairing.red, g.pairing.black] {
                    if p == leaver {
                        assert!(g.pairing.round <= after, "n={n} {format:?}");
                    }
                }
            }
        }
    }
}
