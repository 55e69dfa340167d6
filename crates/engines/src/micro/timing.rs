//! lmbench's timing method (`benchmp`): find an iteration count whose timed interval lasts
//! about ENOUGH, warm up, time TRIES intervals, subtract the clock's and the empty loop's
//! cost per iteration, and take the median (or the minimum, as lat_mem_rd does).

use std::hint::black_box;
use std::time::{Duration, Instant};

/// How to time one benchmark.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Method {
    /// Timed intervals (lmbench: 11).
    pub tries: usize,
    /// Target length of one interval (lmbench: 5-100 ms, auto-picked).
    pub enough: Duration,
    /// Unmeasured time before the intervals.
    pub warmup: Duration,
    /// Report the minimum instead of the median.
    pub minimum: bool,
}

impl Default for Method {
    fn default() -> Self {
        Method {
            tries: 11,
            enough: Duration::from_millis(5),
            warmup: Duration::from_millis(2),
            minimum: false,
        }
    }
}

/// One benchmark's timing.
#[derive(Debug, Clone, PartialEq)]
pub struct Timed {
    /// Nanoseconds per iteration, overheads subtracted: the median (or minimum) of the tries.
    pub ns_per_op: f64,
    /// Iterations per interval.
    pub iterations: u64,
    /// Every try's nanoseconds per iteration, in the order taken.
    pub tries_ns: Vec<f64>,
}

fn interval(f: &mut dyn FnMut(u64), n: u64) -> Duration {
    let t0 = Instant::now();
    f(n);
    t0.elapsed()
}

/// Iterations past which a body is taken to cost nothing per iteration (the x86_64
/// prot_fault baseline does no work at all): calibration stops there.
const MAX_ITERATIONS: u64 = 1 << 40;

/// The iteration count whose interval lasts at least `enough` (doubling, then scaled).
pub fn calibrate(f: &mut dyn FnMut(u64), enough: Duration) -> u64 {
    let mut n = 1u64;
    loop {
        let d = interval(f, n);
        if d >= enough || n >= MAX_ITERATIONS {
            return n;
        }
        if d >= enough / 8 {
            let scaled = n as f64 * enough.as_secs_f64() / d.as_secs_f64().max(1e-9);
            return (scaled.ceil() as u64).max(n + 1);
        }
        n = n.saturating_mul(if d < Duration::from_micros(10) { 16 } else { 2 });
    }
}

/// What the clock costs per reading, in ns (median of 11 × 1000 readings).
pub fn clock_overhead_ns() -> f64 {
    let mut v: Vec<f64> = (0..11)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..1000 {
                black_box(Instant::now());
            }
            t0.elapsed().as_nanos() as f64 / 1000.0
        })
        .collect();
    median(&mut v)
}

/// What an iteration of an empty loop costs, in ns (lmbench's loop overhead).
pub fn loop_overhead_ns() -> f64 {
    let mut empty = |n: u64| {
        for i in 0..n {
            black_box(i);
        }
    };
    let n = calibrate(&mut empty, Duration::from_millis(2));
    let mut v: Vec<f64> = (0..11).map(|_| interval(&mut empty, n).as_nanos() as f64 / n as f64).collect();
    median(&mut v)
}

pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Times `f(n)` (n iterations of the operation) by `m`; `overhead_ns` is subtracted from
/// every iteration (the loop's), the clock's reading cost from every interval.
pub fn time(m: &Method, overhead_ns: f64, f: &mut dyn FnMut(u64)) -> Timed {
    let n = calibrate(f, m.enough);
    let until = Instant::now() + m.warmup;
    while Instant::now() < until {
        f(n.div_ceil(8));
    }
    let clock_ns = clock_overhead_ns();
    let tries_ns: Vec<f64> = (0..m.tries.max(1))
        .map(|_| {
            let ns = interval(f, n).as_nanos() as f64 - clock_ns;
            (ns / n as f64 - overhead_ns).max(0.0)
        })
        .collect();
    let mut sorted = tries_ns.clone();
    let ns_per_op =
        if m.minimum { sorted.iter().copied().fold(f64::INFINITY, f64::min) } else { median(&mut sorted) };
    Timed { ns_per_op, iterations: n, tries_ns }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_sleep_is_timed_per_iteration() {
        let m =
            Method { tries: 3, enough: Duration::from_millis(20), warmup: Duration::ZERO, minimum: false };
        let t = time(&m, 0.0, &mut |n| std::thread::sleep(Duration::from_micros(500) * n as u32));
        assert_eq!(t.tries_ns.len(), 3);
        // A sleep never ends early; on a loaded machine it may overshoot, never by 3x.
        assert!((500_000.0..1_500_000.0).contains(&t.ns_per_op), "about 0.5 ms each: {}", t.ns_per_op);
        assert!(t.iterations >= 20, "the interval reaches ENOUGH: {}", t.iterations);
    }

    #[test]
    fn the_minimum_and_the_median_are_taken_from_the_tries() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
        let m = Method { tries: 5, minimum: true, ..Method::default() };
        let t = time(&m, 0.0, &mut |n| {
            for i in 0..n {
                black_box(i);
            }
        });
        let lowest = t.tries_ns.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(t.ns_per_op, lowest);
    }

    #[test]
    fn a_body_that_costs_nothing_stops_calibrating() {
        let n = calibrate(&mut |_| {}, Duration::from_millis(5));
        assert!(n >= MAX_ITERATIONS, "stopped at the cap, not overflowed: {n}");
    }

    #[test]
    fn overheads_are_small_and_positive() {
        let c = clock_overhead_ns();
        let l = loop_overhead_ns();
        assert!(c > 0.0 && c < 10_000.0, "clock {c} ns");
        assert!((0.0..100.0).contains(&l), "loop {l} ns");
    }
}
