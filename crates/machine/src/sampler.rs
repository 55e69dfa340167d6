//! One cheap monitor reading (stat, meminfo, vmstat, diskstats) and the rates between two readings.

use crate::diskstats::{read_diskstats, DiskTotals};
use crate::error::MachineError;
use crate::meminfo::{read_meminfo, MemInfo};
use crate::procstat::{cpu_usage, read_stat, StatSnapshot};
use crate::root::SysRoot;
use crate::vmstat::{read_vmstat, VmStat};
use racehorse_core::SamplePoint;

/// Raw cumulative counters at one instant; turn two of them into a [`SamplePoint`] with [`point`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawSample {
    pub stat: StatSnapshot,
    pub mem: MemInfo,
    pub vm: VmStat,
    pub disk: DiskTotals,
}

impl RawSample {
    /// Reads the four files once each (a few small reads; well under 1 ms).
    pub fn read(root: &SysRoot) -> Result<RawSample, MachineError> {
        Ok(RawSample {
            stat: read_stat(root)?,
            mem: read_meminfo(root)?,
            vm: read_vmstat(root)?,
            disk: read_diskstats(root)?,
        })
    }
}

fn pct(part_s: f64, total_s: f64) -> f64 {
    if total_s > 0.0 {
        100.0 * part_s / total_s
    } else {
        0.0
    }
}

/// The point at `t_ms` from readings `prev` and `cur` taken `interval_s` apart.
/// CPU figures are percentages of all CPU time in the interval (all CPUs together);
/// counters are per-second rates (pgpgin/pgpgout in KiB/s, pswpin/pswpout in pages/s);
/// run queue, blocked and memory are the values at `cur`.
pub fn point(prev: &RawSample, cur: &RawSample, user_hz: u64, interval_s: f64, t_ms: u64) -> SamplePoint {
    let u = cpu_usage(&prev.stat.cpu, &cur.stat.cpu, user_hz);
    let all_s = u.user_s + u.kernel_s + u.steal_s + u.iowait_s + u.idle_s;
    let rate = |a: u64, b: u64| if interval_s > 0.0 { b.saturating_sub(a) as f64 / interval_s } else { 0.0 };
    SamplePoint {
        t_ms,
        cpu_user_pct: pct(u.user_s, all_s),
        cpu_kernel_pct: pct(u.kernel_s, all_s),
        cpu_iowait_pct: pct(u.iowait_s, all_s),
        cpu_steal_pct: pct(u.steal_s, all_s),
        cpu_idle_pct: pct(u.idle_s, all_s),
        run_queue: cur.stat.procs_running,
        blocked: cur.stat.procs_blocked,
        mem_free_bytes: cur.mem.free_bytes,
        mem_cached_bytes: cur.mem.cached_bytes,
        mem_dirty_bytes: cur.mem.dirty_bytes,
        pgpgin_per_s: rate(prev.vm.pgpgin_kb, cur.vm.pgpgin_kb),
        pgpgout_per_s: rate(prev.vm.pgpgout_kb, cur.vm.pgpgout_kb),
        pswpin_per_s: rate(prev.vm.pswpin_pages, cur.vm.pswpin_pages),
        pswpout_per_s: rate(prev.vm.pswpout_pages, cur.vm.pswpout_pages),
        disk_read_bytes_per_s: rate(prev.disk.read_bytes, cur.disk.read_bytes),
        disk_write_bytes_per_s: rate(prev.disk.write_bytes, cur.disk.write_bytes),
        ctxt_per_s: rate(prev.stat.ctxt, cur.stat.ctxt),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procstat::CpuTicks;

    #[test]
    fn percentages_and_rates() {
        let mut a = RawSample::default();
        a.stat.ctxt = 1000;
        a.vm.pgpgin_kb = 10;
        a.disk.write_bytes = 4096;
        let mut b = a;
        b.stat.cpu =
            CpuTicks { user: 50, system: 20, iowait: 10, steal: 10, idle: 110, ..Default::default() };
        b.stat.ctxt = 3000;
        b.stat.procs_running = 4;
        b.vm.pgpgin_kb = 30;
        b.disk.write_bytes = 4096 + 8192;
        b.mem.dirty_bytes = 77;
        let p = point(&a, &b, 100, 2.0, 5000);
        assert_eq!(p.t_ms, 5000);
        assert!((p.cpu_user_pct - 25.0).abs() < 1e-9);
        assert!((p.cpu_kernel_pct - 10.0).abs() < 1e-9);
        assert!((p.cpu_idle_pct - 55.0).abs() < 1e-9);
        let sum = p.cpu_user_pct + p.cpu_kernel_pct + p.cpu_iowait_pct + p.cpu_steal_pct + p.cpu_idle_pct;
        assert!((sum - 100.0).abs() < 1e-9);
        assert_eq!(p.ctxt_per_s, 1000.0);
        assert_eq!(p.pgpgin_per_s, 10.0);
        assert_eq!(p.disk_write_bytes_per_s, 4096.0);
        assert_eq!((p.run_queue, p.mem_dirty_bytes), (4, 77));
    }

    #[test]
    fn zero_interval_gives_zero_rates() {
        let a = RawSample::default();
        let p = point(&a, &a, 100, 0.0, 0);
        assert_eq!(p.cpu_user_pct, 0.0);
        assert_eq!(p.ctxt_per_s, 0.0);
    }

    #[test]
    fn host_read_is_cheap() {
        let root = SysRoot::host();
        let Ok(first) = RawSample::read(&root) else { return };
        let start = std::time::Instant::now();
        for _ in 0..20 {
            let s = RawSample::read(&root).expect("read");
            assert!(s.stat.cpu.total() >= first.stat.cpu.total());
        }
        // 0.5% of a CPU at 1 sample/s = 5 ms per sample; allow slack for debug builds.
        let per_sample_ms = start.elapsed().as_secs_f64() * 1000.0 / 20.0;
        assert!(per_sample_ms < 5.0, "sampling costs {per_sample_ms} ms");
    }
}
