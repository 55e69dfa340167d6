//! Memory limit through a child cgroup, for `Guard::limit_memory`: finds this process's memory
//! cgroup (v1 `memory` hierarchy or v2 unified) from proc/self/cgroup and proc/self/mountinfo,
//! creates `<current>/racehorse-<pid>` with a limit, moves the whole process in, and undoes it.
//!
//! On a fixture root (not the host's /proc) plain directories stand in for cgroupfs: a new child
//! gets copies of its parent's files (with an empty cgroup.procs), and removing it first removes
//! those files, as the kernel does for its control files.

use crate::error::MachineError;
use crate::mounts::read_mounts;
use crate::root::{euid, read_num, read_text, read_trim, write_ctl, SysRoot};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The smallest memory limit accepted (16 MiB).
pub const MIN_LIMIT_BYTES: u64 = 16 << 20;

/// A memory limit in force, for the caller to record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CgroupLimit {
    /// 1 (v1 `memory` hierarchy) or 2 (unified hierarchy).
    pub version: u32,
    /// Directory of the child cgroup, e.g. `/sys/fs/cgroup/memory/<current>/racehorse-<pid>`.
    pub path: PathBuf,
    /// The limit as the kernel reports it back (the request rounded down to whole pages).
    pub limit_bytes: u64,
    /// Swap is limited too: v1 memory.memsw.limit_in_bytes = the limit, v2 memory.swap.max = 0.
    pub swap_limited: bool,
}

impl CgroupLimit {
    /// Memory charged to the child cgroup now (memory.usage_in_bytes or memory.current).
    pub fn memory_usage_bytes(&self) -> Option<u64> {
        let file = if self.version == 1 { "memory.usage_in_bytes" } else { "memory.current" };
        read_num(&self.path.join(file))
    }
}

/// This process's memory cgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryCgroup {
    /// 1 or 2, as in [`CgroupLimit::version`].
    pub version: u32,
    /// The path in proc/self/cgroup, e.g. "/process_api/abc".
    pub cgroup_path: String,
    /// Host path of its directory, e.g. "/sys/fs/cgroup/memory/process_api/abc".
    pub dir: PathBuf,
}

/// What `Guard::limit_memory` changes, recorded (host paths) before any change.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct SavedCgroup {
    pub version: u32,
    /// The original cgroup directory, where the process goes back.
    pub original: PathBuf,
    /// The child created: `<original>/racehorse-<pid>`.
    pub child: PathBuf,
    /// v2: "memory" was not in the original's cgroup.subtree_control; it is enabled for the
    /// child and disabled again on restore.
    #[serde(default)]
    pub enable_memory: bool,
}

/// A cgroup filesystem mount (fstype "cgroup" or "cgroup2").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CgroupMount {
    /// Root of the mount inside the hierarchy (mountinfo field 4), "/" unless bind-mounted.
    pub root: String,
    pub mount_point: String,
    pub fstype: String,
    pub super_options: String,
}

fn not_permitted(msg: impl Into<String>) -> MachineError {
    MachineError::NotPermitted(msg.into())
}

fn has_word(list: &str, word: &str, sep: char) -> bool {
    list.split(sep).map(str::trim).any(|w| w.trim_start_matches('+') == word)
}

/// Decodes the octal escapes (`\040`) of mount table paths.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b.get(i + 1..i + 4).filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c))) {
            Some(d) => {
                out.push(d.iter().fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0')) as u8);
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroup mounts of a mountinfo text; other lines are skipped.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<CgroupMount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let l: Vec<&str> = left.split_ascii_whitespace().collect();
            let mut r = right.split_ascii_whitespace();
            let fstype = r.next()?;
            if l.len() < 5 || !matches!(fstype, "cgroup" | "cgroup2") {
                return None;
            }
            Some(CgroupMount {
                root: unescape(l[3]),
                mount_point: unescape(l[4]),
                fstype: fstype.to_string(),
                super_options: r.nth(1).unwrap_or("").to_string(),
            })
        })
        .collect()
}

