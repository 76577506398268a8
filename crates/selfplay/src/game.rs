//! One self-play game as a state machine over a step-form [`Search`]: search a move,
//! record the full-search targets, check resignation, choose and play the move, judge
//! the position by the rules, start the next search.

use std::collections::VecDeque;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::{Color, Game, Move, Position, Role};
use xq_mcts::{Playouts, Search, SearchError, SearchResult, TargetPrior};

use crate::config::SelfplayConfig;
use crate::resign::ResignSample;

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
        xq_data::Outcome::of_winner(self.winner())
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

/// Material of `color` on the board in conventional piece values: chariot 9,
/// cannon 4.5, horse 4, advisor and elephant 2, soldier 1 (2 once across the river).
pub fn material(pos: &Position, color: Color) -> f32 {
    pos.pieces_iter()
        .filter(|(_, p)| p.color == color)
        .map(|(sq, p)| match p.role {
            Role::General => 0.0,
            Role::Advisor | Role::Elephant => 2.0,
            Role::Horse => 4.0,
            Role::Cannon => 4.5,
            Role::Chariot => 9.0,
            Role::Soldier if sq.is_home(color) => 1.0,
            Role::Soldier => 2.0,
        })
        .sum()
}

/// The value target of a finished game's positions: its result, except that a drawn
/// game in which one side ends at least `margin` material ahead (see [`material`])
/// counts as that side's win. `margin <= 0` gives the result unchanged.
///
/// Why: a young network's self-play games are mostly drawn by repetition or by the
/// move limits with one side far ahead, because neither side can yet convert. With
/// only results as targets the value head then learns that material does not matter,
/// which is true of those games and false of the game. Scoring such draws by material,
/// as Zeta36's chess-alpha-zero adjudicates games at its length cap, gives the value
/// head that first lesson in minutes. The PGN record keeps the real result.
pub fn value_target(termination: Termination, last: &Position, margin: f32) -> xq_data::Outcome {
    if margin > 0.0 && termination.winner().is_none() {
        let lead = material(last, Color::Red) - material(last, Color::Black);
        if lead >= margin {
            return xq_data::Outcome::RedWins;
        }
        if -lead >= margin {
            return xq_data::Outcome::BlackWins;
        }
    }
    termination.outcome()
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
/// false positive if that side did not lose. Under soft resignation (`resign_soft`)
/// no game resigns; [`ResignTracker::decided`] tells the game to search cheaply
/// while a side is resigning.
///
/// A game with resignation disabled also measures each side's trigger level (see
/// [`ResignSample::level`]), the threshold-free form of the same rule, from which the
/// threshold is calibrated ([`crate::resign`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ResignTracker {
    enabled: bool,
    threshold: f32,
    consecutive: u32,
    min_ply: u32,
    streak: [u32; 2],
    /// Whether each side's latest search left it resigning (streak long enough, past
    /// the minimum ply).
    resigning: [bool; 2],
    would_resign: Option<(Color, u32)>,
    /// Disabled games: each side's last `consecutive` root values.
    recent: [VecDeque<f32>; 2],
    /// Disabled games: each side's trigger level so far.
    level: [f32; 2],
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
            resigning: [false; 2],
            would_resign: None,
            recent: [VecDeque::new(), VecDeque::new()],
            level: [f32::INFINITY; 2],
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Feeds the root value (win − loss for `side`, who is to move at `ply`).
    pub fn observe(&mut self, side: Color, ply: u32, value: f32) -> ResignVerdict {
        if !self.enabled {
            self.measure(side, ply, value);
        }
        if self.threshold <= -1.0 {
            return ResignVerdict::Play;
        }
        let s = &mut self.streak[side.index()];
        if value < self.threshold {
            *s += 1;
        } else {
            *s = 0;
        }
        let resigning = *s >= self.consecutive && ply >= self.min_ply;
        self.resigning[side.index()] = resigning;
        if resigning {
            if self.enabled {
                return ResignVerdict::Resign;
            }
            if self.would_resign.is_none() {
                self.would_resign = Some((side, ply));
            }
        }
        ResignVerdict::Play
    }

    /// The trigger level's bookkeeping: `side` would resign at threshold `t` at this
    /// move exactly when its last `consecutive` values are all below `t` (its streak
    /// reaches `consecutive`) and `ply >= min_ply`, that is when their greatest is below
    /// `t`. A value below -1 counts as -1, since no threshold at or below -1 resigns;
    /// NaN, never below any threshold, as +∞.
    fn measure(&mut self, side: Color, ply: u32, value: f32) {
        let recent = &mut self.recent[side.index()];
        if recent.len() >= self.consecutive as usize {
            recent.pop_front();
        }
        recent.push_back(if value.is_nan() {
            f32::INFINITY
        } else {
            value.max(-1.0)
        });
        if recent.len() == self.consecutive as usize && ply >= self.min_ply {
            let greatest = recent.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let level = &mut self.level[side.index()];
            *level = level.min(greatest);
        }
    }

    /// Whether a side is resigning now (by its latest search): under soft resignation
    /// the game is decided until that side's value rises to the threshold again.
    pub fn decided(&self) -> bool {
        self.resigning.contains(&true)
    }

    /// For a game with resignation disabled, each side's (Red, Black) trigger level and
    /// whether it lost, given the game's winner; `None` for a game that could resign.
    pub fn samples(&self, winner: Option<Color>) -> Option<[ResignSample; 2]> {
        (!self.enabled).then(|| {
            [Color::Red, Color::Black].map(|side| ResignSample {
                level: self.level[side.index()],
                lost: winner == Some(side.other()),
            })
        })
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
    /// The value target of the game's records (Red's view): the result, or a drawn
    /// game scored by material ([`value_target`]).
    pub target: xq_data::Outcome,
    pub records: Vec<RecordDraft>,
    pub resign_enabled: bool,
    /// For a game with resignation disabled: whether a would-be resignation happened
    /// and whether it would have been wrong.
    pub false_positive: Option<bool>,
    /// For a game with resignation disabled: each side's (Red, Black) trigger level and
    /// whether it lost, what the threshold is calibrated from.
    pub resign_samples: Option<[ResignSample; 2]>,
    /// Name of the evaluator that played the game's first move.
    pub model: String,
    /// Plies played with a full search.
    pub full_searches: u32,
    /// Plies searched while the game was decided under soft resignation
    /// ([`ResignTracker::decided`]), at the scaled full-search probability.
    pub decided_searches: u32,
}

/// The seed of game `id` of a worker seeded with `seed`.
pub fn game_seed(seed: u64, id: u64) -> u64 {
    xq_core::hash::splitmix64(seed ^ id.wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// The network's own prior at a search's root, recovered from the prior the search
/// started from, for Gumbel targets built on it (`[selfplay.search.gumbel] target_prior =
/// "network"`, [`TargetPrior::Network`]). Whoever blends something into the evaluator's
/// policy supplies the inverse (xq-eval's `tactics::network_prior` under leaf
/// quiescence): this crate does not know what was blended.
#[derive(Clone)]
pub struct NetworkPrior(Arc<PriorFn>);

/// `f(position, moves, searched)`: see [`NetworkPrior::new`].
type PriorFn = dyn Fn(&Position, &[Move], &[f32]) -> Vec<f32> + Send + Sync;

impl NetworkPrior {
    /// `f(position, moves, searched)` gives the network's prior over `moves` from
    /// `searched`, the root's prior as the evaluator gave it.
    pub fn new(
        f: impl Fn(&Position, &[Move], &[f32]) -> Vec<f32> + Send + Sync + 'static,
    ) -> NetworkPrior {
        NetworkPrior(Arc::new(f))
    }

    /// The network's prior over `moves` at `pos` from `searched`.
    pub fn of(&self, pos: &Position, moves: &[Move], searched: &[f32]) -> Vec<f32> {
        (self.0)(pos, moves, searched)
    }
}

impl std::fmt::Debug for NetworkPrior {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NetworkPrior")
    }
}

/// The error of a config that builds targets on the network's prior with no
/// [`NetworkPrior`] to recover it.
pub(crate) fn no_network_prior() -> SearchError {
    SearchError::Params(xq_mcts::ParamsError {
        field: "gumbel.target_prior",
        need: "\"searched\" where no evaluator blend can be undone",
    })
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
    /// `resign_soft_full_scale` under soft resignation, else `None`.
    soft_full_scale: Option<f32>,
    pub decided_searches: u32,
    /// Set when the config builds Gumbel targets on the network's prior.
    network_prior: Option<NetworkPrior>,
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
            && !config.resign_soft
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
            soft_full_scale: config.resign_soft.then_some(config.resign_soft_full_scale),
            decided_searches: 0,
            network_prior: None,
        })
    }

    /// Resigns at `threshold` instead of `resign_threshold` (a calibrated threshold,
    /// [`crate::resign`]). Before the game's first search.
    #[must_use]
    pub fn with_resign_threshold(mut self, threshold: f32) -> GameState {
        self.resign.threshold = threshold;
        self
    }

    /// Builds the Gumbel targets on the network's prior that `prior` recovers
    /// ([`NetworkPrior`]) when the config asks for it (`target_prior = "network"`);
    /// otherwise, or with `None`, on the priors the search started from.
    ///
    /// # Errors
    /// [`SearchError::Params`] when the config asks for it and `prior` is `None`:
    /// the targets would silently be built on the other prior.
    pub fn with_network_prior(
        mut self,
        config: &SelfplayConfig,
        prior: Option<NetworkPrior>,
    ) -> Result<GameState, SearchError> {
        if config.search.gumbel.target_prior == TargetPrior::Network {
            self.network_prior = Some(prior.ok_or_else(no_network_prior)?);
        }
        Ok(self)
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
            return Ok(self.finish(config, Termination::Resignation { loser: side }));
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
            return Ok(self.finish(config, Termination::Rules(outcome)));
        };
        self.game.play_unchecked(mv);
        if let Some(outcome) = self.game.adjudicate() {
            return Ok(self.finish(config, Termination::Rules(outcome)));
        }
        if self.game.ply() as u32 >= config.max_plies {
            return Ok(self.finish(config, Termination::MaxPlies));
        }
        self.search.advance(mv)?;
        Ok(Step::Continue)
    }

    /// Starts the search of the current position, drawing its budget from the playout
    /// cap (full or cheap; full less often in a game soft resignation has decided).
    ///
    /// # Errors
    /// [`SearchError::GameOver`] if the position has no legal move (a finished game is
    /// never searched).
    pub fn start_search(&mut self) -> Result<(), SearchError> {
        let full_scale = match self.soft_full_scale {
            Some(scale) if self.resign.decided() => {
                self.decided_searches += 1;
                scale
            }
            _ => 1.0,
        };
        self.playouts = self.search.plan_playouts(full_scale);
        self.search.start(self.playouts)
    }

    fn record(&mut self, result: &SearchResult, ply: u32) {
        let Ok(ply) = u16::try_from(ply) else { return };
        let on_network = self.network_prior.as_ref().and_then(|f| {
            let searched = self.search.root_prior()?;
            let network = f.of(self.game.position(), &result.moves, searched);
            self.search.gumbel_target_on(&network)
        });
        let target = on_network.as_deref().unwrap_or(&result.policy_target);
        let policy: Vec<(Move, f32)> = result
            .moves
            .iter()
            .copied()
            .zip(target.iter().copied())
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

    fn finish(&mut self, config: &SelfplayConfig, termination: Termination) -> Step {
        let winner = termination.winner();
        let target = value_target(
            termination,
            self.game.position(),
            config.material_adjudication,
        );
        Step::Finished(Box::new(FinishedGame {
            id: self.id,
            seed: self.seed,
            start: self.game.start().clone(),
            moves: self.game.moves().collect(),
            termination,
            target,
            records: std::mem::take(&mut self.records),
            resign_enabled: self.resign.enabled(),
            false_positive: if self.resign.enabled() {
                None
            } else {
                self.resign.false_positive(winner)
            },
            resign_samples: self.resign.samples(winner),
            model: std::mem::take(&mut self.model),
            full_searches: self.full_searches,
            decided_searches: self.decided_searches,
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
    fn a_side_would_resign_at_a_threshold_exactly_when_its_trigger_level_is_below_it() {
        let mut rng = ChaCha8Rng::seed_from_u64(23);
        // Values and thresholds on one grid of tenths, so that ties are frequent.
        let tenth = |i: i32| i as f32 / 10.0;
        for _ in 0..400 {
            let config = SelfplayConfig {
                resign_consecutive: rng.random_range(1..=4),
                resign_min_ply: rng.random_range(0..12),
                ..SelfplayConfig::default()
            };
            let values: Vec<f32> = (0..rng.random_range(0..30))
                .map(|_| tenth(rng.random_range(-10..=10)))
                .collect();
            let side_at = |ply: usize| {
                if ply.is_multiple_of(2) {
                    Color::Red
                } else {
                    Color::Black
                }
            };
            let mut measured = ResignTracker::new(&config, false);
            for (ply, &v) in values.iter().enumerate() {
                measured.observe(side_at(ply), ply as u32, v);
            }
            let samples = measured.samples(None).unwrap();
            for threshold in (-11..=11).map(tenth) {
                for side in [Color::Red, Color::Black] {
                    let config = SelfplayConfig {
                        resign_threshold: threshold,
                        ..config.clone()
                    };
                    let mut playing = ResignTracker::new(&config, true);
                    let resigns = values.iter().enumerate().any(|(ply, &v)| {
                        side_at(ply) == side
                            && playing.observe(side, ply as u32, v) == ResignVerdict::Resign
                    });
                    let level = samples[side.index()].level;
                    assert_eq!(
                        resigns,
                        level < threshold,
                        "{side:?} at {threshold} with level {level}: {values:?} {config:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_game_is_decided_while_a_side_is_resigning_and_no_longer_once_its_value_recovers() {
        let mut t = tracker(false);
        let script = [
            // Red low at plies 2 and 4: a streak of two past the minimum ply.
            (Color::Red, 2, -0.9, false),
            (Color::Black, 3, 0.9, false),
            (Color::Red, 4, -0.9, true),
            // The winning side's moves do not end it.
            (Color::Black, 5, 0.95, true),
            (Color::Red, 6, -0.95, true),
            (Color::Black, 7, 0.3, true),
            // Red's value back at the threshold: the game is open again.
            (Color::Red, 8, -0.8, false),
            (Color::Black, 9, 0.8, false),
        ];
        for (side, ply, v, decided) in script {
            assert_eq!(t.observe(side, ply, v), ResignVerdict::Play);
            assert_eq!(t.decided(), decided, "after {side:?} at ply {ply}");
        }
        assert_eq!(t.would_resign(), Some((Color::Red, 4)));
    }

    #[test]
    fn only_games_with_resignation_disabled_give_samples_judged_by_the_winner() {
        let mut t = tracker(false);
        for (ply, v) in [(10, -0.95), (12, -0.99), (14, -0.97), (16, -0.5)] {
            t.observe(Color::Red, ply, v);
        }
        // Runs of two ending at ply 12, 14, 16: greatest -0.95, -0.97, -0.5.
        let [red, black] = t.samples(Some(Color::Black)).unwrap();
        assert_eq!((red.level, red.lost), (-0.97, true));
        assert_eq!((black.level, black.lost), (f32::INFINITY, false));
        assert!(!t.samples(None).unwrap()[0].lost);
        assert_eq!(tracker(true).samples(None), None);
    }

    fn pos(fen: &str) -> Position {
        Position::from_fen(fen).unwrap()
    }

    #[test]
    fn material_counts_conventional_values_and_soldiers_across_the_river_double() {
        let start = Position::startpos();
        // 2 chariots, 2 horses, 2 cannons, 2 advisors, 2 elephants, 5 soldiers.
        assert_eq!(
            material(&start, Color::Red),
            18.0 + 8.0 + 9.0 + 4.0 + 4.0 + 5.0
        );
        assert_eq!(material(&start, Color::Black), material(&start, Color::Red));
        // Soldiers on their own side of the river (red rank 4, black rank 5) count 1.
        let p = pos("4k4/9/9/9/4p4/4P4/9/9/9/4K4 w - - 0 1");
        assert_eq!(material(&p, Color::Red), 1.0);
        assert_eq!(material(&p, Color::Black), 1.0);
        // Across the river (red rank 6, black rank 3) they count 2.
        let p = pos("4k4/9/9/4P4/9/9/4p4/9/9/4K4 w - - 0 1");
        assert_eq!(material(&p, Color::Red), 2.0);
        assert_eq!(material(&p, Color::Black), 2.0);
        let p = pos("4k4/9/9/9/9/4p4/4P4/9/9/4K4 w - - 0 1");
        assert_eq!(material(&p, Color::Red), 1.0);
        assert_eq!(material(&p, Color::Black), 2.0);
    }

    #[test]
    fn drawn_games_with_a_material_lead_train_as_wins_and_decided_games_keep_their_result() {
        use xq_core::{Outcome, Reason};
        use xq_data::Outcome as Target;
        // Red has a chariot more (9) than Black.
        let red_ahead = pos("3k5/9/9/9/9/9/9/9/4R4/4K4 w - - 0 1");
        let black_ahead = pos("3k5/9/4r4/9/9/9/9/9/9/4K4 w - - 0 1");
        let draw = Termination::Rules(Outcome::draw(Reason::MoveLimit));
        assert_eq!(value_target(draw, &red_ahead, 9.0), Target::RedWins);
        assert_eq!(value_target(draw, &red_ahead, 9.5), Target::Draw);
        assert_eq!(
            value_target(draw, &red_ahead, 0.0),
            Target::Draw,
            "0 turns it off"
        );
        assert_eq!(
            value_target(Termination::MaxPlies, &black_ahead, 3.0),
            Target::BlackWins
        );
        // A decided game keeps its result, whatever the material says.
        let lost = Termination::Resignation { loser: Color::Red };
        assert_eq!(value_target(lost, &red_ahead, 3.0), Target::BlackWins);
        // Level material stays a draw.
        let level = Position::startpos();
        assert_eq!(value_target(draw, &level, 0.5), Target::Draw);
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

    /// Game seeds pick the openings and noise of stored games: pinned so that a
    /// refactor of the hash cannot change them.
    #[test]
    fn game_seeds_are_pinned() {
        assert_eq!(game_seed(0, 0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(game_seed(1, 2), 0x09a2_3c3a_0ffe_dfe9);
        assert_eq!(game_seed(42, 7), 0xf08a_aefc_ec73_03c2);
        assert_eq!(game_seed(u64::MAX, 1000), 0xde06_e51a_bea3_bd11);
    }
}
