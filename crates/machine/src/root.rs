//! Where the /proc, /sys and /etc trees live: the host's, or a fixture tree for tests.

use crate::error::MachineError;
use std::path::{Path, PathBuf};

/// The roots every parser reads from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SysRoot {
    pub proc_dir: PathBuf,
    pub sys_dir: PathBuf,
    pub etc_dir: PathBuf,
}

impl SysRoot {
    /// The running machine: /proc, /sys, /etc.
    pub fn host() -> Self {
        SysRoot { proc_dir: "/proc".into(), sys_dir: "/sys".into(), etc_dir: "/etc".into() }
    }

    /// A fixture tree: `dir/proc`, `dir/sys`, `dir/etc`.
    pub fn at(dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        SysRoot { proc_dir: dir.join("proc"), sys_dir: dir.join("sys"), etc_dir: dir.join("etc") }
    }

    /// True when this is the running machine's /proc (so pids and affinity refer to real processes).
    pub fn is_host(&self) -> bool {
        self.proc_dir == Path::new("/proc")
    }

    pub fn proc(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.proc_dir.join(rel)
    }

    pub fn sys(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.sys_dir.join(rel)
    }

    pub fn etc(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.etc_dir.join(rel)
    }

    /// Maps an absolute host path seen in /proc/self/mounts (e.g. "/sys/fs/cgroup") into this root.
    pub fn map_host_path(&self, host_path: &Path) -> PathBuf {
        for (prefix, dir) in [("/sys", &self.sys_dir), ("/proc", &self.proc_dir), ("/etc", &self.etc_dir)] {
            if let Ok(rest) = host_path.strip_prefix(prefix) {
                return dir.join(rest);
            }
        }
        host_path.to_path_buf()
    }
}

/// Reads a whole file to a string.
pub(crate) fn read_text(path: &Path) -> Result<String, MachineError> {
    std::fs::read_to_string(path).map_err(|e| MachineError::io(path, e))
}

/// Reads a small file and trims it; None when missing or unreadable.
pub(crate) fn read_trim(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Reads a small file holding one integer; None when missing or not a number.
pub(crate) fn read_num<T: std::str::FromStr>(path: &Path) -> Option<T> {
    read_trim(path).and_then(|s| s.parse().ok())
}

/// Writes `value` to a sysfs/procfs control file in one write (O_TRUNC, as `echo v > file` does).
pub(crate) fn write_ctl(path: &Path, value: &str) -> Result<(), MachineError> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| MachineError::io(path, e))?;
    // An empty value must still reach the kernel (e.g. an empty cpuset.cpus): write a newline.
    let bytes = if value.is_empty() { "\n" } else { value };
    f.write_all(bytes.as_bytes()).map_err(|e| MachineError::io(path, e))
}

/// The value marked with [brackets] in files such as queue/scheduler or THP "enabled".
pub(crate) fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

/// Effective user id.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_joins_subdirs() {
        let r = SysRoot::at("/x");
        assert_eq!(r.proc_dir, PathBuf::from("/x/proc"));
        assert_eq!(r.sys("block"), PathBuf::from("/x/sys/block"));
        assert!(!r.is_host());
        assert!(SysRoot::host().is_host());
    }

    #[test]
    fn maps_host_paths() {
        let r = SysRoot::at("/x");
        assert_eq!(r.map_host_path(Path::new("/sys/fs/cgroup")), PathBuf::from("/x/sys/fs/cgroup"));
        assert_eq!(r.map_host_path(Path::new("/data")), PathBuf::from("/data"));
    }

    #[test]
    fn bracketed_value() {
        assert_eq!(bracketed("mq-deadline [none] kyber").as_deref(), Some("none"));
        assert_eq!(bracketed("always [madvise] never\n").as_deref(), Some("madvise"));
        assert_eq!(bracketed("none"), None);
    }
}
