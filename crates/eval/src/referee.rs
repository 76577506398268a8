//! The referee: plays one game between two [`Player`]s under the rules core.
//!
//! The rules core decides every ending it knows (mate, stalemate, perpetual check and
//! chase, repetition draws, the move limit, insufficient material). The referee adds the
//! endings that come from the players and the clock: an illegal move loses (4.1.6), so
//! does overstepping the time (4.1.4, 第22条) unless the overstepping move itself ends
//! the game (22.5), resigning (4.1.9), three fouls in one game (4.1.8), or a player
//! that fails (a crashed or hanging engine forfeits the game; when neither engine can
//! start the game both forfeit, 21.3, and the game has no winner:
//! [`Termination::DoubleForfeit`], scored by [`PlayedGame::score`]). A draw offer answered by
//! an offer is a draw by agreement (4.2.2, 23.1), and a game that reaches
//! [`GameSettings::max_plies`] is adjudicated a draw.
//!
//! Fouls (犯规, 第9条) are recorded per side in [`PlayedGame::fouls`] because 第15条
//! uses them to break ties.
//!
//! Before each move the referee lists the moves that would complete a losing
//! repetition and passes them as `banned` (UCCI `banmoves`), as a human arbiter warns
//! a player that he must change his move (24.3).

use std::time::Instant;

use xq_core::{Color, Game, GameConfig, Move, Position, Reason};
use xq_rating::result::{Score, Side};

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
    /// Neither side could start the game: both forfeit (21.3: 判双方弃权) and
    /// neither wins; the text says why each failed.
    DoubleForfeit(String),
    DrawAgreement,
    /// The game reached the referee's ply limit.
    MaxLength,
    /// The loser committed its third foul of the game (4.1.8).
    ThreeFouls,
}

/// What a foul (犯规) was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FoulKind {
    /// A draw offer from the side whose previous offer was refused, before the
    /// opponent offered in turn (9.1.3; 23.1: 提和必须轮流进行). The offer is void.
    RepeatedDrawOffer,
    /// An illegal move (it also loses, 4.1.6); counted as a foul as issue #12 asks.
    IllegalMove,
    /// A player that crashed, hung or broke the protocol during the game (it also
    /// forfeits); counted as a foul as issue #12 asks.
    ProtocolViolation,
}

impl FoulKind {
    /// A stable snake_case name (PGN `Fouls` tag).
    pub fn name(self) -> &'static str {
        match self {
            FoulKind::RepeatedDrawOffer => "repeated_draw_offer",
            FoulKind::IllegalMove => "illegal_move",
            FoulKind::ProtocolViolation => "protocol_violation",
        }
    }
}

/// One foul: who, when (the ply it was committed on, counted from the start
/// position including opening moves) and what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Foul {
    pub side: Color,
    pub ply: usize,
    pub kind: FoulKind,
}

/// Fouls that lose the game (4.1.8: 在同一棋局中,三次"犯规").
pub const FOULS_THAT_LOSE: usize = 3;

impl Termination {
    /// A stable snake_case name for PGN `Termination` tags and JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Termination::Rules(r) => r.name(),
            Termination::IllegalMove(_) => "illegal_move",
            Termination::TimeForfeit => "time_forfeit",
            Termination::Resignation => "resignation",
            Termination::Forfeit(_) => "forfeit",
            Termination::DoubleForfeit(_) => "double_forfeit",
            Termination::DrawAgreement => "draw_agreement",
            Termination::MaxLength => "max_length",
            Termination::ThreeFouls => "three_fouls",
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
    /// Every foul (犯规) committed, in order.
    pub fouls: Vec<Foul>,
}

impl PlayedGame {
    /// Fouls committed by `side`.
    pub fn fouls_of(&self, side: Color) -> u32 {
        self.fouls.iter().filter(|f| f.side == side).count() as u32
    }

    /// Whether the game was decided without being played over the board (21.4:
    /// "未经实际对局"): a player failed before any move was played after the opening
    /// (a game one side has already moved in counts as played).
    pub fn is_forfeit(&self) -> bool {
        matches!(
            self.termination,
            Termination::Forfeit(_) | Termination::DoubleForfeit(_)
        ) && self.moves.len() == self.opening_plies
    }

