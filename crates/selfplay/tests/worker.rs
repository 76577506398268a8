//! End-to-end self-play: batched games equal games played alone, chunks read back
//! identical, same seed same games, resignation accounting, model swaps.

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{HashNet, RedDespairs, Unpacked, pgn_games, reference_game, tiny_config};
use xq_nn::encode::{EncoderConfig, PackedPlane};
use xq_nn::{
    EvalError, EvalInput, Evaluation, Evaluator, RandomEvaluator, RawEvaluator, RawOutputs,
    UniformEvaluator,
};
use xq_selfplay::game::game_seed;
use xq_selfplay::{
    Book, ModelSource, NoModelUpdates, Observer, RunOptions, SelfplayConfig, Snapshot, Summary,
    build_chunk, run,
};

fn play(
    config: &SelfplayConfig,
    dir: Option<&Path>,
    games: u64,
    seed: u64,
    evaluator: Box<dyn Evaluator>,
) -> Summary {
    let options = RunOptions {
        run_dir: dir.map(Path::to_path_buf),
        games: Some(games),
        seed,
        worker_id: Some("test-worker".into()),
        ..RunOptions::default()
    };
    run(config, &options, evaluator, Box::new(NoModelUpdates)).unwrap()
}

#[test]
fn batched_games_equal_the_same_games_played_alone_and_chunks_read_back_identical() {
    batched_equals_alone(1, 1, || Box::new(RandomEvaluator::new(3)));
}

#[test]
fn with_several_leaves_per_game_batched_games_still_equal_games_played_alone() {
    batched_equals_alone(3, 1, || Box::new(RandomEvaluator::new(3)));
}

/// Two servers, each with its copy of the network and its own cache, split the search
/// threads: every game is still the one its seed plays alone.
#[test]
fn with_two_servers_batched_games_still_equal_games_played_alone() {
    batched_equals_alone(1, 2, || Box::new(RandomEvaluator::new(3)));
    batched_equals_alone(2, 2, || Box::new(HashNet::new(2)));
}

/// A network's leaves are encoded on the search threads and its policy read there off
/// the logits the server copies back: the games are those it plays alone, where its
/// `evaluate` encodes and reads on the calling thread.
#[test]
fn a_network_fed_by_the_search_threads_plays_the_games_it_plays_alone() {
    batched_equals_alone(1, 1, || Box::new(HashNet::new(2)));
    batched_equals_alone(3, 1, || Box::new(HashNet::new(3)));
}

fn batched_equals_alone(
    leaves_per_game: usize,
    servers: usize,
    evaluator: fn() -> Box<dyn Evaluator>,
) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = tiny_config();
    config.leaves_per_game = leaves_per_game;
    config.servers = servers;
    let summary = play(&config, Some(dir.path()), 9, 11, evaluator());
    assert_eq!(summary.stats.games, 9);
    assert!(
        summary.stats.avg_batch() > 1.0,
        "no batching: {:?}",
        summary.stats
    );

    let mut reference_eval = Unpacked(evaluator());
    let reference: Vec<_> = (0..9)
        .map(|id| reference_game(&config, id, 11, &mut reference_eval))
        .collect();

    // Every game of the worker is the game its seed plays alone: one misrouted
    // evaluation would have changed its search and, with temperature, its moves.
    let games = pgn_games(&dir.path().join("games"));
    assert_eq!(games.len(), 9);
    for (round, moves, result, termination) in &games {
        let r = &reference[*round as usize];
        assert_eq!(moves, &r.moves, "game {round} differs from its reference");
        assert_eq!(result, r.termination.outcome().pgn(), "game {round}");
        assert_eq!(termination, r.termination.name(), "game {round}");
    }

    // Each chunk (one game per file) reads back exactly as built from that game.
    let mut chunks = 0;
    for entry in std::fs::read_dir(dir.path().join("data")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(
            name.starts_with("test-worker-") && name.ends_with(".xqc"),
            "{name}"
        );
        let read = xq_data::read_chunk(&path).unwrap();
        assert_eq!(read.games.len(), 1);
        let r = reference
            .iter()
            .find(|r| r.moves == read.games[0].moves)
            .expect("chunk of an unknown game");
        let built = build_chunk(&[r], "test-worker", 11).unwrap();
        assert_eq!(read, built, "{name}");
        assert_eq!(read.records.len(), r.records.len());
        assert_eq!(read.records.len() as u32, r.full_searches);
        chunks += 1;
    }
    let with_records = reference.iter().filter(|r| !r.records.is_empty()).count();
    assert_eq!(chunks, with_records);
    assert!(chunks > 0);
    assert_eq!(
        summary.stats.records,
        reference
            .iter()
            .map(|r| r.records.len() as u64)
            .sum::<u64>()
    );
}

