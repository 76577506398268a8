//! Matches between two players: paired openings, concurrency, statistics, SPRT.
//!
//! Games are played in colour-reversed pairs on the same opening (pair `i` uses
//! [`openings::nth`]: the suite's line `i` while the suite lasts, then the lines again
//! deepened by two random balanced plies; in its first game player A has Red). Several pairs run at once, each
//! worker thread with its own player instances, and every game gets a seed derived from
//! the match seed and its index, so with node or depth limits the results do not depend
//! on the number of workers. After each finished pair the pentanomial statistics are
//! updated and, with an SPRT configured, the match stops as soon as it is decided
//! (pairs already under way are finished and counted).
//!
//! A match may have a deadline ([`run_match_until`]): no pair starts that the time left
//! cannot fit (estimated from the mean wall time of the pairs finished so far), and the
//! games still under way when the deadline comes are stopped between moves and their
//! pairs discarded. A stopped game has no result, and counting the finished half of a
//! pair alone would undo the colour balance that pairing exists for; the report says
//! how many games were discarded and why the match ended early ([`Cutoff`]).
//!
//! A pair with a game that neither player could start (a double forfeit, 21.3) is
//! discarded too: the game has no winner and is no draw, so it has no place in the
//! statistics.

use std::{
    fs::OpenOptions,
    io::Write,
    path::PathBuf,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
        mpsc,
    },
    thread,
    time::{Duration, Instant},
};

use xq_core::{Color, hash};
use xq_rating::{
    GameResult,
    result::Score,
    stats::{Pentanomial, SprtConfig, SprtDecision, Trinomial},
    summary::{Cutoff, MatchStatus, MatchSummary},
};

use crate::{
    openings::{self, Opening},
    player::{Player, PlayerError},
    referee::{GameSettings, PlayedGame, play_game_until, to_pgn},
};

/// Builds a fresh instance of a player (one per worker thread).
pub type PlayerFactory<'a> = dyn Fn() -> Result<Box<dyn Player>, PlayerError> + Sync + 'a;

/// How a match is played.
#[derive(Debug, Clone)]
pub struct MatchConfig {
    /// Most games to play (rounded up to whole pairs).
    pub games: usize,
    /// Pairs played at once.
    pub concurrency: usize,
    pub settings: GameSettings,
    pub openings: Vec<Opening>,
    pub sprt: Option<SprtConfig>,
    pub seed: u64,
    /// Append every game to this PGN file as it finishes.
    pub pgn_out: Option<PathBuf>,
    pub event: String,
}

/// The finished match.
#[derive(Debug, Clone)]
pub struct MatchReport {
    pub status: MatchStatus,
    /// Every game, in the order of their index (pair-major).
    pub games: Vec<PlayedGame>,
    /// The SPRT's decision, if one was configured.
    pub decision: Option<SprtDecision>,
    /// Why the match ended before its planned games for lack of time, if it did.
    pub cutoff: Option<Cutoff>,
    /// Games played (or under way) in pairs that the deadline cut, or in pairs with a
    /// double forfeit (21.3), that are not counted (nor listed in `games`).
    pub discarded_games: usize,
}

impl MatchReport {
    /// The match's result as a [`MatchSummary`].
    pub fn summary(&self) -> MatchSummary {
        self.status
            .summary(self.decision, self.cutoff, self.discarded_games as u64)
    }
}

