//! What one measured cell produces: units of work, the window, CPU consumption and derived
//! per-unit costs, latencies per operation, and the monitor time series.

use crate::histogram::LatencyHistogram;
use crate::params::CellSpec;
use crate::units::{Nanos, WorkUnit};
use serde::{Deserialize, Serialize};

/// System-wide CPU consumption over the measured window, from the aggregate `cpu` line of
/// /proc/stat, in CPU seconds. user = user+nice, kernel = system+irq+softirq.
/// iowait and idle are reported, not counted as consumption.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    pub user_s: f64,
    pub kernel_s: f64,
    pub steal_s: f64,
    pub iowait_s: f64,
    pub idle_s: f64,
}

impl CpuUsage {
    /// Consumed CPU: user + kernel (steal is the hypervisor's, not ours).
    pub fn total_s(&self) -> f64 {
        self.user_s + self.kernel_s
    }
}

/// CPU used by the workload's own processes or threads (cgroup, rusage), in CPU seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadCpu {
    pub user_s: f64,
    pub kernel_s: f64,
    pub method: CpuMethod,
}

/// How the workload's own CPU was measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuMethod {
    /// Not measured.
    #[default]
    None,
    /// getrusage(RUSAGE_THREAD) of the worker threads.
    Threads,
    /// Resource usage of child processes (wait4 / /proc/PID/stat).
    Children,
    /// The cpu.stat of a cgroup holding the workload.
    Cgroup,
}

impl WorkloadCpu {
    pub fn total_s(&self) -> f64 {
        self.user_s + self.kernel_s
    }
}

/// Per-operation statistics of a cell (e.g. dbench's ReadX, NTCreateX …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpStats {
    pub op: String,
    pub latency: LatencyHistogram,
}

/// One sampler point: rates over the preceding interval (default 1 s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SamplePoint {
    /// Milliseconds since the start of the cell (including warmup).
    pub t_ms: u64,
    pub cpu_user_pct: f64,
    pub cpu_kernel_pct: f64,
    pub cpu_iowait_pct: f64,
    pub cpu_steal_pct: f64,
    pub cpu_idle_pct: f64,
    pub run_queue: u32,
    pub blocked: u32,
    pub mem_free_bytes: u64,
    pub mem_cached_bytes: u64,
    pub mem_dirty_bytes: u64,
    pub pgpgin_per_s: f64,
    pub pgpgout_per_s: f64,
    pub pswpin_per_s: f64,
    pub pswpout_per_s: f64,
    pub disk_read_bytes_per_s: f64,
    pub disk_write_bytes_per_s: f64,
    pub ctxt_per_s: f64,
}

/// Outcome of one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    Ok,
    Failed,
    Interrupted,
}

impl CellStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CellStatus::Ok => "ok",
            CellStatus::Failed => "failed",
            CellStatus::Interrupted => "interrupted",
        }
    }
}

/// Outcome of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Complete,
    Partial,
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Partial => "partial",
            RunStatus::Interrupted => "interrupted",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "running" => RunStatus::Running,
            "complete" => RunStatus::Complete,
            "partial" => RunStatus::Partial,
            "interrupted" => RunStatus::Interrupted,
            _ => return None,
        })
    }
}

/// Everything one cell measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellResult {
    pub spec: CellSpec,
    pub status: CellStatus,
    pub error: Option<String>,
    /// Unit of the primary count.
    pub unit: WorkUnit,
    /// Units of work counted inside the measured window.
    pub units: f64,
    /// Length of the measured window [t0, t1].
    pub window: Nanos,
    /// Operations done in the window (for engines whose unit is bytes, the ops behind them).
    pub ops: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// System-wide CPU over the window.
    pub cpu: CpuUsage,
    /// The workload's own CPU over the window.
    pub workload_cpu: WorkloadCpu,
    /// The harness's (racehorse process minus workload threads) CPU over the window.
    pub harness_cpu_s: f64,
    /// Online CPUs during the cell and how that number was set ("hotplug", "affinity", "none").
    pub cpus_online: u32,
    pub latencies: Vec<OpStats>,
    pub samples: Vec<SamplePoint>,
    /// Engine-specific figures (name → value), e.g. reference tool's own reported number.
    pub extra: std::collections::BTreeMap<String, f64>,
    /// What the cell's variant set on the machine (setting → value, e.g.
    /// `sysctl vm.swappiness` → `10`); empty for a variant that changes nothing.
    #[serde(default)]
    pub settings: std::collections::BTreeMap<String, String>,
    /// Where the CPU time went in the window (`run --profile`), else None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::Profile>,
    /// Noise in the window and the figures below their resolution.
    #[serde(default)]
    pub quality: crate::CellQuality,
    /// For a cell run inside a KVM guest (`where = "guest"`): the host's CPU split into
    /// the guest's and the hypervisor's parts; None on bare metal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virt: Option<crate::virt::VirtCpu>,
}

