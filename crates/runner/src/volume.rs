//! Storage layouts as variants (seed 004 compares them): `volume = { kind = "lvm-striped",
//! devices = ["/dev/sdb", "/dev/sdc"], stripe_size = "64k", fs = "xfs" }` builds a scratch
//! volume from the given devices before the variant's cells — LVM linear or striped, md RAID 0,
//! or btrfs over several devices — makes a filesystem on it, mounts it where the variant's
//! disk workloads write, and tears it all down after them. Build and teardown are the
//! Guard's before- and after-commands, so the teardown is recorded in the state file before
//! anything is built and runs on every path, after SIGKILL too (the next start, `racehorse
//! restore`). Devices that hold a filesystem, a partition table or any other signature are
//! refused unless the volume says `destructive = true`.

use racehorse_core::shell::quote as q;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The layouts a variant can build.
pub const KINDS: &[&str] = &["lvm-linear", "lvm-striped", "md-raid0", "btrfs-single", "btrfs-raid0"];
/// Filesystems made on an LVM or md volume (btrfs kinds are their own filesystem).
pub const FILESYSTEMS: &[&str] = &["ext4", "xfs"];

/// Why a variant's volume cannot be built on this machine (a usage error; found before any
/// cell runs, and again before the variant's cells).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VolumeRefusal {
    /// The kernel lacks what the layout needs (device mapper, md, btrfs): what, and how to
    /// get it.
    #[error("{0}")]
    Kernel(String),
    /// A program the build runs is not on PATH.
    #[error("{kind} needs `{tool}` on PATH; install it (lvm2, mdadm, btrfs-progs, util-linux)")]
    ToolMissing { kind: String, tool: &'static str },
    /// A device is not a free, empty block device: which, and why.
    #[error("{0}")]
    Device(String),
}

/// `volume = { … }` as written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawVolume {
    kind: String,
    devices: Vec<String>,
    stripe_size: Option<String>,
    fs: Option<String>,
    #[serde(default)]
    destructive: bool,
}

/// A checked volume layout of a variant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VolumeSpec {
    pub kind: String,
    pub devices: Vec<String>,
    /// LVM stripe or md chunk size in bytes (lvm-striped, md-raid0; default 64 KiB).
    pub stripe_bytes: u64,
    /// The filesystem made on the volume ("btrfs" for the btrfs kinds).
    pub fs: String,
    /// The devices may hold data: it is destroyed.
    pub destructive: bool,
}

impl RawVolume {
    /// Checks the kind, devices, stripe size and filesystem (machine checks come at run start).
    /// Leaf parser: the variant's parser passes the message on and the suite file's parser
    /// places it at file:line:col.
    pub(crate) fn into_spec(self) -> Result<VolumeSpec, String> {
        if !KINDS.contains(&self.kind.as_str()) {
            return Err(format!("volume.kind '{}': use one of {}", self.kind, KINDS.join(", ")));
        }
        let at_least = if self.kind.ends_with("single") || self.kind == "lvm-linear" { 1 } else { 2 };
        if self.devices.len() < at_least {
            return Err(format!("volume.devices: {} needs at least {at_least} devices", self.kind));
        }
        for d in &self.devices {
            if !d.starts_with("/dev/") || d.contains(char::is_whitespace) || d.split('/').any(|p| p == "..") {
                return Err(format!("volume.devices: '{d}' is not a device path (/dev/…)"));
            }
        }
        let mut sorted = self.devices.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() != self.devices.len() {
            return Err("volume.devices: a device is named twice".into());
        }
        let striped = matches!(self.kind.as_str(), "lvm-striped" | "md-raid0");
        let stripe_bytes = match (&self.stripe_size, striped) {
            (Some(_), false) => return Err(format!("volume.stripe_size: {} has no stripes", self.kind)),
            (Some(s), true) => stripe_value(s)?,
            (None, _) => 64 * 1024,
        };
        let fs = match (self.fs, self.kind.starts_with("btrfs")) {
            (Some(f), true) if f != "btrfs" => {
                return Err(format!("volume.fs: {} is a btrfs filesystem", self.kind))
            }
            (_, true) => "btrfs".to_string(),
            (Some(f), false) if !FILESYSTEMS.contains(&f.as_str()) => {
                return Err(format!("volume.fs '{f}': use {}", FILESYSTEMS.join(" or ")))
            }
            (f, false) => f.unwrap_or_else(|| "ext4".into()),
        };
        Ok(VolumeSpec {
            kind: self.kind,
            devices: self.devices,
            stripe_bytes,
            fs,
            destructive: self.destructive,
        })
    }
}

