//! The `parse_notation` target: move parsing in every notation never panics, and an
//! accepted text names a legal move that prints and parses back to itself
//! ([`xq_core_fuzz::parse_notation`]).
//!
//! Built by cargo-fuzz (`--cfg fuzzing`) this is a libFuzzer target; built by the
//! stable toolchain it is a program that runs the same body over the seeds and
//! pseudo-random mutations for a few seconds (see the crate documentation).

#![cfg_attr(fuzzing, no_main)]

#[cfg(fuzzing)]
libfuzzer_sys::fuzz_target!(|data: &[u8]| xq_core_fuzz::parse_notation(data));

#[cfg(not(fuzzing))]
fn main() {
    let n = xq_core_fuzz::run_for(
        xq_core_fuzz::Target::ParseNotation,
        0x5eed,
        u64::MAX,
        std::time::Duration::from_secs(5),
    );
    println!("parse_notation: {n} inputs, no property failed");
}
