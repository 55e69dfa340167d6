//! A paced compute cell (`rate`, `qos`): a duty cycle. One worker thread, pinned to one CPU
//! as the unpaced cases are, calls the case's Rust kernel (`reps` repetitions per call, 1 by
//! default) at the cell's pace and sleeps between calls, through the runner's warm-up and
//! measured window. The unit of work is one call; its latency counts from its intended start
//! (`support::pace`), so a call that outlasts its interval delays the next ones and shows in
//! their latencies. Extras: the pacing and QoS figures, `duty_cycle_pct` (the worker's CPU
//! in % of the window: how busy the pace keeps one CPU) and `reps_per_call`.

use super::child;
use super::run::{case, Setup};
use super::telco;
use crate::support::forked::Pinned;
use crate::support::pace::{self, PaceTally, Pacer};
use crate::{Control, EngineError, Recorder, WorkerMeter};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Runs the paced cell of `s` (one case) through the window.
pub(super) fn run(
    s: &Setup,
    telco: Option<&telco::Prepared>,
    ctl: &Control,
    rec: &Recorder,
) -> Result<(), EngineError> {
    let c = case(s.cases.first().copied().unwrap_or_default());
    let reps = s.reps_of(c);
    let tally = PaceTally::default();
    let failed = AtomicBool::new(false);
    let error: Mutex<Option<String>> = Mutex::new(None);
    let driven = std::thread::scope(|scope| {
        scope.spawn(|| {
            let _pin = Pinned::to_last_cpu();
            let mut meter = WorkerMeter::new();
            let mut pacer = Pacer::new(&s.pace, 0, 1, ctl);
            while meter.tick(ctl) && !failed.load(Ordering::Relaxed) {
                let Some(t0) = pacer.next(ctl, &mut meter) else { continue };
                if let Err(e) = child::run_kernel(c.kernel, reps, telco) {
                    error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                    failed.store(true, Ordering::Relaxed);
                    break;
                }
                let ns = pacer.done(ctl, &meter, t0);
                meter.count(ctl, c.name, ns, 1.0, 0, 0);
            }
            meter.finish(rec);
            pacer.finish(&tally);
        });
        ctl.drive_window_until_failed(&failed)
    });
    if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(EngineError::Failed(format!("compute {}: {e}", c.name)));
    }
    driven?;
    let window_s = ctl.window().map_or(0.0, |w| w.as_secs_f64());
    if window_s > 0.0 {
        rec.set_extra("duty_cycle_pct", 100.0 * rec.totals().workload_cpu.total_s() / window_s);
    }
    rec.set_extra("reps_per_call", reps as f64);
    pace::record(rec, &s.pace, &tally, ctl);
    Ok(())
}
