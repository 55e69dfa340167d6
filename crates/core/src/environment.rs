//! What the machine looked like for a run: kernel, distro, CPUs, caches, memory,
//! virtualization, target filesystems and devices, VM tunables, THP, governor and cgroup
//! limits. Plain data (captured by racehorse-machine, stored as JSON with each run, read
//! by the reports), flattened to stable keys so two runs can be diffed.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::envtuning::{KernelConfig, Tuning};

/// One CPU cache (from cpu0's cache/index* directories).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct CacheInfo {
    pub level: u32,
    /// "Data", "Instruction" or "Unified".
    pub kind: String,
    pub size_bytes: u64,
    pub shared_cpu_list: String,
}

/// Where a target directory lives. Fields are None when unknown (e.g. overlay or tmpfs have no disk).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct TargetInfo {
    pub path: String,
    pub fstype: Option<String>,
    /// Device as in the mount table ("/dev/vda1", "overlay").
    pub device: Option<String>,
    pub mount_point: Option<String>,
    pub mount_options: Option<String>,
    /// The whole disk in sys/block whose queue settings follow ("vda" for /dev/vda1).
    pub disk: Option<String>,
    /// The active I/O scheduler (the one in brackets).
    pub scheduler: Option<String>,
    pub read_ahead_kb: Option<u64>,
    pub rotational: Option<bool>,
    /// The volume behind the disk (LVM, md, multipath, btrfs over several devices, a loop
    /// device's file); None for a plain disk or where unknown.
    #[serde(default)]
    pub layout: Option<VolumeLayout>,
}

/// A volume built from other devices, as sysfs (and `dmsetup table`) describe it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct VolumeLayout {
    /// "lvm", "dm-multipath", "dm-crypt", "dm", "md", "btrfs" or "loop".
    pub kind: String,
    /// The dm name (vg-lv), the md device, the btrfs filesystem id, or a loop device's file.
    pub name: String,
    /// md: raid0, raid1 …; device-mapper: the table's target (linear, striped, multipath);
    /// btrfs: the data profile (single, raid0, raid1 …).
    pub level: Option<String>,
    /// Stripes (striped dm), disks (md) or devices (btrfs).
    pub stripes: Option<u32>,
    /// Stripe (chunk) size in bytes.
    pub stripe_bytes: Option<u64>,
    /// dm-multipath's path selector (round-robin, service-time, queue-length).
    pub policy: Option<String>,
    pub members: Vec<LayoutMember>,
}

/// One device a volume is built from, with the queue settings of its disk.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct LayoutMember {
    pub name: String,
    pub scheduler: Option<String>,
    pub read_ahead_kb: Option<u64>,
    pub rotational: Option<bool>,
}

/// The process's own cgroup and its limits.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct CgroupInfo {
    /// 1 when the memory controller is on a v1 hierarchy, else 2.
    pub version: u32,
    pub path: String,
    /// None when unlimited or unknown.
    pub memory_max_bytes: Option<u64>,
    /// cgroup v2 `cpu.max` format: "max 100000" or "QUOTA PERIOD" (v1 quota/period converted).
    pub cpu_max: Option<String>,
}

/// One NUMA node: its CPUs and memory.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct NumaNode {
    pub id: u32,
    /// Kernel CPU list, e.g. "0-7".
    pub cpu_list: String,
    pub memory_bytes: Option<u64>,
}

/// What the machine looked like for a run. Missing information is "unknown" or None.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Environment {
    pub hostname: String,
    pub kernel_release: String,
    pub kernel_version: String,
    /// PRETTY_NAME of etc/os-release.
    pub distro: String,
    pub cpu_model: String,
    pub cpus_online: u32,
    pub cpus_possible: u32,
    /// Kernel CPU list of online CPUs, e.g. "0-1".
    pub cpu_list_online: String,
    pub caches: Vec<CacheInfo>,
    pub memory_total_bytes: u64,
    /// "none", "vm", "vm (vendor product)" or "unknown".
    pub virtualization: String,
    pub targets: Vec<TargetInfo>,
    pub swappiness: Option<u32>,
    pub dirty_ratio: Option<u32>,
    pub dirty_background_ratio: Option<u32>,
    pub dirty_expire_centisecs: Option<u32>,
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    /// cpu0's cpufreq scaling_governor.
    pub governor: Option<String>,
    pub cgroup: Option<CgroupInfo>,
    /// Filled in by the caller.
    pub racehorse_version: String,
    /// How CPU count was controlled ("hotplug", "affinity", "none"); filled in by the caller.
    pub cpu_control: String,
    // The platform items below came with schema-less additions: runs stored before them read
    // as empty (serde default), and a diff against such a run shows them as "-" or absent.
    /// /proc/cmdline.
    #[serde(default)]
    pub kernel_cmdline: Option<String>,
    /// The CPU vulnerabilities and their mitigations (sys/devices/system/cpu/vulnerabilities).
    #[serde(default)]
    pub mitigations: BTreeMap<String, String>,
    /// cpu0's microcode revision (/proc/cpuinfo).
    #[serde(default)]
    pub microcode: Option<String>,
    /// NUMA nodes in id order.
    #[serde(default)]
    pub numa: Vec<NumaNode>,
    /// cpu0's cpufreq driver (scaling_driver).
    #[serde(default)]
    pub freq_driver: Option<String>,
    /// Compilers and runtimes on PATH and their first version line (cc, gcc, clang, rustc, java, javac).
    #[serde(default)]
    pub compilers: BTreeMap<String, String>,
    /// The settings behind run-to-run noise (SMT, turbo, idle, governors, kernel config,
    /// sysctls, IRQ balancing, DMI); None in runs stored before they were captured.
    #[serde(default)]
    pub tuning: Option<Tuning>,
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "-".to_string(), |x| x.to_string())
}

