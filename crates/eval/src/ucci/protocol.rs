//! Parsing the commands a GUI sends to a UCCI (or UCI) engine.
//!
//! One parser serves both dialects: UCCI's `setoption NAME VALUE` and UCI's
//! `setoption name NAME value VALUE`, UCCI's `go time/increment/opptime…` and UCI's
//! `go wtime/btime/winc/binc/movetime…`. Every malformed line is an error that names the
//! problem; the engine reports it on an `info string` line and carries on.

use std::fmt;

/// A `go` command's parameters; times in the units the GUI sent them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoParams {
    pub ponder: bool,
    pub draw: bool,
    pub infinite: bool,
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    /// UCCI `time`: own remaining time.
    pub time: Option<u64>,
    pub movestogo: Option<u32>,
    pub increment: Option<u64>,
    pub opptime: Option<u64>,
    pub oppmovestogo: Option<u32>,
    pub oppincrement: Option<u64>,
    /// UCI clocks (always milliseconds).
    pub wtime: Option<u64>,
    pub btime: Option<u64>,
    pub winc: Option<u64>,
    pub binc: Option<u64>,
    pub movetime: Option<u64>,
}

/// One command from the GUI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Ucci,
    Uci,
    IsReady,
    SetOption {
        name: String,
        value: Option<String>,
    },
    /// `fen: None` is `startpos`.
    Position {
        fen: Option<String>,
        moves: Vec<String>,
    },
    BanMoves(Vec<String>),
    Go(GoParams),
    Stop,
    PonderHit {
        draw: bool,
    },
    Probe {
        fen: Option<String>,
        moves: Vec<String>,
    },
    UciNewGame,
    Quit,
}

/// A line that is not a valid command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

fn err<T>(msg: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError(msg.into()))
}

fn number<T: std::str::FromStr>(key: &str, v: Option<&&str>) -> Result<T, ParseError> {
    match v {
        Some(s) => s
            .parse()
            .or_else(|_| err(format!("go {key}: {s:?} is not a valid number"))),
        None => err(format!("go {key}: missing value")),
    }
}

/// `{fen FEN | startpos} [moves m1 m2 …]`.
fn parse_position(words: &[&str], what: &str) -> Result<(Option<String>, Vec<String>), ParseError> {
    let (fen, rest) = match words.first() {
        Some(&"startpos") => (None, &words[1..]),
        Some(&"fen") => {
            let end = words
                .iter()
                .position(|w| *w == "moves")
                .unwrap_or(words.len());
            if end <= 1 {
                return err(format!("{what} fen: missing FEN"));
            }
            (Some(words[1..end].join(" ")), &words[end..])
        }
        Some(w) => return err(format!("{what}: expected 'fen' or 'startpos', got {w:?}")),
        None => return err(format!("{what}: expected 'fen' or 'startpos'")),
    };
    let moves = match rest.first() {
        Some(&"moves") => rest[1..].iter().map(|s| (*s).to_owned()).collect(),
        Some(w) => return err(format!("{what}: unexpected {w:?} (expected 'moves')")),
        None => Vec::new(),
    };
    Ok((fen, moves))
}

