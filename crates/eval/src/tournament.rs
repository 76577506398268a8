//! Plays a [`Tournament`] (the state machine of [`xq_rating::tournament`]) with real
//! players.
//!
//! The tournament state machine hands out a round; its games are played concurrently
//! (each with freshly built players, so engines start clean), results are recorded,
//! and the next round is asked for until none is left. Knockout tie-break games use
//! the rapid time control. Every game is appended to the PGN file as it finishes.
//! Individual and team events ([`Event`]) are played the same way: the runner only
//! sees games between participants.

use std::{
    fs::OpenOptions,
    io::Write,
    path::PathBuf,
    sync::{Mutex, mpsc},
    thread,
};

use serde::{Deserialize, Serialize};
use xq_core::Color;
use xq_rating::tournament::{
    Format, GameId, GameKind, GameReport, Pairing, Participant, Tournament, TournamentConfig,
    TournamentError, Withdrawal,
    team::{Team, TeamError, TeamEventConfig, TeamSection, TeamTournament},
};

use crate::{
    clock::TimeControl,
    matches::game_seed,
    openings::{self, Opening},
    player::{PlayerBuilder, PlayerError},
    referee::{GameSettings, PlayedGame, Termination, play_game, to_pgn},
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
///
/// A team event adds a `[team]` section (`fielding` = `fixed_boards`,
/// `substitutes`, `free_boards`, `all_play_all` or `total_score`, and `boards`
/// for the first three) and `[[teams]]` with `name` and `members` (participant
/// names in board order). `[[withdrawals]]` (`name`, `after_round`) name
/// participants, or teams in a board event (第20条).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TournamentFile {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub seed: u64,
    pub format: Format,
    pub participants: Vec<Participant>,
    pub time_control: String,
    #[serde(default)]
    pub rapid_time_control: Option<String>,
    #[serde(default = "one")]
    pub concurrency: usize,
    #[serde(default = "start")]
    pub openings: String,
    #[serde(default)]
    pub pgn: Option<PathBuf>,
    #[serde(default)]
    pub team: Option<TeamSection>,
    #[serde(default)]
    pub teams: Vec<Team>,
    #[serde(default)]
    pub withdrawals: Vec<Withdrawal>,
}

impl TournamentFile {
    /// The individual tournament part (teams are ignored).
    pub fn tournament(&self) -> TournamentConfig {
        TournamentConfig {
            name: self.name.clone(),
            format: self.format,
            participants: self.participants.clone(),
            seed: self.seed,
            withdrawals: self.withdrawals.clone(),
        }
    }

    /// The event the file describes: a team event when it has a `[team]`
    /// section, an individual one otherwise.
    ///
    /// # Errors
    ///
    /// Teams without a `[team]` section, or any validation error of the
    /// event.
    pub fn event(&self) -> Result<Event, TeamError> {
        match self.team {
            Some(team) => Ok(Event::Team(Box::new(TeamTournament::new(
                TeamEventConfig {
                    name: self.name.clone(),
                    format: self.format,
                    seed: self.seed,
                    participants: self.participants.clone(),
                    teams: self.teams.clone(),
                    team,
                    withdrawals: self.withdrawals.clone(),
                },
            )?))),
            None if !self.teams.is_empty() => Err(TeamError::MissingTeamSection),
            None => Ok(Event::Individual(Tournament::new(self.tournament())?)),
        }
    }
}

/// An individual or a team event, as the runner drives it.
#[derive(Debug, Clone)]
pub enum Event {
    Individual(Tournament),
    Team(Box<TeamTournament>),
}

impl Event {
    pub fn participants(&self) -> &[Participant] {
        match self {
            Event::Individual(t) => t.participants(),
            Event::Team(t) => t.participants(),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Event::Individual(t) => &t.config().name,
            Event::Team(t) => &t.config().name,
        }
    }

    pub fn seed(&self) -> u64 {
        match self {
            Event::Individual(t) => t.config().seed,
            Event::Team(t) => t.config().seed,
        }
    }

    pub fn is_finished(&self) -> bool {
        match self {
            Event::Individual(t) => t.is_finished(),
            Event::Team(t) => t.is_finished(),
        }
    }

    /// The next round's games between participants; empty when finished.
    ///
    /// # Errors
    ///
    /// As [`Tournament::next_round`].
    pub fn next_round(&mut self) -> Result<Vec<Pairing>, TournamentError> {
        match self {
            Event::Individual(t) => t.next_round(),
            Event::Team(t) => t.next_round(),
        }
    }

    /// Records a game.
    ///
    /// # Errors
    ///
    /// As [`Tournament::record_report`].
    pub fn record_report(
        &mut self,
        game: GameId,
        report: GameReport,
    ) -> Result<(), TournamentError> {
        match self {
            Event::Individual(t) => t.record_report(game, report),
            Event::Team(t) => t.record_report(game, report),
        }
    }

