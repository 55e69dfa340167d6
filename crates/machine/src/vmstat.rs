//! /proc/vmstat: paging, swapping and fault counters.

use crate::error::MachineError;
use crate::root::{read_text, SysRoot};

/// Cumulative counters from /proc/vmstat (since boot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VmStat {
    /// `pgpgin`: KiB read from block devices (the kernel reports it in 1 KiB units).
    pub pgpgin_kb: u64,
    /// `pgpgout`: KiB written to block devices.
    pub pgpgout_kb: u64,
    /// `pswpin`: pages swapped in.
    pub pswpin_pages: u64,
    /// `pswpout`: pages swapped out.
    pub pswpout_pages: u64,
    /// `pgfault`: all page faults.
    pub pgfault: u64,
    /// `pgmajfault`: major page faults (needing I/O).
    pub pgmajfault: u64,
}

/// Reads and parses `<proc>/vmstat`.
pub fn read_vmstat(root: &SysRoot) -> Result<VmStat, MachineError> {
    let path = root.proc("vmstat");
    parse_vmstat(&read_text(&path)?).map_err(|e| e.at_path(path))
}

/// Parses the text of /proc/vmstat; missing counters stay 0.
pub fn parse_vmstat(text: &str) -> Result<VmStat, MachineError> {
    let mut v = VmStat::default();
    for (i, line) in text.lines().enumerate() {
        let Some((key, val)) = line.split_once(' ') else { continue };
        let slot = match key {
            "pgpgin" => &mut v.pgpgin_kb,
            "pgpgout" => &mut v.pgpgout_kb,
            "pswpin" => &mut v.pswpin_pages,
            "pswpout" => &mut v.pswpout_pages,
            "pgfault" => &mut v.pgfault,
            "pgmajfault" => &mut v.pgmajfault,
            _ => continue,
        };
        *slot = val
            .trim()
            .parse()
            .map_err(|_| MachineError::parse("vmstat", i + 1, format!("bad value for {key}: {val:?}")))?;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_vmstat() {
        let t = "nr_free_pages 1000\npgpgin 11\npgpgout 22\npswpin 3\npswpout 4\npgfault 555\npgmajfault 6\n";
        let v = parse_vmstat(t).expect("parse");
        assert_eq!(
            v,
            VmStat {
                pgpgin_kb: 11,
                pgpgout_kb: 22,
                pswpin_pages: 3,
                pswpout_pages: 4,
                pgfault: 555,
                pgmajfault: 6
            }
        );
        assert!(parse_vmstat("pgpgin x\n").is_err());
    }
}