/// Cgroup mounts from proc/self/mountinfo, or proc/self/mounts when there is no mountinfo.
fn read_cgroup_mounts(root: &SysRoot) -> Vec<CgroupMount> {
    if let Ok(text) = std::fs::read_to_string(root.proc("self/mountinfo")) {
        return parse_mountinfo(&text);
    }
    let mounts = read_mounts(root).unwrap_or_default();
    mounts
        .into_iter()
        .filter(|m| matches!(m.fstype.as_str(), "cgroup" | "cgroup2"))
        .map(|m| CgroupMount {
            root: "/".into(),
            mount_point: m.mount_point,
            fstype: m.fstype,
            super_options: m.options,
        })
        .collect()
}

/// The host directory of cgroup `path` under mount `m` (the mount's own root stripped).
fn dir_in(m: &CgroupMount, path: &str) -> PathBuf {
    let rel = Path::new(path)
        .strip_prefix(&m.root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| PathBuf::from(path.trim_start_matches('/')));
    Path::new(&m.mount_point).join(rel)
}

/// Which hierarchy holds the memory controller and where this process is in it, from the text
/// of proc/self/cgroup and the cgroup mounts. A v1 `memory` hierarchy wins over v2.
pub(crate) fn find_memory_cgroup(
    cgroup_text: &str,
    mounts: &[CgroupMount],
) -> Result<MemoryCgroup, MachineError> {
    let lines: Vec<(&str, &str)> = cgroup_text
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ':');
            f.next()?;
            Some((f.next()?, f.next()?))
        })
        .collect();
    let pick = |fstype: &str, ctrl: &str, path: &str| {
        let found: Vec<&CgroupMount> = mounts
            .iter()
            .filter(|m| m.fstype == fstype && (ctrl.is_empty() || has_word(&m.super_options, ctrl, ',')))
            .collect();
        found.iter().find(|m| Path::new(path).starts_with(&m.root)).or(found.first()).map(|m| dir_in(m, path))
    };
    if let Some((_, path)) = lines.iter().find(|(c, _)| has_word(c, "memory", ',')) {
        let dir = pick("cgroup", "memory", path).ok_or_else(|| {
            not_permitted(
                "the cgroup v1 memory hierarchy is not mounted: mount the memory controller \
                 (mkdir -p /sys/fs/cgroup/memory && mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory)",
            )
        })?;
        return Ok(MemoryCgroup { version: 1, cgroup_path: path.to_string(), dir });
    }
    let Some((_, path)) = lines.iter().find(|(c, _)| c.is_empty()) else {
        return Err(not_permitted(
            "no memory cgroup in /proc/self/cgroup: the kernel has no memory controller \
             (build with CONFIG_MEMCG, boot without cgroup_disable=memory)",
        ));
    };
    let dir = pick("cgroup2", "", path).ok_or_else(|| {
        not_permitted(
            "no cgroup filesystem with the memory controller is mounted: mount cgroup2 \
             (mount -t cgroup2 none /sys/fs/cgroup) or the v1 memory controller \
             (mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory)",
        )
    })?;
    Ok(MemoryCgroup { version: 2, cgroup_path: path.to_string(), dir })
}

/// This process's memory cgroup on `root`; its directory must exist.
pub fn detect_memory_cgroup(root: &SysRoot) -> Result<MemoryCgroup, MachineError> {
    let text = read_text(&root.proc("self/cgroup"))?;
    let found = find_memory_cgroup(&text, &read_cgroup_mounts(root))?;
    if !root.map_host_path(&found.dir).is_dir() {
        return Err(not_permitted(format!(
            "cgroup directory {} (of cgroup {}) does not exist: the memory controller is not mounted \
             where this process sees it; mount the memory controller there (or run outside the container)",
            found.dir.display(),
            found.cgroup_path
        )));
    }
    Ok(found)
}

/// An error unless `limit_bytes` is at least [`MIN_LIMIT_BYTES`].
pub(crate) fn check_limit(limit_bytes: u64) -> Result<(), MachineError> {
    if limit_bytes < MIN_LIMIT_BYTES {
        return Err(MachineError::Invalid(format!(
            "memory limit of {limit_bytes} bytes is too small: use at least 16 MiB ({MIN_LIMIT_BYTES} bytes)"
        )));
    }
    Ok(())
}

