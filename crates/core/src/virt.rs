//! The CPU of a cell measured inside a KVM guest, in the seeds' three parts: Total (the
//! host's CPU in the window), Guest (time the vCPU threads spent in guest mode: the
//! "virtual" part) and Hypervisor (Total − Guest: QEMU's own threads, the host kernel's
//! work for the guest, the "real" or CP part).

use crate::result::{CellResult, CpuUsage};
use crate::units::Nanos;
use serde::{Deserialize, Serialize};

/// The name under which the guest-time figures (Guest and Hypervisor CPU per unit) are
/// listed in [`crate::CellQuality::below_resolution`].
pub const GUEST_CPU: &str = "guest cpu";

/// The host's CPU over a guest's measured window, split.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct VirtCpu {
    /// Host CPU (user + kernel of /proc/stat) between the guest's window signals, seconds.
    pub total_s: f64,
    /// guest_time of the QEMU vCPU threads over the same moments, seconds.
    pub guest_s: f64,
    /// Total − Guest, seconds (never below 0).
    pub hypervisor_s: f64,
    /// CPU of the whole QEMU process (every thread's user + system, guest time included).
    pub qemu_s: f64,
    /// Virtual CPUs and memory of the guest.
    pub vcpus: u32,
    pub mem_mib: u64,
    /// The guest's own /proc/stat over its window (what a tool inside the guest sees).
    pub guest_view: CpuUsage,
    /// Host wall time between the guest's window signals.
    #[serde(rename = "host_window_ns")]
    pub host_window: Nanos,
    /// From starting QEMU to the guest's first message (kernel boot and racehorse's init).
    #[serde(rename = "boot_ns")]
    pub boot: Nanos,
}

impl VirtCpu {
    /// The split of `total_s` given the vCPU threads' guest time.
    pub fn split(total_s: f64, guest_s: f64) -> (f64, f64) {
        (guest_s, (total_s - guest_s).max(0.0))
    }
}

impl CellResult {
    fn virt_per_unit(&self, pick: fn(&VirtCpu) -> f64, quality: &[&str]) -> Option<f64> {
        let v = self.virt.as_ref()?;
        let resolved = quality.iter().all(|q| !self.quality.below(q));
        (self.units > 0.0 && resolved).then(|| pick(v) / self.units)
    }

    /// Host CPU seconds per unit of a guest cell (None on bare metal).
    pub fn virt_total_per_unit(&self) -> Option<f64> {
        self.virt_per_unit(|v| v.total_s, &[crate::quality::CPU])
    }

    /// Guest-mode CPU seconds per unit (the virtual part).
    pub fn virt_guest_per_unit(&self) -> Option<f64> {
        self.virt_per_unit(|v| v.guest_s, &[GUEST_CPU])
    }

    /// Hypervisor CPU seconds per unit (the real part: Total − Guest).
    pub fn virt_hypervisor_per_unit(&self) -> Option<f64> {
        self.virt_per_unit(|v| v.hypervisor_s, &[crate::quality::CPU, GUEST_CPU])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{CellSpec, Params};
    use crate::units::WorkUnit;

    #[test]
    fn the_three_parts_per_unit_and_their_resolution() {
        let spec = CellSpec { workload: "null".into(), params: Params::new(), variant: "v".into(), rep: 1 };
        let mut r = CellResult::empty(spec, WorkUnit::Ops);
        r.units = 100.0;
        assert_eq!(r.virt_total_per_unit(), None, "bare metal has no split");
        let (guest_s, hypervisor_s) = VirtCpu::split(3.0, 2.0);
        r.virt = Some(VirtCpu { total_s: 3.0, guest_s, hypervisor_s, ..VirtCpu::default() });
        assert_eq!(r.virt_total_per_unit(), Some(0.03));
        assert_eq!(r.virt_guest_per_unit(), Some(0.02));
        assert_eq!(r.virt_hypervisor_per_unit(), Some(0.01));
        assert_eq!(VirtCpu::split(1.0, 1.2), (1.2, 0.0), "tick rounding never gives a negative part");
        r.quality.mark_below(GUEST_CPU, "3 ticks");
        assert_eq!((r.virt_guest_per_unit(), r.virt_hypervisor_per_unit()), (None, None));
        assert!(r.virt_total_per_unit().is_some());
        let json = serde_json::to_string(&r).unwrap();
        let back: CellResult = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