/// The moves of every game in the chunk files of `dir` (not of its subdirectories),
/// sorted; none when `dir` does not exist.
fn chunk_games(dir: &Path) -> Vec<Vec<xq_core::Move>> {
    let mut games = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let chunk = xq_data::read_chunk(&path).unwrap();
            games.extend(chunk.games.into_iter().map(|g| g.moves));
        }
    }
    games.sort();
    games
}

#[test]
fn games_start_from_book_openings_and_train_only_on_searched_positions() {
    let mut config = tiny_config();
    config.search.playout_cap.full_probability = 1.0;
    config.book_plies = 4;
    let start = xq_core::Position::startpos();
    let line = |iccs: &str| {
        let mut game = xq_core::Game::new(start.clone());
        let moves: Vec<_> = iccs
            .split_whitespace()
            .map(|m| game.play_iccs(m).unwrap())
            .collect();
        (start.clone(), moves)
    };
    let book = Arc::new(
        Book::new(vec![
            line("h2e2 h9g7 h0g2 b9c7 b2c2"),
            line("c3c4 g9e7 b0c2 h9g7"),
        ])
        .unwrap(),
    );
    let dir = tempfile::tempdir().unwrap();
    let options = RunOptions {
        run_dir: Some(dir.path().to_path_buf()),
        games: Some(8),
        seed: 5,
        worker_id: Some("test-worker".into()),
        book: Some(Arc::clone(&book)),
        ..RunOptions::default()
    };
    run(
        &config,
        &options,
        Box::new(UniformEvaluator),
        Box::new(NoModelUpdates),
    )
    .unwrap();

    // Each game's record begins with the opening its seed draws from the book.
    let games = pgn_games(&dir.path().join("games"));
    assert_eq!(games.len(), 8);
    let mut book_plies = std::collections::HashMap::new();
    for (round, moves, ..) in &games {
        let opening: Vec<_> = book.opening(game_seed(5, *round), 4).moves().collect();
        assert!(
            moves.starts_with(&opening),
            "game {round}: {moves:?} after {opening:?}"
        );
        book_plies.insert(moves.clone(), opening.len());
    }
    assert!(
        book_plies.values().any(|&k| k > 0),
        "no game started from a book line: {book_plies:?}"
    );
    // Every searched position is a record, and no book ply is.
    for entry in std::fs::read_dir(dir.path().join("data")).unwrap() {
        let chunk = xq_data::read_chunk(&entry.unwrap().path()).unwrap();
        for r in &chunk.records {
            let game = &chunk.games[r.game as usize];
            let k = book_plies[&game.moves];
            assert!(usize::from(r.ply) >= k, "a record at book ply {}", r.ply);
        }
        for (g, game) in chunk.games.iter().enumerate() {
            let records = chunk
                .records
                .iter()
                .filter(|r| r.game as usize == g)
                .count();
            assert_eq!(records, game.moves.len() - book_plies[&game.moves]);
        }
    }
}

