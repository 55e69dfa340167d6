//! A series analysed: its change points (confirmed and pending), segments, spreads, the
//! cumulative change since an anchor run, and what was left out — the model every view of
//! history renders.

use super::series::{RunValues, Series};
use racehorse_core::Direction;
use racehorse_stats::changepoint::{anchor_change, detect, AnchorChange, ChangePoint, Detection, Options};

/// Settings of an analysis.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HistoryOptions {
    pub detect: Options,
    /// The anchor run's id (`--anchor RUN`), for the cumulative change since it.
    pub anchor_run: Option<i64>,
}

/// A change point of a series, in the series' own run positions.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesChange {
    /// Position (in `Series::runs`) of the last run before and the first run after.
    pub before: usize,
    pub after: usize,
    pub change: ChangePoint,
    /// Better or worse for this figure.
    pub better: bool,
}

/// An analysed series.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub series: Series,
    /// Positions (in `series.runs`) of the runs the detector saw (those with a usable value).
    pub used: Vec<usize>,
    pub detection: Detection,
    pub changes: Vec<SeriesChange>,
    pub anchor: Option<(usize, AnchorChange)>,
    /// Repetitions left out: noisy, below resolution, failed.
    pub left_out: (usize, usize, usize),
    /// The detector's settings, seed included.
    pub options: Options,
}

impl Analysis {
    /// Confirmed change points (not pending).
    pub fn confirmed(&self) -> impl Iterator<Item = &SeriesChange> {
        self.changes.iter().filter(|c| !c.change.pending)
    }

    /// The segment (index into `detection.segments`) of a run position, if the run was used.
    pub fn segment_of(&self, position: usize) -> Option<usize> {
        let i = self.used.iter().position(|&p| p == position)?;
        self.detection.segments.iter().position(|s| s.start <= i && i < s.end)
    }
}

/// A stable number from a series key, so that every series draws its own random orders and
/// the same store always gives the same answer.
pub fn key_seed(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Analyses one series; None when fewer than two runs have a usable value.
pub fn analyse(series: Series, opts: &HistoryOptions) -> Option<Analysis> {
    let used: Vec<usize> = (0..series.runs.len()).filter(|&i| !series.runs[i].values.is_empty()).collect();
    if used.len() < 2 {
        return None;
    }
    let values: Vec<Vec<f64>> = used.iter().map(|&i| series.runs[i].values.clone()).collect();
    let detect_opts = Options { seed: opts.detect.seed ^ key_seed(&series.key.text()), ..opts.detect };
    let detection = detect(&values, &detect_opts).ok()?;
    let changes = detection
        .change_points
        .iter()
        .map(|c| SeriesChange {
            before: used[c.index - 1],
            after: used[c.index],
            change: *c,
            better: (c.ratio > 1.0) == (series.direction == Direction::HigherIsBetter),
        })
        .collect();
    let anchor = opts.anchor_run.and_then(|id| {
        let at = used.iter().position(|&p| series.runs[p].run.id == id)?;
        let change = anchor_change(&values, at, &detect_opts)?;
        Some((used[at], change))
    });
    let left_out = series
        .runs
        .iter()
        .fold((0, 0, 0), |(n, b, f), r: &RunValues| (n + r.noisy, b + r.below_resolution, f + r.failed));
    Some(Analysis { series, used, detection, changes, anchor, left_out, options: detect_opts })
}
