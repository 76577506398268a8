//! Tournament configuration and driving errors.

mod common;

use common::config;
use xq_rating::GameResult;
use xq_rating::tournament::{
    Format, KnockoutTiebreak, Participant, Tournament, TournamentConfig, TournamentError,
};

#[test]
fn config_round_trips_through_json_with_defaults() {
    let json = r#"{
        "name": "club",
        "format": { "kind": "knockout" },
        "participants": [
            { "name": "net-100", "player": "mcts:runs/a/model_100.safetensors nodes=800" },
            { "name": "fsf-5", "player": "ucci:/usr/games/fairy-stockfish skill=5" }
        ]
    }"#;
    let c: TournamentConfig = serde_json::from_str(json).unwrap();
    assert_eq!(c.seed, 0);
    assert_eq!(
        c.format,
        Format::Knockout {
            tiebreak: KnockoutTiebreak {
                rapid_pairs: 1,
                armageddon: true
            }
        }
    );
    let rr: Format = serde_json::from_str(r#"{ "kind": "round_robin" }"#).unwrap();
    assert_eq!(rr, Format::RoundRobin { cycles: 1 });
    let swiss: Format = serde_json::from_str(r#"{ "kind": "swiss", "rounds": 7 }"#).unwrap();
    assert_eq!(swiss, Format::Swiss { rounds: 7 });
    let back: TournamentConfig = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
    assert_eq!(back, c);
    assert!(
        serde_json::from_str::<Format>(r#"{ "kind": "swiss" }"#).is_err(),
        "rounds is required"
    );
}

#[test]
fn bad_configs_name_the_problem() {
    let one = config(Format::RoundRobin { cycles: 1 }, 1, 0);
    assert_eq!(
        Tournament::new(one).unwrap_err(),
        TournamentError::TooFewParticipants(1)
    );
    let mut dup = config(Format::RoundRobin { cycles: 1 }, 3, 0);
    dup.participants[2] = Participant::new("p0", "x");
    let err = Tournament::new(dup).unwrap_err();
    assert_eq!(err, TournamentError::DuplicateName("p0".into()));
    assert!(err.to_string().contains("\"p0\""));
    let mut empty = config(Format::RoundRobin { cycles: 1 }, 3, 0);
    empty.participants[1].name = " ".into();
    assert_eq!(
        Tournament::new(empty).unwrap_err(),
        TournamentError::EmptyName { index: 1 }
    );
    let triple = config(Format::RoundRobin { cycles: 3 }, 3, 0);
    assert_eq!(
        Tournament::new(triple).unwrap_err(),
        TournamentError::BadCycles(3)
    );
    let zero = config(Format::Swiss { rounds: 0 }, 4, 0);
    assert!(matches!(
        Tournament::new(zero),
        Err(TournamentError::BadRounds { .. })
    ));
}

#[test]
fn results_must_match_handed_out_games() {
    let mut t = Tournament::new(config(Format::RoundRobin { cycles: 1 }, 4, 0)).unwrap();
    assert_eq!(
        t.record(0, GameResult::Win),
        Err(TournamentError::UnknownGame(0))
    );
    let games = t.next_round().unwrap();
    assert_eq!(games.len(), 2);
    assert_eq!(
        t.next_round().unwrap_err(),
        TournamentError::RoundInProgress {
            round: 1,
            pending: 2
        }
    );
    t.record(games[0].game, GameResult::Win).unwrap();
    assert_eq!(
        t.record(games[0].game, GameResult::Loss),
        Err(TournamentError::AlreadyRecorded(games[0].game))
    );
    t.record(games[1].game, GameResult::Draw).unwrap();
    assert_eq!(t.next_round().unwrap().len(), 2);
    assert!(!t.is_finished());
    // Standings are available mid-event.
    let s = t.standings();
    assert_eq!(s.rows[0].points, 1.0);
}

#[test]
fn odd_round_robin_byes_are_rest_rounds_worth_nothing() {
    let mut t = Tournament::new(config(Format::RoundRobin { cycles: 1 }, 3, 0)).unwrap();
    let mut rounds = 0;
    loop {
        let games = t.next_round().unwrap();
        if games.is_empty() {
            break;
        }
        rounds += 1;
        assert_eq!(games.len(), 1);
        assert_eq!(t.byes().last().unwrap().round, rounds);
        for g in games {
            t.record(g.game, GameResult::Draw).unwrap();
        }
    }
    assert_eq!(rounds, 3);
    assert!(
        t.standings()
            .rows
            .iter()
            .all(|r| r.points == 1.0 && r.byes == 1 && r.games == 2)
    );
    let ct = t.crosstable();
    assert!(ct.to_csv().contains("rest"));
}

/// Replaying the recorded results rebuilds the same pairings, including the
/// seeded Swiss colours and a partly played last round.
#[test]
fn replay_restores_the_state_from_config_and_results() {
    use rand::{Rng, SeedableRng};
    let cfg = config(Format::Swiss { rounds: 5 }, 9, 21);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut live = Tournament::new(cfg.clone()).unwrap();
    let mut results = Vec::new();
    for _ in 0..3 {
        for g in live.next_round().unwrap() {
            let r = [GameResult::Win, GameResult::Draw, GameResult::Loss][rng.random_range(0..3)];
            live.record(g.game, r).unwrap();
            results.push(r);
        }
    }
    let round4 = live.next_round().unwrap();
    live.record(round4[0].game, GameResult::Draw).unwrap();
    results.push(GameResult::Draw);

    let restored = Tournament::replay(cfg, &results).unwrap();
    assert_eq!(restored.games(), live.games());
    assert_eq!(restored.byes(), live.byes());
    assert_eq!(restored.pending_games(), &round4[1..]);
    assert_eq!(restored.standings(), live.standings());
}
