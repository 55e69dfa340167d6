//! The paging engine end to end through the binary, as root: touches under a real memory
//! cgroup limit move about (1 - limit/region) pages per touch, the limit and the file are
//! gone afterwards, and settings that cannot page are refused before anything runs.

use crate::common::{is_root, machine_lock, text, Sandbox};

/// racehorse-<pid> children left in any memory cgroup directory.
fn leftover_cgroups() -> Vec<String> {
    let out = std::process::Command::new("find")
        .args(["/sys/fs/cgroup", "-maxdepth", "6", "-type", "d", "-name", "racehorse-*"])
        .output()
        .expect("find");
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

fn paging(sb: &Sandbox, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "paging",
        "--label",
        "p",
        "--opt",
        "region=64m",
        "--runtime",
        "1500ms",
        "--warmup",
        "700ms",
        "--quiet",
        "--dir",
        "/var/tmp",
    ];
    args.extend_from_slice(extra);
    sb.run(&args)
}

#[test]
fn touches_under_a_memory_limit_page_in_proportion() {
    if !is_root() {
        racehorse_testkit::skip!("a memory cgroup limit needs root (CI runs as root)");
        return;
    }
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = paging(&sb, &["--opt", "limit=24m", "--opt", "backing=file"]);
    assert!(o.status.success(), "{}", text(&o));
    let show = text(&sb.run(&["show", "p"]));
    assert!(show.contains("region=64m") && show.contains("moves_per_touch"), "{show}");
    let export: serde_json::Value =
        serde_json::from_slice(&sb.run(&["export", "p", "--format", "json"]).stdout).expect("json");
    let cell = &export["cells"][0];
    let extra = &cell["extra"];
    let moves = extra["moves_per_touch"].as_f64().expect("moves");
    // 24 of 64 MiB resident: about 62% of uniform touches miss and read a page back in. Pages
    // moved are counted system-wide (/proc/vmstat, as the seed did), so another process's
    // I/O in the window adds to them; such a window is marked noisy, and then only the
    // order of magnitude is checked.
    let band = if cell["quality"]["noisy"] == true { 0.3..3.0 } else { 0.45..0.85 };
    assert!(band.contains(&moves), "moves per touch {moves}: {extra}");
    assert_eq!(extra["mem_limit_bytes"].as_f64(), Some((24u64 << 20) as f64));
    assert!(extra["kernel_us_per_page_moved"].as_f64().is_some_and(|v| v > 0.0), "{extra}");
    assert!(leftover_cgroups().is_empty(), "the cell's cgroup is removed: {:?}", leftover_cgroups());
    let files: Vec<_> = std::fs::read_dir("/var/tmp")
        .expect("var tmp")
        .flatten()
        .filter(|e| e.path().join("paging.dat").exists())
        .collect();
    assert!(files.is_empty(), "the paging file is removed: {files:?}");
}

/// Active swap devices (first column of /proc/swaps).
fn swaps() -> Vec<String> {
    let t = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    t.lines().skip(1).filter_map(|l| l.split_whitespace().next().map(str::to_string)).collect()
}

#[test]
fn an_anonymous_region_pages_to_a_zram_swap_made_for_the_cell() {
    let zram = std::path::Path::new("/sys/class/zram-control").exists();
    if !is_root() || !zram {
        assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "root and zram are required here");
        racehorse_testkit::skip!("needs root and the zram module");
        return;
    }
    let _m = machine_lock();
    let before = swaps();
    let sb = Sandbox::new();
    let o = paging(&sb, &["--opt", "limit=24m", "--opt", "backing=zram"]);
    assert!(o.status.success(), "{}", text(&o));
    let export: serde_json::Value =
        serde_json::from_slice(&sb.run(&["export", "p", "--format", "json"]).stdout).expect("json");
    let extra = &export["cells"][0]["extra"];
    let ins = extra["swap_ins_per_touch"].as_f64().expect("swap ins");
    assert!((0.45..0.85).contains(&ins), "about 62% of touches swap a page in: {extra}");
    assert_eq!(extra["file_backed"].as_f64(), Some(0.0));
    assert_eq!(swaps(), before, "the cell's zram swap is gone");
    assert!(leftover_cgroups().is_empty(), "{:?}", leftover_cgroups());
}

#[test]
fn settings_that_cannot_page_are_refused_up_front() {
    let sb = Sandbox::new();
    let o = paging(&sb, &["--opt", "limit=64m"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("must be below region") || t.contains("needs root"), "{t}");
    if !is_root() {
        return;
    }
    let _m = machine_lock();
    let suite = sb.dir.path().join("limited.toml");
    std::fs::write(
        &suite,
        "name = \"limited\"\nmem_limit = \"512M\"\nruntime = \"300ms\"\nwarmup = \"0s\"\n\n\
         [[workload]]\nengine = \"paging\"\nregion = \"64m\"\nlimit = \"24m\"\n",
    )
    .expect("suite");
    let o = sb.run(&["run", suite.to_str().expect("utf-8"), "--quiet", "--dir", "/var/tmp"]);
    let t = format!("{}{}", text(&o), text(&sb.run(&["show", "limited"])));
    assert!(t.contains("sets its own memory limit"), "a run-wide limit is not silently replaced: {t}");
    assert!(leftover_cgroups().is_empty(), "{:?}", leftover_cgroups());
}

#[test]
fn a_killed_paging_run_is_cleaned_up_by_the_next_one() {
    if !is_root() {
        racehorse_testkit::skip!("a memory cgroup limit needs root (CI runs as root)");
        return;
    }
    let _m = machine_lock();
    let before = swaps();
    let sb = Sandbox::new();
    let work = sb.dir.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let mut child = sb
        .cmd(&[
            "run",
            "paging",
            "-o",
            "region=64m",
            "-o",
            "limit=24m",
            "--runtime",
            "30s",
            "--warmup",
            "0s",
            "--quiet",
            "--dir",
            work.to_str().expect("utf-8"),
        ])
        .spawn()
        .expect("spawn");
    let mine = format!("racehorse-{}", child.id());
    let t0 = std::time::Instant::now();
    while !leftover_cgroups().iter().any(|c| c.ends_with(&mine)) && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(leftover_cgroups().iter().any(|c| c.ends_with(&mine)), "the cell's cgroup appeared");
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    let o = sb.run(&[
        "run",
        "null",
        "--runtime",
        "100ms",
        "--warmup",
        "0s",
        "--quiet",
        "--dir",
        work.to_str().unwrap(),
    ]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("removed cgroup") && t.contains("left by a racehorse run that was killed"), "{t}");
    assert!(leftover_cgroups().is_empty(), "{:?}", leftover_cgroups());
    assert_eq!(swaps(), before, "a zram swap of the killed cell is gone too");
    let left: Vec<_> = std::fs::read_dir(&work).expect("work").flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "the killed run's cell directory is gone: {left:?}");
}