#[test]
fn held_out_games_go_to_their_own_directory_and_never_to_data() {
    let mut config = tiny_config();
    // Every game has full searches, so every game is in a chunk.
    config.search.playout_cap.full_probability = 1.0;
    for permille in [1000, 0] {
        config.held_out_permille = permille;
        let dir = tempfile::tempdir().unwrap();
        let stats = play(&config, Some(dir.path()), 4, 7, Box::new(UniformEvaluator)).stats;
        let mut played: Vec<_> = pgn_games(&dir.path().join("games"))
            .into_iter()
            .map(|g| g.1)
            .collect();
        played.sort();
        assert_eq!(played.len(), 4);
        let data = chunk_games(&dir.path().join(xq_data::layout::DATA_DIR));
        let held_out_dir = dir.path().join(xq_data::layout::HELD_OUT_DIR);
        let held_out = chunk_games(&held_out_dir);
        if permille == 1000 {
            assert!(data.is_empty(), "{} games trained on", data.len());
            assert_eq!(held_out, played);
            assert_eq!(stats.held_out, 4);
        } else {
            assert_eq!(data, played);
            assert!(!held_out_dir.exists(), "a held-out directory without games");
            assert_eq!(stats.held_out, 0);
        }
    }
}

#[test]
fn the_same_seed_plays_the_same_games_and_another_seed_does_not() {
    let mut config = tiny_config();
    config.search_threads = 1;
    let runs: Vec<_> = [5u64, 5, 6]
        .iter()
        .map(|&seed| {
            let dir = tempfile::tempdir().unwrap();
            play(
                &config,
                Some(dir.path()),
                4,
                seed,
                Box::new(UniformEvaluator),
            );
            pgn_games(&dir.path().join("games"))
        })
        .collect();
    assert_eq!(runs[0].len(), 4);
    assert_eq!(runs[0], runs[1]);
    assert_ne!(runs[0], runs[2]);
}

#[test]
fn resignation_ends_games_and_disabled_games_count_false_positives() {
    let mut config = tiny_config();
    config.resign_threshold = -0.5;
    config.resign_consecutive = 2;
    config.resign_min_ply = 0;
    // Hard resignation: games end by it, and played-out games count false positives.
    config.resign_soft = false;

    // Resignation always on: Red resigns at its second move (ply 2).
    config.resign_disabled_fraction = 0.0;
    let dir = tempfile::tempdir().unwrap();
    let s = play(&config, Some(dir.path()), 4, 1, Box::new(RedDespairs)).stats;
    assert_eq!(s.resignations, 4);
    assert_eq!(
        (s.no_resign_games, s.would_resign, s.false_positives),
        (0, 0, 0)
    );
    for (round, moves, result, termination) in pgn_games(&dir.path().join("games")) {
        assert_eq!((moves.len(), result.as_str()), (2, "0-1"), "game {round}");
        assert_eq!(termination, "resignation");
    }

    // Resignation always off: every game had a would-be resignation by Red, and it was
    // wrong exactly when Red did not lose the played-out game.
    config.resign_disabled_fraction = 1.0;
    let dir = tempfile::tempdir().unwrap();
    let s = play(&config, Some(dir.path()), 4, 1, Box::new(RedDespairs)).stats;
    assert_eq!(
        (s.resignations, s.no_resign_games, s.would_resign),
        (0, 4, 4)
    );
    let games = pgn_games(&dir.path().join("games"));
    let red_not_lost = games.iter().filter(|g| g.2 != "0-1").count() as u64;
    assert_eq!(s.false_positives, red_not_lost);
    assert!(red_not_lost > 0, "every game lost by Red: {games:?}");
    assert!((s.resign_false_positive_rate() - red_not_lost as f64 / 4.0).abs() < 1e-9);
}

/// Resignation calibrated to 5% false positives over windows of 4 played-out games,
/// with `RedDespairs`: Red's root value is -1 from its first move on, and a 24-ply game
/// is rarely lost, so Red's would-be resignations are nearly all wrong.
fn calibrating() -> SelfplayConfig {
    let mut config = tiny_config();
    config.resign_threshold = -0.5;
    config.resign_consecutive = 2;
    config.resign_min_ply = 0;
    // Hard resignation: games end by it, and played-out games count false positives.
    config.resign_soft = false;
    config.resign_target_false_positives = 0.05;
    config.resign_calibration_games = 4;
    config
}

