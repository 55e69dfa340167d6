//! lmbench's timing method (`benchmp`): find an iteration count whose timed interval lasts
//! about ENOUGH, warm up, time TRIES intervals, subtract the clock's cost per interval, and
//! take the median (or the minimum, as lat_mem_rd does) with the tries' spread, so that a
//! later subtraction (the empty loop's cost, a baseline) can tell a figure from noise.

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

impl Method {
    /// The method with intervals long enough that the tries together last `total` (an
    /// interval never gets shorter than `enough`): CPU per operation then comes from a
    /// window of many /proc/stat ticks rather than a handful.
    pub fn stretched(self, total: Duration) -> Method {
        let per_try = total / u32::try_from(self.tries.max(1)).unwrap_or(u32::MAX);
        Method { enough: self.enough.max(per_try), ..self }
    }
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
    /// Nanoseconds per iteration, the clock's cost subtracted (nothing else, and never
    /// clamped): the median (or minimum) of the tries.
    pub ns_per_op: f64,
    /// Iterations per interval.
    pub iterations: u64,
    /// Every try's nanoseconds per iteration, in the order taken.
    pub tries_ns: Vec<f64>,
}

impl Timed {
    /// How far the tries stray: their median absolute deviation from their median, in ns
    /// per iteration (0 for a single try).
    pub fn spread_ns(&self) -> f64 {
        let mut v = self.tries_ns.clone();
        let mid = median(&mut v);
        let mut dev: Vec<f64> = v.iter().map(|x| (x - mid).abs()).collect();
        if dev.is_empty() {
            0.0
        } else {
            median(&mut dev)
        }
    }
}

fn interval(f: &mut dyn FnMut(u64), n: u64) -> Duration {
    let t0 = Instant::now();
    f(n);
    t0.elapsed()
}

/// Iterations past which a body is taken to cost nothing per iteration (the x86_64
/// prot_fault baseline does no work at all): calibration stops there.
const MAX_ITERATIONS: u64 = 1 << 40;

/// The iteration count whose interval was measured to last at least `enough` (doubling,
/// then scaled to a tenth over `enough` and measured again: a slow first call, such as an
/// exec's cold start, would otherwise leave intervals far shorter than `enough`).
pub fn calibrate(f: &mut dyn FnMut(u64), enough: Duration) -> u64 {
    let mut n = 1u64;
    loop {
        let d = interval(f, n);
        if d >= enough || n >= MAX_ITERATIONS {
            return n;
        }
        n = if d >= enough / 8 {
            let scaled = n as f64 * 1.1 * enough.as_secs_f64() / d.as_secs_f64().max(1e-9);
            (scaled.ceil() as u64).clamp(n + 1, MAX_ITERATIONS)
        } else {
            n.saturating_mul(if d < Duration::from_micros(10) { 16 } else { 2 })
        };
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

/// What an iteration of an empty loop costs, in ns (lmbench's loop overhead), with its spread.
pub fn loop_overhead() -> Timed {
    let mut empty = |n: u64| {
        for i in 0..n {
            black_box(i);
        }
    };
    let n = calibrate(&mut empty, Duration::from_millis(2));
    let tries_ns: Vec<f64> = (0..11).map(|_| interval(&mut empty, n).as_nanos() as f64 / n as f64).collect();
    let ns_per_op = median(&mut tries_ns.clone());
    Timed { ns_per_op, iterations: n, tries_ns }
}

pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Times `f(n)` (n iterations of the operation) by `m`; the clock's reading cost is
/// subtracted from every interval. Other overheads (the loop's, a baseline's) are the
/// caller's to subtract, with the spreads in hand (see `record::latency`).
pub fn time(m: &Method, f: &mut dyn FnMut(u64)) -> Timed {
    let n = calibrate(f, m.enough);
    let until = Instant::now() + m.warmup;
    while Instant::now() < until {
        f(n.div_ceil(8));
    }
    let clock_ns = clock_overhead_ns();
    let tries_ns: Vec<f64> = (0..m.tries.max(1))
        .map(|_| {
            let ns = interval(f, n).as_nanos() as f64 - clock_ns;
            ns / n as f64
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
        let t = time(&m, &mut |n| std::thread::sleep(Duration::from_micros(500) * n as u32));
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
        let t = time(&m, &mut |n| {
            for i in 0..n {
                black_box(i);
            }
        });
        let lowest = t.tries_ns.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(t.ns_per_op, lowest);
    }

    #[test]
    fn a_slow_first_call_does_not_shorten_the_intervals() {
        let mut first = true;
        let mut body = |n: u64| {
            let cold = if std::mem::take(&mut first) { Duration::from_millis(8) } else { Duration::ZERO };
            std::thread::sleep(cold + Duration::from_micros(100) * n as u32);
        };
        let n = calibrate(&mut body, Duration::from_millis(10));
        assert!(n >= 100, "10 ms of 0.1 ms calls, not 10 / 8.1 of them: {n}");
    }

    #[test]
    fn a_body_that_costs_nothing_stops_calibrating() {
        let n = calibrate(&mut |_| {}, Duration::from_millis(5));
        assert!(n >= MAX_ITERATIONS, "stopped at the cap, not overflowed: {n}");
    }

    #[test]
    fn overheads_are_small_and_positive() {
        let c = clock_overhead_ns();
        let l = loop_overhead();
        assert!(c > 0.0 && c < 10_000.0, "clock {c} ns");
        assert!((0.0..100.0).contains(&l.ns_per_op), "loop {} ns", l.ns_per_op);
        assert_eq!(l.tries_ns.len(), 11);
        assert!(l.spread_ns() >= 0.0 && l.spread_ns() < l.ns_per_op.max(1.0));
    }

    #[test]
    fn the_spread_is_the_median_absolute_deviation() {
        let t = |tries_ns: Vec<f64>| Timed { ns_per_op: 0.0, iterations: 1, tries_ns };
        assert_eq!(t(vec![10.0, 11.0, 9.0, 10.0, 30.0]).spread_ns(), 1.0, "one outlier does not count");
        assert_eq!(t(vec![5.0]).spread_ns(), 0.0);
        assert_eq!(t(vec![]).spread_ns(), 0.0);
    }

    #[test]
    fn a_stretched_method_makes_the_tries_last_the_total() {
        let m = Method { tries: 11, enough: Duration::from_millis(5), ..Method::default() };
        let s = m.stretched(Duration::from_millis(500));
        assert!(s.enough * 11 >= Duration::from_millis(499), "{:?}", s.enough);
        assert_eq!(s.tries, 11);
        assert_eq!(m.stretched(Duration::ZERO), m, "never shorter than enough");
    }
}
