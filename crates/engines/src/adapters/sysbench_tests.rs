//! Tests of the `sysbench` adapter: its report parses (and odd text never panics), it refuses
//! SQLite, and (with sysbench and PostgreSQL installed) it stores sysbench's report for the
//! window of a throw-away cluster.

use super::*;
use crate::control::RealClock;
use crate::testutil::cell_ctx;
use proptest::prelude::*;
use racehorse_core::Value;
use std::sync::Arc;

fn ctx(dir: &std::path::Path, opts: &[(&str, Value)]) -> CellContext {
    // Defaults first, then what keeps the tests short, then the test's own.
    let mut o: Vec<(&str, Value)> = Vec::new();
    o.push(("table_size", Value::Int(2000)));
    o.extend_from_slice(opts);
    cell_ctx(&Sysbench, dir, 2, &o)
}

const SAMPLE: &str = "Threads started!\n\n[ 2s ] Checkpoint report:\nSQL statistics:\n    queries performed:\n        read:  1\n        write: 1\n        other: 1\n        total: 3\n    transactions:  1 (0.50 per sec.)\n    queries: 3 (1.50 per sec.)\nGeneral statistics:\n    total time:                          2.0001s\n\
SQL statistics:\n    queries performed:\n        read:                            140000\n        write:                           40000\n        other:                           20000\n        total:                           200000\n    transactions:                        10000  (998.73 per sec.)\n    queries:                             200000 (19974.53 per sec.)\n    ignored errors:                      3      (0.30 per sec.)\n    reconnects:                          0      (0.00 per sec.)\n\nGeneral statistics:\n    total time:                          10.0106s\n    total number of events:              10000\n\nLatency (ms):\n         min:                                    0.52\n         avg:                                    1.00\n         max:                                    9.58\n         95th percentile:                        1.47\n         sum:                                 9993.29\n";

#[test]
fn the_report_after_the_checkpoint_is_read() {
    let r = parse_report(SAMPLE).expect("report");
    assert_eq!((r.reads, r.writes, r.other, r.queries), (140_000, 40_000, 20_000, 200_000));
    assert_eq!((r.transactions, r.tps, r.qps), (10_000, 998.73, 19974.53));
    assert_eq!((r.ignored_errors, r.reconnects, r.total_time_s), (3, 0, 10.0106));
    assert_eq!((r.lat_min_ms, r.lat_avg_ms, r.lat_max_ms, r.lat_pct_ms), (0.52, 1.0, 9.58, Some((95, 1.47))));
    assert!(parse_report("FATAL: no connection").unwrap_err().contains("no 'SQL statistics'"));
}

proptest! {
    #[test]
    fn counts_round_trip(tx in 1u64..1_000_000_000, q in 0u64..u64::from(u32::MAX), t in 0.001f64..1e5) {
        let text = format!("SQL statistics:\n    transactions:   {tx}  ({:.2} per sec.)\n    queries:   {q} (1.00 per sec.)\n    total time:   {t:.4}s\n", tx as f64 / t);
        let r = parse_report(&text).unwrap();
        prop_assert_eq!((r.transactions, r.queries), (tx, q));
        prop_assert!((r.total_time_s - t).abs() < 1e-3);
    }

    #[test]
    fn garbage_never_panics(s in ".{0,300}") {
        let _ = parse_report(&s);
        let _ = parse_report(&format!("SQL statistics:\n{s}"));
    }
}

#[test]
fn sqlite_is_refused_with_the_way_out() {
    let dir = tempfile::tempdir().expect("tmp");
    let e = Sysbench.validate(&ctx(dir.path(), &[])).expect_err("sysbench needs pg");
    assert!(e.to_string().contains("pg=auto"), "{e}");
}

#[test]
fn sysbench_adapter_stores_its_report_for_the_window() {
    if let Err(e) =
        racehorse_pg::bin_dir().map_err(EngineError::from).and_then(|_| crate::ready(&Sysbench, false))
    {
        racehorse_testkit::skip!("{e}");
        assert!(
            std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(),
            "PostgreSQL and sysbench are required here"
        );
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
    let c = ctx(
        dir.path(),
        &[
            ("pg", Value::Str("auto".into())),
            ("threads", Value::Int(2)),
            ("mode", Value::Str("read_only".into())),
        ],
    );
    let mut cell = Sysbench.prepare(&c).expect("prepare");
    let ctl = Control::simple(Duration::from_secs(1), Duration::from_secs(2), Arc::new(RealClock::default()));
    let rec = Recorder::new();
    cell.run(&ctl, &rec).expect("run");
    cell.cleanup().expect("cleanup");
    let t = rec.totals();
    let window_s = ctl.window().expect("window").0 as f64 / 1e9;
    assert!((1.8..4.0).contains(&window_s), "the window is sysbench's run after the checkpoint: {window_s}");
    assert!(t.units > 0.0);
    // sysbench counts queries as they finish, so transactions across the checkpoint blur it.
    let per_txn = t.extra["queries"] / t.units;
    assert!((per_txn - 16.0).abs() < 0.5, "read-only: 16 queries per transaction, got {per_txn}");
    let ours = t.units / window_s;
    // The window holds sysbench's interval (it may be longer by our scheduling on a busy machine).
    let ratio = ours / t.extra["sysbench_tps"];
    assert!((0.5..1.05).contains(&ratio), "{ours} vs {}", t.extra["sysbench_tps"]);
    assert!(t.extra["server_cpu_us_per_txn"] > 0.0 && t.extra["client_cpu_us_per_txn"] > 0.0);
    assert!(!dir.path().join("pg-auto").exists());
}

#[test]
fn the_dsn_tls_settings_reach_sysbench_libpq() {
    let cfg = PgConfig::parse("host=db port=5432 sslmode=verify-full sslrootcert=/etc/ca.pem").expect("dsn");
    let env = libpq_env(&cfg);
    assert_eq!(
        env,
        vec![("PGSSLMODE", "verify-full".to_string()), ("PGSSLROOTCERT", "/etc/ca.pem".to_string())]
    );
    let plain = PgConfig::parse("host=db sslmode=disable").expect("dsn");
    assert_eq!(libpq_env(&plain), vec![("PGSSLMODE", "disable".to_string())]);
}
