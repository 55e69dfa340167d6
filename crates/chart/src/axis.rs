//! Axis arithmetic: "nice" tick values (1, 2, 5 × 10^k steps), compact number formatting
//! (250, 1.5k, 2M, 0.001) and the linear data → pixel scale.

/// Values beyond this magnitude are clamped before computing ticks (keeps the arithmetic finite).
pub(crate) const VALUE_LIMIT: f64 = 1.0e300;

/// Magnitudes below this are treated as 0 (avoids sub-normal steps).
const TINY: f64 = 1.0e-200;

/// Tick values along one axis, increasing, evenly spaced by `step`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ticks {
    pub values: Vec<f64>,
    pub step: f64,
}

impl Ticks {
    /// The axis domain: first and last tick.
    pub(crate) fn domain(&self) -> (f64, f64) {
        let first = self.values.first().copied().unwrap_or(0.0);
        let last = self.values.last().copied().unwrap_or(1.0);
        (first, last)
    }

    /// Compact labels for all ticks, sharing one precision.
    pub(crate) fn labels(&self) -> Vec<String> {
        let max_abs = self.values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        self.values.iter().map(|&v| format_with_step(v, self.step, max_abs)).collect()
    }
}

/// Clamps a data value into the range the charts can handle (non-finite → 0).
pub(crate) fn clamp_value(v: f64) -> f64 {
    if !v.is_finite() || v.abs() < TINY {
        0.0
    } else {
        v.clamp(-VALUE_LIMIT, VALUE_LIMIT)
    }
}

/// Nice ticks covering `[lo, hi]` with roughly `target` values (usually 3 to target + 2).
/// A degenerate range (lo == hi) is padded around the value.
pub(crate) fn nice_ticks(lo: f64, hi: f64, target: usize) -> Ticks {
    let (a, b) = (clamp_value(lo), clamp_value(hi));
    let (mut lo, mut hi) = if a <= b { (a, b) } else { (b, a) };
    let magnitude = lo.abs().max(hi.abs());
    if hi - lo <= magnitude * 1e-9 {
        let pad = if magnitude == 0.0 { 1.0 } else { magnitude * 0.1 };
        lo -= pad;
        hi += pad;
    }
    let target = target.clamp(3, 10);
    let (step, first, last) = best_step(lo, hi, target);
    let count = ((last - first).max(0.0) as usize).min(4 * target) + 1;
    let mut values: Vec<f64> = (0..count).map(|i| snap((first + i as f64) * step, step)).collect();
    // Floating-point rounding can leave an end a hair inside the data; extend by one step.
    if values.first().is_some_and(|&v| v > lo) {
        values.insert(0, snap((first - 1.0) * step, step));
    }
    if values.last().is_some_and(|&v| v < hi) {
        values.push(snap((first + count as f64) * step, step));
    }
    Ticks { values, step }
}

/// Step and first/last tick (in steps) for `[lo, hi]`: among the nice steps giving 3 to
/// `target + 2` ticks, the one whose ticks waste the least room around the data, with a slight
/// preference for about `target` ticks.
fn best_step(lo: f64, hi: f64, target: usize) -> (f64, f64, f64) {
    let span = hi - lo;
    let extent = |step: f64| ((lo / step).floor(), (hi / step).ceil());
    let mut best: Option<(f64, f64, f64, f64)> = None;
    for intervals in 2..=target + 2 {
        let step = nice_step(span / intervals as f64);
        let (first, last) = extent(step);
        let count = last - first + 1.0;
        if !(3.0..=(target + 2) as f64).contains(&count) {
            continue;
        }
        let coverage = span / ((last - first) * step);
        let score = coverage - 0.02 * (count - target as f64).abs();
        let better = match best {
            Some((best_score, ..)) => score > best_score,
            None => true,
        };
        if better {
            best = Some((score, step, first, last));
        }
    }
    match best {
        Some((_, step, first, last)) => (step, first, last),
        None => {
            let step = nice_step(span / (target - 1) as f64);
            let (first, last) = extent(step);
            (step, first, last)
        }
    }
}

/// The smallest of 1, 2, 5, 10 × 10^k that is at least `rough`.
fn nice_step(rough: f64) -> f64 {
    let exponent = rough.log10().floor();
    let base = 10f64.powf(exponent);
    let fraction = rough / base;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * base
}

/// Rounds float noise near zero to exactly zero.
fn snap(v: f64, step: f64) -> f64 {
    if v.abs() < step * 1e-6 {
        0.0
    } else {
        v
    }
}

/// Number of decimals needed to write `step` exactly (0..=12).
fn decimals_of(step: f64) -> usize {
    let step = step.abs();
    (0..=12)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() <= scaled * 1e-6
        })
        .unwrap_or(12)
}

/// Suffixes for compact large numbers.
const SUFFIXES: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];

