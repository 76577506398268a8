//! Every fuzz target on the stable toolchain: its seeds and a few thousand
//! deterministic mutations, capped at a few seconds (see the crate documentation for
//! why libFuzzer itself does not run here).

use std::time::Duration;

use xq_core_fuzz::{Target, run_for};

#[test]
fn every_target_holds_its_properties_on_seeds_and_mutations() {
    for target in Target::ALL {
        let n = run_for(target, 0x5eed, 20_000, Duration::from_secs(3));
        assert!(n >= 100, "{target:?} ran only {n} inputs");
    }
}