/// What can stop a match from being played at all.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    #[error("no openings to play")]
    NoOpenings,
    #[error("cannot create player: {0}")]
    Player(#[from] PlayerError),
    #[error("cannot write PGN {path}: {source}")]
    Pgn {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A's result in a game where A had `a_color`.
fn result_for(game: &PlayedGame, a_color: Color) -> GameResult {
    match game.winner {
        None => GameResult::Draw,
        Some(w) if w == a_color => GameResult::Win,
        Some(_) => GameResult::Loss,
    }
}

/// Seed of game `index` of a match seeded `seed` ([`xq_core::hash::seed_of`]).
pub fn game_seed(seed: u64, index: usize) -> u64 {
    hash::seed_of(seed, index as u64)
}

/// Plays a match between `a` and `b`; `progress` is called after every finished pair.
///
/// # Errors
/// If there are no openings, a player cannot be created, or the PGN file cannot be
/// written. Player failures during games are forfeits, not errors.
pub fn run_match(
    a: &PlayerFactory<'_>,
    b: &PlayerFactory<'_>,
    config: &MatchConfig,
    progress: &mut dyn FnMut(&MatchStatus),
) -> Result<MatchReport, MatchError> {
    run_match_until(a, b, config, None, progress)
}

/// The mean wall time of the pairs finished so far: what the next pair is expected to
/// take.
#[derive(Debug, Default)]
struct Pace {
    total: Duration,
    pairs: u32,
}

impl Pace {
    fn expected(&self) -> Option<Duration> {
        (self.pairs > 0).then(|| self.total / self.pairs)
    }
}

/// [`run_match`] that ends by `deadline` (see the module's documentation): the time is
/// a budget the caller must keep (a training run's), so the match gives up games rather
/// than overrun it.
///
/// # Errors
/// As [`run_match`].
pub fn run_match_until(
    a: &PlayerFactory<'_>,
    b: &PlayerFactory<'_>,
    config: &MatchConfig,
    deadline: Option<Instant>,
    progress: &mut dyn FnMut(&MatchStatus),
) -> Result<MatchReport, MatchError> {
    if config.openings.is_empty() {
        return Err(MatchError::NoOpenings);
    }
    let pairs_planned = config.games.div_ceil(2).max(1);
    let workers = config.concurrency.clamp(1, pairs_planned);
    // Create the first instances here so that a broken player is an error, not a
    // match of forfeits.
    let mut first: Vec<(Box<dyn Player>, Box<dyn Player>)> = Vec::new();
    for _ in 0..workers {
        first.push((a()?, b()?));
    }
    let (a_name, b_name) = (first[0].0.name(), first[0].1.name());
    let mut pgn = match &config.pgn_out {
        Some(path) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|source| MatchError::Pgn {
                    path: path.clone(),
                    source,
                })?,
        ),
        None => None,
    };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let pace = Mutex::new(Pace::default());
    let cutoff = Mutex::new(None::<Cutoff>);
    let discarded = AtomicUsize::new(0);
    let past_deadline = || deadline.is_some_and(|d| Instant::now() >= d);
    let (tx, rx) = mpsc::channel::<(usize, PlayedGame, PlayedGame)>();
    let slots = Arc::new(Mutex::new(first));
    let mut status = MatchStatus {
        a: a_name,
        b: b_name,
        games: Trinomial::default(),
        pairs: Pentanomial::default(),
        elo: None,
        los: 0.5,
        sprt: None,
        planned_games: pairs_planned * 2,
    };
    let mut games: Vec<(usize, PlayedGame)> = Vec::new();
    let mut decision = None;
    let mut write_error = None;
    thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, stop, slots) = (&next, &stop, slots.clone());
            let (pace, cutoff, discarded, past_deadline) =
                (&pace, &cutoff, &discarded, &past_deadline);
            // The first cut wins: a worker that finds no time for a pair does not hide
            // one that was stopped at the deadline, or the other way round.
            let cut = move |why: Cutoff| {
                cutoff.lock().expect("cutoff").get_or_insert(why);
            };
            scope.spawn(move || {
                let (mut pa, mut pb) = slots
                    .lock()
                    .expect("slots")
                    .pop()
                    .expect("one slot per worker");
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= pairs_planned || stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Some(d) = deadline {
                        let expected = pace.lock().expect("pace").expected();
                        let left = d.saturating_duration_since(Instant::now());
                        if left.is_zero() || expected.is_some_and(|e| e > left) {
                            cut(Cutoff::NoTimeForPair);
                            break;
                        }
                    }
                    let opening = &openings::nth(&config.openings, i, config.seed);
                    let started = Instant::now();
                    let g1 = play_game_until(
                        pa.as_mut(),
                        pb.as_mut(),
                        &opening.start,
                        &opening.moves,
                        &config.settings,
                        game_seed(config.seed, 2 * i),
                        past_deadline,
                    );
                    let g2 = g1.as_ref().and_then(|_| {
                        play_game_until(
                            pb.as_mut(),
                            pa.as_mut(),
                            &opening.start,
                            &opening.moves,
                            &config.settings,
                            game_seed(config.seed, 2 * i + 1),
                            past_deadline,
                        )
                    });
                    // The game under way, and the pair's first game if it was over.
                    let lost = if g1.is_some() { 2 } else { 1 };
                    let (Some(g1), Some(g2)) = (g1, g2) else {
                        discarded.fetch_add(lost, Ordering::SeqCst);
                        cut(Cutoff::Deadline);
                        break;
                    };
                    let mut p = pace.lock().expect("pace");
                    p.total += started.elapsed();
                    p.pairs += 1;
                    drop(p);
                    if tx.send((i, g1, g2)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, g1, g2) in rx {
            // A game neither side could start (21.3's double forfeit) has no winner
            // and is no draw: its pair says nothing about the two players.
            if [&g1, &g2].iter().any(|g| g.score() == Score::DoubleForfeit) {
                discarded.fetch_add(2, Ordering::SeqCst);
                continue;
            }
            let r1 = result_for(&g1, Color::Red);
            let r2 = result_for(&g2, Color::Black);
            status.games.record(r1);
            status.games.record(r2);
            status.pairs.record_pair(r1, r2);
            status.elo = status.pairs.estimate(0.95).ok().flatten();
            status.los = status.pairs.los();
            if let Some(sprt) = &config.sprt {
                let s = sprt.evaluate(&status.pairs);
                if decision.is_none() && s.decision != SprtDecision::Continue {
                    decision = Some(s.decision);
                    stop.store(true, Ordering::SeqCst);
                }
                status.sprt = Some(s);
            }
            if let Some(file) = &mut pgn {
                for (k, g) in [(0, &g1), (1, &g2)] {
                    let text = to_pgn(g, &config.event, &format!("{}.{}", i + 1, k + 1), &[]);
                    if let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
                        write_error.get_or_insert(e);
                        stop.store(true, Ordering::SeqCst);
                    }
                }
            }
            games.push((2 * i, g1));
            games.push((2 * i + 1, g2));
            progress(&status);
        }
    });
    if let (Some(source), Some(path)) = (write_error, &config.pgn_out) {
        return Err(MatchError::Pgn {
            path: path.clone(),
            source,
        });
    }
    games.sort_by_key(|g| g.0);
    if config.sprt.is_some() && decision.is_none() {
        decision = Some(SprtDecision::Continue);
    }
    Ok(MatchReport {
        status,
        games: games.into_iter().map(|g| g.1).collect(),
        decision,
        cutoff: cutoff.into_inner().expect("cutoff"),
        discarded_games: discarded.into_inner(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        clock::TimeControl,
        openings,
        player::{AlphaBetaPlayer, RandomPlayer},
    };

    fn config(games: usize, concurrency: usize) -> MatchConfig {
        MatchConfig {
            games,
            concurrency,
            settings: GameSettings {
                time_control: TimeControl::Depth(1),
                max_plies: 200,
                ..GameSettings::default()
            },
            openings: openings::builtin(),
            sprt: None,
            seed: 42,
            pgn_out: None,
            event: "test".into(),
        }
    }

    fn random() -> Result<Box<dyn Player>, PlayerError> {
        Ok(Box::new(RandomPlayer::new()))
    }

    fn alphabeta() -> Result<Box<dyn Player>, PlayerError> {
        Ok(Box::new(AlphaBetaPlayer::new(1, 1)))
    }

    #[test]
    fn results_do_not_depend_on_concurrency() {
        let one = run_match(&random, &random, &config(8, 1), &mut |_| {}).unwrap();
        let two = run_match(&random, &random, &config(8, 3), &mut |_| {}).unwrap();
        let moves = |r: &MatchReport| r.games.iter().map(|g| g.moves.clone()).collect::<Vec<_>>();
        assert_eq!(moves(&one), moves(&two));
        assert_eq!(one.games.len(), 8);
        // Colours alternate within a pair.
        assert_eq!(one.games[0].red, "random");
    }

    #[test]
    fn sprt_stops_a_lopsided_match_early() {
        let mut cfg = config(400, 2);
        cfg.sprt = Some(SprtConfig::new(0.0, 50.0, 0.05, 0.05).unwrap());
        let report = run_match(&alphabeta, &random, &cfg, &mut |_| {}).unwrap();
        assert_eq!(report.decision, Some(SprtDecision::AcceptH1));
        assert!(report.games.len() < 400, "{} games", report.games.len());
        assert!(report.status.games.wins > report.status.games.losses);
    }

    #[test]
    fn pgn_file_gets_every_game() {
        let dir = std::env::temp_dir().join(format!("xqz-match-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("games.pgn");
        let _ = std::fs::remove_file(&path);
        let mut cfg = config(4, 2);
        cfg.pgn_out = Some(path.clone());
        run_match(&random, &alphabeta, &cfg, &mut |_| {}).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("[Variant \"xiangqi\"]").count(), 4);
        // The one PGN reader reads every game back, result included.
        let games: Vec<_> = xq_data::read_pgn(&text)
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(games.len(), 4);
        assert!(
            games
                .iter()
                .all(|g| g.result.is_some() && !g.moves.is_empty())
        );
    }

    #[test]
    fn a_match_with_a_deadline_ends_by_it_and_counts_only_whole_pairs() {
        let cfg = config(10_000, 2);
        let started = Instant::now();
        let deadline = started + Duration::from_millis(400);
        let report =
            run_match_until(&alphabeta, &random, &cfg, Some(deadline), &mut |_| {}).unwrap();
        // One move of depth-1 alpha-beta is far below the slack.
        assert!(
            started.elapsed() < Duration::from_millis(1_400),
            "{:?}",
            started.elapsed()
        );
        assert!(report.cutoff.is_some());
        assert!(report.games.len() < 10_000);
        assert_eq!(report.games.len() % 2, 0, "whole pairs only");
        let summary = report.summary();
        assert_eq!(summary.games as usize, report.games.len());
        assert_eq!(summary.planned_games, 10_000);
        assert_eq!(summary.cutoff, report.cutoff);
    }

    #[test]
    fn a_match_past_its_deadline_starts_no_pair() {
        let report = run_match_until(
            &random,
            &random,
            &config(8, 2),
            Some(Instant::now()),
            &mut |_| {},
        )
        .unwrap();
        assert!(report.games.is_empty());
        assert_eq!(report.cutoff, Some(Cutoff::NoTimeForPair));
        assert_eq!(report.discarded_games, 0);
    }

    #[test]
    fn a_match_without_a_deadline_is_never_cut() {
        let report = run_match(&random, &random, &config(4, 2), &mut |_| {}).unwrap();
        assert_eq!((report.games.len(), report.cutoff), (4, None));
    }

    /// A player whose engine never starts a game.
    struct Unstartable;

    impl Player for Unstartable {
        fn name(&self) -> String {
            "unstartable".into()
        }
        fn new_game(&mut self, _: u64) -> Result<(), PlayerError> {
            Err(PlayerError::Other("does not start".into()))
        }
        fn think(
            &mut self,
            _: &crate::player::GameView<'_>,
            _: &crate::clock::Limits,
        ) -> Result<crate::player::Reply, PlayerError> {
            Err(PlayerError::Other("not started".into()))
        }
    }

    /// Games neither player can start (21.3's double forfeit) have no winner and are
    /// no draws: their pairs are discarded, not counted as draws.
    #[test]
    fn pairs_with_a_double_forfeit_are_discarded_not_drawn() {
        let unstartable = || -> Result<Box<dyn Player>, PlayerError> { Ok(Box::new(Unstartable)) };
        let report = run_match(&unstartable, &unstartable, &config(4, 2), &mut |_| {}).unwrap();
        assert_eq!(report.status.games, Trinomial::default());
        assert!(report.games.is_empty());
        assert_eq!(report.discarded_games, 4);
        assert_eq!(report.cutoff, None);
    }

    /// Game seeds pick the openings of recorded matches: pinned so that a refactor of
    /// the hash cannot change them.
    #[test]
    fn game_seeds_are_pinned() {
        assert_eq!(game_seed(0, 0), 0);
        assert_eq!(game_seed(1, 2), 0xbeeb_8da1_658e_ec67);
        assert_eq!(game_seed(42, 7), 0x53ad_348a_f3dd_af4b);
        assert_eq!(game_seed(u64::MAX, 1000), 0xdf2f_5074_f4ee_ff31);
    }
}
