//! The network engine as a UCCI [`Backend`]: the MCTS of [`crate::net`] driven by the
//! engine loop, with the options a GUI can set.
//!
//! Options (UCCI names; UCI GUIs may capitalise them):
//! - `threads`: libtorch intra-op CPU threads (0 = libtorch's default). The search
//!   itself runs on one thread and batches leaves for the evaluator.
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
//! [`crate::net::value_to_cp`]) or `mate N` for a forced checkmate or stalemate (a win
//! or loss only the repetition rules decide is ±5000, never a mate:
//! see [`crate::net::report_score`]), `nodes` the root visits, `pv` the principal
//! variation.

use std::{path::Path, time::Instant};

use xq_nn::Evaluator;

use super::engine::{
    Backend, EngineOption, OptionKind, Score, SearchOutcome, SearchReport, SearchRequest,
    spin_value,
};
use crate::{
    control::SearchControl,
    net::{
        MAX_VISITS, NetError, NetSettings, REPORT_INTERVAL, STOP_BATCH_TIME, TreeKeeper,
        choose_allowed, load_network, move_value, pv_for, report_depth, report_score, run_search,
        value_to_cp,
    },
    tactics::QuiescenceBlend,
};

/// Loads a network file for the `networkfile` option: `(path, threads)`.
pub type NetworkLoader = Box<dyn Fn(&Path, usize) -> Result<Box<dyn Evaluator>, NetError> + Send>;

/// See the module documentation.
pub struct MctsBackend {
    evaluator: Box<dyn Evaluator>,
    loader: Option<NetworkLoader>,
    settings: NetSettings,
    network_file: String,
    keeper: TreeKeeper,
    name: String,
}

impl std::fmt::Debug for MctsBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MctsBackend")
            .field("name", &self.name)
            .field("network_file", &self.network_file)
            .field("settings", &self.settings)
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
        settings.validate()?;
        Ok(MctsBackend {
            evaluator,
            loader,
            keeper: TreeKeeper::new(settings.search_params(), 0),
            settings,
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
        &self.settings
    }

    fn update(&mut self, f: impl FnOnce(&mut NetSettings)) -> Result<(), String> {
        let mut s = self.settings.clone();
        f(&mut s);
        s.validate().map_err(|e| e.to_string())?;
        if s.search_params() != self.settings.search_params() {
            self.keeper.set_params(s.search_params());
        }
        self.settings = s;
        Ok(())
    }
}

impl Backend for MctsBackend {
    fn id_name(&self) -> String {
        self.name.clone()
    }

    fn options(&self) -> Vec<EngineOption> {
        let s = &self.settings;
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

    fn set_option(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        match name.to_ascii_lowercase().as_str() {
            "threads" => {
                let n = spin_value(name, value, 0, 256)? as usize;
                crate::net::set_backend_threads(n);
                self.update(|s| s.threads = n)
            }
            "batch" => {
                let n = spin_value(name, value, 1, 4096)? as usize;
                self.update(|s| s.batch = n)
            }
            "hashsize" | "hash" | "cachesize" => {
                let n = spin_value(name, value, 1, 1 << 20)? as usize;
                self.update(|s| s.tree_mb = n)
            }
            "nodes" => {
                let n = spin_value(name, value, 1, i64::from(MAX_VISITS))? as u32;
                self.update(|s| s.visits = n)
            }
            "leafquiescence" => {
                let pct = spin_value(name, value, 0, 100)?;
                self.update(|s| s.leaf_quiescence = pct as f32 / 100.0)
            }
            "networkfile" => {
                let path = value
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .ok_or("option networkfile needs a path")?;
                let loader = self
                    .loader
                    .as_ref()
                    .ok_or("this engine has no network loader (networkfile not supported)")?;
                self.evaluator =
                    loader(Path::new(path), self.settings.threads).map_err(|e| e.to_string())?;
                self.network_file = path.to_owned();
                self.keeper.reset(0);
                Ok(())
            }
            // Options GUIs commonly send that do not apply to this engine.
            "ponder" | "debug" | "usebook" | "bookfiles" | "useegtb" | "egtbpaths" | "idle"
            | "promotion" | "pruning" | "knowledge" | "randomness" | "style" => Ok(()),
            _ => Err(format!("unknown option {name:?}")),
        }
    }

    fn new_game(&mut self) {
        self.keeper.reset(0);
    }

    fn search(
        &mut self,
        request: &SearchRequest<'_>,
        control: &SearchControl,
        report: &mut dyn FnMut(&SearchReport),
    ) -> SearchOutcome {
        let limits = &request.limits;
        let visits = match limits.nodes {
            Some(n) => n.clamp(1, u64::from(MAX_VISITS)) as u32,
            None if request.infinite || limits.budget().is_some() => MAX_VISITS,
            None => self.settings.visits,
        };
        let max_nodes = self.settings.max_tree_nodes();
        let Ok(search) = self.keeper.sync(request.game) else {
            return fallback(request, report, "bad search parameters");
        };
        let mut last_report = Instant::now();
        let banned = request.banned;
        let mut progress = |s: &xq_mcts::Search| {
            if last_report.elapsed() >= REPORT_INTERVAL {
                last_report = Instant::now();
                let r = s.result();
                if let Some(mv) = choose_allowed(&r, banned) {
                    let pv = pv_for(&r, mv);
                    report(&SearchReport {
                        depth: report_depth(&r),
                        score: report_score(&r, mv, &pv),
                        nodes: u64::from(r.root_visits),
                        pv,
                    });
                }
            }
        };
        // A search bounded by visits (`go nodes`, or the `nodes` option) keeps the batch
        // size fixed, so it is reproducible; one that only the clock or `stop` ends keeps
        // its batches short.
        let batch_time = (visits == MAX_VISITS).then_some(STOP_BATCH_TIME);
        let Ok(mut leaf) =
            QuiescenceBlend::new(self.evaluator.as_mut(), self.settings.leaf_quiescence)
        else {
            return fallback(request, report, "bad leaf_quiescence");
        };
        let result = run_search(
            search,
            &mut leaf,
            visits,
            max_nodes,
            batch_time,
            &|| control.should_stop(),
            &mut progress,
        );
        let result = match result {
            Ok(r) => r,
            Err(e) => return fallback(request, report, &e.to_string()),
        };
        let Some(mv) = choose_allowed(&result, banned) else {
            return fallback(request, report, "empty search result");
        };
        let cp = value_to_cp(move_value(&result, mv));
        let pv = pv_for(&result, mv);
        report(&SearchReport {
            depth: report_depth(&result),
            score: report_score(&result, mv, &pv),
            nodes: u64::from(result.root_visits),
            pv: pv.clone(),
        });
        SearchOutcome {
            best: Some(mv),
            ponder: pv.get(1).copied(),
            score: cp,
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
