//! The `[selfplay]` section of a config file: every knob of a self-play worker.
//!
//! The struct is serde data with `deny_unknown_fields` (here and in its
//! `[selfplay.search]` tables), so an unknown key is an error that names it and a typo
//! never silently falls back to a default. Reading the file is the caller's: the run's
//! config file is parsed once, whole, by xq-pipeline, which hands `[selfplay]` to this
//! struct's `Deserialize` and then calls [`SelfplayConfig::validate`].

use serde::{Deserialize, Serialize};
use xq_mcts::SearchParams;

/// Why a configuration was refused: a value of the right type but out of range. The
/// message names the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("selfplay.{key} must be {need}")]
    Invalid { key: String, need: &'static str },
}

/// The self-play worker's settings (`[selfplay]`). Every field has a default, so an
/// empty section (or none at all) is a valid configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelfplayConfig {
    /// Games played at once in this process. Each step of a game's search yields
    /// `leaves_per_game` positions to evaluate, so this (times `leaves_per_game`) is
    /// what can fill the evaluator's batches: hundreds on a GPU, tens on a CPU.
    pub parallel_games: usize,
    /// Threads that step the games' searches (the games are split evenly between
    /// them). With two or more, one group's search runs while the evaluator works on
    /// another group's batch, which is what keeps the evaluator busy.
    pub search_threads: usize,
    /// libtorch intra-op CPU threads of each copy of the network (0 = libtorch's
    /// default, one per core, with a single copy; with several copies 0 means 1). 1, the
    /// default, suits the small networks self-play runs on a CPU: a forward pass never
    /// waits at an OpenMP barrier for a sibling thread that another process has
    /// descheduled. With two intra-op threads on two cores and a CPU-bound process beside
    /// it, self-play was measured at about 2% of its idle throughput (docs/BENCHMARKS.md,
    /// "Self-play on a shared machine"); `eval_workers` uses the other cores instead. A
    /// GPU evaluator is not affected.
    pub threads: usize,
    /// Copies of the network on the CPU that evaluate parts of each batch at once, each
    /// on its own thread with `threads` intra-op threads (0 = one per core this process
    /// may use: its CPU affinity and cgroup quota, as `std::thread::available_parallelism`
    /// reports them). Never more than `max_batch`, whatever the setting: a copy beyond it
    /// would never get a part of a batch. Several copies use every core without an
    /// intra-op barrier at each layer, so a competing process slows one copy's part of a
    /// batch instead of every layer of it. A GPU evaluator uses one copy.
    pub eval_workers: usize,
    /// Evaluation servers, each with its own copy of the network
    /// (`xq_nn::Evaluator::fork`), that split the search threads between them (thread
    /// `g` asks server `g mod servers`): while one server's network works on a batch,
    /// another gathers and launches the next, as KataGo runs several server threads a
    /// GPU. Each server has its own evaluation cache (a `cache_size` share) and swaps
    /// in a new network when its own games are between moves. Never more than
    /// `search_threads`. 1, the default, suits a CPU, whose cores the network copies of
    /// `eval_workers` already use.
    pub servers: usize,
    /// Leaves each game's search selects per step (with virtual loss). 1 is exact
    /// sequential MCTS per game; batching happens across games.
    pub leaves_per_game: usize,
    /// Most positions per evaluator call; also when the server stops collecting and
    /// evaluates. Near `parallel_games × leaves_per_game / search_threads` (one
    /// thread's request), each request starts an evaluator call at once while the
    /// other threads step their games (pipelining); larger values make the threads
    /// wait for each other and fill bigger batches (lockstep), which suits a network
    /// whose cost per position falls steeply with the batch size (GPUs).
    pub max_batch: usize,
    /// How long the evaluation server waits for more requests to fill a batch after
    /// the first one arrives, in milliseconds. It never waits when every search thread
    /// has already sent its request; 0 evaluates whatever has arrived.
    pub batch_timeout_ms: u64,
    /// Entries of the evaluation cache (0 disables it). Keyed by what the encoder sees,
    /// so a hit is exactly the evaluation the network would return.
    pub cache_size: usize,
    /// A side resigns when its root value (win − loss in [-1, 1]) stays below this for
    /// `resign_consecutive` of its own moves in a row. -1 or less disables resignation.
    pub resign_threshold: f32,
    /// How many consecutive own moves below the threshold trigger a resignation.
    pub resign_consecutive: u32,
    /// No resignation before this many plies of the game.
    pub resign_min_ply: u32,
    /// Share of games in which resignation is disabled. Those games are played out and
    /// report whether a resignation would have been wrong (the false-positive rate).
    pub resign_disabled_fraction: f32,
    /// The share of would-be resignations allowed to be wrong (the side drew or won),
    /// measured on the played-out games: the threshold is calibrated to the highest one
    /// that keeps it (AlphaGo Zero's 5%), within [-1, -0.5], at each generation boundary
    /// (see the `resign` module). `resign_threshold` is where it starts. 0 keeps
    /// `resign_threshold` fixed.
    pub resign_target_false_positives: f64,
    /// The played-out games the calibration looks at: the newest this many. It waits
    /// until it has that many.
    pub resign_calibration_games: usize,
    /// Soft resignation (KataGo's `reduceVisits`): no game ends by resignation. While a
    /// side would resign by the rule above, the game plays on with the playout cap's
    /// `full_probability` scaled by `resign_soft_full_scale`, so few of its decided
    /// positions cost a full search or become training data, and every game's value
    /// target is its real result: a false positive costs search time, not a wrong
    /// label. Every game is played out, so every game measures the would-be
    /// resignations (and calibrates, with `resign_target_false_positives`);
    /// `resign_disabled_fraction` must be 0. On by default: a run's config that resigns
    /// hard (`false`) must calibrate its threshold (`resign_target_false_positives`),
    /// since a fixed threshold labels wrongly resigned games with the wrong result
    /// (`xq_pipeline::config` refuses it).
    pub resign_soft: bool,
    /// With `resign_soft`: the factor on `full_probability` while a side would resign
    /// (KataGo weights such positions 0.1). 0 makes every such move a cheap search.
    pub resign_soft_full_scale: f32,
    /// Plies after which an unfinished game is adjudicated a draw.
    pub max_plies: u32,
    /// Opening book ([`crate::book`]): each game starts after 0 to this many plies,
    /// uniformly, of a line of [`crate::RunOptions::book`] (no book: the starting
    /// position). 0 starts every game from the starting position. `xqz run` and
    /// `xqz selfplay` fill the book with the training games of `[train.pretrain] pgn`.
    pub book_plies: u32,
    /// For value targets only: a drawn game (repetition, move limits, `max_plies`) in
    /// which one side ends at least this much material ahead (chariot 9, cannon 4.5,
    /// horse 4, advisor and elephant 2, soldier 1 or 2 across the river) trains the
    /// value head as that side's win. 0 disables it; PGN records keep the real result.
    /// Meant for bringing up a network from scratch on little compute.
    pub material_adjudication: f32,
    /// Finished games per output file (a chunk and a PGN file). 1 loses no finished
    /// game when the worker is killed; larger values make fewer, bigger files.
    pub games_per_file: usize,
    /// Games per thousand held out of training, chosen by a hash of the game's content
    /// (start position and moves: `xq_data::game_hash`, split as the PGN records are,
    /// salt 0), so a game a deterministic network plays again lands on the same side.
    /// Their chunks go to `data/held-out/` (`xq_data::layout::HELD_OUT_DIR`), which the
    /// replay window never reads; the trainer's loss on them shows memorisation, which
    /// its training loss cannot. 0 holds none out.
    pub held_out_permille: u32,
    /// Seconds between looks at the accepted-model pointer.
    pub model_poll_seconds: f64,
    /// Write Chinese move notation as PGN comments (`1. h2e2 {炮二平五} ...`).
    pub pgn_chinese_comments: bool,
    /// The search's knobs (`[selfplay.search]`, see `xq_mcts::SearchParams`), including
    /// playout cap randomization (`[selfplay.search.playout_cap]`), root noise and the
    /// move temperature schedule.
    pub search: SearchParams,
}

