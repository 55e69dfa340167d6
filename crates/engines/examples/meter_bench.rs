//! The harness's cost per counted operation: `WorkerMeter::count` in a tight loop, with one
//! operation name and with twelve rotating ones (as the file server's loadfile has), in
//! nanoseconds per call, the best of several tries. Usage: cargo run --release -p
//! racehorse-engines --example meter_bench [CALLS]

use racehorse_engines::{Control, FakeClock, Recorder, WorkerMeter};
use std::sync::Arc;
use std::time::{Duration, Instant};

const OPS: [&str; 12] = [
    "NTCreateX",
    "Close",
    "Rename",
    "Unlink",
    "Deltree",
    "Mkdir",
    "Qpathinfo",
    "Qfileinfo",
    "Qfsinfo",
    "Sfileinfo",
    "Find",
    "ReadX",
];

/// Nanoseconds per `count` over `calls` calls cycling through `names`.
fn per_call_ns(names: &[&str], calls: u64) -> f64 {
    let ctl = Control::simple(Duration::ZERO, Duration::from_secs(1), Arc::new(FakeClock::default()));
    let mut meter = WorkerMeter::new();
    meter.tick(&ctl);
    ctl.begin_measure();
    meter.tick(&ctl);
    let start = Instant::now();
    for i in 0..calls {
        let op = names[(i as usize) % names.len()];
        // A latency spread over many buckets, as real operations have.
        meter.count(&ctl, op, 500 + (i * 7919) % 200_000, 1.0, 0, 0);
    }
    let ns = start.elapsed().as_nanos() as f64 / calls as f64;
    meter.finish(&Recorder::new());
    ns
}

fn main() {
    let calls: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(5_000_000);
    for (what, names) in [("1 operation", &OPS[..1]), ("12 operations in turn", &OPS[..])] {
        let best = (0..7).map(|_| per_call_ns(names, calls)).fold(f64::INFINITY, f64::min);
        println!("{what}: {best:.1} ns per counted operation (best of 7, {calls} calls each)");
    }
}
