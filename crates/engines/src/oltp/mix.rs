//! sysbench's OLTP transaction (oltp_common.lua, 1.0.20 defaults): the statements of one
//! transaction, the id distribution (`uniform` or 1.0's `special`) and the random strings.
//!
//! One transaction: BEGIN; `point_selects` point selects; one each of the simple, SUM,
//! ORDER BY and DISTINCT ranges of `range_size` ids; then (read-write only) one index update,
//! one non-index update and one delete followed by an insert of the same id; COMMIT. Each
//! group of statements picks one table uniformly and every id is drawn independently.

pub use crate::support::oltp_options::{Dist, MixSpec};
use crate::support::rng::SplitMix64;

/// The kinds of statement, in transaction order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    PointSelect,
    SimpleRange,
    SumRange,
    OrderRange,
    DistinctRange,
    IndexUpdate,
    NonIndexUpdate,
    Delete,
    Insert,
}

impl Kind {
    pub const ALL: [Kind; 9] = [
        Kind::PointSelect,
        Kind::SimpleRange,
        Kind::SumRange,
        Kind::OrderRange,
        Kind::DistinctRange,
        Kind::IndexUpdate,
        Kind::NonIndexUpdate,
        Kind::Delete,
        Kind::Insert,
    ];

    /// True for the statements sysbench counts as reads.
    pub fn is_read(self) -> bool {
        self <= Kind::DistinctRange
    }

    /// The statement with `$1…` placeholders on table `sbtest<t>`.
    pub fn sql(self, t: u32) -> String {
        let range = "WHERE id BETWEEN $1 AND $2";
        match self {
            Kind::PointSelect => format!("SELECT c FROM sbtest{t} WHERE id=$1"),
            Kind::SimpleRange => format!("SELECT c FROM sbtest{t} {range}"),
            Kind::SumRange => format!("SELECT SUM(k) FROM sbtest{t} {range}"),
            Kind::OrderRange => format!("SELECT c FROM sbtest{t} {range} ORDER BY c"),
            Kind::DistinctRange => format!("SELECT DISTINCT c FROM sbtest{t} {range} ORDER BY c"),
            Kind::IndexUpdate => format!("UPDATE sbtest{t} SET k=k+1 WHERE id=$1"),
            Kind::NonIndexUpdate => format!("UPDATE sbtest{t} SET c=$2 WHERE id=$1"),
            Kind::Delete => format!("DELETE FROM sbtest{t} WHERE id=$1"),
            Kind::Insert => format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES ($1, $2, $3, $4)"),
        }
    }
}

/// One statement with its values. `a`/`b` are the id (or range ends) and `k`; `text` holds
/// `c` (and `pad` after it for inserts, split at [`C_LEN`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub kind: Kind,
    pub table: u32,
    pub a: i64,
    pub b: i64,
    pub text: String,
}

/// Length of a `c` value: 10 groups of 11 digits joined by '-'.
pub const C_LEN: usize = 119;
/// Length of a `pad` value: 5 groups (the tests check inserts against it).
#[cfg(test)]
pub const PAD_LEN: usize = 59;

/// A worker's random source for ids, tables and strings.
pub struct Draw {
    rng: SplitMix64,
    dist: Dist,
}

impl Draw {
    pub fn new(seed: u64, dist: Dist) -> Self {
        Draw { rng: SplitMix64::new(seed), dist }
    }

    fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi].
    pub fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.rng.below(hi - lo + 1)
    }

    /// An id in [1, n] from the configured distribution.
    pub fn id(&mut self, n: u64) -> u64 {
        match self.dist {
            Dist::Uniform => self.uniform(1, n),
            Dist::Special => {
                // sysbench 1.0's sb_rand_special with its defaults (12 iterations, 1% of the
                // values take 75% of the draws), t = n - 1: one uniform r decides; r·4t < t
                // (25%) gives the mean of 12 uniforms scaled to t, else r itself (so in
                // [0.25, 1)) is mapped onto the window of t/100 + 1 ids starting t/200 below the
                // middle: the hot ids are the upper three quarters of that window.
                let t = (n - 1) as f64;
                let r = self.unit();
                if r * t * 4.0 < t {
                    let sum: f64 = (0..12).map(|_| self.unit()).sum();
                    1 + (sum * t / 12.0) as u64
                } else {
                    let d = t * 0.01;
                    1 + (r * (d + 1.0) + t / 2.0 - t * 0.005) as u64
                }
            }
        }
    }

    /// `groups` groups of 11 random digits joined by '-', appended to `out`.
    pub fn digits(&mut self, groups: usize, out: &mut String) {
        for g in 0..groups {
            if g > 0 {
                out.push('-');
            }
            for _ in 0..11 {
                out.push((b'0' + self.rng.below(10) as u8) as char);
            }
        }
    }
}

