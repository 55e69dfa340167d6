//! Tests of the java engine: the ramp, the JVM's arguments, and with the installed JDK the
//! build cache, a short cell with its GC and JIT figures, the self-check failing a cell, and
//! large pages verified or refused.

use super::*;
use crate::testutil::cell_ctx;
use crate::{Control, RealClock, Recorder, Totals};
use racehorse_core::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The build cache of these tests (kept between runs: the first compiles, the rest reuse).
fn test_cache() -> std::path::PathBuf {
    // SAFETY: geteuid has no preconditions.
    std::env::temp_dir().join(format!("racehorse-java-test-cache-{}", unsafe { libc::geteuid() }))
}

fn ctx(dir: &Path, opts: &[(&str, Value)]) -> CellContext {
    cell_ctx(&Java, dir, 2, opts)
}

fn jdk_or_skip(test: &str) -> Option<Jdk> {
    match Jdk::find().and_then(|j| j.javac().map(|_| j.clone())) {
        Ok(j) => Some(j),
        Err(e) => {
            assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "a JDK is required here: {e}");
            eprintln!("SKIPPED {test}: {e} (CI installs {})", crate::support::jdk::JDK_PACKAGE);
            None
        }
    }
}

/// Runs one cell: `warmup` unmeasured then a 1 s window.
fn run(c: &CellContext, warmup: Duration) -> Result<Totals, EngineError> {
    let setup = Setup::of(c)?;
    let jdk = Jdk::find()?;
    let built = build::classes(&jdk, &test_cache())?;
    let gc_log = c.work_dir.join("gc.log");
    let args = setup.jvm_args(&gc_log, &built.classes);
    let mut cell: Box<dyn Workload> = Box::new(run::JavaCell::new(setup, jdk, args, gc_log, c));
    let ctl = Control::simple(warmup, Duration::from_secs(1), Arc::new(RealClock::default()));
    let rec = Recorder::new();
    let result = cell.run(&ctl, &rec);
    cell.cleanup()?;
    result.map(|()| rec.totals())
}

fn s(v: &str) -> Value {
    Value::Str(v.into())
}

#[test]
fn warehouses_zero_ramps_to_twice_the_cpus() {
    let dir = tempfile::tempdir().unwrap();
    let planned = ctx(dir.path(), &[("cpus", Value::Int(2))]).spec;
    let first = Java.ramp_next(&planned, &[]).unwrap();
    assert_eq!(first["warehouses"], Value::Int(1));
    let point = |n: i64, ok: bool| {
        let mut params = planned.params.clone();
        params.insert("warehouses".into(), Value::Int(n));
        RampPoint { params, units_per_s: ok.then_some(100.0), window_s: 1.0 }
    };
    let done: Vec<RampPoint> = (1..=3).map(|n| point(n, true)).collect();
    assert_eq!(Java.ramp_next(&planned, &done).unwrap()["warehouses"], Value::Int(4));
    let done: Vec<RampPoint> = (1..=4).map(|n| point(n, true)).collect();
    assert_eq!(Java.ramp_next(&planned, &done), None, "up to 2 x 2 CPUs");
    assert_eq!(Java.ramp_next(&planned, &[point(1, false)]), None, "a failed point ends the ramp");
    let fixed = ctx(dir.path(), &[("warehouses", Value::Int(3))]).spec;
    assert_eq!(Java.ramp_next(&fixed, &[]), None, "a fixed load is one cell");
    let capped = ctx(dir.path(), &[("max_warehouses", Value::Int(2))]).spec;
    assert_eq!(Java.ramp_next(&capped, &done[..2]), None);
}

