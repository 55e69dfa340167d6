//! Probes for the platform part of the environment, the items a performance engineer checks
//! first when two machines disagree (PTS's system table): the kernel command line, the CPU
//! vulnerability mitigations in force, the microcode revision, the NUMA layout, the CPU
//! frequency driver, and the versions of the compilers and runtimes on PATH (the JDK from its
//! `release` file).

use crate::path::{find_in, is_executable};
use crate::root::{read_trim, SysRoot};
use racehorse_core::environment::NumaNode;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Programs whose version is recorded when found on PATH: the C compilers the compute engine
/// builds its kernels with. Each answers `--version` in milliseconds; runtimes that take
/// a large part of a second to start (rustc behind rustup, java) are left out, so that
/// capturing the environment does not delay the first window (the JDK is named from its
/// `release` file instead, see [`jdk`], and each java cell records the JDK it ran).
pub const COMPILERS: &[(&str, &str)] = &[("cc", "--version"), ("gcc", "--version"), ("clang", "--version")];

/// How long one `--version` may take before it is given up (a wedged wrapper must not hold
/// the run).
const VERSION_TIMEOUT: Duration = Duration::from_secs(3);

/// The kernel command line.
pub(crate) fn cmdline(root: &SysRoot) -> Option<String> {
    read_trim(&root.proc("cmdline")).filter(|s| !s.is_empty())
}

/// Each file of sys/devices/system/cpu/vulnerabilities with its text ("Mitigation: PTI",
/// "Not affected", "Vulnerable" …), by name.
pub(crate) fn mitigations(root: &SysRoot) -> BTreeMap<String, String> {
    let dir = root.sys("devices/system/cpu/vulnerabilities");
    let Ok(rd) = std::fs::read_dir(&dir) else { return BTreeMap::new() };
    rd.filter_map(Result::ok)
        .filter_map(|e| Some((e.file_name().to_string_lossy().into_owned(), read_trim(&e.path())?)))
        .collect()
}

/// The first CPU's microcode revision from cpuinfo text.
pub(crate) fn microcode(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "microcode" && !v.trim().is_empty()).then(|| v.trim().to_string())
    })
}

/// NUMA nodes in id order: each one's CPU list and memory (sys/devices/system/node/nodeN).
pub(crate) fn numa(root: &SysRoot) -> Vec<NumaNode> {
    let dir = root.sys("devices/system/node");
    let Ok(rd) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut nodes: Vec<NumaNode> = rd
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let id: u32 = name.strip_prefix("node")?.parse().ok()?;
            let meminfo = std::fs::read_to_string(e.path().join("meminfo")).unwrap_or_default();
            Some(NumaNode {
                id,
                cpu_list: read_trim(&e.path().join("cpulist")).unwrap_or_default(),
                memory_bytes: node_mem_total_kb(&meminfo).map(|kb| kb.saturating_mul(1024)),
            })
        })
        .collect();
    nodes.sort_by_key(|n| n.id);
    nodes
}

/// "Node 0 MemTotal:  19490592 kB" → 19490592.
fn node_mem_total_kb(text: &str) -> Option<u64> {
    let (_, rest) = text.lines().find_map(|l| l.split_once("MemTotal:"))?;
    rest.split_ascii_whitespace().next()?.parse().ok()
}

/// The cpufreq driver of cpu0 (acpi-cpufreq, intel_pstate, cppc_cpufreq …).
pub(crate) fn freq_driver(root: &SysRoot) -> Option<String> {
    read_trim(&root.sys("devices/system/cpu/cpu0/cpufreq/scaling_driver")).filter(|s| !s.is_empty())
}

/// The first version line of every program of [`COMPILERS`] found in `path` (a PATH value),
/// all asked at once so that the slowest alone sets the time.
pub fn compilers(path: &str) -> BTreeMap<String, String> {
    let dirs: Vec<PathBuf> = std::env::split_paths(path).collect();
    std::thread::scope(|s| {
        let asks: Vec<_> = COMPILERS
            .iter()
            .filter_map(|(name, flag)| Some((*name, find_in(dirs.clone(), name, is_executable)?, *flag)))
            .map(|(name, exe, flag)| (name, s.spawn(move || version_line(&exe, flag))))
            .collect();
        asks.into_iter().filter_map(|(name, ask)| Some((name.to_string(), ask.join().ok()??))).collect()
    })
}

/// The JDK a Java cell would use (`$JAVA_HOME`, else the `java` on `path`), as its `release`
/// file names it: `17.0.15+6-Debian-1deb12u1 (Debian) /usr/lib/jvm/java-17-openjdk-amd64`.
/// Reading a file takes microseconds where `java -version` takes a large part of a second, so
/// the JDK is in every run's environment; None when there is no JDK or no `release` file.
pub fn jdk(path: &str, java_home: Option<&str>) -> Option<String> {
    let home = match java_home.filter(|h| !h.is_empty()) {
        Some(h) => PathBuf::from(h),
        None => {
            let java = find_in(std::env::split_paths(path), "java", is_executable)?;
            // bin/java (behind the alternatives' links) → its home.
            std::fs::canonicalize(java).ok()?.parent()?.parent()?.to_path_buf()
        }
    };
    let release = std::fs::read_to_string(home.join("release")).ok()?;
    let field = |key: &str| {
        release.lines().find_map(|l| {
            let v = l.strip_prefix(key)?.strip_prefix('=')?;
            Some(v.trim().trim_matches('"').to_string())
        })
    };
    let version = field("JAVA_RUNTIME_VERSION").or_else(|| field("JAVA_VERSION"))?;
    let vendor = field("IMPLEMENTOR").unwrap_or_else(|| "unknown vendor".into());
    Some(format!("{version} ({vendor}) {}", home.display()))
}

