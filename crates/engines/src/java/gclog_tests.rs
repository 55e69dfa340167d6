//! Tests of the GC log parser: a synthetic log with every kind of line it must tell apart,
//! and logs written by the JDK's four collectors running the java engine's program.

use super::*;

fn fixture(name: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/java/fixtures");
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn pauses_heap_and_collector_are_read_from_their_lines() {
    let log = parse(&fixture("gc_synthetic.log"));
    assert_eq!(log.collector.as_deref(), Some("G1"));
    let pauses: Vec<(f64, f64)> = log.events.iter().filter_map(|e| Some((e.at_ms, e.pause_ms?))).collect();
    assert_eq!(
        pauses,
        [
            (121.0, 2.5),
            (900.0, 4.0),
            (990.0, 1.0),
            (995.0, 0.25),
            (2000.0, 30.0),
            (2500.0, 0.012),
            (2600.0, 1500.0)
        ],
        "concurrent phases and phase details are not pauses"
    );
    let heaps: Vec<u64> = log.events.iter().filter_map(|e| e.heap_after_bytes).collect();
    let mib = 1 << 20;
    assert_eq!(heaps, [3 * mib, 60 * mib, 70 * mib, 70 * mib, 512 << 10, 14 * mib, 512 * mib]);
}

#[test]
fn the_window_sums_only_its_own_collections() {
    let log = parse(&fixture("gc_synthetic.log"));
    let w = log.window(121.0, 1000.0);
    assert_eq!(w.pauses, 3, "the pause logged at t0 belongs to the window before");
    assert!((w.pause_ms - 5.25).abs() < 1e-9 && w.longest_pause_ms == 4.0, "{w:?}");
    assert!((w.heap_after_mib.unwrap() - (60.0 + 70.0 + 70.0) / 3.0).abs() < 1e-9, "{w:?}");
    let none = log.window(3000.0, 4000.0);
    assert_eq!(none, GcSummary::default(), "no collection, no heap figure");
}

#[test]
fn sizes_and_durations_parse_in_their_units() {
    assert_eq!(size_bytes("512K"), Some(512 << 10));
    assert_eq!(size_bytes("3M"), Some(3 << 20));
    assert_eq!(size_bytes("2G"), Some(2 << 30));
    assert_eq!(size_bytes("100B"), Some(100));
    assert_eq!(size_bytes("12"), None);
    assert_eq!(trailing_ms("Pause Young 1M->0M(2M) 2.345ms"), Some(2.345));
    assert_eq!(trailing_ms("Pause Full 1.5s"), Some(1500.0));
    assert_eq!(trailing_ms("Pause Young (Normal)"), None);
    assert_eq!(uptime_ms("6912ms"), Some(6912.0));
    assert_eq!(uptime_ms("6.912s"), Some(6912.0));
    assert_eq!(uptime_ms("gc,phases"), None);
}

#[test]
fn the_four_collectors_logs_are_read() {
    // (fixture, collector, pauses, their total ms, the longest ms, collections with a heap
    // figure) — counted from the files by hand (a Python one-liner), not by this parser.
    let cases = [
        ("gc_serial.log", "Serial", 12, 2065.282, 599.707, 12),
        ("gc_parallel.log", "Parallel", 9, 1543.301, 469.62, 9),
        ("gc_g1.log", "G1", 21, 906.611, 114.206, 21),
        ("gc_z.log", "The Z Garbage Collector", 25, 0.406, 0.035, 8),
    ];
    for (file, collector, pauses, total_ms, longest_ms, heaps) in cases {
        let log = parse(&fixture(file));
        assert_eq!(log.collector.as_deref(), Some(collector), "{file}");
        let all = log.window(0.0, f64::MAX);
        assert_eq!(all.pauses, pauses, "{file}");
        assert!((all.pause_ms - total_ms).abs() < 1e-6, "{file}: {}", all.pause_ms);
        assert!((all.longest_pause_ms - longest_ms).abs() < 1e-9, "{file}: {}", all.longest_pause_ms);
        assert_eq!(log.events.iter().filter(|e| e.heap_after_bytes.is_some()).count(), heaps, "{file}");
    }
    // Serial's full collections: their phases are not pauses of their own.
    let serial = parse(&fixture("gc_serial.log")).window(4200.0, 5000.0);
    assert_eq!((serial.pauses, serial.longest_pause_ms), (3, 322.691));
    assert!((serial.heap_after_mib.unwrap() - (34.0 + 51.0 + 36.0) / 3.0).abs() < 1e-9);
}
