//! Durations as users write them: `20s`, `500ms`, `2m`, `1h`, or a bare number of seconds.

use std::time::Duration;

/// The longest duration racehorse accepts for a window, a warmup or an interval (7 days):
/// longer ones are typing mistakes, and their sums over a plan would overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(7 * 24 * 3600);

/// A number of seconds as a duration, if it is finite, not negative and at most
/// [`MAX_DURATION`].
pub fn seconds(secs: f64) -> Option<Duration> {
    (secs.is_finite() && secs >= 0.0 && secs <= MAX_DURATION.as_secs_f64())
        .then(|| Duration::from_secs_f64(secs))
}

/// Parses `20s`, `1.5s`, `500ms`, `2m`, `1h` or `20` (seconds), up to [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().ok()?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => n,
        "ms" => n / 1e3,
        "us" => n / 1e6,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => return None,
    };
    seconds(secs)
}

/// Renders a duration compactly for plans and progress: `1h02m`, `3m05s`, `12s`, `250ms`.
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else if s >= 1 {
        format!("{s}s")
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        assert_eq!(parse_duration("20s"), Some(Duration::from_secs(20)));
        assert_eq!(parse_duration("20"), Some(Duration::from_secs(20)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("5 parsecs"), None);
    }

    /// Issue 23, case 1: `--runtime 99999999999999999h` panicked converting to a Duration.
    #[test]
    fn huge_and_odd_durations_are_refused_not_a_panic() {
        for t in ["99999999999999999h", "1e300", "169h", "inf", "NaN", "-1s", "1e400s"] {
            assert_eq!(parse_duration(t), None, "{t}");
        }
        assert_eq!(parse_duration("168h"), Some(MAX_DURATION));
        assert_eq!(seconds(1e300), None);
        assert_eq!(seconds(f64::MAX), None);
    }

    #[test]
    fn human_is_compact() {
        assert_eq!(human(Duration::from_secs(3725)), "1h02m");
        assert_eq!(human(Duration::from_secs(185)), "3m05s");
        assert_eq!(human(Duration::from_millis(250)), "250ms");
    }
}