/// Appends one transaction's statements (without BEGIN/COMMIT) to `out`.
pub fn transaction(spec: &MixSpec, d: &mut Draw, out: &mut Vec<Stmt>) {
    let n = spec.table_size;
    let table = |d: &mut Draw| d.uniform(1, u64::from(spec.tables)) as u32;
    let stmt =
        |kind, table, a: u64, b: u64| Stmt { kind, table, a: a as i64, b: b as i64, text: String::new() };
    let t = table(d);
    for _ in 0..spec.point_selects {
        out.push(stmt(Kind::PointSelect, t, d.id(n), 0));
    }
    for kind in [Kind::SimpleRange, Kind::SumRange, Kind::OrderRange, Kind::DistinctRange] {
        let t = table(d);
        let lo = d.id(n);
        out.push(stmt(kind, t, lo, lo + spec.range_size - 1));
    }
    if spec.read_only {
        return;
    }
    let t = table(d);
    out.push(stmt(Kind::IndexUpdate, t, d.id(n), 0));
    let t = table(d);
    let mut s = stmt(Kind::NonIndexUpdate, t, d.id(n), 0);
    d.digits(10, &mut s.text);
    out.push(s);
    let t = table(d);
    let id = d.id(n);
    out.push(stmt(Kind::Delete, t, id, 0));
    let mut ins = stmt(Kind::Insert, t, id, d.id(n));
    d.digits(10, &mut ins.text);
    d.digits(5, &mut ins.text);
    out.push(ins);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn spec(read_only: bool, dist: Dist) -> MixSpec {
        MixSpec { tables: 4, table_size: 10_000, read_only, point_selects: 10, range_size: 100, dist }
    }

    #[test]
    fn a_transaction_has_sysbench_default_counts() {
        let mut d = Draw::new(7, Dist::Uniform);
        for read_only in [true, false] {
            let s = spec(read_only, Dist::Special);
            let mut out = Vec::new();
            transaction(&s, &mut d, &mut out);
            let mut count: BTreeMap<Kind, usize> = BTreeMap::new();
            for st in &out {
                *count.entry(st.kind).or_default() += 1;
                assert!((1..=4).contains(&st.table));
                assert!((1..=10_000).contains(&st.a), "{st:?}");
            }
            assert_eq!(count[&Kind::PointSelect], 10);
            for k in [Kind::SimpleRange, Kind::SumRange, Kind::OrderRange, Kind::DistinctRange] {
                assert_eq!(count[&k], 1);
                let r = out.iter().find(|s| s.kind == k).unwrap();
                assert_eq!(r.b - r.a + 1, 100, "ranges of range_size ids");
            }
            let writes = [Kind::IndexUpdate, Kind::NonIndexUpdate, Kind::Delete, Kind::Insert];
            for k in writes {
                assert_eq!(count.get(&k).copied().unwrap_or(0), usize::from(!read_only), "{k:?}");
            }
            // +2: BEGIN and COMMIT.
            assert_eq!(out.len() as u64 + 2, s.queries_per_txn());
            assert_eq!(s.queries_per_txn(), if read_only { 16 } else { 20 });
            if !read_only {
                let del = out.iter().find(|s| s.kind == Kind::Delete).unwrap();
                let ins = out.iter().find(|s| s.kind == Kind::Insert).unwrap();
                assert_eq!((del.a, del.table), (ins.a, ins.table), "insert re-creates the deleted id");
                assert_eq!(ins.text.len(), C_LEN + PAD_LEN);
                assert_eq!(out.iter().find(|s| s.kind == Kind::NonIndexUpdate).unwrap().text.len(), C_LEN);
            }
        }
    }

    #[test]
    fn special_puts_three_quarters_in_the_middle_percent() {
        let mut d = Draw::new(1, Dist::Special);
        let n = 1_000_000u64;
        let draws = 200_000;
        // sysbench's window: t/100 + 1 ids from t/2 - t/200; the draws land in its upper 3/4.
        let t = (n - 1) as f64;
        let start = 1.0 + t / 2.0 - t * 0.005;
        let (hot_lo, hot_hi) = ((start + 0.25 * (t * 0.01 + 1.0)) as u64, (start + t * 0.01 + 1.0) as u64);
        let (mut hot, mut cold_quarter, mut in_middle_half) = (0u64, 0u64, 0u64);
        for _ in 0..draws {
            let id = d.id(n);
            assert!((1..=n).contains(&id));
            hot += u64::from((hot_lo..=hot_hi).contains(&id));
            cold_quarter += u64::from((start as u64..hot_lo).contains(&id));
            in_middle_half += u64::from((n / 4..3 * n / 4).contains(&id));
        }
        let frac = hot as f64 / draws as f64;
        // 75% special plus the bell's small share of the same ids.
        assert!((0.75..0.78).contains(&frac), "{frac}");
        assert!(
            (cold_quarter as f64 / draws as f64) < 0.005,
            "the window's first quarter only gets bell draws"
        );
        // The bell (sd of a 12-uniform mean is 1/12) keeps ~99.7% of its mass in the middle half.
        assert!(in_middle_half as f64 / draws as f64 > 0.98);
    }

    #[test]
    fn uniform_covers_the_range_evenly() {
        let mut d = Draw::new(3, Dist::Uniform);
        let mut buckets = [0u32; 10];
        for _ in 0..100_000 {
            buckets[((d.id(1000) - 1) / 100) as usize] += 1;
        }
        assert!(buckets.iter().all(|&b| (9_500..10_500).contains(&b)), "{buckets:?}");
    }

    #[test]
    fn strings_have_sysbench_shape() {
        let mut d = Draw::new(9, Dist::Uniform);
        let mut s = String::new();
        d.digits(10, &mut s);
        assert_eq!(s.len(), C_LEN);
        assert_eq!(s.split('-').count(), 10);
        assert!(s.split('-').all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())));
    }
}
