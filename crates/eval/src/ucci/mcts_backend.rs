//! The network engine as a UCCI [`Backend`]: the search of [`crate::net`] driven by the
//! engine loop, with the options a GUI can set.
//!
//! Options (UCCI names; UCI GUIs may capitalise them):
//! - `threads`: the evaluator's CPU threads (0 = the backend's default); a network
//!   loaded from a file is loaded again with the new count. The search itself runs on
//!   one thread and batches leaves for the evaluator.
//! - `batch`: the most leaves per evaluator call. `stop` is checked between calls; in
//!   searches that only the clock or `stop` ends, batches shrink so that one call takes
//!   about 25 ms ([`crate::net::STOP_BATCH_TIME`]), so `stop` is answered in time
//!   unless a single position takes longer than that to evaluate. Searches bounded by visits (`go
//!   nodes N`, or the `nodes` option) keep the full batch (reproducible results) and
//!   answer `stop` after the current call.
//! - `hashsize` (alias `cachesize`, UCI `Hash`): the search tree's memory cap in MiB.
//! - `nodes`: the default root-visit limit for `go` without nodes or time (and for
//!   `go depth N`, which MCTS does not have).
//! - `networkfile`: loads another network (a checkpoint sidecar, checkpoint directory
//!   or run directory; see [`crate::net::load_network`]).
//!
//! Limits: `go nodes N` searches N root visits (visits kept from the previous move's
//! tree count); `go time …`/`movetime`/`wtime …` search until the engine's deadline;
//! `go infinite` and `go ponder` until `stop` (or the deadline set by `ponderhit`).
//! An `info` line reports progress about every 0.5 s and once at the end: `depth` is
//! the average descent depth, `score` the chosen move's value in centipawns (see
//! [`crate::score::value_to_cp`]) or `mate N` for a forced checkmate or stalemate (a win
//! or loss only the repetition rules decide is ±5000, never a mate:
//! see [`crate::net`]), `nodes` the root visits, `pv` the principal
//! variation.

use std::path::Path;

use xq_nn::Evaluator;

use super::engine::{
    Backend, EngineOption, OptionError, OptionKind, SearchOutcome, SearchReport, SearchRequest,
    spin_value,
};
use crate::{
    control::SearchControl,
    net::{MAX_VISITS, MoveReport, NetError, NetSearch, NetSettings, load_network},
    score::Score,
};

/// Loads a network file for the `networkfile` option: `(path, threads)`.
pub type NetworkLoader = Box<dyn Fn(&Path, usize) -> Result<Box<dyn Evaluator>, NetError> + Send>;

/// See the module documentation.
pub struct MctsBackend {
    search: NetSearch,
    loader: Option<NetworkLoader>,
    network_file: String,
    name: String,
}

impl std::fmt::Debug for MctsBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MctsBackend")
            .field("name", &self.name)
            .field("network_file", &self.network_file)
            .field("settings", self.search.settings())
            .finish_non_exhaustive()
    }
}

impl MctsBackend {
    /// A backend searching with `evaluator`. Without a `loader`, the `networkfile`
    /// option is refused.
    ///
    /// # Errors
    /// [`NetError::Settings`] for bad settings.
    pub fn new(
        evaluator: Box<dyn Evaluator>,
        settings: NetSettings,
        loader: Option<NetworkLoader>,
        name: impl Into<String>,
    ) -> Result<MctsBackend, NetError> {
        Ok(MctsBackend {
            search: NetSearch::new(evaluator, settings)?,
            loader,
            network_file: String::new(),
            name: name.into(),
        })
    }

    /// A backend over a torch checkpoint, able to load others through `networkfile`.
    ///
    /// # Errors
    /// If the network cannot be loaded or the settings are bad.
    pub fn from_checkpoint(
        path: &Path,
        settings: NetSettings,
        name: impl Into<String>,
    ) -> Result<MctsBackend, NetError> {
        settings.validate()?;
        let ev = load_network(path, settings.threads)?;
        let mut b = MctsBackend::new(
            ev,
            settings,
            Some(Box::new(|p: &Path, t: usize| load_network(p, t))),
            name,
        )?;
        b.network_file = path.display().to_string();
        Ok(b)
    }

    pub fn settings(&self) -> &NetSettings {
        self.search.settings()
    }

    /// Changes the settings as option `name` asks.
    fn update(&mut self, name: &str, f: impl FnOnce(&mut NetSettings)) -> Result<(), OptionError> {
        let mut s = self.search.settings().clone();
        f(&mut s);
        self.search
            .set_settings(s)
            .map_err(|e| OptionError::Rejected {
                name: name.to_owned(),
                source: e.into(),
            })
    }

    /// Loads the network file again with the current settings' threads (the thread
    /// count is a load option); nothing to do for a network given as an evaluator.
    fn reload(&mut self) -> Result<(), OptionError> {
        let (Some(loader), false) = (&self.loader, self.network_file.is_empty()) else {
            return Ok(());
        };
        let evaluator = loader(
            Path::new(&self.network_file),
            self.search.settings().threads,
        )
        .map_err(|e| OptionError::Rejected {
            name: "threads".into(),
            source: e.into(),
        })?;
        self.search.set_evaluator(evaluator);
        Ok(())
    }
}

