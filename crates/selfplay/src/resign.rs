//! The resignation threshold, calibrated from the games played out with resignation
//! disabled, so that at most a target share of resignations (AlphaGo Zero's 5%) would
//! have given up a game that was not lost.
//!
//! Why: a fixed threshold means a different thing for every network. Measured on the
//! project's runs (issue #23), 58-91% of the would-be resignations at -0.9 were false
//! positives, so most resigned games trained the value head on a result that play would
//! not have reached. AlphaGo Zero, Leela Zero and ELF keep that share at 5% or less by
//! choosing the threshold from the played-out games.
//!
//! Each played-out game gives, for each side, a [`ResignSample`]: its *trigger level*,
//! the lowest threshold at which it would have resigned, and whether it lost. The
//! threshold is chosen by [`calibrate`] over the newest `resign_calibration_games`
//! played-out games ([`ResignCalibration`]), at generation boundaries only: when a
//! worker run starts (each self-play phase of a sync `xqz run`, which carries the
//! calibration from one phase to the next) and when a newly accepted network is swapped
//! in (a concurrent `xqz run`, a standalone `xqz selfplay`). A game keeps the threshold
//! in force when it started. The choice depends only on the games, never on the clock,
//! and the games of one stretch enter the window in the order of their numbers, not of
//! their ending, so a seeded run reproduces.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

use crate::config::SelfplayConfig;

/// The range a calibrated threshold is kept in (root value, win − loss).
///
/// Below: -1, where resignation is off (no root value is below it). Above: -0.5, an
/// expected score of 25% (`(1 + value) / 2`). A side the network gives a quarter of the
/// points to never resigns, however few of the measured games say otherwise: with a
/// window of a few dozen games a lucky stretch without false positives would otherwise
/// lift the threshold far into positions that are still played for a draw.
pub const CALIBRATED_RANGE: (f32, f32) = (-1.0, -0.5);

/// One side of a game played out with resignation disabled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResignSample {
    /// The lowest threshold at which this side would have resigned: it resigns at
    /// threshold `t` exactly when `level < t`. Over every run of `resign_consecutive`
    /// consecutive own moves whose last is at ply `resign_min_ply` or later, the
    /// greatest root value of the run; the least of those. `f32::INFINITY` when the side
    /// had no such run (it would not have resigned at any threshold).
    pub level: f32,
    /// Whether this side lost the played-out game. A would-be resignation of a side
    /// that drew or won is a false positive.
    pub lost: bool,
}

/// The highest threshold within `bounds = (lo, hi)` at which at most `target` of the
/// sides that would resign did not lose; `None` with fewer than `min_samples` samples.
///
/// The rule: at threshold `t` the sides with `level < t` resign (strictly below, as
/// the game module's `ResignTracker` compares); their false-positive rate is the share of
/// them that did not lose, 0 when none resigns. The result is the highest `t ≤ hi` with
/// a rate `≤ target`, raised to `lo` if below it (then `lo` wins over the target; with
/// `lo = -1` that never happens, as nobody resigns at -1). The rate only changes where
/// `t` passes a sample's level, so the candidates are `hi` and the levels below it: at
/// `t` = a level, that level's sides play on. The rate is not monotonic in `t` (true
/// positives at lower levels dilute false positives at higher ones), so every candidate
/// is tried and the highest that meets the target is taken. NaN levels never resign.
pub fn calibrate(
    samples: &[ResignSample],
    target: f64,
    min_samples: usize,
    bounds: (f32, f32),
) -> Option<f32> {
    if samples.len() < min_samples {
        return None;
    }
    let (lo, hi) = bounds;
    let mut below: Vec<&ResignSample> = samples.iter().filter(|s| s.level < hi).collect();
    below.sort_by(|a, b| a.level.total_cmp(&b.level));
    #[allow(clippy::cast_precision_loss)]
    let meets = |wrong: usize, resigning: usize| {
        resigning == 0 || wrong as f64 / resigning as f64 <= target
    };
    let mut best = lo;
    let (mut resigning, mut wrong) = (0, 0);
    let mut i = 0;
    while i < below.len() {
        let level = below[i].level;
        // At t = level, exactly the sides counted so far (levels below it) resign.
        if meets(wrong, resigning) {
            best = level;
        }
        while i < below.len() && below[i].level == level {
            resigning += 1;
            wrong += usize::from(!below[i].lost);
            i += 1;
        }
    }
    if meets(wrong, resigning) {
        best = hi;
    }
    Some(best.max(lo))
}

/// A worker's calibration, carried from one worker run to the next (the self-play
/// phases of a sync `xqz run`): the threshold in force and the newest played-out games.
#[derive(Debug, Clone, PartialEq)]
pub struct ResignCalibration {
    /// `resign_target_false_positives`: 0 keeps the configured threshold.
    target: f64,
    /// `resign_calibration_games`: the window's size, and the games needed to calibrate.
    games: usize,
    threshold: f32,
    /// Both sides of each played-out game, oldest first.
    window: VecDeque<[ResignSample; 2]>,
}