#[test]
fn the_jvm_gets_heap_collector_large_pages_log_then_the_users_flags() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(
        dir.path(),
        &[
            ("warehouses", Value::Int(2)),
            ("heap", Value::Int(256 << 20)),
            ("gc", s("parallel")),
            ("large_pages", s("thp")),
            ("jvm_flags", s(" -XX:+AlwaysPreTouch  -Xss1m ")),
        ],
    );
    let a = Setup::of(&c).unwrap().jvm_args(Path::new("/w/gc.log"), Path::new("/cache/classes"));
    let want = [
        "-Xms262144k",
        "-Xmx262144k",
        "-XX:+UseParallelGC",
        "-XX:+UseTransparentHugePages",
        "-Xlog:gc,gc+phases:file=/w/gc.log:uptimemillis,tags",
        "-XX:+AlwaysPreTouch",
        "-Xss1m",
        "-cp",
        "/cache/classes",
        "RhJava",
        "2",
        "1",
    ];
    assert_eq!(a, want);
    let c = ctx(dir.path(), &[("heap", Value::Int(0)), ("large_pages", s("hugetlbfs"))]);
    let a = Setup::of(&c).unwrap().jvm_args(Path::new("/a:b/gc.log"), Path::new("/c"));
    assert_eq!(
        a[..3],
        ["-XX:+UseG1GC", "-XX:+UseLargePages", "-Xlog:gc,gc+phases:file=\"/a:b/gc.log\":uptimemillis,tags"]
    );
    let e = Setup::of(&ctx(dir.path(), &[("heap", Value::Int(1 << 20))])).unwrap_err();
    assert!(matches!(e, EngineError::Usage(_)) && e.to_string().contains("at least 16m"), "{e}");
}

