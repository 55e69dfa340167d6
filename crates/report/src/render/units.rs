//! How quantities are shown: throughput and CPU-per-unit scales per work unit, compact
//! numbers, percentages and UTC dates. Machine formats keep base units; only views scale.

use racehorse_core::WorkUnit;

/// Display scales for one work unit: throughput (units/s × scale) and CPU per unit
/// (CPU seconds per unit × scale).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitView {
    pub tput_label: &'static str,
    pub tput_scale: f64,
    pub cpu_label: &'static str,
    pub cpu_scale: f64,
}

pub fn unit_view(u: WorkUnit) -> UnitView {
    match u {
        // MB = 10^6 bytes as dbench and fio count; CPU in milliseconds per MB.
        WorkUnit::Bytes => {
            UnitView { tput_label: "MB/s", tput_scale: 1e-6, cpu_label: "ms/MB", cpu_scale: 1e9 }
        }
        WorkUnit::Ops => {
            UnitView { tput_label: "ops/s", tput_scale: 1.0, cpu_label: "µs/op", cpu_scale: 1e6 }
        }
        WorkUnit::Transactions => {
            UnitView { tput_label: "tx/s", tput_scale: 1.0, cpu_label: "µs/tx", cpu_scale: 1e6 }
        }
        WorkUnit::Jobs => {
            UnitView { tput_label: "jobs/min", tput_scale: 60.0, cpu_label: "ms/job", cpu_scale: 1e3 }
        }
        WorkUnit::Iterations => {
            UnitView { tput_label: "it/s", tput_scale: 1.0, cpu_label: "µs/it", cpu_scale: 1e6 }
        }
    }
}

/// A number with about four significant digits.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "n/a".into()
    } else if a == 0.0 {
        "0".into()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// A ratio with three significant digits, as the seeds print them (0.963, 1.12, 11.2).
pub fn ratio(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "n/a".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A signed percentage: `+12.5%`, `-3.0%`.
pub fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.1}%")
    } else {
        "n/a".into()
    }
}

/// Unix seconds to `YYYY-MM-DD HH:MM` (UTC, proleptic Gregorian).
pub fn date(unix_s: i64) -> String {
    let days = unix_s.div_euclid(86_400);
    let secs = unix_s.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}", secs / 3600, (secs % 3600) / 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_compact() {
        assert_eq!(num(1234.5), "1234");
        assert_eq!(num(12.345), "12.35");
        assert_eq!(num(0.5), "0.500");
        assert_eq!(num(0.000123), "1.23e-4");
        assert_eq!(num(f64::NAN), "n/a");
    }

    #[test]
    fn ratios_read_like_the_seeds() {
        assert_eq!(ratio(0.9634), "0.963");
        assert_eq!(ratio(1.1234), "1.12");
        assert_eq!(ratio(11.23), "11.2");
        assert_eq!(pct(12.54), "+12.5%");
        assert_eq!(pct(-3.0), "-3.0%");
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(date(0), "1970-01-01 00:00");
        assert_eq!(date(1_795_000_000), "2026-11-18 11:06");
    }
}
