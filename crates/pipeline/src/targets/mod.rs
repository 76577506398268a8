//! `xqz bench targets`: how good are the policy and value targets, measured against an
//! oracle on a fixed set of positions, in minutes instead of a training run and a match.
//!
//! The positions and the oracle's judgement of them are a committed file
//! ([`oracle`]: Fairy-Stockfish's score of every legal move at a fixed depth, made once
//! by `xqz bench targets --make-oracle`). For each position the benchmark measures
//! ([`measures::Measures`]) several policies against the oracle:
//!
//! - the network's prior (its raw policy, no quiescence);
//! - the master move (master positions only);
//! - the self-play target of a full search, as self-play records it, for each search
//!   arm ([`Arm`]: PUCT visit counts or the Gumbel improved policy, at a config's
//!   full-search visits, with or without leaf quiescence), each with two seeds: the
//!   difference between seeds is the noise floor.
//!
//! The search targets come from self-play's own code: a [`xq_selfplay::game::GameState`]
//! is made for the position exactly as a self-play worker makes one (its seed from
//! [`xq_selfplay::game::game_seed`] of the seed and the position's index), its search
//! started by `start_search` (the playout cap's full-search probability set to 1, so
//! every search is a full one) and driven as the worker drives it (`select_leaves` of
//! `leaves_per_game`, then `apply`), and the target is the record `after_search` writes.
//! The evaluator is the network under an evaluation cache, wrapped in
//! [`QuiescenceBlend`] when the arm's leaf quiescence is above 0, as self-play wraps it.
//!
//! Values: Pearson's correlation of the network's value and of each search's root value
//! (both as win probabilities, W = win + draw/2) with the oracle's score of the position.

pub mod measures;
pub mod oracle;

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Instant,
};

use anyhow::{Context, Result, anyhow, bail, ensure};
use serde::Serialize;
use xq_eval::tactics::QuiescenceBlend;
use xq_mcts::{RootAlgorithm, TargetPrior};
use xq_nn::{EvalError, EvalInput, Evaluation, Evaluator};
use xq_selfplay::{
    SelfplayConfig,
    cache::{EvalCache, eval_key},
    game::{GameState, Step},
};

pub use measures::{LOGISTIC, Measures, pearson};
pub use oracle::{OracleEntry, PositionSet, load_oracle, read_oracle};

/// One search whose self-play target is measured.
#[derive(Debug, Clone)]
pub struct Arm {
    /// For tables: e.g. `gumbel-32-q0`.
    pub name: String,
    /// Self-play's settings (a config's `[selfplay]`), with the arm's algorithm and
    /// leaf quiescence set.
    pub selfplay: SelfplayConfig,
}

impl Arm {
    /// `base` (a config's `[selfplay]`) searched with `algorithm` and `leaf_quiescence`
    /// at its own full-search visits; every search is a full one. A Gumbel target on
    /// the network's prior (`target_prior = "network"`) is kept where it applies (Gumbel
    /// with a blend to undo, the name then ends in `-net`) and dropped elsewhere.
    pub fn new(base: &SelfplayConfig, algorithm: RootAlgorithm, leaf_quiescence: f32) -> Arm {
        let mut selfplay = base.clone();
        selfplay.search.algorithm = algorithm;
        selfplay.search.leaf_quiescence = leaf_quiescence;
        selfplay.search.playout_cap.full_probability = 1.0;
        let on_network = algorithm == RootAlgorithm::Gumbel
            && leaf_quiescence > 0.0
            && leaf_quiescence < 1.0
            && base.search.gumbel.target_prior == TargetPrior::Network;
        if !on_network {
            selfplay.search.gumbel.target_prior = TargetPrior::Searched;
        }
        let alg = match algorithm {
            RootAlgorithm::Puct => "puct",
            RootAlgorithm::Gumbel => "gumbel",
        };
        Arm {
            name: format!(
                "{alg}-{}-q{}{}",
                selfplay.search.playout_cap.full_visits,
                (leaf_quiescence * 100.0).round(),
                if on_network { "-net" } else { "" }
            ),
            selfplay,
        }
    }
}

