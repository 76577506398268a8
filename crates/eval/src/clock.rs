//! Time controls (第6条) and the two-faced clock the referee keeps.
//!
//! Text forms, as accepted by `--tc` and config files:
//! - `40/90m,10/15m`: 40 moves in 90 minutes, then every 10 moves another 15 minutes
//!   (6.1; 6.2 is `30/60m,10/10m`, 6.3 `40/10m,30/5m`, 6.4 `30/5m`: a single period
//!   repeats). Unused time carries over, as on a real clock.
//! - `15m+10s` or `900+10`: sudden death (6.5) with a Fischer increment (seconds when
//!   no unit is given).
//! - `movetime=500ms`: a fixed time per move.
//! - `nodes=800`, `depth=4`: fixed search effort, no clock.
//! - `own`: no clock; each player searches with its own settings (an alpha-beta
//!   player's depth, a network player's visits).

use std::{fmt, str::FromStr, time::Duration};

/// One period of a period time control: `moves` moves in `time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub moves: u32,
    pub time: Duration,
}

/// How much a player may think.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeControl {
    /// The first period, then `next` repeated until the game ends.
    Periods { first: Period, next: Period },
    /// All moves in `time`, plus `increment` after each move.
    SuddenDeath { time: Duration, increment: Duration },
    /// A fixed time per move.
    MoveTime(Duration),
    /// A fixed number of search nodes (or network evaluations) per move.
    Nodes(u64),
    /// A fixed search depth per move.
    Depth(u32),
    /// No limit from the referee: each player uses its own configured effort.
    Own,
}

/// A time-control string that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid time control {input:?}: {why} (examples: 40/90m,10/15m  15m+10s  movetime=500ms  nodes=800  depth=4)"
)]
pub struct ParseTimeControlError {
    pub input: String,
    pub why: &'static str,
}

fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.parse().ok()?;
    if !v.is_finite() || v < 0.0 || v * scale > 1e7 {
        return None;
    }
    Some(Duration::from_secs_f64(v * scale))
}

fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

impl FromStr for TimeControl {
    type Err = ParseTimeControlError;

    fn from_str(s: &str) -> Result<TimeControl, ParseTimeControlError> {
        let err = |why| ParseTimeControlError {
            input: s.to_owned(),
            why,
        };
        let t = s.trim();
        if t == "own" {
            return Ok(TimeControl::Own);
        }
        if let Some(v) = t.strip_prefix("movetime=") {
            let d = parse_duration(v).ok_or(err("bad duration after movetime="))?;
            if d.is_zero() {
                return Err(err("movetime must be positive"));
            }
            return Ok(TimeControl::MoveTime(d));
        }
        if let Some(v) = t.strip_prefix("nodes=") {
            let n: u64 = v.parse().map_err(|_| err("bad number after nodes="))?;
            if n == 0 {
                return Err(err("nodes must be positive"));
            }
            return Ok(TimeControl::Nodes(n));
        }
        if let Some(v) = t.strip_prefix("depth=") {
            let n: u32 = v.parse().map_err(|_| err("bad number after depth="))?;
            if n == 0 || n > 64 {
                return Err(err("depth must be 1-64"));
            }
            return Ok(TimeControl::Depth(n));
        }
        if t.contains('/') {
            let parse_period = |p: &str| -> Result<Period, ParseTimeControlError> {
                let (m, d) = p.split_once('/').ok_or(err("a period is MOVES/TIME"))?;
                let moves: u32 = m
                    .trim()
                    .parse()
                    .map_err(|_| err("bad move count in period"))?;
                let time = parse_duration(d).ok_or(err("bad time in period"))?;
                if moves == 0 || time.is_zero() {
                    return Err(err("a period needs moves > 0 and time > 0"));
                }
                Ok(Period { moves, time })
            };
            let mut parts = t.split(',');
            let first = parse_period(parts.next().unwrap_or(""))?;
            let next = match parts.next() {
                Some(p) => parse_period(p)?,
                None => first,
            };
            if parts.next().is_some() {
                return Err(err("at most two periods"));
            }
            return Ok(TimeControl::Periods { first, next });
        }
        let (base, inc) = match t.split_once('+') {
            Some((b, i)) => (b, Some(i)),
            None => (t, None),
        };
        let time = parse_duration(base).ok_or(err("bad base time"))?;
        if time.is_zero() {
            return Err(err("base time must be positive"));
        }
        let increment = match inc {
            Some(i) => parse_duration(i).ok_or(err("bad increment"))?,
            None => Duration::ZERO,
        };
        Ok(TimeControl::SuddenDeath { time, increment })
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TimeControl::Periods { first, next } => {
                write!(f, "{}/{}", first.moves, format_duration(first.time))?;
                if next != first {
                    write!(f, ",{}/{}", next.moves, format_duration(next.time))?;
                }
                Ok(())
            }
            TimeControl::SuddenDeath { time, increment } => {
                write!(f, "{}", format_duration(time))?;
                if !increment.is_zero() {
                    write!(f, "+{}", format_duration(increment))?;
                }
                Ok(())
            }
            TimeControl::MoveTime(d) => write!(f, "movetime={}", format_duration(d)),
            TimeControl::Nodes(n) => write!(f, "nodes={n}"),
            TimeControl::Depth(n) => write!(f, "depth={n}"),
            TimeControl::Own => f.write_str("own"),
        }
    }
}