/// The keys of one volume layout under `prefix` (`target[0].layout.kind`, …).
fn put_layout(put: &mut impl FnMut(&str, String), prefix: &str, l: &VolumeLayout) {
    put(&format!("{prefix}.kind"), l.kind.clone());
    put(&format!("{prefix}.name"), l.name.clone());
    put(&format!("{prefix}.level"), opt(&l.level));
    put(&format!("{prefix}.stripes"), opt(&l.stripes));
    put(&format!("{prefix}.stripe_bytes"), opt(&l.stripe_bytes));
    put(&format!("{prefix}.policy"), opt(&l.policy));
    let names: Vec<&str> = l.members.iter().map(|m| m.name.as_str()).collect();
    put(&format!("{prefix}.members"), names.join(","));
    for m in &l.members {
        let p = format!("{prefix}.member.{}", m.name);
        put(&format!("{p}.scheduler"), opt(&m.scheduler));
        put(&format!("{p}.read_ahead_kb"), opt(&m.read_ahead_kb));
        put(&format!("{p}.rotational"), opt(&m.rotational));
    }
}

impl Environment {
    /// Stable "key = value" pairs (None renders as "-"), e.g. "kernel.release", `target[0].fstype`.
    pub fn flatten(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, v: String| out.push((k.to_string(), v));
        put("host.name", self.hostname.clone());
        put("kernel.release", self.kernel_release.clone());
        put("kernel.version", self.kernel_version.clone());
        put("kernel.cmdline", opt(&self.kernel_cmdline));
        put("distro", self.distro.clone());
        put("cpu.model", self.cpu_model.clone());
        put("cpu.online", self.cpus_online.to_string());
        put("cpu.possible", self.cpus_possible.to_string());
        put("cpu.online_list", self.cpu_list_online.clone());
        put("cpu.governor", opt(&self.governor));
        put("cpu.freq_driver", opt(&self.freq_driver));
        put("cpu.microcode", opt(&self.microcode));
        for (name, state) in &self.mitigations {
            put(&format!("cpu.vulnerability.{name}"), state.clone());
        }
        put("cpu.control", self.cpu_control.clone());
        for (i, c) in self.caches.iter().enumerate() {
            put(&format!("cache[{i}].level"), c.level.to_string());
            put(&format!("cache[{i}].kind"), c.kind.clone());
            put(&format!("cache[{i}].size_bytes"), c.size_bytes.to_string());
            put(&format!("cache[{i}].shared_cpu_list"), c.shared_cpu_list.clone());
        }
        put("memory.total_bytes", self.memory_total_bytes.to_string());
        put("numa.nodes", self.numa.len().to_string());
        for n in &self.numa {
            put(&format!("numa.node{}.cpus", n.id), n.cpu_list.clone());
            put(&format!("numa.node{}.memory_bytes", n.id), opt(&n.memory_bytes));
        }
        put("virtualization", self.virtualization.clone());
        for (i, t) in self.targets.iter().enumerate() {
            put(&format!("target[{i}].path"), t.path.clone());
            put(&format!("target[{i}].fstype"), opt(&t.fstype));
            put(&format!("target[{i}].device"), opt(&t.device));
            put(&format!("target[{i}].mount_point"), opt(&t.mount_point));
            put(&format!("target[{i}].mount_options"), opt(&t.mount_options));
            put(&format!("target[{i}].disk"), opt(&t.disk));
            put(&format!("target[{i}].scheduler"), opt(&t.scheduler));
            put(&format!("target[{i}].read_ahead_kb"), opt(&t.read_ahead_kb));
            put(&format!("target[{i}].rotational"), opt(&t.rotational));
            if let Some(l) = &t.layout {
                put_layout(&mut put, &format!("target[{i}].layout"), l);
            }
        }
        put("vm.swappiness", opt(&self.swappiness));
        put("vm.dirty_ratio", opt(&self.dirty_ratio));
        put("vm.dirty_background_ratio", opt(&self.dirty_background_ratio));
        put("vm.dirty_expire_centisecs", opt(&self.dirty_expire_centisecs));
        put("thp.enabled", opt(&self.thp_enabled));
        put("thp.defrag", opt(&self.thp_defrag));
        if let Some(t) = &self.tuning {
            t.flatten_into(&mut put);
        }
        let cg = self.cgroup.as_ref();
        put("cgroup.version", opt(&cg.map(|c| c.version)));
        put("cgroup.path", opt(&cg.map(|c| c.path.clone())));
        put("cgroup.memory_max_bytes", opt(&cg.and_then(|c| c.memory_max_bytes)));
        put("cgroup.cpu_max", opt(&cg.and_then(|c| c.cpu_max.clone())));
        for (name, version) in &self.compilers {
            put(&format!("compiler.{name}"), version.clone());
        }
        put("racehorse.version", self.racehorse_version.clone());
        out
    }

