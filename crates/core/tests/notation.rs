//! Chinese and WXF notation: known examples, stacked pieces, errors, and print → parse
//! round trips over random games, random soldier-heavy positions and the master games.

use std::path::Path;

use rand::{Rng, SeedableRng, seq::IndexedRandom};
use rand_chacha::ChaCha8Rng;
use xq_core::{
    Color, Move, Piece, Position, Role, START_FEN, Setup, Square,
    notation::{self, NotationError, Style},
    reachable,
};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn mv(s: &str) -> Move {
    s.parse().unwrap()
}

/// `(FEN, ICCS, Chinese, WXF)`: each move must print as given and parse back.
const KNOWN: &[(&str, &str, &str, &str)] = &[
    // The usual opening moves, Red.
    (START_FEN, "h2e2", "炮二平五", "C2.5"),
    (START_FEN, "b2e2", "炮八平五", "C8.5"),
    (START_FEN, "b0c2", "马八进七", "H8+7"),
    (START_FEN, "h0g2", "马二进三", "H2+3"),
    (START_FEN, "a0a1", "车九进一", "R9+1"),
    (START_FEN, "i0i1", "车一进一", "R1+1"),
    (START_FEN, "g0e2", "相三进五", "E3+5"),
    (START_FEN, "c0e2", "相七进五", "E7+5"),
    (START_FEN, "f0e1", "仕四进五", "A4+5"),
    (START_FEN, "d0e1", "仕六进五", "A6+5"),
    (START_FEN, "e0e1", "帅五进一", "K5+1"),
    (START_FEN, "c3c4", "兵七进一", "P7+1"),
    (START_FEN, "g3g4", "兵三进一", "P3+1"),
    (START_FEN, "h2h9", "炮二进七", "C2+7"),
    (START_FEN, "h2h1", "炮二退一", "C2-1"),
    // Black: files counted from Black's right (file a is 1), digits.
    (BLACK_START, "h9g7", "马8进7", "H8+7"),
    (BLACK_START, "b9c7", "马2进3", "H2+3"),
    (BLACK_START, "h7e7", "炮8平5", "C8.5"),
    (BLACK_START, "b7e7", "炮2平5", "C2.5"),
    (BLACK_START, "c6c5", "卒3进1", "P3+1"),
    (BLACK_START, "g9e7", "象7进5", "E7+5"),
    (BLACK_START, "d9e8", "士4进5", "A4+5"),
    (BLACK_START, "a9a8", "车1进1", "R1+1"),
    (BLACK_START, "h7h8", "炮8退1", "C8-1"),
    (BLACK_START, "e9e8", "将5进1", "K5+1"),
    // Two red cannons on file 五 (e4 front, e2 rear).
    (CANNONS, "e4f4", "前炮平四", "C+.4"),
    (CANNONS, "e2d2", "后炮平六", "C-.6"),
    (CANNONS, "e4e9", "前炮进五", "C++5"),
    (CANNONS, "e2e3", "后炮进一", "C-+1"),
    (CANNONS, "e2e1", "后炮退一", "C--1"),
    // Two black chariots on Black's file 5: e3 is the front one for Black.
    (CHARIOTS, "e3d3", "前车平4", "R+.4"),
    (CHARIOTS, "e6e7", "后车退1", "R--1"),
    (CHARIOTS, "e3e0", "前车进3", "R++3"),
    (CHARIOTS, "e6f6", "后车平6", "R-.6"),
    // Two red horses on file 五.
    (HORSES, "e3f5", "前马进四", "H++4"),
    (HORSES, "e1g2", "后马进三", "H-+3"),
    (HORSES, "e3d1", "前马退六", "H+-6"),
    // Advisors and elephants sharing a file keep the file: the direction decides.
    (ADVISORS, "d0e1", "仕六进五", "A6+5"),
    (ADVISORS, "d2e1", "仕六退五", "A6-5"),
    (ELEPHANTS, "c0e2", "相七进五", "E7+5"),
    (ELEPHANTS, "c4e2", "相七退五", "E7-5"),
    (ELEPHANTS, "c4a2", "相七退九", "E7-9"),
    // Three red soldiers on file 五: 前/中/后; WXF writes the middle one with its file.
    (THREE_SOLDIERS, "e7d7", "前兵平六", "P+.6"),
    (THREE_SOLDIERS, "e7e8", "前兵进一", "P++1"),
    (THREE_SOLDIERS, "e6d6", "中兵平六", "P5.6"),
    (THREE_SOLDIERS, "e5f5", "后兵平四", "P-.4"),
    // Four: 一…四 from the front; WXF ++ P+ P- --.
    (FOUR_SOLDIERS, "e8d8", "一兵平六", "++.6"),
    (FOUR_SOLDIERS, "e7d7", "二兵平六", "P+.6"),
    (FOUR_SOLDIERS, "e6f6", "三兵平四", "P-.4"),
    (FOUR_SOLDIERS, "e5d5", "四兵平六", "--.6"),
    // Five on Red's file 七.
    (FIVE_SOLDIERS, "c9b9", "一兵平八", "++.8"),
    (FIVE_SOLDIERS, "c8d8", "二兵平六", "P+.6"),
    (FIVE_SOLDIERS, "c7b7", "三兵平八", "P7.8"),
    (FIVE_SOLDIERS, "c6b6", "四兵平八", "P-.8"),
    (FIVE_SOLDIERS, "c5d5", "五兵平六", "--.6"),
    // Two stacked files (Red 三 and 七): numbered across both, files right to left, then
    // front to back; WXF names the file and the place on it.
    (TWO_STACKS, "g6f6", "一兵平四", "3+.4"),
    (TWO_STACKS, "g6g7", "一兵进一", "3++1"),
    (TWO_STACKS, "g5f5", "二兵平四", "3-.4"),
    (TWO_STACKS, "c6d6", "三兵平六", "7+.6"),
    (TWO_STACKS, "c5b5", "四兵平八", "7-.8"),
    (TWO_STACKS, "e5e6", "兵五进一", "P5+1"),
    // Black, three on file 3 and two on file 7: one series 一…五 (Chinese numerals,
    // since they count soldiers, not files).
    (BLACK_STACKS, "c2b2", "一卒平2", "3+.2"),
    (BLACK_STACKS, "c2c1", "一卒进1", "3++1"),
    (BLACK_STACKS, "c3b3", "二卒平2", "33.2"),
    (BLACK_STACKS, "c4d4", "三卒平4", "3-.4"),
    (BLACK_STACKS, "g3h3", "四卒平8", "7+.8"),
    (BLACK_STACKS, "g4f4", "五卒平6", "7-.6"),
];

