//! Berger tables (贝格尔编排法, CXA rules 附录一; FIDE Handbook C.05 Annex 1).
//!
//! Players are numbered 1..=n. With an odd `n` a dummy number `n + 1` is
//! added (the "0" of the Chinese tables); whoever meets it has a bye.
//! In every pair the first-listed number plays Red (13.1: 表上每轮号码列前者执红棋).
//!
//! Construction, for `N` even (after adding the dummy): write the numbers
//! 1..N−1 on a ring. In round `r` (1-based) the ring starts at
//! `1 + (r − 1)·N/2 (mod N − 1)`; board 1 pairs the ring's start with `N`
//! (`N` plays Black in odd rounds and Red in even rounds), and board `k`
//! pairs ring position `k − 1` (Red, left column) with ring position
//! `N − k` (Black, right column). This is the table's "number 1 jumps N/2
//! places each round, N alternates sides" rule written as arithmetic, and it
//! reproduces the published tables exactly (see the tests).

/// One board of a Berger round: `(red, black)` as 1-based numbers; `black`
/// is `None` when `red` has a bye (met the dummy number).
pub type BergerPair = (usize, Option<usize>);

/// The single round-robin Berger table for `n` players: `n − 1` rounds for
/// even `n`, `n` rounds for odd `n`. Each round lists its boards in table
/// order; with odd `n` the bye appears as `(player, None)` on board 1.
/// Fewer than 2 players give an empty table.
#[must_use]
pub fn berger_table(n: usize) -> Vec<Vec<BergerPair>> {
    if n < 2 {
        return Vec::new();
    }
    let big = n + n % 2; // N, with the dummy if n is odd
    let ring_len = big - 1;
    let half = big / 2;
    let real = |p: usize| (p <= n).then_some(p);
    (0..ring_len)
        .map(|r| {
            let start = (r * half) % ring_len;
            let ring = |pos: usize| (start + pos) % ring_len + 1;
            let mut boards = Vec::with_capacity(half);
            // Board 1: the ring's start against N, N alternating sides.
            let first = ring(0);
            let board1 = if r % 2 == 0 {
                (Some(first), real(big))
            } else {
                (real(big), Some(first))
            };
            boards.push(board1);
            for k in 1..half {
                boards.push((Some(ring(k)), Some(ring(ring_len - k))));
            }
            boards
                .into_iter()
                .map(|(red, black)| match (red, black) {
                    (Some(r), b) => (r, b),
                    // The dummy "plays Red": the real player has the bye.
                    (None, Some(b)) => (b, None),
                    (None, None) => unreachable!("only one dummy per round"),
                })
                .collect()
        })
        .collect()
}