/// What limiting process `pid` will change, found without changing anything.
pub(crate) fn plan(root: &SysRoot, pid: u32) -> Result<SavedCgroup, MachineError> {
    if root.is_host() && euid() != 0 {
        return Err(not_permitted(
            "a memory limit creates a cgroup and moves racehorse into it, which needs root: run racehorse as root",
        ));
    }
    let found = detect_memory_cgroup(root)?;
    let dir = root.map_host_path(&found.dir);
    let mut enable_memory = false;
    if found.version == 2 {
        let controllers = read_trim(&dir.join("cgroup.controllers")).unwrap_or_default();
        if !has_word(&controllers, "memory", ' ') {
            return Err(not_permitted(format!(
                "the memory controller is not available in cgroup {} (not in {}): enable it in the \
                 parent cgroup (echo +memory > <parent>/cgroup.subtree_control)",
                found.cgroup_path,
                dir.join("cgroup.controllers").display()
            )));
        }
        let subtree = read_trim(&dir.join("cgroup.subtree_control")).unwrap_or_default();
        enable_memory = !has_word(&subtree, "memory", ' ');
    }
    let child = found.dir.join(format!("racehorse-{pid}"));
    Ok(SavedCgroup { version: found.version, original: found.dir, child, enable_memory })
}

fn move_pid(dir: &Path, pid: u32) -> Result<(), MachineError> {
    write_ctl(&dir.join("cgroup.procs"), &pid.to_string())
}

/// Processes listed in `dir`/cgroup.procs that exist in `root`'s /proc.
fn live_pids(root: &SysRoot, dir: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    text.split_ascii_whitespace()
        .filter_map(|p| p.parse().ok())
        .filter(|p: &u32| root.proc(p.to_string()).exists())
        .collect()
}

fn mkdir_err(dir: &Path, e: std::io::Error) -> MachineError {
    match e.raw_os_error() {
        Some(libc::EROFS) => not_permitted(format!(
            "cannot create cgroup {}: the cgroup filesystem is read-only (a container?); mount it \
             read-write or run racehorse on the host",
            dir.display()
        )),
        Some(libc::EACCES | libc::EPERM) => {
            not_permitted(format!("cannot create cgroup {}: {e}; run racehorse as root", dir.display()))
        }
        _ => MachineError::io(dir, e),
    }
}

/// Fixture roots only: gives a new child its parent's files, as cgroupfs does.
fn populate_fixture(parent: &Path, child: &Path) -> Result<(), MachineError> {
    let entries = std::fs::read_dir(parent).map_err(|e| MachineError::io(parent, e))?;
    for entry in entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_file())) {
        let dest = child.join(entry.file_name());
        let procs = matches!(entry.file_name().to_str(), Some("cgroup.procs" | "tasks"));
        let done =
            if procs { std::fs::write(&dest, "") } else { std::fs::copy(entry.path(), &dest).map(|_| ()) };
        done.map_err(|e| MachineError::io(&dest, e))?;
    }
    Ok(())
}

enum Removal {
    Removed,
    Absent,
    /// Still holds these processes (or child cgroups when empty).
    Busy(Vec<u32>),
}

/// Removes a child cgroup directory unless processes are still in it.
fn remove_child(root: &SysRoot, child: &Path) -> Result<Removal, MachineError> {
    if !child.is_dir() {
        return Ok(Removal::Absent);
    }
    let live = live_pids(root, child);
    if !live.is_empty() {
        return Ok(Removal::Busy(live));
    }
    if !root.is_host() {
        let entries = std::fs::read_dir(child).map_err(|e| MachineError::io(child, e))?;
        for entry in entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_file())) {
            std::fs::remove_file(entry.path()).map_err(|e| MachineError::io(entry.path(), e))?;
        }
    }
    match std::fs::remove_dir(child) {
        Ok(()) => Ok(Removal::Removed),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Removal::Absent),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY | libc::ENOTEMPTY)) => {
            Ok(Removal::Busy(live_pids(root, child)))
        }
        Err(e) => Err(MachineError::io(child, e)),
    }
}

