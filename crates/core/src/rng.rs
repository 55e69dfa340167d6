//! The one deterministic generator of racehorse: SplitMix64 (Steele, Lea & Flood, "Fast
//! splittable pseudorandom number generators", OOPSLA 2014, with the output mix of Vigna's
//! public-domain `splitmix64.c`). The engines' data and access patterns, the runner's
//! shuffles, the bootstrap of `stats` and the synthetic runs of `report` all draw from it, and
//! the compute engine's C kernels (`compute/c_kernels/common.h`) implement the same steps, so
//! a seed yields the same sequence everywhere. One word of state; passes BigCrush; not for
//! cryptography.

/// The golden-ratio increment of the state (2⁶⁴/φ, odd).
pub const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64: small, fast, seeded.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

/// The SplitMix64 finaliser (a variant of MurmurHash3's fmix64): a bijective 64-bit mix.
pub fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix64(self.state)
    }

    /// Uniform in `[0, n)` by Lemire's multiply-high reduction (the bias is below n/2⁶⁴).
    /// Returns 0 when `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A uniform index in `0..n` (see [`below`](Self::below)).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// In `[0, n)` by the remainder of the next output (the modulo bias is irrelevant for
    /// workloads; the C kernels draw the same way). Returns 0 when `n == 0`.
    pub fn below_mod(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// A uniform value in [0, 1) with 53 random bits.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal deviate by the Box–Muller transform (Box & Muller 1958); the second
    /// of the pair is discarded.
    pub fn normal(&mut self) -> f64 {
        // 1 − U lies in (0, 1], so the logarithm is finite.
        let u1 = 1.0 - self.unit_f64();
        let u2 = self.unit_f64();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_sequences() {
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        // Vigna's splitmix64.c seeded with 1234567.
        let mut r = SplitMix64::new(1_234_567);
        for w in [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423] {
            assert_eq!(r.next_u64(), w);
        }
    }

    #[test]
    fn below_stays_in_range_and_below_mod_is_the_remainder() {
        let mut r = SplitMix64::new(0);
        assert_eq!(r.below(0), 0);
        assert!((0..10_000).all(|_| r.below(3) < 3 && r.index(7) < 7));
        let (mut a, mut b) = (SplitMix64::new(11), SplitMix64::new(11));
        for n in [1u64, 2, 7, 1000, u64::MAX] {
            assert_eq!(a.below_mod(n), b.next_u64() % n);
        }
        assert_eq!(a.below_mod(0), 0, "n = 0 draws 0 (and still advances)");
    }

    #[test]
    fn uniform_and_normal_moments() {
        let (mut a, mut b) = (SplitMix64::new(3), SplitMix64::new(3));
        for _ in 0..100 {
            assert_eq!(a.unit_f64(), (b.next_u64() >> 11) as f64 / (1u64 << 53) as f64);
        }
        let mut r = SplitMix64::new(42);
        let n = 20_000;
        let mut counts = [0usize; 5];
        let (mut s1, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            counts[r.index(5)] += 1;
            let z = r.normal();
            s1 += z;
            s2 += z * z;
        }
        assert!(counts.iter().all(|c| (3_700..4_300).contains(c)), "{counts:?}");
        let mean = s1 / n as f64;
        let var = s2 / n as f64 - mean * mean;
        assert!(mean.abs() < 0.05 && (var - 1.0).abs() < 0.05, "{mean} {var}");
    }
}
