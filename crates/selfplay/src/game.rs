//! One self-play game as a state machine over a step-form [`Search`]: search a move,
//! record the full-search targets, check resignation, choose and play the move, judge
//! the position by the rules, start the next search.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::{Color, Game, Move, Position};
use xq_mcts::{Playouts, Search, SearchError, SearchResult};

use crate::config::SelfplayConfig;

/// How a self-play game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// The rules ended it (mate, stalemate, repetition verdict, move limit,
    /// insufficient material): `xq_core::Game::adjudicate`.
    Rules(xq_core::Outcome),
    /// `loser` resigned.
    Resignation { loser: Color },
    /// `max_plies` was reached: adjudicated a draw.
    MaxPlies,
}

impl Termination {
    /// The winner, `None` for a draw.
    pub fn winner(self) -> Option<Color> {
        match self {
            Termination::Rules(o) => o.winner,
            Termination::Resignation { loser } => Some(loser.other()),
            Termination::MaxPlies => None,
        }
    }

    /// The result from Red's view, in the chunk format's terms.
    pub fn outcome(self) -> xq_data::Outcome {
        match self.winner() {
            Some(Color::Red) => xq_data::Outcome::RedWins,
            Some(Color::Black) => xq_data::Outcome::BlackWins,
            None => xq_data::Outcome::Draw,
        }
    }

    /// The stable name written as the PGN `Termination` tag: a rules reason
    /// (`checkmate`, `perpetual_chase`, …), `resignation` or `max_plies`.
    pub fn name(self) -> &'static str {
        match self {
            Termination::Rules(o) => o.reason.name(),
            Termination::Resignation { .. } => "resignation",
            Termination::MaxPlies => "max_plies",
        }
    }
}

/// A full-search position's training targets, kept until the game's result is known.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordDraft {
    pub ply: u16,
    /// The search's policy target over the root's legal moves.
    pub policy: Vec<(Move, f32)>,
    /// The search's root value `[win, draw, loss]` for the side to move.
    pub root_wdl: [f32; 3],
}

/// Resignation bookkeeping of one game.
///
/// A side is "resigning" once its root value has been below the threshold for
/// `consecutive` of its own moves in a row (after `min_ply`). In a game with
/// resignation enabled that ends the game; in a game with it disabled the first such
/// moment is remembered, and once the game is played out the would-be resignation is a
/// false positive if that side did not lose.
#[derive(Debug, Clone, PartialEq)]
pub struct ResignTracker {
    enabled: bool,
    threshold: f32,
    consecutive: u32,
    min_ply: u32,
    streak: [u32; 2],
    would_resign: Option<(Color, u32)>,
}

/// What the tracker says after a move's search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResignVerdict {
    Play,
    Resign,
}

