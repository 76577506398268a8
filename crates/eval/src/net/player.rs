//! The network search as a [`Player`]: budgets from the referee's limits, resigning
//! and offering draws by the settings' centipawn thresholds.

use std::{path::Path, time::Instant};

use xq_nn::Evaluator;

use super::search::{NetError, NetSearch, NetSettings, load_network};
use crate::{
    alphabeta::MATE,
    clock::Limits,
    player::{Decision, GameView, Player, PlayerError, Reply, ThinkInfo},
    score::Score,
};

impl From<NetError> for PlayerError {
    fn from(e: NetError) -> PlayerError {
        PlayerError::Other(e.to_string())
    }
}

/// MCTS over a network as a [`Player`]. See the [module documentation](super).
#[derive(Debug)]
pub struct NetPlayer {
    search: NetSearch,
    name: String,
}

impl NetPlayer {
    /// A player searching with `evaluator`.
    ///
    /// # Errors
    /// [`NetError::Settings`] for bad settings.
    pub fn new(
        evaluator: Box<dyn Evaluator>,
        settings: NetSettings,
        name: impl Into<String>,
    ) -> Result<NetPlayer, NetError> {
        Ok(NetPlayer {
            search: NetSearch::new(evaluator, settings)?,
            name: name.into(),
        })
    }

    /// A player over a checkpoint (see [`load_network`]), named after its file and
    /// visits.
    ///
    /// # Errors
    /// If the checkpoint cannot be loaded or the settings are bad.
    pub fn load(checkpoint: &Path, settings: NetSettings) -> Result<NetPlayer, NetError> {
        settings.validate()?;
        let ev = load_network(checkpoint, settings.threads)?;
        let stem = checkpoint
            .file_stem()
            .map_or_else(|| "net".into(), |s| s.to_string_lossy().into_owned());
        let mut name = format!("net-{stem}-v{}", settings.visits);
        if settings.leaf_quiescence > 0.0 {
            name += &format!("-q{}", (settings.leaf_quiescence * 100.0).round());
        }
        if settings.gumbel_root {
            name += "-gumbel";
        }
        NetPlayer::new(ev, settings, name)
    }

    pub fn settings(&self) -> &NetSettings {
        self.search.settings()
    }
}

impl Player for NetPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, seed: u64) -> Result<(), PlayerError> {
        self.search.new_game(seed);
        Ok(())
    }

    fn think(&mut self, view: &GameView<'_>, limits: &Limits) -> Result<Reply, PlayerError> {
        let deadline = limits.budget().map(|t| Instant::now() + t);
        let visits = self.search.visits_for(limits, false);
        let should_stop = || deadline.is_some_and(|d| Instant::now() >= d);
        let found = self.search.search(
            view.game,
            view.banned,
            visits,
            deadline.is_some(),
            &should_stop,
            None,
        )?;
        let s = self.search.settings();
        let resign = s.resign_cp > 0 && found.cp <= -s.resign_cp;
        Ok(Reply {
            decision: if resign {
                Decision::Resign
            } else {
                Decision::Move(found.best)
            },
            offer_draw: s.draw_cp.is_some_and(|d| found.cp <= d),
            info: ThinkInfo {
                score: Some(match found.score {
                    // A proven result in the alpha-beta engine's mate convention (±`MATE`
                    // less the distance in plies).
                    Score::Mate(n) if n > 0 => MATE - (2 * n - 1),
                    Score::Mate(n) => -MATE + 2 * n.abs(),
                    Score::Cp(_) => found.cp,
                }),
                depth: Some(found.depth),
                nodes: Some(found.nodes),
                pv: found.pv,
            },
        })
    }
}
