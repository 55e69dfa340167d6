//! Change points in a series of runs, each run a set of repetitions: where the level of a
//! figure changed, by how much (with its interval), how surprising that is (a p-value), and
//! whether the change is still pending (too few runs after it to be sure).
//!
//! The method, in `docs/history.md` at length:
//! - Each run is reduced to the mean of its repetitions (of their logarithms when every value
//!   is positive, so a change is a ratio). Repetitions vary less than runs do (a new process, a
//!   new page cache, another placement), so the run, not the repetition, is the unit of the
//!   test, and the spread between runs, not within them, decides it.
//! - Binary segmentation: the split of a segment with the largest pooled two-sample |t| is a
//!   candidate; it is kept when that largest |t| is rarer than `alpha` among random orders of
//!   the same runs (a permutation test, whose null distribution is calibrated for the series'
//!   length and spread, so a series with no change reports any change point with probability
//!   at most `alpha`, whatever its length); then both halves are searched the same way.
//! - A change with fewer than `min_segment` runs after it is pending: shown, never alerted.
//! - Everything is seeded: the same series and seed give the same answer.

mod anchor;
mod scan;
pub mod synth;
#[cfg(test)]
mod tests;

pub use anchor::{anchor_change, AnchorChange};

use crate::tdist::upper_quantile;
use racehorse_core::rng::{mix64, SplitMix64};
use scan::{max_t, permutation_p, Bounds};

/// Settings of the detector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Chance that a series without a change reports one (per series, at the first split).
    pub alpha: f64,
    /// A change with fewer runs than this after it is pending.
    pub min_segment: usize,
    /// Fewest runs on each side of a split inside the series (the series' last runs may form
    /// a shorter, pending, segment).
    pub min_size: usize,
    /// Most random orders per test (the smallest p-value is 1 / (permutations + 1)).
    pub permutations: u32,
    /// Seed of the random orders (mixed with the series' own key by the caller).
    pub seed: u64,
    /// Confidence level of the magnitudes' intervals.
    pub level: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options { alpha: 0.05, min_segment: 5, min_size: 3, permutations: 199, seed: 0, level: 0.95 }
    }
}

/// How run values are compared: as logarithms (every value positive: a change is a ratio) or
/// as they are (a change is a difference, still shown as a ratio when the means are positive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Log,
    Linear,
}

/// A stretch of runs between change points, `start..end` (indices into the runs given).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    /// The level of the segment in the figure's unit: the geometric mean of its run means on
    /// the log scale, the mean on the linear scale.
    pub level: f64,
}

/// One change point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    /// The first run after the change (the last run before it is `index - 1`).
    pub index: usize,
    /// Level after / level before.
    pub ratio: f64,
    /// The interval of `ratio` at [`Options::level`]; None with too few runs for a spread.
    pub interval: Option<(f64, f64)>,
    /// The permutation p-value of the test that found it.
    pub p_value: f64,
    /// The largest |t| of that test.
    pub t: f64,
    /// Fewer than `min_segment` runs after it: not yet confirmed.
    pub pending: bool,
    pub before: Segment,
    pub after: Segment,
}

/// What the detector found in one series.
#[derive(Debug, Clone, PartialEq)]
pub struct Detection {
    pub scale: Scale,
    /// Change points in run order.
    pub change_points: Vec<ChangePoint>,
    /// The segments they cut the series into, in order.
    pub segments: Vec<Segment>,
    /// Spread of repetitions inside a run, as a coefficient of variation (pooled; None when no
    /// run has two repetitions).
    pub within_cv: Option<f64>,
    /// Spread of run means inside segments beyond what the repetitions explain, as a
    /// coefficient of variation (None with too few runs).
    pub between_cv: Option<f64>,
}

/// Why a series cannot be analysed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DetectError {
    #[error("run {0} has no finite value")]
    EmptyRun(usize),
    #[error("alpha must lie in (0, 1)")]
    Alpha,
}

