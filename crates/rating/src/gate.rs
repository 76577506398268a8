//! The gatekeeper's rule: does a match's result let a candidate network replace the
//! accepted one?
//!
//! The candidate (player A) played the accepted network. With an SPRT configured the
//! candidate is accepted exactly when H1 (it is at least `elo1` better than `elo0`) is
//! accepted; if the game limit came first, the score decides against the threshold.
//! Without an SPRT the score decides. A match that a deadline cut before the SPRT
//! decided makes no decision from the games it has ([`OUT_OF_TIME`]): too few games for
//! the SPRT are too few for the threshold too.

use crate::{stats::SprtDecision, summary::MatchSummary};

/// The reason of a gate whose match the deadline cut before a decision: the candidate
/// is not accepted, and a caller that can gate it again later should.
pub const OUT_OF_TIME: &str = "out_of_time";

/// The gate's verdict on a finished match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub accepted: bool,
    /// `sprt_h1`, `sprt_h0`, `threshold_met`, `threshold_missed` or [`OUT_OF_TIME`].
    pub reason: &'static str,
}

impl Verdict {
    /// The verdict on `summary` (the candidate is player A), with `threshold` the
    /// score the candidate needs when the SPRT is undecided or absent (e.g. 0.55).
    #[must_use]
    pub fn of(summary: &MatchSummary, threshold: f64) -> Verdict {
        let score = summary.score.unwrap_or(0.0);
        let (accepted, reason) = match summary.decision {
            Some(SprtDecision::AcceptH1) => (true, "sprt_h1"),
            Some(SprtDecision::AcceptH0) => (false, "sprt_h0"),
            _ if summary.cutoff.is_some() => (false, OUT_OF_TIME),
            _ if score >= threshold => (true, "threshold_met"),
            _ => (false, "threshold_missed"),
        };
        Verdict { accepted, reason }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::Cutoff;

    fn summary(decision: Option<SprtDecision>, score: f64, cutoff: Option<Cutoff>) -> MatchSummary {
        MatchSummary {
            games: 20,
            score: Some(score),
            decision,
            cutoff,
            ..MatchSummary::default()
        }
    }

    #[test]
    fn a_decided_sprt_overrules_the_score() {
        let v = Verdict::of(&summary(Some(SprtDecision::AcceptH1), 0.4, None), 0.55);
        assert_eq!((v.accepted, v.reason), (true, "sprt_h1"));
        let v = Verdict::of(&summary(Some(SprtDecision::AcceptH0), 0.9, None), 0.55);
        assert_eq!((v.accepted, v.reason), (false, "sprt_h0"));
    }

    #[test]
    fn without_a_decision_the_score_meets_the_threshold_or_not() {
        let continuing = Some(SprtDecision::Continue);
        let v = Verdict::of(&summary(continuing, 0.55, None), 0.55);
        assert_eq!((v.accepted, v.reason), (true, "threshold_met"));
        let v = Verdict::of(&summary(None, 0.5, None), 0.55);
        assert_eq!((v.accepted, v.reason), (false, "threshold_missed"));
    }

    #[test]
    fn a_match_cut_by_its_deadline_accepts_nothing_whatever_the_score() {
        let v = Verdict::of(&summary(None, 1.0, Some(Cutoff::Deadline)), 0.55);
        assert_eq!((v.accepted, v.reason), (false, OUT_OF_TIME));
        let empty = MatchSummary {
            cutoff: Some(Cutoff::NoTimeForPair),
            ..MatchSummary::default()
        };
        assert_eq!(Verdict::of(&empty, 0.55).reason, OUT_OF_TIME);
    }
}
