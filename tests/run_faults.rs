//! Bad input and faults: clear errors, exit code 2 for usage errors, nothing lost.

use crate::common::{machine_lock, text, Sandbox};
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn malformed_suite_reports_file_line_col_and_runs_nothing() {
    let sb = Sandbox::new();
    let suite = sb.dir.path().join("bad.toml");
    std::fs::write(&suite, "name = \"x\"\n[[workload]]\nengine = \"null\"\nclients = [1, 2,, 3]\nreps = 1\n")
        .unwrap();
    let out = sb.run(&["run", suite.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("bad.toml:4:"), "{t}");
    assert!(!sb.db().exists(), "nothing may be stored");
}

#[test]
fn unknown_workload_and_option_list_valid_ones() {
    let sb = Sandbox::new();
    let out = sb.run(&["run", "dbnech"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("fileserver"), "{}", text(&out));
    let out = sb.run(&["run", "null", "--opt", "clinets=4"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("no workload in this run has an option 'clinets'"), "{}", text(&out));
    let out = sb.run(&["run", "null", "--clients", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("outside 1..4096"), "{}", text(&out));
    let out = sb.run(&["run", "null", "--cpus", "4096"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("this machine has"), "{}", text(&out));
}

#[test]
fn unwritable_target_is_a_usage_error() {
    let sb = Sandbox::new();
    let out = sb.run(&["run", "fileserver", "--dir", "/proc/racehorse-nope", "--runtime", "1s"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--dir"), "{}", text(&out));
}

#[test]
fn failing_cells_leave_completed_ones_stored() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let out = sb.run(&[
        "run",
        "null",
        "--opt",
        "fail=false,true",
        "--runtime",
        "200ms",
        "--warmup",
        "0s",
        "--no-drop-caches",
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let list = text(&sb.run(&["list"]));
    assert!(list.contains("partial"), "{list}");
    let v: serde_json::Value = serde_json::from_slice(&sb.run(&["export", "null"]).stdout).unwrap();
    let statuses: Vec<&str> =
        v["cells"].as_array().unwrap().iter().map(|c| c["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, vec!["ok", "failed"]);
}

#[test]
fn ctrl_c_stops_within_a_second_and_keeps_finished_cells() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let mut child = sb
        .cmd(&[
            "run",
            "null",
            "--reps",
            "3",
            "--runtime",
            "1s",
            "--warmup",
            "0s",
            "--no-drop-caches",
            "--no-warm-up",
            "--quiet",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Two cells stored (however slow the machine), then Ctrl-C in the middle of the third.
    let stored = || {
        let o = sb.run(&["export", "null"]);
        serde_json::from_slice::<serde_json::Value>(&o.stdout)
            .ok()
            .and_then(|v| v["cells"].as_array().map(|c| c.iter().filter(|c| c["status"] == "ok").count()))
            .unwrap_or(0)
    };
    let waited = Instant::now();
    while stored() < 2 && waited.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(400));
    let sent = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(sent.elapsed() < Duration::from_secs(1), "took {:?} to stop", sent.elapsed());
    assert_eq!(status.code(), Some(130));
    let v: serde_json::Value = serde_json::from_slice(&sb.run(&["export", "null"]).stdout).unwrap();
    assert_eq!(v["run"]["status"], "interrupted");
    let cells = v["cells"].as_array().unwrap();
    let ok = cells.iter().filter(|c| c["status"] == "ok").count();
    assert!(ok >= 2, "the finished cells stay stored: {cells:?}");
}

#[test]
fn full_disk_fails_the_cell_with_a_clear_error() {
    let _m = machine_lock();
    if !crate::common::is_root() {
        racehorse_testkit::skip!("mounting a tiny tmpfs needs root");
        return;
    }
    let sb = Sandbox::new();
    let mnt = sb.dir.path().join("tiny");
    std::fs::create_dir_all(&mnt).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt.to_str().unwrap()])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "mount tmpfs failed");
    let out = sb.run(&[
        "run",
        "fileserver",
        "--dir",
        mnt.to_str().unwrap(),
        "--runtime",
        "1s",
        "--warmup",
        "0s",
        "--no-drop-caches",
        "--quiet",
    ]);
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.to_lowercase().contains("no space"), "{t}");
    let list = text(&sb.run(&["list"]));
    assert!(list.contains("partial"), "{list}");
}

/// Issue 23, case 2: a cell the store could not take is kept beside it; `import` loads it
/// into its run, and refuses files that are not kept cells.
#[test]
fn a_kept_cell_is_imported_into_its_run() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let out = sb.run(&["run", "null", "--runtime", "100ms", "--warmup", "0s", "--no-warm-up", "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let spec = racehorse_core::CellSpec {
        workload: "null".into(),
        params: racehorse_core::Params::new(),
        variant: "default".into(),
        rep: 2,
    };
    let mut cell = racehorse_core::CellResult::empty(spec, racehorse_core::WorkUnit::Ops);
    cell.units = 42.0;
    cell.window = racehorse_core::Nanos(1_000_000_000);
    let kept = sb.dir.path().join("run1-cell1.json");
    let export: serde_json::Value = serde_json::from_slice(&sb.run(&["export", "null"]).stdout).unwrap();
    let uuid = export["run"]["uuid"].as_str().unwrap();
    let doc = serde_json::json!({"format": "racehorse-cell", "version": 2, "run_uuid": uuid, "run_id": 1, "idx": 1,
                                 "cell": cell});
    std::fs::write(&kept, doc.to_string()).unwrap();
    let bad = sb.dir.path().join("bad.json");
    std::fs::write(&bad, "{\"format\": \"racehorse-run\"}").unwrap();
    let refused = sb.run(&["import", bad.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("export version null is not known"), "{}", text(&refused));
    assert!(text(&refused).contains("nothing was imported"), "{}", text(&refused));
    let imported = sb.run(&["import", kept.to_str().unwrap()]);
    assert!(imported.status.success(), "{}", text(&imported));
    let cells = sb.cells("null");
    assert_eq!(cells.len(), 2, "{cells:?}");
    assert_eq!(cells[1]["units"].as_f64(), Some(42.0));
    assert!(!kept.exists(), "an imported file is removed");
}

/// Issue 23, cases 1 and 6: huge durations panicked (exit 101); `--db /dev/null` made
/// /dev/null-journal; `--dir /nonexistent/dir` created the tree as root.
#[test]
fn odd_durations_and_paths_are_usage_errors_that_create_nothing() {
    let sb = Sandbox::new();
    for args in [
        vec!["run", "null", "--runtime", "99999999999999999h", "--dry-run"],
        vec!["run", "null", "--warmup", "1e300", "--dry-run"],
    ] {
        let o = sb.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("at most 7 days"), "{}", text(&o));
    }
    let suite = sb.dir.path().join("s.toml");
    std::fs::write(&suite, "runtime = 1e300\n[[workload]]\nengine = \"null\"\n").unwrap();
    let o = sb.run(&["run", suite.to_str().unwrap(), "--dry-run"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("s.toml:1:"), "with its position: {}", text(&o));
    let o = Command::new(crate::common::bin()).args(["--db", "/dev/null", "list"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!std::path::Path::new("/dev/null-journal").exists());
    let missing = sb.dir.path().join("no/such/dir");
    let _m = machine_lock();
    let o = sb.run(&["run", "null", "--runtime", "100ms", "--dir", missing.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!sb.dir.path().join("no").exists(), "nothing created");
}

/// Issue 23, case 2, on a real full disk: the store on a tiny tmpfs that fills during the
/// run. The cell's own error is shown, the measured cell is kept and named, and `import`
/// loads it once there is room.
#[test]
fn a_full_store_disk_keeps_the_measured_cell() {
    let _m = machine_lock();
    if !crate::common::is_root() {
        racehorse_testkit::skip!("mounting a tiny tmpfs needs root (CI runs as root)");
        return;
    }
    let sb = Sandbox::new();
    let mnt = sb.dir.path().join("tiny");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt.to_str().unwrap()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(mounted, "mount tmpfs failed");
    let db = mnt.join("rh.db");
    let filler = mnt.join("filler");
    let on_tiny = |args: &[&str]| {
        let mut c = Command::new(crate::common::bin());
        c.args(["--db", db.to_str().unwrap()]).args(args).env("RACEHORSE_STATE_DIR", sb.state_dir());
        c
    };
    let run = |args: &[&str]| on_tiny(args).output().unwrap();
    // The store exists with its first run; then the disk fills up before the next run's cell.
    let first = run(&["run", "null", "--runtime", "100ms", "--warmup", "0s", "--no-warm-up", "-q"]);
    let child = on_tiny(&["run", "null", "--runtime", "1500ms", "--warmup", "0s", "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let _ = Command::new("dd")
        .args(["if=/dev/zero", &format!("of={}", filler.display()), "bs=64k"])
        .stderr(std::process::Stdio::null())
        .status();
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    let kept: Option<String> = t
        .split_whitespace()
        .map(|w| w.trim_end_matches([';', '`', ',']))
        .find(|w| w.ends_with(".json"))
        .map(str::to_string);
    let _ = std::fs::remove_file(&filler);
    // Issue 47, case 5: the failed write beside the full store left an empty file there.
    let spill = mnt.join("rh.db.spill");
    let empty: Vec<_> = std::fs::read_dir(&spill)
        .map(|d| d.flatten().filter(|e| e.metadata().is_ok_and(|m| m.len() == 0)).map(|e| e.path()).collect())
        .unwrap_or_default();
    let imported = kept.as_ref().map(|k| run(&["import", k]));
    let listed = text(&run(&["export", "2", "--format", "json"]));
    let _ = Command::new("umount").arg(&mnt).status();
    assert!(first.status.success(), "{}", text(&first));
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(t.contains("cannot store cell null") && t.contains("racehorse import"), "{t}");
    assert!(empty.is_empty(), "no empty kept cell is left beside the full store: {empty:?}");
    let imported = imported.expect("the kept file is named");
    assert!(imported.status.success(), "{}", text(&imported));
    assert!(listed.contains("\"workload\": \"null\""), "the imported cell is in its run: {listed}");
}