const BLACK_START: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 1";
const CANNONS: &str = "3k5/9/9/9/9/4C4/9/4C4/9/4K4 w - - 0 1";
const CHARIOTS: &str = "4k4/9/9/4r4/9/9/4r4/9/9/3K5 b - - 0 1";
const HORSES: &str = "3k5/9/9/9/9/9/4N4/9/4N4/4K4 w - - 0 1";
const ADVISORS: &str = "3k5/9/9/9/9/9/9/3A5/9/3AK4 w - - 0 1";
const ELEPHANTS: &str = "3k5/9/9/9/9/2B6/9/9/9/2B1K4 w - - 0 1";
const THREE_SOLDIERS: &str = "3k5/9/4P4/4P4/4P4/9/9/9/9/4K4 w - - 0 1";
const FOUR_SOLDIERS: &str = "3k5/4P4/4P4/4P4/4P4/9/9/9/9/4K4 w - - 0 1";
const FIVE_SOLDIERS: &str = "2P1k4/2P6/2P6/2P6/2P6/9/9/9/9/3K5 w - - 0 1";
const TWO_STACKS: &str = "4k4/9/9/2P3P2/2P1P1P2/9/9/9/9/3K5 w - - 0 1";
const BLACK_STACKS: &str = "4k4/9/9/9/9/2p3p2/2p3p2/2p6/9/3K5 b - - 0 1";

