//! Tests of history over a store: series are read across runs, steps in throughput and in
//! CPU per unit are found at their run, noisy repetitions are left out, and the ledger is
//! kept in step without duplicates.

use super::ledger::{reconcile, records_for};
use super::*;
use racehorse_core::{CellResult, CellSpec, CpuUsage, Nanos, Params, Value, WorkUnit};
use racehorse_stats::changepoint::synth::{generate, Plant, Spec};
use racehorse_store::ledger::LedgerStatus;
use racehorse_store::{NewRun, Store};

/// A cell of `null clients=1` with this throughput (ops/s) and CPU per op.
fn cell(rep: u32, tput: f64, cpu_per_op: f64, noisy: bool) -> CellResult {
    let mut params = Params::new();
    params.insert("clients".into(), Value::Int(1));
    let spec = CellSpec { workload: "null".into(), params, variant: "default".into(), rep };
    let mut c = CellResult::empty(spec, WorkUnit::Ops);
    c.window = Nanos(1_000_000_000);
    c.units = tput;
    let cpu = tput * cpu_per_op;
    c.cpu = CpuUsage { user_s: cpu * 0.4, kernel_s: cpu * 0.6, steal_s: 0.0, iowait_s: 0.0, idle_s: 1.0 };
    c.cpus_online = 2;
    if noisy {
        c.quality.noisy = Some("outside CPU 12%".into());
    }
    c
}

/// A store of runs whose throughput and CPU per op follow the two series (one value per
/// repetition); run i is tagged commit=c{i}.
fn store_of(tput: &[Vec<f64>], cpu: &[Vec<f64>], noisy_run: Option<usize>) -> Store {
    let s = Store::open_in_memory().unwrap();
    for (i, (t, c)) in tput.iter().zip(cpu).enumerate() {
        let run = NewRun {
            label: "nightly".into(),
            host: "h".into(),
            tags: vec![("commit".into(), format!("c{i}"))],
            ..NewRun::default()
        };
        let id = s.create_run(&run).unwrap();
        for (r, (tv, cv)) in t.iter().zip(c).enumerate() {
            s.insert_cell(id, r, &cell(r as u32 + 1, *tv, *cv, noisy_run == Some(i) && r == 0)).unwrap();
        }
        s.finish_run(id, racehorse_core::RunStatus::Complete).unwrap();
    }
    s
}

fn select(figures: Vec<Figure>) -> Selection {
    Selection { workload: Some("null".into()), figures, ..Selection::default() }
}

fn no_direction(_: &str, _: &str) -> Option<racehorse_core::Figure> {
    None
}

fn analysed(s: &Store, figure: &str) -> Analysis {
    let got = collect(s, &select(vec![Figure::parse(figure).unwrap()]), &no_direction).unwrap();
    assert_eq!(got.series.len(), 1);
    analyse(got.series.into_iter().next().unwrap(), &HistoryOptions::default()).unwrap()
}

#[test]
fn a_throughput_step_is_found_at_its_run_and_kept_once_in_the_ledger() {
    let tput = generate(&Spec::null(30, 3, 0.01, 0.01).with(Plant::Step { at: 17, ratio: 0.9 }), 4);
    let cpu = generate(&Spec::null(30, 3, 0.01, 0.01), 5);
    let s = store_of(&tput, &cpu, None);
    let a = analysed(&s, "throughput");
    let confirmed: Vec<&SeriesChange> = a.confirmed().collect();
    assert_eq!(confirmed.len(), 1, "{:?}", a.changes);
    assert_eq!(a.series.runs[confirmed[0].after].run.tags[0].1, "c17");
    assert!(!confirmed[0].better);
    let mut n = 0;
    let mut uuid = || {
        n += 1;
        format!("00000000-0000-4000-8000-{n:012}")
    };
    let to_save = reconcile(&a, &s.change_points(None).unwrap(), 1000, &mut uuid);
    assert_eq!(to_save.len(), 1);
    assert_eq!(to_save[0].status, LedgerStatus::New);
    for r in &to_save {
        s.save_change_point(r).unwrap();
    }
    // The same analysis again saves nothing; an acknowledgement is kept when the evidence moves.
    assert!(reconcile(&a, &s.change_points(None).unwrap(), 2000, &mut uuid).is_empty());
    let id = s.change_points(None).unwrap()[0].id;
    s.set_change_point_status(id, LedgerStatus::Acknowledged, Some("expected"), None).unwrap();
    let mut moved = a.clone();
    moved.changes[0].change.ratio = 0.91;
    let again = reconcile(&moved, &s.change_points(None).unwrap(), 3000, &mut uuid);
    assert_eq!(again.len(), 1);
    assert_eq!((again[0].id, again[0].status), (id, LedgerStatus::Acknowledged));
    let recs = records_for(&a, &s.change_points(None).unwrap());
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].as_ref().map(|r| r.id), Some(id));
}

