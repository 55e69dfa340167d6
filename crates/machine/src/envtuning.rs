//! Reads the settings behind run-to-run noise ([`Tuning`]) from sysfs and procfs: SMT,
//! turbo, the idle driver, governor and deepest state allowed, every online CPU's frequency
//! governor and energy-performance preference, the kernel configuration (from /boot or
//! /proc/config.gz), the chosen sysctls, the irqbalance daemon and the DMI identity. A file
//! that is missing or unreadable leaves its setting out; nothing here fails.

use crate::cpuctl::online_cpus;
use crate::root::{read_trim, SysRoot};
use racehorse_core::envtuning::{summarise_per_cpu, KernelConfig, Tuning, DMI_FIELDS, SYSCTLS};
use std::collections::BTreeMap;

/// Captures every setting of [`Tuning`] from `root`.
pub(crate) fn capture(root: &SysRoot) -> Tuning {
    let cpu = |rel: &str| read_trim(&root.sys("devices/system/cpu").join(rel)).filter(|s| !s.is_empty());
    let cpus = online_cpus(root).unwrap_or_default();
    let per_cpu = |rel: &str| {
        let values: Vec<(u32, String)> =
            cpus.iter().filter_map(|&c| Some((c, cpu(&format!("cpu{c}/{rel}"))?))).collect();
        summarise_per_cpu(&values)
    };
    let deepest: Vec<(u32, String)> =
        cpus.iter().filter_map(|&c| Some((c, deepest_idle(root, c)?))).collect();
    Tuning {
        smt_control: cpu("smt/control"),
        smt_active: cpu("smt/active").map(|s| s == "1"),
        turbo: turbo(root),
        idle_driver: cpu("cpuidle/current_driver"),
        idle_governor: cpu("cpuidle/current_governor").or_else(|| cpu("cpuidle/current_governor_ro")),
        idle_deepest: summarise_per_cpu(&deepest),
        freq_governor: per_cpu("cpufreq/scaling_governor"),
        epp: per_cpu("cpufreq/energy_performance_preference"),
        kernel_config: kernel_config(root),
        sysctls: sysctls(root),
        irqbalance: irqbalance_runs(root),
        dmi: DMI_FIELDS
            .iter()
            .filter_map(|f| Some((f.to_string(), read_trim(&root.sys("class/dmi/id").join(f))?)))
            .filter(|(_, v)| !v.is_empty())
            .collect(),
    }
}

/// "on"/"off" with the file that says so: intel_pstate/no_turbo (1 = off) and cpufreq/boost
/// (1 = on), both when both exist.
fn turbo(root: &SysRoot) -> Option<String> {
    let dir = root.sys("devices/system/cpu");
    let mut said = Vec::new();
    if let Some(v) = read_trim(&dir.join("intel_pstate/no_turbo")) {
        said.push(format!("{} (intel_pstate/no_turbo = {v})", if v == "0" { "on" } else { "off" }));
    }
    if let Some(v) = read_trim(&dir.join("cpufreq/boost")) {
        said.push(format!("{} (cpufreq/boost = {v})", if v == "0" { "off" } else { "on" }));
    }
    (!said.is_empty()).then(|| said.join("; "))
}

/// CPU `cpu`'s deepest idle state whose `disable` is 0, as "NAME (LATENCY us)".
fn deepest_idle(root: &SysRoot, cpu: u32) -> Option<String> {
    let dir = root.sys(format!("devices/system/cpu/cpu{cpu}/cpuidle"));
    let mut states: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.file_name().to_str()?.strip_prefix("state")?.parse().ok()?, e.path())))
        .collect();
    states.sort_by_key(|(i, _)| *i);
    let (_, path) =
        states.iter().rev().find(|(_, p)| read_trim(&p.join("disable")).as_deref() != Some("1"))?;
    let name = read_trim(&path.join("name")).unwrap_or_else(|| "?".into());
    Some(match read_trim(&path.join("latency")) {
        Some(l) => format!("{name} ({l} us)"),
        None => name,
    })
}