#[test]
fn known_moves_print_and_parse_in_both_notations() {
    for &(fen, iccs, chinese, wxf) in KNOWN {
        let p = pos(fen);
        let m = mv(iccs);
        assert!(p.is_legal(m), "{iccs} is not legal in {fen}");
        assert_eq!(notation::to_chinese(&p, m), chinese, "{iccs} in {fen}");
        assert_eq!(notation::to_wxf(&p, m), wxf, "{iccs} in {fen}");
        assert_eq!(
            notation::parse_chinese(&p, chinese),
            Ok(m),
            "{chinese} in {fen}"
        );
        assert_eq!(notation::parse_wxf(&p, wxf), Ok(m), "{wxf} in {fen}");
        assert_eq!(notation::format_move(&p, m, Style::Iccs), iccs);
        assert_eq!(notation::parse_move(&p, iccs, Style::Iccs), Ok(m));
    }
}

/// Other spellings that name the same move as the first entry.
const VARIANTS: &[(&str, Style, &str, &[&str])] = &[
    (
        START_FEN,
        Style::Chinese,
        "h2e2",
        &[
            "炮2平5",
            "炮２平５",
            "砲二平五",
            "包二平五",
            " 炮 二 平 五 ",
        ],
    ),
    (
        START_FEN,
        Style::Chinese,
        "b0c2",
        &["馬八進七", "傌八进七", "马8进7"],
    ),
    (START_FEN, Style::Chinese, "a0a1", &["車九进一", "俥九進一"]),
    (
        START_FEN,
        Style::Chinese,
        "e0e1",
        &["帥五进一", "将五进一", "將5进1"],
    ),
    (START_FEN, Style::Chinese, "g0e2", &["象三进五"]),
    (START_FEN, Style::Chinese, "f0e1", &["士四进五"]),
    (START_FEN, Style::Chinese, "c3c4", &["卒七进一"]),
    (
        BLACK_START,
        Style::Chinese,
        "h9g7",
        &["马８进７", "马八进七", "馬8進7"],
    ),
    (CANNONS, Style::Chinese, "e2e1", &["後炮退一", "后炮五退一"]),
    // A plain file form is enough when the motion picks out one piece.
    (CANNONS, Style::Chinese, "e4e9", &["炮五进五"]),
    (ADVISORS, Style::Chinese, "d2e1", &["前仕退五"]),
    (
        THREE_SOLDIERS,
        Style::Chinese,
        "e6d6",
        &["中兵五平六", "中五平六", "二兵平六"],
    ),
    (
        TWO_STACKS,
        Style::Chinese,
        "c5b5",
        &["后兵七平八", "后七平八", "四兵平八"],
    ),
    (START_FEN, Style::Wxf, "h2e2", &["C2=5", "c2.5", " C2.5 "]),
    (START_FEN, Style::Wxf, "b0c2", &["N8+7", "h8+7"]),
    (START_FEN, Style::Wxf, "g0e2", &["B3+5"]),
    (CANNONS, Style::Wxf, "e4f4", &["+C.4", "+C=4"]),
    (CANNONS, Style::Wxf, "e2d2", &["-C.6"]),
    (CHARIOTS, Style::Wxf, "e6e7", &["-R-1", "r--1"]),
    (THREE_SOLDIERS, Style::Wxf, "e7d7", &["++.6", "+P.6"]),
    (THREE_SOLDIERS, Style::Wxf, "e6d6", &["55.6"]),
    (FOUR_SOLDIERS, Style::Wxf, "e8d8", &["++=6"]),
    (ADVISORS, Style::Wxf, "d0e1", &["A-+5"]),
];

