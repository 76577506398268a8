//! The gatekeeper: plays the newest candidate network against the accepted one and
//! promotes it if it passes (`xqz gate`, and every gate of `xqz run`).

use anyhow::{Context, Result};
use xq_eval::{
    gate::{GateConfig, gate},
    matches::MatchConfig,
    player::{Player, PlayerError},
    referee::GameSettings,
    spec::PlayerSpec,
};
use xq_rating::{
    gate::OUT_OF_TIME,
    stats::SprtConfig,
    summary::{MatchStatus, MatchSummary},
};
use xq_run::{
    ModelRef, RunDir,
    events::{Event, GateEvent, WarningAction, WarningWhat},
};

use crate::config::GateSection;

/// The network player for a model of the run, with its leaf quiescence in percent.
pub fn net_spec(run: &RunDir, m: &ModelRef, visits: u32, quiescence_pct: u8) -> PlayerSpec {
    PlayerSpec::Net {
        checkpoint: run.model_path(m),
        visits,
        quiescence_pct,
        gumbel: false,
    }
}

/// What the gatekeeper reports while it works: typed, so that a caller can draw a bar
/// from the match's status instead of reading it back out of a line.
#[derive(Debug, Clone, Copy)]
pub enum GateProgress<'a> {
    /// A line for the log: a first network accepted without games, the decision.
    Note(&'a str),
    /// The gating match's status after each finished pair.
    Match(&'a MatchStatus),
}

/// Gates the newest pending candidate, if any, both networks searching with leaf
/// quiescence `quiescence_pct` (the run's [`crate::config::RunConfig::loop_quiescence`]).
/// Returns the decision (None: nothing to gate, or a match that `deadline` cut before a
/// decision: the candidate then stays pending, so a resumed run gates it, and a
/// `warning` event says so).
///
/// # Errors
/// If the match cannot be played or the run directory cannot be written.
pub fn gate_once(
    run: &RunDir,
    cfg: &GateSection,
    quiescence_pct: u8,
    deadline: Option<std::time::Instant>,
    progress: &mut dyn FnMut(GateProgress<'_>),
) -> Result<Option<bool>> {
    let mut pending = run.pending_candidates()?;
    let Some(candidate) = pending.pop() else {
        return Ok(None);
    };
    // Older candidates are superseded by the newest: record them as such.
    for old in &pending {
        run.reject(
            old,
            serde_json::json!({"model": old.name, "reason": "superseded", "by": candidate.name}),
        )?;
    }
    let Some(accepted) = run.accepted()? else {
        progress(GateProgress::Note(&format!(
            "gate: no accepted network yet; {} becomes the first",
            candidate.name
        )));
        run.promote(&candidate, serde_json::json!({"reason": "first"}))?;
        if let Some(repaired) = run.record(Event::Gate(GateEvent {
            candidate: candidate.name.clone(),
            opponent: None,
            step: candidate.step,
            accepted: true,
            reason: "first".into(),
            result: MatchSummary::default(),
        }))? {
            progress(GateProgress::Note(&repaired));
        }
        return Ok(Some(true));
    };
    let sprt = if cfg.sprt {
        Some(
            SprtConfig::new(cfg.elo0, cfg.elo1, cfg.alpha, cfg.beta)
                .context("[gate] sprt settings")?,
        )
    } else {
        None
    };
    let a = net_spec(run, &candidate, cfg.visits, quiescence_pct);
    let b = net_spec(run, &accepted, cfg.visits, quiescence_pct);
    let config = GateConfig {
        matches: MatchConfig {
            games: cfg.games,
            concurrency: cfg.concurrency.max(1),
            settings: GameSettings {
                time_control: cfg.time_control.parse().context("[gate] time_control")?,
                ..GameSettings::default()
            },
            openings: xq_eval::openings::from_spec(&cfg.openings, cfg.seed)
                .with_context(|| format!("[gate] openings {:?}", cfg.openings))?,
            sprt,
            seed: cfg.seed ^ candidate.step,
            pgn_out: Some(
                run.matches_dir()
                    .join(format!("gate-{}.pgn", candidate.name)),
            ),
            event: format!("gate {} vs {}", candidate.name, accepted.name),
        },
        threshold: cfg.threshold,
        deadline,
    };
    let build_a = || -> Result<Box<dyn Player>, PlayerError> { a.build() };
    let build_b = || -> Result<Box<dyn Player>, PlayerError> { b.build() };
    let decision = gate(&build_a, &build_b, &config, &mut |s| {
        progress(GateProgress::Match(s))
    })?;
    if decision.reason == OUT_OF_TIME {
        let line = format!(
            "gate: {} undecided after {} of {} games ({}); it stays pending",
            candidate.name,
            decision.report.games.len(),
            decision.report.status.planned_games,
            decision.report.cutoff.map_or("", |c| c.describe()),
        );
        if let Some(repaired) = run.record(Event::Warning {
            model: Some(candidate.name.clone()),
            message: line.clone(),
            what: None,
            path: None,
            action: None,
        })? {
            progress(GateProgress::Note(&repaired));
        }
        progress(GateProgress::Note(&line));
        return Ok(None);
    }
    let gate_event = GateEvent {
        candidate: candidate.name.clone(),
        opponent: Some(accepted.name.clone()),
        step: candidate.step,
        accepted: decision.accepted,
        reason: decision.reason.into(),
        result: decision.report.summary(),
    };
    let details = serde_json::to_value(&gate_event)?;
    if let Some(repaired) = run.record(Event::Gate(gate_event))? {
        progress(GateProgress::Note(&repaired));
    }
    let mut tb = xq_data::tensorboard::TbLogger::new(run.gate_logs_dir());
    let s = &decision.report.status;
    let step = candidate.step;
    let mut scalars = vec![("gate/accepted", f64::from(u8::from(decision.accepted)))];
    scalars.extend(s.games.score().map(|score| ("gate/score", score)));
    scalars.extend(
        s.elo
            .filter(|e| e.elo.is_finite())
            .map(|e| ("gate/elo", e.elo)),
    );
    // The curves are a view of the decision, which must still be carried out when
    // they cannot be written (a full disk).
    for (tag, value) in scalars {
        if let Err(e) = tb.scalar(tag, value, step) {
            let line = run.warn(Event::file_warning(
                WarningWhat::Tensorboard,
                tb.dir(),
                WarningAction::Stopped,
                format!("TensorBoard logging stopped: {e}"),
            ));
            progress(GateProgress::Note(&line));
            break;
        }
    }
    if decision.accepted {
        run.promote(&candidate, details)?;
    } else {
        run.reject(&candidate, details)?;
    }
    progress(GateProgress::Note(&format!(
        "gate: {} {} ({})",
        candidate.name,
        if decision.accepted {
            "accepted"
        } else {
            "rejected"
        },
        decision.reason
    )));
    Ok(Some(decision.accepted))
}
