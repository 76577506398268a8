//! The Xiangqi rules core of xqzero.
//!
//! The rules are those of the Chinese Xiangqi Association (中国象棋协会): board and
//! moves (第1-2条), check and mate (第3条), results (第4条), and the repetition rules
//! of the 棋例 (第24-29条). Positions are built through validation ([`Setup`] then
//! [`Position`]); move generation uses 90-bit bitboards in a `u128` with tables
//! computed at compile time.
//!
//! ```
//! use xq_core::{Position, perft::perft};
//! let pos = Position::startpos();
//! assert_eq!(perft(&pos, 2), 1920);
//! let m = pos.parse_iccs("h2e2").unwrap(); // 炮二平五
//! assert!(pos.is_legal(m));
//! ```

mod attacks;
mod bitboard;
mod moves;
mod position;
mod setup;
mod square;
mod types;

pub mod fen;
pub mod game;
pub mod hash;
pub mod notation;
pub mod perft;
pub mod zobrist;

pub use attacks::{
    advisor_attacks, cannon_attacks, chariot_attacks, elephant_attacks, general_steps,
    horse_attackers, horse_attacks, soldier_attacks,
};
pub use bitboard::Bitboard;
pub use fen::{Fen, FenError, ParseFenError, START_FEN};
pub use game::{Ending, Game, GameConfig, Outcome, Reason};
pub use moves::{MAX_MOVES, Move, MoveList, ParseMoveError};
pub use position::{IllegalMoveError, PlayError, Position};
pub use setup::{PositionError, Setup, reachable};
pub use square::{File, ParseSquareError, Rank, Square};
pub use types::{ByColor, Color, Piece, Role};
