//! Plays a [`Tournament`] with real players.
//!
//! The tournament state machine hands out a round; its games are played concurrently
//! (each with freshly built players, so engines start clean), results are recorded,
//! and the next round is asked for until none is left. Knockout tie-break games use
//! the rapid time control. Every game is appended to the PGN file as it finishes.

use std::{
    fs::OpenOptions,
    io::Write,
    path::PathBuf,
    sync::{Mutex, mpsc},
    thread,
};

use crate::{
    GameResult,
    tournament::{GameKind, Pairing, Tournament, TournamentConfig, TournamentError},
};
use serde::{Deserialize, Serialize};
use xq_core::Color;

use crate::{
    clock::TimeControl,
    matches::game_seed,
    openings::{self, Opening},
    player::{PlayerBuilder, PlayerError},
    referee::{GameSettings, PlayedGame, play_game, to_pgn},
};

/// A tournament file (TOML): the tournament itself plus how its games are played.
///
/// ```toml
/// name = "baselines"
/// seed = 7
/// time_control = "depth=2"      # see the clock module for the forms
/// rapid_time_control = "depth=1" # knockout tie-breaks
/// concurrency = 2
/// openings = "builtin"           # "start", "builtin" or a path to an opening file
/// pgn = "baselines.pgn"          # optional
/// format = { kind = "round_robin", cycles = 2 }
/// [[participants]]
/// name = "ab2"
/// player = "alphabeta:depth=2"
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TournamentFile {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub seed: u64,
    pub format: crate::tournament::Format,
    pub participants: Vec<crate::tournament::Participant>,
    pub time_control: String,
    #[serde(default)]
    pub rapid_time_control: Option<String>,
    #[serde(default = "one")]
    pub concurrency: usize,
    #[serde(default = "start")]
    pub openings: String,
    #[serde(default)]
    pub pgn: Option<PathBuf>,
}

impl TournamentFile {
    /// The tournament part.
    pub fn tournament(&self) -> TournamentConfig {
        TournamentConfig {
            name: self.name.clone(),
            format: self.format,
            participants: self.participants.clone(),
            seed: self.seed,
        }
    }
}

fn one() -> usize {
    1
}

fn start() -> String {
    "start".into()
}

