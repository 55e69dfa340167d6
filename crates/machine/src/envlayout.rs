//! The storage layout behind a target, read from sysfs: an LVM or other device-mapper volume
//! (its name, its table's target type, stripes and stripe size, a multipath path selector),
//! an md RAID array (level, chunk size, disks), a btrfs filesystem over several devices (its
//! data profile), a loop device (its backing file), and for each member device the queue
//! settings that decide its speed (scheduler, read-ahead, rotational). Seed 004 compares
//! exactly these layouts; two runs on different layouts now say so in their environment diff.

use crate::root::{bracketed, read_num, read_trim, SysRoot};
use racehorse_core::environment::{LayoutMember, VolumeLayout};
use std::path::Path;
use std::process::{Command, Stdio};

/// The layout of whole disk `disk` (an entry of sys/block), or of the btrfs filesystem
/// `btrfs_device` belongs to when the target's filesystem is btrfs. None for a plain disk.
pub(crate) fn layout(root: &SysRoot, disk: &str, fstype: Option<&str>) -> Option<VolumeLayout> {
    if fstype == Some("btrfs") {
        if let Some(l) = btrfs(root, disk) {
            return Some(l);
        }
    }
    let dir = root.sys("block").join(disk);
    if dir.join("dm").is_dir() {
        return Some(device_mapper(root, disk));
    }
    if dir.join("md").is_dir() {
        return Some(md(root, disk));
    }
    if let Some(backing) = read_trim(&dir.join("loop/backing_file")) {
        return Some(VolumeLayout { kind: "loop".into(), name: backing, ..Default::default() });
    }
    None
}

/// The member devices listed in sys/block/DISK/slaves, with their queues.
fn slaves(root: &SysRoot, disk: &str) -> Vec<LayoutMember> {
    let mut names: Vec<String> = std::fs::read_dir(root.sys("block").join(disk).join("slaves"))
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names.into_iter().map(|n| member(root, n)).collect()
}

/// One member and the queue of its whole disk (a partition's parent).
fn member(root: &SysRoot, name: String) -> LayoutMember {
    let block = root.sys("block");
    let disk = crate::envprobe::disk_of(root, &format!("/dev/{name}"));
    let q = disk.map(|d| block.join(d).join("queue"));
    let q = q.as_deref();
    LayoutMember {
        scheduler: q.and_then(|q| read_trim(&q.join("scheduler"))).map(|s| bracketed(&s).unwrap_or(s)),
        read_ahead_kb: q.and_then(|q| read_num(&q.join("read_ahead_kb"))),
        rotational: q.and_then(|q| read_num::<u8>(&q.join("rotational"))).map(|r| r != 0),
        name,
    }
}

/// A device-mapper volume: its kind from the dm uuid's prefix (LVM-, mpath-, CRYPT-), its
/// name, and what its table says where `dmsetup table` can be asked (root, on this machine).
fn device_mapper(root: &SysRoot, disk: &str) -> VolumeLayout {
    let dm = root.sys("block").join(disk).join("dm");
    let name = read_trim(&dm.join("name")).unwrap_or_else(|| disk.to_string());
    let uuid = read_trim(&dm.join("uuid")).unwrap_or_default();
    let kind = match uuid.split('-').next().unwrap_or("") {
        "LVM" => "lvm",
        "mpath" => "dm-multipath",
        "CRYPT" => "dm-crypt",
        _ => "dm",
    };
    let mut l = VolumeLayout {
        kind: kind.into(),
        name: name.clone(),
        members: slaves(root, disk),
        ..Default::default()
    };
    // sysfs has no table: on this machine dmsetup asks the kernel; a fixture root keeps the
    // text `dmsetup table` would print in dm/table.
    let table = if root.is_host() { dmsetup_table(&name) } else { read_trim(&dm.join("table")) };
    if let Some(t) = table.as_deref().and_then(parse_dm_table) {
        (l.level, l.stripes, l.stripe_bytes, l.policy) =
            (Some(t.target), t.stripes, t.stripe_bytes, t.policy);
    }
    l
}

