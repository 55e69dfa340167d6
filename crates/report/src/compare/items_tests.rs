//! Tests of what compare shows beyond the four metrics: latency percentiles, the figures a
//! (toy) engine declares and its summary areas, IOzone's phase order, and the charts built
//! from them. The real engines' figures and areas are tested with the binary's catalogue
//! (`cli/src/catalogue_tests.rs`).

use crate::catalogue::{Catalogue, EngineEntry, EngineFacts};
use crate::compare::charts::compare_charts;
use crate::compare::comparison::{compare, Comparison};
use crate::compare::items::ItemKind;
use crate::compare::metric::CompareOptions;
use crate::model::Side;
use crate::synth::{run_info, synthetic_side, Shape};
use crate::{compare_text, View};
use racehorse_core::{
    AreaRule, CellResult, CellSpec, CpuUsage, Direction, Figure, Nanos, Params, SummaryArea, Value, WorkUnit,
};

fn cmp(base: &Side, new: &Side) -> Comparison {
    compare(base, std::slice::from_ref(new), &CompareOptions::default(), &|_: &str| "Engine area".to_string())
        .expect("comparable")
}

/// One ok cell: `tput` units/s over 10 s and `cpu_s` CPU seconds; `wobble` varies it a little.
fn cell(
    workload: &str,
    params: &[(&str, Value)],
    rep: u32,
    unit: WorkUnit,
    tput: f64,
    wobble: f64,
) -> CellResult {
    let params: Params = params.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    let spec = CellSpec { workload: workload.into(), params, variant: "default".into(), rep };
    let mut c = CellResult::empty(spec, unit);
    let f = 1.0 + wobble * (f64::from(rep) - 2.0);
    c.window = Nanos(10_000_000_000);
    c.units = tput * 10.0 * f;
    c.cpu = CpuUsage { user_s: 1.0 * f, kernel_s: 2.0 * f, ..CpuUsage::default() };
    c
}

fn side(id: i64, cells: Vec<CellResult>) -> Side {
    Side::whole(run_info(id, &format!("r{id}")), cells)
}