/// Finds the change points of `runs` (each the repetitions of one run, in run order).
pub fn detect(runs: &[Vec<f64>], opts: &Options) -> Result<Detection, DetectError> {
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return Err(DetectError::Alpha);
    }
    if let Some(i) = runs.iter().position(|r| !r.iter().any(|x| x.is_finite())) {
        return Err(DetectError::EmptyRun(i));
    }
    let scale = if runs.iter().flatten().filter(|x| x.is_finite()).all(|x| *x > 0.0) {
        Scale::Log
    } else {
        Scale::Linear
    };
    let scaled: Vec<Vec<f64>> = runs
        .iter()
        .map(|r| r.iter().copied().filter(|x| x.is_finite()).map(|x| to_scale(x, scale)).collect())
        .collect();
    let means: Vec<f64> = scaled.iter().map(|r| r.iter().sum::<f64>() / r.len() as f64).collect();
    let found = segment(&means, opts);
    let cuts: Vec<usize> = found.iter().map(|f| f.index).collect();
    let segments = segments_of(&means, &cuts, scale);
    let change_points = found
        .iter()
        .enumerate()
        .map(|(i, f)| describe(f, (&segments[i], &segments[i + 1]), &means, scale, opts))
        .collect();
    let (within_cv, between_cv) = spreads(&scaled, &means, &segments, scale);
    Ok(Detection { scale, change_points, segments, within_cv, between_cv })
}

fn to_scale(x: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Log => x.ln(),
        Scale::Linear => x,
    }
}

fn from_scale(x: f64, scale: Scale) -> f64 {
    match scale {
        Scale::Log => x.exp(),
        Scale::Linear => x,
    }
}

/// A split kept by the segmentation.
#[derive(Debug, Clone, Copy)]
struct Found {
    index: usize,
    p_value: f64,
    t: f64,
}

/// Binary segmentation of the run means; the splits in order.
fn segment(means: &[f64], opts: &Options) -> Vec<Found> {
    let n = means.len();
    let mut rng = SplitMix64::new(mix64(opts.seed ^ n as u64));
    let stop_after = ((opts.alpha * f64::from(opts.permutations + 1)).ceil() as u32).max(1);
    let mut found = Vec::new();
    let mut todo = vec![(0usize, n)];
    while let Some((a, b)) = todo.pop() {
        let bounds = Bounds { min_left: opts.min_size, min_right: if b == n { 1 } else { opts.min_size } };
        let centred = centre(&means[a..b]);
        let Some((k, t)) = max_t(&centred, bounds) else { continue };
        let p = permutation_p(&centred, t, bounds, (opts.permutations, stop_after), &mut rng);
        if p <= opts.alpha {
            found.push(Found { index: a + k, p_value: p, t });
            todo.push((a, a + k));
            todo.push((a + k, b));
        }
    }
    found.sort_by_key(|f| f.index);
    refine(means, found, opts, &mut rng)
}

/// Binary segmentation places a split where the largest |t| of a whole segment is; once its
/// neighbours are known, a split may sit better elsewhere between them, and a split whose two
/// neighbouring segments no longer differ is noise that rode on a larger change. Each split is
/// moved to the best place between its neighbours and tested again on them alone (the same
/// permutation test); failed splits are removed, until nothing moves.
fn refine(means: &[f64], mut found: Vec<Found>, opts: &Options, rng: &mut SplitMix64) -> Vec<Found> {
    let n = means.len();
    let stop_after = ((opts.alpha * f64::from(opts.permutations + 1)).ceil() as u32).max(1);
    for _round in 0..8 {
        let mut changed = false;
        let mut i = 0;
        while i < found.len() {
            let a = if i == 0 { 0 } else { found[i - 1].index };
            let b = found.get(i + 1).map_or(n, |f| f.index);
            let bounds =
                Bounds { min_left: opts.min_size, min_right: if b == n { 1 } else { opts.min_size } };
            let centred = centre(&means[a..b]);
            let Some((k, t)) = max_t(&centred, bounds) else {
                found.remove(i);
                changed = true;
                continue;
            };
            let p = permutation_p(&centred, t, bounds, (opts.permutations, stop_after), rng);
            if p > opts.alpha {
                found.remove(i);
                changed = true;
                continue;
            }
            changed |= a + k != found[i].index;
            found[i] = Found { index: a + k, p_value: p, t };
            i += 1;
        }
        if !changed {
            break;
        }
    }
    found
}

