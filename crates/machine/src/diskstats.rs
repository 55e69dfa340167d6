//! /proc/diskstats: bytes read and written, summed over whole physical disks.
//!
//! Counted devices: those listed in `<sys>/block/` (whole disks: partitions never appear
//! there), minus virtual or stacked devices whose I/O is already counted on (or never reaches)
//! a disk: `loop*`, `ram*`, `zram*`, `dm-*` and `md*`. Without a readable `<sys>/block`, names
//! that look like partitions (`sda1`, `nvme0n1p2`, `mmcblk0p1`) are skipped instead.

use crate::error::MachineError;
use crate::root::{read_text, SysRoot};

/// Bytes transferred since boot over the counted disks (sectors × 512).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskTotals {
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// How many devices were summed.
    pub devices: u32,
}

const SECTOR_BYTES: u64 = 512;

/// True for devices never counted: loop, RAM disks, zram, device-mapper and md (stacked).
pub fn is_virtual(name: &str) -> bool {
    ["loop", "ram", "zram", "dm-", "md"].iter().any(|p| name.starts_with(p))
}

/// Heuristic used only when `<sys>/block` is unreadable.
fn looks_like_partition(name: &str) -> bool {
    let Some(last) = name.chars().last() else { return false };
    if !last.is_ascii_digit() {
        return false;
    }
    let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
    // nvme0n1p2, mmcblk0p1 (the disks themselves end in a digit too) / sda1, vdb2, xvda1
    if name.starts_with("nvme") || name.starts_with("mmcblk") || name.starts_with("nbd") {
        return stem.ends_with('p') && stem[..stem.len() - 1].ends_with(|c: char| c.is_ascii_digit());
    }
    stem.chars().all(|c| c.is_ascii_lowercase())
}

/// The counted disks: entries of `<sys>/block` that are not virtual; None if unreadable.
pub fn whole_disks(root: &SysRoot) -> Option<Vec<String>> {
    let rd = std::fs::read_dir(root.sys("block")).ok()?;
    let mut v: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !is_virtual(n))
        .collect();
    v.sort();
    Some(v)
}

/// Reads `<proc>/diskstats` and sums over the disks chosen as described in the module docs.
pub fn read_diskstats(root: &SysRoot) -> Result<DiskTotals, MachineError> {
    let path = root.proc("diskstats");
    let text = read_text(&path)?;
    let disks = whole_disks(root);
    parse_diskstats(&text, |name| match &disks {
        Some(d) => d.iter().any(|x| x == name),
        None => !is_virtual(name) && !looks_like_partition(name),
    })
    .map_err(|e| e.at_path(path))
}

/// Parses /proc/diskstats, summing sectors read (field 6) and written (field 10) of devices
/// for which `include(name)` is true.
pub fn parse_diskstats(text: &str, include: impl Fn(&str) -> bool) -> Result<DiskTotals, MachineError> {
    let mut t = DiskTotals::default();
    for (i, line) in text.lines().enumerate() {
        let mut it = line.split_ascii_whitespace();
        let Some(name) = it.nth(2) else { continue };
        if !include(name) {
            continue;
        }
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if f.len() < 10 {
            return Err(MachineError::parse("diskstats", i + 1, format!("{name}: fewer than 10 fields")));
        }
        let num = |k: usize| -> Result<u64, MachineError> {
            f[k].parse().map_err(|_| MachineError::parse("diskstats", i + 1, format!("{name}: bad number")))
        };
        // Saturating: sector counters near u64::MAX (fuzzed input, a corrupt file) must not
        // overflow into a panic.
        t.read_bytes = t.read_bytes.saturating_add(num(5)?.saturating_mul(SECTOR_BYTES));
        t.write_bytes = t.write_bytes.saturating_add(num(9)?.saturating_mul(SECTOR_BYTES));
        t.devices += 1;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "   7       0 loop0 5 0 80 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n\
 254       0 vda 55187 5715 3946450 39764 9045 11748 1448392 5662 0 8640 46698 3907 115 207104 890 941 381\n\
 254       1 vda1 100 0 1000 0 10 0 2000 0 0 0 0\n\
 253       0 zram0 1 0 8 0 1 0 8 0 0 0 0\n\
 259       0 nvme0n1 1 0 10 0 1 0 20 0 0 0 0\n";

    /// Regression (fuzz target `procfs`): huge sector counts overflowed the byte sums.
    #[test]
    fn huge_sector_counts_saturate_instead_of_panicking() {
        let big = "8 0 sda 1 0 99999999999999999999 0 1 0 18446744073709551615 0 0 0 0\n\
                   8 16 sdb 1 0 18446744073709551615 0 1 0 18446744073709551615 0 0 0 0\n";
        let t = parse_diskstats(big, |_| true);
        assert!(t.is_err(), "a number beyond u64 is refused");
        let max = "8 0 sda 1 0 18446744073709551615 0 1 0 18446744073709551615 0 0 0 0\n\
                   8 16 sdb 1 0 18446744073709551615 0 1 0 1 0 0 0 0\n";
        let t = parse_diskstats(max, |_| true).unwrap();
        assert_eq!((t.read_bytes, t.devices), (u64::MAX, 2));
        let fuzzed = include_bytes!("../fixtures/fuzz/procfs-crash-diskstats-overflow.bin");
        let _ = parse_diskstats(&String::from_utf8_lossy(fuzzed), |_| true);
    }

    #[test]
    fn sums_selected_devices() {
        let t = parse_diskstats(TEXT, |n| n == "vda" || n == "nvme0n1").expect("parse");
        assert_eq!(t.read_bytes, (3946450 + 10) * 512);
        assert_eq!(t.write_bytes, (1448392 + 20) * 512);
        assert_eq!(t.devices, 2);
    }

    #[test]
    fn heuristic_fallback() {
        for (n, part) in [("sda1", true), ("sda", false), ("nvme0n1", false), ("nvme0n1p2", true)] {
            assert_eq!(looks_like_partition(n), part, "{n}");
        }
        assert!(["mmcblk0p1", "xvda3"].iter().all(|n| looks_like_partition(n)));
        assert!(!looks_like_partition("mmcblk0"));
        assert!(is_virtual("loop3") && is_virtual("dm-0") && is_virtual("zram0") && !is_virtual("vda"));
    }

    #[test]
    fn short_line_is_an_error() {
        assert!(parse_diskstats("8 0 sda 1 2 3\n", |_| true).is_err());
    }
}
