//! Probes behind environment capture: CPU model and virtualization, caches, target
//! filesystems and their block queues, and the process's own cgroup limits.

use crate::env::{CacheInfo, CgroupInfo, TargetInfo};
use crate::mounts::{find_mount, MountEntry};
use crate::root::{bracketed, read_num, read_trim, SysRoot};
use std::path::{Path, PathBuf};

/// CPU model name from cpuinfo text ("model name", or the ARM/POWER/s390 equivalents).
pub(crate) fn cpu_model(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Model", "cpu model", "Processor", "cpu"] {
        let found = cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key && !v.trim().is_empty()).then(|| v.trim().to_string())
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// "none", "vm", "vm (vendor product)" or "unknown" (no x86 flags line to tell).
pub(crate) fn virtualization(root: &SysRoot, cpuinfo: Option<&str>) -> String {
    let flags = cpuinfo.and_then(|t| t.lines().find(|l| l.starts_with("flags")));
    let xen = read_trim(&root.sys("hypervisor/type")).filter(|s| !s.is_empty());
    let hyper = flags.map(|l| l.split_ascii_whitespace().any(|f| f == "hypervisor"));
    match (hyper, xen) {
        (Some(true), _) | (_, Some(_)) => {
            let parts: Vec<String> =
                ["class/dmi/id/sys_vendor", "class/dmi/id/product_name", "hypervisor/type"]
                    .iter()
                    .filter_map(|p| read_trim(&root.sys(p)).filter(|s| !s.is_empty()))
                    .collect();
            if parts.is_empty() {
                "vm".to_string()
            } else {
                format!("vm ({})", parts.join(" "))
            }
        }
        (Some(false), None) => "none".to_string(),
        (None, None) => "unknown".to_string(),
    }
}

/// Caches of cpu0 (sys/devices/system/cpu/cpu0/cache/index*), sorted by level then kind: every
/// index with a level, its size 0 and kind "unknown" when sysfs does not give them.
pub(crate) fn caches(root: &SysRoot) -> Vec<CacheInfo> {
    let Ok(indexes) = crate::cpucache::cache_indexes(root, 0) else { return Vec::new() };
    let mut v: Vec<CacheInfo> = indexes
        .into_iter()
        .filter_map(|c| {
            Some(CacheInfo {
                level: u32::from(c.level?),
                kind: c.kind.unwrap_or_else(|| "unknown".into()),
                size_bytes: c.size_bytes.unwrap_or(0),
                shared_cpu_list: c.shared_cpu_list.unwrap_or_default(),
            })
        })
        .collect();
    v.sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
    v
}

/// The sysfs disk (entry of sys/block) behind a mount's device; partitions map to their disk.
pub(crate) fn disk_of(root: &SysRoot, device: &str) -> Option<String> {
    let rest = device.strip_prefix("/dev/")?;
    let mut name = Path::new(rest).file_name()?.to_string_lossy().into_owned();
    let block = root.sys("block");
    if let Some(mapper) = rest.strip_prefix("mapper/") {
        let rd = std::fs::read_dir(&block).ok()?;
        name = rd
            .filter_map(|e| e.ok())
            .find(|e| read_trim(&e.path().join("dm/name")).as_deref() == Some(mapper))?
            .file_name()
            .to_string_lossy()
            .into_owned();
    } else if root.is_host() && !block.join(&name).exists() {
        // /dev/root, /dev/disk/by-uuid/… : follow the symlink on the real machine.
        if let Ok(real) = std::fs::canonicalize(device) {
            name = real.file_name()?.to_string_lossy().into_owned();
        }
    }
    if block.join(&name).exists() {
        return Some(name);
    }
    let rd = std::fs::read_dir(&block).ok()?;
    let parent = rd.filter_map(|e| e.ok()).find(|e| e.path().join(&name).join("partition").exists())?;
    Some(parent.file_name().to_string_lossy().into_owned())
}

/// Absolute form of a target: canonical on the real machine (nearest existing ancestor), as given otherwise.
fn resolve_target(root: &SysRoot, path: &Path) -> PathBuf {
    if !root.is_host() {
        return path.to_path_buf();
    }
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf())
    };
    let mut cur = abs.as_path();
    let mut tail = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(cur) {
            return tail.iter().rev().fold(c, |acc: PathBuf, t| acc.join(t));
        }
        match (cur.parent(), cur.file_name()) {
            (Some(p), Some(n)) => {
                tail.push(n.to_os_string());
                cur = p;
            }
            _ => return abs,
        }
    }
}