fn play_on(
    config: &SelfplayConfig,
    resign: Option<xq_selfplay::ResignCalibration>,
    games: u64,
) -> Summary {
    let options = RunOptions {
        games: Some(games),
        seed: 1,
        resign,
        ..RunOptions::default()
    };
    run(
        config,
        &options,
        Box::new(RedDespairs),
        Box::new(NoModelUpdates),
    )
    .unwrap()
}

#[test]
fn the_threshold_is_calibrated_from_played_out_games_and_carried_to_the_next_run() {
    let mut config = calibrating();
    // Every game played out: the threshold stays while the run plays, and the
    // calibration it ends with has seen the wrong resignations.
    config.resign_disabled_fraction = 1.0;
    let first = play_on(&config, None, 4);
    assert_eq!(first.stats.resign_threshold, -0.5);
    assert!(
        first.stats.false_positives * 20 > first.stats.would_resign,
        "precondition: the would-be resignations were mostly right: {:?}",
        first.stats
    );
    assert_eq!(first.resign.games(), 4);

    // The next run starts with the calibrated threshold: only -1, resignation off,
    // keeps the target, so the games that may resign no longer do.
    config.resign_disabled_fraction = 0.5;
    let second = play_on(&config, Some(first.resign), 8);
    assert_eq!(second.stats.resign_threshold, -1.0);
    assert_eq!(second.stats.resignations, 0, "{:?}", second.stats);
    assert_eq!(second.resign.games(), 4, "the newest 4 played-out games");

    // Without the carried calibration the same run resigns.
    let fresh = play_on(&config, None, 8);
    assert_eq!(fresh.stats.resign_threshold, -0.5);
    assert!(fresh.stats.resignations > 0, "{:?}", fresh.stats);
}

/// Counts finished games for [`AfterGames`] and keeps each report's threshold.
#[derive(Default)]
struct Thresholds {
    games: Arc<AtomicU64>,
    seen: Mutex<Vec<f32>>,
}

impl Observer for Thresholds {
    fn every(&self) -> Duration {
        Duration::from_millis(5)
    }
    fn progress(&self, s: &Snapshot) {
        self.games.store(s.games, Ordering::Relaxed);
        self.seen.lock().unwrap().push(s.resign_threshold);
    }
    fn finished(&self, _: &Snapshot) {}
    fn model_skipped(&self, _: &str) {}
}

/// Offers one network once `after` games have finished.
struct AfterGames {
    games: Arc<AtomicU64>,
    after: u64,
    next: Option<Box<dyn Evaluator>>,
}

impl ModelSource for AfterGames {
    fn poll(&mut self) -> Result<Option<Box<dyn Evaluator>>, xq_selfplay::ModelError> {
        if self.games.load(Ordering::Relaxed) < self.after {
            return Ok(None);
        }
        Ok(self.next.take())
    }
}

/// `RedDespairs` that stops the run once used.
struct DespairsThenStops(Arc<AtomicBool>);

impl Evaluator for DespairsThenStops {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        self.0.store(true, Ordering::Relaxed);
        RedDespairs.evaluate(batch)
    }
    fn name(&self) -> String {
        "red-despairs-2".into()
    }
}

#[test]
fn a_swapped_in_network_starts_a_generation_with_a_recalibrated_threshold() {
    let mut config = calibrating();
    config.resign_disabled_fraction = 1.0;
    config.model_poll_seconds = 0.01;
    let observer = Arc::new(Thresholds::default());
    let stop = Arc::new(AtomicBool::new(false));
    let options = RunOptions {
        games: None,
        seed: 1,
        stop: Some(stop.clone()),
        observer: Some(observer.clone()),
        ..RunOptions::default()
    };
    let models = AfterGames {
        games: observer.games.clone(),
        after: 4,
        next: Some(Box::new(DespairsThenStops(stop))),
    };
    let summary = run(&config, &options, Box::new(RedDespairs), Box::new(models)).unwrap();
    assert_eq!(summary.stats.model_swaps, 1);
    assert_eq!(observer.seen.lock().unwrap().first(), Some(&-0.5));
    assert_eq!(summary.stats.resign_threshold, -1.0, "{:?}", summary.stats);
}