    /// What the game scores, from Red's view: `winner` alone cannot tell a draw
    /// from a double forfeit (21.3), which both sides lose.
    pub fn score(&self) -> Score {
        match (&self.termination, self.winner) {
            (Termination::DoubleForfeit(_), _) => Score::DoubleForfeit,
            (_, Some(Color::Red)) => Score::Win,
            (_, Some(Color::Black)) => Score::Loss,
            (_, None) => Score::Draw,
        }
    }

    /// PGN result text: `1-0`, `0-1`, `1/2-1/2`, or `*` for a double forfeit.
    pub fn result_text(&self) -> &'static str {
        self.score().pgn()
    }

    /// Points for Red: 1, ½ or 0.
    pub fn red_points(&self) -> f64 {
        self.score().for_side(Side::Red).points()
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
            (Termination::DoubleForfeit(why), _) => format!("both sides forfeit: {why}"),
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
    let Some(game) = play_game_until(red, black, start, opening, settings, seed, &|| false) else {
        unreachable!("a game that is never stopped ends by itself")
    };
    game
}

/// [`play_game`], stopped between moves as soon as `stop` says so (a deadline): a
/// stopped game has no result and is `None`. A stopped game is not adjudicated: who
/// stands better when time runs out is not who wins, so callers discard it.
pub fn play_game_until(
    red: &mut dyn Player,
    black: &mut dyn Player,
    start: &Position,
    opening: &[Move],
    settings: &GameSettings,
    seed: u64,
    stop: &dyn Fn() -> bool,
) -> Option<PlayedGame> {
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
        fouls: Vec::new(),
    };
    let finish = |p: &mut PlayedGame, winner: Option<Color>, t: Termination| {
        p.winner = winner;
        p.termination = t;
    };
    // Both sides are asked even when the first fails: if neither can start,
    // both forfeit (21.3), not whichever happened to be asked first.
    let forfeit = match (red.new_game(seed), black.new_game(seed)) {
        (Ok(()), Ok(())) => None,
        (Err(r), Err(b)) => Some((
            None,
            Termination::DoubleForfeit(format!("red: {r}; black: {b}")),
        )),
        (Err(e), Ok(())) => Some((Some(Color::Black), Termination::Forfeit(e.to_string()))),
        (Ok(()), Err(e)) => Some((Some(Color::Red), Termination::Forfeit(e.to_string()))),
    };
    if let Some((winner, termination)) = forfeit {
        finish(&mut played, winner, termination);
        return Some(played);
    }
    let mut clock = Clock::new(settings.time_control);
    // Draw offers (23.1): the offer standing from the previous ply, and who made the
    // last valid offer (offers must alternate between the sides).
    let mut standing_offer: Option<Color> = None;
    let mut last_offer_by: Option<Color> = None;
    // The opening may already have ended the game; after that each move is judged as
    // it is played (judging the whole history every ply would redo the repetition
    // analysis of every earlier ply).
    if let Some(o) = game.outcome() {
        finish(&mut played, o.winner, Termination::Rules(o.reason));
        return Some(played);
    }
    loop {
        if stop() {
            return None;
        }
        if game.ply() >= settings.max_plies {
            finish(&mut played, None, Termination::MaxLength);
            return Some(played);
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
                let t = Termination::Forfeit(e.to_string());
                lose_by_foul(
                    &mut played,
                    side,
                    game.ply(),
                    FoulKind::ProtocolViolation,
                    t,
                );
                return Some(played);
            }
        };
        if !clock.punch(side.index(), elapsed) {
            // 22.5: a move made as the time ran out still stands when it ends the game
            // with a valid result (mate, stalemate, or any other ending the rules
            // decide at once); otherwise the side loses on time.
            if let Decision::Move(m) = reply.decision
                && game.position().is_legal(m)
            {
                let mut after = game.clone();
                after.play_unchecked(m);
                if let Some(o) = after.adjudicate() {
                    played.moves.push(m);
                    played.infos.push(reply.info);
                    finish(&mut played, o.winner, Termination::Rules(o.reason));
                    return Some(played);
                }
            }
            finish(&mut played, Some(side.other()), Termination::TimeForfeit);
            return Some(played);
        }
        let m = match reply.decision {
            Decision::Resign => {
                finish(&mut played, Some(side.other()), Termination::Resignation);
                return Some(played);
            }
            Decision::Move(m) => m,
        };
        if !game.position().is_legal(m) {
            let t = Termination::IllegalMove(m.to_string());
            lose_by_foul(&mut played, side, game.ply(), FoulKind::IllegalMove, t);
            return Some(played);
        }
        let ply = game.ply();
        game.play_unchecked(m);
        played.moves.push(m);
        played.infos.push(reply.info);
        // A move that ends the game (mate, stalemate, a repetition verdict) decides it
        // before any draw offer made with it (2.1, 4.1.1; 22.5 ranks them first).
        if let Some(o) = game.adjudicate() {
            finish(&mut played, o.winner, Termination::Rules(o.reason));
            return Some(played);
        }
        if reply.offer_draw {
            if standing_offer == Some(side.other()) {
                finish(&mut played, None, Termination::DrawAgreement);
                return Some(played);
            }
            if last_offer_by == Some(side) {
                played.fouls.push(Foul {
                    side,
                    ply,
                    kind: FoulKind::RepeatedDrawOffer,
                });
                standing_offer = None;
                if played.fouls.iter().filter(|f| f.side == side).count() >= FOULS_THAT_LOSE {
                    finish(&mut played, Some(side.other()), Termination::ThreeFouls);
                    return Some(played);
                }
            } else {
                last_offer_by = Some(side);
                standing_offer = Some(side);
            }
        } else {
            standing_offer = None;
        }
    }
}

