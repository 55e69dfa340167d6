//! A small deterministic PRNG (SplitMix64) for reproducible bootstrap resampling and simulations.
//!
//! SplitMix64 is the generator of Steele, Lea & Flood, "Fast splittable pseudorandom number
//! generators" (OOPSLA 2014), with the output mix constants of Vigna's public-domain
//! `splitmix64.c`. It passes BigCrush, needs one word of state and is fully reproducible from its
//! seed, which is all the bootstrap needs; it is not cryptographic.

/// Golden-ratio increment of the SplitMix64 state (2⁶⁴/φ, odd).
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64 pseudo-random generator.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// Next 64 uniformly distributed bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// Uniform index in `0..n` (n > 0) by Lemire's multiply-shift; the bias is below n/2⁶⁴.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform f64 in [0, 1) with 53 random bits.
    #[cfg(test)]
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal deviate by the Box–Muller transform (Box & Muller 1958); one of the pair is
    /// discarded, which is simpler and fast enough for tests.
    #[cfg(test)]
    pub(crate) fn normal(&mut self) -> f64 {
        // 1 − U lies in (0, 1], so the logarithm is finite.
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// The SplitMix64 finaliser (a variant of MurmurHash3's fmix64): a bijective 64-bit mix.
pub(crate) fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_sequence() {
        // First outputs of Vigna's splitmix64.c seeded with 1234567.
        let mut r = SplitMix64::new(1_234_567);
        let want: [u64; 3] =
            [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
    }

    #[test]
    fn uniform_and_normal_moments() {
        let mut r = SplitMix64::new(42);
        let n = 20_000;
        let mut counts = [0usize; 5];
        let (mut s1, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            counts[r.below(5)] += 1;
            let z = r.normal();
            s1 += z;
            s2 += z * z;
        }
        for c in counts {
            assert!((3_700..4_300).contains(&c), "{counts:?}");
        }
        let mean = s1 / n as f64;
        let var = s2 / n as f64 - mean * mean;
        assert!(mean.abs() < 0.05 && (var - 1.0).abs() < 0.05, "{mean} {var}");
        let u = r.next_f64();
        assert!((0.0..1.0).contains(&u));
    }
}
