//! Units as types: durations in nanoseconds, sizes in bytes, and the unit of work an engine counts.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// A duration or timestamp in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Nanos(pub u64);

impl Nanos {
    pub fn from_duration(d: Duration) -> Self {
        Nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn as_duration(self) -> Duration {
        Duration::from_nanos(self.0)
    }
}

/// A quantity of data in bytes. Rendering decides KiB (1024) or MB (10^6) and says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
pub struct Bytes(pub u64);

impl Bytes {
    pub fn as_mb(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_kib(self) -> f64 {
        self.0 as f64 / 1024.0
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut v = self.0 as f64;
        let mut i = 0;
        while v >= 1024.0 && i + 1 < UNITS.len() {
            v /= 1024.0;
            i += 1;
        }
        if i == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{v:.1} {}", UNITS[i])
        }
    }
}

/// What an engine counts as one unit of work. Throughput is units per second and the CPU cost
/// is CPU seconds per unit; the renderer scales bytes to MB (10^6) or KiB as the workload's
/// reference tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkUnit {
    /// Payload bytes moved (read + write).
    Bytes,
    /// Operations (system calls, requests, file operations).
    Ops,
    /// Transactions (request/response pairs, database transactions).
    Transactions,
    /// Jobs (re-aim style units of a mix).
    Jobs,
    /// Generic iterations of a loop.
    Iterations,
}

impl WorkUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkUnit::Bytes => "bytes",
            WorkUnit::Ops => "ops",
            WorkUnit::Transactions => "transactions",
            WorkUnit::Jobs => "jobs",
            WorkUnit::Iterations => "iterations",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "bytes" => WorkUnit::Bytes,
            "ops" => WorkUnit::Ops,
            "transactions" => WorkUnit::Transactions,
            "jobs" => WorkUnit::Jobs,
            "iterations" => WorkUnit::Iterations,
            _ => return None,
        })
    }
}

impl fmt::Display for WorkUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a larger value of a metric is better (throughput) or worse (CPU per unit, latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_display_uses_binary_prefixes() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(1536).to_string(), "1.5 KiB");
        assert_eq!(Bytes(3 * 1024 * 1024 * 1024).to_string(), "3.0 GiB");
    }

    #[test]
    fn work_unit_round_trips() {
        for u in
            [WorkUnit::Bytes, WorkUnit::Ops, WorkUnit::Transactions, WorkUnit::Jobs, WorkUnit::Iterations]
        {
            assert_eq!(WorkUnit::parse(u.as_str()), Some(u));
        }
        assert_eq!(WorkUnit::parse("furlongs"), None);
    }

    #[test]
    fn nanos_convert() {
        assert_eq!(Nanos::from_duration(Duration::from_millis(1500)).0, 1_500_000_000);
        assert!((Nanos(2_500_000_000).as_secs_f64() - 2.5).abs() < 1e-12);
    }
}
