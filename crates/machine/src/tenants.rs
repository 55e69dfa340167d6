//! Who else used the CPU during a measured window. At each edge of the window every
//! /proc/PID/stat is read once; processes are split into racehorse's own tree (this process
//! and its descendants), kernel threads, and everyone else (other tenants). Other tenants'
//! CPU over the window is the cell's noise; racehorse's own CPU is also taken at nanosecond
//! precision (per-thread schedstat of the descendants, getrusage of this process and of its
//! reaped children), since /proc/stat's 10 ms ticks are too coarse for short windows.

use crate::pidstat::PidStat;
use crate::root::SysRoot;
use crate::rusage::{children_cpu, process_cpu};
use std::collections::{HashMap, HashSet};

/// PF_KTHREAD in the flags field of /proc/PID/stat.
const PF_KTHREAD: u64 = 0x0020_0000;

/// One process as read from its stat file.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcEntry {
    pub comm: String,
    pub ppid: u32,
    pub kthread: bool,
    /// utime + stime + cutime + cstime, in clock ticks: its own CPU and that of children it reaped.
    pub ticks: u64,
    /// Start time in ticks since boot (tells a reused pid from the process seen before).
    pub start: u64,
}

/// Parses the text of /proc/PID/stat (comm may hold spaces and parentheses).
pub fn parse_stat(text: &str) -> Option<ProcEntry> {
    let s = PidStat::parse(text)?;
    Some(ProcEntry {
        ppid: s.ppid,
        kthread: s.flags & PF_KTHREAD != 0,
        ticks: s.own_ticks() + s.cutime_ticks + s.cstime_ticks,
        start: s.start_ticks,
        comm: s.comm,
    })
}

/// Every process at one instant, with racehorse's own CPU at that instant.
#[derive(Debug, Clone, Default)]
pub struct ProcSnapshot {
    pub procs: HashMap<u32, ProcEntry>,
    /// The pids of `me` and its descendants.
    pub ours: HashSet<u32>,
    /// Nanoseconds run so far by every thread of each live descendant (not `me`).
    pub desc_ns: HashMap<u32, u64>,
    /// This process's own CPU plus its reaped children's, in nanoseconds (getrusage).
    pub me_ns: u64,
}

fn descendants(procs: &HashMap<u32, ProcEntry>, me: u32) -> HashSet<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (&pid, p) in procs {
        children.entry(p.ppid).or_default().push(pid);
    }
    let mut ours = HashSet::from([me]);
    let mut todo = vec![me];
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).into_iter().flatten() {
            if ours.insert(c) {
                todo.push(c);
            }
        }
    }
    ours
}

/// Sum of the first field of every /proc/PID/task/TID/schedstat (time run, ns).
fn threads_ns(root: &SysRoot, pid: u32) -> u64 {
    let Ok(rd) = std::fs::read_dir(root.proc(pid.to_string()).join("task")) else { return 0 };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("schedstat")).ok())
        .filter_map(|t| t.split_ascii_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// Reads every /proc/PID/stat under `root`, with `me` as racehorse's process.
pub fn snapshot(root: &SysRoot, me: u32) -> ProcSnapshot {
    let procs: HashMap<u32, ProcEntry> = std::fs::read_dir(&root.proc_dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let text = std::fs::read_to_string(root.proc(pid.to_string()).join("stat")).ok()?;
            Some((pid, parse_stat(&text)?))
        })
        .collect();
    let ours = descendants(&procs, me);
    let desc_ns = ours.iter().filter(|&&p| p != me).map(|&p| (p, threads_ns(root, p))).collect();
    let secs_ns = |s: f64| (s * 1e9).round() as u64;
    let me_ns = if root.is_host() { secs_ns(process_cpu().total_s() + children_cpu().total_s()) } else { 0 };
    ProcSnapshot { procs, ours, desc_ns, me_ns }
}

/// CPU over a window by owner, in CPU seconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WindowTenants {
    /// Other user processes (noise).
    pub outside_cpu_s: f64,
    /// Kernel threads.
    pub kthread_cpu_s: f64,
    /// racehorse and its descendants, at nanosecond precision.
    pub own_cpu_s: f64,
    /// The other processes that used the most, busiest first: (pid, comm, CPU seconds).
    pub busiest: Vec<(u32, String, f64)>,
}

