//! A match between two players in numbers: where it stands after each finished pair
//! ([`MatchStatus`], what progress lines show) and its result as a record
//! ([`MatchSummary`], what `xqz match --json`, the gatekeeper's and the rating's events
//! and strength records carry). Playing the match is xq-eval's; these are the
//! statistics it reports and the records that outlive it, read back by tools that
//! play nothing.

use serde::{Deserialize, Serialize};

use crate::stats::{EloEstimate, Pentanomial, SprtDecision, SprtStatus, Trinomial, fmt_elo};

/// Where a match stands, after each finished pair.
#[derive(Debug, Clone)]
pub struct MatchStatus {
    pub a: String,
    pub b: String,
    /// Results from A's point of view.
    pub games: Trinomial,
    pub pairs: Pentanomial,
    pub elo: Option<EloEstimate>,
    pub los: f64,
    pub sprt: Option<SprtStatus>,
    pub planned_games: usize,
}

impl MatchStatus {
    /// One progress line: `A vs B: +12 =5 -3 (20/40 games) score 72.5% Elo +168 [+44, +358]
    /// LOS 99.0%`, then `LLR 1.20 [-2.94, 2.94]` under an SPRT (the Elo as [`fmt_elo`]
    /// writes it).
    pub fn line(&self) -> String {
        let g = &self.games;
        let mut s = format!(
            "{} vs {}: +{} ={} -{} ({}/{} games)",
            self.a,
            self.b,
            g.wins,
            g.draws,
            g.losses,
            g.wins + g.draws + g.losses,
            self.planned_games
        );
        if let Some(score) = g.score() {
            s += &format!(" score {:.1}%", 100.0 * score);
        }
        if let Some(e) = &self.elo {
            s += &format!(" Elo {}", fmt_elo(e.elo, Some((e.elo_lower, e.elo_upper))));
        }
        s += &format!(" LOS {:.1}%", 100.0 * self.los);
        if let Some(t) = &self.sprt {
            s += &format!(" LLR {:.2} [{:.2}, {:.2}]", t.llr, t.lower, t.upper);
        }
        s
    }
}

impl MatchStatus {
    /// The match as a record, once it is over: `decision` is the SPRT's (if one was
    /// configured), `cutoff` why a deadline ended it early (if it did), and
    /// `discarded_games` the games of pairs left out of the statistics.
    pub fn summary(
        &self,
        decision: Option<SprtDecision>,
        cutoff: Option<Cutoff>,
        discarded_games: u64,
    ) -> MatchSummary {
        let finite = |x: f64| x.is_finite().then_some(x);
        MatchSummary {
            a: self.a.clone(),
            b: self.b.clone(),
            games: self.games.wins + self.games.draws + self.games.losses,
            wins: self.games.wins,
            draws: self.games.draws,
            losses: self.games.losses,
            score: self.games.score(),
            draw_ratio: self.games.draw_ratio(),
            elo: self.elo.and_then(|e| finite(e.elo)),
            elo_lower: self.elo.and_then(|e| finite(e.elo_lower)),
            elo_upper: self.elo.and_then(|e| finite(e.elo_upper)),
            los: finite(self.los),
            pentanomial: self.pairs.counts,
            sprt: self.sprt.map(|t| SprtState {
                llr: t.llr,
                lower: t.lower,
                upper: t.upper,
            }),
            decision,
            planned_games: self.planned_games as u64,
            cutoff,
            discarded_games,
        }
    }
}

/// Why a match with a deadline played fewer games than planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cutoff {
    /// The time left could not fit another pair, by the pairs played so far; every
    /// pair begun was finished.
    NoTimeForPair,
    /// The deadline came with pairs under way; they were stopped and discarded.
    Deadline,
}

impl Cutoff {
    /// How the cut reads in a log line or summary.
    pub fn describe(self) -> &'static str {
        match self {
            Cutoff::NoTimeForPair => "no time left for another pair",
            Cutoff::Deadline => "stopped at the deadline",
        }
    }
}

