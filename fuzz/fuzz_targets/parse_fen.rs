//! The `parse_fen` target: FEN parsing never panics, and an accepted FEN prints a FEN
//! that parses back to the same position ([`xq_core_fuzz::parse_fen`]).
//!
//! Built by cargo-fuzz (`--cfg fuzzing`) this is a libFuzzer target; built by the
//! stable toolchain it is a program that runs the same body over the seeds and
//! pseudo-random mutations for a few seconds (see the crate documentation).

#![cfg_attr(fuzzing, no_main)]

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| xq_core_fuzz::parse_fen(data));

#[cfg(not(fuzzing))]
fn main() {
    let n = xq_core_fuzz::run_for(
        xq_core_fuzz::Target::ParseFen,
        0x5eed,
        u64::MAX,
        std::time::Duration::from_secs(5),
    );
    println!("parse_fen: {n} inputs, no property failed");
}