impl Default for SelfplayConfig {
    fn default() -> SelfplayConfig {
        SelfplayConfig {
            parallel_games: 128,
            search_threads: 2,
            threads: 1,
            eval_workers: 0,
            servers: 1,
            leaves_per_game: 1,
            max_batch: 256,
            batch_timeout_ms: 2,
            cache_size: 1 << 18,
            resign_threshold: -0.9,
            resign_consecutive: 3,
            resign_min_ply: 20,
            resign_disabled_fraction: 0.0,
            resign_target_false_positives: 0.0,
            resign_calibration_games: 100,
            resign_soft: true,
            resign_soft_full_scale: 0.1,
            max_plies: 400,
            book_plies: 0,
            material_adjudication: 0.0,
            games_per_file: 1,
            held_out_permille: 50,
            model_poll_seconds: 10.0,
            pgn_chinese_comments: true,
            search: SearchParams::default(),
        }
    }
}

impl SelfplayConfig {
    /// Checks every value's range; the error names the first bad key.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`].
    pub fn validate(&self) -> Result<(), ConfigError> {
        fn check(ok: bool, key: &str, need: &'static str) -> Result<(), ConfigError> {
            if ok {
                Ok(())
            } else {
                Err(ConfigError::Invalid {
                    key: key.to_owned(),
                    need,
                })
            }
        }
        check(
            (1..=65536).contains(&self.parallel_games),
            "parallel_games",
            "an integer in 1..=65536",
        )?;
        check(
            (1..=256).contains(&self.search_threads),
            "search_threads",
            "an integer in 1..=256",
        )?;
        check(self.threads <= 256, "threads", "an integer in 0..=256")?;
        check(
            self.eval_workers <= 256,
            "eval_workers",
            "an integer in 0..=256",
        )?;
        check(
            (1..=256).contains(&self.leaves_per_game),
            "leaves_per_game",
            "an integer in 1..=256",
        )?;
        check(
            (1..=64).contains(&self.servers),
            "servers",
            "an integer in 1..=64",
        )?;
        check(
            (1..=65536).contains(&self.max_batch),
            "max_batch",
            "an integer in 1..=65536",
        )?;
        check(
            self.batch_timeout_ms <= 10_000,
            "batch_timeout_ms",
            "at most 10000",
        )?;
        check(
            self.cache_size <= 1 << 30,
            "cache_size",
            "at most 2^30 entries",
        )?;
        check(
            self.resign_threshold.is_finite(),
            "resign_threshold",
            "a finite number (-1 or less disables resignation)",
        )?;
        check(
            self.resign_consecutive >= 1,
            "resign_consecutive",
            "an integer >= 1",
        )?;
        check(
            (0.0..=1.0).contains(&self.resign_disabled_fraction),
            "resign_disabled_fraction",
            "a number in [0, 1]",
        )?;
        check(
            (0.0..1.0).contains(&self.resign_target_false_positives),
            "resign_target_false_positives",
            "a number in [0, 1) (0 keeps resign_threshold fixed)",
        )?;
        let calibrating = self.resign_target_false_positives > 0.0;
        check(
            !calibrating || self.resign_enabled(),
            "resign_target_false_positives",
            "0 while resign_threshold is -1 or less (resignation off)",
        )?;
        check(
            !calibrating || self.resign_soft || self.resign_disabled_fraction > 0.0,
            "resign_target_false_positives",
            "0 while resign_disabled_fraction is 0 and resign_soft is off (no game measures false positives)",
        )?;
        check(
            !self.resign_soft || self.resign_disabled_fraction == 0.0,
            "resign_disabled_fraction",
            "0 with resign_soft (every game is played out and measures false positives)",
        )?;
        check(
            (0.0..=1.0).contains(&self.resign_soft_full_scale),
            "resign_soft_full_scale",
            "a number in [0, 1]",
        )?;
        check(
            (1..=100_000).contains(&self.resign_calibration_games),
            "resign_calibration_games",
            "an integer in 1..=100000",
        )?;
        check(
            (1..=u32::from(u16::MAX)).contains(&self.max_plies),
            "max_plies",
            "an integer in 1..=65535",
        )?;
        check(
            self.book_plies < self.max_plies,
            "book_plies",
            "an integer below max_plies",
        )?;
        check(
            self.material_adjudication.is_finite() && self.material_adjudication >= 0.0,
            "material_adjudication",
            "a finite number >= 0 (0 disables it)",
        )?;
        check(
            (1..=100_000).contains(&self.games_per_file),
            "games_per_file",
            "an integer in 1..=100000",
        )?;
        check(
            self.held_out_permille <= 1000,
            "held_out_permille",
            "an integer in 0..=1000 (games per thousand held out)",
        )?;
        check(
            self.model_poll_seconds.is_finite() && self.model_poll_seconds > 0.0,
            "model_poll_seconds",
            "a finite number > 0",
        )?;
        self.search.validate().map_err(|e| ConfigError::Invalid {
            key: format!("search.{}", e.field),
            need: e.need,
        })
    }