/// Records which evaluator served each batch; the new one stops the run once used.
struct Logged {
    name: &'static str,
    log: Arc<Mutex<Vec<&'static str>>>,
    stop: Option<Arc<AtomicBool>>,
}

impl Evaluator for Logged {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        self.log.lock().unwrap().push(self.name);
        if let Some(s) = &self.stop {
            s.store(true, Ordering::Relaxed);
        }
        UniformEvaluator.evaluate(batch)
    }
    fn name(&self) -> String {
        self.name.into()
    }
}

struct OneUpdate(Option<Box<dyn Evaluator>>);

impl ModelSource for OneUpdate {
    fn poll(&mut self) -> Result<Option<Box<dyn Evaluator>>, xq_selfplay::ModelError> {
        Ok(self.0.take())
    }
}

#[test]
fn a_new_model_is_swapped_in_once_every_game_is_between_searches() {
    let mut config = tiny_config();
    config.model_poll_seconds = 0.01;
    config.max_plies = 400;
    let log = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let old = Logged {
        name: "old",
        log: log.clone(),
        stop: None,
    };
    let new = Logged {
        name: "new",
        log: log.clone(),
        stop: Some(stop.clone()),
    };
    let options = RunOptions {
        games: None,
        seed: 2,
        stop: Some(stop.clone()),
        ..RunOptions::default()
    };
    let summary = run(
        &config,
        &options,
        Box::new(old),
        Box::new(OneUpdate(Some(Box::new(new)))),
    )
    .unwrap();
    assert_eq!(summary.stats.model_swaps, 1);
    let log = log.lock().unwrap();
    let first_new = log
        .iter()
        .position(|&n| n == "new")
        .expect("new model never used");
    assert!(first_new > 0);
    assert!(
        log[first_new..].iter().all(|&n| n == "new"),
        "old model used after the swap"
    );
    assert!(summary.stats.games >= 1);
}

/// A [`HashNet`] that counts its packed calls and stops the run after `stop_after`.
struct CountedNet {
    net: HashNet,
    calls: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    stop_after: u64,
}

impl RawEvaluator for CountedNet {
    fn encoder(&self) -> EncoderConfig {
        self.net.encoder()
    }
    fn forward_packed(&mut self, parts: &[&[PackedPlane]]) -> Result<RawOutputs<'_>, EvalError> {
        if self.calls.fetch_add(1, Ordering::Relaxed) + 1 >= self.stop_after {
            self.stop.store(true, Ordering::Relaxed);
        }
        self.net.forward_packed(parts)
    }
}

impl Evaluator for CountedNet {
    fn evaluate(&mut self, _: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        Err(EvalError::Backend(
            "self-play must take the packed path".into(),
        ))
    }
    fn name(&self) -> String {
        self.net.name()
    }
    fn raw(&mut self) -> Option<&mut dyn RawEvaluator> {
        Some(self)
    }
    fn fork(&self) -> Option<Result<Box<dyn Evaluator>, EvalError>> {
        Some(Ok(Box::new(CountedNet {
            net: HashNet::new(self.net.encoder().history),
            calls: self.calls.clone(),
            stop: self.stop.clone(),
            stop_after: self.stop_after,
        })))
    }
}

/// A run that starts on the uniform evaluator (leaves sent whole) and swaps in a
/// network (leaves encoded by the search threads) plays on through the swap: every
/// thread learns the new encoding with the resume.
#[test]
fn a_swap_from_a_stand_in_to_a_network_switches_the_threads_to_packed_inputs() {
    swap_to_a_network(1);
}

/// With two servers each swaps its own copy in when its own games are between moves;
/// the swap counts once.
#[test]
fn with_two_servers_each_swaps_in_its_own_copy_of_the_network() {
    swap_to_a_network(2);
}

