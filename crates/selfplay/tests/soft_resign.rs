//! Soft resignation (`resign_soft`, KataGo's `reduceVisits`): a game in which a side
//! would resign is played out, its decided positions searched with the playout cap's
//! full-search probability scaled down, and its real result kept (the default); hard
//! resignation, which a config allows only with a calibrated threshold, ends the game.

mod common;

use common::{reference_game, tiny_config};
use xq_nn::UniformEvaluator;
use xq_selfplay::{SelfplayConfig, Termination};

/// Every root value of the uniform network is 0, below this threshold: each side is
/// resigning from its first search at or after `resign_min_ply` (ply 4) on.
fn resigning_config() -> SelfplayConfig {
    let mut c = tiny_config();
    c.resign_threshold = 0.99;
    c.resign_consecutive = 1;
    c.resign_min_ply = 4;
    c.resign_disabled_fraction = 0.0;
    c.resign_soft = false;
    c.search.playout_cap.full_probability = 1.0;
    c
}

#[test]
fn hard_resignation_ends_the_game_at_the_first_resigning_search() {
    let f = reference_game(&resigning_config(), 0, 7, &mut UniformEvaluator);
    assert!(
        matches!(f.termination, Termination::Resignation { .. }),
        "{:?}",
        f.termination
    );
    assert_eq!(f.moves.len(), 4, "resigned at ply 4, before its move");
    assert_eq!(f.decided_searches, 0);
}

#[test]
fn soft_resignation_plays_on_and_searches_decided_positions_at_the_scaled_rate() {
    let mut config = resigning_config();
    config.resign_soft = true;
    config.resign_soft_full_scale = 0.0;
    config.validate().unwrap();
    let cheap = reference_game(&config, 0, 7, &mut UniformEvaluator);
    assert!(
        !matches!(cheap.termination, Termination::Resignation { .. }),
        "{:?}",
        cheap.termination
    );
    let plies = u32::try_from(cheap.moves.len()).unwrap();
    assert!(plies > 5, "{plies} plies");
    // Plies 0-4 are searched in full (the search at ply 4 decides the game); every
    // later one is decided, and at scale 0 cheap, so not training data.
    assert_eq!(cheap.decided_searches, plies - 5);
    assert_eq!(cheap.full_searches, 5);
    assert_eq!(cheap.records.len(), 5);
    // A played-out game measures would-be resignations, as a no-resign game does.
    assert!(!cheap.resign_enabled);
    assert!(cheap.resign_samples.is_some());
    assert!(cheap.false_positive.is_some());

    // At scale 1 the same positions are decided but every search stays full.
    config.resign_soft_full_scale = 1.0;
    let full = reference_game(&config, 0, 7, &mut UniformEvaluator);
    let plies = u32::try_from(full.moves.len()).unwrap();
    assert_eq!(full.decided_searches, plies - 5);
    assert_eq!(full.full_searches, plies);
}
