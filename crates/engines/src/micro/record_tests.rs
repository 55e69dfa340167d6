//! Tests of the micro figures: baselines come off as lmbench takes them, and a subtraction
//! that leaves nothing clear of its noise is marked below resolution instead of a rate.

use super::*;
use crate::control::FakeClock;
use std::sync::Arc;
use std::time::Duration;

/// A timing whose median is `ns` and whose spread (median absolute deviation) is `spread`.
fn timed_at(ns: f64, spread: f64) -> Timed {
    Timed { ns_per_op: ns, iterations: 1000, tries_ns: vec![ns - spread, ns, ns + spread] }
}

fn exact(ns: f64) -> Timed {
    timed_at(ns, 0.0)
}

#[test]
fn baselines_come_off_as_lmbench_takes_them() {
    let no_loop = exact(0.0);
    let net_of = |bench: &str, t: f64, b: &[f64]| {
        let bases: Vec<Timed> = b.iter().map(|v| exact(*v)).collect();
        net(bench, &exact(t), &bases, &no_loop).net_ns
    };
    assert_eq!(net_of("null", 5.0, &[]), 5.0);
    assert_eq!(net_of("sig_catch", 5.0, &[1.0]), 4.0);
    assert_eq!(net_of("prot_fault", 10.0, &[0.5, 4.0, 1.0]), 6.5, "fault − own − (catch − send)");
    assert_eq!(net_of("ctx", 10.0, &[2.0]), 3.0, "half a round trip less one write + read");
    // The loop comes off once per operation the weights leave over.
    let with_loop = |bench: &str, b: &[f64]| {
        let bases: Vec<Timed> = b.iter().map(|v| exact(*v)).collect();
        net(bench, &exact(10.0), &bases, &exact(1.0)).net_ns
    };
    assert_eq!(with_loop("null", &[]), 9.0);
    assert_eq!(with_loop("sig_catch", &[2.0]), 8.0, "both figures hold one loop");
    assert_eq!(with_loop("ctx", &[2.0]), 3.5, "half a loop in the half round trip, one in the pipe");
}

/// Regression: prot_fault timed 2.14 µs gross against 7.82 µs of baselines; the negative
/// net was clamped to 1e-3 ns and stored as 1e12 operations per second.
#[test]
fn a_fault_faster_than_its_baselines_is_below_resolution_not_a_huge_rate() {
    // own 0.5 + catch 8000 − send 180.5 = 7820 ns; the loop cancels out (1 − 1 − 1 + 1).
    let bases = [exact(0.5), exact(8000.0), exact(180.5)];
    let out = latency_outcome("prot_fault", &exact(2140.0), &bases, &exact(0.3));
    assert_eq!(out.per_s, 0.0, "no rate at all, least of all 1e12");
    assert!(out.below.contains_key(THROUGHPUT), "{:?}", out.below);
    let why = &out.below[&latency_mark("prot_fault")];
    assert!(why.contains("gross 2140.0 ns") && why.contains("overhead 7820.0 ns"), "{why}");
    assert!(!out.extra.contains_key("latency_us"), "no plain number");
    assert_eq!(out.extra["gross_ns"], 2140.0);
    assert_eq!(out.extra["overhead_ns"], 7820.0);
}

#[test]
fn a_net_within_the_noise_of_the_subtraction_is_below_resolution() {
    // 100 ns left, but the subtracted baseline strays by 40 ns: 3 × 40 ns of noise is more.
    let out = latency_outcome("sig_catch", &timed_at(1000.0, 20.0), &[timed_at(900.0, 40.0)], &exact(0.0));
    assert!(out.below.contains_key(THROUGHPUT) && out.below.contains_key("latency sig_catch"));
    // 3 ns left of 1 µs subtracted: under 5% of the overhead, however quiet the tries.
    let out = latency_outcome("sig_catch", &exact(1003.0), &[exact(1000.0)], &exact(0.0));
    assert!(out.below.contains_key(THROUGHPUT), "{:?}", out.extra);
}

#[test]
fn a_net_clear_of_the_noise_is_a_plain_latency() {
    let out = latency_outcome("sig_catch", &timed_at(1000.0, 5.0), &[timed_at(200.0, 5.0)], &exact(0.0));
    assert!(out.below.is_empty(), "{:?}", out.below);
    assert_eq!(out.extra["latency_us"], 0.8);
    assert_eq!(out.per_s, 1e9 / 800.0);
    let n = net("sig_catch", &timed_at(1000.0, 5.0), &[timed_at(200.0, 5.0)], &timed_at(1.0, 0.5));
    assert_eq!(
        n.noise_ns, 5.0,
        "the baseline's spread; the body's is not the overhead's, the loop cancels out"
    );
}

#[test]
fn a_figure_below_resolution_counts_no_units_and_reaches_the_recorder() {
    let ctl = Control::simple(Duration::ZERO, Duration::from_secs(1), Arc::new(FakeClock::default()));
    ctl.begin_measure();
    ctl.end_measure();
    let rec = Recorder::new();
    let bases = [exact(0.5), exact(8000.0), exact(180.5)];
    latency_outcome("prot_fault", &exact(2140.0), &bases, &exact(0.3)).submit(&ctl, &rec);
    let t = rec.totals();
    assert_eq!(t.units, 0.0, "so there is no CPU per unit either");
    assert!(t.below_resolution.contains_key(THROUGHPUT));
    assert!(t.below_resolution.contains_key("latency prot_fault"));
    assert_eq!(t.extra["overhead_ns"], 7820.0);
}

#[test]
fn a_timing_that_is_not_positive_is_no_rate() {
    let out = rate(-0.2, 1.0, BTreeMap::new());
    assert_eq!(out.per_s, 0.0);
    assert!(out.below.contains_key(THROUGHPUT));
    assert_eq!(rate(2.0, 10.0, BTreeMap::new()).per_s, 5e9);
}
