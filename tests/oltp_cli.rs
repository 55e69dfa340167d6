//! The oltp engine and the sysbench adapter through the binary: SQLite over a threads axis,
//! PostgreSQL through `--pg auto` (cluster gone afterwards), and the faults: an unreachable
//! DSN fails its cell with a clear message, sysbench without PostgreSQL is a usage error.

use crate::common::{machine_lock, text, Sandbox};

fn pg_installed() -> bool {
    let found = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.path().join("bin/initdb").is_file());
    if !found {
        racehorse_testkit::skip!("no PostgreSQL server binaries under /usr/lib/postgresql");
        assert!(
            std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(),
            "PostgreSQL and sysbench are required here"
        );
    }
    found
}

#[test]
fn sqlite_cells_over_threads_count_sysbench_queries() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let work = sb.work();
    let o = sb.run(&[
        "run",
        "oltp",
        "--label",
        "lite",
        "--threads",
        "1,2",
        "-o",
        "table_size=1000",
        "-o",
        "mode=read_only",
        "--runtime",
        "1s",
        "--warmup",
        "0s",
        "--quiet",
        "--no-drop-caches",
        "--dir",
        work.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = sb.cells("lite");
    assert_eq!(cells.len(), 2);
    for c in &cells {
        assert_eq!(c["unit"], "transactions");
        let units = c["units"].as_f64().expect("units");
        assert!(units > 0.0, "{c}");
        assert_eq!(c["extra"]["queries"].as_f64(), Some(16.0 * units), "{c}");
        assert!(c["extra"]["cpu_us_per_transaction"].as_f64().is_some_and(|v| v > 0.0), "{c}");
    }
}

#[test]
fn postgres_auto_runs_and_leaves_no_cluster() {
    if !pg_installed() {
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let work = sb.work();
    let o = sb.run(&[
        "run",
        "oltp",
        "--label",
        "pg",
        "--pg",
        "auto",
        "--threads",
        "2",
        "-o",
        "table_size=1000",
        "--runtime",
        "1s",
        "--warmup",
        "0s",
        "--quiet",
        "--no-drop-caches",
        "--dir",
        work.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = sb.cells("pg");
    let units = cells[0]["units"].as_f64().expect("units");
    assert!(units > 0.0);
    assert_eq!(cells[0]["extra"]["queries"].as_f64(), Some(20.0 * units));
    assert!(cells[0]["extra"]["server_cpu_us_per_txn"].as_f64().is_some_and(|v| v > 0.0));
    let left: Vec<_> =
        std::fs::read_dir(&work).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "work dir emptied: {left:?}");
}

#[test]
fn unreachable_dsn_fails_the_cell_and_sysbench_needs_postgres() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dsn = format!("postgres://u:p@127.0.0.1:{port}/db");
    let o = sb.run(&[
        "run",
        "oltp",
        "--pg",
        &dsn,
        "--runtime",
        "1s",
        "--warmup",
        "0s",
        "--quiet",
        "--no-drop-caches",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("cannot connect to PostgreSQL at 127.0.0.1"), "{}", text(&o));
    let o = sb.run(&["run", "sysbench", "--runtime", "1s", "--quiet"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("pg=auto"), "{}", text(&o));
}

#[test]
fn a_killed_run_leaves_no_server_and_its_files_are_swept() {
    if !pg_installed() {
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let work = sb.work();
    let mut child = sb
        .cmd(&[
            "run",
            "oltp",
            "--pg",
            "auto",
            "-o",
            "table_size=1000",
            "--runtime",
            "60s",
            "--warmup",
            "0s",
            "--quiet",
            "--no-drop-caches",
            "--dir",
            work.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let lock = work.join(format!("racehorse-{}-cell0/pg-auto/data/postmaster.pid", child.id()));
    let t0 = std::time::Instant::now();
    let pid: i32 = loop {
        let text = std::fs::read_to_string(&lock).unwrap_or_default();
        if let Some(p) = text.lines().next().and_then(|l| l.trim().parse().ok()) {
            break p;
        }
        assert!(t0.elapsed().as_secs() < 60, "the cluster never started");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    child.kill().expect("SIGKILL racehorse");
    child.wait().expect("reap");
    let t1 = std::time::Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(t1.elapsed().as_secs() < 15, "the postmaster outlived racehorse");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The next run in the same work root sweeps the dead run's cell directory.
    let o = sb.run(&[
        "run",
        "null",
        "--runtime",
        "100ms",
        "--warmup",
        "0s",
        "--quiet",
        "--no-drop-caches",
        "--dir",
        work.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!lock.parent().unwrap().exists(), "the dead run's cluster files are gone");
}
