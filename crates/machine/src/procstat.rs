//! /proc/stat: aggregate CPU ticks, context switches, run queue; tick deltas → CPU seconds.

use crate::error::MachineError;
use crate::root::{read_text, SysRoot};
use racehorse_core::CpuUsage;

/// The aggregate `cpu` line of /proc/stat, in USER_HZ ticks.
/// Note: guest and guest_nice are already included in user and nice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

impl CpuTicks {
    /// All time in ticks (guest excluded: it is already inside user/nice).
    pub fn total(&self) -> u64 {
        self.user + self.nice + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal
    }
}

/// What racehorse uses from one /proc/stat reading.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatSnapshot {
    pub cpu: CpuTicks,
    /// Context switches since boot.
    pub ctxt: u64,
    pub procs_running: u32,
    pub procs_blocked: u32,
}

/// Reads and parses `<proc>/stat`.
pub fn read_stat(root: &SysRoot) -> Result<StatSnapshot, MachineError> {
    let path = root.proc("stat");
    parse_stat(&read_text(&path)?).map_err(|e| e.at_path(path))
}

fn num<T: std::str::FromStr>(tok: Option<&str>, line: usize, what: &str) -> Result<T, MachineError> {
    let tok = tok.ok_or_else(|| MachineError::parse("stat", line, format!("missing {what}")))?;
    tok.parse().map_err(|_| MachineError::parse("stat", line, format!("bad {what}: {tok:?}")))
}

fn parse_cpu_line(rest: &str, line: usize) -> Result<CpuTicks, MachineError> {
    let mut v = [0u64; 10];
    let mut n = 0;
    for (slot, tok) in v.iter_mut().zip(rest.split_ascii_whitespace()) {
        *slot = num(Some(tok), line, "cpu ticks")?;
        n += 1;
    }
    if n < 4 {
        return Err(MachineError::parse("stat", line, "cpu line has fewer than 4 fields"));
    }
    Ok(CpuTicks {
        user: v[0],
        nice: v[1],
        system: v[2],
        idle: v[3],
        iowait: v[4],
        irq: v[5],
        softirq: v[6],
        steal: v[7],
        guest: v[8],
        guest_nice: v[9],
    })
}

/// Parses the text of /proc/stat (the aggregate `cpu` line is required; the rest default to 0).
pub fn parse_stat(text: &str) -> Result<StatSnapshot, MachineError> {
    let mut snap = StatSnapshot::default();
    let mut saw_cpu = false;
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "cpu" => {
                snap.cpu = parse_cpu_line(rest, lineno)?;
                saw_cpu = true;
            }
            "ctxt" => snap.ctxt = num(rest.split_ascii_whitespace().next(), lineno, "ctxt")?,
            "procs_running" => {
                snap.procs_running = num(rest.split_ascii_whitespace().next(), lineno, "procs_running")?
            }
            "procs_blocked" => {
                snap.procs_blocked = num(rest.split_ascii_whitespace().next(), lineno, "procs_blocked")?
            }
            _ => {}
        }
    }
    if !saw_cpu {
        return Err(MachineError::parse("stat", 1, "no aggregate `cpu` line"));
    }
    Ok(snap)
}

/// USER_HZ, the unit of /proc/stat ticks (sysconf(_SC_CLK_TCK), 100 if unavailable).
pub fn user_hz() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as u64
    } else {
        100
    }
}