#[test]
fn latency_percentiles_compare_with_lower_as_better() {
    let base = synthetic_side(1, "a", &Shape { workloads: 1, latencies: true, ..Shape::default() });
    let new = synthetic_side(
        2,
        "b",
        &Shape { workloads: 1, latencies: true, speed: 1.25, seed: 7, ..Shape::default() },
    );
    let c = cmp(&base, &new);
    let items = &c.tables[0].rows[0].sides[0].as_ref().unwrap().items;
    let labels: Vec<String> = items.iter().map(|i| i.label()).collect();
    assert_eq!(labels, ["read p50", "read p90", "read p99", "write p50", "write p90", "write p99"]);
    let p99 = &items[2];
    assert_eq!(p99.kind, ItemKind::Latency);
    let r = p99.cmp.ratio.unwrap();
    assert!((r - 0.8).abs() < 0.05, "25% faster: latencies at 0.8 of base, got {r}");
    assert!(p99.cmp.gain_pct.unwrap() > 15.0, "shorter latency reads as a gain");
    assert_eq!(p99.cmp.significant, Some(true), "3 reps a side at 1% noise");
    let text = compare_text(&c, View { absolute: true, ci: false });
    assert!(text.contains("w0 latency percentiles (scaled to run 1 'a')"), "{text}");
    assert!(text.contains("base p99 ms") && text.contains("operation"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&crate::compare::formats::compare_json(&c)).unwrap();
    let rec = &json["items"][2];
    assert_eq!(
        (rec["kind"].as_str(), rec["item"].as_str(), rec["stat"].as_str()),
        (Some("latency"), Some("read"), Some("p99"))
    );
    assert_eq!(rec["direction"], "lower_is_better");
    assert_eq!(rec["unit"], "ns");
    assert!(rec["q_value"].is_number());
}

#[test]
fn latencies_below_resolution_show_no_number() {
    let mut base = synthetic_side(
        1,
        "a",
        &Shape { workloads: 1, clients: vec![1], latencies: true, ..Shape::default() },
    );
    let new = synthetic_side(
        2,
        "b",
        &Shape { workloads: 1, clients: vec![1], latencies: true, ..Shape::default() },
    );
    base.cells[0].quality.mark_below("latency read", "shorter than the clock");
    let c = cmp(&base, &new);
    let items = &c.tables[0].rows[0].sides[0].as_ref().unwrap().items;
    let read = items.iter().find(|i| i.item == "read").unwrap();
    assert!(read.cmp.below_resolution && read.cmp.ratio.is_none());
    assert!(items.iter().find(|i| i.item == "write").unwrap().cmp.ratio.is_some());
}

#[test]
fn iozone_phases_keep_their_order_with_overall_last() {
    let mut cells = Vec::new();
    for phase in ["read", "reread", "rewrite", "write", "randread"] {
        for rep in 1..=3 {
            cells.push(cell(
                "diskio",
                &[("phase", Value::Str(phase.into()))],
                rep,
                WorkUnit::Bytes,
                1e8,
                0.01,
            ));
        }
    }
    let c = cmp(&side(1, cells.clone()), &side(2, cells));
    let order: Vec<String> = c.tables[0].rows.iter().map(|r| r.label.clone()).collect();
    assert_eq!(
        order,
        ["phase=write", "phase=rewrite", "phase=read", "phase=reread", "phase=randread", "phase=overall"]
    );
}

#[test]
fn bars_are_coloured_by_significance_not_by_size() {
    use racehorse_chart::Verdict as V;
    // 2 repetitions a side: no interval, so no colour however large the change.
    let base = synthetic_side(1, "a", &Shape { workloads: 1, reps: 2, ..Shape::default() });
    let new = synthetic_side(2, "b", &Shape { workloads: 1, reps: 2, speed: 1.5, ..Shape::default() });
    let c = cmp(&base, &new);
    let m = c.tables[0].rows[0].sides[0].as_ref().unwrap().metric(crate::Metric::Throughput).unwrap();
    assert_eq!(crate::compare::charts::chart_verdict(m), V::Untested);
    let charts = compare_charts(&c, &c.tables[0]).join("");
    assert!(
        charts.contains(V::Untested.color()) && !charts.contains(&format!("fill=\"{}\"", V::Better.color()))
    );
    // 3 repetitions: the same change is significant and green.
    let base = synthetic_side(1, "a", &Shape { workloads: 1, ..Shape::default() });
    let new = synthetic_side(2, "b", &Shape { workloads: 1, speed: 1.5, ..Shape::default() });
    let c = cmp(&base, &new);
    let m = c.tables[0].rows[0].sides[0].as_ref().unwrap().metric(crate::Metric::Throughput).unwrap();
    assert_eq!(crate::compare::charts::chart_verdict(m), V::Better);
}

#[test]
fn latency_charts_are_drawn_per_workload() {
    let base = synthetic_side(1, "a", &Shape { workloads: 1, latencies: true, ..Shape::default() });
    let new =
        synthetic_side(2, "b", &Shape { workloads: 1, latencies: true, speed: 1.25, ..Shape::default() });
    let c = cmp(&base, &new);
    let charts = compare_charts(&c, &c.tables[0]);
    let line = charts.iter().find(|s| s.contains("p99 latency vs clients")).expect("latency line chart");
    assert!(line.contains("class=\"errorbars\"") && line.contains("axis-x log2"));
    assert!(charts.iter().any(|s| s.contains("p99 latency (shorter is better)")), "latency bars");
    let html = crate::compare_html(&c, View::default());
    assert!(html.contains("<table class=\"latency\""), "a latency table in the page");
}

#[test]
fn run_report_throughput_chart_has_error_bars_and_repetitions() {
    let side = synthetic_side(1, "a", &Shape { workloads: 1, ..Shape::default() });
    let r = crate::run_report(&side, 0.05, &|_: &str| "Area".to_string());
    let html = crate::run_html(&r);
    let chart = html.split("<svg").find(|s| s.contains("throughput vs clients")).expect("scaling chart");
    assert!(chart.contains("class=\"errorbars\"") && chart.contains("class=\"reps\""));
    assert!(chart.contains("<g class=\"axis-x log2\">"));
}

/// A toy engine's figures, declared the way an engine's description declares them: nothing in
/// the report names the toy.
const TOY_FIGURES: &[Figure] = &[
    Figure::info("toy_seed", "toy seed", "count"),
    Figure::lower("toy_wait_ms", "toy wait", "ms"),
    Figure::higher("*_per_s", "* rate", "things/s"),
    Figure::cpu_per("n_toy_thing", "CPU per toy thing", "cpu_s/thing"),
];

/// The toy's catalogue entry: a summary area by its `shape`.
fn toy_catalogue() -> Catalogue {
    let mut c = Catalogue::new();
    let summary_area = AreaRule::ByParam {
        param: "shape",
        cases: &[("ball", SummaryArea::Networking)],
        missing: SummaryArea::Other,
        otherwise: SummaryArea::Harness,
    };
    c.add("toy", EngineEntry { area: "Toys".into(), summary_area, figures: TOY_FIGURES.to_vec() });
    c
}

/// Toy cells of two shapes whose wait is `wait_ms` and whose things go at `rate`.
fn toy(id: i64, wait_ms: f64, rate: f64) -> Side {
    let mut cells = Vec::new();
    for shape in ["ball", "cube"] {
        for rep in 1..=3 {
            let mut c = cell("toy", &[("shape", Value::Str(shape.into()))], rep, WorkUnit::Ops, 100.0, 0.01);
            let w = 1.0 + 0.01 * f64::from(rep);
            for (k, v) in [("toy_seed", 7.0), ("toy_wait_ms", wait_ms * w), ("n_toy_thing", 3000.0 * w)] {
                c.extra.insert(k.into(), v);
            }
            c.extra.insert("b_per_s".into(), rate * w);
            c.extra.insert("a_per_s".into(), 2.0 * rate * w);
            cells.push(c);
        }
    }
    side(id, cells)
}

#[test]
fn a_toy_engines_declared_figures_show_in_compare() {
    let (base, new) = (toy(1, 40.0, 10.0), toy(2, 20.0, 15.0));
    let c = compare(&base, std::slice::from_ref(&new), &CompareOptions::default(), &toy_catalogue())
        .expect("comparable");
    let t = &c.tables[0];
    assert_eq!(t.area, "Toys");
    let items = &t.rows[0].sides[0].as_ref().unwrap().items;
    let names: Vec<&str> = items.iter().map(|i| i.item.as_str()).collect();
    assert_eq!(names, ["CPU per toy thing", "toy wait", "a rate", "b rate"], "no seed: not compared");
    let wait = &items[1];
    assert_eq!((wait.kind, wait.unit, wait.direction()), (ItemKind::Figure, "ms", Direction::LowerIsBetter));
    assert!(
        (wait.cmp.ratio.unwrap() - 0.5).abs() < 1e-9 && wait.cmp.gain_pct.unwrap() > 0.0,
        "half the wait"
    );
    assert_eq!(items[3].direction(), Direction::HigherIsBetter);
    assert!(items[3].cmp.gain_pct.unwrap() > 0.0, "a higher rate is better");
    let text = compare_text(&c, View::default());
    assert!(text.contains("toy figures per point") && text.contains("toy wait"), "{text}");
    assert!(text.contains("µs/thing") && !text.contains("toy seed"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&crate::compare::formats::compare_json(&c)).unwrap();
    let rec = json["items"].as_array().unwrap().iter().find(|r| r["item"] == "toy wait").expect("toy wait");
    assert_eq!((rec["kind"].as_str(), rec["unit"].as_str()), (Some("figure"), Some("ms")));
    assert_eq!(rec["direction"], "lower_is_better");
    let areas: Vec<(&str, &str)> = c.summary.iter().map(|s| (s.area.as_str(), s.params.as_str())).collect();
    assert_eq!(areas, [("Networking", "shape=ball"), ("Harness", "shape=cube")], "by the toy's rule");
}

#[test]
fn an_engine_the_catalogue_lacks_has_no_figures_and_area_other() {
    let (base, new) = (toy(1, 40.0, 10.0), toy(2, 20.0, 15.0));
    let c = compare(&base, std::slice::from_ref(&new), &CompareOptions::default(), &Catalogue::new())
        .expect("comparable");
    assert_eq!(c.tables[0].area, "Other");
    assert!(c.tables[0].rows.iter().flat_map(|r| r.sides.iter().flatten()).all(|s| s.items.is_empty()));
    assert!(c.summary.iter().all(|s| s.area == "Other"));
    // Cells matched across engines (`--by workload`) take the base engine's area.
    let facts = toy_catalogue();
    assert_eq!(facts.summary_area("toy/other", &Default::default()), "Toys");
    assert!(facts.figures("toy/other").is_empty());
}