fn swap_to_a_network(servers: usize) {
    let mut config = tiny_config();
    config.servers = servers;
    config.model_poll_seconds = 0.01;
    config.max_plies = 400;
    let stop = Arc::new(AtomicBool::new(false));
    let calls = Arc::new(AtomicU64::new(0));
    let net = CountedNet {
        net: HashNet::new(2),
        calls: calls.clone(),
        stop: stop.clone(),
        stop_after: 100 * servers as u64,
    };
    let summary = run(
        &config,
        &RunOptions {
            games: None,
            seed: 4,
            stop: Some(stop.clone()),
            // A swap that never happens fails the asserts below instead of hanging.
            deadline: Some(std::time::Instant::now() + Duration::from_secs(60)),
            ..RunOptions::default()
        },
        Box::new(UniformEvaluator),
        Box::new(OneUpdate(Some(Box::new(net)))),
    )
    .unwrap();
    assert_eq!(summary.stats.model_swaps, 1);
    assert!(
        calls.load(Ordering::Relaxed) >= 100 * servers as u64,
        "the network was not used"
    );
    assert!(summary.stats.games >= 1);
}

/// Several servers need copies of the evaluator: one that cannot be copied is an error
/// naming it before any game.
#[test]
fn two_servers_with_an_evaluator_that_cannot_be_copied_is_an_error() {
    let mut config = tiny_config();
    config.servers = 2;
    let log = Arc::new(Mutex::new(Vec::new()));
    let only = Logged {
        name: "only-one",
        log,
        stop: None,
    };
    let err = run(
        &config,
        &RunOptions {
            games: Some(2),
            ..RunOptions::default()
        },
        Box::new(only),
        Box::new(NoModelUpdates),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("only-one cannot be copied for 2 servers"),
        "{err}"
    );
}

/// A source whose network never loads.
struct Broken;

impl ModelSource for Broken {
    fn poll(&mut self) -> Result<Option<Box<dyn Evaluator>>, xq_selfplay::ModelError> {
        Err(xq_selfplay::ModelError::new("half-copied weights"))
    }
}

/// Records the calls of an observer; stops the run at the first skipped network.
#[derive(Default)]
struct Recorded {
    stop: Arc<AtomicBool>,
    skipped: Mutex<Vec<String>>,
    finished: Mutex<Option<Snapshot>>,
}