#[test]
fn accepted_variants_name_the_same_move() {
    for &(fen, style, iccs, texts) in VARIANTS {
        let p = pos(fen);
        for text in texts {
            assert_eq!(
                notation::parse_move(&p, text, style),
                Ok(mv(iccs)),
                "{text:?} in {fen}"
            );
        }
    }
}

#[test]
fn format_line_writes_a_game_in_order() {
    let p = Position::startpos();
    let moves: Vec<Move> = ["h2e2", "h9g7", "h0g2", "i9h9"]
        .iter()
        .map(|s| mv(s))
        .collect();
    assert_eq!(
        notation::format_line(&p, &moves, Style::Chinese).unwrap(),
        ["炮二平五", "马8进7", "马二进三", "车9平8"]
    );
    assert_eq!(
        notation::format_line(&p, &moves, Style::Wxf).unwrap(),
        ["C2.5", "H8+7", "H2+3", "R9.8"]
    );
    let bad = [mv("h2e2"), mv("h2e2")];
    assert!(notation::format_line(&p, &bad, Style::Chinese).is_err());
}

const PINNED: &str = "3k5/9/9/9/4r4/9/9/9/4R4/4K4 w - - 0 1";

#[test]
fn errors_name_the_problem() {
    use NotationError as E;
    let start = Position::startpos();
    type Case<'a> = (&'a Position, Style, &'a str, fn(&NotationError) -> bool);
    let cases: &[Case] = &[
        (&start, Style::Chinese, "", |e| matches!(e, E::Empty)),
        (&start, Style::Wxf, "  ", |e| matches!(e, E::Empty)),
        (&start, Style::Iccs, "", |e| matches!(e, E::Empty)),
        (&start, Style::Chinese, "王二平五", |e| {
            matches!(e, E::UnknownPiece { found: '王', .. })
        }),
        (&start, Style::Chinese, "前王平五", |e| {
            matches!(e, E::UnknownPiece { found: '王', .. })
        }),
        (&start, Style::Wxf, "X2.5", |e| {
            matches!(e, E::UnknownPiece { found: 'X', .. })
        }),
        (&start, Style::Chinese, "炮二走五", |e| {
            matches!(e, E::Malformed { .. })
        }),
        (&start, Style::Chinese, "炮二平", |e| {
            matches!(e, E::Malformed { .. })
        }),
        (&start, Style::Chinese, "炮二平五五五", |e| {
            matches!(e, E::Malformed { .. })
        }),
        (&start, Style::Chinese, "炮十平五", |e| {
            matches!(e, E::Malformed { .. })
        }),
        (&start, Style::Wxf, "C2x5", |e| {
            matches!(e, E::Malformed { .. })
        }),
        (&start, Style::Wxf, "C2.0", |e| {
            matches!(e, E::Malformed { .. })
        }),
        (&start, Style::Wxf, "C2.55", |e| {
            matches!(e, E::Malformed { .. })
        }),
        (&start, Style::Wxf, "34.5", |e| {
            matches!(e, E::Malformed { .. })
        }),
        (
            &start,
            Style::Chinese,
            "炮四平五",
            |e| matches!(e, E::NoPieceOnFile { file: 4, piece, .. } if piece.role == Role::Cannon),
        ),
        (&start, Style::Wxf, "C4.5", |e| {
            matches!(e, E::NoPieceOnFile { file: 4, .. })
        }),
        (&start, Style::Chinese, "前炮平四", |e| {
            matches!(e, E::NotStacked { .. })
        }),
        (&start, Style::Wxf, "C+.4", |e| {
            matches!(e, E::NotStacked { .. })
        }),
        (&start, Style::Chinese, "车九平八", |e| {
            matches!(e, E::Impossible { .. })
        }),
        (&start, Style::Chinese, "马八平七", |e| {
            matches!(e, E::Impossible { .. })
        }),
        (&start, Style::Wxf, "H8+8", |e| {
            matches!(e, E::Impossible { .. })
        }),
        (&start, Style::Iccs, "h2e3", |e| matches!(e, E::Iccs(_))),
        (&start, Style::Iccs, "zz", |e| matches!(e, E::Iccs(_))),
    ];
    for (p, style, text, check) in cases {
        let err = notation::parse_move(p, text, *style).expect_err(text);
        assert!(check(&err), "{text:?}: unexpected error {err:?}");
        let msg = err.to_string();
        assert!(!msg.is_empty() && !msg.contains('\n'), "{text:?}: {msg:?}");
    }
}

