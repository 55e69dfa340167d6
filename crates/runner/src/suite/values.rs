//! The values of a suite's settings, one rule each for suite files and the command line
//! alike: durations, CPU counts, repetitions (a count, or adaptive with its maximum and its
//! target interval) and memory limits.

use crate::duration::{parse_duration, seconds};
use std::time::Duration;

/// The most repetitions of a point, counted (`reps = N`) or adaptive (`max_reps`).
pub const MAX_REPS: u32 = 1000;

/// Adaptive repetitions' first round always has this many (fewer give no interval worth the
/// name); it is also the smallest `max_reps`.
pub const MIN_REPS: u32 = 3;

/// When a point has been repeated enough (`reps = "auto"`; see `crate::adaptive`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adaptive {
    /// Relative half-width of the interval to reach, e.g. 0.02 for ±2%.
    pub target_half_width: f64,
    /// No point is repeated more often than this.
    pub max_reps: u32,
    /// Confidence level of the interval.
    pub level: f64,
}

impl Default for Adaptive {
    fn default() -> Self {
        Adaptive { target_half_width: 0.02, max_reps: 10, level: 0.95 }
    }
}

/// A repetition count: 1..=[`MAX_REPS`].
pub fn reps_ok(n: u32) -> bool {
    (1..=MAX_REPS).contains(&n)
}

/// An adaptive maximum: [`MIN_REPS`]..=[`MAX_REPS`].
pub fn max_reps_ok(n: u32) -> bool {
    (MIN_REPS..=MAX_REPS).contains(&n)
}

/// An adaptive target: a percentage strictly between 0 and 100.
pub fn target_ci_pct_ok(pct: f64) -> bool {
    pct > 0.0 && pct < 100.0
}

/// A CPU count of an axis: at least 1.
pub fn cpu_count_ok(n: u32) -> bool {
    n >= 1
}

/// `reps = N` in a suite file.
/// Leaf parser: `Suite::parse` places its message at file:line:col.
pub(crate) fn reps_value(v: &toml::Value) -> Result<u32, String> {
    match v.as_integer().and_then(|n| u32::try_from(n).ok()) {
        Some(n) if reps_ok(n) => Ok(n),
        _ => Err(format!("reps: {v} is not a repetition count (1..{MAX_REPS}) or \"auto\"")),
    }
}

fn too_long(text: &str) -> String {
    format!("{text} s is not a duration racehorse can run (at most 7 days, e.g. \"20s\")")
}

/// A duration in a suite file: seconds as a number, or text such as "20s".
/// Leaf parser: `Suite::parse` places its message at file:line:col.
pub(crate) fn duration_value(v: &toml::Value) -> Result<Duration, String> {
    match v {
        toml::Value::Integer(i) if *i >= 0 => seconds(*i as f64).ok_or_else(|| too_long(&i.to_string())),
        toml::Value::Float(f) if *f >= 0.0 => seconds(*f).ok_or_else(|| too_long(&f.to_string())),
        toml::Value::String(s) => parse_duration(s)
            .ok_or_else(|| format!("'{s}' is not a duration (e.g. 20s, 500ms, 2m; at most 7 days)")),
        other => Err(format!("{other} is not a duration (e.g. \"20s\")")),
    }
}

/// A CPU-count axis in a suite file: an integer or a list of integers, each ≥ 1.
/// Leaf parser: `Suite::parse` places its message at file:line:col.
pub(crate) fn cpus_value(v: &toml::Value) -> Result<Vec<u32>, String> {
    let items: Vec<&toml::Value> = match v {
        toml::Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    let cpus: Result<Vec<u32>, String> = items
        .iter()
        .map(|i| match i.as_integer().and_then(|n| u32::try_from(n).ok()) {
            Some(n) if cpu_count_ok(n) => Ok(n),
            _ => Err(format!("cpus: {i} is not a CPU count (an integer >= 1)")),
        })
        .collect();
    let cpus = cpus?;
    if cpus.is_empty() {
        return Err("cpus: the list is empty".into());
    }
    Ok(cpus)
}

/// The smallest memory limit accepted: below it the harness itself would not fit.
pub const MIN_MEM_LIMIT_BYTES: u64 = 16 << 20;

/// Parses a memory limit such as `512M` or `2g` (k/m/g = powers of 1024).
/// Leaf parser: `Suite::parse` places its message at file:line:col, `Suite::apply` in an
/// `OverrideError` naming `--mem-limit`.
pub fn mem_limit_value(text: &str) -> Result<u64, String> {
    let bytes = racehorse_engines::options::parse_size(text)
        .ok_or_else(|| format!("'{text}' is not a size; write e.g. \"512M\" or \"2G\""))?;
    if bytes < MIN_MEM_LIMIT_BYTES {
        return Err(format!("'{text}' is below the smallest limit, {} MiB", MIN_MEM_LIMIT_BYTES >> 20));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repetitions_run_from_one_to_a_thousand() {
        assert!(reps_ok(1) && reps_ok(MAX_REPS));
        assert!(!reps_ok(0) && !reps_ok(MAX_REPS + 1));
        assert!(max_reps_ok(MIN_REPS) && max_reps_ok(MAX_REPS));
        assert!(!max_reps_ok(MIN_REPS - 1) && !max_reps_ok(MAX_REPS + 1));
        assert_eq!(reps_value(&toml::Value::Integer(1000)), Ok(1000));
        for bad in [toml::Value::Integer(0), toml::Value::Integer(1001), toml::Value::Integer(-1), "x".into()]
        {
            assert!(reps_value(&bad).unwrap_err().contains("1..1000"), "{bad}");
        }
    }

    #[test]
    fn target_interval_is_a_percentage_strictly_inside() {
        assert!(target_ci_pct_ok(2.0) && target_ci_pct_ok(99.9));
        for bad in [0.0, 100.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(!target_ci_pct_ok(bad), "{bad}");
        }
    }

    #[test]
    fn memory_limits_have_a_floor() {
        assert_eq!(mem_limit_value("512M"), Ok(512 << 20));
        assert!(mem_limit_value("1M").unwrap_err().contains("smallest limit"));
        assert!(mem_limit_value("lots").unwrap_err().contains("not a size"));
    }

    #[test]
    fn durations_and_cpus_in_files() {
        assert_eq!(duration_value(&toml::Value::Integer(2)), Ok(Duration::from_secs(2)));
        assert_eq!(duration_value(&"500ms".into()), Ok(Duration::from_millis(500)));
        assert!(duration_value(&toml::Value::Float(1e300)).unwrap_err().contains("at most 7 days"));
        assert_eq!(cpus_value(&toml::Value::Integer(2)), Ok(vec![2]));
        assert!(cpus_value(&toml::Value::Array(vec![])).unwrap_err().contains("empty"));
        assert!(cpus_value(&toml::Value::Integer(0)).unwrap_err().contains("CPU count"));
    }
}
