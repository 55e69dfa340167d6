//! Variant knobs: sysfs choice files (`always [madvise] never`), block queue directories, the
//! device behind a path, and the THP and CPU governor files that `Guard::set_files` changes.

use crate::cpuctl::online_cpus;
use crate::error::MachineError;
use crate::root::SysRoot;
use std::path::{Path, PathBuf};

/// The words of a sysfs choice list such as `[none] mq-deadline kyber` (brackets removed), or
/// None when `text` is not one: exactly one word must be bracketed and no other may hold a bracket.
pub fn choices(text: &str) -> Option<Vec<String>> {
    let mut selected = 0;
    let mut words = Vec::new();
    for word in text.split_whitespace() {
        let inner = word.strip_prefix('[').and_then(|w| w.strip_suffix(']'));
        match inner {
            Some(w) if !w.is_empty() && !w.contains(['[', ']']) => {
                selected += 1;
                words.push(w.to_string());
            }
            _ if word.contains(['[', ']']) => return None,
            _ => words.push(word.to_string()),
        }
    }
    (selected == 1).then_some(words)
}

/// The value a sysfs file holds: the bracketed word of a choice list (`always [madvise] never`
/// → "madvise"), else the trimmed text.
pub fn selected_value(text: &str) -> String {
    if choices(text).is_some() {
        if let Some(word) = text.split_whitespace().find_map(|w| w.strip_prefix('[')?.strip_suffix(']')) {
            return word.to_string();
        }
    }
    text.trim().to_string()
}

/// The kernel name of `device` ("vda", "/dev/vda1"); on the real machine links such as
/// /dev/mapper/NAME or /dev/disk/by-uuid/… are followed.
fn device_name(root: &SysRoot, device: &str) -> Result<String, MachineError> {
    let bad = || {
        MachineError::Invalid(format!(
            "{device:?} is not a block device name; name it like \"vda\", \"/dev/vda\" or \"/dev/vda1\""
        ))
    };
    let name = device.strip_prefix("/dev/").unwrap_or(device);
    if name.contains('/') && device.starts_with("/dev/") && root.is_host() {
        let real = std::fs::canonicalize(device).map_err(|e| MachineError::io(device, e))?;
        return real.file_name().map(|n| n.to_string_lossy().into_owned()).ok_or_else(bad);
    }
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(bad());
    }
    Ok(name.to_string())
}

/// Entries of sys/block, sorted, for error messages.
fn block_devices(root: &SysRoot) -> String {
    let mut names: Vec<String> = std::fs::read_dir(root.sys("block"))
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// The sysfs directory of block device or partition `name`.
fn find_block_dir(root: &SysRoot, name: &str) -> Option<PathBuf> {
    let direct = [root.sys("class/block").join(name), root.sys("block").join(name)];
    if let Some(dir) = direct.into_iter().find(|d| d.is_dir()) {
        return Some(dir);
    }
    // A partition in a plain directory layout: sys/block/DISK/NAME/partition.
    let rd = std::fs::read_dir(root.sys("block")).ok()?;
    rd.flatten().map(|e| e.path().join(name)).find(|p| p.join("partition").is_file())
}

/// The whole disk's directory for a device directory (the parent of a partition), symlinks resolved.
fn whole_disk(dir: &Path) -> Result<PathBuf, MachineError> {
    let real = std::fs::canonicalize(dir).map_err(|e| MachineError::io(dir, e))?;
    if real.join("partition").is_file() {
        if let Some(parent) = real.parent() {
            return Ok(parent.to_path_buf());
        }
    }
    Ok(real)
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The queue directory (scheduler, read_ahead_kb, nr_requests…) of a block device: "vda",
/// "/dev/vda" or "loop0"; a partition ("vda1") gives its whole disk's queue. Prefers the short
/// form `<sys>/block/DISK/queue` when it exists.
pub fn block_queue_dir(root: &SysRoot, device: &str) -> Result<PathBuf, MachineError> {
    let name = device_name(root, device)?;
    let Some(dir) = find_block_dir(root, &name) else {
        return Err(MachineError::Invalid(format!(
            "no block device {device:?} on this machine (no {}); devices in {}: {}",
            root.sys("class/block").join(&name).display(),
            root.sys("block").display(),
            block_devices(root)
        )));
    };
    let disk = whole_disk(&dir)?;
    let short = root.sys("block").join(file_name(&disk)).join("queue");
    if short.is_dir() {
        return Ok(short);
    }
    let queue = disk.join("queue");
    if !queue.is_dir() {
        return Err(MachineError::Invalid(format!(
            "block device {device:?} has no queue directory ({}), so it has no queue settings to change",
            queue.display()
        )));
    }
    Ok(queue)
}

/// The whole-disk name of block device number `major:minor`, from `<sys>/dev/block/MAJ:MIN`.
pub fn device_for_devnum(root: &SysRoot, major: u32, minor: u32) -> Result<String, MachineError> {
    let link = root.sys(format!("dev/block/{major}:{minor}"));
    if !link.exists() {
        return Err(MachineError::Invalid(format!(
            "no block device {major}:{minor} ({} does not exist); name the device instead, e.g. device = \"vda\"",
            link.display()
        )));
    }
    Ok(file_name(&whole_disk(&link)?))
}

/// Splits a Linux dev_t into (major, minor), as glibc's gnu_dev_major/minor do.
pub(crate) fn split_dev(dev: u64) -> (u32, u32) {
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff);
    (major as u32, minor as u32)
}

/// The block device (whole-disk name, e.g. "vda") holding `path`; a path that does not exist
/// yet counts as its nearest existing ancestor. Filesystems without a device (tmpfs, overlay,
/// btrfs subvolumes…) are an error asking to name the device.
pub fn device_of_path(root: &SysRoot, path: &Path) -> Result<String, MachineError> {
    use std::os::unix::fs::MetadataExt;
    let existing = path
        .ancestors()
        .map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p })
        .find(|p| p.exists())
        .unwrap_or(path);
    let meta = std::fs::metadata(existing).map_err(|e| MachineError::io(existing, e))?;
    // A device node (/dev/loop0) is on devtmpfs: the device is the one it stands for.
    let dev = if std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type()) {
        meta.rdev()
    } else {
        meta.dev()
    };
    let (major, minor) = split_dev(dev);
    if major == 0 {
        return Err(MachineError::Invalid(format!(
            "{} is on a filesystem with no block device (tmpfs, overlay…); name the device instead, e.g. device = \"vda\"",
            path.display()
        )));
    }
    device_for_devnum(root, major, minor)
}

