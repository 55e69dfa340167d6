//! What the JVM program says (`jsrc/RhJava.java` documents the protocol): its snapshots of
//! the counters taken at the window's edges, parsed, and the window as their difference —
//! transactions and latency histograms per type, collections and collection time per
//! collector bean, JIT compilation time.

use racehorse_core::LatencyHistogram;
use std::collections::BTreeMap;

/// One transaction type's counters: count, summed latency and histogram buckets (the
/// log-linear buckets of [`LatencyHistogram`]: 16 per power of two).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TxCounts {
    pub count: u64,
    pub sum_ns: u64,
    pub buckets: BTreeMap<u32, u64>,
}

/// One snapshot (`RH SNAP` … `RH END`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// The JVM's uptime (RuntimeMXBean), the clock of its GC log.
    pub uptime_ms: u64,
    /// Total JIT compilation time (CompilationMXBean); None when the JVM has no JIT.
    pub jit_ms: Option<u64>,
    pub heap_used_bytes: u64,
    /// Collector bean name → (collections, collection time in ms).
    pub gc: BTreeMap<String, (u64, u64)>,
    pub tx: BTreeMap<String, TxCounts>,
}

fn num<T: std::str::FromStr>(w: Option<&str>, what: &str, line: &str) -> Result<T, String> {
    w.and_then(|v| v.parse().ok()).ok_or_else(|| format!("bad {what} in '{}'", crate::bounded_output(line)))
}

impl Snapshot {
    /// Parses the lines of one snapshot (with or without the closing `RH END`).
    pub fn parse(lines: &[String]) -> Result<Snapshot, String> {
        let mut s = Snapshot::default();
        let mut head = false;
        for line in lines {
            let mut w = line.split_whitespace();
            if w.next() != Some("RH") {
                continue;
            }
            match w.next() {
                Some("SNAP") => {
                    s.uptime_ms = num(w.next(), "uptime", line)?;
                    let jit: i64 = num(w.next(), "JIT time", line)?;
                    s.jit_ms = u64::try_from(jit).ok();
                    s.heap_used_bytes = num(w.next(), "heap", line)?;
                    head = true;
                }
                Some("GC") => {
                    let count = num(w.next(), "GC count", line)?;
                    let ms = num(w.next(), "GC time", line)?;
                    let name: Vec<&str> = w.collect();
                    s.gc.insert(name.join(" "), (count, ms));
                }
                Some("TX") => {
                    let name: String = num(w.next(), "transaction", line)?;
                    let count = num(w.next(), "count", line)?;
                    let sum_ns = num(w.next(), "latency sum", line)?;
                    let buckets = parse_buckets(w.next().unwrap_or("-"), line)?;
                    s.tx.insert(name, TxCounts { count, sum_ns, buckets });
                }
                _ => {}
            }
        }
        if !head {
            return Err("the JVM's snapshot has no 'RH SNAP' line".into());
        }
        Ok(s)
    }

    /// The counters of the window from `earlier` to this snapshot.
    pub fn since(&self, earlier: &Snapshot) -> Window {
        let tx = self
            .tx
            .iter()
            .map(|(name, now)| {
                let before = earlier.tx.get(name).cloned().unwrap_or_default();
                let buckets = now
                    .buckets
                    .iter()
                    .map(|(b, n)| (*b, n.saturating_sub(before.buckets.get(b).copied().unwrap_or(0))))
                    .filter(|(_, n)| *n > 0)
                    .collect();
                let counts = TxCounts {
                    count: now.count.saturating_sub(before.count),
                    sum_ns: now.sum_ns.saturating_sub(before.sum_ns),
                    buckets,
                };
                (name.clone(), counts)
            })
            .collect();
        let (mut gc_count, mut gc_ms) = (0, 0);
        for (name, (n, ms)) in &self.gc {
            let (n0, ms0) = earlier.gc.get(name).copied().unwrap_or((0, 0));
            gc_count += n.saturating_sub(n0);
            gc_ms += ms.saturating_sub(ms0);
        }
        Window {
            tx,
            gc_count,
            gc_ms,
            jit_ms: self.jit_ms.zip(earlier.jit_ms).map(|(a, b)| a.saturating_sub(b)),
            uptime_ms: (earlier.uptime_ms, self.uptime_ms),
        }
    }
}

fn parse_buckets(text: &str, line: &str) -> Result<BTreeMap<u32, u64>, String> {
    if text == "-" {
        return Ok(BTreeMap::new());
    }
    text.split(',')
        .map(|pair| {
            let (b, n) = pair.split_once(':').ok_or_else(|| format!("bad bucket '{pair}'"))?;
            Ok((num(Some(b), "bucket", line)?, num(Some(n), "bucket count", line)?))
        })
        .collect()
}