/// "64k" → 65536: a power of two from 4 KiB to 16 MiB (sizes as the engines' options read them).
/// Leaf parser: its message ends up in [`RawVolume::into_spec`]'s.
fn stripe_value(text: &str) -> Result<u64, String> {
    match racehorse_engines::options::parse_size(text) {
        Some(b) if b.is_power_of_two() && (4096..=16 << 20).contains(&b) => Ok(b),
        _ => Err(format!("volume.stripe_size '{text}': a power of two from 4k to 16m")),
    }
}

impl VolumeSpec {
    /// `btrfs-raid0 over /dev/loop0,/dev/loop1` (`, stripe 64 KiB`, `, ext4`).
    pub fn describe(&self) -> String {
        let mut s = format!("{} over {}", self.kind, self.devices.join(","));
        if matches!(self.kind.as_str(), "lvm-striped" | "md-raid0") {
            s.push_str(&format!(", stripe {} KiB", self.stripe_bytes >> 10));
        }
        if !self.kind.starts_with("btrfs") {
            s.push_str(&format!(", {}", self.fs));
        }
        s
    }

    /// The programs the build needs on PATH.
    pub fn tools(&self) -> &'static [&'static str] {
        match self.kind.as_str() {
            "lvm-linear" | "lvm-striped" => &["lvm", "wipefs"],
            "md-raid0" => &["mdadm", "wipefs"],
            _ => &["mkfs.btrfs", "wipefs"],
        }
    }

    /// The names LVM and md objects get for variant `variant` (made of its name's safe
    /// characters): the volume group and the md array.
    fn names(&self, variant: &str) -> (String, String) {
        let safe: String = variant.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        (format!("racehorse_{safe}"), format!("/dev/md/racehorse_{safe}"))
    }

    /// The shell commands that build the volume and mount it at `mount`, and that unmount
    /// and dismantle it (each step of the teardown runs even when an earlier one fails; the
    /// devices are wiped of what the build wrote).
    pub fn commands(&self, variant: &str, mount: &Path) -> (String, String) {
        let devs: Vec<String> = self.devices.iter().map(|d| q(d)).collect();
        let devs = devs.join(" ");
        let (vg, md) = self.names(variant);
        let mnt = q(&mount.display().to_string());
        let mkfs = |dev: &str| match self.fs.as_str() {
            "xfs" => format!("mkfs.xfs -q -f {dev}"),
            _ => format!("mkfs.ext4 -q -F {dev}"),
        };
        let n = self.devices.len();
        let kib = self.stripe_bytes >> 10;
        let (build, dismantle) = match self.kind.as_str() {
            "btrfs-single" | "btrfs-raid0" => {
                let profile = if self.kind == "btrfs-raid0" { "raid0" } else { "single" };
                let first = q(&self.devices[0]);
                (
                    format!("mkfs.btrfs -q -f -d {profile} -m single {devs} && mount {first} {mnt}"),
                    String::new(),
                )
            }
            "md-raid0" => (
                format!(
                    "mdadm --create {md} --run --quiet --level=0 --raid-devices={n} --chunk={kib} {devs} && {} && mount {md} {mnt}",
                    mkfs(&md)
                ),
                format!("mdadm --stop {md} >/dev/null 2>&1; mdadm --zero-superblock {devs} >/dev/null 2>&1; "),
            ),
            _ => {
                let stripes = if self.kind == "lvm-striped" { format!("-i {n} -I {kib}k ") } else { String::new() };
                let lv = format!("/dev/{vg}/data");
                (
                    format!(
                        "lvm pvcreate -q -ff -y {devs} && lvm vgcreate -q {vg} {devs} && \
                         lvm lvcreate -q -y {stripes}-l 100%FREE -n data {vg} && {} && mount {lv} {mnt}",
                        mkfs(&lv)
                    ),
                    format!(
                        "lvm vgremove -q -f {vg} >/dev/null 2>&1; lvm pvremove -q -ff -y {devs} >/dev/null 2>&1; "
                    ),
                )
            }
        };
        let build = format!("mkdir -p {mnt} && {build}");
        let teardown = format!(
            "if mountpoint -q {mnt}; then umount {mnt} || umount -l {mnt}; fi; {dismantle}wipefs -q -a {devs}; rmdir {mnt} 2>/dev/null; ! mountpoint -q {mnt} 2>/dev/null"
        );
        (build, teardown)
    }
}

/// Where a variant's volume is mounted when the variant names no `dir`.
pub fn default_mount(variant: &str) -> PathBuf {
    std::env::temp_dir().join(format!("racehorse-volume-{variant}"))
}

#[cfg(test)]
#[path = "volume_tests.rs"]
mod tests;
