//! The history ring of samples and the values rules read from it: CPU percentages scaled by
//! onumcpus, freemem, swap and paging rates per measured second, and the raw history families.

use crate::sample::{Sample, TICK_FIELDS};
use racehorse_rules::{Name, Values};
use std::collections::VecDeque;

/// The last `depth + 1` samples, newest last.
#[derive(Debug, Clone, Default)]
pub struct History {
    ring: VecDeque<Sample>,
    depth: usize,
    /// Replaces the sampled onumcpus (replay simulates its own count).
    pub onumcpus_override: Option<u32>,
}

impl History {
    /// A ring for rules that look `depth` samples back (at least 1: rates need two samples).
    pub fn new(depth: usize) -> History {
        let depth = depth.max(1);
        History { ring: VecDeque::with_capacity(depth + 1), depth, onumcpus_override: None }
    }

    pub fn push(&mut self, s: Sample) {
        if self.ring.len() == self.depth + 1 {
            self.ring.pop_front();
        }
        self.ring.push_back(s);
    }

    /// True once `depth + 1` samples are in: every `[n]` the rules use exists.
    pub fn ready(&self) -> bool {
        self.ring.len() == self.depth + 1
    }

    pub fn depth(&self) -> usize {
        self.depth
    }

    pub fn latest(&self) -> Option<&Sample> {
        self.ring.back()
    }

    /// Sample `back` steps before the newest.
    fn at(&self, back: usize) -> Option<&Sample> {
        self.ring.len().checked_sub(back + 1).and_then(|i| self.ring.get(i))
    }

    fn onumcpus(&self) -> Option<f64> {
        let cur = self.at(0)?;
        Some(f64::from(self.onumcpus_override.unwrap_or(cur.onumcpus)))
    }

    /// Δfield / Δtotal × 100 × onumcpus over the last interval (Δtotal of 0 counts as 1, as
    /// upstream; the total is the sum of all ten fields, so guest time counts twice).
    fn cpu_pct(&self, field: usize) -> Option<f64> {
        let (cur, prev) = (self.at(0)?, self.at(1)?);
        let d = |i: usize| cur.ticks[i].saturating_sub(prev.ticks[i]) as f64;
        let total: f64 = (0..10).map(d).sum();
        let total = if total == 0.0 { 1.0 } else { total };
        Some(d(field) / total * 100.0 * self.onumcpus()?)
    }

    /// Δ(sum of `names`) / Δt over the last interval.
    fn vm_rate(&self, names: [&str; 2]) -> Option<f64> {
        let (cur, prev) = (self.at(0)?, self.at(1)?);
        let sum = |s: &Sample| -> Option<f64> {
            Some(names.iter().map(|n| s.vmstat.get(*n).copied()).sum::<Option<u64>>()? as f64)
        };
        let dt = cur.time - prev.time;
        let dt = if dt > 0.0 { dt } else { 1.0 };
        Some((sum(cur)? - sum(prev)?).max(0.0) / dt)
    }

    fn scalar(&self, name: &str, back: usize) -> Option<f64> {
        if let Some(i) = TICK_FIELDS.iter().position(|f| *f == name) {
            return self.cpu_pct(i);
        }
        let cur = self.at(0)?;
        Some(match name {
            "loadavg" => cur.loadavg,
            "runnable_proc" => cur.runnable,
            "onumcpus" => self.onumcpus()?,
            "freemem" => *cur.meminfo.get("MemFree")? as f64 / 1024.0,
            "swaprate" => self.vm_rate(["pswpin", "pswpout"])?,
            "apcr" => self.vm_rate(["pgpgin", "pgpgout"])?,
            "time" => self.at(back)?.time,
            _ => return None,
        })
    }

    fn cpustat(&self, name: &str, back: usize) -> Option<f64> {
        let s = self.at(back)?;
        if let Some(i) = TICK_FIELDS.iter().position(|f| *f == name) {
            return Some(s.ticks[i] as f64);
        }
        Some(match name {
            "onumcpus" => {
                f64::from(if back == 0 { self.onumcpus_override.unwrap_or(s.onumcpus) } else { s.onumcpus })
            }
            "loadavg" => s.loadavg,
            "runnable_proc" => s.runnable,
            "total_ticks" => s.ticks.iter().sum::<u64>() as f64,
            _ => return None,
        })
    }
}