/// What each group used between two snapshots. A process seen only at the end counts in
/// full; one seen only at the start counts minus what it had then (its parent's reaped-children
/// time, or our rusage, then holds its whole life).
pub fn between(a: &ProcSnapshot, b: &ProcSnapshot, user_hz: u64) -> WindowTenants {
    let hz = user_hz.max(1) as f64;
    let same = |pid: &u32, x: &ProcEntry| a.procs.get(pid).filter(|p| p.start == x.start);
    let mut out = WindowTenants::default();
    let mut by_proc: Vec<(u32, String, f64)> = Vec::new();
    for (pid, p) in &b.procs {
        if a.ours.contains(pid) || b.ours.contains(pid) {
            continue;
        }
        let used = p.ticks.saturating_sub(same(pid, p).map_or(0, |q| q.ticks)) as f64 / hz;
        if p.kthread {
            out.kthread_cpu_s += used;
        } else {
            out.outside_cpu_s += used;
            if used > 0.0 {
                by_proc.push((*pid, p.comm.clone(), used));
            }
        }
    }
    for (pid, p) in &a.procs {
        let gone = b.procs.get(pid).is_none_or(|q| q.start != p.start);
        if gone && !p.kthread && !a.ours.contains(pid) {
            // Reaped inside the window: its parent's cutime now holds all of it.
            out.outside_cpu_s -= (p.ticks as f64 / hz).min(out.outside_cpu_s);
        }
    }
    let mut own_ns = i128::from(b.me_ns) - i128::from(a.me_ns);
    for (pid, ns) in &b.desc_ns {
        own_ns += i128::from(*ns) - i128::from(a.desc_ns.get(pid).copied().unwrap_or(0));
    }
    for (pid, ns) in &a.desc_ns {
        if !b.desc_ns.contains_key(pid) {
            own_ns -= i128::from(*ns);
        }
    }
    out.own_cpu_s = own_ns.max(0) as f64 / 1e9;
    by_proc.sort_by(|x, y| y.2.total_cmp(&x.2).then(x.0.cmp(&y.0)));
    by_proc.truncate(3);
    out.busiest = by_proc;
    out
}

/// The share of one CPU, averaged over the window, above which other tenants make a cell
/// noisy (5%: an idle machine's daemons use well under 1%).
pub const DEFAULT_NOISE_CPU_FRACTION: f64 = 0.05;

