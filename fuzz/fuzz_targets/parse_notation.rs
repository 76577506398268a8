//! Move parsing in every notation never panics, and an accepted text names a legal move
//! whose printed form parses back to it. The same property runs in CI on seeded
//! inputs: `crates/core/tests/parse_props.rs`.
//!
//! Input layout: byte 0 picks a base position, byte 1 the number of moves to play
//! from it (each chosen by one further byte), then the move text to parse.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xq_core::{
    Position, START_FEN,
    notation::{self, Style},
};

/// The start, Black to move, and positions with stacked pieces of each kind.
const BASES: &[&str] = &[
    START_FEN,
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1",
    "3k5/9/9/9/9/4C4/9/4C4/9/4K4 w - - 0 1",
    "4k4/9/9/4r4/9/9/4r4/9/9/3K5 b - - 0 1",
    "2P1k4/2P6/2P6/2P6/2P6/9/9/9/9/3K5 w - - 0 1",
    "4k4/9/9/2P3P2/2P1P1P2/9/9/9/9/3K5 w - - 0 1",
    "4k4/9/9/9/9/2p3p2/2p3p2/2p6/9/3K5 b - - 0 1",
    "3k5/9/9/9/9/9/9/3A5/9/3AK4 w - - 0 1",
];

fuzz_target!(|data: &[u8]| {
    let (&base, rest) = data.split_first().unwrap_or((&0, &[]));
    let Ok(mut pos) = Position::from_fen(BASES[usize::from(base) % BASES.len()]) else {
        return;
    };
    let (&plies, mut rest) = rest.split_first().unwrap_or((&0, &[]));
    for _ in 0..plies % 32 {
        let Some((&pick, tail)) = rest.split_first() else {
            break;
        };
        rest = tail;
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        pos.play_unchecked(legal[usize::from(pick) % legal.len()]);
    }
    let text = String::from_utf8_lossy(rest);
    for style in Style::ALL {
        if let Ok(m) = notation::parse_move(&pos, &text, style) {
            assert!(pos.is_legal(m), "{style} {text:?} -> illegal {m}");
            let printed = notation::format_move(&pos, m, style);
            assert_eq!(
                notation::parse_move(&pos, &printed, style),
                Ok(m),
                "{printed:?}"
            );
        }
    }
});
