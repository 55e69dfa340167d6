//! The CPU of a process and everything it started, read from /proc while they run (the
//! adapters' tools and the PostgreSQL server the database engines drive), and killing such a
//! tree. Descendants are found by their parent links, so processes that left the process
//! group (fio's jobs call setsid()) are still found.

use racehorse_machine::pidstat::PidStat;
use racehorse_machine::procstat::user_hz;
use racehorse_machine::rusage::CpuTime;
use std::path::Path;

/// One process from /proc/PID/stat: parent, own (utime, stime) and reaped children's
/// (cutime, cstime), in clock ticks.
struct ProcStat {
    pid: i32,
    ppid: i32,
    own: (u64, u64),
    reaped: (u64, u64),
}

fn read_stat(pid: i32) -> Option<ProcStat> {
    let s = PidStat::of(Path::new("/proc"), u32::try_from(pid).ok()?)?;
    Some(ProcStat {
        pid,
        ppid: i32::try_from(s.ppid).ok()?,
        own: (s.utime_ticks, s.stime_ticks),
        reaped: (s.cutime_ticks, s.cstime_ticks),
    })
}

/// `root` and all its live descendants (fio's job processes call setsid(), so the process
/// group does not find them; the parent links do). Follows /proc/PID/task/TID/children when
/// the kernel has them (fast), else scans every process.
fn tree(root: i32) -> Vec<ProcStat> {
    tree_via(root, Path::new(&format!("/proc/{root}/task/{root}/children")).exists())
}

fn tree_via(root: i32, has_children_files: bool) -> Vec<ProcStat> {
    let Some(first) = read_stat(root) else { return Vec::new() };
    let mut all: Vec<ProcStat> = if has_children_files { Vec::new() } else { all_procs() };
    let mut members = vec![first];
    let mut i = 0;
    while i < members.len() {
        let parent = members[i].pid;
        if has_children_files {
            members.extend(children(parent).into_iter().filter_map(read_stat));
        } else {
            let (kids, rest): (Vec<_>, Vec<_>) = all.into_iter().partition(|p| p.ppid == parent);
            all = rest;
            members.extend(kids);
        }
        i += 1;
    }
    members
}

/// The children of every thread of `pid`, from /proc/PID/task/*/children.
fn children(pid: i32) -> Vec<i32> {
    let mut kids = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
                kids.extend(text.split_whitespace().filter_map(|w| w.parse::<i32>().ok()));
            }
        }
    }
    kids
}

fn all_procs() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()).and_then(read_stat))
        .collect()
}

/// CPU of the process tree of `root` so far: the live processes plus the children they reaped, the
/// same quantity wait4() reports for the main process once everything has exited.
///
/// /proc/PID/stat counts in clock ticks (10 ms), too coarse for a short cell, so a live
/// process's total comes from its CPU clock (ns) and is split into user and kernel time in
/// the ratio of its tick counts (all kernel while it has none). Reaped children stay in ticks.
pub fn tree_cpu(root: i32) -> CpuTime {
    let hz = user_hz().max(1) as f64;
    let mut cpu = CpuTime::default();
    for p in tree(root) {
        let (tu, ts) = (p.own.0 as f64 / hz, p.own.1 as f64 / hz);
        let (user, kernel) = match process_cpu_clock(p.pid) {
            Some(total) if tu + ts > 0.0 => (total * tu / (tu + ts), total * ts / (tu + ts)),
            Some(total) => (0.0, total),
            None => (tu, ts),
        };
        cpu.user_s += user + p.reaped.0 as f64 / hz;
        cpu.kernel_s += kernel + p.reaped.1 as f64 / hz;
    }
    cpu
}

/// The CPU time of all threads of process `pid` so far, in seconds.
fn process_cpu_clock(pid: i32) -> Option<f64> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: clock_getcpuclockid writes one clockid_t to a valid pointer.
    if unsafe { libc::clock_getcpuclockid(pid, &mut clock) } != 0 {
        return None;
    }
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec to a valid pointer.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9)
}

/// Stops the main process (no new forks), SIGKILLs its descendants, then SIGKILLs it.
pub fn kill_tree(root: i32) {
    // SAFETY: kill(2) on the caller's child, which is not reaped yet (the caller's contract).
    unsafe { libc::kill(root, libc::SIGSTOP) };
    for p in tree(root).iter().skip(1) {
        // SAFETY: kill(2) on its live descendants just read from /proc.
        unsafe { libc::kill(p.pid, libc::SIGKILL) };
    }
    // SAFETY: as the first call.
    unsafe { libc::kill(root, libc::SIGKILL) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_of_self_includes_self_and_nonnegative_cpu() {
        let me = std::process::id() as i32;
        let t = tree(me);
        assert_eq!(t.first().map(|p| p.pid), Some(me));
        let c = tree_cpu(me);
        assert!(c.user_s >= 0.0 && c.kernel_s >= 0.0);
        let own = process_cpu_clock(me).unwrap();
        assert!(own > 0.0 && own <= c.user_s + c.kernel_s + 1e-3, "{own} vs {c:?}");
    }

    #[test]
    fn both_ways_of_finding_descendants_agree() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let me = std::process::id() as i32;
        let pids = |v: Vec<ProcStat>| {
            let mut p: Vec<i32> = v.into_iter().map(|p| p.pid).collect();
            p.sort_unstable();
            p
        };
        let fast = pids(tree_via(me, true));
        let slow = pids(tree_via(me, false));
        let _ = child.kill();
        let _ = child.wait();
        assert!(slow.contains(&(child.id() as i32)), "{slow:?}");
        assert!(fast.contains(&(child.id() as i32)), "{fast:?}");
        assert!(tree_via(-5, false).is_empty());
    }

    #[test]
    fn a_killed_tree_is_gone() {
        let mut child = std::process::Command::new("sh").args(["-c", "sleep 30 & wait"]).spawn().unwrap();
        let pid = child.id() as i32;
        let limit = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while tree(pid).len() < 2 && std::time::Instant::now() < limit {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(tree(pid).len() >= 2, "the shell and its sleep");
        kill_tree(pid);
        let status = child.wait().unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));
        assert!(tree_via(pid, false).is_empty(), "reaped");
    }
}
