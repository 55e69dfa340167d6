//! Tests of cache-level discovery, working-set sizes and latency-curve boundaries.

use super::*;
use proptest::prelude::*;
use std::path::Path;

/// Writes `cpu<cpu>/cache/index<i>/{level,type,size,coherency_line_size}` under `dir/sys`; a field
/// given as None is left out.
fn write_index(dir: &Path, cpu: u32, i: usize, fields: [Option<&str>; 4]) {
    let idx = dir.join(format!("sys/devices/system/cpu/cpu{cpu}/cache/index{i}"));
    std::fs::create_dir_all(&idx).unwrap();
    for (name, value) in ["level", "type", "size", "coherency_line_size"].into_iter().zip(fields) {
        if let Some(v) = value {
            std::fs::write(idx.join(name), format!("{v}\n")).unwrap();
        }
    }
}

/// A typical x86 layout: L1d + L1i 32K, L2 512K, L3 32M, listed out of order.
fn epyc_fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    write_index(p, 0, 3, [Some("3"), Some("Unified"), Some("32768K"), Some("64")]);
    write_index(p, 0, 0, [Some("1"), Some("Data"), Some("32K"), Some("64")]);
    write_index(p, 0, 1, [Some("1"), Some("Instruction"), Some("32K"), Some("64")]);
    write_index(p, 0, 2, [Some("2"), Some("Unified"), Some("512K"), Some("64")]);
    std::fs::write(p.join("sys/devices/system/cpu/cpu0/cache/uevent"), "").unwrap();
    dir
}

fn lv(level: u8, size_bytes: u64) -> CacheLevel {
    CacheLevel { level, size_bytes, line_bytes: 64 }
}

#[test]
fn reads_a_sysfs_tree() {
    let dir = epyc_fixture();
    let got = from_sysfs(&SysRoot::at(dir.path()), 0).unwrap();
    assert_eq!(got, [lv(1, 32 << 10), lv(2, 512 << 10), lv(3, 32 << 20)]);
}

#[test]
fn other_cpu_and_missing_fields() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    write_index(p, 3, 0, [Some("1"), Some("Data"), Some("48K"), None]);
    write_index(p, 3, 1, [Some("2"), Some("Unified"), None, Some("64")]);
    write_index(p, 3, 2, [Some("3"), Some("Unified"), Some("30M"), Some("64")]);
    let got = from_sysfs(&SysRoot::at(p), 3).unwrap();
    let want = [CacheLevel { level: 1, size_bytes: 48 << 10, line_bytes: 0 }, lv(3, 30 << 20)];
    assert_eq!(got, want);
    let err = from_sysfs(&SysRoot::at(p), 0).unwrap_err();
    assert!(err.contains("cpu0/cache"), "{err}");
}