fn centre(v: &[f64]) -> Vec<f64> {
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    v.iter().map(|x| x - mean).collect()
}

fn segments_of(means: &[f64], cuts: &[usize], scale: Scale) -> Vec<Segment> {
    let mut edges = vec![0];
    edges.extend_from_slice(cuts);
    edges.push(means.len());
    edges
        .windows(2)
        .map(|w| {
            let part = &means[w[0]..w[1]];
            let level = from_scale(part.iter().sum::<f64>() / part.len() as f64, scale);
            Segment { start: w[0], end: w[1], level }
        })
        .collect()
}

/// The change point's magnitude and interval from its two neighbouring segments (pooled
/// two-sample t interval of the difference of their mean run means).
fn describe(
    f: &Found,
    (before, after): (&Segment, &Segment),
    means: &[f64],
    scale: Scale,
    opts: &Options,
) -> ChangePoint {
    let (l, r) = (&means[before.start..before.end], &means[after.start..after.end]);
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    let ss = |s: &[f64]| s.iter().map(|x| (x - mean(s)).powi(2)).sum::<f64>();
    let diff = mean(r) - mean(l);
    let free = l.len() + r.len() - 2;
    let interval = (free > 0).then(|| {
        let se = ((ss(l) + ss(r)) / free as f64 * (1.0 / l.len() as f64 + 1.0 / r.len() as f64)).sqrt();
        let q = upper_quantile((1.0 - opts.level) / 2.0, free as f64);
        (diff - q * se, diff + q * se)
    });
    let as_ratio = |d: f64| match scale {
        Scale::Log => d.exp(),
        Scale::Linear => (mean(l) + d) / mean(l),
    };
    ChangePoint {
        index: f.index,
        ratio: as_ratio(diff),
        interval: interval.map(|(lo, hi)| (as_ratio(lo), as_ratio(hi))),
        p_value: f.p_value,
        t: f.t,
        pending: means.len() - f.index < opts.min_segment,
        before: *before,
        after: *after,
    }
}

/// The within-run and between-run spreads as coefficients of variation.
fn spreads(
    scaled: &[Vec<f64>],
    means: &[f64],
    segments: &[Segment],
    scale: Scale,
) -> (Option<f64>, Option<f64>) {
    let (mut ss_within, mut free_within, mut inv_reps) = (0.0, 0usize, 0.0);
    for (run, m) in scaled.iter().zip(means) {
        ss_within += run.iter().map(|x| (x - m).powi(2)).sum::<f64>();
        free_within += run.len() - 1;
        inv_reps += 1.0 / run.len() as f64;
    }
    let within_var = (free_within > 0).then(|| ss_within / free_within as f64);
    let (mut ss_runs, mut free_runs) = (0.0, 0usize);
    for s in segments {
        let part = &means[s.start..s.end];
        let mean = part.iter().sum::<f64>() / part.len() as f64;
        ss_runs += part.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
        free_runs += part.len() - 1;
    }
    let between_var = (free_runs > 0).then(|| {
        let expected_from_reps = within_var.unwrap_or(0.0) * inv_reps / means.len() as f64;
        (ss_runs / free_runs as f64 - expected_from_reps).max(0.0)
    });
    let level = segments.first().map_or(1.0, |s| s.level).abs().max(f64::MIN_POSITIVE);
    let as_cv = |v: f64| match scale {
        Scale::Log => v.sqrt(),
        Scale::Linear => v.sqrt() / level,
    };
    (within_var.map(as_cv), between_var.map(as_cv))
}
