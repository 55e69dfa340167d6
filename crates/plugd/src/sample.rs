//! One sample of what rules can read: time, load, online CPUs, the aggregate /proc/stat
//! ticks and the /proc/meminfo and /proc/vmstat counters, read only as far as the rules need.

use racehorse_machine::{cpuctl, MachineError, SysRoot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The ten fields of /proc/stat's aggregate `cpu` line, in USER_HZ ticks.
pub const TICK_FIELDS: [&str; 10] =
    ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"];

/// One reading of the machine (a line of a recorded trace).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the epoch.
    pub time: f64,
    /// 1-minute load average.
    pub loadavg: f64,
    /// Runnable threads (the number before `/` in /proc/loadavg's fourth field).
    pub runnable: f64,
    /// Online CPUs (or CPUs of the managed cpuset).
    pub onumcpus: u32,
    /// Present CPUs (the pool CPU_MAX = 0 stands for).
    pub present: u32,
    /// Cumulative ticks in [`TICK_FIELDS`] order.
    pub ticks: [u64; 10],
    /// /proc/meminfo values in kB (only those read).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meminfo: BTreeMap<String, u64>,
    /// /proc/vmstat counters (only those read).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vmstat: BTreeMap<String, u64>,
}

/// Which files a sample needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Needs {
    pub meminfo: bool,
    pub vmstat: bool,
}

impl Needs {
    pub const ALL: Needs = Needs { meminfo: true, vmstat: true };
}

fn io(path: &Path, e: std::io::Error) -> MachineError {
    MachineError::io(path, e)
}

fn bad(file: &str, msg: String) -> MachineError {
    MachineError::parse(file, 1, msg)
}

/// Parses /proc/loadavg's 1-minute load and runnable count.
pub fn parse_loadavg(text: &str) -> Result<(f64, f64), MachineError> {
    let mut it = text.split_ascii_whitespace();
    let load = it.next().and_then(|t| t.parse::<f64>().ok());
    let runnable = it.nth(2).and_then(|t| t.split('/').next()).and_then(|t| t.parse::<f64>().ok());
    match (load, runnable) {
        (Some(l), Some(r)) => Ok((l, r)),
        _ => Err(bad("loadavg", format!("unexpected content {:?}", text.trim()))),
    }
}

/// Parses the aggregate `cpu` line (the first line) of /proc/stat; missing fields are 0.
pub fn parse_ticks(text: &str) -> Result<[u64; 10], MachineError> {
    let line =
        text.lines().find(|l| l.starts_with("cpu ")).ok_or_else(|| bad("stat", "no `cpu` line".into()))?;
    let mut ticks = [0u64; 10];
    for (slot, tok) in ticks.iter_mut().zip(line.split_ascii_whitespace().skip(1)) {
        *slot = tok.parse().map_err(|_| bad("stat", format!("bad tick count {tok:?}")))?;
    }
    Ok(ticks)
}

/// Parses `Name:   123 kB` lines of /proc/meminfo (values in kB as written).
pub fn parse_meminfo(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let v = rest.split_ascii_whitespace().next()?.parse().ok()?;
            Some((name.trim().to_string(), v))
        })
        .collect()
}

/// Parses `name 123` lines of /proc/vmstat.
pub fn parse_vmstat(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (name, v) = l.split_once(' ')?;
            Some((name.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

fn read(path: &Path) -> Result<String, MachineError> {
    std::fs::read_to_string(path).map_err(|e| io(path, e))
}

/// Reads one sample from `root`; `onumcpus` and `present` come from the caller (the backend
/// knows what it manages).
pub fn read_sample(
    root: &SysRoot,
    needs: Needs,
    onumcpus: u32,
    present: u32,
) -> Result<Sample, MachineError> {
    let time = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let (loadavg, runnable) = parse_loadavg(&read(&root.proc("loadavg"))?)?;
    let ticks = parse_ticks(&read(&root.proc("stat"))?)?;
    let meminfo = if needs.meminfo { parse_meminfo(&read(&root.proc("meminfo"))?) } else { BTreeMap::new() };
    let vmstat = if needs.vmstat { parse_vmstat(&read(&root.proc("vmstat"))?) } else { BTreeMap::new() };
    Ok(Sample { time: time.as_secs_f64(), loadavg, runnable, onumcpus, present, ticks, meminfo, vmstat })
}

/// Online and present CPU counts of the machine.
pub fn machine_counts(root: &SysRoot) -> Result<(u32, u32), MachineError> {
    let online = cpuctl::online_cpus(root)?.len() as u32;
    let present = match std::fs::read_to_string(root.sys("devices/system/cpu/present")) {
        Ok(t) => cpuctl::parse_cpu_list(&t)?.len() as u32,
        Err(_) => cpuctl::possible_cpus(root)?.len() as u32,
    };
    Ok((online, present))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_texts_parse() {
        assert_eq!(parse_loadavg("0.52 0.58 0.59 3/345 6789\n").unwrap(), (0.52, 3.0));
        assert!(parse_loadavg("x").is_err());
        let t = parse_ticks("cpu  10 1 20 300 4 0 2 0 0 0\ncpu0 5 0 10 150 2 0 1 0 0 0\n").unwrap();
        assert_eq!(t, [10, 1, 20, 300, 4, 0, 2, 0, 0, 0]);
        assert_eq!(parse_ticks("cpu  1 2 3 4\n").unwrap()[3..], [4, 0, 0, 0, 0, 0, 0], "old kernels");
        assert!(parse_ticks("intr 1\n").is_err());
        let m = parse_meminfo(
            "MemTotal:       24576000 kB\nMemFree:         1000 kB\nHugePages_Total:       0\n",
        );
        assert_eq!((m["MemTotal"], m["MemFree"], m["HugePages_Total"]), (24_576_000, 1000, 0));
        let v = parse_vmstat("pgpgin 100\npswpout 7\n");
        assert_eq!((v["pgpgin"], v["pswpout"]), (100, 7));
    }

    #[test]
    fn a_sample_reads_only_what_is_needed() {
        let root = SysRoot::host();
        let (online, present) = machine_counts(&root).unwrap();
        assert!(online >= 1 && present >= online);
        let s = read_sample(&root, Needs::default(), online, present).unwrap();
        assert!(s.meminfo.is_empty() && s.vmstat.is_empty() && s.ticks[3] > 0 && s.time > 1e9);
        let all = read_sample(&root, Needs::ALL, online, present).unwrap();
        assert!(all.meminfo.contains_key("MemFree") && all.vmstat.contains_key("pgpgin"));
    }
}