impl Observer for Recorded {
    fn every(&self) -> Duration {
        Duration::from_millis(5)
    }
    fn progress(&self, _: &Snapshot) {}
    fn finished(&self, s: &Snapshot) {
        *self.finished.lock().unwrap() = Some(s.clone());
    }
    fn model_skipped(&self, error: &str) {
        self.skipped.lock().unwrap().push(error.to_owned());
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[test]
fn a_network_that_cannot_be_loaded_reaches_the_observer_and_play_goes_on() {
    let mut config = tiny_config();
    config.model_poll_seconds = 0.01;
    config.max_plies = 400;
    let recorded = Arc::new(Recorded::default());
    let options = RunOptions {
        games: None,
        seed: 3,
        stop: Some(recorded.stop.clone()),
        observer: Some(recorded.clone()),
        ..RunOptions::default()
    };
    let summary = run(
        &config,
        &options,
        Box::new(UniformEvaluator),
        Box::new(Broken),
    )
    .unwrap();
    // The games under way when the stop came were played to the end.
    assert!(summary.stats.games >= 1, "{:?}", summary.stats);
    assert_eq!(summary.stats.model_swaps, 0);
    let skipped = recorded.skipped.lock().unwrap();
    assert!(!skipped.is_empty(), "no skipped network reported");
    assert!(skipped.iter().all(|e| e == "half-copied weights"));
    assert_eq!(
        recorded.finished.lock().unwrap().as_ref(),
        Some(&summary.stats),
        "the final counters are the summary's"
    );
}

#[test]
fn files_hold_games_per_file_games_and_the_rest_is_written_at_the_end() {
    let mut config = tiny_config();
    config.games_per_file = 3;
    let dir = tempfile::tempdir().unwrap();
    play(&config, Some(dir.path()), 7, 4, Box::new(UniformEvaluator));
    let mut per_file: Vec<usize> = std::fs::read_dir(dir.path().join("games"))
        .unwrap()
        .map(|e| {
            let text = std::fs::read_to_string(e.unwrap().path()).unwrap();
            xq_data::read_pgn(&text).len()
        })
        .collect();
    per_file.sort();
    assert_eq!(per_file, vec![1, 3, 3]);
    assert_eq!(pgn_games(&dir.path().join("games")).len(), 7);
}

#[test]
fn an_unusable_run_directory_is_an_error_naming_it_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let options = RunOptions {
        run_dir: Some(file.clone()),
        games: Some(1),
        ..RunOptions::default()
    };
    let err = run(
        &tiny_config(),
        &options,
        Box::new(UniformEvaluator),
        Box::new(NoModelUpdates),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("not-a-dir"), "{err}");
}

#[test]
fn drawn_games_with_a_material_lead_write_that_sides_win_as_value_target_and_keep_the_real_pgn_result()
 {
    let mut config = tiny_config();
    config.max_plies = 40;
    config.material_adjudication = 1.0;
    let dir = tempfile::tempdir().unwrap();
    play(
        &config,
        Some(dir.path()),
        8,
        21,
        Box::new(RandomEvaluator::new(5)),
    );

    let mut reference_eval = RandomEvaluator::new(5);
    let reference: Vec<_> = (0..8)
        .map(|id| reference_game(&config, id, 21, &mut reference_eval))
        .collect();
    let mut adjudicated = 0;
    for r in &reference {
        let mut last = r.start.clone();
        for &m in &r.moves {
            last.play_unchecked(m);
        }
        let want = xq_selfplay::game::value_target(r.termination, &last, 1.0);
        assert_eq!(r.target, want);
        if r.target != r.termination.outcome() {
            adjudicated += 1;
        }
    }
    assert!(adjudicated > 0, "no drawn game had a material lead");

    // The PGN keeps the real result; each chunk's records carry the adjudicated one.
    for (round, _, result, _) in pgn_games(&dir.path().join("games")) {
        let r = &reference[round as usize];
        assert_eq!(result, r.termination.outcome().pgn(), "game {round}");
    }
    for entry in std::fs::read_dir(dir.path().join("data")).unwrap() {
        let chunk = xq_data::read_chunk(&entry.unwrap().path()).unwrap();
        let r = reference
            .iter()
            .find(|r| r.moves == chunk.games[0].moves)
            .expect("chunk of an unknown game");
        for rec in &chunk.records {
            let side = if rec.ply % 2 == 0 {
                r.start.turn()
            } else {
                r.start.turn().other()
            };
            assert_eq!(rec.result, Some(r.target.for_side(side)));
        }
    }
}

#[test]
fn games_in_progress_at_the_deadline_are_abandoned_and_only_finished_ones_written() {
    let mut config = tiny_config();
    config.max_plies = 400;
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let options = RunOptions {
        run_dir: Some(dir.path().to_path_buf()),
        games: None,
        seed: 4,
        deadline: Some(started + std::time::Duration::from_millis(300)),
        ..RunOptions::default()
    };
    let summary = run(
        &config,
        &options,
        Box::new(RandomEvaluator::new(1)),
        Box::new(NoModelUpdates),
    )
    .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(summary.stats.abandoned >= 1, "{:?}", summary.stats);
    assert_eq!(
        pgn_games(&dir.path().join("games")).len() as u64,
        summary.stats.games
    );
}

/// A scheduler's SIGTERM (`scancel`) sets the interrupt: the worker stops at once, and
/// the finished games still waiting to fill a chunk are written, not lost.
#[test]
fn an_interrupt_writes_every_finished_game_and_abandons_the_rest() {
    let mut config = tiny_config();
    config.games_per_file = 1000;
    let dir = tempfile::tempdir().unwrap();
    let interrupt = Arc::new(AtomicBool::new(false));
    let options = RunOptions {
        run_dir: Some(dir.path().to_path_buf()),
        games: None,
        seed: 5,
        interrupt: Some(Arc::clone(&interrupt)),
        observer: Some(Arc::new(InterruptAfter {
            games: 3,
            interrupt: Arc::clone(&interrupt),
        })),
        ..RunOptions::default()
    };
    let summary = run(
        &config,
        &options,
        Box::new(RandomEvaluator::new(1)),
        Box::new(NoModelUpdates),
    )
    .unwrap();
    assert!(summary.stats.games >= 3, "{:?}", summary.stats);
    let mut chunked = 0u64;
    for entry in std::fs::read_dir(dir.path().join("data")).unwrap() {
        chunked += xq_data::read_chunk(&entry.unwrap().path())
            .unwrap()
            .games
            .len() as u64;
    }
    assert_eq!(chunked, summary.stats.games, "{:?}", summary.stats);
    assert_eq!(
        pgn_games(&dir.path().join("games")).len() as u64,
        summary.stats.games
    );
    assert!(summary.stats.abandoned >= 1, "{:?}", summary.stats);
}

/// Raises the interrupt once `games` games are finished.
struct InterruptAfter {
    games: u64,
    interrupt: Arc<AtomicBool>,
}

impl Observer for InterruptAfter {
    fn every(&self) -> Duration {
        Duration::from_millis(5)
    }
    fn progress(&self, s: &Snapshot) {
        if s.games >= self.games {
            self.interrupt.store(true, Ordering::Relaxed);
        }
    }
    fn finished(&self, _: &Snapshot) {}
    fn model_skipped(&self, error: &str) {
        panic!("no network to skip: {error}");
    }
}

#[test]
fn gumbel_targets_on_the_network_prior_use_the_recovered_prior_and_need_one() {
    use xq_selfplay::NetworkPrior;
    use xq_selfplay::game::{GameState, Step};

    let mut config = tiny_config();
    config.search.algorithm = xq_mcts::RootAlgorithm::Gumbel;
    config.search.leaf_quiescence = 0.5;
    config.search.gumbel.target_prior = xq_mcts::TargetPrior::Network;
    config.search.playout_cap.full_probability = 1.0;

    // Without the blend's inverse the run is refused before any game, naming the key.
    let options = RunOptions {
        games: Some(1),
        ..RunOptions::default()
    };
    let err = run(
        &config,
        &options,
        Box::new(RandomEvaluator::new(3)),
        Box::new(NoModelUpdates),
    )
    .unwrap_err();
    assert!(err.to_string().contains("gumbel.target_prior"), "{err}");
    assert!(
        GameState::new(&config, 0, 1, "x".into())
            .unwrap()
            .with_network_prior(&config, None)
            .is_err()
    );

    // With one, the record is the target built on the prior it gives (here uniform,
    // whatever the evaluator said), not the one the search started from.
    let uniform = |n: usize| vec![1.0 / n as f32; n];
    let prior = NetworkPrior::new(move |_, moves, _| uniform(moves.len()));
    let mut state = GameState::new(&config, 0, 1, "x".into())
        .unwrap()
        .with_network_prior(&config, Some(prior))
        .unwrap();
    state.start_search().unwrap();
    let mut ev = RandomEvaluator::new(3);
    while !state.search.is_finished() {
        if !state.search.select_leaves(1).is_empty() {
            let inputs: Vec<_> = state.search.pending().iter().map(|r| r.input()).collect();
            let evals = ev.evaluate(&inputs).unwrap();
            state.search.apply(&evals).unwrap();
        }
    }
    let searched = state.search.result();
    let on_uniform = state
        .search
        .gumbel_target_on(&uniform(searched.moves.len()))
        .unwrap();
    assert!(matches!(
        state.after_search(&config).unwrap(),
        Step::Continue
    ));
    let recorded: Vec<f32> = state.records[0].policy.iter().map(|&(_, w)| w).collect();
    assert_eq!(recorded, on_uniform);
    assert_ne!(recorded, searched.policy_target);
}