/// Formats `v`, a multiple of `step`, compactly; `max_abs` (largest magnitude in the set)
/// decides between fixed and exponent notation so that a set of ticks is written alike.
fn format_with_step(v: f64, step: f64, max_abs: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    if !(1e-3..1e15).contains(&max_abs) || decimals_of(step) > 6 {
        return format_exponent(v);
    }
    // Largest suffix not exceeding |v| that still needs at most 2 decimals for this step.
    let (divisor, suffix) =
        SUFFIXES.iter().copied().find(|&(div, _)| v.abs() >= div && step * 100.0 >= div).unwrap_or((1.0, ""));
    let decimals = decimals_of(step / divisor);
    let mut text = format!("{:.*}", decimals, v / divisor);
    if text.contains('.') {
        let trimmed = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(trimmed);
    }
    if text == "-0" {
        text = "0".to_string();
    }
    text.push_str(suffix);
    text
}

/// Exponent notation with up to 3 significant digits: 1.5e-7, 2e15.
fn format_exponent(v: f64) -> String {
    let text = format!("{v:.2e}");
    match text.split_once('e') {
        Some((mantissa, exponent)) => {
            let mantissa = if mantissa.contains('.') {
                mantissa.trim_end_matches('0').trim_end_matches('.')
            } else {
                mantissa
            };
            format!("{mantissa}e{exponent}")
        }
        None => text,
    }
}

/// Formats a single value compactly with about 3 significant digits: 0.0123, 12.3, 1.23k, 45M.
pub(crate) fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let magnitude = v.abs().log10().floor();
    let step = 10f64.powf(magnitude - 2.0).max(1e-300);
    let rounded = (v / step).round() * step;
    format_with_step(rounded, step, rounded.abs())
}

/// A signed percentage with one decimal: "+12.5%", "-3.0%", "0.0%".
pub(crate) fn format_percent(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let rounded = (v * 10.0).round() / 10.0;
    if rounded == 0.0 {
        "0.0%".to_string()
    } else if rounded.abs() >= 1e4 {
        let sign = if rounded > 0.0 { '+' } else { '-' };
        format!("{sign}{}%", format_value(rounded.abs()))
    } else {
        format!("{rounded:+.1}%")
    }
}

/// Ticks of a log2 axis over data in `[lo, hi]` (both > 0), in exponents: every power of
/// two from the one at or below `lo` to the one at or above `hi` (every second, fourth …
/// power when there would be more than 10), with labels 1, 2, 4, 8 … (0.5, 0.25 below 1).
/// Returns the domain in exponents and the (exponent, label) ticks.
pub(crate) fn log2_ticks(lo: f64, hi: f64) -> ((f64, f64), Vec<(f64, String)>) {
    let (a, b) = (lo.min(hi).max(f64::MIN_POSITIVE).log2(), hi.max(lo).max(f64::MIN_POSITIVE).log2());
    let first = a.floor().clamp(-60.0, 60.0) as i32;
    let mut last = b.ceil().clamp(-60.0, 60.0) as i32;
    if last == first {
        last += 1;
    }
    let every = ((last - first) as usize).div_ceil(10).max(1);
    let ticks = (first..=last)
        .filter(|k| ((k - first) as usize).is_multiple_of(every))
        .map(|k| (f64::from(k), power_label(k)))
        .collect::<Vec<_>>();
    let end = ticks.last().map_or(f64::from(last), |t| t.0).max(f64::from(last));
    ((f64::from(first), end), ticks)
}

/// `2^k` written out: 1, 2, 1024, 0.5; compact above a million.
fn power_label(k: i32) -> String {
    let v = 2f64.powi(k);
    if (0..20).contains(&k) {
        format!("{}", v as u64)
    } else if (-6..0).contains(&k) {
        let text = format!("{v:.6}");
        text.trim_end_matches('0').to_string()
    } else {
        format_value(v)
    }
}

/// Linear map from a data domain onto a pixel range.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scale {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
}

impl Scale {
    pub(crate) fn new(domain: (f64, f64), range_px: (f64, f64)) -> Scale {
        Scale { d0: domain.0, d1: domain.1, r0: range_px.0, r1: range_px.1 }
    }