    /// Whether resignation can happen at all.
    pub fn resign_enabled(&self) -> bool {
        self.resign_threshold > -1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `[selfplay]` table's text (its own tables as `[search]`, …), read as the
    /// config file's reader reads the section, then range-checked.
    fn section(text: &str) -> Result<SelfplayConfig, String> {
        let c: SelfplayConfig = toml::from_str(text).map_err(|e| e.message().to_owned())?;
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }

    #[test]
    fn an_empty_section_gives_the_defaults() {
        assert_eq!(section("").unwrap(), SelfplayConfig::default());
    }

    #[test]
    fn resignation_is_soft_by_default_and_soft_without_resignation_is_no_error() {
        let d = SelfplayConfig::default();
        assert!(d.resign_enabled() && d.resign_soft && d.resign_disabled_fraction == 0.0);
        assert!(section("resign_threshold = -1\n").is_ok());
    }

    #[test]
    fn keys_override_defaults_including_nested_search_tables() {
        let text = r#"
            parallel_games = 8
            max_batch = 16
            resign_soft = false
            resign_disabled_fraction = 0.25
            resign_target_false_positives = 0.05
            resign_calibration_games = 40

            [search]
            c_puct_init = 1.5

            [search.playout_cap]
            full_visits = 32
        "#;
        let c = section(text).unwrap();
        assert_eq!(c.parallel_games, 8);
        assert_eq!(c.max_batch, 16);
        assert_eq!(c.resign_disabled_fraction, 0.25);
        assert_eq!(
            (c.resign_target_false_positives, c.resign_calibration_games),
            (0.05, 40)
        );
        assert_eq!(c.search.c_puct_init, 1.5);
        assert_eq!(c.search.playout_cap.full_visits, 32);
        let soft = section(
            "resign_soft = true\nresign_disabled_fraction = 0\nresign_target_false_positives = 0.05\n",
        )
        .unwrap();
        assert!(soft.resign_soft);
        assert_eq!(soft.resign_soft_full_scale, 0.1);
        assert_eq!(
            c.search.playout_cap.cheap_visits,
            SearchParams::default().playout_cap.cheap_visits
        );
    }

    #[test]
    fn unknown_and_invalid_keys_are_named() {
        let cases = [
            ("paralel_games = 3\n", "paralel_games"),
            ("[search]\nc_puct = 3\n", "c_puct"),
            ("max_batch = 0\n", "max_batch"),
            (
                "resign_disabled_fraction = 1.5\n",
                "resign_disabled_fraction",
            ),
            ("[search]\nbatch_size = 0\n", "search.batch_size"),
            ("max_plies = 0\n", "max_plies"),
            ("max_plies = 40\nbook_plies = 40\n", "book_plies"),
            (
                "resign_target_false_positives = 1.0\n",
                "resign_target_false_positives",
            ),
            (
                "resign_target_false_positives = 0.05\nresign_threshold = -1\n",
                "resign_target_false_positives",
            ),
            (
                "resign_soft = false\nresign_target_false_positives = 0.05\n",
                "resign_target_false_positives",
            ),
            ("resign_calibration_games = 0\n", "resign_calibration_games"),
            (
                "resign_disabled_fraction = 0.1\n",
                "resign_disabled_fraction",
            ),
            (
                "resign_soft = true\nresign_disabled_fraction = 0\nresign_soft_full_scale = 2\n",
                "resign_soft_full_scale",
            ),
            ("held_out_permille = 1001\n", "held_out_permille"),
        ];
        for (text, key) in cases {
            let err = section(text).unwrap_err();
            assert!(err.contains(key), "{text:?} gave {err:?}");
            assert!(!err.contains('\n'), "multi-line error {err:?}");
        }
    }
}
