//! The referee: plays one game between two [`Player`]s under the rules core.
//!
//! The rules core decides every ending it knows (mate, stalemate, perpetual check and
//! chase, repetition draws, the move limit, insufficient material). The referee adds the
//! endings that come from the players and the clock: an illegal move loses (4.1.6), so
//! does overstepping the time (4.1.5), resigning, or a player that fails (a crashed or
//! hanging engine forfeits the game). Two consecutive draw offers agree a draw, and a
//! game that reaches [`GameSettings::max_plies`] is adjudicated a draw.
//!
//! Before each move the referee lists the moves that would complete a losing
//! repetition and passes them as `banned` (UCCI `banmoves`), as a human arbiter warns
//! a player that he must change his move (24.3).

use std::time::Instant;

use xq_core::{Color, Game, GameConfig, Move, Position, Reason};

use crate::{
    clock::{Clock, TimeControl},
    player::{Decision, GameView, Player, ThinkInfo},
};

/// How one refereed game is played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameSettings {
    pub time_control: TimeControl,
    pub rules: GameConfig,
    /// Plies after which the game is adjudicated a draw (a safety net; the move limit
    /// normally ends games first).
    pub max_plies: usize,
    /// Tell players which moves would lose by repetition.
    pub ban_losing_repetitions: bool,
}

impl Default for GameSettings {
    fn default() -> GameSettings {
        GameSettings {
            time_control: TimeControl::Depth(2),
            rules: GameConfig::default(),
            max_plies: 600,
            ban_losing_repetitions: true,
        }
    }
}

/// Why a refereed game ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Termination {
    /// An ending decided by the rules core.
    Rules(Reason),
    /// The loser played an illegal move (4.1.6); the text is what it played.
    IllegalMove(String),
    /// The loser overstepped its time (4.1.5).
    TimeForfeit,
    Resignation,
    /// The loser's process crashed, hung or broke the protocol.
    Forfeit(String),
    DrawAgreement,
    /// The game reached the referee's ply limit.
    MaxLength,
}

impl Termination {
    /// A stable snake_case name for PGN `Termination` tags and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Termination::Rules(r) => r.name(),
            Termination::IllegalMove(_) => "illegal_move",
            Termination::TimeForfeit => "time_forfeit",
            Termination::Resignation => "resignation",
            Termination::Forfeit(_) => "forfeit",
            Termination::DrawAgreement => "draw_agreement",
            Termination::MaxLength => "max_length",
        }
    }
}

/// A finished game.
#[derive(Debug, Clone)]
pub struct PlayedGame {
    pub red: String,
    pub black: String,
    /// The position the game started from (after any opening moves).
    pub start: Position,
    /// The opening moves, included in `moves`; the players' first move is at
    /// index `opening_plies`.
    pub opening_plies: usize,
    pub moves: Vec<Move>,
    pub winner: Option<Color>,
    pub termination: Termination,
    /// The seed both players were given.
    pub seed: u64,
    /// What the players said about each of their moves (none for opening moves).
    pub infos: Vec<ThinkInfo>,
    pub time_control: TimeControl,
}

impl PlayedGame {
    /// PGN result text: `1-0`, `0-1` or `1/2-1/2`.
    pub fn result_text(&self) -> &'static str {
        match self.winner {
            Some(Color::Red) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }

    /// Points for Red: 1, ½ or 0.
    pub fn red_points(&self) -> f64 {
        match self.winner {
            Some(Color::Red) => 1.0,
            Some(Color::Black) => 0.0,
            None => 0.5,
        }
    }

    /// One human-readable sentence on how the game ended.
    pub fn describe(&self) -> String {
        let side = |c: Color| match c {
            Color::Red => format!("red ({})", self.red),
            Color::Black => format!("black ({})", self.black),
        };
        match (&self.termination, self.winner) {
            (Termination::IllegalMove(m), Some(w)) => {
                format!("{} played the illegal move {m}", side(w.other()))
            }
            (Termination::Forfeit(why), Some(w)) => format!("{} forfeits: {why}", side(w.other())),
            (t, Some(w)) => format!("{} wins by {}", side(w), t.name()),
            (t, None) => format!("draw by {}", t.name()),
        }
    }
}

