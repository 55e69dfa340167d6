//! /proc/meminfo: total, free, available, cached, dirty and swap, in bytes.

use crate::error::MachineError;
use crate::root::{read_text, SysRoot};

/// Memory figures from /proc/meminfo, converted from kB (KiB) to bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemInfo {
    pub total_bytes: u64,
    pub free_bytes: u64,
    /// MemAvailable; on kernels without it, free + cached.
    pub available_bytes: u64,
    pub cached_bytes: u64,
    pub dirty_bytes: u64,
    pub swap_total_bytes: u64,
    pub swap_free_bytes: u64,
}

/// Reads and parses `<proc>/meminfo`.
pub fn read_meminfo(root: &SysRoot) -> Result<MemInfo, MachineError> {
    let path = root.proc("meminfo");
    parse_meminfo(&read_text(&path)?).map_err(|e| e.at_path(path))
}

/// Parses the text of /proc/meminfo. MemTotal is required.
pub fn parse_meminfo(text: &str) -> Result<MemInfo, MachineError> {
    let mut m = MemInfo::default();
    let mut saw_total = false;
    let mut saw_available = false;
    for (i, line) in text.lines().enumerate() {
        let Some((key, rest)) = line.split_once(':') else { continue };
        let slot = match key {
            "MemTotal" => {
                saw_total = true;
                &mut m.total_bytes
            }
            "MemFree" => &mut m.free_bytes,
            "MemAvailable" => {
                saw_available = true;
                &mut m.available_bytes
            }
            "Cached" => &mut m.cached_bytes,
            "Dirty" => &mut m.dirty_bytes,
            "SwapTotal" => &mut m.swap_total_bytes,
            "SwapFree" => &mut m.swap_free_bytes,
            _ => continue,
        };
        let tok = rest.split_ascii_whitespace().next().unwrap_or("");
        let kb: u64 = tok
            .parse()
            .map_err(|_| MachineError::parse("meminfo", i + 1, format!("bad value for {key}: {tok:?}")))?;
        *slot = kb.saturating_mul(1024);
    }
    if !saw_total {
        return Err(MachineError::parse("meminfo", 1, "no MemTotal line"));
    }
    if !saw_available {
        m.available_bytes = m.free_bytes + m.cached_bytes;
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kB figure near u64::MAX saturates instead of overflowing (the procfs fuzz target's
    /// diskstats crash had the same shape).
    #[test]
    fn huge_kb_values_saturate() {
        let m = parse_meminfo("MemTotal: 18446744073709551615 kB\nMemAvailable: 1 kB\n").unwrap();
        assert_eq!(m.total_bytes, u64::MAX);
    }

    #[test]
    fn parses_meminfo() {
        let t = "MemTotal:        2048 kB\nMemFree:          512 kB\nMemAvailable:    1024 kB\n\
Buffers:  1 kB\nCached:           256 kB\nSwapCached: 0 kB\nDirty:  8 kB\nSwapTotal: 100 kB\nSwapFree: 50 kB\n\
HugePages_Total:       0\n";
        let m = parse_meminfo(t).expect("parse");
        assert_eq!(m.total_bytes, 2048 * 1024);
        assert_eq!(m.available_bytes, 1024 * 1024);
        assert_eq!(m.cached_bytes, 256 * 1024);
        assert_eq!(m.dirty_bytes, 8 * 1024);
        assert_eq!((m.swap_total_bytes, m.swap_free_bytes), (100 * 1024, 50 * 1024));
    }

    #[test]
    fn old_kernel_without_available() {
        let m = parse_meminfo("MemTotal: 10 kB\nMemFree: 2 kB\nCached: 3 kB\n").expect("parse");
        assert_eq!(m.available_bytes, 5 * 1024);
    }

    #[test]
    fn errors() {
        assert!(parse_meminfo("MemFree: 2 kB\n").is_err());
        assert!(parse_meminfo("MemTotal: x kB\n").is_err());
    }
}
