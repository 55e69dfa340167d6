//! The measurement window of a cell: phase (warmup → measure → stop), the clock, and the
//! hooks through which the runner snapshots CPU counters exactly at t0 and t1.

use racehorse_core::Nanos;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::EngineError;

/// Where a cell is in its lifecycle. Workers count units only in `Measure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Warmup,
    Measure,
    Stop,
}

/// Time source; a fake one makes the pipeline testable with no timing noise.
pub trait Clock: Send + Sync {
    fn now(&self) -> Nanos;
    fn sleep(&self, d: Duration);
}

/// The monotonic clock.
pub struct RealClock {
    origin: Instant,
}

impl Default for RealClock {
    fn default() -> Self {
        RealClock { origin: Instant::now() }
    }
}

impl Clock for RealClock {
    fn now(&self) -> Nanos {
        Nanos::from_duration(self.origin.elapsed())
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// A clock that only moves when slept on: sleeping advances it instantly.
#[derive(Default)]
pub struct FakeClock {
    now_ns: AtomicU64,
}

impl Clock for FakeClock {
    fn now(&self) -> Nanos {
        Nanos(self.now_ns.load(Ordering::SeqCst))
    }
    fn sleep(&self, d: Duration) {
        self.now_ns.fetch_add(Nanos::from_duration(d).0, Ordering::SeqCst);
    }
}

/// Called by [`Control`] at the window's edges; the runner snapshots /proc/stat there.
pub trait WindowHooks: Send + Sync {
    fn measure_started(&self) {}
    fn measure_ended(&self) {}
}

struct NoHooks;
impl WindowHooks for NoHooks {}

/// Shared between the runner, the engine and its workers for one cell.
pub struct Control {
    phase: AtomicU8,
    pub warmup: Duration,
    pub runtime: Duration,
    clock: Arc<dyn Clock>,
    hooks: Box<dyn WindowHooks>,
    abort: Arc<AtomicBool>,
    window: Mutex<(Option<Nanos>, Option<Nanos>)>,
}

/// Granularity of sleeps, so that Ctrl-C is noticed within a second.
const SLICE: Duration = Duration::from_millis(100);

impl Control {
    pub fn new(
        warmup: Duration,
        runtime: Duration,
        clock: Arc<dyn Clock>,
        hooks: Box<dyn WindowHooks>,
        abort: Arc<AtomicBool>,
    ) -> Self {
        Control {
            phase: AtomicU8::new(0),
            warmup,
            runtime,
            clock,
            hooks,
            abort,
            window: Mutex::new((None, None)),
        }
    }

    /// A control with no hooks and a fresh abort flag (tests, tools).
    pub fn simple(warmup: Duration, runtime: Duration, clock: Arc<dyn Clock>) -> Self {
        Self::new(warmup, runtime, clock, Box::new(NoHooks), Arc::new(AtomicBool::new(false)))
    }

    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Acquire) {
            0 => Phase::Warmup,
            1 => Phase::Measure,
            _ => Phase::Stop,
        }
    }

    pub fn measuring(&self) -> bool {
        self.phase() == Phase::Measure
    }

    /// True once the window has closed or the run was interrupted: workers should finish.
    pub fn should_stop(&self) -> bool {
        self.phase() == Phase::Stop || self.aborted()
    }

    pub fn aborted(&self) -> bool {
        self.abort.load(Ordering::Relaxed)
    }

    pub fn now(&self) -> Nanos {
        self.clock.now()
    }

    pub fn clock(&self) -> &dyn Clock {
        self.clock.as_ref()
    }

    /// Opens the measured window: hooks first (CPU snapshot), then t0, then the phase flips.
    pub fn begin_measure(&self) {
        self.hooks.measure_started();
        self.lock_window().0 = Some(self.clock.now());
        self.phase.store(1, Ordering::Release);
    }

    /// Closes the measured window: the phase flips, t1 is taken, then the hooks run.
    pub fn end_measure(&self) {
        self.phase.store(2, Ordering::Release);
        self.lock_window().1 = Some(self.clock.now());
        self.hooks.measure_ended();
    }

