//! `xqz status` end to end: the JSON fields, the first ending of a game played on past
//! it, and one-line errors for bad input.

use std::process::{Command, Output};

use serde_json::Value;

use crate::common::assert_ok;

fn xqz(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xqz"))
        .arg("status")
        .args(args)
        .output()
        .expect("running xqz")
}

/// Runs `xqz status` and parses its single line of JSON.
fn status(args: &[&str]) -> Value {
    let out = xqz(args);
    assert_ok(&out, &format!("xqz status {args:?}"));
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert_eq!(text.lines().count(), 1, "one line of JSON: {text:?}");
    serde_json::from_str(&text).expect("valid JSON")
}

/// Runs `xqz status` expecting failure; returns stderr.
fn failure(args: &[&str]) -> String {
    let out = xqz(args);
    assert!(!out.status.success(), "xqz status {args:?} should fail");
    assert!(out.stdout.is_empty(), "no output on stdout when failing");
    let err = String::from_utf8(out.stderr).expect("UTF-8 errors");
    assert_eq!(err.lines().count(), 1, "one-line error: {err:?}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn start_position_is_ongoing_with_44_moves() {
    let v = status(&[]);
    assert_eq!(v["fen"], xq_core::START_FEN);
    assert_eq!(v["side_to_move"], "red");
    assert_eq!(v["in_check"], false);
    assert_eq!(v["legal_moves"].as_array().unwrap().len(), 44);
    assert!(
        v["legal_moves"]
            .as_array()
            .unwrap()
            .contains(&Value::from("h2e2"))
    );
    assert_eq!(v["result"], "ongoing");
    assert_eq!(v["reason"], Value::Null);
    assert_eq!(v["ended_at_ply"], Value::Null);
    assert_eq!(v["plies"], 0);
}

#[test]
fn reports_the_position_after_the_moves() {
    let v = status(&["--moves", "h2e2", "h9g7"]);
    assert_eq!(
        v["fen"],
        "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR w - - 2 2"
    );
    assert_eq!(v["side_to_move"], "red");
    assert_eq!(v["plies"], 2);
}

#[test]
fn checkmate() {
    let v = status(&[
        "--fen",
        "4k4/R8/9/9/9/9/9/1R7/9/3K5 w - - 0 1",
        "--moves",
        "b2b9",
    ]);
    assert_eq!(v["side_to_move"], "black");
    assert_eq!(v["in_check"], true);
    assert_eq!(v["legal_moves"], Value::Array(vec![]));
    assert_eq!(v["result"], "red_wins");
    assert_eq!(v["reason"], "checkmate");
    assert_eq!(v["winner"], "red");
    assert_eq!(v["ended_at_ply"], 1);
}

#[test]
fn stalemate_loses() {
    let v = status(&["--fen", "4k4/9/4P1N2/9/9/9/9/9/9/3RK4 b - - 0 1"]);
    assert_eq!(v["in_check"], false);
    assert_eq!(v["result"], "red_wins");
    assert_eq!(v["reason"], "stalemate");
    assert_eq!(v["ended_at_ply"], 0);
}

#[test]
fn perpetual_check_loses() {
    let mut args = vec!["--fen", "4k4/R8/9/9/9/9/9/9/9/3K5 w - - 0 1", "--moves"];
    for _ in 0..2 {
        args.extend(["a8a9", "e9e8", "a9a8", "e8e9"]);
    }
    let v = status(&args);
    assert_eq!(v["result"], "black_wins");
    assert_eq!(v["reason"], "perpetual_check");
    assert_eq!(v["ended_at_ply"], 8);
}

#[test]
fn moves_after_the_end_are_accepted_and_the_first_ending_is_named() {
    // An idle repetition draws at ply 8; the game goes on with 炮二平五 and 马8进7.
    let mut args = vec!["--moves"];
    for _ in 0..2 {
        args.extend(["h0g2", "h9g7", "g2h0", "g7h9"]);
    }
    args.extend(["h2e2", "h9g7"]);
    let v = status(&args);
    assert_eq!(v["result"], "draw");
    assert_eq!(v["reason"], "repetition_draw");
    assert_eq!(v["ended_at_ply"], 8);
    assert_eq!(v["plies"], 10);
    assert_eq!(v["side_to_move"], "red");
}

#[test]
fn move_limit_is_configurable() {
    let v = status(&["--move-limit", "2", "--moves", "h2e2", "h9g7"]);
    assert_eq!(v["result"], "draw");
    assert_eq!(v["reason"], "move_limit");
    assert_eq!(v["ended_at_ply"], 2);
}

#[test]
fn insufficient_material_draws() {
    let v = status(&["--fen", "3k5/4a4/9/9/9/9/9/4B4/9/4K4 w - - 0 1"]);
    assert_eq!(v["result"], "draw");
    assert_eq!(v["reason"], "insufficient_material");
}

#[test]
fn bad_input_is_a_one_line_error() {
    let err = failure(&["--fen", "rnbakabnr/9/1c5c1 w"]);
    assert!(err.contains("--fen") && err.contains("ranks"), "{err}");
    let err = failure(&["--moves", "h2e2", "h9g7", "h0h9"]);
    assert!(
        err.contains("move 3") && err.contains("h0h9") && err.contains("illegal"),
        "{err}"
    );
    let err = failure(&["--moves", "h2e2", "xx"]);
    assert!(err.contains("move 2") && err.contains("xx"), "{err}");
}

#[test]
fn a_bad_option_value_is_refused() {
    // Usage errors come from clap, whose message also suggests `--help`.
    let out = xqz(&["--move-limit", "many"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).expect("UTF-8 errors");
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.contains("--move-limit") && first.contains("many"),
        "{err}"
    );
}
