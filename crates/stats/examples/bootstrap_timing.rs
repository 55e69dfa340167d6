//! Times the bootstrap ratio CI on 5 + 5 values (2000 resamples): 1000 calls, median per call.
//!
//! Run with `cargo run --release -p racehorse-stats --example bootstrap_timing`.

use racehorse_stats::{ratio_ci, ratio_ci_welch, CiMethod};
use std::hint::black_box;
use std::time::{Duration, Instant};

const CALLS: usize = 1000;

fn median_per_call(mut f: impl FnMut(usize)) -> Duration {
    let mut times: Vec<Duration> = (0..CALLS)
        .map(|i| {
            let start = Instant::now();
            f(i);
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[CALLS / 2]
}

fn main() {
    let base = [100.0, 103.0, 98.0, 101.0, 99.5];
    let new = [104.0, 99.0, 107.0, 102.0, 105.5];
    let boot = median_per_call(|i| {
        // Vary one value so each call hashes to a different seed.
        let mut b = base;
        b[0] += i as f64 * 1e-9;
        black_box(ratio_ci(black_box(&b), black_box(&new), 0.95, CiMethod::Bootstrap));
    });
    let welch = median_per_call(|_| {
        black_box(ratio_ci_welch(black_box(&base), black_box(&new), 0.95));
    });
    println!("bootstrap (2000 resamples, 5+5 values): median {boot:?} per call over {CALLS} calls");
    println!("welch (5+5 values): median {welch:?} per call over {CALLS} calls");
}