#[test]
fn a_cpu_per_unit_regression_under_flat_throughput_is_a_cpu_change() {
    let tput = generate(&Spec::null(30, 3, 0.01, 0.01), 6);
    let cpu = generate(&Spec::null(30, 3, 0.01, 0.01).with(Plant::Step { at: 12, ratio: 1.08 }), 7);
    let s = store_of(&tput, &cpu, None);
    assert!(analysed(&s, "throughput").confirmed().next().is_none());
    let a = analysed(&s, "cpu");
    let c: Vec<&SeriesChange> = a.confirmed().collect();
    assert_eq!(c.len(), 1, "{:?}", a.changes);
    assert_eq!(c[0].after, 12);
    assert!(!c[0].better, "more CPU per unit is worse");
    assert!((c[0].change.ratio - 1.08).abs() < 0.02);
}

#[test]
fn noisy_repetitions_are_left_out_and_counted() {
    let tput = generate(&Spec::null(12, 3, 0.01, 0.01), 8);
    let cpu = generate(&Spec::null(12, 3, 0.01, 0.01), 9);
    let s = store_of(&tput, &cpu, Some(4));
    let a = analysed(&s, "throughput");
    assert_eq!(a.left_out, (1, 0, 0));
    assert_eq!(a.series.runs[4].values.len(), 2);
    assert_eq!(a.series.runs[4].noisy, 1);
}

#[test]
fn a_change_in_the_last_runs_is_pending_and_not_stored() {
    let tput = generate(&Spec::null(25, 3, 0.01, 0.01).with(Plant::Step { at: 22, ratio: 0.8 }), 10);
    let cpu = generate(&Spec::null(25, 3, 0.01, 0.01), 11);
    let s = store_of(&tput, &cpu, None);
    let a = analysed(&s, "throughput");
    assert_eq!(a.changes.len(), 1);
    assert!(a.changes[0].change.pending);
    assert!(reconcile(&a, &[], 1, &mut String::new).is_empty());
}

#[test]
fn runs_are_ordered_by_a_tag_and_views_render() {
    let tput = generate(&Spec::null(10, 3, 0.01, 0.01).with(Plant::Step { at: 5, ratio: 0.7 }), 12);
    let cpu = generate(&Spec::null(10, 3, 0.01, 0.01), 13);
    let s = store_of(&tput, &cpu, None);
    let sel = Selection {
        order: RunOrder::Tag("commit".into()),
        ..select(vec![Figure::parse("throughput").unwrap()])
    };
    let got = collect(&s, &sel, &no_direction).unwrap();
    assert_eq!((got.runs_read, got.runs_without_order_tag), (10, 0));
    let a = analyse(got.series.into_iter().next().unwrap(), &HistoryOptions::default()).unwrap();
    let text = crate::render::doc::to_text(&view::series_blocks(&a, &[None]));
    assert!(text.contains("null clients=1 on h — Throughput"), "{text}");
    assert!(text.contains("commit=c5"), "{text}");
    let html = crate::render::html::page("history", &view::series_blocks(&a, &[None]));
    assert!(html.contains("chart-timeline"));
    let doc = json::document(&[(a, vec![None])], json::Source::Store);
    assert_eq!(doc["format"], "racehorse-history");
    assert_eq!(doc["series"][0]["change_points"][0]["first_after"], 6);
    assert_eq!(doc["series"][0]["runs"].as_array().unwrap().len(), 10);
}
