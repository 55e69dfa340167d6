//! Checks before racehorse builds a scratch volume on devices (a `volume` variant): that each
//! is a block device nobody uses (not mounted, no holders such as a device-mapper volume or
//! an md array on it) and holds nothing (no filesystem, partition table or RAID signature, as
//! `wipefs --no-act` sees them) — else it is refused, unless the user said the data may go —
//! and that this kernel can build the layout at all.

use crate::root::SysRoot;
use std::path::Path;
use std::process::{Command, Stdio};

/// Why `dev` may not be used for a scratch volume, or None when it may. `destructive` lets
/// a device with signatures through, never one in use.
pub fn refuse_device(root: &SysRoot, dev: &str, destructive: bool) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = match std::fs::metadata(dev) {
        Ok(m) if m.file_type().is_block_device() => m,
        Ok(_) => return Some(format!("{dev} is not a block device")),
        Err(e) => return Some(format!("{dev}: {e}")),
    };
    let (major, minor) = crate::knobs::split_dev(meta.rdev());
    let name = crate::knobs::device_for_devnum(root, major, minor).ok()?;
    if let Some(m) = mounted(root, dev, &name) {
        return Some(format!("{dev} is mounted on {m}"));
    }
    let holders = crate::root::SysRoot::sys(root, "block").join(&name).join("holders");
    if std::fs::read_dir(&holders).is_ok_and(|mut d| d.next().is_some()) {
        return Some(format!("{dev} is in use by another device (sys/block/{name}/holders)"));
    }
    match signatures(Path::new(dev)) {
        Err(e) => Some(format!("{dev}: cannot look for data on it with wipefs: {e}")),
        Ok(found) if !found.is_empty() && !destructive => Some(format!(
            "{dev} holds data ({}); give destructive = true in the volume to destroy it",
            found.join(", ")
        )),
        Ok(_) => None,
    }
}

/// The mount point of `dev` (by path or kernel name) in the mount table, if mounted.
fn mounted(root: &SysRoot, dev: &str, name: &str) -> Option<String> {
    let mounts = crate::mounts::read_mounts(root).ok()?;
    let by_name = format!("/dev/{name}");
    mounts.into_iter().find(|m| m.device == dev || m.device == by_name).map(|m| m.mount_point)
}

/// The signatures `wipefs --no-act` finds on `dev` ("ext4", "dos" …).
fn signatures(dev: &Path) -> Result<Vec<String>, String> {
    let out = Command::new("wipefs")
        .args(["--no-act", "--noheadings", "--output", "TYPE"])
        .arg(dev)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{e} (install util-linux)"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    let mut found: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    found.dedup();
    Ok(found)
}

/// Whether this kernel can build a `kind` volume (lvm-*, md-*, btrfs-*); the reason if not.
pub fn kernel_supports(root: &SysRoot, kind: &str) -> Result<(), String> {
    let read = |p: &str| std::fs::read_to_string(root.proc(p)).unwrap_or_default();
    let (ok, what) = if kind.starts_with("lvm") {
        (
            read("devices").lines().any(|l| l.ends_with(" device-mapper")),
            "device-mapper (no 'device-mapper' in /proc/devices)",
        )
    } else if kind.starts_with("md") {
        (root.proc("mdstat").exists(), "the md driver (no /proc/mdstat)")
    } else {
        (
            read("filesystems").lines().any(|l| l.split_whitespace().last() == Some("btrfs")),
            "btrfs (not in /proc/filesystems)",
        )
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{kind} needs {what} in this kernel; load the module (modprobe) or use a kernel that has it"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::fixture_dir;

    #[test]
    fn a_file_is_not_a_device_and_a_missing_one_is_named() {
        let root = SysRoot::host();
        let f = tempfile::NamedTempFile::new().unwrap();
        let why = refuse_device(&root, &f.path().display().to_string(), true).unwrap();
        assert!(why.contains("is not a block device"), "{why}");
        let why = refuse_device(&root, "/dev/no-such-device-here", true).unwrap();
        assert!(why.starts_with("/dev/no-such-device-here: "), "{why}");
    }

    #[test]
    fn kernel_support_is_read_from_proc() {
        let root = SysRoot::at(fixture_dir("vm2"));
        let e = kernel_supports(&root, "md-raid0").unwrap_err();
        assert!(e.contains("/proc/mdstat"), "{e}");
        let e = kernel_supports(&root, "lvm-striped").unwrap_err();
        assert!(e.contains("device-mapper"), "{e}");
    }
}
