//! Match statistics: score, Elo with confidence intervals, likelihood of
//! superiority, the pentanomial GSPRT and a maximum-likelihood rating ladder.
//!
//! Elo here is the logistic scale: an expected score `s` corresponds to an
//! Elo difference of `-400 log10(1/s - 1)` ([`elo_from_score`]). The ladder
//! reports ratings on the same scale (see [`ladder`] for how draws are
//! handled).

pub mod anchored;
mod elo;
pub mod ladder;
mod normal;
mod sprt;

use thiserror::Error;

pub use anchored::{AnchorGames, AnchoredRating, rate_against_anchors};
pub use elo::{EloEstimate, Pentanomial, Trinomial, elo_from_score, fmt_elo, score_from_elo};
pub use ladder::{Ladder, LadderConfig, Rating, fit_ladder};
pub use normal::{normal_cdf, normal_quantile};
pub use sprt::{SprtConfig, SprtDecision, SprtStatus, llr_pentanomial};

/// Errors from statistical routines: bad parameters or data that cannot be
/// fitted.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        name: &'static str,
        value: f64,
        reason: &'static str,
    },
    #[error("no games to rate")]
    NoGames,
    #[error("game record has the same player on both sides: {0:?}")]
    SelfPlay(String),
    #[error("anchor player {0:?} does not appear in any game")]
    UnknownAnchor(String),
    #[error(
        "players {a:?} and {b:?} are not connected by any chain of games, so their ratings cannot be compared"
    )]
    Disconnected { a: String, b: String },
    #[error("rating fit did not converge after {iterations} iterations")]
    NotConverged { iterations: usize },
}

/// Checks that a confidence level is in (0, 1).
fn check_confidence(confidence: f64) -> Result<(), StatsError> {
    if confidence > 0.0 && confidence < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidParameter {
            name: "confidence",
            value: confidence,
            reason: "must be strictly between 0 and 1",
        })
    }
}
