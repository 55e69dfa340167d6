//! Which differences a comparison may call real: the Benjamini–Hochberg correction over every
//! test (matched point × metric) of one new side, so that many points do not produce `*` by
//! chance, and the counts the summary states (significant, noisy, below resolution).

use crate::compare::comparison::{Comparison, MetricCompare, WorkloadTable};
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

/// A significant change for the worse by at least the gate's percentage
/// (`compare --fail-on-regression PCT`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Regression {
    /// Name of the new side.
    pub side: String,
    /// `fileserver clients=4` (with the variant when matched by variant).
    pub point: String,
    pub metric: crate::model::Metric,
    /// The change in %, + is better (so negative here).
    pub gain_pct: f64,
}

impl Regression {
    /// `run 2 'b': fileserver clients=4 Throughput -12.0%`.
    pub fn text(&self) -> String {
        format!("{}: {} {} {:+.1}%", self.side, self.point, self.metric.header(), self.gain_pct)
    }
}

/// Every metric of every matched point that got worse by `min_pct` percent or more and is
/// significant after the correction. A point that is noisy (`?`) or below resolution is
/// never significant, so it never counts; a scattered one (`~`) counts when it still is.
pub fn regressions(c: &Comparison, min_pct: f64) -> Vec<Regression> {
    let mut out = Vec::new();
    for t in &c.tables {
        for row in &t.rows {
            for (i, cell) in row.sides.iter().enumerate() {
                let Some(cell) = cell else { continue };
                for m in &cell.metrics {
                    let counts = m.significant == Some(true) && !m.noisy_window && !m.below_resolution;
                    let Some(gain) = m.gain_pct.filter(|g| counts && *g <= -min_pct) else { continue };
                    out.push(Regression {
                        side: c.news.get(i).map(|s| s.name.clone()).unwrap_or_default(),
                        point: format!("{} {}", t.title(), row.label).trim_end().to_string(),
                        metric: m.metric,
                        gain_pct: gain,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::comparison::{compare, CompareOptions};
    use crate::synth::{synthetic_side, Shape};

    fn against(speed: f64, cpu_cost: f64) -> Comparison {
        let base = synthetic_side(1, "base", &Shape::default());
        let new = synthetic_side(2, "new", &Shape { speed, cpu_cost, seed: 5, ..Shape::default() });
        compare(&base, &[new], &CompareOptions::default(), &|_: &str| "A".into()).expect("compare")
    }

    #[test]
    fn a_significant_loss_beyond_the_threshold_is_a_regression() {
        let c = against(0.8, 1.0);
        let r = regressions(&c, 5.0);
        let tput: Vec<_> = r.iter().filter(|r| r.metric == crate::model::Metric::Throughput).collect();
        assert_eq!(tput.len(), 16, "every point lost 20% throughput: {r:?}");
        assert!(
            tput[0].gain_pct < -15.0
                && tput[0].text().starts_with("run 2 'new': w0 clients=1 cpus=1 Throughput -")
        );
        assert!(regressions(&c, 30.0).is_empty(), "20% is below a 30% gate");
    }

    #[test]
    fn gains_and_unsignificant_changes_pass() {
        assert!(regressions(&against(1.25, 0.8), 1.0).is_empty(), "faster and cheaper");
        assert!(regressions(&against(1.0, 1.0), 0.0).is_empty(), "an A/A comparison gives no regression");
    }

    #[test]
    fn noisy_points_never_count() {
        let base = synthetic_side(1, "base", &Shape::default());
        let mut new = synthetic_side(2, "new", &Shape { speed: 0.5, seed: 5, ..Shape::default() });
        for c in &mut new.cells {
            c.quality.noisy = Some("another process used 90% of a CPU".into());
        }
        let c = compare(&base, &[new], &CompareOptions::default(), &|_: &str| "A".into()).expect("compare");
        assert!(regressions(&c, 5.0).is_empty(), "50% slower but noisy: not judged");
    }
}