/// What can stop a tournament.
#[derive(Debug, thiserror::Error)]
pub enum TournamentRunError {
    #[error(transparent)]
    Tournament(#[from] TournamentError),
    #[error("participant {name:?}: {source}")]
    Player { name: String, source: PlayerError },
    #[error("cannot write PGN {path}: {source}")]
    Pgn {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How the games of a tournament are played.
#[derive(Debug, Clone)]
pub struct TournamentPlay {
    pub settings: GameSettings,
    pub rapid: TimeControl,
    pub concurrency: usize,
    /// Game `i` of the tournament starts from opening `i mod n`; empty means the
    /// starting position.
    pub openings: Vec<Opening>,
    pub pgn_out: Option<PathBuf>,
}

/// Resolves the `openings` field of a tournament file.
pub fn resolve_openings(spec: &str) -> Result<Vec<Opening>, String> {
    match spec {
        "start" => Ok(Vec::new()),
        "builtin" => Ok(openings::builtin()),
        path => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read openings file {path}: {e}"))?;
            openings::parse_file(path, &text).map_err(|e| e.to_string())
        }
    }
}

/// Plays the tournament to the end. `build` turns a participant's player
/// specification into a player; `progress` gets one line per finished game.
///
/// # Errors
/// A participant whose player cannot be built, a tournament error, or an unwritable
/// PGN file. Players that fail during a game forfeit it.
pub fn run_tournament(
    config: TournamentConfig,
    play: &TournamentPlay,
    build: &PlayerBuilder<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<(Tournament, Vec<PlayedGame>), TournamentRunError> {
    let seed = config.seed;
    let mut t = Tournament::new(config)?;
    // Check every participant once before the first game.
    for p in t.participants() {
        build(&p.player).map_err(|source| TournamentRunError::Player {
            name: p.name.clone(),
            source,
        })?;
    }
    let participants = t.participants().to_vec();
    let mut pgn = match &play.pgn_out {
        Some(path) => Some(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|source| TournamentRunError::Pgn {
                    path: path.clone(),
                    source,
                })?,
        ),
        None => None,
    };
    let mut all = Vec::new();
    loop {
        let round = t.next_round()?;
        if round.is_empty() {
            break;
        }
        let queue = Mutex::new(round.clone());
        let (tx, rx) = mpsc::channel::<(Pairing, PlayedGame)>();
        let workers = play.concurrency.clamp(1, round.len());
        let mut results = Vec::new();
        thread::scope(|scope| {
            for _ in 0..workers {
                let tx = tx.clone();
                let queue = &queue;
                let participants = &participants;
                scope.spawn(move || {
                    loop {
                        let Some(p) = queue.lock().expect("queue").pop() else {
                            break;
                        };
                        let game = play_one(p, participants, play, build, seed);
                        if tx.send((p, game)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            for (p, game) in rx {
                progress(&format!(
                    "round {} board {}: {} - {} {} ({})",
                    p.round,
                    p.board,
                    participants[p.red].name,
                    participants[p.black].name,
                    game.result_text(),
                    game.termination.name()
                ));
                results.push((p, game));
            }
        });
        results.sort_by_key(|(p, _)| p.game);
        for (p, game) in results {
            let result = match game.winner {
                Some(Color::Red) => GameResult::Win,
                Some(Color::Black) => GameResult::Loss,
                None => GameResult::Draw,
            };
            t.record(p.game, result)?;
            if let (Some(file), Some(path)) = (&mut pgn, &play.pgn_out) {
                let text = to_pgn(
                    &game,
                    &t.config().name,
                    &format!("{}.{}", p.round, p.board),
                    &[],
                );
                file.write_all(text.as_bytes())
                    .and_then(|()| file.flush())
                    .map_err(|source| TournamentRunError::Pgn {
                        path: path.clone(),
                        source,
                    })?;
            }
            all.push(game);
        }
    }
    Ok((t, all))
}

fn play_one(
    p: Pairing,
    participants: &[crate::tournament::Participant],
    play: &TournamentPlay,
    build: &PlayerBuilder<'_>,
    seed: u64,
) -> PlayedGame {
    let mut settings = play.settings.clone();
    if p.kind != GameKind::Regular {
        settings.time_control = play.rapid;
    }
    let opening = if play.openings.is_empty() {
        Opening {
            name: "start".into(),
            start: xq_core::Position::startpos(),
            moves: Vec::new(),
        }
    } else {
        play.openings[p.game % play.openings.len()].clone()
    };
    let game_seed = game_seed(seed, p.game);
    let (red_name, black_name) = (&participants[p.red].name, &participants[p.black].name);
    let red = build(&participants[p.red].player);
    let black = build(&participants[p.black].player);
    let mut game = match (red, black) {
        (Ok(mut r), Ok(mut b)) => play_game(
            r.as_mut(),
            b.as_mut(),
            &opening.start,
            &opening.moves,
            &settings,
            game_seed,
        ),
        (red, black) => {
            // A player that cannot even start forfeits.
            let loser = if red.is_err() {
                Color::Red
            } else {
                Color::Black
            };
            let why = red
                .err()
                .or(black.err())
                .map(|e| e.to_string())
                .unwrap_or_default();
            PlayedGame {
                red: String::new(),
                black: String::new(),
                start: opening.position(),
                opening_plies: 0,
                moves: Vec::new(),
                winner: Some(loser.other()),
                termination: crate::referee::Termination::Forfeit(why),
                seed: game_seed,
                infos: Vec::new(),
                time_control: settings.time_control,
            }
        }
    };
    // Tournament names, not engine ids, in the record.
    game.red = red_name.clone();
    game.black = black_name.clone();
    game
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::player::{AlphaBetaPlayer, GreedyPlayer, Player, RandomPlayer};
    use crate::tournament::{Format, Participant};

    fn build(spec: &str) -> Result<Box<dyn Player>, PlayerError> {
        Ok(match spec {
            "random" => Box::new(RandomPlayer::new()),
            "greedy" => Box::new(GreedyPlayer::new()),
            "ab1" => Box::new(AlphaBetaPlayer::new(1, 1)),
            other => return Err(PlayerError::Other(format!("unknown {other}"))),
        })
    }

    fn play() -> TournamentPlay {
        TournamentPlay {
            settings: GameSettings {
                time_control: TimeControl::Depth(1),
                max_plies: 160,
                ..GameSettings::default()
            },
            rapid: TimeControl::Depth(1),
            concurrency: 2,
            openings: openings::builtin(),
            pgn_out: None,
        }
    }

    #[test]
    fn double_round_robin_plays_every_pairing_twice() {
        let config = TournamentConfig {
            name: "t".into(),
            format: Format::RoundRobin { cycles: 2 },
            participants: vec![
                Participant::new("r", "random"),
                Participant::new("g", "greedy"),
                Participant::new("a", "ab1"),
                Participant::new("r2", "random"),
            ],
            seed: 3,
        };
        let (t, games) = run_tournament(config, &play(), &build, &mut |_| {}).unwrap();
        assert_eq!(games.len(), 12);
        assert!(t.is_finished());
        let st = t.standings();
        let total: f64 = st.rows.iter().map(|r| r.points).sum();
        assert_eq!(total, 12.0);
    }

    #[test]
    fn a_broken_participant_is_reported_before_any_game() {
        let config = TournamentConfig {
            name: "t".into(),
            format: Format::Knockout {
                tiebreak: Default::default(),
            },
            participants: vec![
                Participant::new("r", "random"),
                Participant::new("x", "nope"),
            ],
            seed: 3,
        };
        let e = run_tournament(config, &play(), &build, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("\"x\""), "{e}");
    }

    #[test]
    fn tournament_file_parses_and_rejects_unknown_keys() {
        let text = r#"
            name = "b"
            seed = 7
            time_control = "depth=2"
            format = { kind = "swiss", rounds = 3 }
            [[participants]]
            name = "a"
            player = "random"
            [[participants]]
            name = "b"
            player = "greedy"
        "#;
        let f: TournamentFile = toml::from_str(text).unwrap();
        assert_eq!(f.tournament().participants.len(), 2);
        let bad = format!("colour = 1\n{text}");
        let e = toml::from_str::<TournamentFile>(&bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("colour"), "{e}");
    }
}