#[test]
fn stack_errors_and_ambiguity_are_reported() {
    use NotationError as E;
    let cannons = pos(CANNONS);
    let err = notation::parse_chinese(&cannons, "中炮平四").unwrap_err();
    assert!(matches!(err, E::NoSuchStackPlace { .. }), "{err:?}");
    // Both cannons on file 五 can go to file 六.
    let err = notation::parse_chinese(&cannons, "炮五平六").unwrap_err();
    match err {
        E::Ambiguous { ref candidates, .. } => {
            assert_eq!(candidates.len(), 2);
            assert!(err.to_string().contains("e2d2") && err.to_string().contains("e4d4"));
        }
        other => panic!("expected ambiguity, got {other:?}"),
    }
    let four = pos(FOUR_SOLDIERS);
    let err = notation::parse_chinese(&four, "五兵平六").unwrap_err();
    assert!(matches!(err, E::NoSuchStackPlace { .. }), "{err:?}");
    let err = notation::parse_wxf(&four, "44.6").unwrap_err();
    assert!(matches!(err, E::NoPieceOnFile { .. }), "{err:?}");
    let err = notation::parse_wxf(&four, "55.6").unwrap_err();
    assert!(matches!(err, E::NoSuchStackPlace { .. }), "{err:?}");
}

#[test]
fn a_pinned_piece_moving_off_the_line_is_illegal() {
    let p = pos(PINNED);
    let err = notation::parse_chinese(&p, "车五平六").unwrap_err();
    assert_eq!(
        err,
        NotationError::Illegal {
            text: "车五平六".into(),
            m: mv("e1d1")
        }
    );
    assert!(notation::parse_wxf(&p, "R5.6").is_err());
    // Along the pin line the chariot may move.
    assert_eq!(notation::parse_chinese(&p, "车五进四"), Ok(mv("e1e5")));
}

/// Checks print → parse over every legal move of `p` in every style, and that no two
/// legal moves print alike.
fn assert_round_trips(p: &Position) -> usize {
    let legal = p.legal_moves();
    for style in Style::ALL {
        let mut seen = std::collections::HashSet::new();
        for &m in &legal {
            let text = notation::format_move(p, m, style);
            assert!(
                seen.insert(text.clone()),
                "{text} printed twice in {}",
                p.fen()
            );
            assert_eq!(
                notation::parse_move(p, &text, style),
                Ok(m),
                "{style} {text:?} for {m} in {}",
                p.fen()
            );
        }
    }
    legal.len()
}

#[test]
fn every_legal_move_round_trips_in_random_games() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_0001);
    let (mut positions, mut moves) = (0, 0);
    for _ in 0..60 {
        let mut p = Position::startpos();
        for _ in 0..160 {
            moves += assert_round_trips(&p);
            positions += 1;
            let legal = p.legal_moves();
            let Some(&m) = legal.choose(&mut rng) else {
                break;
            };
            p.play_unchecked(m);
        }
    }
    assert!(
        positions > 5_000 && moves > 100_000,
        "{positions} positions, {moves} moves"
    );
}