#[test]
fn malformed_values_are_errors() {
    for (field, fields) in [
        ("size", [Some("1"), Some("Data"), Some("lots"), Some("64")]),
        ("level", [Some("one"), Some("Data"), Some("32K"), Some("64")]),
        ("coherency_line_size", [Some("1"), Some("Data"), Some("32K"), Some("x")]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write_index(dir.path(), 0, 0, fields);
        let err = from_sysfs(&SysRoot::at(dir.path()), 0).unwrap_err();
        assert!(err.contains(field), "{err}");
    }
}

#[test]
fn reads_this_machine() {
    let root = SysRoot::host();
    if !root.sys("devices/system/cpu/cpu0/cache").exists() {
        eprintln!("no cache directory in /sys: skipped");
        return;
    }
    let levels = from_sysfs(&root, 0).unwrap();
    for c in &levels {
        eprintln!("L{}: {} (line {} B)", c.level, human_bytes(c.size_bytes), c.line_bytes);
    }
    assert!(!levels.is_empty());
    assert!(levels.windows(2).all(|w| w[0].level <= w[1].level));
    assert!(levels.iter().all(|c| c.size_bytes > 0));
}

#[test]
fn size_strings() {
    for (s, want) in [
        ("32K", 32 << 10),
        ("1024K", 1 << 20),
        ("32M", 32 << 20),
        ("1G", 1 << 30),
        ("512", 512),
        (" 48K\n", 48 << 10),
        ("32KB", 32 << 10),
        ("8k", 8 << 10),
    ] {
        assert_eq!(parse_size_bytes(s), Some(want), "{s:?}");
    }
    for s in ["", "K", "-1K", "1.5M", "32 K", "0x20K", "KB", "99999999999999999999G"] {
        assert_eq!(parse_size_bytes(s), None, "{s:?}");
    }
}

#[test]
fn level_names() {
    for l in [Level::L1, Level::L2, Level::L3, Level::L4, Level::Mem] {
        assert_eq!(Level::parse(l.name()), Some(l));
    }
    assert_eq!(Level::parse("L2"), Some(Level::L2));
    assert_eq!(Level::parse("l5"), None);
    assert_eq!(Level::parse("ram"), None);
}

#[test]
fn working_sets() {
    let levels = [lv(1, 32 << 10), lv(2, 512 << 10), lv(3, 32 << 20)];
    assert_eq!(working_set(&levels, Level::L1), Ok(16 << 10));
    assert_eq!(working_set(&levels, Level::L2), Ok(256 << 10));
    assert_eq!(working_set(&levels, Level::L3), Ok(16 << 20));
    assert_eq!(working_set(&levels, Level::Mem), Ok(256 << 20));
    let err = working_set(&levels, Level::L4).unwrap_err();
    assert!(err.contains("L4") && err.contains("L1, L2, L3"), "{err}");
}

#[test]
fn working_set_when_half_does_not_clear_the_level_below() {
    // L2 1.25 MiB over a 48 KiB L1 is fine; an L3 of 2 MiB over that L2 is not: halfway instead.
    let levels = [lv(1, 48 << 10), lv(2, 1280 << 10), lv(3, 2 << 20)];
    assert_eq!(working_set(&levels, Level::L2), Ok(640 << 10));
    assert_eq!(working_set(&levels, Level::L3), Ok((1280 + 2048) << 9));
    // Odd sizes are rounded down to 512 bytes.
    let odd = [lv(1, 1000), lv(2, 1700)];
    assert_eq!(working_set(&odd, Level::L1), Ok(512));
    assert_eq!(working_set(&odd, Level::L2), Ok(1024));
    // Small caches: main memory is at least 64 MiB.
    assert_eq!(working_set(&odd, Level::Mem), Ok(64 << 20));
    assert_eq!(working_set(&[], Level::Mem), Ok(64 << 20));
    assert!(working_set(&[], Level::L1).unwrap_err().contains("none"));
}

/// A synthetic lat_mem_rd curve for 32 KiB / 512 KiB / 32 MiB caches with ramps between levels.
fn epyc_curve() -> Vec<(usize, f64)> {
    super::super::chase::sizes(256 << 20)
        .into_iter()
        .map(|s| {
            let ns = match s {
                s if s <= 32 << 10 => 1.2,
                s if s <= 40 << 10 => 2.0,
                s if s <= 512 << 10 => 3.5,
                s if s <= 640 << 10 => 6.0,
                s if s <= 32 << 20 => 11.0,
                s if s <= 40 << 20 => 40.0,
                s if s <= 48 << 20 => 70.0,
                _ => 95.0,
            };
            (s, ns)
        })
        .collect()
}

#[test]
fn finds_plateau_steps() {
    let b = detect_boundaries(&epyc_curve(), 1.3);
    assert_eq!(b, [32 << 10, 512 << 10, 32 << 20]);
    assert!(cross_check(&[lv(1, 32 << 10), lv(2, 512 << 10), lv(3, 32 << 20)], &b).is_empty());
}

#[test]
fn ignores_a_lone_spike_and_small_wobble() {
    let mut pts: Vec<(usize, f64)> = (1..=40).map(|i| (i * 1024, 1.0 + (i % 3) as f64 * 0.05)).collect();
    pts[10].1 = 9.0;
    assert!(detect_boundaries(&pts, 1.3).is_empty());
    // A step at the very last point counts.
    pts.push((41 * 1024, 5.0));
    assert_eq!(detect_boundaries(&pts, 1.3), [40 * 1024]);
}

#[test]
fn unsorted_and_bad_points() {
    let mut pts = vec![(4096, 1.0), (1024, 1.0), (65536, 3.0), (8192, f64::NAN), (2048, 1.0), (131072, 3.1)];
    pts.push((16384, -1.0));
    assert_eq!(detect_boundaries(&pts, 1.3), [4096]);
    assert!(detect_boundaries(&[], 1.3).is_empty());
    assert!(detect_boundaries(&[(512, 1.0)], 1.3).is_empty());
}

#[test]
fn cross_check_reports_disagreements() {
    let levels = [lv(1, 32 << 10), lv(2, 512 << 10), lv(3, 32 << 20)];
    let msgs = cross_check(&levels, &[32 << 10, 2 << 20]);
    assert_eq!(
        msgs,
        [
            "L2 is 512 KiB in sysfs, the latency curve steps at 2 MiB",
            "L3 is 32 MiB in sysfs, the latency curve steps at 2 MiB"
        ]
    );
    // Within a factor 2 either way agrees.
    assert!(cross_check(&levels, &[16 << 10, 1 << 20, 20 << 20]).is_empty());
    assert_eq!(cross_check(&levels[..1], &[]), ["L1 is 32 KiB in sysfs, the latency curve shows no step"]);
}

#[test]
fn human_sizes() {
    assert_eq!(human_bytes(700), "700 B");
    assert_eq!(human_bytes(32 << 10), "32 KiB");
    assert_eq!(human_bytes(1536 << 10), "1.5 MiB");
    assert_eq!(human_bytes(3 << 30), "3 GiB");
}

proptest! {
    #[test]
    fn boundaries_never_panic_and_come_from_the_input(
        pts in proptest::collection::vec((0usize..1 << 30, proptest::num::f64::ANY), 0..60),
        jump in proptest::num::f64::ANY,
    ) {
        let b = detect_boundaries(&pts, jump);
        prop_assert!(b.windows(2).all(|w| w[0] < w[1]), "sorted: {:?}", b);
        prop_assert!(b.iter().all(|s| pts.iter().any(|p| p.0 == *s)));
    }

    #[test]
    fn sizes_round_trip(n in 0u64..1 << 40, unit in 0usize..4) {
        let (suffix, mult) = [("", 1u64), ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)][unit];
        let want = n.checked_mul(mult);
        prop_assert_eq!(parse_size_bytes(&format!("{n}{suffix}")), want);
    }

    #[test]
    fn size_parsing_never_panics(s in "\\PC{0,12}") {
        let _ = parse_size_bytes(&s);
    }
}