/// `dmsetup table NAME`, where dmsetup is installed and may ask the kernel.
fn dmsetup_table(name: &str) -> Option<String> {
    let out = Command::new("dmsetup")
        .args(["table", name])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What one device-mapper table says about the layout.
#[derive(Debug, PartialEq)]
pub(crate) struct DmTable {
    /// The first segment's target type: linear, striped, multipath, crypt …
    pub target: String,
    pub stripes: Option<u32>,
    pub stripe_bytes: Option<u64>,
    /// multipath: the path selector ("round-robin", "service-time", "queue-length").
    pub policy: Option<String>,
}

/// Parses `dmsetup table` text: "START LEN TARGET ARGS…" per segment. A striped segment is
/// "striped STRIPES CHUNK_SECTORS DEV OFFSET …"; a multipath one names its path selector.
pub(crate) fn parse_dm_table(text: &str) -> Option<DmTable> {
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    let words: Vec<&str> = first.split_whitespace().collect();
    let target = words.get(2)?.to_string();
    let mut t = DmTable { target, stripes: None, stripe_bytes: None, policy: None };
    match t.target.as_str() {
        "striped" => {
            t.stripes = words.get(3).and_then(|w| w.parse().ok());
            t.stripe_bytes = words.get(4).and_then(|w| w.parse::<u64>().ok()).map(|s| s * 512);
        }
        "multipath" => {
            let selectors = ["round-robin", "service-time", "queue-length", "historical-service-time"];
            t.policy = words.iter().find(|w| selectors.contains(w)).map(|w| w.to_string());
        }
        _ => {}
    }
    Some(t)
}

/// An md array: level, chunk size, number of disks and the members.
fn md(root: &SysRoot, disk: &str) -> VolumeLayout {
    let md = root.sys("block").join(disk).join("md");
    VolumeLayout {
        kind: "md".into(),
        name: disk.to_string(),
        level: read_trim(&md.join("level")),
        stripes: read_num(&md.join("raid_disks")),
        stripe_bytes: read_num::<u64>(&md.join("chunk_size")).filter(|&c| c > 0),
        policy: None,
        members: slaves(root, disk),
    }
}

/// A btrfs filesystem one of whose devices is `disk`: every device of it and its data profile
/// (sys/fs/btrfs/FSID/devices and allocation/data).
fn btrfs(root: &SysRoot, disk: &str) -> Option<VolumeLayout> {
    let rd = std::fs::read_dir(root.sys("fs/btrfs")).ok()?;
    for fs in rd.filter_map(Result::ok).map(|e| e.path()) {
        let devices = fs.join("devices");
        let has_disk = devices.join(disk).exists()
            || std::fs::read_dir(&devices)
                .is_ok_and(|d| d.filter_map(Result::ok).any(|e| is_part_of(root, disk, &e.path())));
        if !has_disk {
            continue;
        }
        let mut names: Vec<String> = std::fs::read_dir(&devices)
            .map(|d| d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.sort();
        let profiles = ["raid0", "raid1", "raid1c3", "raid1c4", "raid10", "raid5", "raid6", "dup", "single"];
        let level =
            profiles.iter().find(|p| fs.join("allocation/data").join(p).is_dir()).map(|p| p.to_string());
        let name = fs.file_name()?.to_string_lossy().into_owned();
        return Some(VolumeLayout {
            kind: "btrfs".into(),
            name,
            level,
            stripes: Some(names.len() as u32),
            members: names.into_iter().map(|n| member(root, n)).collect(),
            ..Default::default()
        });
    }
    None
}

/// Whether device entry `dev` (a partition such as vdb1) lies on whole disk `disk`.
fn is_part_of(root: &SysRoot, disk: &str, dev: &Path) -> bool {
    dev.file_name().is_some_and(|n| root.sys("block").join(disk).join(n).is_dir())
}

#[cfg(test)]
#[path = "envlayout_tests.rs"]
mod tests;
