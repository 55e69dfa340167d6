//! How far one cell's figures can be trusted: the CPU other tenants used during its window
//! (noise), the workload's own CPU at sub-tick precision, and which figures were below their
//! resolution. A figure listed as below resolution is never shown as a plain number.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The name under which CPU figures (system CPU per unit: total, kernel, user) are listed in
/// [`CellQuality::below_resolution`].
pub const CPU: &str = "cpu";
/// The name under which the primary throughput is listed in [`CellQuality::below_resolution`].
pub const THROUGHPUT: &str = "throughput";

/// Noise and resolution of one cell's window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CellQuality {
    /// CPU seconds used in the window by user processes that are neither racehorse nor
    /// started by it (other tenants), from their /proc/PID/stat. None: not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_cpu_s: Option<f64>,
    /// CPU seconds used in the window by kernel threads (kworkers, ksoftirqd, …). Often work
    /// done for the workload (writeback, network softirqs), so it is reported, not counted
    /// as noise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kthread_cpu_s: Option<f64>,
    /// CPU seconds used in the window by racehorse and every process it started, at
    /// nanosecond precision (per-thread schedstat plus reaped children's rusage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_cpu_s: Option<f64>,
    /// Why the cell is noisy (outside CPU or steal over the threshold); None when quiet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noisy: Option<String>,
    /// Figures below their resolution: name ([`CPU`], [`THROUGHPUT`], `latency OP`, …) →
    /// why. Their raw inputs stay in the cell (cpu, units, extra).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub below_resolution: BTreeMap<String, String>,
}

impl CellQuality {
    /// True when `name` is listed as below its resolution.
    pub fn below(&self, name: &str) -> bool {
        self.below_resolution.contains_key(name)
    }

    /// Lists `name` as below its resolution, with the reason.
    pub fn mark_below(&mut self, name: &str, why: impl Into<String>) {
        self.below_resolution.insert(name.to_string(), why.into());
    }

    /// True when nothing about the cell needs a caveat.
    pub fn is_clean(&self) -> bool {
        self.noisy.is_none() && self.below_resolution.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_and_serialises_only_what_is_set() {
        let mut q = CellQuality::default();
        assert!(q.is_clean());
        assert_eq!(serde_json::to_string(&q).unwrap(), "{}");
        q.mark_below(CPU, "8 ticks");
        assert!(q.below(CPU) && !q.below(THROUGHPUT) && !q.is_clean());
        let back: CellQuality = serde_json::from_str(&serde_json::to_string(&q).unwrap()).unwrap();
        assert_eq!(back, q);
    }
}
