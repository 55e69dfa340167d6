//! Counting inside the window: each worker keeps a private [`WorkerMeter`] (no sharing on the
//! hot path) and submits it once at the end; the [`Recorder`] adds them up.

use crate::control::{Control, Phase};
use racehorse_core::{DenseHistogram, LatencyHistogram, WorkloadCpu};
use racehorse_machine::rusage::{thread_cpu, CpuTime};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// What one worker counted inside the window.
#[derive(Debug, Clone, Default)]
pub struct WorkerStats {
    pub units: f64,
    pub ops: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub latencies: BTreeMap<String, LatencyHistogram>,
    /// The worker thread's own CPU over the window.
    pub cpu: CpuTime,
}

/// The sum over all workers, plus engine-level figures.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub units: f64,
    pub ops: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub latencies: BTreeMap<String, LatencyHistogram>,
    pub workload_cpu: WorkloadCpu,
    pub extra: BTreeMap<String, f64>,
    /// Figures the engine found below their resolution: name → why (see
    /// [`racehorse_core::CellQuality::below_resolution`]).
    pub below_resolution: BTreeMap<String, String>,
    /// What the engine itself set up for the cell that is not a number (setting → value,
    /// e.g. `cc version`); the runner adds them to the cell's settings.
    pub settings: BTreeMap<String, String>,
}

/// Collects worker submissions for one cell.
#[derive(Default)]
pub struct Recorder {
    totals: Mutex<Totals>,
}

impl Recorder {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Totals> {
        self.totals.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds one worker's counts; its thread CPU counts as workload CPU ("threads" method).
    pub fn submit(&self, w: WorkerStats) {
        let mut t = self.lock();
        t.units += w.units;
        t.ops += w.ops;
        t.bytes_read += w.bytes_read;
        t.bytes_written += w.bytes_written;
        for (op, h) in &w.latencies {
            t.latencies.entry(op.clone()).or_default().merge(h);
        }
        t.workload_cpu.user_s += w.cpu.user_s;
        t.workload_cpu.kernel_s += w.cpu.kernel_s;
        t.workload_cpu.method = racehorse_core::CpuMethod::Threads;
    }

    /// Sets the workload CPU when it is measured another way (children, cgroup).
    pub fn set_workload_cpu(&self, cpu: WorkloadCpu) {
        self.lock().workload_cpu = cpu;
    }

    /// Records an engine-specific figure (e.g. the reference tool's own result).
    pub fn set_extra(&self, name: &str, value: f64) {
        self.lock().extra.insert(name.to_string(), value);
    }

    /// Records a setting the engine chose for the cell (e.g. the compiler that built its
    /// kernels); stored with the variant's settings (`CellResult::settings`).
    pub fn set_setting(&self, name: &str, value: impl Into<String>) {
        self.lock().settings.insert(name.to_string(), value.into());
    }

    /// Marks a figure as below its resolution (`racehorse_core::quality::THROUGHPUT`,
    /// `latency OP`, …): it is stored with the reason and never shown as a plain number.
    /// Keep its raw inputs with [`Recorder::set_extra`].
    pub fn below_resolution(&self, name: &str, why: impl Into<String>) {
        self.lock().below_resolution.insert(name.to_string(), why.into());
    }

    pub fn totals(&self) -> Totals {
        self.lock().clone()
    }
}

/// A worker's private counter. Call [`WorkerMeter::tick`] between operations and
/// [`WorkerMeter::count`] after each; only operations that end inside the window count.
///
/// Latencies go into [`OpLatencies`] and become the stored histograms when the worker
/// finishes: no map lookup or allocation per operation.
pub struct WorkerMeter {
    stats: WorkerStats,
    measuring: bool,
    cpu_start: Option<CpuTime>,
    latencies: OpLatencies,
}

/// Latency histograms by operation name for a hot loop: a flat bucket array per operation,
/// found by checking the operation recorded last first, then a short scan (engines have a
/// handful of operations). [`OpLatencies::into_map`] gives the stored histograms.
#[derive(Debug, Default)]
pub struct OpLatencies {
    ops: Vec<(String, DenseHistogram)>,
    last: usize,
}

impl OpLatencies {
    /// Records one latency of operation `op`.
    #[inline]
    pub fn record(&mut self, op: &str, latency_ns: u64) {
        let i = self.slot(op);
        self.ops[i].1.record(latency_ns);
    }

