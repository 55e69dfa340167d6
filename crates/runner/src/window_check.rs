//! After each measured window: how far its figures can be trusted. Who else used the CPU
//! (noise, from the process scans at the edges), whether the CPU figures have enough clock
//! ticks behind them, and whether the CPUs the cell asked for stayed online throughout.

use crate::monitor::{online_inside, Edges, OnlineReadings};
use racehorse_core::quality::CPU;
use racehorse_core::CellResult;
use racehorse_engines::EngineError;
use racehorse_machine::tenants::{between, noise_reason};
use racehorse_machine::CpuMethod;

/// The most a window's CPU total may be uncertain (one tick per online CPU at each edge)
/// before its per-unit figures count as below resolution.
pub const MAX_CPU_UNCERTAINTY: f64 = 0.05;

/// What the check needs besides the cell.
pub(crate) struct WindowCheck<'a> {
    pub edges: &'a Edges,
    pub monitor: &'a OnlineReadings,
    /// Share of one CPU that other tenants may use before the cell is noisy.
    pub noise_threshold: f64,
    pub user_hz: u64,
    /// How the cell's CPU count was set; None when a hotplug daemon decides it.
    pub method: Option<CpuMethod>,
}

impl WindowCheck<'_> {
    /// Fills `result.quality`; Err when the cell's CPUs did not hold (the cell then fails).
    pub fn apply(&self, result: &mut CellResult) -> Result<(), EngineError> {
        let window_s = result.window.as_secs_f64();
        if let (Some(a), Some(b)) = &self.edges.procs {
            let t = between(a, b, self.user_hz);
            let q = &mut result.quality;
            q.outside_cpu_s = Some(t.outside_cpu_s);
            q.kthread_cpu_s = Some(t.kthread_cpu_s);
            q.own_cpu_s = Some(t.own_cpu_s);
            q.noisy = noise_reason(&t, result.cpu.steal_s, window_s, self.noise_threshold, self.user_hz);
        }
        let cpus = self.online_at_edges();
        if let Some(why) = cpu_resolution(result.cpu.total_s(), cpus, self.user_hz) {
            result.quality.mark_below(CPU, why);
        }
        self.cpus_held(result.spec.label(), result.cpus_online)
    }

    fn online_at_edges(&self) -> u32 {
        self.edges.online.iter().map(|(_, n)| *n).max().unwrap_or(1)
    }

    /// The online-CPU readings inside the window (edges and the 1 s monitor) against the
    /// count the cell asked for: never fewer; with hotplug, never more either.
    fn cpus_held(&self, label: String, asked: u32) -> Result<(), EngineError> {
        let Some(method) = self.method else { return Ok(()) };
        let inside = online_inside(self.edges, self.monitor);
        let (Some(&min), Some(&max)) = (inside.iter().min(), inside.iter().max()) else { return Ok(()) };
        if min < asked || (method == CpuMethod::Hotplug && max > asked) {
            let seen = if min == max { format!("{min}") } else { format!("{min} to {max}") };
            return Err(EngineError::Failed(format!(
                "{label}: asked for {asked} online CPUs, but {seen} were online during the window; something \
                 else changed the CPUs (a racehorse plugd, a hotplug daemon, an administrator), so the cell \
                 measured another machine"
            )));
        }
        Ok(())
    }
}

/// Why `total_s` of CPU over a window is below resolution, or None: /proc/stat counts whole
/// ticks (1/USER_HZ s) on each of `cpus` CPUs, so the total is uncertain by about `cpus`
/// ticks; more than [`MAX_CPU_UNCERTAINTY`] of it is too coarse for a per-unit figure.
pub fn cpu_resolution(total_s: f64, cpus: u32, user_hz: u64) -> Option<String> {
    let ticks = (total_s * user_hz as f64).round();
    let needed = f64::from(cpus.max(1)) / MAX_CPU_UNCERTAINTY;
    (ticks < needed).then(|| {
        format!(
            "{ticks:.0} clock ticks of CPU in the window, fewer than the {needed:.0} that {} online CPUs need \
             for ±{:.0}% (lengthen the window with --runtime)",
            cpus.max(1),
            100.0 * MAX_CPU_UNCERTAINTY
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use racehorse_core::{CellSpec, CpuUsage, Nanos, Params, WorkUnit};
    use std::time::{Duration, Instant};

    fn cell(cpus: u32, cpu_s: f64) -> CellResult {
        let spec = CellSpec { workload: "null".into(), params: Params::new(), variant: "v".into(), rep: 1 };
        let mut r = CellResult::empty(spec, WorkUnit::Bytes);
        r.cpus_online = cpus;
        r.window = Nanos(4_700_000);
        r.units = 64.0 * 1048576.0;
        r.cpu = CpuUsage { user_s: 0.0, kernel_s: cpu_s, ..CpuUsage::default() };
        r
    }

    /// Issue 21, case 4: a 4.7 ms window with a tick or two of CPU was shown as 0.000 ms/MB.
    #[test]
    fn a_window_with_few_ticks_has_no_cpu_per_unit() {
        let t = Instant::now();
        let edges = Edges { online: vec![(t, 2)], ..Edges::default() };
        let check = WindowCheck {
            edges: &edges,
            monitor: &Vec::new(),
            noise_threshold: 0.05,
            user_hz: 100,
            method: None,
        };
        let mut r = cell(2, 0.01);
        check.apply(&mut r).unwrap();
        assert_eq!(r.cpu_total_per_unit(), None);
        assert!(r.quality.below_resolution[CPU].contains("1 clock ticks"), "{:?}", r.quality);
        let mut long = cell(2, 4.0);
        check.apply(&mut long).unwrap();
        assert!(long.cpu_total_per_unit().is_some(), "400 ticks on 2 CPUs is within 5%");
        assert!(cpu_resolution(0.39, 2, 100).is_some());
        assert_eq!(cpu_resolution(0.40, 2, 100), None);
    }

    /// Issue 21, case 7: a cpus=2 cell ran while cpu1 was held offline and stored as ok.
    #[test]
    fn a_cpu_count_that_did_not_hold_fails_the_cell() {
        let t = Instant::now();
        let at = |ms| t + Duration::from_millis(ms);
        let edges = Edges {
            online: vec![(at(0), 2), (at(3000), 2)],
            window: (Some(at(0)), Some(at(3000))),
            ..Edges::default()
        };
        let monitor = vec![(at(1000), 1), (at(2000), 2)];
        let mut check = WindowCheck {
            edges: &edges,
            monitor: &monitor,
            noise_threshold: 0.05,
            user_hz: 100,
            method: Some(CpuMethod::Hotplug),
        };
        let err = check.apply(&mut cell(2, 4.0)).unwrap_err().to_string();
        assert!(err.contains("asked for 2 online CPUs, but 1 to 2 were online"), "{err}");
        let more = check.apply(&mut cell(1, 4.0)).unwrap_err().to_string();
        assert!(more.contains("asked for 1"), "hotplug set exactly one: {more}");
        check.method = Some(CpuMethod::Affinity);
        assert!(check.apply(&mut cell(1, 4.0)).is_ok(), "affinity leaves more CPUs online");
        check.method = None;
        assert!(check.apply(&mut cell(2, 4.0)).is_ok(), "a hotplug daemon decides the count");
    }
}