/// The chosen sysctls that this kernel has, whitespace collapsed.
fn sysctls(root: &SysRoot) -> BTreeMap<String, String> {
    SYSCTLS
        .iter()
        .filter_map(|name| {
            let text = read_trim(&root.proc("sys").join(name.replace('.', "/")))?;
            Some((name.to_string(), text.split_whitespace().collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// Whether a process named irqbalance runs; None when the process table cannot be read.
fn irqbalance_runs(root: &SysRoot) -> Option<bool> {
    let rd = std::fs::read_dir(root.proc("")).ok()?;
    Some(
        rd.filter_map(Result::ok)
            .filter(|e| e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())))
            .any(|e| read_trim(&e.path().join("comm")).as_deref() == Some("irqbalance")),
    )
}

/// The running kernel's configuration: /boot/config-RELEASE, else /proc/config.gz
/// (decompressed by `gzip -dc`; its hash alone when gzip is missing).
fn kernel_config(root: &SysRoot) -> Option<KernelConfig> {
    let release = read_trim(&root.proc("sys/kernel/osrelease")).filter(|r| !r.is_empty());
    if let Some(release) = release {
        let boot = root.etc_dir.join("../boot").join(format!("config-{release}"));
        if let Ok(text) = std::fs::read_to_string(&boot) {
            return Some(parse_kernel_config(&format!("/boot/config-{release}"), &text));
        }
    }
    let gz = std::fs::read(root.proc("config.gz")).ok()?;
    Some(match gunzip(&gz) {
        Some(text) => parse_kernel_config("/proc/config.gz", &text),
        None => KernelConfig {
            source: "/proc/config.gz (compressed; gzip not found)".into(),
            hash: fnv1a64(&gz),
            ..Default::default()
        },
    })
}

/// `bytes` decompressed by `gzip -dc`; None when gzip is missing or fails.
fn gunzip(bytes: &[u8]) -> Option<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("gzip")
        .arg("-dc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    // Written from a thread: gzip's output would fill its pipe while we still write.
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().ok()?;
    let _ = writer.join();
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// "fnv1a64:HEX": a 64-bit FNV-1a hash, enough to tell two configurations apart.
pub(crate) fn fnv1a64(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// The hash of a kernel configuration and its preemption model, HZ and tick.
pub(crate) fn parse_kernel_config(source: &str, text: &str) -> KernelConfig {
    let opts: BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("CONFIG_")?.split_once('='))
        .map(|(k, v)| (k, v.trim_matches('"')))
        .collect();
    let on = |k: &str| opts.get(k) == Some(&"y");
    let model = [
        ("PREEMPT_RT", "rt"),
        ("PREEMPT", "full"),
        ("PREEMPT_VOLUNTARY", "voluntary"),
        ("PREEMPT_NONE", "none"),
    ]
    .iter()
    .find(|(k, _)| on(k))
    .map(|(_, m)| m.to_string());
    let preemption = match model {
        Some(m) if on("PREEMPT_DYNAMIC") => Some(format!("{m} (dynamic)")),
        other => other,
    };
    let tick = ["NO_HZ_FULL", "NO_HZ_IDLE", "HZ_PERIODIC"].iter().find(|k| on(k)).map(|k| k.to_string());
    KernelConfig {
        source: source.to_string(),
        hash: fnv1a64(text.as_bytes()),
        preemption,
        hz: opts.get("HZ").and_then(|v| v.parse().ok()),
        tick,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::fixture_dir;

    /// True when `path` holds a gzip stream.
    fn is_gzip(path: &std::path::Path) -> bool {
        std::fs::read(path).is_ok_and(|b| b.starts_with(&[0x1f, 0x8b]))
    }

    #[test]
    fn the_tuned_fixture_has_every_setting() {
        let t = capture(&SysRoot::at(fixture_dir("tuning")));
        assert_eq!((t.smt_control.as_deref(), t.smt_active), (Some("on"), Some(true)));
        assert_eq!(t.turbo.as_deref(), Some("off (intel_pstate/no_turbo = 1)"));
        assert_eq!(
            (t.idle_driver.as_deref(), t.idle_governor.as_deref()),
            (Some("intel_idle"), Some("menu"))
        );
        assert_eq!(t.idle_deepest.as_deref(), Some("0-2: C1E (10 us); 3: C1 (2 us)"));
        assert_eq!(t.freq_governor.as_deref(), Some("0-2: performance; 3: powersave"));
        assert_eq!(t.epp.as_deref(), Some("balance_performance"));
        let kc = t.kernel_config.expect("config");
        assert_eq!(kc.source, "/boot/config-6.1.0-tuned");
        assert_eq!(
            (kc.preemption.as_deref(), kc.hz, kc.tick.as_deref()),
            (Some("voluntary (dynamic)"), Some(250), Some("NO_HZ_IDLE"))
        );
        assert!(kc.hash.starts_with("fnv1a64:") && kc.hash.len() == 24, "{}", kc.hash);
        assert_eq!(t.sysctls.get("net.core.default_qdisc").map(String::as_str), Some("fq_codel"));
        assert_eq!(t.sysctls.get("vm.overcommit_memory").map(String::as_str), Some("0"));
        assert_eq!(t.sysctls.len(), 4, "only what the fixture has: {:?}", t.sysctls);
        assert_eq!(t.irqbalance, Some(true));
        assert_eq!(t.dmi.get("bios_version").map(String::as_str), Some("2.19.1"));
        assert_eq!(t.dmi.len(), 5, "the serial is not read: {:?}", t.dmi);
    }

    #[test]
    fn a_machine_without_the_files_has_none_of_them() {
        let t = capture(&SysRoot::at(fixture_dir("vm2")));
        assert_eq!((t.smt_control, t.turbo, t.idle_driver, t.idle_deepest), (None, None, None, None));
        assert_eq!((t.freq_governor, t.epp, t.kernel_config), (None, None, None));
        assert!(t.sysctls.is_empty());
        assert_eq!(t.dmi.keys().collect::<Vec<_>>(), ["product_name", "sys_vendor"], "no BIOS files");
        assert_eq!(t.irqbalance, Some(false), "vm2 has a process table without irqbalance");
        assert_eq!(capture(&SysRoot::at("/nonexistent-racehorse")).irqbalance, None);
    }

    #[test]
    fn kernel_config_options() {
        let c = parse_kernel_config("x", "# CONFIG_PREEMPT_NONE is not set\nCONFIG_PREEMPT=y\nCONFIG_HZ=1000\nCONFIG_NO_HZ_FULL=y\nCONFIG_NO_HZ_IDLE=y\n");
        assert_eq!(
            (c.preemption.as_deref(), c.hz, c.tick.as_deref()),
            (Some("full"), Some(1000), Some("NO_HZ_FULL"))
        );
        let rt = parse_kernel_config("x", "CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT=y\nCONFIG_HZ_PERIODIC=y\n");
        assert_eq!(
            (rt.preemption.as_deref(), rt.hz, rt.tick.as_deref()),
            (Some("rt"), None, Some("HZ_PERIODIC"))
        );
        let none = parse_kernel_config("x", "CONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\n");
        assert_eq!(none.preemption.as_deref(), Some("none"));
        assert_ne!(none.hash, rt.hash);
        assert_eq!(fnv1a64(b""), "fnv1a64:cbf29ce484222325");
        assert_eq!(fnv1a64(b"a"), "fnv1a64:af63dc4c8601ec8c");
    }

    #[test]
    fn proc_config_gz_is_read_when_boot_has_none() {
        let dir = tempfile::tempdir().expect("tmp");
        crate::fixtures::copy_tree(&fixture_dir("tuning"), dir.path());
        std::fs::remove_dir_all(dir.path().join("boot")).expect("rm boot");
        let plain = dir.path().join("proc/config");
        std::fs::write(&plain, "CONFIG_PREEMPT_NONE=y\nCONFIG_HZ=100\n").expect("write");
        let status = std::process::Command::new("gzip").arg("-n").arg(&plain).status();
        if !status.is_ok_and(|s| s.success()) || !is_gzip(&dir.path().join("proc/config.gz")) {
            racehorse_testkit::skip!("gzip could not build proc/config.gz");
            return;
        }
        let kc = kernel_config(&SysRoot::at(dir.path())).expect("config.gz");
        assert_eq!(
            (kc.source.as_str(), kc.preemption.as_deref(), kc.hz),
            ("/proc/config.gz", Some("none"), Some(100))
        );
        assert_eq!(
            kc.hash,
            fnv1a64(b"CONFIG_PREEMPT_NONE=y\nCONFIG_HZ=100\n"),
            "the hash of the text, as from /boot"
        );
    }
}
