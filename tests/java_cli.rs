//! The java engine through the binary: a short warehouse ramp (1, 2) stored per load with
//! transactions/s, CPU per transaction, the GC and JIT figures and the JDK; a wrong total
//! fails its cell; without a JDK the run is refused before any cell with the package to
//! install (exit 2).

use crate::common::{machine_lock, text, Sandbox};

/// True when a JDK (java and javac) is on PATH or in JAVA_HOME.
fn have_jdk() -> bool {
    let home = std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty());
    if let Some(h) = home {
        return std::path::Path::new(&h).join("bin/javac").is_file();
    }
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("javac").is_file()))
}

fn java(sb: &Sandbox, label: &str, extra: &[&str]) -> std::process::Output {
    let work = sb.work();
    let mut args = vec![
        "run",
        "java",
        "--label",
        label,
        "-o",
        "heap=128m",
        "--runtime",
        "2s",
        "--warmup",
        "1s",
        "--reps",
        "1",
        "--no-warm-up",
        "--quiet",
        "--no-drop-caches",
        "--dir",
        work.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    sb.cmd(&args).env("XDG_CACHE_HOME", sb.dir.path().join("cache")).output().expect("spawn racehorse")
}

#[test]
fn a_warehouse_ramp_stores_throughput_cpu_and_gc_figures() {
    if !have_jdk() {
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "a JDK is required here");
        eprintln!("SKIPPED: no JDK here (scripts/test.sh installs openjdk-17-jdk-headless)");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = java(&sb, "j", &["-o", "max_warehouses=2", "-o", "gc=serial"]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = sb.cells("j");
    let loads: Vec<i64> =
        cells.iter().map(|c| c["params"]["warehouses"].as_i64().expect("warehouses")).collect();
    assert_eq!(loads, [1, 2], "a ramp of one cell per load");
    for c in &cells {
        assert_eq!(c["status"], "ok", "{c}");
        assert_eq!(c["unit"], "transactions");
        assert!(c["throughput_per_s"].as_f64().expect("throughput") > 1000.0, "{c}");
        let cpu = c["cpu_per_unit"]["total_s"].as_f64().expect("CPU per transaction");
        assert!(cpu > 0.0 && cpu < 1e-3, "{c}");
        assert!(c["cpu_per_unit"]["user_s"].as_f64().expect("user") > 0.0, "{c}");
        for k in [
            "gc_count",
            "gc_time_ms",
            "gc_pauses",
            "gc_pause_ms",
            "gc_pause_max_ms",
            "jit_ms",
            "tx_new_order",
        ] {
            assert!(c["extra"][k].is_number(), "{k}: {c}");
        }
        assert!(c["extra"]["gc_count"].as_f64().expect("gc_count") >= 1.0, "a 128 MiB heap collects: {c}");
        assert_eq!(c["settings"]["jvm collector"], "Serial", "{c}");
        assert!(c["settings"]["jdk version"].as_str().is_some_and(|v| !v.is_empty()), "{c}");
        assert!(c["settings"]["jdk vendor"].is_string(), "{c}");
    }
    assert!(cells[0]["extra"]["tx_new_order"].as_f64() > Some(0.0));
    let env = text(&sb.run(&["env", "j"]));
    assert!(env.contains("compiler.java"), "the JDK is in the environment: {env}");
    let show = text(&sb.run(&["show", "j"]));
    assert!(show.contains("java (throughput in tx/s, CPU per unit in µs/tx"), "{show}");
}

#[test]
fn a_wrong_total_fails_the_cell() {
    if !have_jdk() {
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "a JDK is required here");
        eprintln!("SKIPPED: no JDK here (scripts/test.sh installs openjdk-17-jdk-headless)");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let work = sb.work();
    let o = sb
        .cmd(&[
            "run",
            "java",
            "--warehouses",
            "1",
            "--runtime",
            "1s",
            "--warmup",
            "0s",
            "--reps",
            "1",
            "--no-warm-up",
            "--quiet",
            "--no-drop-caches",
            "--label",
            "bad",
            "--dir",
            work.to_str().expect("utf-8 path"),
        ])
        .env("XDG_CACHE_HOME", sb.dir.path().join("cache"))
        .env("RACEHORSE_JAVA_INJECT_FAULT", "ytd")
        .output()
        .expect("spawn");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "a failed cell: {t}");
    assert!(t.contains("SELF-CHECK FAILED") && t.contains("W_YTD"), "{t}");
    assert_eq!(sb.cells("bad")[0]["status"], "failed");
}

#[test]
fn without_a_jdk_the_run_is_refused_naming_the_package() {
    let sb = Sandbox::new();
    let empty = sb.dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let o = sb
        .cmd(&["run", "java", "--warehouses", "1", "--quiet", "--reps", "1"])
        .env("PATH", &empty)
        .env("JAVA_HOME", &empty)
        .output()
        .expect("spawn");
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(t.contains("openjdk-17-jdk-headless") && t.contains("JAVA_HOME"), "says what to do: {t}");
}