/// Makes one evaluator per benchmark thread (a network loaded once per thread).
pub type EvaluatorFactory<'a> = dyn Fn() -> Result<Box<dyn Evaluator>> + Sync + 'a;

/// What one position gave.
#[derive(Debug, Clone)]
struct PositionResult {
    prior: Vec<f64>,
    /// The network's value as a win probability.
    value: f64,
    /// Per arm, per seed: the target (over the entry's legal moves) and the root value
    /// as a win probability.
    arms: Vec<Vec<(Vec<f64>, f64)>>,
}

/// One policy source's measures over a set.
#[derive(Debug, Clone, Serialize)]
pub struct SourceReport {
    pub source: String,
    pub positions: usize,
    /// The mean over seeds (the only value for sources without a seed).
    pub mean: Measures,
    /// Per seed (searches only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<Measures>,
    /// |first seed − second seed|, measure by measure: the noise floor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_difference: Option<Measures>,
    /// The standard error of the mean difference to the prior, position by position
    /// (this source's measures, averaged over seeds, minus the prior's): how much the
    /// difference would move on another draw of positions. Searches only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paired_se_vs_prior: Option<Measures>,
}

/// One value's correlation with the oracle over a set.
#[derive(Debug, Clone, Serialize)]
pub struct ValueReport {
    pub source: String,
    pub positions: usize,
    pub correlation: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<Option<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_difference: Option<f64>,
}

/// The measures of one position set.
#[derive(Debug, Clone, Serialize)]
pub struct SetReport {
    pub set: String,
    pub positions: usize,
    pub policy: Vec<SourceReport>,
    pub value: Vec<ValueReport>,
}

/// The benchmark's answer.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub network: String,
    pub oracle_positions: usize,
    pub oracle_depth: Vec<u32>,
    pub oracle_engine: Vec<String>,
    pub logistic: &'static str,
    pub prob_floor: f64,
    pub seeds: Vec<u64>,
    pub arms: Vec<ArmReport>,
    pub sets: Vec<SetReport>,
    pub seconds: f64,
    pub threads: usize,
}

/// An arm's settings as the report names them.
#[derive(Debug, Clone, Serialize)]
pub struct ArmReport {
    pub name: String,
    pub algorithm: String,
    pub full_visits: u32,
    pub leaf_quiescence: f32,
    pub leaves_per_game: usize,
}

/// The network under an evaluation cache (self-play's [`EvalCache`], keyed as self-play
/// keys it), shared by every search of one thread.
#[derive(Clone)]
struct Cached(Arc<Mutex<(Box<dyn Evaluator>, EvalCache)>>);

