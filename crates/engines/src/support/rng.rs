//! The one deterministic generator of the engines (and the runner's shuffles): SplitMix64
//! (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", 2014), the same in
//! the compute engine's C kernels (`compute/c_kernels/common.h`), so a seed always yields the
//! same sequence everywhere.

/// The golden-ratio increment of the state (2⁶⁴/φ, odd).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64: small, fast, seeded; not for cryptography.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)` (multiply-high reduction; the bias is below 2^-64·n). Returns 0 when
    /// `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_matches_the_published_sequence() {
        // First outputs for seed 0 (the reference implementation's).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let u = SplitMix64::new(7).unit_f64();
        assert!((0.0..1.0).contains(&u));
    }

    #[test]
    fn splitmix_below_stays_in_range() {
        let mut r = SplitMix64::new(0);
        assert_eq!(r.below(0), 0);
        assert!((0..10_000).all(|_| r.below(3) < 3));
        assert_eq!(r.below(1), 0);
    }

    #[test]
    fn below_mod_is_the_remainder_of_the_next_output() {
        let (mut a, mut b) = (SplitMix64::new(11), SplitMix64::new(11));
        for n in [1u64, 2, 7, 1000, u64::MAX] {
            assert_eq!(a.below_mod(n), b.next_u64() % n);
        }
        assert_eq!(a.below_mod(0), 0, "n = 0 draws 0 (and still advances)");
        assert!((0..10_000).all(|_| a.below_mod(5) < 5));
    }

    #[test]
    fn unit_f64_is_the_top_53_bits_scaled() {
        let (mut a, mut b) = (SplitMix64::new(3), SplitMix64::new(3));
        for _ in 0..100 {
            let u = a.unit_f64();
            assert!((0.0..1.0).contains(&u));
            assert_eq!(u, (b.next_u64() >> 11) as f64 / (1u64 << 53) as f64);
        }
    }
}
