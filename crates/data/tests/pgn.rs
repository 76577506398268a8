//! The PGN reader and the supervised source built on it.

mod common;

use xq_core::Position;
use xq_data::{
    Batch, Outcome, PgnError, PgnRecord, Sample, SplitConfig, Wdl, Window, assemble_samples,
    decode_chunk, encode_chunk, games_to_chunks, read_pgn,
};
use xq_nn::{encode::EncoderConfig, policy::policy_index};

const MASTER: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/hu_ronghua_1391_iccs.pgn"
));

#[test]
fn master_collection_reads_all_1391_games() {
    let games: Vec<_> = read_pgn(MASTER)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(games.len(), 1391);
    let first = &games[0];
    assert_eq!(first.header("Event"), Some("China Team Championship 1998"));
    assert_eq!(first.header("Red"), Some("HU RongHua"));
    assert_eq!(first.header("Black"), Some("XU TianHong"));
    assert_eq!(first.moves.len(), 65); // "33. d9f8" is Red's 33rd move
    assert_eq!(first.moves[0].to_string(), "g0e2");
    assert_eq!(first.moves[64].to_string(), "d9f8");
    assert_eq!(first.result, None); // the file has no Result headers
    assert_eq!(first.start, Position::startpos());
    assert_eq!(games[1].line, 7);
    assert!(games.iter().all(|g| !g.moves.is_empty()));
}

#[test]
fn results_come_from_the_header_or_the_move_text() {
    let text = r#"[Event "a"]
[Result "1-0"]

1. h2e2 h9g7 2. h0g2 1-0

[Event "b"]
1. h2e2 h7e7 0-1

[Event "c"]
[Result "*"]
1. c3c4 {a comment with [brackets]} g6g5 ; rest of line ignored
2. h2e2 (2. b2e2 b9c7) 1/2-1/2

[Event "d"]
1. h2e2
"#;
    let games: Vec<_> = read_pgn(text).into_iter().map(Result::unwrap).collect();
    assert_eq!(games.len(), 4);
    assert_eq!(games[0].result, Some(Outcome::RedWins));
    assert_eq!(games[1].result, Some(Outcome::BlackWins));
    assert_eq!(games[2].result, Some(Outcome::Draw));
    assert_eq!(games[2].moves.len(), 3);
    assert_eq!(games[3].result, None);
    assert_eq!(games[3].line, 14);
}

#[test]
fn fen_header_sets_the_start_position() {
    let fen = "3akab2/9/4b4/p1p1p1p1p/9/2P6/P3P1P1P/4B4/9/2BAKA3 b - - 0 20";
    let text = format!("[FEN \"{fen}\"]\n[Result \"0-1\"]\n20... e9e8 21. e0e1\n");
    let games = read_pgn(&text);
    let g = games[0].as_ref().unwrap();
    assert_eq!(g.start, Position::from_fen(fen).unwrap());
    assert_eq!(g.moves.len(), 2);
}