    /// The PGN `Round` tag of a game: `round.board`, or in a board event
    /// `round.match.board` ([`TeamTournament::round_tag`]).
    pub fn round_tag(&self, pairing: &Pairing) -> String {
        match self {
            Event::Individual(_) => format!("{}.{}", pairing.round, pairing.board),
            Event::Team(t) => t.round_tag(pairing),
        }
    }

    /// The crosstable as aligned text.
    pub fn crosstable_text(&self) -> String {
        match self {
            Event::Individual(t) => t.crosstable().to_text(),
            Event::Team(t) => t.crosstable().to_text(),
        }
    }

    /// The crosstable as JSON.
    pub fn crosstable_json(&self) -> String {
        match self {
            Event::Individual(t) => t.crosstable().to_json(),
            Event::Team(t) => t.crosstable().to_json(),
        }
    }

    /// The crosstable as CSV.
    pub fn crosstable_csv(&self) -> String {
        match self {
            Event::Individual(t) => t.crosstable().to_csv(),
            Event::Team(t) => t.crosstable().to_csv(),
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
    #[error(transparent)]
    Team(#[from] TeamError),
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

/// Plays an individual tournament to the end; see [`run_event`].
///
/// # Errors
/// As [`run_event`], and an invalid configuration.
pub fn run_tournament(
    config: TournamentConfig,
    play: &TournamentPlay,
    build: &PlayerBuilder<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<(Tournament, Vec<PlayedGame>), TournamentRunError> {
    let event = Event::Individual(Tournament::new(config)?);
    match run_event(event, play, build, progress)? {
        (Event::Individual(t), games) => Ok((t, games)),
        (Event::Team(_), _) => unreachable!("an individual event stays one"),
    }
}

/// Plays the event to the end. `build` turns a participant's player
/// specification into a player; `progress` gets one line per finished game.
///
/// # Errors
/// A participant whose player cannot be built, a tournament error, or an unwritable
/// PGN file. Players that fail during a game forfeit it.
pub fn run_event(
    mut t: Event,
    play: &TournamentPlay,
    build: &PlayerBuilder<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<(Event, Vec<PlayedGame>), TournamentRunError> {
    let seed = t.seed();
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
                    "round {}: {} - {} {} ({})",
                    t.round_tag(&p),
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
            t.record_report(
                p.game,
                GameReport {
                    result: game.score(),
                    forfeit: game.is_forfeit(),
                    fouls: [game.fouls_of(Color::Red), game.fouls_of(Color::Black)],
                },
            )?;
            if let (Some(file), Some(path)) = (&mut pgn, &play.pgn_out) {
                let text = to_pgn(&game, t.name(), &t.round_tag(&p), &[]);
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
    participants: &[Participant],
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
        crate::openings::nth(&play.openings, p.game, seed)
    };
    let game_seed = game_seed(seed, p.game);
    let (red_name, black_name) = (&participants[p.red].name, &participants[p.black].name);
    let red = build(&participants[p.red].player);
    let black = build(&participants[p.black].player);
    // A player that cannot even be built forfeits; when neither can, both do
    // (21.3: 判双方弃权).
    let unplayed = |winner: Option<Color>, termination: Termination| PlayedGame {
        red: String::new(),
        black: String::new(),
        start: opening.position(),
        opening_plies: 0,
        moves: Vec::new(),
        winner,
        termination,
        seed: game_seed,
        infos: Vec::new(),
        time_control: settings.time_control,
        fouls: Vec::new(),
    };
    let mut game = match (red, black) {
        (Ok(mut r), Ok(mut b)) => play_game(
            r.as_mut(),
            b.as_mut(),
            &opening.start,
            &opening.moves,
            &settings,
            game_seed,
        ),
        (Err(r), Err(b)) => unplayed(
            None,
            Termination::DoubleForfeit(format!("red: {r}; black: {b}")),
        ),
        (Err(e), Ok(_)) => unplayed(Some(Color::Black), Termination::Forfeit(e.to_string())),
        (Ok(_), Err(e)) => unplayed(Some(Color::Red), Termination::Forfeit(e.to_string())),
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
            withdrawals: Vec::new(),
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
            withdrawals: Vec::new(),
        };
        let e = run_tournament(config, &play(), &build, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("\"x\""), "{e}");
    }

    /// A 12.1 team round robin from a tournament file, played with real
    /// players: every match is two boards, and the 场分 sum to 2 per match.
    #[test]
    fn a_team_event_from_a_file_plays_board_matches() {
        let text = r#"
            name = "teams"
            seed = 5
            time_control = "depth=1"
            format = { kind = "round_robin" }
            [team]
            fielding = "fixed_boards"
            boards = 2
            [[teams]]
            name = "A"
            members = ["r", "g"]
            [[teams]]
            name = "B"
            members = ["a", "r2"]
            [[teams]]
            name = "C"
            members = ["g2", "r3"]
            [[participants]]
            name = "r"
            player = "random"
            [[participants]]
            name = "g"
            player = "greedy"
            [[participants]]
            name = "a"
            player = "ab1"
            [[participants]]
            name = "r2"
            player = "random"
            [[participants]]
            name = "g2"
            player = "greedy"
            [[participants]]
            name = "r3"
            player = "random"
        "#;
        let f: TournamentFile = toml::from_str(text).unwrap();
        let path = pgn_path("team-rounds");
        let play = TournamentPlay {
            pgn_out: Some(path.clone()),
            ..play()
        };
        let (event, games) = run_event(f.event().unwrap(), &play, &build, &mut |_| {}).unwrap();
        assert_eq!(games.len(), 6, "three matches of two boards");
        // One match a round (the third team rests): round.match.board.
        let pgn = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let rounds: Vec<String> = xq_data::pgn::read_pgn(&pgn)
            .into_iter()
            .map(|g| g.unwrap().header("Round").unwrap().to_owned())
            .collect();
        assert_eq!(
            rounds,
            ["1.1.1", "1.1.2", "2.1.1", "2.1.2", "3.1.1", "3.1.2"]
        );
        let Event::Team(t) = &event else {
            panic!("a team event")
        };
        assert!(t.is_finished());
        let total: f64 = t.standings().rows.iter().map(|r| r.points).sum();
        assert_eq!(total, 6.0);
        assert!(event.crosstable_text().contains("board 2"));
        let bad = text.replace("kind = \"round_robin\"", "kind = \"round_robin\", legs = 2");
        let e = toml::from_str::<TournamentFile>(&bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("legs"), "{e}");
        let bad = text.replace("boards = 2", "boards = 2\nseats = 1");
        let e = toml::from_str::<TournamentFile>(&bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("seats"), "{e}");
        let no_section = text.replace(
            "[team]\n            fielding = \"fixed_boards\"\n            boards = 2\n",
            "",
        );
        let f: TournamentFile = toml::from_str(&no_section).unwrap();
        assert!(matches!(f.event(), Err(TeamError::MissingTeamSection)));
    }

    /// A fresh PGN path for one test.
    fn pgn_path(test: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!("xq-eval-{test}-{}.pgn", std::process::id()));
        let _ = std::fs::remove_file(&path);
        path
    }

    /// Both engines pass the check before the first game and then cannot be
    /// started: 21.3 forfeits both. Neither scores, each has a "-", and the
    /// PGN names no winner and reads back.
    #[test]
    fn a_game_neither_engine_can_start_is_lost_by_both() {
        let built = std::sync::atomic::AtomicUsize::new(0);
        let flaky = |spec: &str| -> Result<Box<dyn Player>, PlayerError> {
            // The first two builds are the check of both participants.
            if built.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2 {
                build(spec)
            } else {
                Err(PlayerError::Other(format!("{spec} did not start")))
            }
        };
        let config = TournamentConfig {
            name: "t".into(),
            format: Format::RoundRobin { cycles: 1 },
            participants: vec![
                Participant::new("r", "random"),
                Participant::new("g", "greedy"),
            ],
            seed: 3,
            withdrawals: Vec::new(),
        };
        let path = pgn_path("double-forfeit");
        let play = TournamentPlay {
            pgn_out: Some(path.clone()),
            ..play()
        };
        let (t, games) = run_tournament(config, &play, &flaky, &mut |_| {}).unwrap();
        assert_eq!(games.len(), 1);
        assert_eq!(
            t.games()[0].result,
            Some(xq_rating::result::Score::DoubleForfeit)
        );
        assert!(t.games()[0].forfeit);
        let st = t.standings();
        for row in &st.rows {
            assert_eq!((row.points, row.wins, row.losses), (0.0, 0, 1), "{row:?}");
        }
        // Equal on everything, both share first place and show a "-".
        let text = t.crosstable().to_text();
        assert!(text.contains("1r-") && text.contains("1b-"), "{text}");
        let pgn = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let read = xq_data::pgn::read_pgn(&pgn);
        let [Ok(g)] = read.as_slice() else {
            panic!("one readable game: {read:?}")
        };
        assert_eq!(g.result, None, "{pgn}");
        assert_eq!(g.header("Termination"), Some("double_forfeit"));
        assert_eq!(g.header("Red"), Some("r"));
        assert_eq!(g.header("Black"), Some("g"));
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
