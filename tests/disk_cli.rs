//! The disk workloads end to end through the binary: diskio phases with the overall row in
//! `compare`, the fio adapter on the same axes (and diskio against it with `--by workload`),
//! and refusals before anything is written.

use crate::common::{machine_lock, text, Sandbox};

fn disk_run(sb: &Sandbox, engine: &str, label: &str) -> std::process::Output {
    sb.run(&[
        "run",
        engine,
        "--label",
        label,
        "--opt",
        "phase=write,read",
        "--opt",
        "size=4m",
        "--reps",
        "3",
        "--runtime",
        "300ms",
        "--warmup",
        "0s",
        "--no-drop-caches",
        "--quiet",
        "--dir",
        "/var/tmp",
    ])
}

#[test]
fn diskio_runs_are_stored_and_compare_with_an_overall_row() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    for label in ["a", "b"] {
        let o = disk_run(&sb, "diskio", label);
        assert!(o.status.success(), "{}", text(&o));
    }
    let show = text(&sb.run(&["show", "a"]));
    assert!(show.contains("bs=64k") && show.contains("size=4m") && show.contains("phase=read"), "{show}");
    let cmp = sb.run(&["compare", "a", "b"]);
    let t = text(&cmp);
    assert!(cmp.status.success(), "{t}");
    assert!(t.contains("Disk I/O") && t.contains("overall"), "{t}");
    let leftovers: Vec<_> = std::fs::read_dir("/var/tmp")
        .map(|d| {
            d.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("racehorse-diskio-")).collect()
        })
        .unwrap_or_default();
    assert!(leftovers.is_empty(), "test files are removed: {leftovers:?}");
}

#[test]
fn fio_runs_on_the_same_axes() {
    if std::process::Command::new("fio").arg("--version").output().is_err() {
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "fio is required here");
        racehorse_testkit::skip!("fio is not installed (scripts/test.sh installs it)");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = disk_run(&sb, "fio", "f");
    assert!(o.status.success(), "{}", text(&o));
    let json = sb.run(&["export", "f", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    let cells = v["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 6);
    assert!(cells.iter().all(|c| c["extra"]["fio_bw_bytes_per_s"].as_f64().unwrap_or(0.0) > 0.0), "{v}");
    // diskio on the same options records the same parameters, so the two engines compare
    // point for point along `workload` (what scripts/bench-disk-matrix.sh judges with).
    let o = disk_run(&sb, "diskio", "d");
    assert!(o.status.success(), "{}", text(&o));
    let plain = sb.run(&["compare", "f", "d"]);
    let t = text(&plain);
    assert_eq!(plain.status.code(), Some(2), "{t}");
    assert!(t.contains("workload (base 'fio', new 'diskio')") && t.contains("--by workload"), "{t}");
    let by = sb.run(&["compare", "f", "d", "--by", "workload", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&by.stdout).expect("stdout is json only");
    let records = v["records"].as_array().expect("records");
    let throughput: Vec<_> = records.iter().filter(|r| r["metric"] == "throughput").collect();
    assert_eq!(throughput.len(), 3, "write, read and their overall row matched: {v}");
    assert!(throughput.iter().all(|r| r["workload"] == "fio/diskio" && r["ratio"].as_f64().is_some()), "{v}");
    assert_eq!(v["news"][0]["by"], "workload=diskio", "{v}");
    assert_eq!(v["areas"][0]["area"], "Disk I/O", "the area of the base engine: {v}");
}

#[test]
fn impossible_disk_cells_are_refused_before_writing() {
    let sb = Sandbox::new();
    let o =
        sb.run(&["run", "diskio", "--opt", "size=1t", "--opt", "procs=1024", "--dir", "/var/tmp", "--quiet"]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("free"), "{}", text(&o));
    let o = sb.run(&["run", "diskio", "--opt", "iodepth=8", "--quiet"]);
    assert!(text(&o).contains("needs ioengine=io_uring"), "{}", text(&o));
}

#[test]
fn writing_a_block_device_needs_destructive() {
    let _m = crate::common::machine_lock();
    let Some(lo) = crate::common::Loop::new() else {
        racehorse_testkit::skip!("needs root and losetup to make a loop device (CI runs as root)");
        return;
    };
    let sb = Sandbox::new();
    let dev = format!("/dev/{}", lo.dev);
    let args = ["run", "diskio", "-o", "phase=write", "-o", "size=8m", "-o", "bs=64k", "--runtime", "1s"];
    let refused =
        sb.run(&[&args[..], &["-o", &format!("target={dev}"), "--warmup", "0s", "--quiet"]].concat());
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("--destructive"), "{}", text(&refused));
    let ok = sb.run(
        &[&args[..], &["-o", &format!("target={dev}"), "--warmup", "0s", "--quiet", "--destructive"]]
            .concat(),
    );
    assert!(ok.status.success(), "{}", text(&ok));
}

#[test]
fn io_uring_kernel_workers_count_as_the_workloads_cpu_not_the_harness() {
    // Buffered writes to ext4 through io_uring are punted to io-wq (`iou-wrk-*` tasks of
    // racehorse's process); their CPU belongs to diskio's threads, not to the harness. Timed,
    // and in pass mode, where a worker that has finished keeps its ring (and its kernel
    // workers) until the window's end is read.
    let _m = machine_lock();
    let sb = Sandbox::new();
    for timed in ["true", "false"] {
        let label = format!("timed-{timed}");
        let timed = format!("timed={timed}");
        let o = sb.run(&[
            "run",
            "diskio",
            "--label",
            &label,
            "-o",
            "phase=randwrite",
            "-o",
            "bs=16k",
            "-o",
            "size=64m",
            "-o",
            "iodepth=32",
            "-o",
            "direct=false",
            "-o",
            "ioengine=io_uring",
            "-o",
            &timed,
            "--runtime",
            "1s",
            "--warmup",
            "300ms",
            "--no-drop-caches",
            "--quiet",
            "--dir",
            "/var/tmp",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let cells = sb.cells(&label);
        let c = &cells[0];
        let io = c["extra"]["io_worker_cpu_s"].as_f64().unwrap_or(0.0);
        let window = c["window_s"].as_f64().expect("window");
        let kernel = c["workload_cpu"]["kernel_s"].as_f64().expect("workload kernel CPU");
        let harness = c["harness_cpu_s"].as_f64().expect("harness CPU");
        assert!(io > 0.02 * window, "{timed}: io-wq workers did the writes: {c}");
        assert!(kernel >= io, "{timed}: their CPU is in the workload's kernel CPU: {c}");
        assert!(harness < 0.2 * window, "{timed}: and not in the harness's: {c}");
    }
}
