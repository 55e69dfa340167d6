//! Latency percentiles for `racehorse show`: per point and operation, the histograms of the
//! ok repetitions merged (so p99 is over every operation of the point, not a median of
//! per-repetition p99s), kept in the run's model, as a compact table under each workload's
//! table (`show --latency`) and in `show --json`.

use crate::render::doc::{Cell, Grid};
use racehorse_core::{CellResult, CellStatus, LatencyHistogram};
use serde::Serialize;

/// One operation's latencies at one point, over its ok repetitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpLatency {
    pub op: String,
    /// Operations timed.
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// The latencies of one point from its cells (the ok ones), by operation name; empty when
/// its engine times no operations.
pub fn latencies(cells: &[&CellResult]) -> Vec<OpLatency> {
    let mut merged: Vec<(String, LatencyHistogram)> = Vec::new();
    let ok = cells.iter().filter(|c| c.status == CellStatus::Ok);
    for op in ok.flat_map(|c| &c.latencies) {
        match merged.iter_mut().find(|(name, _)| *name == op.op) {
            Some((_, h)) => h.merge(&op.latency),
            None => merged.push((op.op.clone(), op.latency.clone())),
        }
    }
    merged
        .into_iter()
        .filter(|(_, h)| h.count > 0)
        .map(|(op, h)| OpLatency {
            op,
            count: h.count,
            mean_ns: h.mean_ns(),
            p50_ns: h.quantile_ns(0.50),
            p90_ns: h.quantile_ns(0.90),
            p99_ns: h.quantile_ns(0.99),
            max_ns: h.max_ns,
        })
        .collect()
}

/// A duration for a table: `850ns`, `12.5µs`, `3.20ms`, `1.25s` (three significant digits).
pub fn duration(ns: u64) -> String {
    let v = ns as f64;
    let (x, unit) = match ns {
        0..=999 => return format!("{ns}ns"),
        1_000..=999_999 => (v / 1e3, "µs"),
        1_000_000..=999_999_999 => (v / 1e6, "ms"),
        _ => (v / 1e9, "s"),
    };
    let digits = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.digits$}{unit}")
}

/// The latency table of a section: `#` (the point's row above), operation, count, p50, p90,
/// p99 and max; None when no point timed an operation.
pub fn latency_grid(points: &[(usize, &[OpLatency])]) -> Option<Grid> {
    if points.iter().all(|(_, l)| l.is_empty()) {
        return None;
    }
    let head = ["#", "operation", "count", "p50", "p90", "p99", "max"];
    let caption = "latency per operation (all ok repetitions merged)";
    let mut g = Grid::new("latency", caption, head.map(String::from).to_vec(), 2).compact();
    for (i, lats) in points {
        for (j, l) in lats.iter().enumerate() {
            let first = if j == 0 { i.to_string() } else { String::new() };
            let cells = [
                first,
                l.op.clone(),
                l.count.to_string(),
                duration(l.p50_ns),
                duration(l.p90_ns),
                duration(l.p99_ns),
                duration(l.max_ns),
            ];
            g.rows.push(cells.into_iter().map(Cell::plain).collect());
        }
    }
    Some(g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use racehorse_core::{CellSpec, OpStats, Params, WorkUnit};

    fn cell(rep: u32, values: &[u64], status: CellStatus) -> CellResult {
        let spec = CellSpec { workload: "w".into(), params: Params::new(), variant: "default".into(), rep };
        let mut c = CellResult::empty(spec, WorkUnit::Ops);
        c.status = status;
        let mut h = LatencyHistogram::new();
        values.iter().for_each(|v| h.record(*v));
        c.latencies = vec![OpStats { op: "read".into(), latency: h }];
        c
    }

    #[test]
    fn repetitions_merge_before_the_percentiles() {
        let fast: Vec<u64> = vec![1_000; 99];
        let cells = [
            cell(1, &fast, CellStatus::Ok),
            cell(2, &[5_000_000], CellStatus::Ok),
            cell(3, &[9_000_000_000], CellStatus::Failed),
        ];
        let l = latencies(&cells.iter().collect::<Vec<_>>());
        assert_eq!(l.len(), 1);
        assert_eq!((l[0].count, l[0].max_ns), (100, 5_000_000), "the failed repetition is left out");
        assert!((1_000..1_100).contains(&l[0].p50_ns), "within a bucket of 1µs: {}", l[0].p50_ns);
        assert!(l[0].p99_ns <= 1_100, "99 of 100 are fast: {}", l[0].p99_ns);
        assert!(latencies(&[&cells[2]]).is_empty(), "no ok repetition, no latencies");
    }

    #[test]
    fn durations_read_in_their_unit() {
        assert_eq!(duration(850), "850ns");
        assert_eq!(duration(12_500), "12.5µs");
        assert_eq!(duration(3_204_000), "3.20ms");
        assert_eq!(duration(1_250_000_000), "1.25s");
        assert_eq!(duration(250_000), "250µs");
    }

    #[test]
    fn the_table_names_each_point_once() {
        let l = |op: &str| OpLatency {
            op: op.into(),
            count: 3,
            mean_ns: 1.0,
            p50_ns: 1_000,
            p90_ns: 2_000,
            p99_ns: 3_000,
            max_ns: 4_000,
        };
        let two = [l("read"), l("write")];
        let g = latency_grid(&[(1, &two[..]), (2, &[])]).expect("a table");
        let t = crate::render::doc::to_text(&[crate::render::doc::Block::Table(g)]);
        assert!(t.contains("1  read           3  1.00µs  2.00µs  3.00µs  4.00µs\n   write"), "{t}");
        assert_eq!(latency_grid(&[(1, &[])]), None);
    }
}