/// Why a window is noisy, or None: other processes' CPU plus steal, averaged over the
/// window, is at least `threshold` of one CPU and at least three clock ticks (one tick in a
/// 70 ms window is not a tenant).
pub fn noise_reason(
    t: &WindowTenants,
    steal_s: f64,
    window_s: f64,
    threshold: f64,
    user_hz: u64,
) -> Option<String> {
    if window_s <= 0.0 {
        return None;
    }
    let outside = t.outside_cpu_s + steal_s;
    let tick_s = 1.0 / user_hz.max(1) as f64;
    if outside / window_s < threshold || outside < 3.0 * tick_s - 1e-9 {
        return None;
    }
    let who: Vec<String> =
        t.busiest.iter().map(|(pid, comm, s)| format!("{comm} ({pid}) {s:.2} s")).collect();
    let mut why = format!(
        "other processes and steal used {:.0}% of a CPU during the window (threshold {:.0}%)",
        100.0 * outside / window_s,
        100.0 * threshold
    );
    if steal_s > 0.0 {
        why.push_str(&format!("; steal {steal_s:.2} s"));
    }
    if !who.is_empty() {
        why.push_str(&format!("; busiest: {}", who.join(", ")));
    }
    Some(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(comm: &str, ppid: u32, kthread: bool, ticks: u64) -> ProcEntry {
        ProcEntry { comm: comm.into(), ppid, kthread, ticks, start: 1 }
    }

    fn snap(list: &[(u32, ProcEntry)], me: u32, me_ns: u64, desc: &[(u32, u64)]) -> ProcSnapshot {
        let procs: HashMap<u32, ProcEntry> = list.iter().cloned().collect();
        let ours = descendants(&procs, me);
        ProcSnapshot { procs, ours, desc_ns: desc.iter().copied().collect(), me_ns }
    }

    #[test]
    fn parses_a_stat_line_with_a_tricky_comm_and_the_kthread_flag() {
        let line = "42 (my (odd) comm) S 7 42 42 0 -1 2097216 0 0 0 0 150 50 3 2 20 0 1 0 555 0 0";
        let p = parse_stat(line).unwrap();
        assert_eq!(
            (p.comm.as_str(), p.ppid, p.kthread, p.ticks, p.start),
            ("my (odd) comm", 7, true, 205, 555)
        );
        let user = "9 (sh) R 1 9 9 0 -1 4194560 0 0 0 0 10 5 0 0 20 0 1 0 77 0 0";
        assert!(!parse_stat(user).unwrap().kthread);
    }

    /// Issue 21, case 3: another tenant's CPU is told apart from the workload's own.
    #[test]
    fn splits_other_tenants_kernel_threads_and_our_tree() {
        let me = 100;
        let a = snap(
            &[
                (1, entry("init", 0, false, 0)),
                (100, entry("racehorse", 1, false, 0)),
                (101, entry("fio", 100, false, 10)),
                (200, entry("burner", 1, false, 1000)),
                (300, entry("gone", 1, false, 50)),
                (2, entry("kthreadd", 0, true, 0)),
                (10, entry("kworker/0:1", 2, true, 5)),
            ],
            me,
            1_000_000_000,
            &[(101, 500_000_000)],
        );
        let b = snap(
            &[
                (1, entry("init", 0, false, 55)),
                (100, entry("racehorse", 1, false, 0)),
                (101, entry("fio", 100, false, 200)),
                (102, entry("fio-child", 101, false, 7)),
                (200, entry("burner", 1, false, 1100)),
                (201, entry("newcomer", 1, false, 30)),
                (10, entry("kworker/0:1", 2, true, 25)),
            ],
            me,
            1_250_000_000,
            &[(101, 2_400_000_000), (102, 70_000_000)],
        );
        let t = between(&a, &b, 100);
        // burner 1.0 s + newcomer 0.3 s + `gone`'s last 0.05 s, which init reaped (init's
        // cutime grew by all 0.55 s of its life).
        assert!((t.outside_cpu_s - 1.35).abs() < 1e-9, "{t:?}");
        assert!((t.kthread_cpu_s - 0.2).abs() < 1e-9, "{t:?}");
        // rusage 0.25 s + fio 1.9 s + fio-child 0.07 s, at ns precision (not fio's ticks).
        assert!((t.own_cpu_s - 2.22).abs() < 1e-9, "{t:?}");
        assert_eq!(t.busiest[0].1, "burner");
        let why = noise_reason(&t, 0.0, 2.0, DEFAULT_NOISE_CPU_FRACTION, 100).expect("noisy");
        assert!(why.contains("68% of a CPU") && why.contains("burner (200)"), "{why}");
    }

    #[test]
    fn a_quiet_or_tiny_window_is_not_noisy() {
        let t = WindowTenants { outside_cpu_s: 0.02, ..Default::default() };
        assert_eq!(noise_reason(&t, 0.0, 10.0, DEFAULT_NOISE_CPU_FRACTION, 100), None, "0.2% of a CPU");
        let one_tick = WindowTenants { outside_cpu_s: 0.01, ..Default::default() };
        assert_eq!(noise_reason(&one_tick, 0.0, 0.07, DEFAULT_NOISE_CPU_FRACTION, 100), None, "one tick");
        let steal = noise_reason(&WindowTenants::default(), 0.5, 1.0, DEFAULT_NOISE_CPU_FRACTION, 100);
        assert!(steal.is_some_and(|w| w.contains("steal 0.50 s")));
    }

    #[test]
    fn the_live_machine_sees_our_own_spin_as_ours() {
        let root = SysRoot::host();
        let me = std::process::id();
        let a = snapshot(&root, me);
        // Spin until this thread has run 60 ms (not 60 ms of wall time: a busy machine
        // would give it less).
        let start = crate::rusage::thread_cpu();
        let mut x = 1u64;
        while crate::rusage::thread_cpu().since(start).total_s() < 0.06 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let b = snapshot(&root, me);
        let t = between(&a, &b, crate::procstat::user_hz());
        assert!(a.ours.contains(&me) && t.own_cpu_s >= 0.05, "{t:?}");
    }
}
