//! What the runner watches around a cell: /proc/stat, process CPU and the online-CPU count at
//! the measured window's edges, and the 1 s monitor thread (time series and online CPUs).

use racehorse_core::SamplePoint;
use racehorse_engines::WindowHooks;
use racehorse_machine::cpuctl::online_cpus;
use racehorse_machine::ioworkers::{IoWorkerCpu, IoWorkers};
use racehorse_machine::procstat::{read_stat, user_hz, StatSnapshot};
use racehorse_machine::rusage::{process_cpu, CpuTime};
use racehorse_machine::sampler::{point, RawSample};
use racehorse_machine::tenants::{self, ProcSnapshot};
use racehorse_machine::SysRoot;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// /proc/stat and process CPU at the window's edges, with when they were taken and how many
/// CPUs were online then.
#[derive(Default)]
pub(crate) struct Edges {
    pub start: Option<(StatSnapshot, CpuTime)>,
    pub end: Option<(StatSnapshot, CpuTime)>,
    pub online: OnlineReadings,
    pub window: (Option<Instant>, Option<Instant>),
    /// Every process at the start and at the end (who else used the CPU in the window).
    pub procs: (Option<ProcSnapshot>, Option<ProcSnapshot>),
    /// racehorse's io_uring kernel workers at the start and at the end.
    pub io_workers: (Option<IoWorkers>, Option<IoWorkers>),
}

impl Edges {
    /// What racehorse's io_uring workers used in the window.
    pub fn io_worker_cpu(&self) -> Option<IoWorkerCpu> {
        let (Some(a), Some(b)) = &self.io_workers else { return None };
        Some(b.since(a))
    }
}

pub(crate) struct EdgeHooks {
    pub root: SysRoot,
    pub edges: Arc<Mutex<Edges>>,
}

fn online_count(root: &SysRoot) -> Option<u32> {
    online_cpus(root).ok().map(|v| v.len() as u32)
}

impl EdgeHooks {
    /// Reads the edge. The process scan (about a millisecond) is taken outside the /proc/stat
    /// readings, so its own cost stays out of the window's CPU figures.
    fn snap(&self, start: bool) {
        let me = std::process::id();
        let procs_before = start.then(|| tenants::snapshot(&self.root, me));
        let s = read_stat(&self.root).ok().map(|s| (s, process_cpu()));
        let io = Some(IoWorkers::read(&self.root, me, user_hz()));
        let now = Instant::now();
        let procs = procs_before.or_else(|| Some(tenants::snapshot(&self.root, me)));
        let n = online_count(&self.root);
        let mut e = self.edges.lock().unwrap_or_else(|e| e.into_inner());
        if start {
            e.start = s;
            e.window.0 = Some(now);
            e.procs.0 = procs;
            e.io_workers.0 = io;
        } else {
            e.end = s;
            e.window.1 = Some(now);
            e.procs.1 = procs;
            e.io_workers.1 = io;
        }
        e.online.extend(n.map(|n| (now, n)));
    }
}

impl WindowHooks for EdgeHooks {
    fn measure_started(&self) {
        self.snap(true);
    }
    fn measure_ended(&self) {
        self.snap(false);
    }
}

/// The mean number of online CPUs over the window, from the edges and the monitor's 1 s
/// readings inside it. (Not from /proc/stat: an offline CPU's idle time jumps when it comes
/// and goes, so tick sums do not count CPUs.)
pub(crate) fn cpus_online_mean(edges: &Edges, monitor: &[(Instant, u32)]) -> Option<f64> {
    let inside = online_inside(edges, monitor);
    (!inside.is_empty()).then(|| inside.iter().map(|&n| f64::from(n)).sum::<f64>() / inside.len() as f64)
}

/// The online-CPU counts read inside the window (edges and monitor); empty without a window.
pub(crate) fn online_inside(edges: &Edges, monitor: &[(Instant, u32)]) -> Vec<u32> {
    let (Some(t0), Some(t1)) = edges.window else { return Vec::new() };
    edges.online.iter().chain(monitor).filter(|(t, _)| *t >= t0 && *t <= t1).map(|(_, n)| *n).collect()
}

/// When and how many CPUs were online.
pub(crate) type OnlineReadings = Vec<(Instant, u32)>;

/// The 1 s monitor: a thread reading /proc (and the online CPUs) until told to stop.
pub(crate) struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<(Vec<SamplePoint>, OnlineReadings)>,
}

impl Sampler {
    pub fn start(root: SysRoot, interval: Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let hz = user_hz();
            let origin = Instant::now();
            let (mut points, mut online) = (Vec::new(), Vec::new());
            let mut prev = RawSample::read(&root).ok();
            let mut last = Instant::now();
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50).min(interval));
                if last.elapsed() < interval {
                    continue;
                }
                let now = Instant::now();
                let cur = RawSample::read(&root).ok();
                if let (Some(p), Some(c)) = (&prev, &cur) {
                    let secs = now.duration_since(last).as_secs_f64();
                    let t_ms = u64::try_from(origin.elapsed().as_millis()).unwrap_or(u64::MAX);
                    points.push(point(p, c, hz, secs, t_ms));
                }
                online.extend(online_count(&root).map(|n| (now, n)));
                prev = cur;
                last = now;
            }
            (points, online)
        });
        Sampler { stop, handle }
    }

    /// The time series and the online-CPU readings.
    pub fn finish(self) -> (Vec<SamplePoint>, OnlineReadings) {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_counts_only_readings_inside_the_window() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let edges = Edges {
            online: vec![(at(1000), 2), (at(5000), 1)],
            window: (Some(at(1000)), Some(at(5000))),
            ..Edges::default()
        };
        let monitor = [(at(0), 8), (at(2000), 1), (at(3000), 1), (at(4000), 2), (at(6000), 8)];
        assert_eq!(cpus_online_mean(&edges, &monitor), Some(7.0 / 5.0));
        assert_eq!(cpus_online_mean(&Edges::default(), &monitor), None, "no window");
    }
}
