//! Opening book: self-play games that start from the first plies of stored games
//! (`[selfplay] book_plies`), so that self-play visits openings its own search would
//! not reach from the starting position. Gumbel self-play plays the move its search
//! prefers, noise aside; as the network sharpens, its games from the starting
//! position share longer and longer openings, and the network learns less of the rest.
//!
//! Each game draws, from its own seed, a line and a ply count k in `0..=book_plies`, and
//! starts after the line's first k moves (fewer when the line is shorter, or when its
//! next move would end the game). Those moves are played, not searched: they are in
//! the game's PGN record but give no training record.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use xq_core::{Game, Move, Position};

/// Opening lines.
#[derive(Debug, Clone, Default)]
pub struct Book {
    lines: Vec<(Position, Vec<Move>)>,
}

/// A line that cannot open a game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BookError {
    /// `line` and `number` are 1-based.
    #[error("opening line {line}: move {number} ({mv}) is illegal in {fen}")]
    IllegalMove {
        line: usize,
        number: usize,
        mv: String,
        fen: String,
    },
    #[error("opening line {line}: the game is over in its start position {fen}")]
    Finished { line: usize, fen: String },
}

impl Book {
    /// A book of `lines`, each a start position and the moves played from it.
    ///
    /// # Errors
    /// The first line with a move that is illegal where it is played.
    pub fn new(lines: Vec<(Position, Vec<Move>)>) -> Result<Book, BookError> {
        for (i, (start, moves)) in lines.iter().enumerate() {
            let mut game = Game::new(start.clone());
            if game.adjudicate().is_some() {
                return Err(BookError::Finished {
                    line: i + 1,
                    fen: start.fen(),
                });
            }
            for (j, &mv) in moves.iter().enumerate() {
                if game.play(mv).is_err() {
                    return Err(BookError::IllegalMove {
                        line: i + 1,
                        number: j + 1,
                        mv: mv.to_string(),
                        fen: game.position().fen(),
                    });
                }
            }
        }
        Ok(Book { lines })
    }

    /// How many lines the book holds.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether the book holds no line (every game then starts from the start position).
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The opening of the game with seed `seed`, at most `plies` plies long (see the
    /// module's doc): the same seed gives the same opening.
    pub fn opening(&self, seed: u64, plies: u32) -> Game {
        if self.lines.is_empty() {
            return Game::new(Position::startpos());
        }
        // A stream of its own, so that the opening does not shift the game's noise.
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x626f_6f6b);
        let (start, moves) = &self.lines[rng.random_range(0..self.lines.len())];
        let k = rng.random_range(0..=plies) as usize;
        let mut game = Game::new(start.clone());
        for &mv in moves.iter().take(k) {
            game.play_unchecked(mv);
            if game.adjudicate().is_some() {
                // A game starts with a move to search.
                game.undo();
                break;
            }
        }
        game
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(start: &Position, iccs: &str) -> (Position, Vec<Move>) {
        let mut game = Game::new(start.clone());
        let moves = iccs
            .split_whitespace()
            .map(|m| game.play_iccs(m).unwrap())
            .collect();
        (start.clone(), moves)
    }

    #[test]
    fn openings_are_prefixes_of_lines_of_every_length_up_to_plies() {
        let start = Position::startpos();
        let lines = vec![
            line(&start, "h2e2 h9g7 h0g2 b9c7 b2c2 i9h9"),
            line(&start, "c3c4 g9e7 b0c2"),
        ];
        let book = Book::new(lines.clone()).unwrap();
        let mut lengths = std::collections::BTreeSet::new();
        let mut firsts = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let game = book.opening(seed, 4);
            let moves: Vec<Move> = game.moves().collect();
            assert!(moves.len() <= 4, "seed {seed}: {} plies", moves.len());
            assert!(
                lines.iter().any(|(_, l)| l.starts_with(&moves)),
                "seed {seed}: {moves:?} is no line's prefix"
            );
            assert_eq!(book.opening(seed, 4).moves().collect::<Vec<_>>(), moves);
            lengths.insert(moves.len());
            firsts.extend(moves.first().copied());
        }
        assert_eq!(lengths.into_iter().collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        assert_eq!(firsts.len(), 2, "both lines are drawn");
    }

    #[test]
    fn an_opening_stops_before_a_move_that_ends_the_game() {
        // Red mates at once with Ra0-a9: the rook on b8 holds rank 8, and the king
        // on d0 keeps Black's king off the d-file.
        let start = Position::from_fen("4k4/1R7/9/9/9/9/9/9/9/R2K5 w - - 0 1").unwrap();
        let mate = line(&start, "a0a9");
        let mut game = Game::new(start.clone());
        game.play(mate.1[0]).unwrap();
        assert!(
            game.adjudicate().is_some(),
            "the test line must end the game"
        );
        let book = Book::new(vec![mate]).unwrap();
        for seed in 0..20 {
            assert_eq!(book.opening(seed, 1).ply(), 0, "seed {seed}");
        }
    }

    #[test]
    fn a_line_that_cannot_open_a_game_is_refused_naming_it() {
        let start = Position::startpos();
        let good = line(&start, "h2e2 h9g7");
        let bad_move = Position::startpos().parse_iccs("h0g2").unwrap();
        let mut bad = line(&start, "h2e2");
        bad.1.push(bad_move); // Red's horse again, on Black's turn.
        let err = Book::new(vec![good, bad]).unwrap_err();
        assert!(
            matches!(
                err,
                BookError::IllegalMove {
                    line: 2,
                    number: 2,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("h0g2"), "{err}");
        // Black to move and mated: no game can start there.
        let mated = Position::from_fen("R3k4/1R7/9/9/9/9/9/9/9/3K5 b - - 0 1").unwrap();
        let err = Book::new(vec![(mated, Vec::new())]).unwrap_err();
        assert!(matches!(err, BookError::Finished { line: 1, .. }), "{err}");
    }

    #[test]
    fn an_empty_book_starts_from_the_start_position() {
        let book = Book::new(Vec::new()).unwrap();
        assert!(book.is_empty());
        assert_eq!(book.opening(3, 8).position(), &Position::startpos());
    }
}