/// What a player is told before it moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Own remaining time on the clock.
    pub time_left: Option<Duration>,
    /// Own increment per move.
    pub increment: Duration,
    /// Moves to make before the next time control is added (period controls).
    pub moves_to_go: Option<u32>,
    pub opp_time_left: Option<Duration>,
    pub opp_increment: Duration,
    pub opp_moves_to_go: Option<u32>,
    /// A fixed time for this move.
    pub movetime: Option<Duration>,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
}

impl Limits {
    /// How long to think for this move under these limits: the whole fixed time, or a
    /// share of the remaining time (remaining / moves to go, or / 30 in sudden death),
    /// plus most of the increment, capped so that a safety margin always stays on the
    /// clock. `None` means no time limit (nodes or depth bound the search).
    pub fn budget(&self) -> Option<Duration> {
        if let Some(mt) = self.movetime {
            return Some(
                mt.saturating_sub(Duration::from_millis(15))
                    .max(Duration::from_millis(1)),
            );
        }
        let left = self.time_left?;
        let margin = Duration::from_millis(50).max(left / 20);
        let usable = left.saturating_sub(margin);
        let share = match self.moves_to_go {
            Some(n) => usable / (n.clamp(1, 80) + 1),
            None => usable / 30,
        };
        let want = share + self.increment * 3 / 4;
        Some(want.min(usable).max(Duration::from_millis(1)))
    }
}

/// The referee's clock for one game: both sides' remaining time and moves in period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clock {
    tc: TimeControl,
    left: [Duration; 2],
    moves_in_period: [u32; 2],
    in_first_period: [bool; 2],
}

impl Clock {
    pub fn new(tc: TimeControl) -> Clock {
        let start = match tc {
            TimeControl::Periods { first, .. } => first.time,
            TimeControl::SuddenDeath { time, .. } => time,
            _ => Duration::ZERO,
        };
        Clock {
            tc,
            left: [start; 2],
            moves_in_period: [0; 2],
            in_first_period: [true; 2],
        }
    }

    pub fn time_control(&self) -> TimeControl {
        self.tc
    }

    fn period(&self, side: usize) -> Option<Period> {
        match self.tc {
            TimeControl::Periods { first, next } => Some(if self.in_first_period[side] {
                first
            } else {
                next
            }),
            _ => None,
        }
    }

    /// The limits for `side` (0 = red, 1 = black) about to move.
    pub fn limits(&self, side: usize) -> Limits {
        let opp = 1 - side;
        let to_go = |s: usize| self.period(s).map(|p| p.moves - self.moves_in_period[s]);
        match self.tc {
            TimeControl::Periods { .. } => Limits {
                time_left: Some(self.left[side]),
                moves_to_go: to_go(side),
                opp_time_left: Some(self.left[opp]),
                opp_moves_to_go: to_go(opp),
                ..Limits::default()
            },
            TimeControl::SuddenDeath { increment, .. } => Limits {
                time_left: Some(self.left[side]),
                increment,
                opp_time_left: Some(self.left[opp]),
                opp_increment: increment,
                ..Limits::default()
            },
            TimeControl::MoveTime(d) => Limits {
                movetime: Some(d),
                ..Limits::default()
            },
            TimeControl::Nodes(n) => Limits {
                nodes: Some(n),
                ..Limits::default()
            },
            TimeControl::Depth(n) => Limits {
                depth: Some(n),
                ..Limits::default()
            },
            TimeControl::Own => Limits::default(),
        }
    }