/// The transparent hugepage control `which` ("enabled" or "defrag").
pub fn thp_file(root: &SysRoot, which: &str) -> Result<PathBuf, MachineError> {
    if !matches!(which, "enabled" | "defrag") {
        return Err(MachineError::Invalid(format!(
            "{which:?} is not a transparent hugepage setting; use \"enabled\" or \"defrag\""
        )));
    }
    let dir = root.sys("kernel/mm/transparent_hugepage");
    if !dir.is_dir() {
        return Err(MachineError::Invalid(format!(
            "this kernel has no transparent hugepages (no {}); remove thp from the variant",
            dir.display()
        )));
    }
    Ok(dir.join(which))
}

/// cpuN/cpufreq/scaling_governor of every online CPU. An error when no CPU has one (no
/// frequency scaling, as in most virtual machines) or only some do.
pub fn governor_files(root: &SysRoot) -> Result<Vec<PathBuf>, MachineError> {
    let files: Vec<(u32, PathBuf)> = online_cpus(root)?
        .into_iter()
        .map(|c| (c, root.sys(format!("devices/system/cpu/cpu{c}/cpufreq/scaling_governor"))))
        .collect();
    let missing: Vec<String> =
        files.iter().filter(|(_, f)| !f.is_file()).map(|(c, _)| format!("cpu{c}")).collect();
    if missing.len() == files.len() {
        return Err(MachineError::Invalid(format!(
            "this machine has no CPU frequency scaling (no {}); remove governor from the variant \
             (virtual machines usually have none)",
            root.sys("devices/system/cpu/cpu*/cpufreq/scaling_governor").display()
        )));
    }
    if !missing.is_empty() {
        return Err(MachineError::Invalid(format!(
            "online CPUs {} have no cpufreq/scaling_governor while others do; set the governor by hand \
             or remove governor from the variant",
            missing.join(", ")
        )));
    }
    Ok(files.into_iter().map(|(_, f)| f).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{fixture_dir, writable_fixture};
    use proptest::prelude::*;

    #[test]
    fn choice_files() {
        assert_eq!(selected_value("always [madvise] never\n"), "madvise");
        assert_eq!(selected_value("[none] mq-deadline kyber bfq \n"), "none");
        assert_eq!(selected_value(" 128\n"), "128");
        assert_eq!(selected_value("a [b] [c]"), "a [b] [c]", "two selections: not a choice list");
        assert_eq!(
            choices("[none] mq-deadline kyber bfq").expect("list"),
            ["none", "mq-deadline", "kyber", "bfq"]
        );
        assert_eq!(choices("[x]").expect("one"), ["x"]);
        for not in ["128", "", "performance powersave", "a [b] [c]", "a [] c", "a [[b]] c", "a b]"] {
            assert_eq!(choices(not), None, "{not:?}");
        }
    }

    proptest! {
        #[test]
        fn choice_lists_round_trip(words in proptest::collection::btree_set("[a-z][a-z0-9+-]{0,8}", 1..6), pick in 0usize..6) {
            let words: Vec<String> = words.into_iter().collect();
            let pick = pick % words.len();
            let text: Vec<String> =
                words.iter().enumerate().map(|(i, w)| if i == pick { format!("[{w}]") } else { w.clone() }).collect();
            let text = format!("{}\n", text.join(" "));
            prop_assert_eq!(choices(&text), Some(words.clone()));
            prop_assert_eq!(selected_value(&text), words[pick].clone());
        }

        #[test]
        fn plain_text_is_trimmed(s in "[^\\[\\]]{0,30}") {
            prop_assert_eq!(choices(&s), None);
            prop_assert_eq!(selected_value(&s), s.trim());
        }
    }

    #[test]
    fn queue_dirs_of_disks_and_partitions() {
        let (_d, root, _) = writable_fixture("knobs");
        let vda = root.sys("block/vda/queue");
        for name in ["vda", "/dev/vda", "vda1", "/dev/vda1"] {
            assert_eq!(block_queue_dir(&root, name).expect(name), vda, "{name}");
        }
        assert_eq!(block_queue_dir(&root, "loop0").expect("loop0"), root.sys("block/loop0/queue"));
        let e = block_queue_dir(&root, "sdz").expect_err("unknown").to_string();
        assert!(e.contains("\"sdz\"") && e.contains("loop0, vda"), "{e}");
        for bad in ["", "/dev/", "..", "a/b", "/dev/../etc"] {
            assert!(block_queue_dir(&root, bad).is_err(), "{bad}");
        }
        // Plain directories only (no class/block): the partition is found under its disk.
        let vm2 = SysRoot::at(fixture_dir("vm2"));
        assert_eq!(block_queue_dir(&vm2, "/dev/vda2").expect("vda2"), vm2.sys("block/vda/queue"));
        let e = block_queue_dir(&vm2, "nvme0n1").expect_err("unknown").to_string();
        assert!(e.contains("vda, zram0"), "{e}");
    }

    #[test]
    fn device_numbers() {
        let (_d, root, _) = writable_fixture("knobs");
        assert_eq!(device_for_devnum(&root, 254, 0).expect("disk"), "vda");
        assert_eq!(device_for_devnum(&root, 254, 1).expect("partition"), "vda");
        assert_eq!(device_for_devnum(&root, 7, 0).expect("loop"), "loop0");
        let e = device_for_devnum(&root, 8, 16).expect_err("absent").to_string();
        assert!(e.contains("8:16") && e.contains("name the device"), "{e}");
        assert_eq!(split_dev(0xfe01), (254, 1));
        // glibc makedev(259, 0x12345): big numbers are split across the high bits.
        let dev = ((259u64 & 0xfff) << 8) | ((0x12345u64 & 0xffff_ff00) << 12) | (0x12345 & 0xff);
        assert_eq!(split_dev(dev), (259, 0x12345));
        let e = device_of_path(&SysRoot::host(), Path::new("/proc/self")).expect_err("procfs").to_string();
        assert!(
            e.contains("/proc/self is on a filesystem with no block device")
                && e.contains("device = \"vda\""),
            "{e}"
        );
    }

    #[test]
    fn thp_and_governor_files() {
        let (_d, root, _) = writable_fixture("knobs");
        assert_eq!(
            thp_file(&root, "defrag").expect("defrag"),
            root.sys("kernel/mm/transparent_hugepage/defrag")
        );
        assert!(thp_file(&root, "../x").is_err());
        let files = governor_files(&root).expect("governors");
        assert_eq!(files[1], root.sys("devices/system/cpu/cpu1/cpufreq/scaling_governor"));
        std::fs::remove_file(&files[1]).expect("rm");
        let e = governor_files(&root).expect_err("cpu1 lacks one").to_string();
        assert!(e.contains("cpu1") && e.contains("while others do"), "{e}");
        let vm2 = SysRoot::at(fixture_dir("vm2"));
        let e = governor_files(&vm2).expect_err("no cpufreq").to_string();
        assert!(e.contains("no CPU frequency scaling") && e.contains("remove governor"), "{e}");
        assert!(thp_file(&SysRoot::at("/nonexistent"), "enabled")
            .expect_err("none")
            .to_string()
            .contains("remove thp"));
    }

    /// Reads only: the device of a file in /tmp must be what sys/dev/block names for its st_dev.
    #[test]
    fn device_of_a_tmp_file_machine() {
        use std::os::unix::fs::MetadataExt;
        let root = SysRoot::host();
        let file = tempfile::NamedTempFile::new().expect("tmp file");
        let (major, minor) = split_dev(std::fs::metadata(file.path()).expect("stat").dev());
        if major == 0 {
            let e = device_of_path(&root, file.path()).expect_err("no device").to_string();
            println!("skipped the device check: /tmp has no block device here ({e})");
            return;
        }
        let link =
            std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).expect("sys/dev/block entry");
        let disk =
            if link.join("partition").exists() { link.parent().expect("disk").to_path_buf() } else { link };
        let want = disk.file_name().expect("name").to_string_lossy().into_owned();
        assert_eq!(device_of_path(&root, file.path()).expect("device"), want);
        assert_eq!(device_of_path(&root, &file.path().join("not/yet")).expect("ancestor"), want);
        println!("{} is on {want} ({major}:{minor})", file.path().display());
    }
}
