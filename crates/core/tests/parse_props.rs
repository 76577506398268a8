//! The fuzz properties of `fuzz/` (FEN and notation parsing), run here on seeded random
//! and mutated inputs so that CI checks them without cargo-fuzz:
//!
//! * parsing never panics, whatever the input;
//! * a FEN that is accepted prints a FEN that parses back to the same position, whose
//!   hash equals a full recomputation;
//! * a move text that is accepted names a legal move, and that move's printed form in
//!   the same notation parses back to it.

use rand::{Rng, SeedableRng, seq::IndexedRandom};
use rand_chacha::ChaCha8Rng;
use xq_core::{
    Fen, Position,
    notation::{self, Style},
};

/// Checks the FEN properties for one input; returns whether it was accepted.
fn check_fen(text: &str) -> bool {
    if let Ok(fen) = Fen::parse(text) {
        let printed = fen.to_string();
        assert_eq!(
            Fen::parse(&printed).as_ref(),
            Ok(&fen),
            "{text:?} -> {printed:?}"
        );
    }
    match Position::from_fen(text) {
        Ok(pos) => {
            let printed = pos.fen();
            let again = Position::from_fen(&printed)
                .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which fails: {e}"));
            assert_eq!(again, pos, "{text:?} -> {printed:?}");
            assert_eq!(again.fen(), printed);
            assert_eq!(pos.hash(), pos.compute_hash(), "{text:?}");
            true
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.is_empty() && !msg.contains('\n'), "{text:?}: {msg:?}");
            false
        }
    }
}

/// Checks the notation properties for one input in every style; returns how many
/// styles accepted it.
fn check_notation(pos: &Position, text: &str) -> usize {
    let mut accepted = 0;
    for style in Style::ALL {
        match notation::parse_move(pos, text, style) {
            Ok(m) => {
                assert!(
                    pos.is_legal(m),
                    "{style} {text:?} gave illegal {m} in {pos:?}"
                );
                let printed = notation::format_move(pos, m, style);
                assert_eq!(
                    notation::parse_move(pos, &printed, style),
                    Ok(m),
                    "{style} {text:?} -> {m} -> {printed:?} in {pos:?}"
                );
                accepted += 1;
            }
            Err(e) => assert!(!e.to_string().contains('\n'), "{text:?}: {e}"),
        }
    }
    accepted
}

/// Positions from seeded random games, both sides to move, openings to endgames.
fn random_positions(rng: &mut ChaCha8Rng, count: usize) -> Vec<Position> {
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut pos = Position::startpos();
        for _ in 0..rng.random_range(0..200) {
            let legal = pos.legal_moves();
            let Some(&m) = legal.choose(rng) else { break };
            pos.play_unchecked(m);
        }
        out.push(pos);
    }
    out
}

/// Characters that FENs are made of, plus a few that they are not.
const FEN_CHARS: &[char] = &[
    'r', 'n', 'b', 'a', 'k', 'c', 'p', 'R', 'N', 'B', 'A', 'K', 'C', 'P', 'e', 'h', 'E', 'H', 'w',
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '/', ' ', '-', 'x', '\t', 'é', '炮',
];

/// Characters of Chinese, WXF and ICCS move texts, plus a few strangers.
const MOVE_CHARS: &[char] = &[
    '帅', '将', '仕', '士', '相', '象', '马', '車', '炮', '兵', '卒', '王', '一', '二', '三', '四',
    '五', '六', '七', '八', '九', '十', '１', '５', '前', '中', '后', '進', '进', '退', '平', 'K',
    'A', 'E', 'H', 'R', 'C', 'P', 'N', 'B', 'x', '1', '2', '3', '5', '7', '8', '9', '0', '+', '-',
    '.', '=', 'a', 'e', 'h', 'i', ' ', '\u{0}', 'é',
];

/// One random edit: replace, insert, delete or duplicate a character, or truncate.
fn mutate(rng: &mut ChaCha8Rng, text: &str, alphabet: &[char]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let edits = rng.random_range(1..=3);
    for _ in 0..edits {
        let i = rng.random_range(0..=chars.len());
        let c = *alphabet.choose(rng).unwrap_or(&' ');
        match rng.random_range(0..5) {
            0 if i < chars.len() => chars[i] = c,
            1 => chars.insert(i, c),
            2 if i < chars.len() => {
                chars.remove(i);
            }
            3 if i < chars.len() => chars.insert(i, chars[i]),
            4 => chars.truncate(i),
            _ => chars.insert(i, c),
        }
    }
    chars.into_iter().collect()
}

fn random_string(rng: &mut ChaCha8Rng, alphabet: &[char], max_len: usize) -> String {
    let len = rng.random_range(0..=max_len);
    (0..len)
        .map(|_| *alphabet.choose(rng).unwrap_or(&' '))
        .collect()
}

/// Arbitrary bytes, read as UTF-8 with replacement (as the fuzz targets do).
fn random_bytes(rng: &mut ChaCha8Rng, max_len: usize) -> String {
    let len = rng.random_range(0..=max_len);
    let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn fen_parsing_never_panics_and_accepted_fens_round_trip() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xfe11_0001);
    let valid: Vec<String> = random_positions(&mut rng, 300)
        .iter()
        .map(Position::fen)
        .collect();
    let mut accepted = 0;
    for i in 0..60_000 {
        let text = match i % 4 {
            0 => random_bytes(&mut rng, 100),
            1 => random_string(&mut rng, FEN_CHARS, 100),
            _ => {
                let base = valid.choose(&mut rng).map_or("", String::as_str);
                mutate(&mut rng, base, FEN_CHARS)
            }
        };
        accepted += usize::from(check_fen(&text));
    }
    for fen in &valid {
        assert!(check_fen(fen), "{fen}");
    }
    // The mutations must reach the position checks, not only the syntax errors.
    assert!(accepted > 1_000, "only {accepted} mutated FENs accepted");
}

#[test]
fn move_parsing_never_panics_and_accepted_moves_round_trip() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xfe11_0002);
    let positions = random_positions(&mut rng, 200);
    let mut accepted = 0;
    for i in 0..45_000 {
        let Some(pos) = positions.choose(&mut rng) else {
            break;
        };
        let text = match i % 4 {
            0 => random_bytes(&mut rng, 12),
            1 => random_string(&mut rng, MOVE_CHARS, 6),
            _ => {
                // A real move of this position in a random style, then edited.
                let legal = pos.legal_moves();
                let style = *Style::ALL.choose(&mut rng).unwrap_or(&Style::Iccs);
                let base = legal
                    .choose(&mut rng)
                    .map(|&m| notation::format_move(pos, m, style))
                    .unwrap_or_default();
                if rng.random_bool(0.2) {
                    base
                } else {
                    mutate(&mut rng, &base, MOVE_CHARS)
                }
            }
        };
        accepted += check_notation(pos, &text);
    }
    assert!(accepted > 3_000, "only {accepted} move texts accepted");
}