    /// Records that `side` used `elapsed` for a move. Returns `false` if the side has
    /// overstepped its time (loses on time, 4.1.5). Fixed-time controls allow a grace of
    /// 100 ms plus 50% for process and pipe latency.
    pub fn punch(&mut self, side: usize, elapsed: Duration) -> bool {
        match self.tc {
            TimeControl::Periods { .. } => {
                if elapsed > self.left[side] {
                    self.left[side] = Duration::ZERO;
                    return false;
                }
                self.left[side] -= elapsed;
                self.moves_in_period[side] += 1;
                let p = self.period(side).expect("period control");
                if self.moves_in_period[side] >= p.moves {
                    self.in_first_period[side] = false;
                    self.moves_in_period[side] = 0;
                    let next = self.period(side).expect("period control");
                    self.left[side] += next.time;
                }
                true
            }
            TimeControl::SuddenDeath { increment, .. } => {
                if elapsed > self.left[side] {
                    self.left[side] = Duration::ZERO;
                    return false;
                }
                self.left[side] = self.left[side] - elapsed + increment;
                true
            }
            TimeControl::MoveTime(d) => elapsed <= d + d / 2 + Duration::from_millis(100),
            TimeControl::Nodes(_) | TimeControl::Depth(_) | TimeControl::Own => true,
        }
    }

    pub fn time_left(&self, side: usize) -> Duration {
        self.left[side]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_every_form() {
        for (text, printed) in [
            ("40/90m,10/15m", "40/90m,10/15m"),
            ("30/5m", "30/5m"),
            ("15m+10s", "15m+10s"),
            ("900+10", "15m+10s"),
            ("60", "1m"),
            ("movetime=500ms", "movetime=500ms"),
            ("nodes=800", "nodes=800"),
            ("depth=4", "depth=4"),
            ("own", "own"),
        ] {
            let tc: TimeControl = text.parse().unwrap();
            assert_eq!(tc.to_string(), printed, "{text}");
            assert_eq!(printed.parse::<TimeControl>().unwrap(), tc);
        }
    }

    #[test]
    fn rejects_nonsense_naming_the_input() {
        for bad in [
            "",
            "abc",
            "0/5m",
            "40/0m",
            "depth=0",
            "nodes=-1",
            "1/1m,1/1m,1/1m",
            "5m+x",
        ] {
            let e = bad.parse::<TimeControl>().unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn periods_add_time_after_the_quota() {
        let mut c = Clock::new("2/10s,1/5s".parse().unwrap());
        assert_eq!(c.limits(0).moves_to_go, Some(2));
        assert!(c.punch(0, Duration::from_secs(3)));
        assert!(c.punch(0, Duration::from_secs(3)));
        // 10 - 6 = 4 s left, then 5 s for the next single move.
        assert_eq!(c.time_left(0), Duration::from_secs(9));
        assert_eq!(c.limits(0).moves_to_go, Some(1));
        assert!(!c.punch(0, Duration::from_secs(10)), "overstepping loses");
    }

    #[test]
    fn increment_is_added_after_each_move() {
        let mut c = Clock::new("10s+1s".parse().unwrap());
        assert!(c.punch(1, Duration::from_secs(2)));
        assert_eq!(c.time_left(1), Duration::from_secs(9));
        assert_eq!(c.time_left(0), Duration::from_secs(10));
    }

    #[test]
    fn budget_keeps_a_margin() {
        let l = Limits {
            time_left: Some(Duration::from_secs(1)),
            increment: Duration::from_secs(10),
            ..Limits::default()
        };
        assert!(l.budget().unwrap() < Duration::from_secs(1));
        let l = Limits {
            time_left: Some(Duration::from_secs(60)),
            moves_to_go: Some(9),
            ..Limits::default()
        };
        let b = l.budget().unwrap();
        assert!(
            b > Duration::from_secs(4) && b < Duration::from_secs(7),
            "{b:?}"
        );
    }
}