/// A search report as the engine's `info` lines take it.
fn info(r: &MoveReport) -> SearchReport {
    SearchReport {
        depth: r.depth,
        score: r.score,
        nodes: r.nodes,
        pv: r.pv.clone(),
    }
}

impl Backend for MctsBackend {
    fn id_name(&self) -> String {
        self.name.clone()
    }

    fn options(&self) -> Vec<EngineOption> {
        let s = self.search.settings();
        vec![
            EngineOption::spin("threads", s.threads as i64, 0, 256),
            EngineOption::spin("batch", s.batch as i64, 1, 4096),
            EngineOption::spin("hashsize", s.tree_mb as i64, 1, 1 << 20),
            EngineOption::spin("nodes", i64::from(s.visits), 1, i64::from(MAX_VISITS)),
            EngineOption::spin(
                "leafquiescence",
                (s.leaf_quiescence * 100.0).round() as i64,
                0,
                100,
            ),
            EngineOption {
                name: "networkfile".into(),
                kind: OptionKind::String {
                    default: if self.network_file.is_empty() {
                        "<empty>".into()
                    } else {
                        self.network_file.clone()
                    },
                },
            },
        ]
    }

    fn set_option(&mut self, name: &str, value: Option<&str>) -> Result<(), OptionError> {
        match name.to_ascii_lowercase().as_str() {
            "threads" => {
                let n = spin_value(name, value, 0, 256)? as usize;
                self.update(name, |s| s.threads = n)?;
                self.reload()
            }
            "batch" => {
                let n = spin_value(name, value, 1, 4096)? as usize;
                self.update(name, |s| s.batch = n)
            }
            "hashsize" | "hash" | "cachesize" => {
                let n = spin_value(name, value, 1, 1 << 20)? as usize;
                self.update(name, |s| s.tree_mb = n)
            }
            "nodes" => {
                let n = spin_value(name, value, 1, i64::from(MAX_VISITS))? as u32;
                self.update(name, |s| s.visits = n)
            }
            "leafquiescence" => {
                let pct = spin_value(name, value, 0, 100)?;
                self.update(name, |s| s.leaf_quiescence = pct as f32 / 100.0)
            }
            "networkfile" => {
                let path = value
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| OptionError::Missing {
                        name: "networkfile".into(),
                        what: "a path",
                    })?;
                let loader = self
                    .loader
                    .as_ref()
                    .ok_or_else(|| OptionError::NoNetworkLoader {
                        name: "networkfile".into(),
                    })?;
                let evaluator =
                    loader(Path::new(path), self.search.settings().threads).map_err(|e| {
                        OptionError::Rejected {
                            name: "networkfile".into(),
                            source: e.into(),
                        }
                    })?;
                self.search.set_evaluator(evaluator);
                self.network_file = path.to_owned();
                Ok(())
            }
            // Options GUIs commonly send that do not apply to this engine.
            "ponder" | "debug" | "usebook" | "bookfiles" | "useegtb" | "egtbpaths" | "idle"
            | "promotion" | "pruning" | "knowledge" | "randomness" | "style" => Ok(()),
            _ => Err(OptionError::Unknown {
                name: name.to_owned(),
            }),
        }
    }

    fn new_game(&mut self) {
        self.search.new_game(0);
    }

    fn search(
        &mut self,
        request: &SearchRequest<'_>,
        control: &SearchControl,
        report: &mut dyn FnMut(&SearchReport),
    ) -> SearchOutcome {
        let visits = self.search.visits_for(&request.limits, request.infinite);
        // A search bounded by visits (`go nodes`, or the `nodes` option) keeps the batch
        // size fixed, so it is reproducible; one that only the clock or `stop` ends keeps
        // its batches short.
        let stoppable = visits == MAX_VISITS;
        let found = self.search.search(
            request.game,
            request.banned,
            visits,
            stoppable,
            &|| control.should_stop(),
            Some(&mut |r: &MoveReport| report(&info(r))),
        );
        match found {
            Ok(found) => {
                report(&info(&found));
                SearchOutcome {
                    best: Some(found.best),
                    ponder: found.pv.get(1).copied(),
                    score: found.cp,
                }
            }
            Err(e) => fallback(request, report, &e.to_string()),
        }
    }
}

/// When the search cannot run (a failing evaluator): a legal, allowed move all the same,
/// so the engine never forfeits by saying nothing, and the reason on stderr.
fn fallback(
    request: &SearchRequest<'_>,
    report: &mut dyn FnMut(&SearchReport),
    why: &str,
) -> SearchOutcome {
    let legal = request.game.position().legal_moves();
    let best = legal
        .iter()
        .copied()
        .find(|m| !request.banned.contains(m))
        .or_else(|| legal.first().copied());
    report(&SearchReport {
        depth: 0,
        score: Score::Cp(0),
        nodes: 0,
        pv: best.into_iter().collect(),
    });
    eprintln!("xqzero: search failed ({why}); playing a legal move");
    SearchOutcome {
        best,
        ponder: None,
        score: 0,
    }
}