/// The moves that would complete a repetition that the mover loses.
pub fn losing_repetition_moves(game: &Game) -> Vec<Move> {
    let pos = game.position();
    let mover = pos.turn();
    let earlier: Vec<u64> = (0..game.ply())
        .rev()
        .take(pos.halfmoves() as usize + 1)
        .filter_map(|i| game.position_at(i).map(Position::hash))
        .collect();
    let mut banned = Vec::new();
    for &m in pos.legal_moves().iter() {
        if pos.is_capture(m) {
            continue;
        }
        let mut child = pos.clone();
        child.play_unchecked(m);
        if !earlier.contains(&child.hash()) {
            continue;
        }
        let mut g = game.clone();
        g.play_unchecked(m);
        if g.adjudicate()
            .is_some_and(|o| o.winner == Some(mover.other()))
        {
            banned.push(m);
        }
    }
    banned
}

/// Plays one game. `start` is the position after `opening` (ICCS moves already
/// validated against it); `seed` goes to both players.
///
/// Player failures never escape: they end the game as a forfeit.
pub fn play_game(
    red: &mut dyn Player,
    black: &mut dyn Player,
    start: &Position,
    opening: &[Move],
    settings: &GameSettings,
    seed: u64,
) -> PlayedGame {
    let mut game = Game::with_config(start.clone(), settings.rules);
    for &m in opening {
        game.play_unchecked(m);
    }
    let mut played = PlayedGame {
        red: red.name(),
        black: black.name(),
        start: start.clone(),
        opening_plies: opening.len(),
        moves: opening.to_vec(),
        winner: None,
        termination: Termination::MaxLength,
        seed,
        infos: Vec::new(),
        time_control: settings.time_control,
    };
    let finish = |p: &mut PlayedGame, winner: Option<Color>, t: Termination| {
        p.winner = winner;
        p.termination = t;
    };
    let ready = red
        .new_game(seed)
        .map_err(|e| (Color::Red, e))
        .and_then(|()| black.new_game(seed).map_err(|e| (Color::Black, e)));
    if let Err((color, e)) = ready {
        finish(
            &mut played,
            Some(color.other()),
            Termination::Forfeit(e.to_string()),
        );
        return played;
    }
    let mut clock = Clock::new(settings.time_control);
    let mut last_offer: Option<Color> = None;
    loop {
        if let Some(o) = game.outcome() {
            finish(&mut played, o.winner, Termination::Rules(o.reason));
            return played;
        }
        if game.ply() >= settings.max_plies {
            finish(&mut played, None, Termination::MaxLength);
            return played;
        }
        let side = game.position().turn();
        let player: &mut dyn Player = match side {
            Color::Red => &mut *red,
            Color::Black => &mut *black,
        };
        let banned = if settings.ban_losing_repetitions {
            losing_repetition_moves(&game)
        } else {
            Vec::new()
        };
        let limits = clock.limits(side.index());
        let started = Instant::now();
        let reply = player.think(
            &GameView {
                game: &game,
                banned: &banned,
            },
            &limits,
        );
        let elapsed = started.elapsed();
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                finish(
                    &mut played,
                    Some(side.other()),
                    Termination::Forfeit(e.to_string()),
                );
                return played;
            }
        };
        if !clock.punch(side.index(), elapsed) {
            finish(&mut played, Some(side.other()), Termination::TimeForfeit);
            return played;
        }
        let m = match reply.decision {
            Decision::Resign => {
                finish(&mut played, Some(side.other()), Termination::Resignation);
                return played;
            }
            Decision::Move(m) => m,
        };
        if !game.position().is_legal(m) {
            finish(
                &mut played,
                Some(side.other()),
                Termination::IllegalMove(m.to_string()),
            );
            return played;
        }
        game.play_unchecked(m);
        played.moves.push(m);
        played.infos.push(reply.info);
        if reply.offer_draw {
            if last_offer == Some(side.other()) {
                finish(&mut played, None, Termination::DrawAgreement);
                return played;
            }
            last_offer = Some(side);
        } else {
            last_offer = None;
        }
    }
}