    #[inline]
    fn slot(&mut self, op: &str) -> usize {
        if self.ops.get(self.last).is_some_and(|(name, _)| name == op) {
            return self.last;
        }
        let i = match self.ops.iter().position(|(name, _)| name == op) {
            Some(i) => i,
            None => {
                self.ops.push((op.to_string(), DenseHistogram::new()));
                self.ops.len() - 1
            }
        };
        self.last = i;
        i
    }

    /// The histograms by operation name, as stored.
    pub fn into_map(self) -> BTreeMap<String, LatencyHistogram> {
        self.ops.into_iter().map(|(op, h)| (op, h.to_histogram())).collect()
    }
}

impl Default for WorkerMeter {
    fn default() -> Self {
        Self::new()
    }
}

impl WorkerMeter {
    pub fn new() -> Self {
        WorkerMeter {
            stats: WorkerStats::default(),
            measuring: false,
            cpu_start: None,
            latencies: OpLatencies::default(),
        }
    }

    /// Follows the phase; returns false when the worker should stop.
    pub fn tick(&mut self, ctl: &Control) -> bool {
        match ctl.phase() {
            Phase::Warmup => !ctl.aborted(),
            Phase::Measure => {
                if !self.measuring {
                    self.measuring = true;
                    self.cpu_start = Some(thread_cpu());
                }
                !ctl.aborted()
            }
            Phase::Stop => {
                self.close_window();
                false
            }
        }
    }

    fn close_window(&mut self) {
        if self.measuring {
            self.measuring = false;
            if let Some(start) = self.cpu_start.take() {
                self.stats.cpu = thread_cpu().since(start);
            }
        }
    }

    pub fn measuring(&self) -> bool {
        self.measuring
    }

    /// Counts one finished operation if the window is open.
    pub fn count(&mut self, ctl: &Control, op: &str, latency_ns: u64, units: f64, read: u64, written: u64) {
        if !self.measuring || !ctl.measuring() {
            return;
        }
        let s = &mut self.stats;
        s.units += units;
        s.ops += 1;
        s.bytes_read += read;
        s.bytes_written += written;
        self.latencies.record(op, latency_ns);
    }

    /// Submits the counts to the recorder.
    pub fn finish(mut self, rec: &Recorder) {
        self.close_window();
        for (op, h) in std::mem::take(&mut self.latencies).into_map() {
            self.stats.latencies.entry(op).or_default().merge(&h);
        }
        rec.submit(self.stats);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::FakeClock;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn only_window_operations_count() {
        let ctl = Control::simple(Duration::ZERO, Duration::from_secs(1), Arc::new(FakeClock::default()));
        let rec = Recorder::new();
        let mut m = WorkerMeter::new();
        assert!(m.tick(&ctl));
        m.count(&ctl, "ReadX", 100, 10.0, 10, 0); // warmup: not counted
        ctl.begin_measure();
        assert!(m.tick(&ctl));
        m.count(&ctl, "ReadX", 200, 4096.0, 4096, 0);
        m.count(&ctl, "WriteX", 300, 1.0, 0, 1);
        ctl.end_measure();
        m.count(&ctl, "ReadX", 100, 10.0, 10, 0); // after: not counted
        assert!(!m.tick(&ctl));
        m.finish(&rec);
        let t = rec.totals();
        assert_eq!(t.units, 4097.0);
        assert_eq!(t.ops, 2);
        assert_eq!((t.bytes_read, t.bytes_written), (4096, 1));
        assert_eq!(t.latencies["ReadX"].count, 1);
        assert_eq!(t.workload_cpu.method, racehorse_core::CpuMethod::Threads);
    }
}