impl Values for History {
    fn value(&self, name: &Name, back: usize) -> Option<f64> {
        match name {
            Name::Scalar(n) => self.scalar(n, back),
            Name::Meminfo(n) => self.at(back)?.meminfo.get(n).map(|v| *v as f64),
            Name::Vmstat(n) => self.at(back)?.vmstat.get(n).map(|v| *v as f64),
            Name::Cpustat(n) => self.cpustat(n, back),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, ticks: [u64; 10], pswp: u64, pgpg: u64) -> Sample {
        Sample {
            time: t,
            loadavg: 1.5,
            runnable: 3.0,
            onumcpus: 4,
            present: 8,
            ticks,
            meminfo: [("MemFree".to_string(), 2048 * 1024)].into(),
            vmstat: [
                ("pswpin".to_string(), pswp),
                ("pswpout".to_string(), pswp),
                ("pgpgin".to_string(), pgpg),
                ("pgpgout".to_string(), 0),
            ]
            .into(),
        }
    }

    fn scalar(h: &History, n: &str) -> f64 {
        h.value(&Name::Scalar(n.into()), 0).unwrap()
    }

    #[test]
    fn percentages_rates_and_history() {
        let mut h = History::new(2);
        h.push(sample(100.0, [100, 0, 50, 800, 0, 0, 0, 0, 0, 0], 10, 1000));
        assert!(!h.ready());
        h.push(sample(102.0, [130, 0, 60, 860, 0, 0, 0, 0, 0, 0], 14, 1500));
        h.push(sample(104.0, [190, 0, 80, 880, 10, 0, 0, 0, 10, 0], 20, 1600));
        assert!(h.ready());
        // Last interval: Δ = user 60, system 20, idle 20, iowait 10, guest 10 → total 120.
        assert!((scalar(&h, "user") - 60.0 / 120.0 * 100.0 * 4.0).abs() < 1e-9);
        assert!((scalar(&h, "idle") - 20.0 / 120.0 * 400.0).abs() < 1e-9);
        assert_eq!(scalar(&h, "freemem"), 2048.0, "MiB");
        assert_eq!(scalar(&h, "swaprate"), 12.0 / 2.0, "pages per second over the measured 2 s");
        assert_eq!(scalar(&h, "apcr"), 50.0);
        assert_eq!(
            (scalar(&h, "loadavg"), scalar(&h, "runnable_proc"), scalar(&h, "onumcpus")),
            (1.5, 3.0, 4.0)
        );
        assert_eq!(h.value(&Name::Scalar("time".into()), 2), Some(100.0));
        assert_eq!(h.value(&Name::Cpustat("user".into()), 1), Some(130.0));
        assert_eq!(h.value(&Name::Cpustat("total_ticks".into()), 0), Some(1170.0));
        assert_eq!(h.value(&Name::Vmstat("pswpin".into()), 2), Some(10.0));
        assert_eq!(h.value(&Name::Vmstat("pswpin".into()), 3), None, "beyond the ring");
        assert_eq!(h.value(&Name::Meminfo("Nope".into()), 0), None);
        h.onumcpus_override = Some(2);
        assert_eq!(scalar(&h, "onumcpus"), 2.0);
        assert!((scalar(&h, "idle") - 20.0 / 120.0 * 200.0).abs() < 1e-9);
    }

    #[test]
    fn a_still_clock_counts_one_tick() {
        let mut h = History::new(1);
        h.push(sample(1.0, [5; 10], 0, 0));
        h.push(sample(1.0, [5; 10], 0, 0));
        assert_eq!(scalar(&h, "idle"), 0.0, "Δtotal 0 → divide by 1");
        assert_eq!(scalar(&h, "swaprate"), 0.0, "Δt 0 → divide by 1");
    }
}
