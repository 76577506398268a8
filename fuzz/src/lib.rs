//! The bodies of the fuzz targets, as plain functions, and a small stable-toolchain
//! driver that runs them over a seed corpus and deterministic pseudo-random mutations
//! of it.
//!
//! libFuzzer (`cargo fuzz run`) needs a nightly toolchain for its sanitizer and
//! coverage flags. Keeping the bodies here lets the stable toolchain compile every
//! target (the binaries in `fuzz_targets/` are a `main` over [`run_for`] unless built
//! with `--cfg fuzzing`, which cargo-fuzz sets) and `scripts/test` run them briefly
//! (`tests/targets.rs`), so a target that no longer builds or a property that breaks
//! is caught where libFuzzer cannot run.

use std::time::{Duration, Instant};

use xq_core::{
    Fen, Position, START_FEN,
    hash::SplitMix64,
    notation::{self, Style},
};

/// FEN parsing never panics, and an accepted FEN prints a FEN that parses back to the
/// same position (with a consistent hash).
pub fn parse_fen(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(fen) = Fen::parse(&text) {
        let printed = fen.to_string();
        assert_eq!(
            Fen::parse(&printed).as_ref(),
            Ok(&fen),
            "{text:?} -> {printed:?}"
        );
    }
    if let Ok(pos) = Position::from_fen(&text) {
        let printed = pos.fen();
        let again = Position::from_fen(&printed).expect("a printed FEN parses");
        assert_eq!(again, pos, "{text:?} -> {printed:?}");
        assert_eq!(again.fen(), printed);
        assert_eq!(pos.hash(), pos.compute_hash());
    }
}

/// The start, Black to move, and positions with stacked pieces of each kind.
pub const BASES: &[&str] = &[
    START_FEN,
    "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1",
    "3k5/9/9/9/9/4C4/9/4C4/9/4K4 w - - 0 1",
    "4k4/9/9/4r4/9/9/4r4/9/9/3K5 b - - 0 1",
    "2P1k4/2P6/2P6/2P6/2P6/9/9/9/9/3K5 w - - 0 1",
    "4k4/9/9/2P3P2/2P1P1P2/9/9/9/9/3K5 w - - 0 1",
    "4k4/9/9/9/9/2p3p2/2p3p2/2p6/9/3K5 b - - 0 1",
    "3k5/9/9/9/9/9/9/3A5/9/3AK4 w - - 0 1",
];

/// Move parsing in every notation never panics, and an accepted text names a legal
/// move whose printed form parses back to it.
///
/// Input layout: byte 0 picks a base position of [`BASES`], byte 1 the number of moves
/// to play from it (each chosen by one further byte), then the move text to parse.
pub fn parse_notation(data: &[u8]) {
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
}

/// Seed inputs of each target: what a libFuzzer corpus would start from.
pub fn seeds(target: Target) -> Vec<Vec<u8>> {
    match target {
        Target::ParseFen => BASES.iter().map(|f| f.as_bytes().to_vec()).collect(),
        Target::ParseNotation => {
            let texts = [
                "h2e2",
                "炮二平五",
                "马8进7",
                "C2.5",
                "H8+7",
                "C+.4",
                "前炮平五",
            ];
            (0..BASES.len())
                .flat_map(|base| {
                    texts.iter().map(move |t| {
                        let mut input = vec![base as u8, 0];
                        input.extend_from_slice(t.as_bytes());
                        input
                    })
                })
                .collect()
        }
    }
}

/// The fuzz targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    ParseFen,
    ParseNotation,
}

impl Target {
    pub const ALL: [Target; 2] = [Target::ParseFen, Target::ParseNotation];

    /// The target's body.
    pub fn body(self) -> fn(&[u8]) {
        match self {
            Target::ParseFen => parse_fen,
            Target::ParseNotation => parse_notation,
        }
    }
}

/// One mutation of `input` in libFuzzer's manner: flip, insert, delete or overwrite a
/// few bytes (with bytes that matter to the parsers half of the time), or splice in
/// another seed's tail.
fn mutate(rng: &mut SplitMix64, input: &mut Vec<u8>, seeds: &[Vec<u8>]) {
    const INTERESTING: &[u8] = b"/0123456789 -wbrnbakcpRNBAKCP.+=\xe5\xe4\xe9\x80\xff\x00";
    let byte = |rng: &mut SplitMix64| {
        if rng.below(2) == 0 {
            INTERESTING[rng.below(INTERESTING.len() as u64) as usize]
        } else {
            rng.next_u64() as u8
        }
    };
    for _ in 0..=rng.below(4) {
        let at = |rng: &mut SplitMix64, len: usize| rng.below(len as u64 + 1) as usize;
        match rng.below(5) {
            0 if !input.is_empty() => {
                let i = at(rng, input.len() - 1);
                input[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = at(rng, input.len());
                let b = byte(rng);
                input.insert(i, b);
            }
            2 if !input.is_empty() => {
                let i = at(rng, input.len() - 1);
                input.remove(i);
            }
            3 if !input.is_empty() => {
                let i = at(rng, input.len() - 1);
                input[i] = byte(rng);
            }
            _ => {
                let other = &seeds[rng.below(seeds.len() as u64) as usize];
                let cut = at(rng, input.len());
                let from = at(rng, other.len());
                input.truncate(cut);
                input.extend_from_slice(&other[from..]);
            }
        }
    }
}

/// Runs `target` over its seeds and then over pseudo-random mutations of them (seeded by
/// `seed`, so a failure repeats), until `inputs` inputs or `time` have passed; returns
/// the number of inputs run. A property that fails panics with the input.
pub fn run_for(target: Target, seed: u64, inputs: u64, time: Duration) -> u64 {
    let body = target.body();
    let seeds = seeds(target);
    for s in &seeds {
        body(s);
    }
    let mut rng = SplitMix64::new(seed);
    let started = Instant::now();
    let mut input = Vec::new();
    let mut n = seeds.len() as u64;
    while n < inputs && started.elapsed() < time {
        // Mostly keep mutating the same input (deeper changes), sometimes restart
        // from a seed.
        if input.is_empty() || rng.below(8) == 0 {
            input = seeds[rng.below(seeds.len() as u64) as usize].clone();
        }
        mutate(&mut rng, &mut input, &seeds);
        input.truncate(256);
        let result = std::panic::catch_unwind(|| body(&input));
        if let Err(panic) = result {
            eprintln!("{target:?} failed on input {input:?}");
            std::panic::resume_unwind(panic);
        }
        n += 1;
    }
    n
}