impl CellResult {
    /// Units per second over the window, or None when the engine marked it below its
    /// resolution (e.g. an overhead subtraction that came out negative).
    pub fn throughput_resolved(&self) -> Option<f64> {
        (!self.quality.below(crate::quality::THROUGHPUT)).then(|| self.throughput())
    }

    /// Units per second over the window (the raw figure; see [`Self::throughput_resolved`]).
    pub fn throughput(&self) -> f64 {
        let s = self.window.as_secs_f64();
        if s > 0.0 {
            self.units / s
        } else {
            0.0
        }
    }

    /// None without units, or when the window's CPU figures are below their resolution.
    fn per_unit(&self, cpu_s: f64) -> Option<f64> {
        let resolved = !self.quality.below(crate::quality::CPU);
        (self.units > 0.0 && resolved).then(|| cpu_s / self.units)
    }

    /// Total (user + kernel) system CPU seconds per unit of work.
    pub fn cpu_total_per_unit(&self) -> Option<f64> {
        self.per_unit(self.cpu.total_s())
    }
    pub fn cpu_kernel_per_unit(&self) -> Option<f64> {
        self.per_unit(self.cpu.kernel_s)
    }
    pub fn cpu_user_per_unit(&self) -> Option<f64> {
        self.per_unit(self.cpu.user_s)
    }

    /// An empty result for `spec`, to be filled in by the runner.
    pub fn empty(spec: CellSpec, unit: WorkUnit) -> Self {
        CellResult {
            spec,
            status: CellStatus::Ok,
            error: None,
            unit,
            units: 0.0,
            window: Nanos(0),
            ops: 0,
            bytes_read: 0,
            bytes_written: 0,
            cpu: CpuUsage::default(),
            workload_cpu: WorkloadCpu::default(),
            harness_cpu_s: 0.0,
            cpus_online: 0,
            latencies: Vec::new(),
            samples: Vec::new(),
            extra: Default::default(),
            settings: Default::default(),
            profile: None,
            quality: Default::default(),
            virt: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;

    #[test]
    fn per_unit_costs_divide_by_units() {
        let spec =
            CellSpec { workload: "null".into(), params: Params::new(), variant: "default".into(), rep: 1 };
        let mut r = CellResult::empty(spec, WorkUnit::Bytes);
        r.units = 2e6;
        r.window = Nanos(2_000_000_000);
        r.cpu = CpuUsage { user_s: 1.0, kernel_s: 3.0, steal_s: 0.5, iowait_s: 0.1, idle_s: 0.0 };
        assert_eq!(r.throughput(), 1e6);
        assert_eq!(r.cpu_total_per_unit(), Some(2e-6));
        assert_eq!(r.cpu_kernel_per_unit(), Some(1.5e-6));
        assert_eq!(r.cpu_user_per_unit(), Some(0.5e-6));
        r.quality.mark_below(crate::quality::CPU, "8 ticks");
        assert_eq!(r.cpu_total_per_unit(), None, "below resolution: no plain number");
        assert_eq!(r.cpu.total_s(), 4.0, "the raw figure stays");
        r.quality.mark_below(crate::quality::THROUGHPUT, "negative");
        assert_eq!(r.throughput_resolved(), None);
        r.units = 0.0;
        assert_eq!(r.cpu_total_per_unit(), None);
    }
}