impl Evaluator for Cached {
    fn evaluate(&mut self, batch: &[EvalInput<'_>]) -> Result<Vec<Evaluation>, EvalError> {
        let mut guard = self
            .0
            .lock()
            .map_err(|_| EvalError::Backend("a benchmark thread panicked".into()))?;
        let (net, cache) = &mut *guard;
        let keys: Vec<u64> = batch.iter().map(|i| eval_key(i.history)).collect();
        let mut out: Vec<Option<Evaluation>> = batch
            .iter()
            .zip(&keys)
            .map(|(i, &k)| cache.get(k, i.moves.len()).cloned())
            .collect();
        let missing: Vec<usize> = (0..batch.len()).filter(|&i| out[i].is_none()).collect();
        if !missing.is_empty() {
            let inputs: Vec<EvalInput<'_>> = missing.iter().map(|&i| batch[i]).collect();
            let evals = net.evaluate(&inputs)?;
            for (&i, e) in missing.iter().zip(evals) {
                cache.insert(keys[i], e.clone());
                out[i] = Some(e);
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    fn name(&self) -> String {
        self.0
            .lock()
            .map(|g| format!("cached {}", g.0.name()))
            .unwrap_or_default()
    }
}

fn win_of(wdl: [f32; 3]) -> f64 {
    f64::from(wdl[0]) + 0.5 * f64::from(wdl[1])
}

/// The self-play target of one full search of `entry`'s position, as self-play records
/// it: a [`GameState`] for the game up to the position (game `id` of a worker seeded
/// `seed`), its search started and driven as a worker does, and the record
/// `after_search` writes. Returns the target over `entry.legal` and the root value as
/// a win probability.
///
/// # Errors
/// A search or evaluator error, or a search that recorded nothing.
pub fn selfplay_target(
    config: &SelfplayConfig,
    entry: &OracleEntry,
    id: u64,
    seed: u64,
    evaluator: &mut dyn Evaluator,
) -> Result<(Vec<f64>, f64)> {
    let mut state = GameState::from_game(config, id, seed, "bench".into(), entry.game.clone())?
        .with_network_prior(config, crate::selfplay::network_prior(config))?;
    state.start_search()?;
    ensure!(
        state.playouts.full,
        "the benchmark's searches must be full searches"
    );
    let k = config.leaves_per_game.max(1);
    while !state.search.is_finished() {
        let n = state.search.select_leaves(k).len();
        if n == 0 {
            continue;
        }
        let evals = {
            let inputs: Vec<EvalInput<'_>> =
                state.search.pending().iter().map(|r| r.input()).collect();
            evaluator.evaluate(&inputs)?
        };
        state.search.apply(&evals)?;
    }
    let record = match state.after_search(config)? {
        Step::Continue => state.records.pop(),
        Step::Finished(f) => f.records.into_iter().last(),
    }
    .ok_or_else(|| anyhow!("the search of {} recorded no target", entry.line.fen))?;
    let mut target = vec![0.0; entry.legal.len()];
    for (m, w) in &record.policy {
        let k = entry
            .legal
            .iter()
            .position(|l| l == m)
            .ok_or_else(|| anyhow!("the target names {m}, not a legal move"))?;
        target[k] = f64::from(*w);
    }
    Ok((target, win_of(record.root_wdl)))
}

fn measure_position(
    entry: &OracleEntry,
    index: usize,
    arms: &[Arm],
    seeds: &[u64],
    raw: &mut Cached,
    blends: &mut [(f32, QuiescenceBlend<Cached>)],
) -> Result<PositionResult> {
    // The window the search's root request holds: the last `history_len` positions.
    let ply = entry.game.ply();
    let len = arms
        .first()
        .map_or(8, |a| a.selfplay.search.history_len)
        .max(1);
    let history: Vec<xq_core::Position> = (ply.saturating_sub(len - 1)..=ply)
        .filter_map(|p| entry.game.position_at(p).cloned())
        .collect();
    let input = EvalInput {
        history: &history,
        moves: &entry.legal,
    };
    let eval = raw
        .evaluate(&[input])?
        .pop()
        .context("the network gave no evaluation")?;
    let prior: Vec<f64> = eval.policy.iter().map(|&p| f64::from(p)).collect();
    let mut out = Vec::new();
    for arm in arms {
        let q = arm.selfplay.search.leaf_quiescence;
        let mut per_seed = Vec::new();
        for &seed in seeds {
            let ev: &mut dyn Evaluator = if q == 0.0 {
                raw
            } else {
                &mut blends
                    .iter_mut()
                    .find(|(w, _)| *w == q)
                    .context("no blend for the arm's weight")?
                    .1
            };
            per_seed.push(
                selfplay_target(&arm.selfplay, entry, index as u64, seed, ev)
                    .with_context(|| format!("{} at {}", arm.name, entry.line.source))?,
            );
        }
        out.push(per_seed);
    }
    Ok(PositionResult {
        prior,
        value: win_of(eval.wdl),
        arms: out,
    })
}

/// Runs the benchmark over `entries` on `threads` threads, each with its own evaluator
/// from `factory`, and summarises it per set and overall.
///
/// # Errors
/// An evaluator or search failure; no positions; fewer than one seed.
pub fn run(
    entries: &[OracleEntry],
    arms: &[Arm],
    seeds: &[u64],
    threads: usize,
    factory: &EvaluatorFactory<'_>,
    network: &str,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report> {
    ensure!(!entries.is_empty(), "the oracle file has no positions");
    ensure!(!seeds.is_empty(), "at least one seed is needed");
    let started = Instant::now();
    let threads = threads.clamp(1, entries.len());
    let mut weights: Vec<f32> = arms
        .iter()
        .map(|a| a.selfplay.search.leaf_quiescence)
        .filter(|&q| q > 0.0)
        .collect();
    weights.sort_by(f32::total_cmp);
    weights.dedup();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Result<Vec<(usize, PositionResult)>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let weights = &weights;
                let done = &done;
                scope.spawn(move || -> Result<Vec<(usize, PositionResult)>> {
                    let raw = Cached(Arc::new(Mutex::new((factory()?, EvalCache::new(1 << 18)))));
                    let mut blends = weights
                        .iter()
                        .map(|&w| Ok((w, QuiescenceBlend::new(raw.clone(), w)?)))
                        .collect::<Result<Vec<_>>>()?;
                    let mut raw = raw;
                    let mut out = Vec::new();
                    for i in (t..entries.len()).step_by(threads) {
                        out.push((
                            i,
                            measure_position(&entries[i], i, arms, seeds, &mut raw, &mut blends)?,
                        ));
                        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        if n.is_multiple_of(50) {
                            progress(&format!(
                                "{n}/{} positions, {:.0} s",
                                entries.len(),
                                started.elapsed().as_secs_f64()
                            ));
                        }
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a benchmark thread panicked")))
            })
            .collect()
    });
    let mut all: Vec<Option<PositionResult>> = vec![None; entries.len()];
    for r in results {
        for (i, p) in r? {
            all[i] = Some(p);
        }
    }
    let all: Vec<PositionResult> = all.into_iter().flatten().collect();
    ensure!(all.len() == entries.len(), "a position was not measured");

    let mut sets = Vec::new();
    for (name, filter) in [
        ("master", Some(PositionSet::Master)),
        ("selfplay", Some(PositionSet::Selfplay)),
        ("all", None),
    ] {
        let idx: Vec<usize> = (0..entries.len())
            .filter(|&i| filter.is_none_or(|s| entries[i].line.set == s))
            .collect();
        if idx.is_empty() {
            continue;
        }
        sets.push(summarise(name, &idx, entries, &all, arms, seeds));
    }
    let mut depths: Vec<u32> = entries.iter().map(|e| e.line.depth).collect();
    depths.sort_unstable();
    depths.dedup();
    let mut engines: Vec<String> = entries.iter().map(|e| e.line.engine.clone()).collect();
    engines.sort();
    engines.dedup();
    Ok(Report {
        network: network.to_string(),
        oracle_positions: entries.len(),
        oracle_depth: depths,
        oracle_engine: engines,
        logistic: LOGISTIC,
        prob_floor: measures::PROB_FLOOR,
        seeds: seeds.to_vec(),
        arms: arms
            .iter()
            .map(|a| ArmReport {
                name: a.name.clone(),
                algorithm: match a.selfplay.search.algorithm {
                    RootAlgorithm::Puct => "puct".into(),
                    RootAlgorithm::Gumbel => "gumbel".into(),
                },
                full_visits: a.selfplay.search.playout_cap.full_visits,
                leaf_quiescence: a.selfplay.search.leaf_quiescence,
                leaves_per_game: a.selfplay.leaves_per_game,
            })
            .collect(),
        sets,
        seconds: started.elapsed().as_secs_f64(),
        threads,
    })
}

fn summarise(
    name: &str,
    idx: &[usize],
    entries: &[OracleEntry],
    all: &[PositionResult],
    arms: &[Arm],
    seeds: &[u64],
) -> SetReport {
    let oracle: Vec<f64> = idx.iter().map(|&i| entries[i].value()).collect();
    let measure = |i: usize, dist: &[f64]| {
        Measures::of(dist, &all[i].prior, &entries[i].win, entries[i].best)
    };
    let mut policy = Vec::new();
    let prior: Vec<Measures> = idx.iter().map(|&i| measure(i, &all[i].prior)).collect();
    policy.push(SourceReport {
        source: "prior".into(),
        positions: idx.len(),
        mean: Measures::mean(&prior),
        seeds: Vec::new(),
        seed_difference: None,
        paired_se_vs_prior: None,
    });
    let played: Vec<Measures> = idx
        .iter()
        .filter(|&&i| entries[i].line.set == PositionSet::Master)
        .filter_map(|&i| {
            let k = entries[i].played?;
            let mut one_hot = vec![0.0; entries[i].legal.len()];
            one_hot[k] = 1.0;
            Some(measure(i, &one_hot))
        })
        .collect();
    if !played.is_empty() {
        policy.push(SourceReport {
            source: "master-move".into(),
            positions: played.len(),
            mean: Measures::mean(&played),
            seeds: Vec::new(),
            seed_difference: None,
            paired_se_vs_prior: None,
        });
    }
    let mut value = vec![ValueReport {
        source: "network".into(),
        positions: idx.len(),
        correlation: pearson(
            &idx.iter().map(|&i| all[i].value).collect::<Vec<_>>(),
            &oracle,
        ),
        seeds: Vec::new(),
        seed_difference: None,
    }];
    for (a, arm) in arms.iter().enumerate() {
        let per_seed: Vec<Measures> = (0..seeds.len())
            .map(|s| {
                Measures::mean(
                    &idx.iter()
                        .map(|&i| measure(i, &all[i].arms[a][s].0))
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        let diffs: Vec<Measures> = idx
            .iter()
            .zip(&prior)
            .map(|(&i, p)| {
                let m = Measures::mean(
                    &(0..seeds.len())
                        .map(|s| measure(i, &all[i].arms[a][s].0))
                        .collect::<Vec<_>>(),
                );
                m.minus(p)
            })
            .collect();
        policy.push(SourceReport {
            source: arm.name.clone(),
            positions: idx.len(),
            mean: Measures::mean(&per_seed),
            seed_difference: (per_seed.len() >= 2).then(|| per_seed[0].abs_diff(&per_seed[1])),
            seeds: per_seed,
            paired_se_vs_prior: Some(Measures::standard_error(&diffs)),
        });
        let corr: Vec<Option<f64>> = (0..seeds.len())
            .map(|s| {
                pearson(
                    &idx.iter().map(|&i| all[i].arms[a][s].1).collect::<Vec<_>>(),
                    &oracle,
                )
            })
            .collect();
        let known: Vec<f64> = corr.iter().flatten().copied().collect();
        value.push(ValueReport {
            source: format!("{} root", arm.name),
            positions: idx.len(),
            correlation: (known.len() == corr.len())
                .then(|| known.iter().sum::<f64>() / known.len() as f64),
            seed_difference: match corr.as_slice() {
                [Some(a), Some(b), ..] => Some((a - b).abs()),
                _ => None,
            },
            seeds: corr,
        });
    }
    SetReport {
        set: name.to_string(),
        positions: idx.len(),
        policy,
        value,
    }
}

/// The report as text tables: per set, one row per policy source (searches: the mean
/// of the seeds, then ±|seed difference| per measure), then the value correlations.
pub fn table(report: &Report) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "network {}; oracle {} positions, {} depth {:?}; seeds {:?}; {:.0} s on {} threads",
        report.network,
        report.oracle_positions,
        report.oracle_engine.join(", "),
        report.oracle_depth,
        report.seeds,
        report.seconds,
        report.threads
    );
    let _ = writeln!(s, "win probability: {}", report.logistic);
    for set in &report.sets {
        let _ = writeln!(s, "\n{} ({} positions)", set.set, set.positions);
        let _ = writeln!(
            s,
            "  {:<18} {:>15} {:>15} {:>15} {:>15} {:>15}",
            "policy", "top-1", "E[score]", "CE(oracle)", "KL(.|prior)", "entropy"
        );
        for p in &set.policy {
            let d = p.seed_difference;
            let cell = |v: f64, dv: Option<f64>| match dv {
                Some(dv) => format!("{v:.3} ±{dv:.3}"),
                None => format!("{v:.3}"),
            };
            let _ = writeln!(
                s,
                "  {:<18} {:>15} {:>15} {:>15} {:>15} {:>15}",
                p.source,
                cell(p.mean.top1, d.map(|d| d.top1)),
                cell(p.mean.expected_score, d.map(|d| d.expected_score)),
                cell(p.mean.cross_entropy, d.map(|d| d.cross_entropy)),
                cell(p.mean.kl_prior, d.map(|d| d.kl_prior)),
                cell(p.mean.entropy, d.map(|d| d.entropy)),
            );
        }
        if let Some(prior) = set.policy.first().filter(|p| p.source == "prior") {
            let _ = writeln!(
                s,
                "  {:<18} {:>15} {:>15} {:>10} {:>17}",
                "against the prior", "Δ top-1", "Δ CE", "beats it", "paired s.e."
            );
            for p in set.policy.iter().filter(|p| p.seed_difference.is_some()) {
                let d = p.seed_difference.unwrap_or_default();
                let dt = p.mean.top1 - prior.mean.top1;
                let dc = p.mean.cross_entropy - prior.mean.cross_entropy;
                let beats = dt > d.top1 && -dc > d.cross_entropy;
                let se = p.paired_se_vs_prior.unwrap_or_default();
                let _ = writeln!(
                    s,
                    "  {:<18} {:>15} {:>15} {:>10} {:>17}",
                    p.source,
                    format!("{dt:+.3} ±{:.3}", d.top1),
                    format!("{dc:+.3} ±{:.3}", d.cross_entropy),
                    if beats { "yes" } else { "no" },
                    format!("{:.3} / {:.3}", se.top1, se.cross_entropy)
                );
            }
        }
        let _ = writeln!(s, "  {:<18} {:>15}", "value", "r(oracle)");
        for v in &set.value {
            let c = v.correlation.map_or("-".to_string(), |c| format!("{c:.3}"));
            let c = match v.seed_difference {
                Some(d) => format!("{c} ±{d:.3}"),
                None => c,
            };
            let _ = writeln!(s, "  {:<18} {:>15}", v.source, c);
        }
    }
    let _ = writeln!(
        s,
        "\n±: |seed {} − seed {}| of the same measure (the noise floor); searches show the \
         mean of the seeds. A search target beats the prior when its top-1 is higher and its \
         cross-entropy lower, each by more than the noise floor. Paired s.e.: the standard \
         error of the mean difference to the prior over positions (top-1 / CE).",
        report.seeds.first().copied().unwrap_or_default(),
        report.seeds.get(1).copied().unwrap_or_default()
    );
    s
}

/// The arms of the shipped configs: for each `[selfplay]` section given (name, config),
/// PUCT and Gumbel at its full-search visits, with leaf quiescence `quiescence` and 0
/// (0 once when `quiescence` is 0).
pub fn shipped_arms(configs: &[SelfplayConfig], quiescence: f32) -> Result<Vec<Arm>> {
    if !(0.0..=1.0).contains(&quiescence) {
        bail!("--quiescence must be in 0..=1");
    }
    let mut weights = vec![0.0];
    if quiescence > 0.0 {
        weights.push(quiescence);
    }
    let mut arms: BTreeMap<String, Arm> = BTreeMap::new();
    for c in configs {
        for alg in [RootAlgorithm::Gumbel, RootAlgorithm::Puct] {
            for &q in &weights {
                let arm = Arm::new(c, alg, q);
                arms.entry(arm.name.clone()).or_insert(arm);
            }
        }
    }
    Ok(arms.into_values().collect())
}

#[cfg(test)]
mod tests;
