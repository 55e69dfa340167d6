//! Tests of the comparison model and its renderers on synthetic runs.

use crate::compare::cell::View;
use crate::compare::comparison::{compare, CompareError};
use crate::compare::formats;
use crate::compare::metric::CompareOptions;
use crate::model::{Metric, Verdict};
use crate::synth::{synthetic_side, Shape};
use crate::{compare_html, compare_markdown, compare_text, run_html, run_report, run_text};
use racehorse_core::CellStatus;
use racehorse_stats::CiMethod;

fn area(_: &str) -> String {
    "File server".into()
}

fn faster() -> Shape {
    Shape { speed: 1.2, cpu_cost: 0.8, seed: 7, ..Shape::default() }
}

#[test]
fn faster_and_cheaper_is_better_and_significant() {
    let base = synthetic_side(1, "old", &Shape::default());
    let new = synthetic_side(2, "new", &faster());
    let c = compare(&base, &[new], &CompareOptions::default(), &area).expect("compare");
    assert_eq!(c.tables.len(), 2);
    assert_eq!(c.tables[0].columns, ["clients", "cpus"]);
    assert_eq!(c.tables[0].rows.len(), 8);
    for row in &c.tables[0].rows {
        let cell = row.sides[0].as_ref().expect("matched");
        let t = cell.metric(Metric::Throughput).expect("tput");
        assert!((t.ratio.expect("ratio") - 1.2).abs() < 0.05, "{t:?}");
        assert_eq!((t.significant, t.verdict), (Some(true), Some(Verdict::Better)));
        let cpu = cell.metric(Metric::CpuTotalPerUnit).expect("cpu");
        assert!((cpu.gain_pct.expect("gain") - 20.0).abs() < 4.0, "{cpu:?}");
        assert_eq!(cpu.verdict, Some(Verdict::Better));
        assert!(t.ci.expect("ci").lo > 1.0);
    }
}

#[test]
fn summary_ranges_skip_ramp_up_and_give_geomeans() {
    let base = synthetic_side(1, "old", &Shape::default());
    let new = synthetic_side(2, "new", &faster());
    let c = compare(&base, &[new], &CompareOptions::default(), &area).expect("compare");
    let s = &c.summary[0];
    assert_eq!(s.ramp_up_excluded.as_deref(), Some("clients=1"));
    assert_eq!(s.points, 6);
    assert_eq!((s.throughput_significant, s.cpu_significant), ((6, 0), (6, 0)));
    let (lo, hi) = s.throughput_range_pct.expect("range");
    assert!(lo > 15.0 && hi < 25.0 && lo <= hi, "{lo} {hi}");
    assert!((s.throughput_geomean_pct.expect("geo") - 20.0).abs() < 2.0);
    let (slo, shi) = s.cpu_savings_range_pct.expect("savings");
    assert!(slo > 15.0 && shi < 25.0 && slo <= shi, "{slo} {shi}");
    assert_eq!(c.overall[0].points, 16);
    assert_eq!(c.areas.len(), 1);
    assert_eq!((c.areas[0].workloads, c.areas[0].points), (2, 16));
    assert!((c.areas[0].throughput_geomean_pct.expect("geo") - 20.0).abs() < 2.0);
}

#[test]
fn identical_runs_are_not_significant() {
    let base = synthetic_side(1, "a", &Shape::default());
    let same = synthetic_side(2, "b", &Shape::default());
    let c = compare(&base, &[same], &CompareOptions::default(), &area).expect("compare");
    for row in &c.tables[0].rows {
        let t = row.sides[0].as_ref().and_then(|s| s.metric(Metric::Throughput)).expect("t");
        assert_eq!(t.ratio, Some(1.0));
        assert_eq!(t.significant, Some(false));
        assert_eq!(t.verdict, Some(Verdict::Same));
    }
}

