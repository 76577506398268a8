//! The `Player` abstraction: anything that picks moves in a refereed game.
//!
//! Players are driven by the referee (module `referee`): `new_game` once per game
//! with the game's seed, then `think` for each of their moves with the game so far
//! and the clock's limits. A player never adjudicates; an illegal reply loses.

use std::time::Duration;

use rand::{Rng, SeedableRng, seq::IndexedRandom};
use rand_chacha::ChaCha8Rng;
use xq_core::{Game, Move, Position};

use crate::{
    alphabeta::eval::material,
    alphabeta::{AbLimits, AlphaBeta, MATE},
    clock::Limits,
};

/// The game as a player sees it when asked to move.
#[derive(Debug, Clone, Copy)]
pub struct GameView<'a> {
    /// The game so far; its last position is the one to move in.
    pub game: &'a Game,
    /// Moves the referee forbids here (UCCI `banmoves`): each would complete a
    /// repetition that loses under the 棋例.
    pub banned: &'a [Move],
}

impl GameView<'_> {
    /// The position to move in.
    pub fn position(&self) -> &Position {
        self.game.position()
    }

    pub fn start(&self) -> &Position {
        self.game.start()
    }

    /// The moves played so far.
    pub fn moves(&self) -> Vec<Move> {
        self.game.moves().collect()
    }

    /// Legal moves that are not banned.
    pub fn allowed_moves(&self) -> Vec<Move> {
        let moves = self.position().legal_moves();
        let allowed: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|m| !self.banned.contains(m))
            .collect();
        if allowed.is_empty() {
            moves.to_vec()
        } else {
            allowed
        }
    }

    /// Hashes of the positions before the current one, for repetition checks.
    pub fn previous_hashes(&self) -> Vec<u64> {
        (0..self.game.ply())
            .filter_map(|i| self.game.position_at(i).map(Position::hash))
            .collect()
    }
}

/// What a player does on its turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Move(Move),
    Resign,
}

/// What the player reports about its thinking (for PGN comments and progress lines).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ThinkInfo {
    /// Centipawns (or a value scaled to them) for the side to move; mates near ±30000.
    pub score: Option<i32>,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub pv: Vec<Move>,
}

/// A player's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub decision: Decision,
    /// Offers (or accepts) a draw along with the move.
    pub offer_draw: bool,
    pub info: ThinkInfo,
}

impl Reply {
    pub fn play(m: Move) -> Reply {
        Reply {
            decision: Decision::Move(m),
            offer_draw: false,
            info: ThinkInfo::default(),
        }
    }
}

/// Why a player could not answer.
#[derive(Debug, thiserror::Error)]
pub enum PlayerError {
    #[error("engine process failed: {0}")]
    Process(String),
    #[error("engine protocol error: {0}")]
    Protocol(String),
    #[error("engine did not answer within {0:?}")]
    Timeout(Duration),
    #[error("player failed: {0}")]
    Other(String),
}

/// Builds a player from its specification text (see module `spec`).
pub type PlayerBuilder<'a> = dyn Fn(&str) -> Result<Box<dyn Player>, PlayerError> + Sync + 'a;

/// Anything that picks moves.
pub trait Player: Send {
    /// A short name for tables and PGN headers.
    fn name(&self) -> String;
    /// Called before each game; `seed` makes any randomness of the player repeatable.
    fn new_game(&mut self, seed: u64) -> Result<(), PlayerError>;
    /// Picks a move in the last position of `game`, which has at least one legal move.
    fn think(&mut self, game: &GameView<'_>, limits: &Limits) -> Result<Reply, PlayerError>;
}

/// Plays a uniformly random legal move: the floor of every rating list.
#[derive(Debug)]
pub struct RandomPlayer {
    rng: ChaCha8Rng,
}

impl RandomPlayer {
    pub fn new() -> RandomPlayer {
        RandomPlayer {
            rng: ChaCha8Rng::seed_from_u64(0),
        }
    }
}

impl Default for RandomPlayer {
    fn default() -> Self {
        Self::new()
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        "random".into()
    }

    fn new_game(&mut self, seed: u64) -> Result<(), PlayerError> {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
        Ok(())
    }

    fn think(&mut self, game: &GameView<'_>, _: &Limits) -> Result<Reply, PlayerError> {
        let moves = game.allowed_moves();
        let m = *moves
            .choose(&mut self.rng)
            .ok_or_else(|| PlayerError::Other("no legal move".into()))?;
        Ok(Reply::play(m))
    }
}

/// One-ply material greed: mates in one if it can, otherwise captures the most valuable
/// piece it can (ignoring recaptures), otherwise moves at random. Ties are broken by a
/// seeded RNG.
#[derive(Debug)]
pub struct GreedyPlayer {
    rng: ChaCha8Rng,
}

impl GreedyPlayer {
    pub fn new() -> GreedyPlayer {
        GreedyPlayer {
            rng: ChaCha8Rng::seed_from_u64(0),
        }
    }
}

impl Default for GreedyPlayer {
    fn default() -> Self {
        Self::new()
    }
}

impl Player for GreedyPlayer {
    fn name(&self) -> String {
        "greedy".into()
    }

