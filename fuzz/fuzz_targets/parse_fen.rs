//! FEN parsing never panics, and an accepted FEN prints a FEN that parses back to the
//! same position (with a consistent hash). The same property runs in CI on seeded
//! inputs: `crates/core/tests/parse_props.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use xq_core::{Fen, Position};

fuzz_target!(|data: &[u8]| {
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
});
