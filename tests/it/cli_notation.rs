//! `xqz notation` end to end: output formats, and one-line errors for bad input.

use std::process::{Command, Output};

use crate::common::assert_ok;

fn xqz(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xqz"))
        .arg("notation")
        .args(args)
        .output()
        .expect("running xqz")
}

fn stdout_of(args: &[&str]) -> String {
    let out = xqz(args);
    assert_ok(&out, &format!("xqz notation {args:?}"));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

const OPENING: &[&str] = &["--moves", "h2e2", "h9g7", "h0g2"];

#[test]
fn writes_a_numbered_chinese_score_by_default() {
    assert_eq!(stdout_of(OPENING), "1. 炮二平五 马8进7\n2. 马二进三\n");
}

#[test]
fn writes_each_style() {
    let with = |style: &str| {
        let mut args = OPENING.to_vec();
        args.extend(["--style", style]);
        stdout_of(&args)
    };
    assert_eq!(with("chinese"), "1. 炮二平五 马8进7\n2. 马二进三\n");
    assert_eq!(with("wxf"), "1. C2.5 H8+7\n2. H2+3\n");
    assert_eq!(with("iccs"), "1. h2e2 h9g7\n2. h0g2\n");
}

#[test]
fn lines_mode_prints_one_move_per_line() {
    let mut args = OPENING.to_vec();
    args.extend(["--lines", "--style", "wxf"]);
    assert_eq!(stdout_of(&args), "C2.5\nH8+7\nH2+3\n");
}

#[test]
fn black_to_move_starts_with_an_ellipsis_and_the_fen_move_number() {
    let fen = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR b - - 0 12";
    assert_eq!(
        stdout_of(&["--fen", fen, "--moves", "h9g7", "h2e2"]),
        "12. ... 马8进7\n13. 炮二平五\n"
    );
}

#[test]
fn reads_moves_in_other_notations() {
    assert_eq!(
        stdout_of(&[
            "--input-style",
            "chinese",
            "--style",
            "iccs",
            "--moves",
            "炮二平五",
            "马8进7"
        ]),
        "1. h2e2 h9g7\n"
    );
    assert_eq!(
        stdout_of(&["--input-style", "wxf", "--moves", "C2.5", "H8+7"]),
        "1. 炮二平五 马8进7\n"
    );
}

#[test]
fn no_moves_prints_nothing() {
    assert_eq!(stdout_of(&[]), "");
}

#[test]
fn bad_input_fails_with_one_line_naming_the_problem() {
    let cases: &[(&[&str], &str)] = &[
        (&["--fen", "not a fen", "--moves", "h2e2"], "--fen"),
        (&["--fen", "4k4/9/9/9/9/9/9/9/9/4K4 w - - 0 1"], "--fen"),
        (&["--moves", "h2e2", "h2e2"], "move 2"),
        (&["--moves", "h2e2", "zz"], "move 2"),
        (&["--style", "pgn", "--moves", "h2e2"], "--style"),
        (&["--input-style", "x", "--moves", "h2e2"], "--input-style"),
        (
            &["--input-style", "chinese", "--moves", "王二平五"],
            "unknown piece",
        ),
        (
            &["--input-style", "wxf", "--moves", "C4.5"],
            "no red cannon",
        ),
    ];
    for (args, needle) in cases {
        let out = xqz(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