/// A random legal position rich in soldiers (and with a few other pieces), so that
/// stacks of two to five soldiers and two stacked files come up often.
fn random_soldier_position(rng: &mut ChaCha8Rng) -> Option<Position> {
    let mut s = Setup::empty();
    s.turn = if rng.random_bool(0.5) {
        Color::Red
    } else {
        Color::Black
    };
    let points = |p: Piece| -> Vec<Square> { Square::all().filter(|&q| reachable(p, q)).collect() };
    for c in Color::ALL {
        let g = Piece::new(c, Role::General);
        let &sq = points(g).choose(rng)?;
        s.board[sq.index()] = Some(g);
    }
    for c in Color::ALL {
        // Soldiers crowd a few files so that they stack.
        let soldier = Piece::new(c, Role::Soldier);
        let files: Vec<usize> = (0..rng.random_range(1..=2))
            .map(|_| rng.random_range(0..9))
            .collect();
        let candidates: Vec<Square> = points(soldier)
            .into_iter()
            .filter(|q| files.contains(&q.file().index()))
            .collect();
        for _ in 0..rng.random_range(2..=6) {
            let &sq = candidates.choose(rng)?;
            s.board[sq.index()] = s.board[sq.index()].or(Some(soldier));
        }
        for role in [
            Role::Chariot,
            Role::Horse,
            Role::Cannon,
            Role::Advisor,
            Role::Elephant,
        ] {
            let piece = Piece::new(c, role);
            for _ in 0..rng.random_range(0..=2) {
                let &sq = points(piece).choose(rng)?;
                s.board[sq.index()] = s.board[sq.index()].or(Some(piece));
            }
        }
    }
    Position::from_setup(s).ok()
}

#[test]
fn every_legal_move_round_trips_in_soldier_heavy_positions() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_0002);
    let (mut positions, mut deep_stacks, mut four_stacks, mut two_stacks) = (0, 0, 0, 0);
    while positions < 4_000 {
        let Some(p) = random_soldier_position(&mut rng) else {
            continue;
        };
        if p.count_legal() == 0 {
            continue;
        }
        assert_round_trips(&p);
        positions += 1;
        let c = p.turn();
        let per_file: Vec<usize> = (0..9)
            .map(|f| {
                p.pieces(c, Role::Soldier)
                    .filter(|q| q.file().index() == f)
                    .count()
            })
            .collect();
        deep_stacks += usize::from(per_file.iter().any(|&n| n >= 3));
        four_stacks += usize::from(per_file.iter().any(|&n| n >= 4));
        two_stacks += usize::from(per_file.iter().filter(|&&n| n >= 2).count() >= 2);
    }
    // The generator must really produce the hard cases.
    assert!(
        deep_stacks > 1_000 && four_stacks > 300 && two_stacks > 200,
        "{deep_stacks} deep, {four_stacks} four+, {two_stacks} two-file"
    );
}

/// The 1,391 master games: every move prints and parses back in both notations.
#[test]
fn master_game_moves_round_trip() {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/hu_ronghua_1391_iccs.pgn"
    ));
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (mut games, mut plies) = (0, 0);
    let mut p = Position::startpos();
    for line in text.lines() {
        if line.starts_with("[Event ") {
            games += 1;
            p = Position::startpos();
        }
        if line.starts_with('[') {
            continue;
        }
        for tok in line.split_whitespace() {
            if tok.ends_with('.') || matches!(tok, "1-0" | "0-1" | "1/2-1/2" | "*") {
                continue;
            }
            let m = p
                .parse_iccs(tok)
                .unwrap_or_else(|e| panic!("game {games}: {e}"));
            for style in [Style::Chinese, Style::Wxf] {
                let s = notation::format_move(&p, m, style);
                assert_eq!(
                    notation::parse_move(&p, &s, style),
                    Ok(m),
                    "game {games}: {s}"
                );
            }
            p.play_unchecked(m);
            plies += 1;
        }
    }
    assert_eq!(games, 1391);
    assert!(plies > 100_000, "{plies} plies");
}