impl ResignTracker {
    /// `enabled`: whether this game may resign (else it only measures).
    pub fn new(config: &SelfplayConfig, enabled: bool) -> ResignTracker {
        ResignTracker {
            enabled,
            threshold: config.resign_threshold,
            consecutive: config.resign_consecutive,
            min_ply: config.resign_min_ply,
            streak: [0; 2],
            would_resign: None,
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Feeds the root value (win − loss for `side`, who is to move at `ply`).
    pub fn observe(&mut self, side: Color, ply: u32, value: f32) -> ResignVerdict {
        if self.threshold <= -1.0 {
            return ResignVerdict::Play;
        }
        let s = &mut self.streak[side.index()];
        if value < self.threshold {
            *s += 1;
        } else {
            *s = 0;
        }
        if *s >= self.consecutive && ply >= self.min_ply {
            if self.enabled {
                return ResignVerdict::Resign;
            }
            if self.would_resign.is_none() {
                self.would_resign = Some((side, ply));
            }
        }
        ResignVerdict::Play
    }

    /// The first would-be resignation of a game with resignation disabled.
    pub fn would_resign(&self) -> Option<(Color, u32)> {
        self.would_resign
    }

    /// Whether the would-be resignation was wrong given the game's winner: the side
    /// that would have resigned drew or won. `None` when there was none.
    pub fn false_positive(&self, winner: Option<Color>) -> Option<bool> {
        self.would_resign
            .map(|(side, _)| winner != Some(side.other()))
    }
}

/// A finished game, handed to the writer.
#[derive(Debug, Clone)]
pub struct FinishedGame {
    /// Game number within this worker's run (0, 1, …): decides its seed.
    pub id: u64,
    pub seed: u64,
    pub start: Position,
    pub moves: Vec<Move>,
    pub termination: Termination,
    pub records: Vec<RecordDraft>,
    pub resign_enabled: bool,
    /// For a game with resignation disabled: whether a would-be resignation happened
    /// and whether it would have been wrong.
    pub false_positive: Option<bool>,
    /// Name of the evaluator that played the game's first move.
    pub model: String,
    /// Plies played with a full search.
    pub full_searches: u32,
}

/// The seed of game `id` of a worker seeded with `seed`.
pub fn game_seed(seed: u64, id: u64) -> u64 {
    let mut z = seed ^ id.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A game in progress.
#[derive(Debug)]
pub struct GameState {
    pub id: u64,
    pub seed: u64,
    pub game: Game,
    pub search: Search,
    pub playouts: Playouts,
    pub records: Vec<RecordDraft>,
    pub resign: ResignTracker,
    pub model: String,
    pub full_searches: u32,
}

/// What happened after a finished search was turned into a move.
#[derive(Debug)]
pub enum Step {
    /// The move was played; the game goes on.
    Continue,
    /// The game is over.
    Finished(Box<FinishedGame>),
}

impl GameState {
    /// A new game from the start position; call [`GameState::start_search`] next.
    ///
    /// # Errors
    /// Bad search parameters (checked before any game starts, so not in practice).
    pub fn new(
        config: &SelfplayConfig,
        id: u64,
        worker_seed: u64,
        model: String,
    ) -> Result<GameState, SearchError> {
        GameState::from_game(
            config,
            id,
            worker_seed,
            model,
            Game::new(Position::startpos()),
        )
    }

    /// A game that continues `game` (an opening, a test position).
    ///
    /// # Errors
    /// Bad search parameters.
    pub fn from_game(
        config: &SelfplayConfig,
        id: u64,
        worker_seed: u64,
        model: String,
        game: Game,
    ) -> Result<GameState, SearchError> {
        let seed = game_seed(worker_seed, id);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7265_7369_676E);
        let enabled = config.resign_enabled()
            && !(config.resign_disabled_fraction > 0.0
                && rng.random::<f32>() < config.resign_disabled_fraction);
        let search = Search::new(config.search.clone(), &game, seed)?;
        Ok(GameState {
            id,
            seed,
            game,
            search,
            playouts: Playouts::full(1),
            records: Vec::new(),
            resign: ResignTracker::new(config, enabled),
            model,
            full_searches: 0,
        })
    }

    /// Turns the finished search into a move (or a resignation). Unless the game is
    /// over, [`GameState::start_search`] comes next.
    ///
    /// # Errors
    /// A search error (none is expected: the root always has moves here).
    pub fn after_search(&mut self, config: &SelfplayConfig) -> Result<Step, SearchError> {
        let result = self.search.result();
        let ply = self.game.ply() as u32;
        let side = self.game.position().turn();
        if self.playouts.full {
            self.full_searches += 1;
            self.record(&result, ply);
        }
        if self.resign.observe(side, ply, result.value) == ResignVerdict::Resign {
            return Ok(self.finish(Termination::Resignation { loser: side }));
        }
        let Some(mv) = self.search.choose_move(&result) else {
            // Only a position without legal moves has no move, and the rules end the
            // game there before it is searched.
            let outcome = self
                .game
                .adjudicate()
                .ok_or_else(|| SearchError::GameOver {
                    fen: self.game.position().fen(),
                })?;
            return Ok(self.finish(Termination::Rules(outcome)));
        };
        self.game.play_unchecked(mv);
        if let Some(outcome) = self.game.adjudicate() {
            return Ok(self.finish(Termination::Rules(outcome)));
        }
        if self.game.ply() as u32 >= config.max_plies {
            return Ok(self.finish(Termination::MaxPlies));
        }
        self.search.advance(mv)?;
        Ok(Step::Continue)
    }

    /// Starts the search of the current position, drawing its budget from the playout
    /// cap (full or cheap).
    ///
    /// # Errors
    /// [`SearchError::GameOver`] if the position has no legal move (a finished game is
    /// never searched).
    pub fn start_search(&mut self) -> Result<(), SearchError> {
        self.playouts = self.search.plan_playouts();
        self.search.start(self.playouts)
    }

    fn record(&mut self, result: &SearchResult, ply: u32) {
        let Ok(ply) = u16::try_from(ply) else { return };
        let policy: Vec<(Move, f32)> = result
            .moves
            .iter()
            .copied()
            .zip(result.policy_target.iter().copied())
            .collect();
        if !policy.iter().any(|&(_, w)| w > 0.0) {
            return;
        }
        self.records.push(RecordDraft {
            ply,
            policy,
            root_wdl: result.wdl,
        });
    }

    fn finish(&mut self, termination: Termination) -> Step {
        let winner = termination.winner();
        Step::Finished(Box::new(FinishedGame {
            id: self.id,
            seed: self.seed,
            start: self.game.start().clone(),
            moves: self.game.moves().collect(),
            termination,
            records: std::mem::take(&mut self.records),
            resign_enabled: self.resign.enabled(),
            false_positive: if self.resign.enabled() {
                None
            } else {
                self.resign.false_positive(winner)
            },
            model: std::mem::take(&mut self.model),
            full_searches: self.full_searches,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker(enabled: bool) -> ResignTracker {
        let config = SelfplayConfig {
            resign_threshold: -0.8,
            resign_consecutive: 2,
            resign_min_ply: 4,
            ..SelfplayConfig::default()
        };
        ResignTracker::new(&config, enabled)
    }

    #[test]
    fn resigns_after_consecutive_low_values_of_one_side_past_the_minimum_ply() {
        let mut t = tracker(true);
        // Red below threshold at plies 0 and 2: too early. Black never low.
        let script = [
            (Color::Red, 0, -0.9, ResignVerdict::Play),
            (Color::Black, 1, 0.9, ResignVerdict::Play),
            (Color::Red, 2, -0.9, ResignVerdict::Play),
            (Color::Black, 3, -0.95, ResignVerdict::Play),
            // Red's streak is 3 at ply 4 >= min_ply.
            (Color::Red, 4, -0.85, ResignVerdict::Resign),
        ];
        for (side, ply, v, want) in script {
            assert_eq!(t.observe(side, ply, v), want, "ply {ply}");
        }
        // A value above the threshold resets the streak.
        let mut t = tracker(true);
        assert_eq!(t.observe(Color::Red, 10, -0.9), ResignVerdict::Play);
        assert_eq!(t.observe(Color::Red, 12, 0.0), ResignVerdict::Play);
        assert_eq!(t.observe(Color::Red, 14, -0.9), ResignVerdict::Play);
        assert_eq!(t.observe(Color::Red, 16, -0.9), ResignVerdict::Resign);
    }

    #[test]
    fn disabled_games_remember_the_first_would_be_resignation_and_judge_it() {
        let mut t = tracker(false);
        for ply in [10, 12, 14] {
            assert_eq!(t.observe(Color::Black, ply + 1, -0.99), ResignVerdict::Play);
        }
        assert_eq!(t.would_resign(), Some((Color::Black, 13)));
        assert_eq!(t.false_positive(Some(Color::Red)), Some(false));
        assert_eq!(t.false_positive(None), Some(true));
        assert_eq!(t.false_positive(Some(Color::Black)), Some(true));
        let quiet = tracker(false);
        assert_eq!(quiet.false_positive(None), None);
    }

    #[test]
    fn a_threshold_of_minus_one_never_resigns() {
        let config = SelfplayConfig {
            resign_threshold: -1.0,
            resign_consecutive: 1,
            resign_min_ply: 0,
            ..SelfplayConfig::default()
        };
        let mut t = ResignTracker::new(&config, true);
        assert_eq!(t.observe(Color::Red, 0, -1.0), ResignVerdict::Play);
        assert_eq!(t.would_resign(), None);
    }
}