#[test]
fn fewer_than_three_reps_say_na_never_guess() {
    let two = Shape { reps: 2, ..Shape::default() };
    let base = synthetic_side(1, "a", &two);
    let new = synthetic_side(2, "b", &Shape { speed: 1.5, ..two });
    let c = compare(&base, &[new], &CompareOptions::default(), &area).expect("compare");
    let t = c.tables[0].rows[0].sides[0].as_ref().and_then(|s| s.metric(Metric::Throughput)).expect("t");
    assert_eq!((t.ci, t.significant), (None, None));
    let text = compare_text(&c, View { absolute: false, ci: true });
    assert!(text.contains("n/a"), "{text}");
    assert!(!text.contains("+50.0%*"), "{text}");
    assert!(text.contains("+50.0%"), "{text}");
}

#[test]
fn bootstrap_method_is_used_when_asked() {
    let base = synthetic_side(1, "a", &Shape { reps: 5, ..Shape::default() });
    let new = synthetic_side(2, "b", &Shape { reps: 5, ..faster() });
    let opts = CompareOptions { ci_method: CiMethod::Bootstrap, ..CompareOptions::default() };
    let c = compare(&base, &[new], &opts, &area).expect("compare");
    let t = c.tables[0].rows[3].sides[0].as_ref().and_then(|s| s.metric(Metric::Throughput)).expect("t");
    assert_eq!(t.ci.expect("ci").method, CiMethod::Bootstrap);
    assert!(formats::compare_json(&c).contains("\"ci_method\": \"bootstrap\""));
}

#[test]
fn nothing_in_common_explains_both_sides() {
    let base = synthetic_side(1, "a", &Shape { clients: vec![1], ..Shape::default() });
    let mut new = synthetic_side(2, "b", &Shape { clients: vec![64], ..Shape::default() });
    new.cells.iter_mut().for_each(|c| c.spec.workload = "other".into());
    let e = compare(&base, &[new], &CompareOptions::default(), &area).expect_err("no common cells");
    let msg = e.to_string();
    assert!(matches!(e, CompareError::NothingInCommon { .. }));
    assert!(msg.contains("w0 (clients=1; cpus=1,2; variant=default)"), "{msg}");
    assert!(msg.contains("other (clients=64"), "{msg}");
}

#[test]
fn variants_inside_one_run_compare() {
    let mut side = synthetic_side(5, "ab", &Shape::default());
    let fast = synthetic_side(5, "ab", &faster());
    side.cells.extend(fast.cells.into_iter().map(|mut c| {
        c.spec.variant = "fast".into();
        c.settings.insert("sysctl vm.swappiness".into(), "10".into());
        c
    }));
    let mut base = side.clone();
    base.variant = Some("default".into());
    let mut new = side;
    new.variant = Some("fast".into());
    let c = compare(&base, &[new.clone()], &CompareOptions::default(), &area).expect("compare");
    assert_eq!(c.tables.len(), 2, "variant is not part of the match key");
    assert_eq!(c.env_diff[0][0].key, "variant");
    assert_eq!((c.env_diff[0][0].base.as_str(), c.env_diff[0][0].new.as_str()), ("default", "fast"));
    let set = &c.env_diff[0][1];
    assert_eq!(
        (set.key.as_str(), set.base.as_str(), set.new.as_str()),
        ("set sysctl vm.swappiness", "(as found)", "10"),
        "what the variant set is part of the difference"
    );
    assert!(c.summary[0].throughput_geomean_pct.expect("geo") > 15.0);
    new.variant = Some("missing".into());
    let e = compare(&base, &[new], &CompareOptions::default(), &area).expect_err("no such variant");
    assert!(e.to_string().contains("its variants are: default, fast"), "{e}");
}

#[test]
fn partial_runs_are_marked() {
    let base = synthetic_side(1, "a", &Shape::default());
    let mut new = synthetic_side(2, "b", &Shape::default());
    new.cells[0].status = CellStatus::Failed;
    new.run.status = racehorse_core::RunStatus::Partial;
    let c = compare(&base, &[new], &CompareOptions::default(), &area).expect("compare");
    let text = compare_text(&c, View::default());
    assert!(text.contains("partial: 0 base, 1 new reps failed"), "{text}");
    assert!(text.contains("Note: run 2 'b' is partial"), "{text}");
    assert!(formats::compare_csv(&c).contains(",true,false,false\n"), "partial, not noisy, resolved");
}

