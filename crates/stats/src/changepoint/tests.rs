//! Tests of the change-point detector on seeded synthetic series.

use super::synth::{generate, Plant, Spec};
use super::*;
use proptest::prelude::*;

fn opts() -> Options {
    Options::default()
}

#[test]
fn a_null_series_rarely_reports_a_change() {
    // 400 series of 20-200 runs: the share with any change point stays near alpha (5%); the
    // bound is alpha plus three binomial standard deviations.
    let mut any = 0;
    let total = 400;
    for s in 0..total {
        let runs = 20 + (s * 37) % 181;
        let runs = generate(&Spec::null(runs, 3, 0.01, 0.015), 1000 + s as u64);
        let d = detect(&runs, &Options { seed: s as u64, ..opts() }).unwrap();
        any += usize::from(!d.change_points.is_empty());
    }
    let share = any as f64 / total as f64;
    let bound = 0.05 + 3.0 * (0.05f64 * 0.95 / total as f64).sqrt();
    assert!(share <= bound, "{any} of {total} null series had a change point");
}

#[test]
fn a_six_percent_step_is_found_at_its_run() {
    for seed in 0..20 {
        let spec = Spec::null(40, 3, 0.01, 0.015).with(Plant::Step { at: 23, ratio: 0.94 });
        let d = detect(&generate(&spec, seed), &opts()).unwrap();
        assert_eq!(d.change_points.len(), 1, "seed {seed}: {:?}", d.change_points);
        let cp = d.change_points[0];
        assert!(cp.index.abs_diff(23) <= 1, "seed {seed}: at {}", cp.index);
        assert!((cp.ratio - 0.94).abs() < 0.02, "{}", cp.ratio);
        let (lo, hi) = cp.interval.unwrap();
        assert!(lo < cp.ratio && cp.ratio < hi && hi < 1.0, "{lo} {hi}");
        assert!(!cp.pending && cp.p_value <= 0.05);
    }
}

#[test]
fn two_steps_are_both_found() {
    let spec = Spec::null(60, 3, 0.01, 0.01)
        .with(Plant::Step { at: 20, ratio: 1.08 })
        .with(Plant::Step { at: 40, ratio: 0.9 });
    let d = detect(&generate(&spec, 3), &opts()).unwrap();
    let at: Vec<usize> = d.change_points.iter().map(|c| c.index).collect();
    assert_eq!(at.len(), 2, "{at:?}");
    assert!(at[0].abs_diff(20) <= 1 && at[1].abs_diff(40) <= 1, "{at:?}");
    assert_eq!(d.segments.len(), 3);
    assert_eq!((d.segments[0].start, d.segments[2].end), (0, 60));
}

#[test]
fn a_change_in_the_last_runs_is_pending() {
    let spec = Spec::null(30, 3, 0.01, 0.01).with(Plant::Step { at: 27, ratio: 0.85 });
    let d = detect(&generate(&spec, 5), &opts()).unwrap();
    assert_eq!(d.change_points.len(), 1, "{:?}", d.change_points);
    assert!(d.change_points[0].pending);
    assert_eq!(d.change_points[0].index, 27);
}

#[test]
fn the_same_series_and_seed_give_the_same_answer() {
    let spec = Spec::null(80, 4, 0.02, 0.03).with(Plant::Step { at: 50, ratio: 1.05 });
    let runs = generate(&spec, 11);
    assert_eq!(detect(&runs, &opts()).unwrap(), detect(&runs, &opts()).unwrap());
}

#[test]
fn spreads_are_told_apart() {
    let runs = generate(&Spec::null(200, 5, 0.01, 0.03), 9);
    let d = detect(&runs, &opts()).unwrap();
    let (w, b) = (d.within_cv.unwrap(), d.between_cv.unwrap());
    assert!((w - 0.01).abs() < 0.002, "within {w}");
    assert!((b - 0.03).abs() < 0.006, "between {b}");
}

#[test]
fn values_that_are_not_all_positive_use_the_linear_scale() {
    let runs: Vec<Vec<f64>> =
        (0..30).map(|i| vec![if i < 15 { -1.0 } else { 1.0 } + 0.01 * (i % 3) as f64]).collect();
    let d = detect(&runs, &opts()).unwrap();
    assert_eq!(d.scale, Scale::Linear);
    assert_eq!(d.change_points.len(), 1);
    assert_eq!(d.change_points[0].index, 15);
}

#[test]
fn bad_input_is_refused() {
    assert_eq!(detect(&[vec![1.0], vec![f64::NAN]], &opts()), Err(DetectError::EmptyRun(1)));
    assert_eq!(detect(&[vec![1.0]], &Options { alpha: 0.0, ..opts() }), Err(DetectError::Alpha));
    let one = detect(&[vec![1.0, 1.1]], &opts()).unwrap();
    assert!(one.change_points.is_empty() && one.segments.len() == 1);
}

#[test]
fn drift_without_a_step_shows_against_an_anchor() {
    let spec = Spec::null(60, 3, 0.01, 0.01).with(Plant::Drift { total_ratio: 0.92 });
    let runs = generate(&spec, 21);
    let a = anchor_change(&runs, 0, &opts()).unwrap();
    assert_eq!(a.latest, (55, 60));
    let (lo, hi) = a.interval.unwrap();
    assert!(hi < 1.0 && lo < a.ratio, "{a:?}");
    assert!((a.ratio - 0.92).abs() < 0.03, "{a:?}");
    assert!(a.p_value.unwrap() < 0.01);
    assert!(anchor_change(&runs, 59, &opts()).is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn segments_tile_the_series(values in proptest::collection::vec(proptest::collection::vec(0.5f64..2.0, 1..4), 1..60)) {
        let d = detect(&values, &Options { permutations: 39, ..opts() }).unwrap();
        prop_assert_eq!(d.segments.first().map(|s| s.start), Some(0));
        prop_assert_eq!(d.segments.last().map(|s| s.end), Some(values.len()));
        for w in d.segments.windows(2) {
            prop_assert_eq!(w[0].end, w[1].start);
        }
        prop_assert_eq!(d.segments.len(), d.change_points.len() + 1);
        for c in &d.change_points {
            prop_assert!(c.p_value > 0.0 && c.p_value <= 0.05);
            prop_assert!(c.index > 0 && c.index < values.len());
            prop_assert!(c.ratio.is_finite() && c.ratio > 0.0);
        }
    }
}
