//! Environment capture: reads kernel, distro, CPUs, caches, memory, virtualization, target
//! filesystems, VM tunables, THP, governor, cgroup limits and the platform items (command
//! line, mitigations, microcode, NUMA, frequency driver, compilers) and the settings behind
//! run-to-run noise (SMT, turbo, idle, governors, kernel config, sysctls, DMI) into the plain
//! [`Environment`] type of racehorse-core.

use crate::cpuctl::parse_cpu_list;
use crate::meminfo::read_meminfo;
use crate::mounts::read_mounts;
use crate::root::{bracketed, read_num, read_trim, SysRoot};
use crate::{envplatform, envprobe, envtuning};
use std::path::PathBuf;

pub use racehorse_core::environment::{
    CacheInfo, CgroupInfo, Environment, LayoutMember, NumaNode, TargetInfo, VolumeLayout,
};

fn or_unknown(v: Option<String>) -> String {
    v.filter(|s| !s.is_empty()).unwrap_or_else(|| "unknown".to_string())
}

/// PRETTY_NAME from os-release text (quotes removed).
pub fn os_release_pretty_name(text: &str) -> Option<String> {
    let v = text.lines().find_map(|l| l.strip_prefix("PRETTY_NAME="))?;
    Some(v.trim().trim_matches('"').trim_matches('\'').to_string())
}

/// Captures the environment of `root`; never fails (missing files give "unknown"/None).
pub fn capture(root: &SysRoot, targets: &[PathBuf]) -> Environment {
    let cpuinfo = std::fs::read_to_string(root.proc("cpuinfo")).ok();
    let online_text = read_trim(&root.sys("devices/system/cpu/online"));
    let count = |t: Option<String>| t.and_then(|t| parse_cpu_list(&t).ok()).map_or(0, |v| v.len() as u32);
    let mounts = read_mounts(root).unwrap_or_default();
    let vm = |name: &str| read_num(&root.proc("sys/vm").join(name));
    let thp = |name: &str| {
        read_trim(&root.sys("kernel/mm/transparent_hugepage").join(name)).and_then(|s| bracketed(&s))
    };
    Environment {
        hostname: or_unknown(read_trim(&root.proc("sys/kernel/hostname"))),
        kernel_release: or_unknown(read_trim(&root.proc("sys/kernel/osrelease"))),
        kernel_version: or_unknown(read_trim(&root.proc("sys/kernel/version"))),
        distro: or_unknown(
            read_trim(&root.etc("os-release"))
                .or_else(|| read_trim(&root.etc_dir.join("../usr/lib/os-release")))
                .and_then(|t| os_release_pretty_name(&t)),
        ),
        cpu_model: or_unknown(cpuinfo.as_deref().and_then(envprobe::cpu_model)),
        cpus_online: count(online_text.clone()),
        cpus_possible: count(read_trim(&root.sys("devices/system/cpu/possible"))),
        cpu_list_online: or_unknown(online_text),
        caches: envprobe::caches(root),
        memory_total_bytes: read_meminfo(root).map_or(0, |m| m.total_bytes),
        virtualization: envprobe::virtualization(root, cpuinfo.as_deref()),
        targets: targets.iter().map(|t| envprobe::target_info(root, &mounts, t)).collect(),
        swappiness: vm("swappiness"),
        dirty_ratio: vm("dirty_ratio"),
        dirty_background_ratio: vm("dirty_background_ratio"),
        dirty_expire_centisecs: vm("dirty_expire_centisecs"),
        thp_enabled: thp("enabled"),
        thp_defrag: thp("defrag"),
        governor: read_trim(&root.sys("devices/system/cpu/cpu0/cpufreq/scaling_governor")),
        cgroup: envprobe::cgroup(root, &mounts),
        racehorse_version: String::new(),
        cpu_control: String::new(),
        kernel_cmdline: envplatform::cmdline(root),
        mitigations: envplatform::mitigations(root),
        microcode: cpuinfo.as_deref().and_then(envplatform::microcode),
        numa: envplatform::numa(root),
        freq_driver: envplatform::freq_driver(root),
        tuning: Some(envtuning::capture(root)),
        // Programs are looked up on the real PATH only: a fixture root has none of its own.
        compilers: if root.is_host() {
            let path = std::env::var("PATH").unwrap_or_default();
            let mut found = envplatform::compilers(&path);
            let home = std::env::var("JAVA_HOME").ok();
            if let Some(jdk) = envplatform::jdk(&path, home.as_deref()) {
                found.insert("java".into(), jdk);
            }
            found
        } else {
            Default::default()
        },
    }
}

/// The volume layout behind `path` now (a mount point of a volume racehorse built, say).
pub fn layout_of(root: &SysRoot, path: &std::path::Path) -> Option<VolumeLayout> {
    let mounts = read_mounts(root).unwrap_or_default();
    envprobe::target_info(root, &mounts, path).layout
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_name() {
        let t = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n";
        assert_eq!(os_release_pretty_name(t).as_deref(), Some("Debian GNU/Linux 12 (bookworm)"));
        assert_eq!(os_release_pretty_name("ID=x\n"), None);
    }

    #[test]
    fn host_capture_never_fails() {
        let e = capture(&SysRoot::host(), &[PathBuf::from("/tmp"), PathBuf::from("relative/dir")]);
        assert!(e.cpus_online >= 1);
        assert!(e.memory_total_bytes > 0);
        assert_eq!(e.targets.len(), 2);
        assert!(e.targets[0].mount_point.is_some());
        let flat = e.flatten();
        assert!(flat.iter().any(|(k, _)| k == "target[1].fstype"));
        let json = serde_json::to_string(&e).expect("json");
        let back: Environment = serde_json::from_str(&json).expect("parse");
        assert_eq!(back, e);
    }
}