#[test]
fn machine_formats_carry_every_record() {
    let base = synthetic_side(1, "a", &Shape::default());
    let new = synthetic_side(2, "b", &faster());
    let c = compare(&base, &[new], &CompareOptions::default(), &area).expect("compare");
    let v: serde_json::Value = serde_json::from_str(&formats::compare_json(&c)).expect("json");
    assert_eq!(v["format"], "racehorse-compare");
    assert_eq!(v["version"], 1);
    let records = v["records"].as_array().expect("records");
    assert_eq!(records.len(), 16 * 4);
    assert_eq!(records[0]["unit"], "bytes/s");
    assert_eq!(records[0]["direction"], "higher_is_better");
    assert_eq!(records[1]["direction"], "lower_is_better");
    assert!(records[0]["ci_lo"].as_f64().is_some());
    let csv = formats::compare_csv(&c);
    assert_eq!(csv.lines().count(), 1 + 16 * 4);
    assert!(csv.starts_with("format_version,side,new_run_id,workload"));
}

#[test]
fn markdown_and_html_render_every_table() {
    let mut base = synthetic_side(1, "<script>alert('x')</script>", &Shape::default());
    base.run.host = "a&b".into();
    let new = synthetic_side(2, "new", &faster());
    let c = compare(&base, &[new], &CompareOptions::default(), &area).expect("compare");
    let md = compare_markdown(&c, View { absolute: true, ci: true });
    assert!(md.contains("| clients | cpus | base MB/s | new MB/s | Throughput | CI |"), "{md}");
    let html = compare_html(&c, View::default());
    assert!(!html.contains("<script>"), "labels from the store are escaped");
    assert!(html.contains("&lt;script&gt;"));
    assert_eq!(html.matches("<table class=\"compare\"").count(), 2);
    assert!(html.matches("<svg").count() >= 8, "scaling, 2 bar charts and CPU chart per workload");
    assert!(html.contains("chart-line") && html.contains("chart-bar") && html.contains("chart-stacked"));
}

#[test]
fn run_report_has_tables_charts_and_environment() {
    let side = synthetic_side(3, "one", &Shape::default());
    let r = run_report(&side, 0.05, &area);
    assert_eq!(r.tables.len(), 2);
    assert_eq!(r.tables[0].rows.len(), 8);
    let text = run_text(&r);
    assert!(text.contains("throughput in MB/s"), "{text}");
    let html = run_html(&r);
    assert!(html.contains("<table class=\"run\""));
    assert!(html.contains("monitor: w0"), "monitor series chart");
    assert!(html.contains("<table class=\"env\""));
}

#[test]
fn several_new_runs_each_get_tables_and_summary_rows() {
    let base = synthetic_side(1, "a", &Shape::default());
    let n1 = synthetic_side(2, "b", &faster());
    let n2 = synthetic_side(3, "c", &Shape { speed: 0.8, seed: 11, ..Shape::default() });
    let c = compare(&base, &[n1, n2], &CompareOptions::default(), &area).expect("compare");
    assert_eq!(c.news.len(), 2);
    assert!(c.tables[0].rows.iter().all(|r| r.sides.len() == 2 && r.sides.iter().all(Option::is_some)));
    assert_eq!(c.summary.len(), 4, "two workloads × two new runs");
    assert!(c.summary[2].throughput_geomean_pct.expect("geo") < -15.0, "the slower run reads negative");
    let text = compare_text(&c, View::default());
    assert!(text.contains("w0 results (scaled to run 1 'a'), run 3 'c'"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&formats::compare_json(&c)).expect("json");
    assert_eq!(v["records"].as_array().map(Vec::len), Some(2 * 16 * 4));
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn noiseless_ratios_are_exact_and_gains_signed(speed in 0.2f64..5.0, cost in 0.2f64..5.0) {
            let quiet = Shape { noise: 0.0, workloads: 1, clients: vec![1, 2, 4], cpus: vec![2], ..Shape::default() };
            let base = synthetic_side(1, "a", &quiet);
            let new = synthetic_side(2, "b", &Shape { speed, cpu_cost: cost, ..quiet });
            let c = compare(&base, &[new], &CompareOptions::default(), &area).expect("compare");
            for row in &c.tables[0].rows {
                let cell = row.sides[0].as_ref().expect("matched");
                let t = cell.metric(Metric::Throughput).expect("t");
                let k = cell.metric(Metric::CpuTotalPerUnit).expect("k");
                prop_assert!((t.ratio.expect("r") - speed).abs() < 1e-9 * speed);
                prop_assert!((k.ratio.expect("r") - cost).abs() < 1e-9 * cost);
                prop_assert_eq!(t.gain_pct.expect("g") > 0.0, speed > 1.0);
                prop_assert_eq!(k.gain_pct.expect("g") > 0.0, cost < 1.0);
                let expect = if (speed - 1.0).abs() * 100.0 <= 1.0 { Verdict::Same } else if speed > 1.0 { Verdict::Better } else { Verdict::Worse };
                prop_assert_eq!(t.verdict, Some(expect));
            }
        }
    }
}