#[test]
fn errors_name_the_line_and_the_reader_goes_on_with_the_next_game() {
    let text = "[Event \"x\"]\n\n1. h2e2 h9g7\n2. h2h3 b9c7\n\n[Event \"y\"]\n1. h2e2 ?? \n\n[Event \"z\"\n1. h2e2\n\n[FEN \"bogus\"]\n1. a0a1\n\n[Event \"ok\"]\n1. b2e2\n";
    let out = read_pgn(text);
    assert_eq!(out.len(), 5);
    match &out[0] {
        Err(
            e @ PgnError::IllegalMove {
                line: 4, number: 2, ..
            },
        ) => {
            assert!(
                e.to_string()
                    .starts_with("line 4: move 2 (h2h3) is illegal"),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&out[1], Err(PgnError::BadToken { line: 7, token }) if token == "??"));
    assert!(matches!(&out[2], Err(PgnError::BadHeader { line: 9, .. })));
    assert!(matches!(&out[3], Err(PgnError::BadFen { line: 12, .. })));
    assert_eq!(out[4].as_ref().unwrap().moves.len(), 1);
    assert_eq!(out[4].as_ref().unwrap().line, 15);
}

#[test]
fn conflicting_results_and_unterminated_comments_are_errors() {
    let out = read_pgn("[Result \"1-0\"]\n1. h2e2 0-1\n");
    assert!(matches!(
        &out[0],
        Err(PgnError::ResultMismatch { line: 1, .. })
    ));
    let out = read_pgn("[Event \"e\"]\n1. h2e2 { never closed\n2. h0g2\n");
    assert!(matches!(
        &out[0],
        Err(PgnError::Unterminated { line: 2, .. })
    ));
    let out = read_pgn("1. h2e2 h9g7 1-0 h0g2\n");
    assert!(matches!(&out[0], Err(PgnError::BadToken { line: 1, .. })));
}

#[test]
fn supervised_records_are_one_hot_with_results_when_known_and_the_split_is_stable() {
    let games: Vec<_> = read_pgn(MASTER)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    let meta = common::meta(0);
    let split = SplitConfig::default();
    let data = games_to_chunks(&games, &meta, &split).unwrap();
    let total_plies: usize = games.iter().map(|g| g.moves.len()).sum();
    assert_eq!(
        data.train.records.len() + data.held_out.records.len(),
        total_plies
    );
    assert_eq!(data.train.games.len() + data.held_out.games.len(), 1391);
    let held = data.held_out.games.len();
    assert!((30..=110).contains(&held), "{held} of 1391 held out at 5%");
    // Same games in another order: the same games are held out.
    let mut reversed = games.clone();
    reversed.reverse();
    let again = games_to_chunks(&reversed, &meta, &split).unwrap();
    let mut a: Vec<_> = data
        .held_out
        .games
        .iter()
        .map(|g| g.moves.clone())
        .collect();
    let mut b: Vec<_> = again
        .held_out
        .games
        .iter()
        .map(|g| g.moves.clone())
        .collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // A different salt gives a different split.
    let other = games_to_chunks(&games, &meta, &SplitConfig { salt: 1, ..split }).unwrap();
    assert_ne!(other.held_out.games, data.held_out.games);
    // No results in this file: no value targets.
    assert!(data.train.records.iter().all(|r| r.result.is_none()));
    // Round trip through the chunk format.
    assert_eq!(
        decode_chunk(&encode_chunk(&data.held_out).unwrap()).unwrap(),
        data.held_out
    );
}

#[test]
fn supervised_batch_targets_the_played_move_and_the_result() {
    let text = "[Result \"0-1\"]\n1. h2e2 h9g7 2. h0g2 i9h9\n";
    let games: Vec<_> = read_pgn(text).into_iter().map(Result::unwrap).collect();
    let all = SplitConfig {
        held_out_permille: 0,
        salt: 0,
    };
    let data = games_to_chunks(&games, &common::meta(0), &all).unwrap();
    assert_eq!(data.train.records.len(), 4);
    let results: Vec<_> = data.train.records.iter().map(|r| r.result).collect();
    assert_eq!(
        results,
        [
            Some(Wdl::Loss),
            Some(Wdl::Win),
            Some(Wdl::Loss),
            Some(Wdl::Win)
        ]
    );
    let w = Window::from_chunk("sl", data.train);
    let enc = EncoderConfig::default();
    let samples: Vec<Sample> = (0..4)
        .map(|index| Sample {
            index,
            mirrored: false,
        })
        .collect();
    let mut batch = Batch::new(4, &enc);
    assemble_samples(&w, &enc, &samples, &mut batch).unwrap();
    let mut pos = Position::startpos();
    for (i, m) in games[0].moves.iter().enumerate() {
        let idx = policy_index(*m, pos.turn()).unwrap();
        assert_eq!(batch.policy[[i, idx]], 1.0);
        assert_eq!(batch.policy.row(i).sum(), 1.0);
        assert_eq!(batch.has_value[i], 1.0);
        assert_eq!(batch.plies_left[i], (4 - i) as f32);
        pos.play(*m).unwrap();
    }
    assert_eq!(batch.value.row(0).to_vec(), vec![0.0, 0.0, 1.0]);
}

#[test]
fn loading_pgn_files_skips_bad_games_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.pgn");
    let bad = dir.path().join("bad.pgn");
    std::fs::write(&good, "[Result \"1-0\"]\n1. h2e2 h9g7\n").unwrap();
    std::fs::write(
        &bad,
        "[Event \"ok\"]\n1. b2e2\n\n[Event \"broken\"]\n1. h2e2 h2e2\n",
    )
    .unwrap();
    let (data, skipped) = xq_data::load_pgn_files(
        &[good, bad.clone()],
        &common::meta(0),
        &SplitConfig {
            held_out_permille: 0,
            salt: 0,
        },
    )
    .unwrap();
    assert_eq!(data.train.games.len(), 2);
    assert_eq!(skipped.len(), 1);
    let msg = skipped[0].to_string();
    assert!(msg.contains("bad.pgn") && msg.contains("line 5"), "{msg}");
    let missing = dir.path().join("missing.pgn");
    let err =
        xq_data::load_pgn_files(&[missing], &common::meta(0), &SplitConfig::default()).unwrap_err();
    assert!(err.to_string().contains("missing.pgn"), "{err}");
}

