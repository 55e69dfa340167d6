//! Which differences a comparison may call real: the Benjamini–Hochberg correction over every
//! test (matched point × metric) of one new side, so that many points do not produce `*` by
//! chance, and the counts the summary states (significant, noisy, below resolution).

use crate::compare::metric::MetricCompare;
use crate::compare::table::WorkloadTable;
use racehorse_stats::benjamini_hochberg;
use serde::Serialize;

/// Benjamini–Hochberg over one family of tests: each tested comparison gets its q-value and
/// is significant when that is at most `alpha`; the others are not judged (None). The four
/// metrics of a side are one family, its latency and engine figures another (items.rs).
pub fn correct_family(mut family: Vec<&mut MetricCompare>, alpha: f64) {
    let p: Vec<f64> = family.iter().filter(|m| m.tested()).map(|m| m.p_value.unwrap_or(1.0)).collect();
    let mut q = benjamini_hochberg(&p).into_iter();
    for m in family.iter_mut() {
        if m.tested() {
            m.q_value = q.next();
            m.significant = m.q_value.map(|q| q <= alpha);
        } else {
            m.q_value = None;
            m.significant = None;
        }
    }
}

/// Replaces each metric's single-test significance with the corrected one, per new side:
/// the tested metrics (an interval, not noisy, not below resolution) of every point get a
/// Benjamini–Hochberg q-value and are significant when it is at most `alpha` (1 − level);
/// every other metric is not judged (None).
pub fn correct(tables: &mut [WorkloadTable], sides: usize, alpha: f64) {
    for side in 0..sides {
        let metrics: Vec<&mut MetricCompare> = tables
            .iter_mut()
            .flat_map(|t| t.rows.iter_mut())
            .filter_map(|r| r.sides.get_mut(side)?.as_mut())
            .flat_map(|c| c.metrics.iter_mut())
            .collect();
        correct_family(metrics, alpha);
    }
}

/// What one new side's points amount to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SideVerdicts {
    pub side: usize,
    /// Matched points.
    pub points: usize,
    /// Points with at least one metric significant after the correction.
    pub significant: usize,
    /// Points with a repetition, on either side, that ran while other processes used the CPU.
    pub noisy: usize,
    /// Points with some figure below its resolution.
    pub below_resolution: usize,
    /// Points with an outlier repetition on either side.
    pub with_outliers: usize,
    /// Tests the correction was made over (points × metrics with an interval, not noisy).
    pub tests: usize,
}

impl SideVerdicts {
    /// `3 of 24 points significant, 2 noisy, 1 below resolution, 1 with an outlier repetition`.
    pub fn text(&self) -> String {
        let mut parts = vec![format!("{} of {} points significant", self.significant, self.points)];
        if self.noisy > 0 {
            parts.push(format!("{} noisy", self.noisy));
        }
        if self.below_resolution > 0 {
            parts.push(format!("{} below resolution", self.below_resolution));
        }
        if self.with_outliers > 0 {
            let s = if self.with_outliers == 1 { "" } else { "s" };
            parts.push(format!("{} with an outlier repetition{s}", self.with_outliers));
        }
        parts.join(", ")
    }
}

/// Per new side, the counts over every matched point.
pub fn count_verdicts(tables: &[WorkloadTable], sides: usize) -> Vec<SideVerdicts> {
    (0..sides)
        .map(|side| {
            let mut v = SideVerdicts {
                side,
                points: 0,
                significant: 0,
                noisy: 0,
                below_resolution: 0,
                with_outliers: 0,
                tests: 0,
            };
            for row in tables.iter().flat_map(|t| t.rows.iter()) {
                let Some(cell) = row.sides.get(side).and_then(Option::as_ref) else { continue };
                v.points += 1;
                v.significant += usize::from(cell.metrics.iter().any(|m| m.significant == Some(true)));
                v.noisy += usize::from(!row.base_noisy_reps.is_empty() || !cell.noisy_reps.is_empty());
                v.below_resolution += usize::from(cell.metrics.iter().any(|m| m.below_resolution));
                let outliers = !row.base_outlier_reps.is_empty() || !cell.outlier_reps.is_empty();
                v.with_outliers += usize::from(outliers);
                v.tests += cell.metrics.iter().filter(|m| m.tested()).count();
            }
            v
        })
        .collect()
}

/// Benjamini–Hochberg over the tested items of each new side (the items' own family).
pub fn correct_items(tables: &mut [WorkloadTable], sides: usize, alpha: f64) {
    for side in 0..sides {
        let items: Vec<&mut MetricCompare> = tables
            .iter_mut()
            .flat_map(|t| t.rows.iter_mut())
            .filter_map(|r| r.sides.get_mut(side)?.as_mut())
            .flat_map(|c| c.items.iter_mut().map(|i| &mut i.cmp))
            .collect();
        correct_family(items, alpha);
    }
}