/// Creates the child directory; one left by an earlier run with our pid is replaced if empty.
fn make_child(root: &SysRoot, original: &Path, child: &Path) -> Result<(), MachineError> {
    match std::fs::create_dir(child) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if let Removal::Busy(pids) = remove_child(root, child)? {
                return Err(not_permitted(format!(
                    "cgroup {} already exists and holds processes {pids:?}; remove it (rmdir) once they end",
                    child.display()
                )));
            }
            std::fs::create_dir(child).map_err(|e| mkdir_err(child, e))?;
        }
        Err(e) => return Err(mkdir_err(child, e)),
    }
    if !root.is_host() {
        populate_fixture(original, child)?;
    }
    Ok(())
}

/// v2: enables the memory controller for the original's children. A cgroup holding processes
/// cannot (no internal processes), so on failure we move into the child first and retry.
/// Returns whether the process was moved.
fn enable_memory(root: &SysRoot, original: &Path, child: &Path, pid: u32) -> Result<bool, MachineError> {
    let ctl = original.join("cgroup.subtree_control");
    if write_ctl(&ctl, "+memory").is_ok() {
        return Ok(false);
    }
    move_pid(child, pid)?;
    match write_ctl(&ctl, "+memory") {
        Ok(()) => Ok(true),
        Err(e) => Err(not_permitted(format!(
            "cannot enable the memory controller in {} ({e}); cgroup v2 allows that only in a cgroup \
             without processes and {} still holds processes {:?}: run racehorse in a cgroup of its own \
             (e.g. systemd-run --scope racehorse ...)",
            ctl.display(),
            original.display(),
            live_pids(root, original)
        ))),
    }
}

/// Writes the limit (and the swap limit, best effort) into `child`; returns the limit read back
/// and whether swap is limited. With `allow_swap` the swap limit is lifted instead (v1
/// memory.memsw.limit_in_bytes = -1, v2 memory.swap.max = max), so pages over the limit go to
/// swap: the paging engine's anonymous region.
fn write_limit(
    version: u32,
    child: &Path,
    limit: u64,
    allow_swap: bool,
) -> Result<(u64, bool), MachineError> {
    if allow_swap {
        return write_limit_with_swap(version, child, limit);
    }
    let value = limit.to_string();
    if version == 1 {
        let mem = child.join("memory.limit_in_bytes");
        let memsw = child.join("memory.memsw.limit_in_bytes");
        let has_swap = memsw.exists();
        // memsw must stay >= the memory limit: raise it first, lower it last.
        let raising = read_num::<u64>(&mem).is_some_and(|cur| limit > cur);
        let mut swap = has_swap && raising && write_ctl(&memsw, &value).is_ok();
        write_ctl(&mem, &value)?;
        if has_swap && !swap {
            swap = write_ctl(&memsw, &value).is_ok();
        }
        return Ok((read_num(&mem).unwrap_or(limit), swap));
    }
    let max = child.join("memory.max");
    write_ctl(&max, &value)?;
    let swap_max = child.join("memory.swap.max");
    let swap = swap_max.exists() && write_ctl(&swap_max, "0").is_ok();
    Ok((read_num(&max).unwrap_or(limit), swap))
}

fn write_limit_with_swap(version: u32, child: &Path, limit: u64) -> Result<(u64, bool), MachineError> {
    let (mem, swap) = if version == 1 {
        ("memory.limit_in_bytes", ("memory.memsw.limit_in_bytes", "-1"))
    } else {
        ("memory.max", ("memory.swap.max", "max"))
    };
    let swap_file = child.join(swap.0);
    // Unlimited first: memsw may never drop below the memory limit.
    if swap_file.exists() {
        write_ctl(&swap_file, swap.1)?;
    }
    write_ctl(&child.join(mem), &limit.to_string())?;
    Ok((read_num(&child.join(mem)).unwrap_or(limit), false))
}