/// CPU seconds spent between readings `a` and `b`: user = user+nice, kernel = system+irq+softirq,
/// plus steal, iowait and idle. Counters that went backwards (iowait can) count as 0.
pub fn cpu_usage(a: &CpuTicks, b: &CpuTicks, user_hz: u64) -> CpuUsage {
    let hz = if user_hz == 0 { 100.0 } else { user_hz as f64 };
    let s = |ticks: u64| ticks as f64 / hz;
    CpuUsage {
        user_s: s(b.user.saturating_sub(a.user) + b.nice.saturating_sub(a.nice)),
        kernel_s: s(b.system.saturating_sub(a.system)
            + b.irq.saturating_sub(a.irq)
            + b.softirq.saturating_sub(a.softirq)),
        steal_s: s(b.steal.saturating_sub(a.steal)),
        iowait_s: s(b.iowait.saturating_sub(a.iowait)),
        idle_s: s(b.idle.saturating_sub(a.idle)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const STAT: &str = "cpu  8148 10 3009 63025 609 5 98 33 7 1\n\
cpu0 3436 0 1149 32760 59 0 33 15 0 0\n\
intr 185263 0 0\n\
ctxt 328636\n\
btime 1700000000\n\
processes 4242\n\
procs_running 3\n\
procs_blocked 1\n";

    #[test]
    fn parses_stat() {
        let s = parse_stat(STAT).expect("parse");
        assert_eq!(s.cpu.user, 8148);
        assert_eq!(s.cpu.nice, 10);
        assert_eq!(s.cpu.steal, 33);
        assert_eq!(s.cpu.guest_nice, 1);
        assert_eq!(s.ctxt, 328636);
        assert_eq!((s.procs_running, s.procs_blocked), (3, 1));
    }

    #[test]
    fn old_kernel_short_cpu_line() {
        let s = parse_stat("cpu 1 2 3 4\n").expect("parse");
        assert_eq!(s.cpu.idle, 4);
        assert_eq!(s.cpu.steal, 0);
    }

    #[test]
    fn rejects_missing_cpu_line_and_garbage() {
        assert!(matches!(parse_stat("ctxt 5\n"), Err(MachineError::Parse { .. })));
        assert!(matches!(parse_stat("cpu 1 x 3 4\n"), Err(MachineError::Parse { line: 1, .. })));
    }

    #[test]
    fn usage_groups_ticks() {
        let a = CpuTicks::default();
        let b = CpuTicks {
            user: 100,
            nice: 50,
            system: 20,
            irq: 5,
            softirq: 5,
            steal: 10,
            iowait: 30,
            idle: 200,
            guest: 40,
            guest_nice: 0,
        };
        let u = cpu_usage(&a, &b, 100);
        assert_eq!(u.user_s, 1.5);
        assert_eq!(u.kernel_s, 0.3);
        assert_eq!(u.steal_s, 0.1);
        assert_eq!(u.iowait_s, 0.3);
        assert_eq!(u.idle_s, 2.0);
    }

    #[test]
    fn iowait_going_backwards_saturates() {
        let a = CpuTicks { iowait: 100, ..Default::default() };
        let b = CpuTicks { iowait: 90, user: 10, ..Default::default() };
        let u = cpu_usage(&a, &b, 100);
        assert_eq!(u.iowait_s, 0.0);
        assert_eq!(u.user_s, 0.1);
    }

    #[test]
    fn user_hz_is_sane() {
        let hz = user_hz();
        assert!((10..=10_000).contains(&hz));
    }

    fn ticks() -> impl Strategy<Value = CpuTicks> {
        proptest::collection::vec(0u64..1 << 40, 10).prop_map(|v| CpuTicks {
            user: v[0],
            nice: v[1],
            system: v[2],
            idle: v[3],
            iowait: v[4],
            irq: v[5],
            softirq: v[6],
            steal: v[7],
            guest: v[8].min(v[0]),
            guest_nice: v[9].min(v[1]),
        })
    }

    proptest! {
        #[test]
        fn usage_non_negative_and_sums(a in ticks(), b in ticks(), hz in 1u64..2000) {
            let u = cpu_usage(&a, &b, hz);
            for x in [u.user_s, u.kernel_s, u.steal_s, u.iowait_s, u.idle_s] {
                prop_assert!(x >= 0.0);
            }
            // When every counter moved forward, the parts sum to the total elapsed ticks.
            let fwd = CpuTicks {
                user: a.user + b.user, nice: a.nice + b.nice, system: a.system + b.system,
                idle: a.idle + b.idle, iowait: a.iowait + b.iowait, irq: a.irq + b.irq,
                softirq: a.softirq + b.softirq, steal: a.steal + b.steal,
                guest: a.guest + b.guest, guest_nice: a.guest_nice + b.guest_nice,
            };
            let u = cpu_usage(&a, &fwd, hz);
            let sum = u.user_s + u.kernel_s + u.steal_s + u.iowait_s + u.idle_s;
            let expect = (fwd.total() - a.total()) as f64 / hz as f64;
            prop_assert!((sum - expect).abs() <= 1e-9 * expect.max(1.0));
            prop_assert!((u.total_s() - (u.user_s + u.kernel_s)).abs() < 1e-12);
        }
    }
}
