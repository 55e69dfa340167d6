//! Tests against a real perf (recording, folding, counting): they return early (saying why) where perf is missing or may not
//! sample system-wide. CI installs perf and runs as root, so there they do run.

use super::*;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

const FREQ_HZ: u32 = 999;

fn usable_perf() -> Option<PathBuf> {
    match find_perf() {
        Ok(p) => Some(p),
        Err(why) => {
            assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "perf is required here: {why}");
            racehorse_testkit::skip!("{why}");
            None
        }
    }
}

/// Spins for `d`, with the loop in the calling function itself (no calls but the clock's every
/// 4096 rounds, even unoptimized), so its samples carry that function's name.
macro_rules! spin {
    ($d:expr) => {{
        let start = Instant::now();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        while start.elapsed() < $d {
            for _ in 0..4096 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
            }
        }
        black_box(x)
    }};
}

#[inline(never)]
fn busy_unsampled(d: Duration) -> u64 {
    spin!(d)
}

#[inline(never)]
fn busy_sampled(d: Duration) -> u64 {
    spin!(d)
}

#[test]
fn records_only_the_window_and_reports_it() {
    let Some(perf) = usable_perf() else { return };
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let mut rec = Recording::start(&perf, dir.path(), FREQ_HZ, CallGraph::Fp).unwrap();
    eprintln!("start: {:?}", t.elapsed());
    busy_unsampled(Duration::from_millis(300)); // warm-up: sampling off
    let t = Instant::now();
    rec.enable().unwrap();
    let enable_took = t.elapsed();
    busy_sampled(Duration::from_millis(500));
    let t = Instant::now();
    rec.disable().unwrap();
    eprintln!("enable: {enable_took:?}, disable: {:?}", t.elapsed());
    busy_unsampled(Duration::from_millis(100)); // cool-down: sampling off again
    let t = Instant::now();
    let data = rec.finish().unwrap();
    eprintln!("finish: {:?}", t.elapsed());
    let t = Instant::now();
    let profile = report(&perf, &data, 10).unwrap();
    eprintln!("report: {:?}\n{profile:#?}", t.elapsed());

    assert_eq!(profile.event, EVENT);
    assert!(profile.samples > 0);
    for list in [&profile.images, &profile.symbols] {
        assert!(!list.is_empty() && list.len() <= 10);
        assert!(list.iter().all(|e| (0.0..=100.0).contains(&e.share_pct)), "{list:?}");
        assert!(list.windows(2).all(|w| w[0].share_pct >= w[1].share_pct), "{list:?}");
    }
    assert!(profile.images.iter().all(|e| e.symbol.is_none()));
    assert!(profile.symbols.iter().all(|e| e.symbol.is_some()));
    let exe = std::env::current_exe().unwrap();
    let exe = exe.file_name().unwrap().to_string_lossy();
    assert!(profile.images.iter().any(|e| exe.starts_with(&e.image)), "{exe} not among {:?}", profile.images);

    // Only the window was sampled: the spinning outside it left no trace.
    let all = report(&perf, &data, usize::MAX).unwrap();
    let named = |f: &str| all.symbols.iter().any(|e| e.symbol.as_deref().is_some_and(|s| s.ends_with(f)));
    assert!(named("::busy_sampled"), "{:?}", all.symbols);
    assert!(!named("::busy_unsampled"), "{:?}", all.symbols);
    let total: f64 = all.images.iter().map(|e| e.share_pct).sum();
    assert!((total - 100.0).abs() < 1e-6, "image shares add up to {total}");
}

#[test]
fn dropping_a_recording_leaves_no_perf_behind() {
    let Some(perf) = usable_perf() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rec = Recording::start(&perf, dir.path(), FREQ_HZ, CallGraph::Fp).unwrap();
    rec.enable().unwrap();
    let pid = rec.pid();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    drop(rec);
    // Reaped, not merely killed: a zombie would still have a /proc entry.
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "perf {pid} is still there");
    assert!(!dir.path().join("perf.ctl").exists());
}

#[test]
fn a_recording_without_a_window_reports_no_samples() {
    let Some(perf) = usable_perf() else { return };
    let dir = tempfile::tempdir().unwrap();
    let rec = Recording::start(&perf, dir.path(), FREQ_HZ, CallGraph::Fp).unwrap();
    let data = rec.finish().unwrap();
    let profile = report(&perf, &data, 10).unwrap();
    assert_eq!(profile.samples, 0);
    assert!(profile.images.is_empty() && profile.symbols.is_empty());
}

#[test]
fn a_count_covers_only_the_window() {
    let Some(perf) = usable_perf() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut count = Counting::start(&perf, dir.path()).unwrap();
    count.enable().unwrap();
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(1)); // context switches, at least these
    }
    count.disable().unwrap();
    let counters = count.finish().unwrap();
    let names: Vec<&str> = counters.iter().map(|c| c.event.as_str()).collect();
    assert_eq!(names, [&HARDWARE[..], &SOFTWARE[..]].concat());
    let switches = counters.iter().find(|c| c.event == "context-switches").unwrap().count;
    assert!(switches.is_some_and(|n| n >= 50.0), "{counters:?}");
    // A count never switched on has nothing.
    let idle = Counting::start(&perf, &dir.path().join("idle")).unwrap().finish().unwrap();
    assert!(idle.iter().all(|c| c.count.is_none()), "{idle:?}");
}

#[test]
fn call_chains_fold_from_a_real_recording() {
    let Some(perf) = usable_perf() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rec = Recording::start(&perf, dir.path(), FREQ_HZ, CallGraph::Fp).unwrap();
    rec.enable().unwrap();
    busy_sampled(Duration::from_millis(300));
    rec.disable().unwrap();
    let data = rec.finish().unwrap();
    let folded = fold(&perf, &data).unwrap();
    let flat = report(&perf, &data, 10).unwrap();
    assert_eq!(folded.samples, flat.samples, "perf script and perf report count the same samples");
    let ours: Vec<&String> = folded.stacks.keys().filter(|s| s.contains("::busy_sampled")).collect();
    assert!(!ours.is_empty(), "{:#?}", folded.stacks);
    // The thread's name (the test's, cut to 15 bytes by the kernel) first, the outermost
    // caller next, the sampled function last.
    let thread: String = "profile::live_tests::call_chains".chars().take(15).collect();
    let whole = |s: &&String| {
        s.starts_with(&format!("{thread};")) && s.matches(';').count() >= 2 && s.ends_with("::busy_sampled")
    };
    assert!(ours.iter().any(whole), "with a caller: {ours:#?}");
}
