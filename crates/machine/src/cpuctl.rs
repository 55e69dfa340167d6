//! CPU lists (online, possible) and how the number of CPUs can be controlled (hotplug or affinity).

use crate::error::MachineError;
use crate::root::{euid, read_text, read_trim, SysRoot};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How the number of CPUs available to a workload is changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuMethod {
    /// Writing 0/1 to /sys/devices/system/cpu/cpuN/online (root only).
    Hotplug,
    /// sched_setaffinity of the runner thread; workload threads inherit the mask.
    Affinity,
}

impl CpuMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            CpuMethod::Hotplug => "hotplug",
            CpuMethod::Affinity => "affinity",
        }
    }
}

/// Parses a kernel CPU list such as "0-3,5,7-8" (sorted, without duplicates). An empty
/// string (e.g. an empty `offline` file) is an empty list.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, MachineError> {
    let bad = |msg: String| MachineError::parse("cpu list", 1, msg);
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let num = |s: &str| s.trim().parse::<u32>().map_err(|_| bad(format!("bad CPU number {s:?}")));
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(bad(format!("range {part:?} goes backwards")));
                }
                if b - a > 1 << 16 {
                    return Err(bad(format!("range {part:?} is implausibly large")));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(num(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Formats CPUs as a kernel CPU list ("0-3,5"); the inverse of [`parse_cpu_list`].
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        i += 1;
    }
    parts.join(",")
}

fn read_list(path: PathBuf) -> Result<Vec<u32>, MachineError> {
    parse_cpu_list(&read_text(&path)?).map_err(|e| e.at_path(path))
}

/// CPUs currently online (`<sys>/devices/system/cpu/online`).
pub fn online_cpus(root: &SysRoot) -> Result<Vec<u32>, MachineError> {
    let listed = read_list(root.sys("devices/system/cpu/online"))?;
    if root.is_host() {
        return Ok(listed);
    }
    // A fixture tree has no kernel to keep the summary file in step with the per-CPU files
    // that a Guard writes: follow those, as the kernel would.
    let possible = possible_cpus(root).unwrap_or_else(|_| listed.clone());
    Ok(possible
        .into_iter()
        .filter(|&c| match read_trim(&online_file(root, c)).as_deref() {
            Some("1") => true,
            Some("0") => false,
            _ => listed.contains(&c),
        })
        .collect())
}

/// CPUs that could ever be online (`<sys>/devices/system/cpu/possible`).
pub fn possible_cpus(root: &SysRoot) -> Result<Vec<u32>, MachineError> {
    read_list(root.sys("devices/system/cpu/possible"))
}

/// The hotplug control file of CPU `cpu`.
pub fn online_file(root: &SysRoot, cpu: u32) -> PathBuf {
    root.sys(format!("devices/system/cpu/cpu{cpu}/online"))
}

pub(crate) fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: `c` is a valid NUL-terminated path; access only inspects it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Hotplug when we are root (or `root` is a fixture tree) and some cpuN/online with N ≥ 1 exists
/// and is writable (a read-only /sys in a container gives Affinity); else Affinity.
pub fn detect_method(root: &SysRoot) -> CpuMethod {
    if root.is_host() && euid() != 0 {
        return CpuMethod::Affinity;
    }
    let cpus = possible_cpus(root).unwrap_or_default();
    let any = cpus.iter().filter(|&&c| c >= 1).any(|&c| {
        let f = online_file(root, c);
        f.exists() && writable(&f)
    });
    if any {
        CpuMethod::Hotplug
    } else {
        CpuMethod::Affinity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_lists() {
        assert_eq!(parse_cpu_list("0-3,5\n").expect("ok"), vec![0, 1, 2, 3, 5]);
        assert_eq!(parse_cpu_list("0").expect("ok"), vec![0]);
        assert_eq!(parse_cpu_list("\n").expect("ok"), Vec::<u32>::new());
        assert_eq!(parse_cpu_list("4,0-1,1").expect("ok"), vec![0, 1, 4]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("a").is_err());
        assert!(parse_cpu_list("0-").is_err());
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 5, 7, 8]), "0-3,5,7-8");
        assert_eq!(CpuMethod::Hotplug.as_str(), "hotplug");
        assert_eq!(serde_json::to_string(&CpuMethod::Affinity).expect("json"), "\"affinity\"");
    }

    proptest! {
        #[test]
        fn cpu_list_round_trips(mut cpus in proptest::collection::vec(0u32..512, 0..64)) {
            let text = format_cpu_list(&cpus);
            let parsed = parse_cpu_list(&text).expect("own output parses");
            cpus.sort_unstable();
            cpus.dedup();
            prop_assert_eq!(parsed, cpus);
        }

        #[test]
        fn cpu_list_never_panics(s in "[0-9,\\- ]{0,20}") {
            if let Ok(v) = parse_cpu_list(&s) {
                prop_assert!(v.windows(2).all(|w| w[0] < w[1]));
            }
        }
    }
}