#[test]
fn the_build_is_cached_by_sources_and_jdk() {
    let Some(jdk) = jdk_or_skip("the_build_is_cached_by_sources_and_jdk") else { return };
    let root = tempfile::tempdir().unwrap();
    let first = build::classes(&jdk, root.path()).unwrap();
    assert!(first.compiled && first.classes.join("RhJava.class").is_file(), "{first:?}");
    let again = build::classes(&jdk, root.path()).unwrap();
    assert_eq!((again.classes, again.compiled), (first.classes.clone(), false), "reused");
    let other = Jdk { version: "0.0-other".into(), ..jdk.clone() };
    let javac = jdk.javac().unwrap();
    assert_ne!(build::cache_key(&other, javac), build::cache_key(&jdk, javac), "another JDK, another build");
    let leftovers: Vec<_> =
        std::fs::read_dir(root.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(leftovers.len(), 1, "no temporary build directory left: {leftovers:?}");
}

#[test]
fn a_short_cell_counts_transactions_and_the_jvms_figures() {
    let Some(jdk) = jdk_or_skip("a_short_cell_counts_transactions_and_the_jvms_figures") else { return };
    let dir = tempfile::tempdir().unwrap();
    // A 4 MiB young generation collects several times a second even on a loaded machine.
    let c = ctx(
        dir.path(),
        &[
            ("warehouses", Value::Int(2)),
            ("heap", Value::Int(128 << 20)),
            ("gc", s("serial")),
            ("jvm_flags", s("-Xmn4m")),
        ],
    );
    let t = run(&c, Duration::from_millis(500)).unwrap();
    assert!(t.units > 1000.0 && t.ops as f64 == t.units, "{t:?}");
    for tx in ["new_order", "payment", "order_status", "delivery", "stock_level"] {
        assert!(t.extra[&format!("tx_{tx}")] > 0.0, "{tx}: {:?}", t.extra);
        assert!(t.latencies[tx].count > 0, "{tx}");
    }
    let share = t.extra["tx_new_order"] / t.units;
    assert!((0.40..0.50).contains(&share), "new-order is 45% of the mix: {share}");
    assert_eq!(t.workload_cpu.method, racehorse_core::CpuMethod::Children);
    assert!(t.workload_cpu.user_s > 0.1, "{:?}", t.workload_cpu);
    assert!(t.extra["gc_count"] >= 1.0 && t.extra["gc_pauses"] >= 1.0, "{:?}", t.extra);
    assert!(t.extra["gc_pause_max_ms"] > 0.0 && t.extra["gc_pause_ms"] >= t.extra["gc_pause_max_ms"]);
    assert!(t.extra["gc_heap_after_mib"] > 1.0 && t.extra["gc_heap_after_mib"] < 128.0, "{:?}", t.extra);
    assert!(t.extra.contains_key("jit_ms") && t.extra["jit_total_ms"] > 0.0, "{:?}", t.extra);
    assert_eq!(t.extra["warehouses"], 2.0);
    assert_eq!(t.settings["jdk version"], jdk.version);
    assert_eq!(t.settings["jdk vendor"], jdk.vendor);
    assert_eq!(t.settings["jvm collector"], "Serial");
    assert!(
        t.settings["jvm flags"].contains("-XX:+UseSerialGC") && !t.settings["jvm flags"].contains("-Xlog")
    );
}

#[test]
fn a_wrong_total_fails_the_cell_loudly() {
    if jdk_or_skip("a_wrong_total_fails_the_cell_loudly").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut c = ctx(dir.path(), &[("warehouses", Value::Int(1)), ("heap", Value::Int(64 << 20))]);
    c.env.insert(FAULT_ENV.into(), "ytd".into());
    let e = run(&c, Duration::ZERO).unwrap_err().to_string();
    assert!(e.contains("SELF-CHECK FAILED") && e.contains("W_YTD"), "{e}");
}

#[test]
fn transparent_huge_pages_are_verified_in_the_memory_maps() {
    if jdk_or_skip("transparent_huge_pages_are_verified_in_the_memory_maps").is_none() {
        return;
    }
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if !(thp.contains("[always]") || thp.contains("[madvise]")) {
        eprintln!("SKIPPED: transparent huge pages are off here ('{}')", thp.trim());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(
        dir.path(),
        &[
            ("warehouses", Value::Int(1)),
            ("heap", Value::Int(128 << 20)),
            ("large_pages", s("thp")),
            ("jvm_flags", s("-XX:+AlwaysPreTouch")),
        ],
    );
    let t = run(&c, Duration::ZERO).unwrap();
    assert!(t.extra["large_pages_kib"] >= 2048.0, "{:?}", t.extra);
    assert_eq!(t.extra["large_pages_kib"], t.extra["anon_huge_kib"]);
}

#[test]
fn hugetlbfs_without_reserved_pages_fails_the_cell() {
    if jdk_or_skip("hugetlbfs_without_reserved_pages_fails_the_cell").is_none() {
        return;
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    if !meminfo.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["HugePages_Total:", "0"]) {
        eprintln!(
            "SKIPPED: this machine has huge pages reserved; the test needs none (it reserves none itself)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(
        dir.path(),
        &[("warehouses", Value::Int(1)), ("heap", Value::Int(64 << 20)), ("large_pages", s("hugetlbfs"))],
    );
    let e = run(&c, Duration::ZERO).unwrap_err().to_string();
    assert!(e.contains("large_pages=hugetlbfs") && e.contains("HugePages_Total"), "{e}");
    assert!(e.contains("vm.nr_hugepages"), "says what to do: {e}");
}

#[test]
fn a_jdk_without_zgc_is_refused_before_the_run() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let java =
        "#!/bin/sh\ncase \"$*\" in *UseZGC*) echo \"Unrecognized VM option 'UseZGC'\" >&2; exit 1;; esac\n\
                echo '    java.runtime.version = 11.0.99-fake' >&2\necho '    java.vendor = Nobody' >&2\n";
    for (name, text) in [("java", java), ("javac", "#!/bin/sh\n")] {
        std::fs::write(bin.join(name), text).unwrap();
        std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let jdk = Jdk::find_in(Some(home.path().to_path_buf()), Vec::new()).unwrap();
    assert_eq!((jdk.version.as_str(), jdk.vendor.as_str()), ("11.0.99-fake", "Nobody"));
    let e = refuse_missing_gc(&jdk, "zgc").unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, EngineError::Usage(_)), "{e:?}");
    assert!(text.contains("Unrecognized VM option 'UseZGC'") && text.contains("choose gc=g1"), "{text}");
    assert!(refuse_missing_gc(&jdk, "serial").is_ok(), "the fake JVM starts with the others");
}
