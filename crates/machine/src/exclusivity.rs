//! Exclusivity check before a run: load, steal and other busy processes, with warnings.

use crate::cpuctl::online_cpus;
use crate::loadavg::read_loadavg;
use crate::pidstat::PidStat;
use crate::procstat::{cpu_usage, read_stat, user_hz};
use crate::root::SysRoot;
use serde::Serialize;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Another process using CPU while we look.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct BusyProcess {
    pub pid: u32,
    pub comm: String,
    /// Percent of one CPU over the check interval.
    pub cpu_pct: f64,
}

/// How alone the machine is.
#[derive(Serialize, Clone, Debug, PartialEq, Default)]
pub struct Exclusivity {
    pub load1: f64,
    /// Percent of all CPU time stolen by the hypervisor during the check.
    pub steal_pct: f64,
    pub busy: Vec<BusyProcess>,
    pub warnings: Vec<String>,
}

/// Share of one CPU above which another process counts as busy.
pub const BUSY_CPU_PCT: f64 = 5.0;

/// (comm, utime+stime ticks) from the text of /proc/PID/stat (comm may contain spaces and parens).
pub fn parse_pid_stat(text: &str) -> Option<(String, u64)> {
    let s = PidStat::parse(text)?;
    let ticks = s.own_ticks();
    Some((s.comm, ticks))
}

fn process_ticks(root: &SysRoot) -> HashMap<u32, (String, u64)> {
    let me = std::process::id();
    let Ok(rd) = std::fs::read_dir(&root.proc_dir) else { return HashMap::new() };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter_map(|pid| {
            let s = PidStat::of(&root.proc_dir, pid)?;
            let ticks = s.own_ticks();
            Some((pid, (s.comm, ticks)))
        })
        .collect()
}

/// Processes that used more than [`BUSY_CPU_PCT`] of a CPU between two readings, busiest first.
pub fn busy_between(
    before: &HashMap<u32, (String, u64)>,
    after: &HashMap<u32, (String, u64)>,
    user_hz: u64,
    elapsed_s: f64,
) -> Vec<BusyProcess> {
    if elapsed_s <= 0.0 || user_hz == 0 {
        return Vec::new();
    }
    let mut busy: Vec<BusyProcess> = after
        .iter()
        .filter_map(|(&pid, (comm, t1))| {
            let t0 = before.get(&pid).map_or(0, |(_, t)| *t);
            let cpu_pct = 100.0 * t1.saturating_sub(t0) as f64 / user_hz as f64 / elapsed_s;
            (before.contains_key(&pid) && cpu_pct > BUSY_CPU_PCT).then(|| BusyProcess {
                pid,
                comm: comm.clone(),
                cpu_pct,
            })
        })
        .collect();
    busy.sort_by(|a, b| b.cpu_pct.total_cmp(&a.cpu_pct).then(a.pid.cmp(&b.pid)));
    busy
}

/// Warnings for a high load, steal or busy processes.
pub fn assess(load1: f64, cpus_online: u32, steal_pct: f64, busy: &[BusyProcess]) -> Vec<String> {
    let mut w = Vec::new();
    let cpus = cpus_online.max(1) as f64;
    if load1 > 0.5 * cpus {
        w.push(format!("load average {load1:.2} exceeds half of the {cpus_online} online CPUs"));
    }
    if steal_pct > 5.0 {
        w.push(format!("hypervisor steals {steal_pct:.1}% of CPU time; results will be noisy"));
    }
    for b in busy {
        w.push(format!("process {} ({}) uses {:.0}% of a CPU", b.pid, b.comm, b.cpu_pct));
    }
    w
}

/// Samples /proc/stat and every /proc/PID/stat `interval` apart (e.g. 300 ms) and reports
/// whether the workload would run alone. Never fails: unreadable files just give zeros.
pub fn check(root: &SysRoot, interval: Duration) -> Exclusivity {
    let hz = user_hz();
    let stat0 = read_stat(root).ok();
    let procs0 = process_ticks(root);
    let start = Instant::now();
    std::thread::sleep(interval);
    let stat1 = read_stat(root).ok();
    let procs1 = process_ticks(root);
    let elapsed_s = start.elapsed().as_secs_f64();
    let steal_pct = match (stat0, stat1) {
        (Some(a), Some(b)) => {
            let u = cpu_usage(&a.cpu, &b.cpu, hz);
            let all = u.user_s + u.kernel_s + u.steal_s + u.iowait_s + u.idle_s;
            if all > 0.0 {
                100.0 * u.steal_s / all
            } else {
                0.0
            }
        }
        _ => 0.0,
    };
    let load1 = read_loadavg(root).map_or(0.0, |l| l.load1);
    let cpus = online_cpus(root).map_or(1, |v| v.len() as u32);
    let busy = busy_between(&procs0, &procs1, hz, elapsed_s);
    let warnings = assess(load1, cpus, steal_pct, &busy);
    Exclusivity { load1, steal_pct, busy, warnings }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_stat_with_odd_comm() {
        let t = "42 (my (odd) prog) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 12345 0 0\n";
        assert_eq!(parse_pid_stat(t), Some(("my (odd) prog".to_string(), 300)));
        assert_eq!(parse_pid_stat("garbage"), None);
    }

    #[test]
    fn busy_and_warnings() {
        let mk = |v: &[(u32, u64)]| -> HashMap<u32, (String, u64)> {
            v.iter().map(|&(p, t)| (p, (format!("p{p}"), t))).collect()
        };
        let before = mk(&[(1, 0), (2, 100), (3, 0)]);
        let after = mk(&[(1, 1), (2, 150), (3, 10), (4, 500)]);
        // 1 s at 100 Hz: pid 2 used 50%, pid 3 10%, pid 1 1%; pid 4 is new (unknown start): ignored.
        let busy = busy_between(&before, &after, 100, 1.0);
        assert_eq!(busy.iter().map(|b| b.pid).collect::<Vec<_>>(), vec![2, 3]);
        assert!((busy[0].cpu_pct - 50.0).abs() < 1e-9);
        let w = assess(3.0, 4, 6.0, &busy);
        assert_eq!(w.len(), 4);
        assert!(assess(0.1, 2, 0.0, &[]).is_empty());
    }

    #[test]
    fn host_check_runs() {
        let e = check(&SysRoot::host(), Duration::from_millis(50));
        assert!(e.load1 >= 0.0 && e.steal_pct >= 0.0);
        assert!(e.busy.iter().all(|b| b.pid != std::process::id()));
    }
}