impl ResignCalibration {
    /// Starts at `resign_threshold`, with an empty window.
    pub fn new(config: &SelfplayConfig) -> ResignCalibration {
        ResignCalibration {
            target: config.resign_target_false_positives,
            games: config.resign_calibration_games,
            threshold: config.resign_threshold,
            window: VecDeque::new(),
        }
    }

    /// The threshold in force.
    pub fn threshold(&self) -> f32 {
        self.threshold
    }

    /// Played-out games in the window.
    pub fn games(&self) -> usize {
        self.window.len()
    }

    /// Adds a played-out game's sides (Red, Black), dropping the oldest game beyond the
    /// window. Kept only when calibrating.
    pub fn add_game(&mut self, sides: [ResignSample; 2]) {
        if self.target <= 0.0 {
            return;
        }
        self.window.push_back(sides);
        while self.window.len() > self.games {
            self.window.pop_front();
        }
    }

    /// Calibrates the threshold from the window once it holds `resign_calibration_games`
    /// games ([`calibrate`] with the target and [`CALIBRATED_RANGE`]); keeps it
    /// otherwise, and always when the target is 0. Returns the threshold in force.
    pub fn recalibrate(&mut self) -> f32 {
        if self.target > 0.0 {
            let samples: Vec<ResignSample> = self.window.iter().flatten().copied().collect();
            if let Some(t) = calibrate(&samples, self.target, 2 * self.games, CALIBRATED_RANGE) {
                self.threshold = t;
            }
        }
        self.threshold
    }
}

/// A worker run's calibration, shared by its threads: new games read the threshold
/// (without a lock), finished played-out games are handed in as they end, and the
/// evaluation server starts a new generation when it swaps in a network.
#[derive(Debug)]
pub struct Calibrator {
    state: Mutex<Filing>,
    /// The threshold in force (`f32` bits).
    threshold: AtomicU32,
}

#[derive(Debug)]
struct Filing {
    calibration: ResignCalibration,
    /// Games finished since the last generation boundary, with their numbers: they
    /// enter the window in the order of their numbers, which does not depend on which
    /// search thread finished first.
    unfiled: Vec<(u64, [ResignSample; 2])>,
}

impl Filing {
    fn file(&mut self) {
        self.unfiled.sort_by_key(|&(id, _)| id);
        for (_, sides) in self.unfiled.drain(..) {
            self.calibration.add_game(sides);
        }
    }
}

impl Calibrator {
    /// A run's start, a generation boundary: calibrates from the carried window.
    pub fn new(mut calibration: ResignCalibration) -> Calibrator {
        let threshold = calibration.recalibrate();
        Calibrator {
            state: Mutex::new(Filing {
                calibration,
                unfiled: Vec::new(),
            }),
            threshold: AtomicU32::new(threshold.to_bits()),
        }
    }

    /// The threshold a game starting now resigns at.
    pub fn threshold(&self) -> f32 {
        f32::from_bits(self.threshold.load(Relaxed))
    }

