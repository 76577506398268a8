//! The gatekeeper's decision: does a candidate network replace the accepted one?
//!
//! The candidate plays the accepted network in colour-reversed pairs. With an SPRT
//! configured the match stops as soon as it is decided and the candidate is accepted
//! exactly when H1 (it is at least `elo1` better than `elo0`) is accepted; if the game
//! limit comes first, the score decides against `threshold`. Without an SPRT the full
//! number of games is played and the score decides. A gate with a deadline that cuts
//! the match before the SPRT decides makes no decision from the games it has
//! ([`OUT_OF_TIME`]): too few games for the SPRT are too few for the threshold too.

use crate::{
    matches::{MatchConfig, MatchError, MatchReport, PlayerFactory, run_match_until},
    stats::SprtDecision,
};

/// The gate's rules on top of the match settings.
#[derive(Debug, Clone)]
pub struct GateConfig {
    pub matches: MatchConfig,
    /// Score the candidate needs when the SPRT is undecided or absent (e.g. 0.55).
    pub threshold: f64,
    /// When the match must be over (see [`run_match_until`]).
    pub deadline: Option<std::time::Instant>,
}

/// The reason of a gate whose match the deadline cut before a decision: the candidate
/// is not accepted, and a caller that can gate it again later should.
pub const OUT_OF_TIME: &str = "out_of_time";

/// The verdict and the match behind it.
#[derive(Debug, Clone)]
pub struct GateDecision {
    pub accepted: bool,
    /// `sprt_h1`, `sprt_h0`, `threshold_met`, `threshold_missed` or [`OUT_OF_TIME`].
    pub reason: &'static str,
    pub report: MatchReport,
}

/// Plays the gating match (`candidate` is player A).
///
/// # Errors
/// If the match cannot be played (players that cannot be built, unwritable PGN).
pub fn gate(
    candidate: &PlayerFactory<'_>,
    accepted: &PlayerFactory<'_>,
    config: &GateConfig,
    progress: &mut dyn FnMut(&crate::matches::MatchStatus),
) -> Result<GateDecision, MatchError> {
    let report = run_match_until(
        candidate,
        accepted,
        &config.matches,
        config.deadline,
        progress,
    )?;
    let score = report.status.games.score().unwrap_or(0.0);
    let (accepted, reason) = match report.decision {
        Some(SprtDecision::AcceptH1) => (true, "sprt_h1"),
        Some(SprtDecision::AcceptH0) => (false, "sprt_h0"),
        _ if report.cutoff.is_some() => (false, OUT_OF_TIME),
        _ if score >= config.threshold => (true, "threshold_met"),
        _ => (false, "threshold_missed"),
    };
    Ok(GateDecision {
        accepted,
        reason,
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        clock::TimeControl,
        openings,
        player::{AlphaBetaPlayer, Player, PlayerError, RandomPlayer},
        referee::GameSettings,
        stats::SprtConfig,
    };

    fn config(sprt: bool) -> GateConfig {
        GateConfig {
            matches: MatchConfig {
                games: if sprt { 200 } else { 40 },
                concurrency: 2,
                settings: GameSettings {
                    time_control: TimeControl::Own,
                    max_plies: 200,
                    ..GameSettings::default()
                },
                openings: openings::builtin(),
                sprt: sprt.then(|| SprtConfig::new(0.0, 50.0, 0.05, 0.05).unwrap()),
                seed: 5,
                pgn_out: None,
                event: "gate".into(),
            },
            threshold: 0.55,
            deadline: None,
        }
    }

    fn strong() -> Result<Box<dyn Player>, PlayerError> {
        Ok(Box::new(AlphaBetaPlayer::new(2, 1)))
    }

    fn weak() -> Result<Box<dyn Player>, PlayerError> {
        Ok(Box::new(RandomPlayer::new()))
    }

    #[test]
    fn a_stronger_candidate_passes_and_a_weaker_one_fails() {
        let d = gate(&strong, &weak, &config(true), &mut |_| {}).unwrap();
        assert!(d.accepted, "{}", d.report.status.line());
        assert_eq!(d.reason, "sprt_h1", "{}", d.report.status.line());
        assert!(d.report.games.len() < 200, "the SPRT stops early");
        let d = gate(&weak, &strong, &config(true), &mut |_| {}).unwrap();
        assert!(!d.accepted);
        assert_eq!(d.reason, "sprt_h0");
        let d = gate(&weak, &strong, &config(false), &mut |_| {}).unwrap();
        assert!(!d.accepted);
        assert_eq!(d.reason, "threshold_missed");
        assert_eq!(d.report.games.len(), 40);
    }

    #[test]
    fn a_gate_cut_by_its_deadline_before_a_decision_accepts_nothing() {
        let mut cfg = config(false);
        cfg.deadline = Some(std::time::Instant::now());
        let d = gate(&strong, &weak, &cfg, &mut |_| {}).unwrap();
        assert!(!d.accepted);
        assert_eq!(d.reason, OUT_OF_TIME);
    }
}
