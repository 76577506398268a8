//! Self-play workers for xqzero: one process plays many games at once and keeps the
//! network busy.
//!
//! # Design
//!
//! - **Games** ([`game::GameState`]) are step-form [`xq_mcts::Search`]es over a
//!   [`xq_core::Game`] that judges every position by the CXA rules. `parallel_games`
//!   of them are split between `search_threads` threads; each thread steps all its
//!   games, collects their leaf requests, answers what it can from the evaluation
//!   cache and sends the rest as one request to the evaluation server.
//! - **The evaluation server** ([`server`]) runs on the thread that called [`run`] and
//!   owns the [`xq_nn::Evaluator`] (a torch model must stay on one thread). It merges
//!   the threads' requests into batches of up to `max_batch`, waiting at most
//!   `batch_timeout_ms` for more, and never waiting when every thread has sent. With
//!   two or more search threads one thread's searches run while the other's batch is
//!   evaluated. Answers go back on the asking thread's own channel, in request order.
//! - **The cache** ([`cache`]) is keyed by what the encoder sees (the history window's
//!   hashes and the no-capture counter), bounded, with clock replacement; it is
//!   cleared when the network changes.
//! - **Self-play policy**: the move temperature schedule, Dirichlet noise at the root
//!   of full searches and playout cap randomization come from
//!   [`xq_mcts::SearchParams`] (`[selfplay.search]`); only full-search positions are
//!   written as training data, with their (pruned) visit distribution. Resignation
//!   needs the root value below `resign_threshold` for `resign_consecutive` own moves
//!   in a row; a `resign_disabled_fraction` of games never resigns and reports whether
//!   a resignation would have been wrong (the false-positive rate in
//!   [`stats::Snapshot::line`] and [`stats::Snapshot::resign_false_positive_rate`]).
//!   With `resign_target_false_positives`, those games also calibrate the threshold
//!   ([`resign`]): at each generation boundary (a run's start, a network swapped in) it
//!   becomes the highest one at which at most that share of the newest
//!   `resign_calibration_games` played-out games' would-be resignations were wrong.
//!   With `resign_soft` (KataGo's `reduceVisits`) no game resigns: while a side would,
//!   the game plays on with fewer full searches (`resign_soft_full_scale`), and every
//!   game is played out and measures. A game that reaches `max_plies` is adjudicated a
//!   draw.
//! - **Openings**: with `book_plies` and a [`Book`] ([`RunOptions::book`]) a game
//!   starts after 0 to `book_plies` plies of a line drawn from its seed; those plies
//!   are played unsearched, so they are in the PGN record but give no training record.
//! - **Networks**: the caller gives the first evaluator (xq-pipeline's runs start from a
//!   network, pre-trained or freshly initialised, never from uniform play: its equal
//!   priors play each colour a different game); a [`ModelSource`] is polled on a
//!   thread of its own, and a new network is swapped in once every game has finished
//!   the search in progress (no search mixes two networks).
//! - **Progress** reaches the caller's [`Observer`]: the counters every so often and at
//!   the end, and each network that could not be loaded. The worker prints nothing.
//! - **Everything seeded**: game `i` of a worker seeded `s` gets its own seed, and its
//!   slot (and so its moves) does not depend on thread timing; with a deterministic
//!   evaluator the same seed gives the same games.
//!
//! # Run directory
//!
//! | path | content |
//! |---|---|
//! | `data/<worker>-<seq>.xqc` | training chunks (`xq_data` format), written atomically (`.tmp` + rename) |
//! | `data/held-out/<worker>-<seq>.xqc` | chunks of the games held out of training by their content hash (`held_out_permille`), for the trainer's held-out loss |
//! | `games/<worker>-<seq>.pgn` | PGN records of every game, same atomic writing |
//! | `workers/<worker>.toml` | the worker's host, pid, seed and `[selfplay]` settings |
//! | `models/accepted.json` | the accepted network ([`xq_data::layout::ACCEPTED_POINTER`]), read by `xqz selfplay` |
//!
//! Worker ids are `<host>-<pid>-<random>` ([`worker_id`]), so workers on several
//! machines can share one run directory on a shared filesystem. Each output file holds
//! `games_per_file` games (default 1): a killed worker loses only the games in
//! progress, and leaves at worst a `.tmp` file that readers ignore.
//!
//! # The `[selfplay]` config section
//!
//! Every key is optional; unknown keys are errors naming the key.
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `parallel_games` | 128 | games played at once |
//! | `search_threads` | 2 | threads stepping the games' searches |
//! | `threads` | 1 | libtorch intra-op CPU threads of each copy of the network (0 = libtorch's default with one copy, 1 with several) |
//! | `eval_workers` | 0 | copies of the network evaluating parts of each batch at once on the CPU (0 = one per usable core; at most `max_batch`) |
//! | `leaves_per_game` | 1 | leaves per game and step (virtual loss within a game) |
//! | `max_batch` | 256 | most positions per evaluator call |
//! | `batch_timeout_ms` | 2 | longest wait for a batch to fill |
//! | `cache_size` | 262144 | evaluation cache entries (0 = off) |
//! | `resign_threshold` | -0.9 | root value under which a side may resign (≤ -1 = never) |
//! | `resign_consecutive` | 3 | own moves in a row under the threshold |
//! | `resign_min_ply` | 20 | no resignation before this ply |
//! | `resign_disabled_fraction` | 0.1 | share of games that never resign and measure false positives |
//! | `resign_target_false_positives` | 0 | calibrate the threshold to at most this share of wrong would-be resignations (0 = fixed threshold) |
//! | `resign_calibration_games` | 100 | the newest played-out games the calibration looks at (it waits for that many) |
//! | `resign_soft` | false | soft resignation: decided games play on with fewer full searches instead of ending |
//! | `resign_soft_full_scale` | 0.1 | with `resign_soft`, the factor on `full_probability` while a side would resign |
//! | `max_plies` | 400 | plies after which a game is a draw |
//! | `games_per_file` | 1 | games per chunk / PGN file |
//! | `held_out_permille` | 50 | games per thousand held out of training by content hash, written to `data/held-out/` (0 = none) |
//! | `model_poll_seconds` | 10 | seconds between looks for a new accepted network |
//! | `pgn_chinese_comments` | true | Chinese notation as PGN move comments |
//! | `[selfplay.search]` | | `xq_mcts::SearchParams`: `c_puct_init`, `fpu_reduction`, `dirichlet_epsilon`, `dirichlet_alpha_scale`, `root_policy_temperature`, `[selfplay.search.temperature]`, `[selfplay.search.playout_cap]` (`full_visits`, `cheap_visits`, `full_probability`), `forced_playouts_k`, `prune_policy_target`, `algorithm` (`puct`/`gumbel`), … |
//!
//! ```
//! use xq_selfplay::{RunOptions, SelfplayConfig, NoModelUpdates, run};
//! use xq_nn::UniformEvaluator;
//!
//! let mut config = SelfplayConfig {
//!     parallel_games: 4,
//!     max_plies: 12,
//!     ..SelfplayConfig::default()
//! };
//! config.search.playout_cap.full_visits = 8;
//! config.search.playout_cap.cheap_visits = 2;
//! let options = RunOptions { games: Some(4), seed: 1, ..RunOptions::default() };
//! let summary = run(&config, &options, Box::new(UniformEvaluator), Box::new(NoModelUpdates)).unwrap();
//! assert_eq!(summary.stats.games, 4);
//! ```

pub mod bench;
pub mod book;
pub mod cache;
pub mod config;
pub mod game;
pub mod model;
pub mod pgn;
pub mod resign;
pub mod server;
pub mod stats;
pub mod worker;

pub use book::{Book, BookError};
pub use config::{ConfigError, SelfplayConfig};
pub use game::{FinishedGame, NetworkPrior, Termination};
pub use model::{ModelError, ModelSource, NoModelUpdates, PointerWatcher, content_hash};
pub use resign::{ResignCalibration, ResignSample};
pub use stats::{Observer, Snapshot};
pub use worker::{RunOptions, SelfplayError, Summary, build_chunk, run, worker_id};