/// Damaged PGN text gives errors or games, never a panic.
#[test]
fn mangled_pgn_text_never_panics() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let sample: Vec<char> = MASTER[..4000].chars().collect();
    let alphabet: Vec<char> = "[]{}()\";$.-/*10 \n\tabcdefghiHE2½象".chars().collect();
    for _ in 0..300 {
        let mut text = sample.clone();
        for _ in 0..rng.random_range(1..40) {
            let i = rng.random_range(0..text.len());
            match rng.random_range(0..3) {
                0 => text[i] = alphabet[rng.random_range(0..alphabet.len())],
                1 => {
                    text.remove(i);
                }
                _ => text.insert(i, alphabet[rng.random_range(0..alphabet.len())]),
            }
        }
        let text: String = text.into_iter().collect();
        for game in read_pgn(&text) {
            if let Err(e) = game {
                assert!(
                    e.line() >= 1 && e.line() <= text.lines().count().max(1),
                    "{e}"
                );
            }
        }
    }
}

fn play(start: &Position, iccs: &[&str]) -> Vec<xq_core::Move> {
    let mut pos = start.clone();
    iccs.iter()
        .map(|s| {
            let m = pos.parse_iccs(s).unwrap();
            pos.play(m).unwrap();
            m
        })
        .collect()
}

#[test]
fn records_are_written_in_export_format() {
    let start = Position::startpos();
    let moves = play(&start, &["h2e2", "h9g7", "h0g2"]);
    let text = PgnRecord::new(start, moves, Some(Outcome::Draw))
        .event("e")
        .round("1.2")
        .players("a", "b")
        .tag("Termination", "draw_agreement")
        .comment_moves(|_, m| m.to_string().to_uppercase())
        .closing_comment("draw by draw_agreement")
        .to_string();
    let expected = format!(
        "[Event \"e\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"1.2\"]\n[Red \"a\"]\n\
         [Black \"b\"]\n[Result \"1/2-1/2\"]\n[Variant \"xiangqi\"]\n[SetUp \"1\"]\n\
         [FEN \"{}\"]\n[PlyCount \"3\"]\n[Termination \"draw_agreement\"]\n\n\
         1. h2e2 {{H2E2}} h9g7 {{H9G7}} 2. h0g2 {{H0G2}} {{draw by draw_agreement}} 1/2-1/2\n\n",
        xq_core::START_FEN
    );
    assert_eq!(text, expected);
}

#[test]
fn written_records_read_back_with_their_headers_start_moves_and_result() {
    // Black to move first, at move 20, in a long game with awkward names and comments.
    let start = Position::from_fen("3k5/9/9/9/9/9/9/9/9/4K3R b - - 0 20").unwrap();
    let shuffle = ["d9d8", "i0i1", "d8d9", "i1i0"];
    let iccs: Vec<&str> = shuffle.iter().copied().cycle().take(60).collect();
    let moves = play(&start, &iccs);
    let awkward = "a \"quoted\" \\ name\nwith a break";
    let text = PgnRecord::new(start.clone(), moves.clone(), None)
        .players(awkward, "b")
        .date("2026.12.01")
        .tag("Worker", "w0")
        .comment_moves(|_, m| format!("{m} }} {{ ; [x]"))
        .closing_comment("unfinished\n[Event \"fake\"]")
        .to_string();
    assert!(text.contains("20... d9d8"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 79), "{text}");
    let games = read_pgn(&(text.clone() + &text));
    assert_eq!(games.len(), 2, "{text}");
    for g in games {
        let g = g.unwrap();
        assert_eq!(g.start, start);
        assert_eq!(g.moves, moves);
        assert_eq!(g.result, None);
        assert_eq!(g.header("Red"), Some("a \"quoted\" \\ name with a break"));
        assert_eq!(g.header("Date"), Some("2026.12.01"));
        assert_eq!(g.header("PlyCount"), Some("60"));
        assert_eq!(g.header("Worker"), Some("w0"));
    }
}

#[test]
#[should_panic(expected = "not a PGN tag name")]
fn tag_names_that_would_not_read_back_are_refused() {
    let _ = PgnRecord::new(Position::startpos(), Vec::new(), None).tag("Game Seed", "1");
}
