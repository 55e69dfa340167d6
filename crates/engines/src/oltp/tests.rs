//! The `oltp` engine end to end: SQLite (read-only and read-write counts per transaction),
//! PostgreSQL through `pg=auto` (counts, server CPU, cluster removed), and the faults: a wrong
//! password, an unreachable DSN, missing binaries, the server killed mid-run.

use super::*;
use crate::testutil::cell_ctx;
use crate::{RealClock, Totals};
use racehorse_core::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) fn ctx(dir: &std::path::Path, opts: &[(&str, Value)]) -> CellContext {
    // Defaults first, then what keeps the tests short, then the test's own.
    let mut o: Vec<(&str, Value)> = Vec::new();
    o.push(("table_size", Value::Int(2000)));
    o.extend_from_slice(opts);
    cell_ctx(&Oltp, dir, 2, &o)
}

/// A throw-away cluster in a fresh directory, or None (reason printed) without PostgreSQL.
fn cluster_or_skip() -> Option<(tempfile::TempDir, racehorse_pg::Cluster)> {
    if let Err(e) = racehorse_pg::bin_dir() {
        racehorse_testkit::skip!("no PostgreSQL server binaries here ({e})");
        assert!(
            std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(),
            "PostgreSQL and sysbench are required here"
        );
        return None;
    }
    let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
    let c = racehorse_pg::Cluster::start(dir.path(), &Default::default()).expect("cluster starts");
    Some((dir, c))
}

fn control(runtime: Duration) -> Control {
    Control::simple(Duration::from_millis(100), runtime, Arc::new(RealClock::default()))
}

fn run_cell(engine: &dyn Engine, c: &CellContext, runtime: Duration) -> (Result<(), EngineError>, Totals) {
    let mut cell = engine.prepare(c).expect("prepare");
    let ctl = control(runtime);
    let rec = Recorder::new();
    let res = cell.run(&ctl, &rec);
    cell.cleanup().expect("cleanup");
    (res, rec.totals())
}

/// Every finished transaction sent exactly the mix's queries.
fn assert_counts(t: &Totals, read_only: bool) {
    let n = t.units;
    assert!(n >= 5.0, "some transactions: {n}");
    assert_eq!(t.extra["reads"], 14.0 * n);
    assert_eq!(t.extra["queries"], if read_only { 16.0 } else { 20.0 } * n);
    if read_only {
        assert_eq!((t.extra["writes"], t.extra["other"]), (0.0, 2.0 * n));
    } else {
        assert_eq!(t.extra["writes"] + t.extra["other"], 6.0 * n);
        assert!(t.extra["writes"] >= 3.0 * n, "updates and inserts touch rows: {:?}", t.extra);
    }
    assert_eq!(t.latencies["transaction"].count, n as u64);
    assert!(t.extra["client_cpu_us_per_txn"] > 0.0);
}

#[test]
fn sqlite_runs_both_modes_with_sysbench_counts() {
    for (mode, threads) in [("read_only", 2), ("read_write", 3)] {
        let dir = tempfile::tempdir().expect("tmp");
        let c = ctx(
            dir.path(),
            &[("mode", Value::Str(mode.into())), ("threads", Value::Int(threads)), ("tables", Value::Int(2))],
        );
        let (res, t) = run_cell(&Oltp, &c, Duration::from_secs(1));
        res.expect("run");
        assert_counts(&t, mode == "read_only");
        assert!(dir.path().join("oltp.sqlite-wal").exists() || dir.path().join("oltp.sqlite").exists());
    }
}

#[test]
fn bad_options_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().expect("tmp");
    let e = Oltp.validate(&ctx(dir.path(), &[("range_size", Value::Int(5000))])).expect_err("range too big");
    assert!(e.to_string().contains("range_size 5000"), "{e}");
    let e = Oltp.validate(&ctx(dir.path(), &[("pg", Value::Str("bogus".into()))])).expect_err("bad DSN");
    assert!(matches!(e, EngineError::Usage(_)) && e.to_string().contains("pg=auto"), "{e}");
}

#[test]
fn unreachable_dsn_fails_prepare_quickly_and_clearly() {
    let dir = tempfile::tempdir().expect("tmp");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dsn = format!("postgres://u:p@127.0.0.1:{port}/db?connect_timeout=2");
    let t0 = Instant::now();
    let e = Oltp.prepare(&ctx(dir.path(), &[("pg", Value::Str(dsn))])).err().expect("unreachable");
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(e.to_string().contains("cannot connect to PostgreSQL"), "{e}");
}

