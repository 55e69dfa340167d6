//! Faults, round three (issue 47), through the binary: a second Ctrl-C waits for the
//! restore, a damaged store is refused before anything is measured, long labels neither
//! panic `list` nor pass the limits, two first runs on a new store meet at the machine lock,
//! the run's closing line escapes its label, `-q` still says why a cell failed, and import
//! reads an export a cell at a time. Kept cells, later exports, `load` and `-o` on a full
//! disk are in tests/faults47_files.rs.

use crate::common::{can_hotplug, is_root, machine_lock, online_cpus, text, Sandbox};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SWAPPINESS: &str = "/proc/sys/vm/swappiness";

fn swappiness() -> String {
    std::fs::read_to_string(SWAPPINESS).unwrap_or_default().trim().to_string()
}

/// Puts vm.swappiness and the CPUs back as they were if a test fails half way.
struct MachineAsFound {
    swappiness: String,
}

impl Drop for MachineAsFound {
    fn drop(&mut self) {
        let _ = std::fs::write(SWAPPINESS, &self.swappiness);
        let _ = std::fs::write("/sys/devices/system/cpu/cpu1/online", "1");
    }
}

/// A short null run (no warm-up, no caches dropped, no samples), quiet.
fn quick_run(sb: &Sandbox, extra: &[&str]) -> std::process::Output {
    let mut args =
        vec!["run", "null", "--runtime", "50ms", "--warmup", "0s", "--no-warm-up", "--no-drop-caches"];
    args.extend_from_slice(&["--sample-ms", "0", "-q"]);
    args.extend_from_slice(extra);
    sb.run(&args)
}

/// Issue 47, case 1: two SIGINTs 20-50 ms apart during a run whose variant changes
/// vm.swappiness (and, where CPUs can be hotplugged, the CPU count) exited 130 at once with
/// the machine changed and the state file left. Now the second one waits for the restore.
#[test]
fn issue47_second_sigint_restores_the_machine() {
    let _m = machine_lock();
    if !is_root() {
        racehorse_testkit::skip!("the variant's sysctl needs root (CI runs as root)");
        return;
    }
    let _as_found = MachineAsFound { swappiness: swappiness() };
    let (before, cpus_before) = (swappiness(), online_cpus());
    let value = if before == "13" { "14" } else { "13" };
    let cpus = if can_hotplug() { "cpus = [1]\n" } else { "" };
    let sb = Sandbox::new();
    let suite = sb.dir.path().join("s.toml");
    let toml = format!(
        "runtime = \"5s\"\nwarmup = \"0s\"\n{cpus}[[workload]]\nengine = \"null\"\n\
         [[variant]]\nname = \"low\"\nsysctl = {{ \"vm.swappiness\" = {value} }}\n"
    );
    std::fs::write(&suite, toml).unwrap();
    let child = sb
        .cmd(&["run", suite.to_str().unwrap(), "--no-warm-up", "--no-drop-caches", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let waited = Instant::now();
    while swappiness() != value && waited.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    for gap_ms in [30, 0] {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(gap_ms));
    }
    let out = child.wait_with_output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(130), "{t}");
    assert_eq!(swappiness(), before, "vm.swappiness restored: {t}");
    assert_eq!(online_cpus(), cpus_before, "CPUs restored: {t}");
    assert!(!sb.state_dir().join("restore.json").exists(), "no state file left: {t}");
    assert!(t.contains("the machine is restored first"), "the second signal is answered: {t}");
    let v: serde_json::Value = serde_json::from_slice(&sb.run(&["export", "s"]).stdout).unwrap();
    assert_eq!(v["run"]["status"], "interrupted");
}

/// Random bytes over the first page of the store's cells table.
fn damage_cells_page(db: &std::path::Path) {
    use std::io::{Seek, SeekFrom, Write};
    let conn = rusqlite::Connection::open(db).unwrap();
    let page: u64 =
        conn.query_row("SELECT rootpage FROM sqlite_schema WHERE name = 'cells'", [], |r| r.get(0)).unwrap();
    let size: u64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    drop(conn);
    let mut f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    f.seek(SeekFrom::Start((page - 1) * size)).unwrap();
    let mut rng = racehorse_core::rng::SplitMix64::new(47);
    f.write_all(&(0..2000).map(|_| rng.next_u64() as u8).collect::<Vec<u8>>()).unwrap();
}

