//! The CI gate of `compare --fail-on-regression PCT`: every metric of every matched point
//! that got significantly worse by at least the gate's percentage.

use crate::compare::comparison::Comparison;
use crate::model::Metric;
use serde::Serialize;

/// A significant change for the worse by at least the gate's percentage
/// (`compare --fail-on-regression PCT`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Regression {
    /// Name of the new side.
    pub side: String,
    /// `fileserver clients=4` (with the variant when matched by variant).
    pub point: String,
    pub metric: Metric,
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
    use crate::compare::comparison::compare;
    use crate::compare::metric::CompareOptions;
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
        let tput: Vec<_> = r.iter().filter(|r| r.metric == Metric::Throughput).collect();
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