/// Filesystem and block-queue facts for one target directory.
pub(crate) fn target_info(root: &SysRoot, mounts: &[MountEntry], path: &Path) -> TargetInfo {
    let real = resolve_target(root, path);
    let mut t = TargetInfo { path: path.display().to_string(), ..Default::default() };
    if let Some(dev) = block_node(root, &real) {
        // A raw device: no filesystem; its own queue settings, not those of /dev's mount.
        t.device = Some(real.display().to_string());
        t.fstype = Some("block device".into());
        t.layout = crate::envlayout::layout(root, &dev, None);
        fill_queue(root, &mut t, dev);
        return t;
    }
    let Some(m) = find_mount(mounts, &real) else { return t };
    t.fstype = Some(m.fstype.clone());
    t.device = Some(m.device.clone());
    t.mount_point = Some(m.mount_point.clone());
    t.mount_options = Some(m.options.clone());
    if let Some(disk) = disk_of(root, &m.device) {
        t.layout = crate::envlayout::layout(root, &disk, Some(&m.fstype));
        fill_queue(root, &mut t, disk);
    }
    t
}

/// The kernel name of the block device `path` is a node of (host only), e.g. "loop0".
fn block_node(root: &SysRoot, path: &Path) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = std::fs::metadata(path).ok().filter(|m| root.is_host() && m.file_type().is_block_device())?;
    let (major, minor) = crate::knobs::split_dev(meta.rdev());
    crate::knobs::device_for_devnum(root, major, minor).ok()
}

/// Scheduler, read-ahead and rotational flag of whole disk `disk`'s queue.
fn fill_queue(root: &SysRoot, t: &mut TargetInfo, disk: String) {
    let q = root.sys("block").join(&disk).join("queue");
    t.scheduler = read_trim(&q.join("scheduler")).map(|s| bracketed(&s).unwrap_or(s));
    t.read_ahead_kb = read_num(&q.join("read_ahead_kb"));
    t.rotational = read_num::<u8>(&q.join("rotational")).map(|r| r != 0);
    t.disk = Some(disk);
}

fn cgroup_dir(root: &SysRoot, mount_point: &str, cg_path: &str) -> PathBuf {
    let base = root.map_host_path(Path::new(mount_point));
    let dir = base.join(cg_path.trim_start_matches('/'));
    // Inside a cgroup namespace the path may be the host's; the mount is then our own cgroup.
    if dir.exists() {
        dir
    } else {
        base
    }
}

/// The process's own cgroup (proc/self/cgroup) and its memory and CPU limits.
pub(crate) fn cgroup(root: &SysRoot, mounts: &[MountEntry]) -> Option<CgroupInfo> {
    let text = read_trim(&root.proc("self/cgroup"))?;
    let lines: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ':');
            f.next()?;
            Some((f.next()?, f.next()?))
        })
        .collect();
    let has = |ctrl: &str| lines.iter().find(|(c, _)| c.split(',').any(|x| x == ctrl)).map(|(_, p)| *p);
    let v1_mount = |ctrl: &str| {
        mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == ctrl))
            .map(|m| m.mount_point.clone())
    };
    if let Some(mem_path) = has("memory") {
        let mem_dir =
            cgroup_dir(root, &v1_mount("memory").unwrap_or("/sys/fs/cgroup/memory".into()), mem_path);
        let limit: Option<u64> = read_num(&mem_dir.join("memory.limit_in_bytes"));
        let cpu_max = has("cpu").and_then(|p| {
            let dir = cgroup_dir(root, &v1_mount("cpu").unwrap_or("/sys/fs/cgroup/cpu".into()), p);
            let quota: i64 = read_num(&dir.join("cpu.cfs_quota_us"))?;
            let period: u64 = read_num(&dir.join("cpu.cfs_period_us"))?;
            Some(if quota < 0 { format!("max {period}") } else { format!("{quota} {period}") })
        });
        return Some(CgroupInfo {
            version: 1,
            path: mem_path.to_string(),
            memory_max_bytes: limit.filter(|&l| l < 1 << 60),
            cpu_max,
        });
    }
    let (_, path) = lines.iter().find(|(c, _)| c.is_empty())?;
    let mp = mounts.iter().find(|m| m.fstype == "cgroup2").map(|m| m.mount_point.clone());
    let dir = cgroup_dir(root, &mp.unwrap_or("/sys/fs/cgroup".into()), path);
    Some(CgroupInfo {
        version: 2,
        path: path.to_string(),
        memory_max_bytes: read_num(&dir.join("memory.max")),
        cpu_max: read_trim(&dir.join("cpu.max")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models() {
        assert_eq!(
            cpu_model("processor\t: 0\nmodel name\t: Intel(R) Xeon\n").as_deref(),
            Some("Intel(R) Xeon")
        );
        assert_eq!(cpu_model("processor : 0\nBogoMIPS : 50\n"), None);
    }
}
