//! The gatekeeper's match: the candidate network plays the accepted one in
//! colour-reversed pairs, stopping as soon as the SPRT decides (or its deadline
//! comes), and the rule of [`xq_rating::gate`] judges the result.

use xq_rating::{gate::Verdict, summary::MatchStatus};

use crate::matches::{MatchConfig, MatchError, MatchReport, PlayerFactory, run_match_until};

/// The gate's rules on top of the match settings.
#[derive(Debug, Clone)]
pub struct GateConfig {
    pub matches: MatchConfig,
    /// Score the candidate needs when the SPRT is undecided or absent (e.g. 0.55).
    pub threshold: f64,
    /// When the match must be over (see [`run_match_until`]).
    pub deadline: Option<std::time::Instant>,
}

/// The verdict and the match behind it.
#[derive(Debug, Clone)]
pub struct GateDecision {
    pub accepted: bool,
    /// `sprt_h1`, `sprt_h0`, `threshold_met`, `threshold_missed` or
    /// [`OUT_OF_TIME`](xq_rating::gate::OUT_OF_TIME) (see [`Verdict`]).
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
    progress: &mut dyn FnMut(&MatchStatus),
) -> Result<GateDecision, MatchError> {
    let report = run_match_until(
        candidate,
        accepted,
        &config.matches,
        config.deadline,
        progress,
    )?;
    let verdict = Verdict::of(&report.summary(), config.threshold);
    Ok(GateDecision {
        accepted: verdict.accepted,
        reason: verdict.reason,
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
    };
    use xq_rating::{gate::OUT_OF_TIME, stats::SprtConfig};

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
