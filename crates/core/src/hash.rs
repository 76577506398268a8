//! Fixed, portable hash functions: SplitMix64 and FNV-1a (64-bit), and the seed
//! derivations built on them ([`seed_of`], [`linear_seed`]). Every fixed hash of the
//! workspace comes from here (`tests/it/architecture.rs` checks that no other source
//! spells their constants).
//!
//! The workspace keys caches, seeds games and fingerprints stored data with these, so
//! their values must be the same on every platform, build and run, forever; std's
//! `Hasher`s promise none of that and `rand`'s streams may change between versions.
//! **The values are part of the format contract**: the tests below pin them.
//!
//! Everything is `const fn`, so tables (the Zobrist keys) can be built at compile time.

/// SplitMix64's increment, the golden ratio in 64-bit fixed point.
pub const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's finaliser (Stafford's "Mix13"): a bijective mix with good avalanche,
/// which turns structured keys (a hash XOR a small number) into independent-looking
/// bits. `mix64(0) == 0`; use [`splitmix64`] where zero must not map to zero.
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One SplitMix64 step from state `x`: the first output of [`SplitMix64::new`]`(x)`.
/// The usual way to turn one `u64` into another well-mixed one.
#[inline]
pub const fn splitmix64(x: u64) -> u64 {
    mix64(x.wrapping_add(GOLDEN_GAMMA))
}

/// The seed of member `index` of a family seeded `seed` (game `index` of a match,
/// team `index` of a round's line-up lot): SplitMix64's finaliser of both, so
/// neighbouring indices and seeds give unrelated seeds.
#[inline]
pub const fn seed_of(seed: u64, index: u64) -> u64 {
    mix64(seed ^ index.wrapping_mul(GOLDEN_GAMMA))
}

/// Member `n` of a family of seeds numbered from `seed` without mixing:
/// `seed × 1,000,003 + n`, so consecutive members differ by one. Only for seeds that
/// are mixed again before use (a run's self-play generations, whose games take
/// their seeds through [`splitmix64`]); stored runs and a test pin its values.
#[inline]
pub const fn linear_seed(seed: u64, n: u64) -> u64 {
    seed.wrapping_mul(1_000_003).wrapping_add(n)
}

/// The SplitMix64 generator: a stream of well-mixed `u64`s from a seed, for
/// deterministic choices that must not depend on `rand`'s stream stability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A stream seeded with `seed`.
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next value of the stream.
    #[inline]
    pub const fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// The next value reduced to `0..n` by remainder (slightly biased for `n` that
    /// do not divide 2^64, which is fine for test data and seeded choices).
    ///
    /// # Panics
    /// If `n` is 0.
    #[inline]
    pub const fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// FNV-1a, 64-bit: a byte-stream hash for digests and fingerprints (of file contents,
/// of names).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fnv1a {
    state: u64,
}

impl Fnv1a {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// The hasher before any byte.
    pub const fn new() -> Fnv1a {
        Fnv1a {
            state: Fnv1a::OFFSET_BASIS,
        }
    }

    /// Feeds `bytes`; writing `a` then `b` equals writing their concatenation.
    pub const fn write(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            self.state = (self.state ^ bytes[i] as u64).wrapping_mul(Fnv1a::PRIME);
            i += 1;
        }
    }

    /// The hash of the bytes written so far.
    pub const fn finish(&self) -> u64 {
        self.state
    }
}

impl Default for Fnv1a {
    fn default() -> Fnv1a {
        Fnv1a::new()
    }
}

/// The FNV-1a hash of `bytes`.
pub const fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::new();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_stream_matches_the_reference_values() {
        // Vigna's splitmix64.c seeded with 1234567.
        let mut s = SplitMix64::new(1_234_567);
        let expected = [
            6_457_827_717_110_365_317,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423,
            4_593_380_528_125_082_431,
            16_408_922_859_458_223_821,
        ];
        for e in expected {
            assert_eq!(s.next_u64(), e);
        }
    }

    #[test]
    fn splitmix64_is_the_first_output_of_a_stream() {
        for x in [0, 1, 42, u64::MAX, 0x5851_5a45_524f_0001] {
            assert_eq!(splitmix64(x), SplitMix64::new(x).next_u64());
            assert_eq!(splitmix64(x), mix64(x.wrapping_add(GOLDEN_GAMMA)));
        }
    }

    #[test]
    fn mix64_values_are_pinned() {
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(1), 0x5692_161d_100b_05e5);
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn family_seeds_are_pinned() {
        assert_eq!(seed_of(0, 0), 0);
        assert_eq!(seed_of(1, 2), 0xbeeb_8da1_658e_ec67);
        assert_eq!(seed_of(42, 7), 0x53ad_348a_f3dd_af4b);
        assert_eq!(linear_seed(1, 0), 1_000_003);
        assert_eq!(linear_seed(1, 3), 1_000_006);
    }

    #[test]
    fn below_stays_in_range() {
        let mut s = SplitMix64::new(7);
        assert!((0..1000).all(|_| s.below(3) < 3));
    }

    #[test]
    fn fnv1a_matches_the_reference_values() {
        // From the FNV reference test suite (draft-eastlake-fnv).
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn fnv1a_writes_concatenate() {
        let mut h = Fnv1a::default();
        h.write(b"foo");
        h.write(b"");
        h.write(b"bar");
        assert_eq!(h.finish(), fnv1a(b"foobar"));
    }

    #[test]
    fn hashes_evaluate_at_compile_time() {
        const H: u64 = fnv1a(b"a");
        const S: u64 = splitmix64(0);
        assert_eq!(H, fnv1a(b"a"));
        assert_eq!(S, splitmix64(0));
    }
}