/// Carries out `saved` for process `pid`: creates the child, sets the limit, moves the process
/// in. On error the caller undoes it with [`undo`].
pub(crate) fn apply(
    root: &SysRoot,
    saved: &SavedCgroup,
    pid: u32,
    limit: u64,
    allow_swap: bool,
) -> Result<CgroupLimit, MachineError> {
    let original = root.map_host_path(&saved.original);
    let child = root.map_host_path(&saved.child);
    make_child(root, &original, &child)?;
    let moved = saved.enable_memory && enable_memory(root, &original, &child, pid)?;
    let (limit_bytes, swap_limited) = write_limit(saved.version, &child, limit, allow_swap)?;
    if !moved {
        move_pid(&child, pid)?;
    }
    if root.is_host() && pid == std::process::id() {
        let now = detect_memory_cgroup(root)?;
        if now.dir != saved.child {
            return Err(MachineError::Invalid(format!(
                "moved into cgroup {} but /proc/self/cgroup shows {}",
                saved.child.display(),
                now.cgroup_path
            )));
        }
    }
    Ok(CgroupLimit { version: saved.version, path: child, limit_bytes, swap_limited })
}

/// Changes the limit of a child already in place.
pub(crate) fn change_limit(
    root: &SysRoot,
    saved: &SavedCgroup,
    limit: u64,
    allow_swap: bool,
) -> Result<CgroupLimit, MachineError> {
    let child = root.map_host_path(&saved.child);
    let (limit_bytes, swap_limited) = write_limit(saved.version, &child, limit, allow_swap)?;
    Ok(CgroupLimit { version: saved.version, path: child, limit_bytes, swap_limited })
}

/// Undoes `saved`: disables the memory controller if we enabled it, moves `move_back` (this
/// process) back to the original cgroup, removes the child. Idempotent. A child that still
/// holds other processes is an error when moving back, else (recovering after the owner died)
/// it is left in place and the message says so.
pub(crate) fn undo(
    root: &SysRoot,
    saved: &SavedCgroup,
    move_back: Option<u32>,
) -> Result<String, MachineError> {
    let ours = saved.child.parent() == Some(saved.original.as_path())
        && saved.child.file_name().is_some_and(|n| n.to_string_lossy().starts_with("racehorse-"));
    if !ours {
        return Err(MachineError::Invalid(format!(
            "refusing to remove cgroup {}: not a racehorse-<pid> directory under {}; check it and remove it by hand",
            saved.child.display(),
            saved.original.display()
        )));
    }
    let original = root.map_host_path(&saved.original);
    let child = root.map_host_path(&saved.child);
    let mut first_err = None;
    let ctl = original.join("cgroup.subtree_control");
    // Before moving back: a v2 cgroup with controllers enabled for children cannot take processes.
    if saved.enable_memory && has_word(&read_trim(&ctl).unwrap_or_default(), "memory", ' ') {
        first_err = write_ctl(&ctl, "-memory").err();
    }
    if let Some(pid) = move_back {
        if let Err(e) = move_pid(&original, pid) {
            first_err = first_err.or(Some(e));
        }
    }
    let removal = remove_child(root, &child);
    if let Some(e) = first_err {
        return Err(e);
    }
    let shown = saved.child.display();
    match removal? {
        Removal::Removed => Ok(format!("removed cgroup {shown}")),
        Removal::Absent => Ok(format!("cgroup {shown} already gone")),
        Removal::Busy(pids) if move_back.is_none() => Ok(format!(
            "left cgroup {shown} in place: it still holds processes {pids:?} (or child cgroups); \
             rmdir it once they have ended"
        )),
        Removal::Busy(pids) => Err(not_permitted(format!(
            "cannot remove cgroup {shown}: it still holds processes {pids:?} (or child cgroups); \
             move them out and rmdir it"
        ))),
    }
}