    /// Pixel position of a data value (the range start for a degenerate domain).
    pub(crate) fn map(&self, v: f64) -> f64 {
        let span = self.d1 - self.d0;
        if span == 0.0 || !span.is_finite() {
            return self.r0;
        }
        self.r0 + (clamp_value(v) - self.d0) / span * (self.r1 - self.r0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn labels(lo: f64, hi: f64) -> Vec<String> {
        nice_ticks(lo, hi, 6).labels()
    }

    #[test]
    fn known_ticks() {
        assert_eq!(nice_ticks(0.0, 10.0, 6).values, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(nice_ticks(0.0, 1000.0, 6).values, vec![0.0, 200.0, 400.0, 600.0, 800.0, 1000.0]);
        assert_eq!(nice_ticks(1.0, 32.0, 6).values, vec![0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0]);
        // Prefers the step that wastes less room: -30..30, not -40..40.
        assert_eq!(nice_ticks(-21.0, 27.7, 6).step, 10.0);
        assert_eq!(nice_ticks(-3.0, 7.0, 6).values, vec![-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(nice_ticks(0.0, 0.9, 6).step, 0.2);
        assert_eq!(labels(0.0, 0.9), ["0", "0.2", "0.4", "0.6", "0.8", "1"]);
        assert_eq!(labels(0.0, 2400.0), ["0", "500", "1k", "1.5k", "2k", "2.5k"]);
        assert_eq!(labels(0.0, 9e6), ["0", "2M", "4M", "6M", "8M", "10M"]);
        assert_eq!(labels(0.0, 0.004), ["0", "0.001", "0.002", "0.003", "0.004"]);
        // A small step near a suffix boundary keeps plain digits so ticks stay distinct.
        assert_eq!(labels(999.4, 1000.6)[3..6], ["999.8", "1000", "1000.2"]);
        assert_eq!(labels(1.5e6, 1.5e6 + 3.0)[..3], ["1500000", "1500000.5", "1500001"]);
    }

    #[test]
    fn degenerate_ranges_are_padded() {
        let t = nice_ticks(5.0, 5.0, 6);
        assert!(t.values.len() >= 3);
        assert!(t.values[0] < 5.0 && *t.values.last().unwrap() > 5.0);
        let zero = nice_ticks(0.0, 0.0, 6);
        assert_eq!(zero.domain(), (-1.0, 1.0));
        let swapped = nice_ticks(10.0, 0.0, 6);
        assert_eq!(swapped.domain(), (0.0, 10.0));
    }

    #[test]
    fn number_formatting() {
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(250.0), "250");
        assert_eq!(format_value(1500.0), "1.5k");
        assert_eq!(format_value(2_000_000.0), "2M");
        assert_eq!(format_value(1234.0), "1.23k");
        assert_eq!(format_value(12.345), "12.3");
        assert_eq!(format_value(0.001), "0.001");
        assert_eq!(format_value(0.012345), "0.0123");
        assert_eq!(format_value(-45_600_000.0), "-45.6M");
        assert_eq!(format_value(3.2e12), "3.2T");
        assert_eq!(format_value(1.5e-7), "1.5e-7");
        assert_eq!(format_value(2e20), "2e20");
        assert_eq!(format_value(f64::NAN), "n/a");
    }

    #[test]
    fn percent_formatting() {
        assert_eq!(format_percent(12.5), "+12.5%");
        assert_eq!(format_percent(-3.0), "-3.0%");
        assert_eq!(format_percent(-0.01), "0.0%");
        assert_eq!(format_percent(0.0), "0.0%");
        assert_eq!(format_percent(123_456.0), "+123k%");
        assert_eq!(format_percent(f64::INFINITY), "n/a");
    }

    #[test]
    fn scale_maps_linearly() {
        let s = Scale::new((0.0, 10.0), (100.0, 0.0));
        assert_eq!(s.map(0.0), 100.0);
        assert_eq!(s.map(10.0), 0.0);
        assert_eq!(s.map(2.5), 75.0);
        assert_eq!(Scale::new((1.0, 1.0), (3.0, 9.0)).map(5.0), 3.0);
    }

    #[test]
    fn log2_ticks_are_powers_of_two() {
        let (domain, ticks) = log2_ticks(1.0, 16.0);
        assert_eq!(domain, (0.0, 4.0));
        let labels: Vec<&str> = ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "2", "4", "8", "16"]);
        let (_, ticks) = log2_ticks(3.0, 3.0);
        assert_eq!(ticks.iter().map(|t| t.1.as_str()).collect::<Vec<_>>(), ["2", "4"]);
        let (_, ticks) = log2_ticks(0.5, 1.0);
        assert_eq!(ticks[0].1, "0.5");
        let (_, many) = log2_ticks(1.0, 1e9);
        assert!(many.len() <= 11 && many.iter().all(|t| t.0.fract() == 0.0), "{many:?}");
        assert_eq!(many[1].1, "8", "every third power when there are 30");
    }

    /// A finite value spread over many magnitudes.
    fn wide_value() -> impl Strategy<Value = f64> {
        (-1.0f64..1.0, -30i32..30).prop_map(|(m, e)| m * 10f64.powi(e))
    }

    proptest! {
        #[test]
        fn ticks_cover_increase_and_are_few(a in wide_value(), b in wide_value()) {
            let (lo, hi) = (a.min(b), a.max(b));
            let ticks = nice_ticks(lo, hi, 6);
            let v = &ticks.values;
            prop_assert!(v.len() >= 2 && v.len() <= 12, "{} ticks for {lo}..{hi}", v.len());
            prop_assert!(v[0] <= clamp_value(lo), "{v:?} vs {lo}");
            prop_assert!(v[v.len() - 1] >= clamp_value(hi), "{v:?} vs {hi}");
            prop_assert!(v.windows(2).all(|w| w[0] < w[1]), "{v:?}");
            prop_assert!(ticks.labels().iter().all(|l| !l.is_empty()));
        }

        #[test]
        fn ticks_never_break_on_extremes(a in any::<f64>(), b in any::<f64>()) {
            let ticks = nice_ticks(a, b, 6);
            prop_assert!(ticks.values.len() >= 2 && ticks.values.len() <= 12);
            prop_assert!(ticks.values.iter().all(|v| v.is_finite()));
        }
    }
}
