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
    fn empty_histogram_reports_zero() {
        let h = LatencyHistogram::new();
        assert_eq!(h.quantile_ns(0.99), 0);
        assert_eq!(h.mean_ns(), 0.0);
    }

    proptest! {
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