/// Serialises the tests that change the real machine's cgroups (names ending in `_machine`).
#[cfg(test)]
pub(crate) fn machine_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    const VM_MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    fn fixture(name: &str) -> SysRoot {
        SysRoot::at(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name))
    }

    #[test]
    fn v1_memory_hierarchy_wins_over_unified() {
        let mounts = parse_mountinfo(VM_MOUNTINFO);
        assert_eq!(mounts.len(), 3, "tmpfs skipped");
        let cg = "4:memory:/process_api/d472\n1:cpu:/\n0::/\n";
        let found = find_memory_cgroup(cg, &mounts).expect("v1");
        assert_eq!(found.version, 1);
        assert_eq!(found.cgroup_path, "/process_api/d472");
        assert_eq!(found.dir, PathBuf::from("/sys/fs/cgroup/memory/process_api/d472"));
    }

    #[test]
    fn v2_paths_strip_the_mount_root() {
        let info = "26 25 0:24 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n\
                    27 25 0:25 / /mnt/my\\040cg rw shared:9 - cgroup2 none rw\n";
        let mounts = parse_mountinfo(info);
        assert_eq!(mounts[1].mount_point, "/mnt/my cg");
        let found = find_memory_cgroup("0::/docker/abc/sub\n", &mounts).expect("v2");
        assert_eq!((found.version, found.dir), (2, PathBuf::from("/sys/fs/cgroup/sub")));
        let root = find_memory_cgroup("0::/\n", &mounts[1..]).expect("root cgroup");
        assert_eq!(root.dir, PathBuf::from("/mnt/my cg"));
    }

    #[test]
    fn missing_mounts_or_controller_say_what_to_do() {
        let cpu_only = parse_mountinfo(&VM_MOUNTINFO.replace("rw,memory", "rw,blkio"));
        let e = find_memory_cgroup("4:memory:/x\n0::/\n", &cpu_only).expect_err("v1 not mounted");
        assert!(e.to_string().contains("mount the memory controller"), "{e}");
        let e = find_memory_cgroup("0::/x\n", &[]).expect_err("nothing mounted");
        assert!(e.to_string().contains("mount -t cgroup2"), "{e}");
        let e = find_memory_cgroup("", &cpu_only).expect_err("no cgroups");
        assert!(matches!(e, MachineError::NotPermitted(_)) && e.to_string().contains("CONFIG_MEMCG"), "{e}");
    }

    #[test]
    fn detects_fixture_trees() {
        let v1 = detect_memory_cgroup(&fixture("cgroup-v1")).expect("v1");
        assert_eq!((v1.version, v1.cgroup_path.as_str()), (1, "/process_api/abc123"));
        let v2 = detect_memory_cgroup(&fixture("cgroup-v2")).expect("v2");
        assert_eq!(v2.dir, PathBuf::from("/sys/fs/cgroup/user.slice/racehorse.scope"));
        // No mountinfo there: proc/self/mounts is used.
        let old = detect_memory_cgroup(&fixture("baremetal4")).expect("mounts fallback");
        assert_eq!(old.dir, PathBuf::from("/sys/fs/cgroup/memory/bench.slice"));
        let e = detect_memory_cgroup(&SysRoot::at("/nonexistent")).expect_err("no proc");
        assert!(matches!(e, MachineError::Io { .. }), "{e}");
    }

    #[test]
    fn plans_without_changing_anything() {
        let p = plan(&fixture("cgroup-v2"), 77).expect("plan");
        assert!(p.enable_memory, "memory is not in the scope's subtree_control");
        assert_eq!(p.child, PathBuf::from("/sys/fs/cgroup/user.slice/racehorse.scope/racehorse-77"));
        assert!(!fixture("cgroup-v2").map_host_path(&p.child).exists());
        let p1 = plan(&fixture("cgroup-v1"), 77).expect("plan v1");
        assert_eq!((p1.version, p1.enable_memory), (1, false));
        assert!(check_limit(MIN_LIMIT_BYTES).is_ok());
        let e = check_limit(MIN_LIMIT_BYTES - 1).expect_err("too small");
        assert!(e.to_string().contains("at least 16 MiB"), "{e}");
    }
}