    /// Stops the workers without a window (error paths).
    pub fn stop(&self) {
        self.phase.store(2, Ordering::Release);
    }

    /// The measured window's length, if it opened and closed.
    pub fn window(&self) -> Option<Nanos> {
        match *self.lock_window() {
            (Some(t0), Some(t1)) => Some(Nanos(t1.0.saturating_sub(t0.0))),
            _ => None,
        }
    }

    fn lock_window(&self) -> std::sync::MutexGuard<'_, (Option<Nanos>, Option<Nanos>)> {
        self.window.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sleeps `d` in slices, returning early with `Interrupted` if the run is aborted.
    pub fn sleep_checked(&self, d: Duration) -> Result<(), EngineError> {
        self.sleep_until_failed(d, &AtomicBool::new(false))
    }

    /// Like [`Control::sleep_checked`], and also returns `Failed` as soon as `failed` is set
    /// (a worker hit a fatal error, e.g. a full disk), so the cell ends promptly.
    fn sleep_until_failed(&self, d: Duration, failed: &AtomicBool) -> Result<(), EngineError> {
        let mut left = d;
        loop {
            if self.aborted() {
                return Err(EngineError::Interrupted);
            }
            if failed.load(Ordering::Relaxed) {
                return Err(EngineError::Failed("a worker failed".into()));
            }
            if left.is_zero() {
                return Ok(());
            }
            let step = left.min(SLICE);
            self.clock.sleep(step);
            left -= step;
        }
    }

    /// The whole window for native engines: warmup, then the measured interval, then stop.
    /// Workers must already be running. On interrupt the phase is set to Stop.
    pub fn drive_window(&self) -> Result<(), EngineError> {
        self.drive_window_until_failed(&AtomicBool::new(false))
    }

    /// [`Control::drive_window`] that ends early (phase Stop, `Failed`) once `failed` is set.
    pub fn drive_window_until_failed(&self, failed: &AtomicBool) -> Result<(), EngineError> {
        self.drive_window_observed(failed, &mut |_| {})
    }

    /// [`Control::drive_window_until_failed`] that calls `at_edge(Phase::Measure)` just before
    /// the window opens and `at_edge(Phase::Stop)` just after it closes, for engines that take
    /// their own system-wide readings (e.g. /proc/vmstat) at the window's edges.
    pub fn drive_window_observed(
        &self,
        failed: &AtomicBool,
        at_edge: &mut dyn FnMut(Phase),
    ) -> Result<(), EngineError> {
        let res = self.sleep_until_failed(self.warmup, failed).and_then(|()| {
            at_edge(Phase::Measure);
            self.begin_measure();
            self.sleep_until_failed(self.runtime, failed)
        });
        match res {
            Ok(()) => {
                self.end_measure();
                at_edge(Phase::Stop);
                Ok(())
            }
            Err(e) => {
                self.stop();
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_clock_window_is_exact() {
        let ctl =
            Control::simple(Duration::from_secs(2), Duration::from_secs(5), Arc::new(FakeClock::default()));
        assert_eq!(ctl.phase(), Phase::Warmup);
        ctl.drive_window().unwrap();
        assert_eq!(ctl.phase(), Phase::Stop);
        assert_eq!(ctl.window(), Some(Nanos(5_000_000_000)));
        assert_eq!(ctl.now(), Nanos(7_000_000_000));
    }

    #[test]
    fn abort_interrupts_window() {
        let abort = Arc::new(AtomicBool::new(true));
        let ctl = Control::new(
            Duration::from_secs(1),
            Duration::from_secs(1),
            Arc::new(FakeClock::default()),
            Box::new(NoHooks),
            abort,
        );
        assert!(matches!(ctl.drive_window(), Err(EngineError::Interrupted)));
        assert!(ctl.should_stop());
        assert_eq!(ctl.window(), None);
    }
}