/// Parses one line. Empty lines are `Ok(None)`.
///
/// # Errors
/// A [`ParseError`] naming what is wrong with the line.
pub fn parse(line: &str) -> Result<Option<Command>, ParseError> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some((&head, rest)) = words.split_first() else {
        return Ok(None);
    };
    let cmd = match head {
        "ucci" => Command::Ucci,
        "uci" => Command::Uci,
        "isready" => Command::IsReady,
        "ucinewgame" => Command::UciNewGame,
        "stop" => Command::Stop,
        "quit" => Command::Quit,
        "ponderhit" => match rest {
            [] => Command::PonderHit { draw: false },
            ["draw"] => Command::PonderHit { draw: true },
            _ => return err(format!("ponderhit: unexpected {:?}", rest.join(" "))),
        },
        "setoption" => {
            if rest.first() == Some(&"name") {
                let vpos = rest.iter().position(|w| *w == "value");
                let name_end = vpos.unwrap_or(rest.len());
                if name_end <= 1 {
                    return err("setoption name: missing option name");
                }
                Command::SetOption {
                    name: rest[1..name_end].join(" "),
                    value: vpos.map(|p| rest[p + 1..].join(" ")),
                }
            } else {
                match rest.split_first() {
                    Some((name, value)) => Command::SetOption {
                        name: (*name).to_owned(),
                        value: (!value.is_empty()).then(|| value.join(" ")),
                    },
                    None => return err("setoption: missing option name"),
                }
            }
        }
        "position" => {
            let (fen, moves) = parse_position(rest, "position")?;
            Command::Position { fen, moves }
        }
        "probe" => {
            let (fen, moves) = parse_position(rest, "probe")?;
            Command::Probe { fen, moves }
        }
        "banmoves" => Command::BanMoves(rest.iter().map(|s| (*s).to_owned()).collect()),
        "go" => {
            let mut g = GoParams::default();
            let mut i = 0;
            while i < rest.len() {
                let key = rest[i];
                let v = rest.get(i + 1);
                let mut takes_value = true;
                match key {
                    "ponder" => {
                        g.ponder = true;
                        takes_value = false;
                    }
                    "draw" => {
                        g.draw = true;
                        takes_value = false;
                    }
                    "infinite" => {
                        g.infinite = true;
                        takes_value = false;
                    }
                    "depth" => g.depth = Some(number(key, v)?),
                    "nodes" => g.nodes = Some(number(key, v)?),
                    "time" => g.time = Some(number(key, v)?),
                    "movestogo" => g.movestogo = Some(number(key, v)?),
                    "increment" => g.increment = Some(number(key, v)?),
                    "opptime" => g.opptime = Some(number(key, v)?),
                    "oppmovestogo" => g.oppmovestogo = Some(number(key, v)?),
                    "oppincrement" => g.oppincrement = Some(number(key, v)?),
                    "wtime" => g.wtime = Some(number(key, v)?),
                    "btime" => g.btime = Some(number(key, v)?),
                    "winc" => g.winc = Some(number(key, v)?),
                    "binc" => g.binc = Some(number(key, v)?),
                    "movetime" => g.movetime = Some(number(key, v)?),
                    other => return err(format!("go: unknown parameter {other:?}")),
                }
                i += if takes_value { 2 } else { 1 };
            }
            if g.ponder && g.draw {
                return err("go: 'ponder' and 'draw' cannot be combined (use 'ponderhit draw')");
            }
            Command::Go(g)
        }
        other => return err(format!("unknown command {other:?}")),
    };
    Ok(Some(cmd))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> Command {
        parse(line).unwrap().unwrap()
    }

    #[test]
    fn parses_both_setoption_dialects() {
        assert_eq!(
            ok("setoption usemillisec true"),
            Command::SetOption {
                name: "usemillisec".into(),
                value: Some("true".into())
            }
        );
        assert_eq!(
            ok("setoption name Skill Level value 3"),
            Command::SetOption {
                name: "Skill Level".into(),
                value: Some("3".into())
            }
        );
        assert_eq!(
            ok("setoption newgame"),
            Command::SetOption {
                name: "newgame".into(),
                value: None
            }
        );
    }

    #[test]
    fn parses_positions() {
        assert_eq!(
            ok("position startpos moves h2e2 h9g7"),
            Command::Position {
                fen: None,
                moves: vec!["h2e2".into(), "h9g7".into()]
            }
        );
        let Command::Position { fen, moves } = ok("position fen 4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1")
        else {
            panic!()
        };
        assert_eq!(fen.as_deref(), Some("4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1"));
        assert!(moves.is_empty());
    }

    #[test]
    fn parses_go_forms() {
        let Command::Go(g) = ok("go time 300000 increment 0 opptime 300000 oppincrement 0") else {
            panic!()
        };
        assert_eq!(
            (g.time, g.increment, g.opptime),
            (Some(300000), Some(0), Some(300000))
        );
        let Command::Go(g) = ok("go ponder time 1000 movestogo 10") else {
            panic!()
        };
        assert!(g.ponder);
        assert_eq!(g.movestogo, Some(10));
        let Command::Go(g) = ok("go wtime 1000 btime 2000 winc 10 binc 20") else {
            panic!()
        };
        assert_eq!(
            (g.wtime, g.btime, g.winc, g.binc),
            (Some(1000), Some(2000), Some(10), Some(20))
        );
        assert!(matches!(
            ok("go infinite"),
            Command::Go(GoParams { infinite: true, .. })
        ));
    }

    #[test]
    fn malformed_lines_name_the_problem() {
        for (line, needle) in [
            ("go depth x", "not a valid number"),
            ("go depth", "missing value"),
            ("go sideways 3", "unknown parameter"),
            ("position", "expected 'fen' or 'startpos'"),
            ("position fen", "missing FEN"),
            ("position startpos h2e2", "unexpected"),
            ("fly", "unknown command"),
            ("setoption", "missing option name"),
            ("go ponder draw", "cannot be combined"),
        ] {
            let e = parse(line).unwrap_err();
            assert!(e.0.contains(needle), "{line:?}: {e}");
        }
        assert_eq!(parse("   ").unwrap(), None);
    }

    /// Random byte soup never panics the parser.
    #[test]
    fn parser_survives_random_input() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let words = [
            "go",
            "position",
            "fen",
            "startpos",
            "moves",
            "depth",
            "time",
            "setoption",
            "name",
            "value",
            "ponderhit",
            "draw",
            "banmoves",
            "h2e2",
            "9",
            "-1",
            "∞",
            "",
            "probe",
        ];
        for _ in 0..20_000 {
            let n = rng.random_range(0..8);
            let line: Vec<&str> = (0..n)
                .map(|_| words[rng.random_range(0..words.len())])
                .collect();
            let _ = parse(&line.join(" "));
            let bytes: Vec<u8> = (0..rng.random_range(0..30)).map(|_| rng.random()).collect();
            let _ = parse(&String::from_utf8_lossy(&bytes));
        }
    }
}