    /// Keys whose values differ: (key, value here, value in `other`); a key present on one side
    /// only shows "(absent)" on the other. Order: this side's keys, then keys only in `other`.
    pub fn diff(&self, other: &Environment) -> Vec<(String, String, String)> {
        let mine = self.flatten();
        let theirs: BTreeMap<String, String> = other.flatten().into_iter().collect();
        let absent = || "(absent)".to_string();
        let mut out: Vec<(String, String, String)> = mine
            .iter()
            .filter(|(k, v)| theirs.get(k) != Some(v))
            .map(|(k, v)| (k.clone(), v.clone(), theirs.get(k).cloned().unwrap_or_else(absent)))
            .collect();
        let my_keys: BTreeMap<&String, ()> = mine.iter().map(|(k, _)| (k, ())).collect();
        for (k, v) in other.flatten() {
            if !my_keys.contains_key(&k) {
                out.push((k, absent(), v));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_reports_changed_and_absent_keys() {
        let a = Environment {
            kernel_release: "6.1".into(),
            targets: vec![TargetInfo { path: "/a".into(), ..Default::default() }],
            ..Default::default()
        };
        let mut b = a.clone();
        assert!(a.diff(&b).is_empty());
        b.kernel_release = "6.6".into();
        b.swappiness = Some(10);
        b.targets.push(TargetInfo { path: "/b".into(), ..Default::default() });
        let d = a.diff(&b);
        assert!(d.contains(&("kernel.release".into(), "6.1".into(), "6.6".into())));
        assert!(d.contains(&("vm.swappiness".into(), "-".into(), "10".into())));
        assert!(d.contains(&("target[1].path".into(), "(absent)".into(), "/b".into())));
        assert_eq!(b.diff(&a).len(), d.len());
    }

    #[test]
    fn platform_items_are_flattened_and_diffed() {
        let mut a = Environment { kernel_cmdline: Some("ro quiet".into()), ..Default::default() };
        a.mitigations.insert("spectre_v2".into(), "Mitigation: Retpolines".into());
        a.numa = vec![NumaNode { id: 0, cpu_list: "0-3".into(), memory_bytes: Some(1 << 30) }];
        a.compilers.insert("gcc".into(), "gcc (Debian 12.2.0-14) 12.2.0".into());
        let mut b = a.clone();
        b.kernel_cmdline = Some("ro quiet mitigations=off".into());
        b.mitigations.insert("spectre_v2".into(), "Vulnerable".into());
        b.compilers.insert("gcc".into(), "gcc (Debian 13.2.0-25) 13.2.0".into());
        b.microcode = Some("0xf0".into());
        let d = a.diff(&b);
        let keys: Vec<&str> = d.iter().map(|(k, _, _)| k.as_str()).collect();
        assert_eq!(keys, ["kernel.cmdline", "cpu.microcode", "cpu.vulnerability.spectre_v2", "compiler.gcc"]);
        assert!(a.flatten().contains(&("numa.node0.cpus".into(), "0-3".into())));
    }

    #[test]
    fn tuning_is_flattened_and_diffed() {
        let old = Environment::default();
        assert!(!old.flatten().iter().any(|(k, _)| k.starts_with("cpu.smt")), "no tuning, no keys");
        let mut a = Environment { tuning: Some(Tuning::default()), ..Default::default() };
        assert!(a.flatten().contains(&("cpu.smt.control".into(), "not available".into())));
        let mut b = a.clone();
        b.tuning.as_mut().unwrap().smt_control = Some("off".into());
        b.tuning.as_mut().unwrap().sysctls.insert("vm.overcommit_memory".into(), "2".into());
        a.tuning.as_mut().unwrap().smt_control = Some("on".into());
        let d = a.diff(&b);
        assert!(d.contains(&("cpu.smt.control".into(), "on".into(), "off".into())), "{d:?}");
        assert!(d.contains(&("sysctl.vm.overcommit_memory".into(), "not available".into(), "2".into())));
        assert_eq!(d.len(), 2);
        let d = old.diff(&b);
        assert!(d.contains(&("cpu.smt.control".into(), "(absent)".into(), "off".into())));
    }

    #[test]
    fn an_environment_stored_before_the_platform_items_still_reads() {
        let e = Environment { kernel_release: "6.1".into(), ..Default::default() };
        let mut json: serde_json::Value = serde_json::to_value(&e).unwrap();
        for k in ["kernel_cmdline", "mitigations", "microcode", "numa", "freq_driver", "compilers", "tuning"]
        {
            json.as_object_mut().unwrap().remove(k);
        }
        let back: Environment = serde_json::from_value(json).unwrap();
        assert_eq!(back, e);
    }
}