    fn new_game(&mut self, seed: u64) -> Result<(), PlayerError> {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
        Ok(())
    }

    fn think(&mut self, game: &GameView<'_>, _: &Limits) -> Result<Reply, PlayerError> {
        let pos = game.position();
        let moves = game.allowed_moves();
        let score = |m: Move| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            if !child.has_legal_move() {
                return 100_000;
            }
            pos.captured(m).map_or(0, |p| material(p.role))
        };
        let scored: Vec<(Move, i32)> = moves.iter().map(|&m| (m, score(m))).collect();
        let best = scored
            .iter()
            .map(|s| s.1)
            .max()
            .ok_or_else(|| PlayerError::Other("no legal move".into()))?;
        let top: Vec<Move> = scored.iter().filter(|s| s.1 == best).map(|s| s.0).collect();
        let i = self.rng.random_range(0..top.len());
        Ok(Reply::play(top[i]))
    }
}

/// The built-in alpha-beta engine as a player (see [`crate::alphabeta`]).
#[derive(Debug)]
pub struct AlphaBetaPlayer {
    engine: AlphaBeta,
    depth: u32,
}

impl AlphaBetaPlayer {
    /// Searches to `depth` plies unless the clock's limits say otherwise.
    pub fn new(depth: u32, tt_mb: usize) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            engine: AlphaBeta::new(tt_mb),
            depth: depth.max(1),
        }
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> String {
        format!("alphabeta-d{}", self.depth)
    }

    fn new_game(&mut self, _seed: u64) -> Result<(), PlayerError> {
        self.engine.clear();
        Ok(())
    }

    fn think(&mut self, game: &GameView<'_>, limits: &Limits) -> Result<Reply, PlayerError> {
        let depth = limits.depth.unwrap_or(self.depth);
        let ab = AbLimits {
            depth: if limits.depth.is_some() || limits.budget().is_none() {
                depth
            } else {
                64
            },
            nodes: limits.nodes,
            time: limits.budget(),
        };
        let r = self
            .engine
            .search(game.position(), &game.previous_hashes(), ab);
        let mut m = r
            .best
            .ok_or_else(|| PlayerError::Other("no legal move".into()))?;
        if game.banned.contains(&m) {
            m = game.allowed_moves()[0];
        }
        Ok(Reply {
            decision: if r.score <= -MATE + 2 {
                Decision::Resign
            } else {
                Decision::Move(m)
            },
            offer_draw: false,
            info: ThinkInfo {
                score: Some(r.score),
                depth: Some(r.depth),
                nodes: Some(r.nodes),
                pv: r.pv,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(game: &Game) -> GameView<'_> {
        GameView { game, banned: &[] }
    }

    #[test]
    fn random_player_is_repeatable_per_seed() {
        let pos = Game::new(Position::startpos());
        let mut a = RandomPlayer::new();
        let mut b = RandomPlayer::new();
        a.new_game(7).unwrap();
        b.new_game(7).unwrap();
        for _ in 0..10 {
            assert_eq!(
                a.think(&view(&pos), &Limits::default()).unwrap(),
                b.think(&view(&pos), &Limits::default()).unwrap()
            );
        }
    }

    #[test]
    fn greedy_mates_first_then_takes_the_most_material() {
        let mut g = GreedyPlayer::new();
        g.new_game(1).unwrap();
        // c0d0 mates (the black general cannot step onto the e-file facing Red's).
        let pos = Game::from_fen("3k5/9/9/9/r1p6/9/9/9/9/R1R1K4 w - - 0 1").unwrap();
        let r = g.think(&view(&pos), &Limits::default()).unwrap();
        assert_eq!(r.decision, Decision::Move("c0d0".parse().unwrap()));
        // No mate: the chariot on a5 is worth more than the soldier on c5.
        let pos = Game::from_fen("5k3/9/9/9/r1p6/9/9/9/9/R1R1K4 w - - 0 1").unwrap();
        let r = g.think(&view(&pos), &Limits::default()).unwrap();
        assert_eq!(r.decision, Decision::Move("a0a5".parse().unwrap()));
    }

    #[test]
    fn alphabeta_respects_banned_moves() {
        let g = Game::from_fen("4k4/9/9/9/r8/9/9/9/9/R2K5 w - - 0 1").unwrap();
        let banned = ["a0a5".parse().unwrap()];
        let game = GameView {
            game: &g,
            banned: &banned,
        };
        let mut p = AlphaBetaPlayer::new(2, 1);
        let r = p.think(&game, &Limits::default()).unwrap();
        assert_ne!(r.decision, Decision::Move(banned[0]));
    }
}