/// Ends `played` lost by `side` for a foul of `kind` at `ply` (a crashed engine, an
/// illegal move), which the record keeps among its fouls, as `termination` says.
fn lose_by_foul(
    played: &mut PlayedGame,
    side: Color,
    ply: usize,
    kind: FoulKind,
    termination: Termination,
) {
    played.fouls.push(Foul { side, ply, kind });
    played.winner = Some(side.other());
    played.termination = termination;
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
    // A double forfeit has no winner and is no draw: `*` (no result).
    let result = match game.score() {
        Score::DoubleForfeit => None,
        _ => Some(xq_data::Outcome::of_winner(game.winner)),
    };
    let record = xq_data::PgnRecord::new(game.start.clone(), game.moves.clone(), result)
        .event(event)
        .site("xqzero")
        .date(xq_data::pgn::today())
        .round(round)
        .players(&game.red, &game.black)
        .tag("TimeControl", game.time_control.to_string())
        .tag("Termination", game.termination.name())
        .tag("Seed", game.seed.to_string());
    // 10.1: fouls are part of the game's record.
    let record = if game.fouls.is_empty() {
        record
    } else {
        let fouls: Vec<String> = game
            .fouls
            .iter()
            .map(|f| {
                let side = if f.side == Color::Red { "red" } else { "black" };
                format!("{side}:{}@{}", f.kind.name(), f.ply)
            })
            .collect();
        record.tag("Fouls", fouls.join(" "))
    };
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

    /// Plays its script after sleeping `delay`, offering a draw with every move when
    /// `offer` is set; with an empty script it plays random legal moves.
    struct Timed {
        script: Vec<&'static str>,
        at: usize,
        delay: std::time::Duration,
        offer: bool,
        random: RandomPlayer,
    }

    impl Timed {
        fn new(script: Vec<&'static str>, delay_ms: u64, offer: bool) -> Timed {
            Timed {
                script,
                at: 0,
                delay: std::time::Duration::from_millis(delay_ms),
                offer,
                random: RandomPlayer::new(),
            }
        }
    }

    impl Player for Timed {
        fn name(&self) -> String {
            "timed".into()
        }
        fn new_game(&mut self, seed: u64) -> Result<(), PlayerError> {
            self.at = 0;
            self.random.new_game(seed)
        }
        fn think(&mut self, view: &GameView<'_>, limits: &Limits) -> Result<Reply, PlayerError> {
            std::thread::sleep(self.delay);
            let mut reply = if self.script.is_empty() {
                self.random.think(view, limits)?
            } else {
                let m = self.script[self.at % self.script.len()];
                self.at += 1;
                Reply::play(m.parse().unwrap())
            };
            reply.offer_draw = self.offer;
            Ok(reply)
        }
    }

    fn sudden_death_ms(ms: u64) -> GameSettings {
        GameSettings {
            time_control: TimeControl::SuddenDeath {
                time: std::time::Duration::from_millis(ms),
                increment: std::time::Duration::ZERO,
            },
            ..GameSettings::default()
        }
    }

    /// Red mates with b0b9 (the a8 chariot covers rank 8), or stalemates with a7a8.
    const MATE_IN_ONE: &str = "3k5/R8/9/9/9/9/9/9/9/1R2K4 w - - 0 1";
    const STALEMATE_IN_ONE: &str = "3k5/9/R8/9/9/9/9/9/9/4K4 w - - 0 1";

    #[test]
    fn a_game_stopped_between_moves_has_no_result() {
        let asked = std::cell::Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            asked.get() > 3
        };
        let (mut red, mut black) = (RandomPlayer::new(), RandomPlayer::new());
        let settings = GameSettings::default();
        let start = Position::startpos();
        let g = play_game_until(&mut red, &mut black, &start, &[], &settings, 1, &stop);
        assert!(g.is_none());
        assert_eq!(asked.get(), 4, "asked before each move");
    }

    #[test]
    fn overstepping_the_time_loses() {
        let mut slow = Timed::new(vec!["e0f0"], 120, false);
        let mut random = RandomPlayer::new();
        let start = Position::from_fen(MATE_IN_ONE).unwrap();
        let g = play_game(&mut slow, &mut random, &start, &[], &sudden_death_ms(40), 1);
        assert_eq!(g.termination, Termination::TimeForfeit);
        assert_eq!(g.winner, Some(Color::Black));
        assert_eq!(g.moves.len(), 0, "the overstepping move does not stand");
    }

    #[test]
    fn a_mate_or_stalemate_made_as_the_time_runs_out_stands() {
        for (fen, m, reason) in [
            (MATE_IN_ONE, "b0b9", Reason::Checkmate),
            (STALEMATE_IN_ONE, "a7a8", Reason::Stalemate),
        ] {
            let mut slow = Timed::new(vec![m], 120, false);
            let mut random = RandomPlayer::new();
            let start = Position::from_fen(fen).unwrap();
            let g = play_game(&mut slow, &mut random, &start, &[], &sudden_death_ms(40), 1);
            assert_eq!(g.termination, Termination::Rules(reason), "{fen}");
            assert_eq!(g.winner, Some(Color::Red), "{fen}");
            assert_eq!(g.moves, [m.parse().unwrap()]);
        }
    }

    #[test]
    fn a_draw_offer_answered_by_an_offer_is_a_draw_by_agreement() {
        let mut red = Timed::new(vec!["h2e2"], 0, true);
        let mut black = Timed::new(vec!["h9g7"], 0, true);
        let g = play_game(
            &mut red,
            &mut black,
            &Position::startpos(),
            &[],
            &GameSettings::default(),
            1,
        );
        assert_eq!(g.termination, Termination::DrawAgreement);
        assert_eq!(g.winner, None);
        assert_eq!(g.moves.len(), 2);
        assert!(g.fouls.is_empty());
    }

    #[test]
    fn a_mate_made_with_a_draw_offer_wins_even_against_a_standing_offer() {
        // Black offers a draw with a5a4; Red accepts nothing, it mates with b0b9 while
        // offering too: the mate decides the game (2.1, 4.1.1), not the offers.
        let start = Position::from_fen("3k5/R8/9/9/p8/9/9/9/9/1R2K4 b - - 0 1").unwrap();
        let mut red = Timed::new(vec!["b0b9"], 0, true);
        let mut black = Timed::new(vec!["a5a4"], 0, true);
        let g = play_game(
            &mut red,
            &mut black,
            &start,
            &[],
            &GameSettings::default(),
            1,
        );
        assert_eq!(g.termination, Termination::Rules(Reason::Checkmate));
        assert_eq!(g.winner, Some(Color::Red));
        assert!(g.fouls.is_empty());
    }

    #[test]
    fn offering_again_before_the_opponent_offers_is_a_foul_and_the_third_loses() {
        let mut red = Timed::new(Vec::new(), 0, true);
        let mut black = Timed::new(Vec::new(), 0, false);
        let g = play_game(
            &mut red,
            &mut black,
            &Position::startpos(),
            &[],
            &GameSettings::default(),
            1,
        );
        // Ply 0: a valid offer (refused by Black's move); plies 2, 4, 6: fouls.
        let plies: Vec<usize> = g.fouls.iter().map(|f| f.ply).collect();
        assert_eq!(plies, [2, 4, 6]);
        assert!(
            g.fouls
                .iter()
                .all(|f| f.side == Color::Red && f.kind == FoulKind::RepeatedDrawOffer)
        );
        assert_eq!(g.termination, Termination::ThreeFouls);
        assert_eq!(g.winner, Some(Color::Black));
        assert_eq!((g.fouls_of(Color::Red), g.fouls_of(Color::Black)), (3, 0));
        let pgn = to_pgn(&g, "t", "1", &[]);
        assert!(
            pgn.contains("[Fouls \"red:repeated_draw_offer@2 red:repeated_draw_offer@4 red:repeated_draw_offer@6\"]"),
            "{pgn}"
        );
    }

    /// A player whose engine cannot start a game.
    struct Broken;

    impl Player for Broken {
        fn name(&self) -> String {
            "broken".into()
        }
        fn new_game(&mut self, _: u64) -> Result<(), PlayerError> {
            Err(PlayerError::Other("engine did not start".into()))
        }
        fn think(&mut self, _: &GameView<'_>, _: &Limits) -> Result<Reply, PlayerError> {
            Err(PlayerError::Other("not started".into()))
        }
    }

    #[test]
    fn when_neither_side_can_start_both_forfeit_and_the_pgn_names_no_winner() {
        let g = play_game(
            &mut Broken,
            &mut Broken,
            &Position::startpos(),
            &[],
            &GameSettings::default(),
            1,
        );
        assert!(
            matches!(g.termination, Termination::DoubleForfeit(_)),
            "{:?}",
            g.termination
        );
        assert_eq!(g.winner, None);
        assert_eq!(g.score(), Score::DoubleForfeit);
        assert!(g.is_forfeit(), "decided without play");
        assert_eq!(g.red_points(), 0.0);
        assert_eq!(g.result_text(), "*");
        assert!(
            g.describe().starts_with("both sides forfeit"),
            "{}",
            g.describe()
        );
        // The record reads back with no result and says why.
        let pgn = to_pgn(&g, "t", "3.2.1", &[]);
        let read = xq_data::pgn::read_pgn(&pgn);
        let [Ok(back)] = read.as_slice() else {
            panic!("one readable game: {read:?}\n{pgn}")
        };
        assert_eq!(back.result, None, "{pgn}");
        assert_eq!(back.header("Result"), Some("*"));
        assert_eq!(back.header("Termination"), Some("double_forfeit"));
        assert_eq!(back.header("Round"), Some("3.2.1"));
        assert!(back.moves.is_empty());
    }

    #[test]
    fn a_side_that_cannot_start_forfeits_alone() {
        let start = Position::startpos();
        let settings = GameSettings::default();
        let g = play_game(
            &mut Broken,
            &mut RandomPlayer::new(),
            &start,
            &[],
            &settings,
            1,
        );
        assert_eq!((g.winner, g.score()), (Some(Color::Black), Score::Loss));
        assert_eq!(g.termination.name(), "forfeit");
        let g = play_game(
            &mut RandomPlayer::new(),
            &mut Broken,
            &start,
            &[],
            &settings,
            1,
        );
        assert_eq!((g.winner, g.score()), (Some(Color::Red), Score::Win));
        assert_eq!(g.result_text(), "1-0");
        assert!(g.is_forfeit());
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
        assert_eq!(g.fouls_of(Color::Red), 1, "an illegal move is also a foul");
        assert!(!g.is_forfeit(), "the game was played over the board");
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