#[test]
fn postgres_auto_runs_both_modes_and_removes_the_cluster() {
    if let Err(e) = racehorse_pg::bin_dir() {
        racehorse_testkit::skip!("no PostgreSQL server binaries ({e})");
        assert!(
            std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(),
            "PostgreSQL and sysbench are required here"
        );
        return;
    }
    for mode in ["read_only", "read_write"] {
        let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
        let c = ctx(
            dir.path(),
            &[
                ("mode", Value::Str(mode.into())),
                ("threads", Value::Int(4)),
                ("pg", Value::Str("auto".into())),
            ],
        );
        // 2 s: the test suite starts several clusters at once, and a loaded machine has
        // finished no transaction at all within 0.6 s.
        let (res, t) = run_cell(&Oltp, &c, Duration::from_secs(2));
        res.expect("run");
        assert_counts(&t, mode == "read_only");
        assert!(t.extra["server_cpu_us_per_txn"] > 0.0, "{:?}", t.extra);
        assert!(!dir.path().join("pg-auto").exists(), "cluster removed");
    }
}

#[test]
fn wrong_password_is_a_clear_error() {
    let Some((dir, cluster)) = cluster_or_skip() else { return };
    let dsn = format!("postgres://racehorse:wrong@127.0.0.1:{}/postgres", cluster.config.port);
    let e = Oltp.prepare(&ctx(dir.path(), &[("pg", Value::Str(dsn))])).err().expect("wrong password");
    assert!(e.to_string().contains("password authentication failed for user"), "{e}");
}

#[test]
fn server_killed_mid_run_fails_the_cell_without_hanging() {
    if let Err(e) = racehorse_pg::bin_dir() {
        racehorse_testkit::skip!("no PostgreSQL server binaries ({e})");
        assert!(
            std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(),
            "PostgreSQL and sysbench are required here"
        );
        return;
    }
    let dir = tempfile::tempdir_in("/var/tmp").expect("tmp");
    let c = ctx(dir.path(), &[("threads", Value::Int(4)), ("pg", Value::Str("auto".into()))]);
    let mut cell = Oltp.prepare(&c).expect("prepare");
    // The postmaster's pid is the first line of its lock file.
    let lock =
        std::fs::read_to_string(dir.path().join("pg-auto/data/postmaster.pid")).expect("postmaster.pid");
    let pid: i32 = lock.lines().next().and_then(|l| l.trim().parse().ok()).expect("pid");
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        // SAFETY: the test's own cluster.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let ctl = control(Duration::from_secs(60));
    let t0 = Instant::now();
    let res = cell.run(&ctl, &Recorder::new());
    killer.join().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(40), "no hang: {:?}", t0.elapsed());
    let e = res.expect_err("the cell fails");
    assert!(e.to_string().contains("PostgreSQL"), "{e}");
    cell.cleanup().expect("cleanup");
    assert!(!dir.path().join("pg-auto").exists(), "cluster removed");
}

#[test]
fn server_mem_puts_the_server_alone_in_a_memory_cgroup() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || racehorse_pg::bin_dir().is_err() {
        racehorse_testkit::skip!("needs root and the PostgreSQL server binaries");
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
            ("shared_buffers", Value::Int(16 << 20)),
            ("server_mem", Value::Int(64 << 20)),
        ],
    );
    let (res, t) = run_cell(&Oltp, &c, Duration::from_millis(300));
    res.expect("run");
    assert_eq!(t.extra["server_mem_limit_bytes"], (64 << 20) as f64);
    let peak = t.extra["server_mem_peak_bytes"];
    assert!(
        peak > (1 << 20) as f64 && peak <= (64 << 20) as f64,
        "the server's memory is charged there: {peak}"
    );
    let me = format!("racehorse-pg-{}-", std::process::id());
    let cg = racehorse_machine::detect_memory_cgroup(&racehorse_machine::SysRoot::host()).expect("cgroup");
    let left: Vec<_> = std::fs::read_dir(&cg.dir)
        .expect("cgroup dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&me))
        .collect();
    assert!(left.is_empty(), "the server's cgroup is removed");
    let e =
        Oltp.validate(&ctx(dir.path(), &[("server_mem", Value::Int(64 << 20))])).expect_err("needs pg=auto");
    assert!(e.to_string().contains("pg=auto"), "{e}");
}