    /// Game `id`, played out with resignation disabled, ended with these sides.
    pub fn game_finished(&self, id: u64, sides: [ResignSample; 2]) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.unfiled.push((id, sides));
    }

    /// A new network: files the games finished so far and recalibrates. Returns the
    /// threshold in force.
    pub fn new_generation(&self) -> f32 {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.file();
        let threshold = state.calibration.recalibrate();
        self.threshold.store(threshold.to_bits(), Relaxed);
        threshold
    }

    /// The run's end: the calibration with every finished game filed, for the next run.
    pub fn into_calibration(self) -> ResignCalibration {
        let mut state = self
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        state.file();
        state.calibration
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(level: f32, lost: bool) -> ResignSample {
        ResignSample { level, lost }
    }

    /// `n` samples at `level`, `wrong` of them false positives.
    fn at(level: f32, n: usize, wrong: usize) -> Vec<ResignSample> {
        (0..n).map(|i| s(level, i >= wrong)).collect()
    }

    const RANGE: (f32, f32) = CALIBRATED_RANGE;

    #[test]
    fn calibration_picks_the_highest_threshold_within_the_false_positive_target() {
        let mix: Vec<ResignSample> = [
            at(-0.99, 20, 0),
            at(-0.95, 10, 1),
            at(-0.9, 10, 4),
            at(-0.7, 10, 6),
            at(f32::INFINITY, 10, 10),
        ]
        .concat();
        let cases = [
            ("too few samples", at(-0.99, 3, 0), 0.05, 4, RANGE, None),
            (
                "all true positives: the bound",
                at(-0.99, 40, 0),
                0.05,
                4,
                RANGE,
                Some(-0.5),
            ),
            // Resigning below -0.95 gives 0 of 20 wrong, below -0.9 1 of 30 (3.3%),
            // below -0.7 5 of 40 (12.5%), below -0.5 11 of 50 (22%).
            ("a mix", mix.clone(), 0.05, 4, RANGE, Some(-0.9)),
            // The rate is "at most": 1 wrong of 20 is exactly 5%.
            (
                "at the target",
                [at(-0.99, 19, 0), at(-0.95, 1, 1), at(-0.8, 1, 1)].concat(),
                0.05,
                4,
                RANGE,
                Some(-0.8),
            ),
            ("a looser target", mix.clone(), 0.15, 4, RANGE, Some(-0.7)),
            ("no false positive allowed", mix, 0.0, 4, RANGE, Some(-0.95)),
            // Every would-be resignation wrong: only a threshold nobody is below.
            (
                "all false positives",
                at(-0.99, 40, 40),
                0.05,
                4,
                RANGE,
                Some(-0.99),
            ),
            (
                "all false positives at -1: off",
                at(-1.0, 40, 40),
                0.05,
                4,
                RANGE,
                Some(-1.0),
            ),
            // A lower bound above the answer wins over the target.
            (
                "the lower bound",
                at(-0.99, 40, 40),
                0.05,
                4,
                (-0.95, -0.5),
                Some(-0.95),
            ),
            // Levels at or above the upper bound never count.
            (
                "above the bound",
                at(-0.5, 40, 40),
                0.05,
                4,
                RANGE,
                Some(-0.5),
            ),
            (
                "no levels at all",
                at(f32::INFINITY, 40, 40),
                0.05,
                4,
                RANGE,
                Some(-0.5),
            ),
            // True positives lower down dilute a false positive higher up: the rate is
            // not monotonic, and the highest threshold that meets it counts.
            (
                "dilution",
                [at(-0.99, 1, 1), at(-0.9, 30, 0)].concat(),
                0.05,
                4,
                RANGE,
                Some(-0.5),
            ),
        ];
        for (name, samples, target, min, bounds, want) in &cases {
            assert_eq!(calibrate(samples, *target, *min, *bounds), *want, "{name}");
        }
    }

    #[test]
    fn a_side_at_the_chosen_threshold_plays_on() {
        // 1 wrong at -0.8 would make it 1 of 2: the threshold is -0.8 itself, where
        // the -0.8 side does not resign (strictly below).
        let samples = [s(-0.9, true), s(-0.8, false)];
        let t = calibrate(&samples, 0.05, 2, RANGE).unwrap();
        assert_eq!(t, -0.8);
        assert!(samples[0].level < t && samples[1].level >= t);
    }

    fn config(target: f64, games: usize) -> SelfplayConfig {
        SelfplayConfig {
            resign_threshold: -0.9,
            resign_target_false_positives: target,
            resign_calibration_games: games,
            ..SelfplayConfig::default()
        }
    }

    const WRONG: [ResignSample; 2] = [
        ResignSample {
            level: -0.99,
            lost: false,
        },
        ResignSample {
            level: 0.5,
            lost: false,
        },
    ];
    const RIGHT: [ResignSample; 2] = [
        ResignSample {
            level: -0.99,
            lost: true,
        },
        ResignSample {
            level: 0.5,
            lost: false,
        },
    ];

    #[test]
    fn the_threshold_changes_only_once_the_window_is_full_and_follows_the_newest_games() {
        let mut c = ResignCalibration::new(&config(0.05, 3));
        c.add_game(WRONG);
        c.add_game(WRONG);
        assert_eq!(c.recalibrate(), -0.9, "two games of three: kept");
        c.add_game(WRONG);
        assert_eq!(c.recalibrate(), -0.99, "Red's resignations were all wrong");
        for _ in 0..3 {
            c.add_game(RIGHT);
        }
        assert_eq!(c.games(), 3);
        assert_eq!(c.recalibrate(), -0.5, "the wrong ones left the window");
    }

    #[test]
    fn a_target_of_zero_keeps_the_configured_threshold() {
        let mut c = ResignCalibration::new(&config(0.0, 1));
        c.add_game(WRONG);
        assert_eq!((c.recalibrate(), c.games()), (-0.9, 0));
    }

    #[test]
    fn games_enter_the_window_by_number_at_a_generation_boundary() {
        // A window of one game: the one with the highest number is the newest,
        // whichever finished last.
        let calibrator = Calibrator::new(ResignCalibration::new(&config(0.05, 1)));
        assert_eq!(calibrator.threshold(), -0.9);
        calibrator.game_finished(7, RIGHT);
        calibrator.game_finished(3, WRONG);
        assert_eq!(calibrator.threshold(), -0.9, "no boundary yet");
        assert_eq!(calibrator.new_generation(), -0.5);
        assert_eq!(calibrator.threshold(), -0.5);
        calibrator.game_finished(9, WRONG);
        calibrator.game_finished(8, RIGHT);
        let carried = calibrator.into_calibration();
        assert_eq!(
            carried.threshold(),
            -0.5,
            "the end files, the next start calibrates"
        );
        assert_eq!(Calibrator::new(carried).threshold(), -0.99);
    }
}