/// Issue 47, case 2: a damaged store took a run ("complete", exit 0) whose cells no reader
/// could get back. It is refused before anything is measured, saying what to do.
#[test]
fn issue47_a_damaged_store_refuses_a_run_before_measuring() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    for _ in 0..3 {
        let o = quick_run(&sb, &[]);
        assert!(o.status.success(), "{}", text(&o));
    }
    damage_cells_page(&sb.db());
    let o = quick_run(&sb, &["--label", "after"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(t.contains("is damaged") && t.contains(".recover") && t.contains("backup"), "{t}");
    assert!(!t.contains("cannot store cell") && !t.contains("run 4"), "nothing was measured: {t}");
    assert!(!sb.dir.path().join("rh.db.spill").exists(), "no cell was kept either");
}

/// Issue 47, case 3: a label of 65,536 characters (from `run --label` or an export) made
/// `list` panic for the whole store. Labels have a limit, and a store that has a longer one
/// already still lists, the label cut.
#[test]
fn issue47_a_huge_label_is_refused_and_an_old_one_is_cut() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let huge = "L".repeat(65_536);
    let o = quick_run(&sb, &["--label", &huge]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("at most 256"), "{}", text(&o));
    assert!(quick_run(&sb, &["--label", "short"]).status.success());
    let export = sb.dir.path().join("huge.json");
    let mut doc: serde_json::Value = serde_json::from_slice(&sb.run(&["export", "short"]).stdout).unwrap();
    doc["run"]["label"] = serde_json::Value::from(huge.clone());
    doc["run"]["uuid"] = serde_json::Value::from("00000000-0000-4000-8000-000000000047");
    std::fs::write(&export, doc.to_string()).unwrap();
    let o = sb.run(&["import", export.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("run: the label is 65536 characters long"), "{}", text(&o));
    // A store written before the limits: the label is set behind racehorse's back.
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    conn.execute("UPDATE runs SET label = ?1", [&huge]).unwrap();
    drop(conn);
    let list = sb.run(&["list"]);
    let t = text(&list);
    assert!(list.status.success(), "{t}");
    assert!(t.contains('…') && t.lines().all(|l| l.chars().count() < 400), "cut to fit: {}", &t[..300]);
}

/// Issue 47, case 7: two first runs on a store file that does not exist yet: one failed with
/// exit 1 ("database is locked", "table runs already exists"). Now the second meets the
/// machine lock (75), or waits with --wait.
#[test]
fn issue47_two_first_runs_on_a_new_store_meet_at_the_lock() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let args = ["run", "null", "--runtime", "1s", "--warmup", "0s", "--no-warm-up", "--no-drop-caches", "-q"];
    let both = |db: &str, wait: bool| {
        let spawn = || {
            let mut c = Command::new(crate::common::bin());
            c.arg("--db").arg(sb.dir.path().join(db)).args(args).env("RACEHORSE_STATE_DIR", sb.state_dir());
            c.stdout(Stdio::piped()).stderr(Stdio::piped());
            if wait {
                c.arg("--wait");
            }
            c.spawn().unwrap()
        };
        let (a, b) = (spawn(), spawn());
        (a.wait_with_output().unwrap(), b.wait_with_output().unwrap())
    };
    let (a, b) = both("new.db", false);
    let codes = [a.status.code(), b.status.code()];
    assert!(codes.contains(&Some(0)) && codes.contains(&Some(75)), "{codes:?}\n{}\n{}", text(&a), text(&b));
    let (a, b) = both("other.db", true);
    assert!(a.status.success() && b.status.success(), "{}\n{}", text(&a), text(&b));
}

/// Issue 47, case 8: the run's closing line printed a label's control characters raw; a
/// failed cell's reason was not printed with -q (nor when stderr is not a terminal); NaN
/// passed `--noise-threshold` with --dry-run.
#[test]
fn issue47_the_closing_line_escapes_and_quiet_runs_say_why_a_cell_failed() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = quick_run(&sb, &["--label", "x\x1b]0;title\x07", "-o", "fail=true"]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains('\x1b') && err.contains("run 1 (x\\x1b]0;title\\x07): partial"), "{err}");
    assert!(err.contains("null engine asked to fail"), "the reason, on stderr: {err}");
    let o = sb.run(&["run", "null", "--noise-threshold", "nan", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// An export of `cells` copies of a null cell with 1 s of 10 ms samples: about 80 KiB each.
fn big_export(sb: &Sandbox, cells: usize) -> std::path::PathBuf {
    let o = sb.run(&[
        "run",
        "null",
        "--runtime",
        "1s",
        "--warmup",
        "0s",
        "--no-warm-up",
        "--sample-ms",
        "10",
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let mut doc: serde_json::Value = serde_json::from_slice(&sb.run(&["export", "null"]).stdout).unwrap();
    let one = doc["cells"][0].clone();
    let copies: Vec<serde_json::Value> = (0..cells)
        .map(|i| {
            let mut c = one.clone();
            c["rep"] = serde_json::Value::from(i + 1);
            c
        })
        .collect();
    doc["cells"] = serde_json::Value::from(copies);
    doc["run"]["uuid"] = serde_json::Value::from("00000000-0000-4000-8000-000000000048");
    let file = sb.dir.path().join("big.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    file
}

/// Peak resident memory of a command, in bytes (wait4's rusage of that child alone).
#[allow(clippy::zombie_processes)] // wait4 below reaps the child
fn peak_rss_bytes(mut cmd: Command) -> (Option<i32>, u64) {
    let child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: waits for our own child; status and usage are valid for writing.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024)
}

/// Issue 47, case 8: `import` held about 19 times the export's size in memory (its text,
/// its JSON tree twice and its results). Read a cell at a time, the peak stays below four
/// times the file's size plus the binary's own.
#[test]
fn issue47_import_reads_an_export_a_cell_at_a_time() {
    let sb = Sandbox::new();
    let file = {
        let _m = machine_lock();
        big_export(&sb, 250)
    };
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 4 << 20, "a large export: {size} bytes");
    let baseline = peak_rss_bytes(sb.cmd(&["list"])).1;
    let (code, peak) = peak_rss_bytes(sb.cmd(&["import", file.to_str().unwrap()]));
    assert_eq!(code, Some(0));
    assert!(peak < baseline + 4 * size, "peak {peak} B for a {size} B export (list: {baseline} B)");
    assert_eq!(sb.cells("2").len(), 250, "the imported run has every cell");
}
