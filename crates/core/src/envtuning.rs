//! The settings that explain run-to-run noise on real machines (issue 46): SMT, turbo, the
//! idle driver and governor and the deepest idle state allowed, the frequency governor and
//! energy-performance preference of every CPU, the kernel's configuration (a hash and the
//! options that matter), a chosen set of sysctls, the IRQ balance daemon and the DMI/BIOS
//! identity. Plain data, captured by racehorse-machine; a setting the machine does not have
//! is None (or missing from a map) and shows as "not available".

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The sysctls captured, by name (each a file under /proc/sys). Kept modest and stable: a key
/// added later shows as a difference against every older run. The four VM tunables the
/// environment held before (swappiness and the dirty ratios) are not repeated here.
pub const SYSCTLS: &[&str] = &[
    "vm.overcommit_memory",
    "vm.min_free_kbytes",
    "vm.watermark_scale_factor",
    "vm.zone_reclaim_mode",
    "vm.vfs_cache_pressure",
    "vm.dirty_bytes",
    "vm.dirty_background_bytes",
    "vm.dirty_writeback_centisecs",
    "vm.stat_interval",
    "kernel.sched_autogroup_enabled",
    "kernel.sched_cfs_bandwidth_slice_us",
    "kernel.sched_child_runs_first",
    "kernel.sched_energy_aware",
    "kernel.sched_rr_timeslice_ms",
    "kernel.sched_rt_period_us",
    "kernel.sched_rt_runtime_us",
    "kernel.sched_schedstats",
    "kernel.numa_balancing",
    "kernel.timer_migration",
    "net.core.somaxconn",
    "net.core.netdev_max_backlog",
    "net.core.rmem_default",
    "net.core.rmem_max",
    "net.core.wmem_default",
    "net.core.wmem_max",
    "net.core.busy_poll",
    "net.core.busy_read",
    "net.core.default_qdisc",
];

/// The files of /sys/class/dmi/id captured (serial numbers and UUIDs are left out).
pub const DMI_FIELDS: &[&str] = &["sys_vendor", "product_name", "bios_vendor", "bios_version", "bios_date"];

/// What a missing setting shows as.
pub const NOT_AVAILABLE: &str = "not available";

/// The running kernel's configuration: where it was read, its hash and the options that change
/// scheduling latency.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(default)]
pub struct KernelConfig {
    /// "/boot/config-RELEASE" or "/proc/config.gz".
    pub source: String,
    /// "fnv1a64:HEX" of the configuration text (decompressed for config.gz).
    pub hash: String,
    /// "none", "voluntary", "full" or "rt", with " (dynamic)" when the boot command line may
    /// change it (CONFIG_PREEMPT_DYNAMIC).
    pub preemption: Option<String>,
    /// CONFIG_HZ.
    pub hz: Option<u32>,
    /// The tick: "HZ_PERIODIC", "NO_HZ_IDLE" or "NO_HZ_FULL".
    pub tick: Option<String>,
}

/// The noise-relevant settings of a machine (see the module text).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
#[serde(default)]
pub struct Tuning {
    /// /sys/devices/system/cpu/smt/control: on, off, forceoff, notsupported, notimplemented.
    pub smt_control: Option<String>,
    /// /sys/devices/system/cpu/smt/active.
    pub smt_active: Option<bool>,
    /// Turbo/boost: "on" or "off" with the file that says so (intel_pstate/no_turbo,
    /// cpufreq/boost); both when both exist.
    pub turbo: Option<String>,
    /// /sys/devices/system/cpu/cpuidle/current_driver.
    pub idle_driver: Option<String>,
    /// /sys/devices/system/cpu/cpuidle/current_governor.
    pub idle_governor: Option<String>,
    /// The deepest idle state not disabled, "NAME (EXIT_LATENCY us)", summarised over CPUs.
    pub idle_deepest: Option<String>,
    /// cpufreq/scaling_governor of every online CPU, summarised.
    pub freq_governor: Option<String>,
    /// cpufreq/energy_performance_preference of every online CPU, summarised.
    pub epp: Option<String>,
    pub kernel_config: Option<KernelConfig>,
    /// The readable ones of [`SYSCTLS`], value as the file holds it (whitespace collapsed).
    pub sysctls: BTreeMap<String, String>,
    /// Whether an irqbalance process runs.
    pub irqbalance: Option<bool>,
    /// The readable ones of [`DMI_FIELDS`].
    pub dmi: BTreeMap<String, String>,
}