/// The game as PGN in the format of [`xq_data::pgn::PgnRecord`] (`[Variant "xiangqi"]`,
/// the start FEN and ICCS moves, readable by Fairy-Stockfish-based tools), dated today,
/// with how it ended as a closing comment. `tags` are added after the standard ones.
pub fn to_pgn(
    game: &PlayedGame,
    event: &str,
    round: &str,
    tags: &[(&'static str, String)],
) -> String {
    let result = xq_data::Outcome::of_winner(game.winner);
    let record = xq_data::PgnRecord::new(game.start.clone(), game.moves.clone(), Some(result))
        .event(event)
        .site("xqzero")
        .date(xq_data::pgn::today())
        .round(round)
        .players(&game.red, &game.black)
        .tag("TimeControl", game.time_control.to_string())
        .tag("Termination", game.termination.name())
        .tag("Seed", game.seed.to_string());
    tags.iter()
        .fold(record, |r, (k, v)| r.tag(k, v))
        .closing_comment(game.describe())
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        clock::Limits,
        player::{AlphaBetaPlayer, PlayerError, RandomPlayer, Reply},
    };

    struct Scripted(Vec<&'static str>, usize);

    impl Player for Scripted {
        fn name(&self) -> String {
            "scripted".into()
        }
        fn new_game(&mut self, _: u64) -> Result<(), PlayerError> {
            self.1 = 0;
            Ok(())
        }
        fn think(&mut self, _: &GameView<'_>, _: &Limits) -> Result<Reply, PlayerError> {
            let m = self.0[self.1 % self.0.len()];
            self.1 += 1;
            Ok(Reply::play(m.parse().unwrap()))
        }
    }

    #[test]
    fn an_illegal_move_loses() {
        let mut bad = Scripted(vec!["a0a5"], 0); // the chariot cannot jump the soldier
        let mut random = RandomPlayer::new();
        let g = play_game(
            &mut bad,
            &mut random,
            &Position::startpos(),
            &[],
            &GameSettings::default(),
            3,
        );
        assert_eq!(g.winner, Some(Color::Black));
        assert_eq!(g.termination, Termination::IllegalMove("a0a5".into()));
    }

    #[test]
    fn stronger_side_mates_and_the_pgn_names_everything() {
        let start = Position::from_fen("4k4/9/9/9/9/9/9/9/4A4/R2AK4 w - - 0 1").unwrap();
        let mut ab = AlphaBetaPlayer::new(3, 1);
        let mut random = RandomPlayer::new();
        let settings = GameSettings {
            time_control: TimeControl::Depth(3),
            ..GameSettings::default()
        };
        let g = play_game(&mut ab, &mut random, &start, &[], &settings, 5);
        assert_eq!(g.winner, Some(Color::Red), "{}", g.describe());
        let pgn = to_pgn(&g, "test", "1", &[]);
        assert!(pgn.contains("[Variant \"xiangqi\"]"));
        assert!(pgn.contains("[Result \"1-0\"]"));
        assert!(pgn.contains("[FEN \"4k4/9/9/9/9/9/9/9/4A4/R2AK4 w - - 0 1\"]"));
        assert!(pgn.trim_end().ends_with("1-0"));
    }

    #[test]
    fn perpetual_check_is_banned_for_the_checker() {
        // Red can only keep checking with the chariot between a9/b9-style squares; after
        // two cycles the repeat that would complete perpetual check is banned.
        let mut game = Game::from_fen("3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1").unwrap();
        for m in [
            "a0a9", "d9d8", "a9a8", "d8d9", "a8a9", "d9d8", "a9a8", "d8d9",
        ] {
            game.play_iccs(m).unwrap();
        }
        let banned = losing_repetition_moves(&game);
        assert!(banned.contains(&"a8a9".parse().unwrap()), "{banned:?}");
    }
}