/// A match's result as a record: what `xqz match --json` writes and what the
/// gatekeeper's and the rating's events in `events.jsonl` carry (games, score, Elo with
/// its interval, LOS, pentanomial counts, SPRT state and decision). Every field has a
/// default so that partial records (a gate decided without games) read back.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MatchSummary {
    pub a: String,
    pub b: String,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub score: Option<f64>,
    pub draw_ratio: Option<f64>,
    /// Written as `null` when unbounded (JSON has no infinity); read back from a
    /// number, `null`, or `"inf"`/`"-inf"` as other tools write it.
    #[serde(deserialize_with = "elo_number")]
    pub elo: Option<f64>,
    #[serde(deserialize_with = "elo_number")]
    pub elo_lower: Option<f64>,
    #[serde(deserialize_with = "elo_number")]
    pub elo_upper: Option<f64>,
    pub los: Option<f64>,
    pub pentanomial: [u64; 5],
    pub sprt: Option<SprtState>,
    pub decision: Option<SprtDecision>,
    /// Games the match was to play (0 in records written before this was kept).
    pub planned_games: u64,
    /// Why fewer games than planned were played for lack of time, if so.
    pub cutoff: Option<Cutoff>,
    /// Games of pairs cut at the deadline or with a double forfeit, not counted in
    /// `games`.
    pub discarded_games: u64,
}

fn elo_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Elo {
        Number(f64),
        Text(String),
    }
    Ok(match Option::<Elo>::deserialize(d)? {
        None => None,
        Some(Elo::Number(x)) => Some(x),
        Some(Elo::Text(t)) => match t.trim().to_ascii_lowercase().as_str() {
            "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
            "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
            other => Some(other.parse().map_err(serde::de::Error::custom)?),
        },
    })
}

/// The SPRT's log-likelihood ratio and its bounds, in a [`MatchSummary`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SprtState {
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records written by other tools, or before a field existed, read back.
    #[test]
    fn unbounded_elo_reads_from_null_or_text_and_missing_fields_default() {
        let s: MatchSummary = serde_json::from_str(
            r#"{"a": "x", "b": "y", "elo": "inf", "elo_lower": null, "elo_upper": "-Infinity"}"#,
        )
        .unwrap();
        assert_eq!(s.elo, Some(f64::INFINITY));
        assert_eq!(s.elo_lower, None);
        assert_eq!(s.elo_upper, Some(f64::NEG_INFINITY));
        assert_eq!((s.games, s.planned_games, s.cutoff), (0, 0, None));
    }

    #[test]
    fn a_status_line_writes_the_elo_as_fmt_elo_does() {
        let mut games = Trinomial::default();
        for r in [
            [crate::GameResult::Win; 12].as_slice(),
            &[crate::GameResult::Draw; 5],
            &[crate::GameResult::Loss; 3],
        ]
        .concat()
        {
            games.record(r);
        }
        let status = MatchStatus {
            a: "A".into(),
            b: "B".into(),
            elo: games.estimate(0.95).unwrap(),
            los: games.los(),
            games,
            pairs: Pentanomial::default(),
            sprt: None,
            planned_games: 40,
        };
        assert_eq!(
            status.line(),
            "A vs B: +12 =5 -3 (20/40 games) score 72.5% Elo +168 [+44, +358] LOS 99.0%"
        );
    }

    #[test]
    fn a_summary_keeps_only_finite_numbers() {
        let mut status = MatchStatus {
            a: "a".into(),
            b: "b".into(),
            games: Trinomial::default(),
            pairs: Pentanomial::default(),
            elo: None,
            los: f64::NAN,
            sprt: None,
            planned_games: 4,
        };
        status.games.record(crate::GameResult::Win);
        status.games.record(crate::GameResult::Win);
        let s = status.summary(None, Some(Cutoff::Deadline), 2);
        assert_eq!((s.games, s.wins, s.score), (2, 2, Some(1.0)));
        assert_eq!((s.los, s.planned_games, s.discarded_games), (None, 4, 2));
        assert_eq!(s.cutoff, Some(Cutoff::Deadline));
    }
}