/// The counters of the measured window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    pub tx: BTreeMap<String, TxCounts>,
    /// Collections and their time over every collector bean.
    pub gc_count: u64,
    pub gc_ms: u64,
    pub jit_ms: Option<u64>,
    /// The JVM's uptime at the window's edges.
    pub uptime_ms: (u64, u64),
}

impl Window {
    /// Transactions of every type.
    pub fn transactions(&self) -> u64 {
        self.tx.values().map(|t| t.count).sum()
    }
}

/// The lowest and highest value of bucket `i` (the buckets of [`LatencyHistogram`]).
fn bucket_bounds(i: u32) -> (u64, u64) {
    if i < 16 {
        return (u64::from(i), u64::from(i));
    }
    let j = i - 16;
    let e = j / 16 + 4;
    let width = 1u64 << (e - 4);
    let low = (1u64 << e) + u64::from(j % 16) * width;
    (low, low.saturating_add(width - 1))
}

/// A histogram of the window's latencies: each transaction at the middle of its bucket (the
/// buckets are the same, so quantiles are as exact as racehorse's own histograms).
pub fn histogram(t: &TxCounts) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for (&b, &n) in &t.buckets {
        let (lo, hi) = bucket_bounds(b.min(16 + 59 * 16 + 15));
        let mid = lo + (hi - lo) / 2;
        for _ in 0..n {
            h.record(mid);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    const T0: &str =
        "RH SNAP 1500 230 1048576\nRH GC 2 11 G1 Young Generation\nRH GC 0 0 G1 Old Generation\n\
        RH TX new_order 100 500000 40:60,41:40\nRH TX payment 90 90000 30:90\nRH TX delivery 0 0 -\nRH END";
    const T1: &str = "RH SNAP 6500 410 2097152\nRH GC 7 41 G1 Young Generation\nRH GC 1 30 G1 Old Generation\n\
        RH TX new_order 1100 5500000 40:560,41:540\nRH TX payment 990 990000 30:990\nRH TX delivery 5 900 20:5\nRH END";

    #[test]
    fn a_window_is_the_difference_of_two_snapshots() {
        let (a, b) = (Snapshot::parse(&lines(T0)).unwrap(), Snapshot::parse(&lines(T1)).unwrap());
        assert_eq!(a.gc["G1 Young Generation"], (2, 11));
        assert_eq!(b.jit_ms, Some(410));
        let w = b.since(&a);
        assert_eq!((w.gc_count, w.gc_ms, w.jit_ms, w.uptime_ms), (6, 60, Some(180), (1500, 6500)));
        assert_eq!(w.transactions(), 1000 + 900 + 5);
        let no = &w.tx["new_order"];
        assert_eq!((no.count, no.sum_ns), (1000, 5_000_000));
        assert_eq!(no.buckets, BTreeMap::from([(40, 500), (41, 500)]));
        assert_eq!(w.tx["delivery"].buckets, BTreeMap::from([(20, 5)]));
    }

    #[test]
    fn histograms_keep_the_buckets() {
        // A bucket's middle lands in the same bucket of racehorse's own histogram.
        for b in [0u32, 7, 15, 16, 17, 31, 32, 100, 500, 959] {
            let t = TxCounts { count: 1, sum_ns: 0, buckets: BTreeMap::from([(b, 1)]) };
            let json = serde_json::to_value(histogram(&t)).unwrap();
            assert_eq!(json["buckets"], serde_json::json!({ b.to_string(): 1 }), "bucket {b}");
        }
        let t = TxCounts { count: 3, sum_ns: 0, buckets: BTreeMap::from([(40, 2), (41, 1)]) };
        let h = histogram(&t);
        assert_eq!(h.count, 3);
        assert_eq!(bucket_bounds(40), (48, 49));
        assert_eq!(h.quantile_ns(0.5), 48, "the middle of 48..=49");
    }

    #[test]
    fn bad_snapshots_are_errors() {
        assert!(Snapshot::parse(&lines("RH GC 1 2 x")).unwrap_err().contains("no 'RH SNAP'"));
        assert!(Snapshot::parse(&lines("RH SNAP x 1 2")).unwrap_err().contains("bad uptime"));
        let e = Snapshot::parse(&lines("RH SNAP 1 -1 2\nRH TX a 1 2 3")).unwrap_err();
        assert!(e.contains("bad bucket '3'"), "{e}");
        let s = Snapshot::parse(&lines("OpenJDK warning\nRH SNAP 1 -1 2\nRH END")).unwrap();
        assert_eq!(s.jit_ms, None, "no JIT");
    }
}
