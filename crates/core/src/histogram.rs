//! Latency histogram: log-linear buckets (16 per power of two, ≤ 6.25% relative error),
//! mergeable and serialisable, with exact count, sum, min and max.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;

/// Histogram of latencies in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyHistogram {
    /// Sparse bucket index → count.
    buckets: BTreeMap<u32, u64>,
    pub count: u64,
    pub sum_ns: u128,
    pub min_ns: u64,
    pub max_ns: u64,
}

fn bucket_of(v: u64) -> u32 {
    if v < SUB {
        return v as u32;
    }
    let e = 63 - v.leading_zeros();
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    (SUB as u32) + (e - SUB_BITS) * (SUB as u32) + sub as u32
}

/// Lowest and highest value that fall in bucket `i`.
fn bucket_bounds(i: u32) -> (u64, u64) {
    if u64::from(i) < SUB {
        return (u64::from(i), u64::from(i));
    }
    let j = i - SUB as u32;
    let e = j / SUB as u32 + SUB_BITS;
    let sub = u64::from(j % SUB as u32);
    let width = 1u64 << (e - SUB_BITS);
    let low = (1u64 << e) + sub * width;
    (low, low.saturating_add(width - 1))
}

impl LatencyHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn record(&mut self, ns: u64) {
        *self.buckets.entry(bucket_of(ns)).or_insert(0) += 1;
        if self.count == 0 || ns < self.min_ns {
            self.min_ns = ns;
        }
        self.max_ns = self.max_ns.max(ns);
        self.count += 1;
        self.sum_ns += u128::from(ns);
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count == 0 {
            return;
        }
        for (&b, &c) in &other.buckets {
            *self.buckets.entry(b).or_insert(0) += c;
        }
        if self.count == 0 || other.min_ns < self.min_ns {
            self.min_ns = other.min_ns;
        }
        self.max_ns = self.max_ns.max(other.max_ns);
        self.count += other.count;
        self.sum_ns += other.sum_ns;
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// Value at quantile `q` in [0, 1]: the midpoint of the bucket holding it, clamped to
    /// the exact min and max.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (&b, &c) in &self.buckets {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bucket_bounds(b);
                return (lo + (hi - lo) / 2).clamp(self.min_ns, self.max_ns);
            }
        }
        self.max_ns
    }
}

/// Buckets a histogram can have: every `u64` falls in one below this.
const DENSE_BUCKETS: usize = SUB as usize + (64 - SUB_BITS as usize) * SUB as usize;

/// The same buckets as [`LatencyHistogram`] in a flat array, for the hot path of an engine:
/// a record is one index computation and one add, no map lookup or allocation. Turned into a
/// [`LatencyHistogram`] once, when the window ends.
#[derive(Debug, Clone)]
pub struct DenseHistogram {
    buckets: Box<[u64; DENSE_BUCKETS]>,
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
}

impl Default for DenseHistogram {
    fn default() -> Self {
        DenseHistogram {
            buckets: Box::new([0; DENSE_BUCKETS]),
            count: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

impl DenseHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.buckets[bucket_of(ns) as usize] += 1;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
        self.count += 1;
        self.sum_ns += u128::from(ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The sparse histogram holding exactly these values' buckets, count, sum, min and max.
    pub fn to_histogram(&self) -> LatencyHistogram {
        let buckets: BTreeMap<u32, u64> =
            self.buckets.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (i as u32, c)).collect();
        let min_ns = if self.count == 0 { 0 } else { self.min_ns };
        LatencyHistogram { buckets, count: self.count, sum_ns: self.sum_ns, min_ns, max_ns: self.max_ns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_values_are_exact() {
        let mut h = LatencyHistogram::new();
        for v in 0..16 {
            h.record(v);
        }
        assert_eq!(h.quantile_ns(0.5), 7);
        assert_eq!(h.min_ns, 0);
        assert_eq!(h.max_ns, 15);
    }

    #[test]
    fn the_dense_form_gives_the_same_histogram() {
        let values = [0u64, 1, 15, 16, 17, 1_000, 65_535, 1 << 40, u64::MAX, 7, 7];
        let (mut sparse, mut dense) = (LatencyHistogram::new(), DenseHistogram::new());
        for v in values {
            sparse.record(v);
            dense.record(v);
        }
        assert_eq!(dense.to_histogram(), sparse);
        assert_eq!(dense.count(), values.len() as u64);
        assert_eq!(DenseHistogram::new().to_histogram(), LatencyHistogram::new());
        assert!((bucket_of(u64::MAX) as usize) < DENSE_BUCKETS);
    }

    #[test]
    fn empty_histogram_reports_zero() {
        let h = LatencyHistogram::new();
        assert_eq!(h.quantile_ns(0.99), 0);
        assert_eq!(h.mean_ns(), 0.0);
    }

    proptest! {
        #[test]
        fn dense_equals_sparse(vals in proptest::collection::vec(any::<u64>(), 0..100)) {
            let (mut sparse, mut dense) = (LatencyHistogram::new(), DenseHistogram::new());
            for &v in &vals { sparse.record(v); dense.record(v); }
            prop_assert_eq!(dense.to_histogram(), sparse);
        }

        #[test]
        fn bucket_contains_value(v in any::<u64>()) {
            let (lo, hi) = bucket_bounds(bucket_of(v));
            prop_assert!(lo <= v && v <= hi, "{v} not in [{lo}, {hi}]");
        }

        #[test]
        fn quantile_within_relative_error(vals in proptest::collection::vec(1u64..10_000_000_000, 1..200), q in 0.0f64..1.0) {
            let mut h = LatencyHistogram::new();
            for &v in &vals { h.record(v); }
            let mut sorted = vals.clone();
            sorted.sort_unstable();
            let rank = ((q * sorted.len() as f64).ceil() as usize).max(1);
            let exact = sorted[rank - 1] as f64;
            let got = h.quantile_ns(q) as f64;
            prop_assert!((got - exact).abs() <= exact * 0.0625 + 1.0, "q={q} exact={exact} got={got}");
        }

        #[test]
        fn merge_equals_recording_all(a in proptest::collection::vec(any::<u32>(), 0..50), b in proptest::collection::vec(any::<u32>(), 0..50)) {
            let mut ha = LatencyHistogram::new();
            let mut hb = LatencyHistogram::new();
            let mut all = LatencyHistogram::new();
            for &v in &a { ha.record(u64::from(v)); all.record(u64::from(v)); }
            for &v in &b { hb.record(u64::from(v)); all.record(u64::from(v)); }
            ha.merge(&hb);
            prop_assert_eq!(ha, all);
        }
    }
}
