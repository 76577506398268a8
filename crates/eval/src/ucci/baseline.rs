//! The built-in alpha-beta engine as a UCCI backend, so `xqz ucci` works without a
//! network.

use crate::{
    alphabeta::{AbLimits, AlphaBeta, MATE},
    control::SearchControl,
    score::Score,
};

use super::engine::{
    Backend, EngineOption, OptionError, SearchOutcome, SearchReport, SearchRequest, spin_value,
};

/// Alpha-beta with a transposition table of `hashsize` MiB.
#[derive(Debug)]
pub struct AlphaBetaBackend {
    engine: AlphaBeta,
    hash_mb: usize,
}

impl AlphaBetaBackend {
    pub fn new() -> AlphaBetaBackend {
        AlphaBetaBackend {
            engine: AlphaBeta::new(16),
            hash_mb: 16,
        }
    }
}

impl Default for AlphaBetaBackend {
    fn default() -> Self {
        Self::new()
    }
}

fn score(cp: i32) -> Score {
    if cp >= MATE - 200 {
        Score::Mate((MATE - cp + 1) / 2)
    } else if cp <= -MATE + 200 {
        Score::Mate(-(MATE + cp) / 2)
    } else {
        Score::Cp(cp)
    }
}

impl Backend for AlphaBetaBackend {
    fn id_name(&self) -> String {
        format!("xqzero alphabeta {}", env!("CARGO_PKG_VERSION"))
    }

    fn options(&self) -> Vec<EngineOption> {
        vec![EngineOption::spin("hashsize", self.hash_mb as i64, 1, 1024)]
    }

    fn set_option(&mut self, name: &str, value: Option<&str>) -> Result<(), OptionError> {
        match name.to_ascii_lowercase().as_str() {
            "hashsize" | "hash" => {
                self.hash_mb = spin_value(name, value, 1, 1024)? as usize;
                self.engine = AlphaBeta::new(self.hash_mb);
                Ok(())
            }
            // Options GUIs commonly send that do not apply to this backend.
            "threads" | "ponder" | "batch" | "debug" | "usebook" => Ok(()),
            _ => Err(OptionError::Unknown {
                name: name.to_owned(),
            }),
        }
    }

    fn new_game(&mut self) {
        self.engine.clear();
    }

    fn search(
        &mut self,
        request: &SearchRequest<'_>,
        control: &SearchControl,
        report: &mut dyn FnMut(&SearchReport),
    ) -> SearchOutcome {
        let game = request.game;
        let hashes: Vec<u64> = (0..game.ply())
            .filter_map(|i| game.position_at(i).map(|p| p.hash()))
            .collect();
        let limits = AbLimits {
            depth: request.limits.depth.unwrap_or(64),
            nodes: request.limits.nodes,
            time: None,
        };
        let r = self.engine.search_with(
            game.position(),
            &hashes,
            limits,
            request.banned,
            control,
            &mut |it| {
                report(&SearchReport {
                    depth: it.depth,
                    score: score(it.score),
                    nodes: it.nodes,
                    pv: it.pv.clone(),
                });
            },
        );
        SearchOutcome {
            best: r.best,
            ponder: r.pv.get(1).copied(),
            score: r.score,
        }
    }
}