/// The first non-empty line `exe flag` prints (stdout, else stderr, where java writes it),
/// or None when it fails or takes longer than [`VERSION_TIMEOUT`].
fn version_line(exe: &Path, flag: &str) -> Option<String> {
    let mut child = Command::new(exe)
        .arg(flag)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < VERSION_TIMEOUT => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    if !status.success() {
        return None;
    }
    let mut text = String::new();
    child.stdout.take()?.read_to_string(&mut text).ok()?;
    if text.trim().is_empty() {
        child.stderr.take()?.read_to_string(&mut text).ok()?;
    }
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::fixture_dir;

    #[test]
    fn the_fixture_machine_has_its_cmdline_mitigations_microcode_numa_and_driver() {
        let root = SysRoot::at(fixture_dir("baremetal4"));
        assert_eq!(
            cmdline(&root).as_deref(),
            Some("BOOT_IMAGE=/vmlinuz-6.1.0 root=/dev/sda1 ro mitigations=auto")
        );
        let m = mitigations(&root);
        assert_eq!(m.get("meltdown").map(String::as_str), Some("Not affected"));
        assert_eq!(m.get("spectre_v2").map(String::as_str), Some("Mitigation: Retpolines; STIBP: disabled"));
        let cpuinfo = std::fs::read_to_string(root.proc("cpuinfo")).unwrap();
        assert_eq!(microcode(&cpuinfo).as_deref(), Some("0xf0"));
        let nodes = numa(&root);
        assert_eq!(nodes.len(), 2);
        assert_eq!(
            (nodes[0].id, nodes[0].cpu_list.as_str(), nodes[0].memory_bytes),
            (0, "0-1", Some(8_000_000 * 1024))
        );
        assert_eq!((nodes[1].id, nodes[1].cpu_list.as_str()), (1, "2-3"));
        assert_eq!(freq_driver(&root).as_deref(), Some("intel_pstate"));
    }

    #[test]
    fn a_machine_without_the_files_has_none_of_them() {
        let root = SysRoot::at(fixture_dir("vm2"));
        assert_eq!(freq_driver(&root), None);
        assert!(numa(&root).is_empty());
        assert!(mitigations(&root).is_empty());
        assert_eq!(microcode("processor : 0\nflags : fpu\n"), None);
    }

    #[test]
    fn compilers_are_found_on_path_with_their_first_version_line() {
        use std::os::unix::fs::PermissionsExt;
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let fake = |dir: &Path, name: &str, script: &str| {
            let p = dir.join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        fake(a.path(), "cc", "echo 'cc (Debian 12.2.0-14) 12.2.0'; echo 'Copyright'");
        fake(a.path(), "gcc", "echo 'gcc version 12 (on stderr)' >&2");
        fake(a.path(), "clang", "sleep 30");
        let found = compilers(&a.path().to_string_lossy());
        assert_eq!(found.get("cc").map(String::as_str), Some("cc (Debian 12.2.0-14) 12.2.0"));
        assert_eq!(found.get("gcc").map(String::as_str), Some("gcc version 12 (on stderr)"));
        assert!(!found.contains_key("clang"), "a program that hangs is given up");
        fake(b.path(), "cc", "echo 'cc 1'; exit 1");
        let found = compilers(&b.path().to_string_lossy());
        assert!(found.is_empty(), "a failing program records nothing, a missing one neither: {found:?}");
    }

    #[test]
    fn the_jdk_is_named_by_its_release_file() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let bin = home.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::fs::write(bin.join("java"), "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::set_permissions(bin.join("java"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(jdk(&bin.to_string_lossy(), None), None, "no release file");
        std::fs::write(
            home.path().join("release"),
            "IMPLEMENTOR=\"Debian\"\nJAVA_RUNTIME_VERSION=\"17.0.15+6-Debian-1deb12u1\"\nJAVA_VERSION=\"17.0.15\"\n",
        )
        .unwrap();
        let real = std::fs::canonicalize(home.path()).unwrap();
        let want = format!("17.0.15+6-Debian-1deb12u1 (Debian) {}", real.display());
        assert_eq!(jdk(&bin.to_string_lossy(), None), Some(want), "found on PATH");
        let by_home = jdk("", Some(&home.path().to_string_lossy())).unwrap();
        assert!(by_home.starts_with("17.0.15+6-Debian-1deb12u1 (Debian) "), "{by_home}");
        assert_eq!(jdk("", None), None, "nothing on an empty PATH");
    }
}
