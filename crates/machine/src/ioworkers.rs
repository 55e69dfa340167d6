//! The CPU of a process's io_uring kernel workers (`iou-wrk-TID` for io-wq, `iou-sqp-TID` for
//! SQPOLL). They are tasks of the process that own the ring, so getrusage counts them in the
//! process but never in the submitting thread's `RUSAGE_THREAD`: without them, buffered
//! io_uring I/O that the kernel punts to io-wq would look like harness CPU.
//!
//! They only run in the kernel, so their time is kernel time. It is read in nanoseconds from
//! `/proc/PID/task/TID/schedstat` (the task's run time), or from the clock ticks in its `stat`
//! where the kernel has no schedstat.

use crate::pidstat::PidStat;
use crate::root::SysRoot;
use std::collections::BTreeMap;

/// The comm prefixes of io_uring's worker tasks.
const PREFIXES: [&str; 2] = ["iou-wrk-", "iou-sqp-"];

/// Each live io_uring worker task of one process at one instant: tid → CPU nanoseconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IoWorkers {
    pub cpu_ns: BTreeMap<u32, u64>,
}

/// What the workers used between two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IoWorkerCpu {
    /// Kernel CPU seconds of the workers alive at the later reading, since the earlier one
    /// (all of it for workers started in between).
    pub kernel_s: f64,
    /// Workers seen at both readings or started in between.
    pub workers: u32,
    /// Workers gone by the later reading. io-wq retires a worker after seconds of idling, so
    /// what one used in the interval before it went idle is not in `kernel_s`.
    pub exited: u32,
}

impl IoWorkers {
    /// Reads every io_uring worker task of `pid`; an unreadable task is left out (it may have
    /// just exited), and so is everything when /proc cannot be read.
    pub fn read(root: &SysRoot, pid: u32, user_hz: u64) -> IoWorkers {
        let dir = root.proc(format!("{pid}/task"));
        let Ok(tasks) = std::fs::read_dir(&dir) else { return IoWorkers::default() };
        let mut cpu_ns = BTreeMap::new();
        for task in tasks.flatten() {
            let Some(tid) = task.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            let path = task.path();
            let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
            if !PREFIXES.iter().any(|p| comm.starts_with(p)) {
                continue;
            }
            let ns = std::fs::read_to_string(path.join("schedstat"))
                .ok()
                .and_then(|t| parse_schedstat(&t))
                .or_else(|| {
                    std::fs::read_to_string(path.join("stat")).ok().and_then(|t| stat_ns(&t, user_hz))
                });
            if let Some(ns) = ns {
                cpu_ns.insert(tid, ns);
            }
        }
        IoWorkers { cpu_ns }
    }

    /// The workers' CPU from `earlier` to `self`.
    pub fn since(&self, earlier: &IoWorkers) -> IoWorkerCpu {
        let ns: u64 = self
            .cpu_ns
            .iter()
            .map(|(tid, &now)| now.saturating_sub(earlier.cpu_ns.get(tid).copied().unwrap_or(0)))
            .sum();
        let exited = earlier.cpu_ns.keys().filter(|tid| !self.cpu_ns.contains_key(tid)).count();
        IoWorkerCpu { kernel_s: ns as f64 / 1e9, workers: self.cpu_ns.len() as u32, exited: exited as u32 }
    }
}

/// The run time in ns: the first of schedstat's three fields.
fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_ascii_whitespace().next()?.parse().ok()
}

/// utime + stime of a task's stat line, in ns.
fn stat_ns(text: &str, user_hz: u64) -> Option<u64> {
    let ticks = PidStat::parse(text)?.own_ticks();
    Some(ticks.saturating_mul(1_000_000_000) / user_hz.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn task(root: &std::path::Path, tid: u32, comm: &str, schedstat: Option<&str>, stat: Option<&str>) {
        let d = root.join(format!("proc/77/task/{tid}"));
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        if let Some(s) = schedstat {
            fs::write(d.join("schedstat"), s).unwrap();
        }
        if let Some(s) = stat {
            fs::write(d.join("stat"), s).unwrap();
        }
    }

    #[test]
    fn only_io_uring_workers_are_read_in_ns_or_from_ticks() {
        let dir = tempfile::tempdir().unwrap();
        task(dir.path(), 77, "racehorse", Some("900000000 5 6\n"), None);
        task(dir.path(), 78, "diskio-0", Some("800000000 5 6\n"), None);
        task(dir.path(), 80, "iou-wrk-78", Some("1500000 20 30\n"), None);
        task(dir.path(), 81, "iou-sqp-78", Some("2500000 20 30\n"), None);
        // No schedstat: utime 3 + stime 7 ticks at 100 Hz.
        let stat = "82 (iou-wrk-78) S 1 1 1 0 -1 4194368 0 0 0 0 3 7 0 0 20 0 1 0 100 0 0";
        task(dir.path(), 82, "iou-wrk-78", None, Some(stat));
        let w = IoWorkers::read(&SysRoot::at(dir.path()), 77, 100);
        let want: BTreeMap<u32, u64> = [(80, 1_500_000), (81, 2_500_000), (82, 100_000_000)].into();
        assert_eq!(w.cpu_ns, want);
    }

    #[test]
    fn new_workers_count_whole_and_gone_ones_are_counted_as_exited() {
        let before = IoWorkers { cpu_ns: [(10, 1_000_000_000), (11, 5_000_000), (12, 7)].into() };
        let after = IoWorkers { cpu_ns: [(10, 1_250_000_000), (11, 5_000_000), (13, 500_000_000)].into() };
        let d = after.since(&before);
        assert!((d.kernel_s - 0.75).abs() < 1e-12, "{d:?}");
        assert_eq!((d.workers, d.exited), (3, 1));
        assert_eq!(IoWorkers::default().since(&IoWorkers::default()), IoWorkerCpu::default());
    }

    #[test]
    fn a_missing_process_reads_as_no_workers() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(IoWorkers::read(&SysRoot::at(dir.path()), 4242, 100), IoWorkers::default());
    }

    #[test]
    fn this_process_has_no_io_uring_workers_until_it_uses_io_uring() {
        // The test binary never sets up a ring, so the live read finds none, and the
        // schedstat parser accepts what this kernel writes for a real task.
        let w = IoWorkers::read(&SysRoot::host(), std::process::id(), 100);
        assert!(w.cpu_ns.is_empty(), "{w:?}");
        let own = fs::read_to_string("/proc/thread-self/schedstat").unwrap();
        assert!(parse_schedstat(&own).is_some(), "{own}");
    }
}