/// Turns the `cpus` axis of a synthetic side into IOzone phases (1 → write, 2 → read).
fn phased(mut side: crate::model::Side) -> crate::model::Side {
    for c in &mut side.cells {
        let phase = if c.spec.params.remove("cpus") == Some(racehorse_core::Value::Int(1)) {
            "write"
        } else {
            "read"
        };
        c.spec.params.insert("phase".into(), racehorse_core::Value::Str(phase.into()));
    }
    side
}

#[test]
fn phased_workloads_get_an_overall_row() {
    let base = phased(synthetic_side(1, "a", &Shape::default()));
    let new = phased(synthetic_side(2, "b", &faster()));
    let c = compare(&base, &[new], &CompareOptions::default(), &area).expect("compare");
    let phases: Vec<String> = c.tables[0].rows.iter().map(|r| r.params["phase"].to_string()).collect();
    assert_eq!(phases.iter().filter(|p| *p == "overall").count(), 4, "one per client count: {phases:?}");
    assert!(phases.chunks(3).all(|c| c[2] == "overall"), "overall comes after the phases: {phases:?}");
    let overall = c.tables[0].rows.iter().find(|r| r.params["phase"].to_string() == "overall").expect("row");
    let t = overall.sides[0].as_ref().and_then(|s| s.metric(Metric::Throughput)).expect("t");
    assert!((t.ratio.expect("ratio") - 1.2).abs() < 0.05);
    let r = run_report(&base, 0.05, &area);
    assert!(r.tables[0].rows.iter().any(|r| r.label.contains("phase=overall")));
}

#[test]
fn outlier_repetitions_are_reported_and_kept() {
    let base = synthetic_side(1, "a", &Shape { reps: 5, ..Shape::default() });
    let mut new = synthetic_side(2, "b", &Shape { reps: 5, seed: 3, ..Shape::default() });
    // Repetition 4 of the first point runs at half speed.
    let first = new.cells[0].spec.match_key();
    for c in new.cells.iter_mut().filter(|c| c.spec.match_key() == first && c.spec.rep == 4) {
        c.units /= 2.0;
    }
    let c = compare(&base, &[new.clone()], &CompareOptions::default(), &area).expect("compare");
    let row = &c.tables[0].rows[0];
    assert_eq!(row.sides[0].as_ref().expect("side").outlier_reps, vec![4]);
    assert!(compare_text(&c, View::default()).contains("new outlier #4 (kept)"));
    let t = row.sides[0].as_ref().and_then(|s| s.metric(Metric::Throughput)).expect("t");
    assert_eq!(t.new.expect("summary").n, 5, "the outlier stays in the figures");
    assert!(formats::compare_json(&c).contains("\"new_outlier_reps\": [\n        4\n      ]"));
    let r = run_report(&new, 0.05, &area);
    assert_eq!(r.tables[0].rows[0].outlier_reps, vec![4]);
    assert!(run_text(&r).contains("outlier #4"));
}
