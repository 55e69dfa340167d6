//! The analytics engine: a warm measured pass on SQLite, and the same rows from SQLite and
//! PostgreSQL (`pg=auto`) for every query on the same generated data.

use super::*;
use crate::testutil::cell_ctx;
use crate::{RealClock, Totals};
use racehorse_core::Value;
use std::sync::Arc;

fn ctx(dir: &std::path::Path, opts: &[(&str, Value)]) -> CellContext {
    cell_ctx(&Analytics, dir, 2, opts)
}

fn run(c: &CellContext) -> Totals {
    let mut cell = Analytics.prepare(c).expect("prepare");
    let ctl = Control::simple(Duration::ZERO, Duration::from_secs(1), Arc::new(RealClock::default()));
    let rec = Recorder::new();
    cell.run(&ctl, &rec).expect("run");
    let window = ctl.window().expect("window closed");
    cell.cleanup().expect("cleanup");
    let t = rec.totals();
    let sum_ms: f64 = (1..=10).map(|i| t.extra[&format!("q{i:02}_ms")]).sum();
    assert!((sum_ms - t.extra["total_ms"]).abs() < 1e-6);
    assert!(window.0 as f64 / 1e6 >= sum_ms, "the window holds every query");
    t
}

#[test]
fn sqlite_measures_ten_warm_queries() {
    let dir = tempfile::tempdir().expect("tmp");
    let t = run(&ctx(dir.path(), &[]));
    assert_eq!(t.units, 10.0);
    assert_eq!(t.latencies.len(), 10);
    assert_eq!(t.extra["q02_rows"], 10.0, "top 10");
    assert_eq!(t.extra["q01_rows"], 20.0, "4 years x 5 regions");
    assert!(t.extra["q04_rows"] > 0.0 && t.extra["q09_rows"] > 0.0, "{:?}", t.extra);
}

#[test]
fn sqlite_and_postgres_return_the_same_rows() {
    if let Err(e) = racehorse_pg::bin_dir() {
        racehorse_testkit::skip!("no PostgreSQL server binaries ({e})");
        assert!(
            std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(),
            "PostgreSQL and sysbench are required here"
        );
        return;
    }
    let (a, b) = (tempfile::tempdir().expect("tmp"), tempfile::tempdir_in("/var/tmp").expect("tmp"));
    let mut lite = open_and_load(&ctx(a.path(), &[])).expect("sqlite");
    let mut pg = open_and_load(&ctx(b.path(), &[("pg", Value::Str("auto".into()))])).expect("pg");
    for (name, _, sql) in queries::QUERIES {
        let (x, y) = (lite.text_rows(sql).expect(name), pg.text_rows(sql).expect(name));
        assert_eq!(x.len(), y.len(), "{name}: row counts");
        for (rx, ry) in x.iter().zip(&y) {
            for (vx, vy) in rx.iter().zip(ry) {
                let (vx, vy) = (vx.clone().unwrap_or_default(), vy.clone().unwrap_or_default());
                match (vx.parse::<f64>(), vy.parse::<f64>()) {
                    (Ok(fx), Ok(fy)) => {
                        assert!((fx - fy).abs() <= 1e-6 * fx.abs().max(1.0), "{name}: {fx} vs {fy}")
                    }
                    _ => assert_eq!(vx, vy, "{name}"),
                }
            }
        }
    }
    drop(pg);
    assert!(!b.path().join("pg-auto").exists());
}