/// One value for all CPUs when they agree, else "0-1: a; 2: b" (runs of CPUs sharing a value,
/// CPUs ascending); None when no CPU has a value.
pub fn summarise_per_cpu(values: &[(u32, String)]) -> Option<String> {
    let mut v: Vec<&(u32, String)> = values.iter().collect();
    v.sort_by_key(|(c, _)| *c);
    let first = v.first()?;
    if v.iter().all(|(_, x)| *x == first.1) {
        return Some(first.1.clone());
    }
    let mut runs: Vec<(u32, u32, &str)> = Vec::new();
    for (cpu, value) in v {
        match runs.last_mut() {
            Some((_, end, val)) if *val == value.as_str() && *end + 1 == *cpu => *end = *cpu,
            _ => runs.push((*cpu, *cpu, value)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|(a, b, val)| if a == b { format!("{a}: {val}") } else { format!("{a}-{b}: {val}") })
        .collect();
    Some(parts.join("; "))
}

fn shown<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| NOT_AVAILABLE.to_string(), |x| x.to_string())
}

impl Tuning {
    /// Stable "key = value" pairs; a setting the machine lacks is "not available".
    pub fn flatten_into(&self, put: &mut impl FnMut(&str, String)) {
        put("cpu.smt.control", shown(&self.smt_control));
        put("cpu.smt.active", shown(&self.smt_active));
        put("cpu.turbo", shown(&self.turbo));
        put("cpu.freq.governor", shown(&self.freq_governor));
        put("cpu.freq.epp", shown(&self.epp));
        put("cpu.idle.driver", shown(&self.idle_driver));
        put("cpu.idle.governor", shown(&self.idle_governor));
        put("cpu.idle.deepest", shown(&self.idle_deepest));
        let kc = self.kernel_config.as_ref();
        put("kernel.config.source", shown(&kc.map(|k| k.source.clone())));
        put("kernel.config.hash", shown(&kc.map(|k| k.hash.clone())));
        put("kernel.config.preemption", shown(&kc.and_then(|k| k.preemption.clone())));
        put("kernel.config.hz", shown(&kc.and_then(|k| k.hz)));
        put("kernel.config.tick", shown(&kc.and_then(|k| k.tick.clone())));
        for name in SYSCTLS {
            put(&format!("sysctl.{name}"), shown(&self.sysctls.get(*name)));
        }
        let irq = self.irqbalance.map(|r| if r { "running" } else { "not running" });
        put("irq.balance_daemon", shown(&irq));
        for field in DMI_FIELDS {
            put(&format!("dmi.{field}"), shown(&self.dmi.get(*field)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn per(v: &[(u32, &str)]) -> Vec<(u32, String)> {
        v.iter().map(|(c, s)| (*c, s.to_string())).collect()
    }

    #[test]
    fn per_cpu_values_are_one_value_when_all_agree() {
        assert_eq!(summarise_per_cpu(&[]), None);
        assert_eq!(
            summarise_per_cpu(&per(&[(1, "powersave"), (0, "powersave")])).as_deref(),
            Some("powersave")
        );
        let mixed = per(&[(3, "b"), (0, "a"), (1, "a"), (2, "b"), (5, "a"), (7, "a")]);
        assert_eq!(summarise_per_cpu(&mixed).as_deref(), Some("0-1: a; 2-3: b; 5: a; 7: a"));
    }

    #[test]
    fn missing_settings_are_not_available() {
        let mut pairs = Vec::new();
        Tuning::default().flatten_into(&mut |k, v| pairs.push((k.to_string(), v)));
        assert!(pairs.iter().all(|(_, v)| v == NOT_AVAILABLE), "{pairs:?}");
        assert_eq!(pairs.len(), 8 + 5 + SYSCTLS.len() + 1 + DMI_FIELDS.len());
        let t = Tuning { irqbalance: Some(false), ..Default::default() };
        let mut pairs = Vec::new();
        t.flatten_into(&mut |k, v| pairs.push((k.to_string(), v)));
        assert!(pairs.contains(&("irq.balance_daemon".into(), "not running".into())));
    }

    #[test]
    fn a_tuning_stored_with_fewer_fields_reads() {
        let t: Tuning = serde_json::from_str(r#"{"smt_control":"on"}"#).expect("partial");
        assert_eq!(t.smt_control.as_deref(), Some("on"));
        assert!(t.sysctls.is_empty());
    }
}
