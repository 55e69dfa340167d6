//! /proc/loadavg: 1/5/15-minute load averages and runnable/total scheduling entities.

use crate::error::MachineError;
use crate::root::{read_text, SysRoot};

/// One /proc/loadavg reading.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoadAvg {
    pub load1: f64,
    pub load5: f64,
    pub load15: f64,
    /// Currently runnable threads.
    pub running: u32,
    /// Threads in the system.
    pub total: u32,
}

/// Reads and parses `<proc>/loadavg`.
pub fn read_loadavg(root: &SysRoot) -> Result<LoadAvg, MachineError> {
    let path = root.proc("loadavg");
    parse_loadavg(&read_text(&path)?).map_err(|e| e.at_path(path))
}

/// Parses "0.52 0.58 0.59 2/345 6789".
pub fn parse_loadavg(text: &str) -> Result<LoadAvg, MachineError> {
    let bad = |what: &str| MachineError::parse("loadavg", 1, format!("bad {what} in {:?}", text.trim()));
    let mut it = text.split_ascii_whitespace();
    let mut load = || -> Result<f64, MachineError> {
        it.next().and_then(|t| t.parse().ok()).ok_or_else(|| bad("load average"))
    };
    let (load1, load5, load15) = (load()?, load()?, load()?);
    let rt = text.split_ascii_whitespace().nth(3).ok_or_else(|| bad("running/total"))?;
    let (r, t) = rt.split_once('/').ok_or_else(|| bad("running/total"))?;
    let running = r.parse().map_err(|_| bad("running"))?;
    let total = t.parse().map_err(|_| bad("total"))?;
    Ok(LoadAvg { load1, load5, load15, running, total })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_loadavg() {
        let l = parse_loadavg("0.52 0.58 1.59 2/345 6789\n").expect("parse");
        assert_eq!((l.load1, l.load5, l.load15), (0.52, 0.58, 1.59));
        assert_eq!((l.running, l.total), (2, 345));
        assert!(parse_loadavg("0.1 0.2\n").is_err());
        assert!(parse_loadavg("0.1 0.2 0.3 x\n").is_err());
    }
}
