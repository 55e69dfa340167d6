//! The report with the binary's catalogue: the engines' declared figures (paging, java,
//! analytics per query, JMH's score) and seed-000 summary areas (re-aim's mixes by workfile,
//! net, micro) as compare shows them, and a toy engine added beside the registry, whose
//! declared figure shows in compare with no change in the report.

use super::{catalogue, catalogue_of};
use racehorse_core::{CellResult, CellSpec, CpuUsage, Direction, Figure, Nanos, Params, Value, WorkUnit};
use racehorse_engines::{
    registry, AreaRule, Caps, CellContext, Engine, EngineError, EngineInfo, SummaryArea, Workload,
};
use racehorse_report::synth::run_info;
use racehorse_report::{compare, compare_charts, compare_text, CompareOptions, Comparison, Side, View};

fn cmp(base: &Side, new: &Side) -> Comparison {
    compare(base, std::slice::from_ref(new), &CompareOptions::default(), &catalogue()).expect("comparable")
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

fn paging(id: i64, cpu_factor: f64, moves: f64) -> Side {
    let cells = (1..=3)
        .map(|rep| {
            let mut c = cell("paging", &[("region", Value::Int(1 << 30))], rep, WorkUnit::Ops, 1000.0, 0.01);
            c.cpu.kernel_s *= cpu_factor;
            c.extra.insert("n_page_moved".into(), 5000.0 * (1.0 + 0.01 * f64::from(rep)));
            c.extra.insert("moves_per_touch".into(), moves * (1.0 + 0.01 * f64::from(rep)));
            c
        })
        .collect();
    side(id, cells)
}

#[test]
fn paging_compares_cpu_per_page_moved_and_moves_per_touch() {
    let c = cmp(&paging(1, 1.0, 0.5), &paging(2, 2.0, 0.25));
    let items = &c.tables[0].rows[0].sides[0].as_ref().unwrap().items;
    let cpu = items.iter().find(|i| i.item == "CPU per page moved").expect("CPU per page moved");
    assert!((cpu.cmp.ratio.unwrap() - 5.0 / 3.0).abs() < 0.01, "kernel CPU doubled: (1 + 4) / 3");
    assert!(cpu.cmp.gain_pct.unwrap() < 0.0, "more CPU per page is worse");
    let moves = items.iter().find(|i| i.item == "moves per touch").expect("moves per touch");
    assert!((moves.cmp.ratio.unwrap() - 0.5).abs() < 1e-9 && moves.cmp.gain_pct.unwrap() > 0.0);
    let text = compare_text(&c, View::default());
    assert!(text.contains("paging figures per point") && text.contains("µs/page"), "{text}");
}

fn java(id: i64, pause_ms: f64) -> Side {
    let cells = (1..=3)
        .map(|rep| {
            let params = [("warehouses", Value::Int(2)), ("gc", Value::Str("g1".into()))];
            let mut c = cell("java", &params, rep, WorkUnit::Transactions, 50_000.0, 0.01);
            let w = 1.0 + 0.01 * f64::from(rep);
            for (k, v) in [
                ("gc_time_ms", 2.0 * pause_ms),
                ("gc_pause_ms", pause_ms),
                ("gc_pause_max_ms", pause_ms / 4.0),
                ("gc_count", 8.0),
                ("gc_heap_after_mib", 40.0),
                ("jit_ms", 30.0),
            ] {
                c.extra.insert(k.into(), v * w);
            }
            c
        })
        .collect();
    side(id, cells)
}

#[test]
fn java_compares_its_gc_and_jit_figures_with_lower_as_better() {
    let c = cmp(&java(1, 40.0), &java(2, 20.0));
    let items = &c.tables[0].rows[0].sides[0].as_ref().unwrap().items;
    let names: Vec<&str> = items.iter().map(|i| i.item.as_str()).collect();
    assert_eq!(
        names,
        [
            "GC time in window",
            "GC pause time",
            "longest GC pause",
            "collections",
            "heap after GC",
            "JIT time in window"
        ]
    );
    let longest = &items[2];
    assert!((longest.cmp.ratio.unwrap() - 0.5).abs() < 1e-9, "half the pause");
    assert!(longest.cmp.gain_pct.unwrap() > 0.0, "a shorter pause is better");
    assert!(items[3].cmp.gain_pct.unwrap().abs() < 1e-9, "as many collections");
    let text = compare_text(&c, View::default());
    assert!(text.contains("java figures per point") && text.contains("longest GC pause"), "{text}");
}

fn analytics(id: i64, q2_ms: f64) -> Side {
    let cells = (1..=3)
        .map(|rep| {
            let mut c = cell("analytics", &[("scale", Value::Int(1))], rep, WorkUnit::Ops, 10.0, 0.01);
            let w = 1.0 + 0.01 * f64::from(rep);
            c.extra.insert("q01_ms".into(), 40.0 * w);
            c.extra.insert("q02_ms".into(), q2_ms * w);
            c.extra.insert("q01_rows".into(), 12.0);
            c.extra.insert("total_ms".into(), (40.0 + q2_ms) * w);
            c
        })
        .collect();
    side(id, cells)
}

#[test]
fn analytics_compares_every_query() {
    let c = cmp(&analytics(1, 60.0), &analytics(2, 30.0));
    let items = &c.tables[0].rows[0].sides[0].as_ref().unwrap().items;
    let names: Vec<&str> = items.iter().map(|i| i.item.as_str()).collect();
    assert_eq!(names, ["q01 time", "q02 time"], "one row per query; no total, no row counts");
    assert!((items[1].cmp.ratio.unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(items[1].cmp.significant, Some(true));
    let text = compare_text(&c, View::default());
    assert!(text.contains("q02 time") && text.contains("q01 time"), "{text}");
    let charts = compare_charts(&c, &c.tables[0]);
    assert!(charts.iter().any(|s| s.contains("analytics: engine figures vs base")), "a chart of the queries");
}

fn mix(id: i64, workfile: &str, loads: u64, speed: f64) -> Vec<CellResult> {
    let mut out = Vec::new();
    for users in 1..=loads {
        for rep in 1..=3 {
            let p = [("workfile", Value::Str(workfile.into())), ("users", Value::Int(users as i64))];
            out.push(cell("mix", &p, rep, WorkUnit::Jobs, speed * users as f64, 0.01 * id as f64));
        }
    }
    out
}

#[test]
fn ramps_compare_the_highest_load_reached() {
    let base = side(1, mix(1, "compute", 4, 1.0).into_iter().chain(mix(1, "fserver", 3, 1.0)).collect());
    let new = side(2, mix(2, "compute", 6, 1.1).into_iter().chain(mix(2, "fserver", 3, 1.0)).collect());
    let c = cmp(&base, &new);
    assert_eq!(c.ramps.len(), 2);
    let compute = c.ramps.iter().find(|r| r.label == "workfile=compute").unwrap();
    assert_eq!(compute.base.unwrap().reached_users, 4);
    assert_eq!(compute.new.unwrap().reached_users, 6);
    assert_eq!(compute.reached_gain_pct(), Some(50.0));
    let text = compare_text(&c, View::default());
    assert!(text.contains("Load ramps") && text.contains("Highest load reached"), "{text}");
    // The summary: re-aim's mixes in seed 000's areas, each row named by its workfile.
    let rows: Vec<(&str, &str)> = c.summary.iter().map(|s| (s.area.as_str(), s.params.as_str())).collect();
    assert_eq!(rows, [("CPU and memory intense", "workfile=compute"), ("File server", "workfile=fserver")]);
    assert!(text.contains("mix workfile=compute"), "{text}");
}

fn net(id: i64, speed: f64) -> Side {
    let mut cells = Vec::new();
    for (mode, unit) in [("stream", WorkUnit::Bytes), ("rr", WorkUnit::Transactions)] {
        for conns in [1, 2, 4, 8] {
            for rep in 1..=3 {
                let p = [("mode", Value::Str(mode.into())), ("connections", Value::Int(conns))];
                cells.push(cell("net", &p, rep, unit, speed * 1e3 * conns as f64, 0.01));
            }
        }
    }
    side(id, cells)
}

#[test]
fn net_rows_are_named_and_connections_is_a_load_axis() {
    let c = cmp(&net(1, 1.0), &net(2, 1.2));
    let rows: Vec<(&str, String)> =
        c.summary.iter().map(|s| (s.area.as_str(), format!("{} {}", s.workload, s.params))).collect();
    assert_eq!(
        rows,
        [("Networking", "net mode=stream".to_string()), ("Networking", "net mode=rr".to_string())]
    );
    assert!(c.summary.iter().all(|s| s.ramp_up_excluded.as_deref() == Some("connections=1")));
    let charts = compare_charts(&c, &c.tables[0]);
    let scaling = charts.iter().find(|s| s.contains("throughput vs connections")).expect("a line chart");
    assert!(scaling.contains("<g class=\"axis-x log2\">") && scaling.contains(">8</text>"));
    assert!(!scaling.contains(">1.5</text>") && !scaling.contains(">2.5</text>"));
    assert!(scaling.contains("class=\"errorbars\"") && scaling.contains("class=\"reps\""));
    let cpu = charts.iter().find(|s| s.contains("CPU per unit of work")).expect("a CPU chart");
    assert!(cpu.contains("class=\"errorbars\"") && cpu.contains("class=\"reps\""), "CPU totals' spread");
}

#[test]
fn micro_tables_of_two_units_get_distinct_summary_rows() {
    let mut cells = Vec::new();
    for (bench, unit) in [("syscall", WorkUnit::Ops), ("fork", WorkUnit::Ops), ("bw_pipe", WorkUnit::Bytes)] {
        for rep in 1..=3 {
            cells.push(cell("micro", &[("bench", Value::Str(bench.into()))], rep, unit, 1e6, 0.01));
        }
    }
    let c = cmp(&side(1, cells.clone()), &side(2, cells));
    let rows: Vec<(&str, String)> =
        c.summary.iter().map(|s| (s.area.as_str(), format!("{} {}", s.workload, s.params))).collect();
    assert_eq!(
        rows,
        [
            ("Kernel functions", "micro bench=bw_pipe".to_string()),
            ("Kernel functions", "micro bench=fork,syscall".to_string())
        ]
    );
}

/// JMH cells whose own score is `score` in `extra` (`jmh_ops_per_s` or `jmh_ns_per_op`).
fn jmh(id: i64, extra: &str, score: f64) -> Side {
    let cells = (1..=3)
        .map(|rep| {
            let mut c = cell(
                "jmh",
                &[("benchmark", Value::Str("Mix.xorshift".into()))],
                rep,
                WorkUnit::Ops,
                1e6,
                0.01,
            );
            c.extra.insert(extra.into(), score * (1.0 + 0.01 * f64::from(rep)));
            c
        })
        .collect();
    side(id, cells)
}

#[test]
fn jmh_compares_its_own_score_in_its_direction() {
    let c = cmp(&jmh(1, "jmh_ops_per_s", 1e8), &jmh(2, "jmh_ops_per_s", 2e8));
    let items = &c.tables[0].rows[0].sides[0].as_ref().unwrap().items;
    let score = items.iter().find(|i| i.item == "JMH score").expect("JMH score");
    assert_eq!(score.unit, "ops/s");
    assert!(
        (score.cmp.ratio.unwrap() - 2.0).abs() < 1e-9 && score.cmp.gain_pct.unwrap() > 0.0,
        "more ops/s is better"
    );
    let c = cmp(&jmh(1, "jmh_ns_per_op", 10.0), &jmh(2, "jmh_ns_per_op", 20.0));
    let items = &c.tables[0].rows[0].sides[0].as_ref().unwrap().items;
    let score = items.iter().find(|i| i.item == "JMH score").expect("JMH score");
    assert_eq!(score.unit, "ns/op");
    assert!(score.cmp.gain_pct.unwrap() < 0.0, "more ns per op is worse");
    assert_eq!(items.iter().filter(|i| i.item == "JMH score").count(), 1, "one score per point");
    let text = compare_text(&c, View::default());
    assert!(text.contains("jmh figures per point") && text.contains("ns/op"), "{text}");
}

/// A toy engine, as a new module would declare it: one figure compared, one not.
struct Toy;

static TOY: EngineInfo = EngineInfo {
    name: "toy",
    about: "a toy engine with a declared figure",
    area: "Toys",
    summary_area: AreaRule::Fixed(SummaryArea::Other),
    unit: WorkUnit::Ops,
    caps: Caps::NONE,
    options: &[],
    figures: &[Figure::lower("toy_wait_ms", "toy wait", "ms"), Figure::info("toy_seed", "toy seed", "count")],
    shortcuts: &[],
};

impl Engine for Toy {
    fn info(&self) -> &'static EngineInfo {
        &TOY
    }
    fn prepare(&self, _ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        Err(EngineError::Failed("a toy".into()))
    }
}

fn toy(id: i64, wait_ms: f64) -> Side {
    let cells = (1..=3)
        .map(|rep| {
            let mut c = cell("toy", &[("level", Value::Int(1))], rep, WorkUnit::Ops, 100.0, 0.01);
            c.extra.insert("toy_wait_ms".into(), wait_ms * (1.0 + 0.01 * f64::from(rep)));
            c.extra.insert("toy_seed".into(), 7.0);
            c
        })
        .collect();
    side(id, cells)
}

#[test]
fn a_toy_engine_beside_the_registry_shows_its_figure_in_compare() {
    let mut engines: Vec<&dyn Engine> = registry().to_vec();
    engines.push(&Toy);
    let (base, new) = (toy(1, 40.0), toy(2, 20.0));
    let c = compare(&base, std::slice::from_ref(&new), &CompareOptions::default(), &catalogue_of(&engines))
        .expect("comparable");
    let items = &c.tables[0].rows[0].sides[0].as_ref().unwrap().items;
    assert_eq!(items.len(), 1, "the seed is not compared: {items:?}");
    let wait = &items[0];
    assert_eq!(
        (wait.item.as_str(), wait.unit, wait.direction()),
        ("toy wait", "ms", Direction::LowerIsBetter)
    );
    assert!(wait.cmp.gain_pct.unwrap() > 0.0, "half the wait is better");
    let text = compare_text(&c, View::default());
    assert!(text.contains("toy figures per point") && text.contains("toy wait"), "{text}");
    assert_eq!((c.tables[0].area.as_str(), c.summary[0].area.as_str()), ("Toys", "Other"));
    let without =
        compare(&base, std::slice::from_ref(&new), &CompareOptions::default(), &catalogue()).unwrap();
    assert!(
        without.tables[0].rows[0].sides[0].as_ref().unwrap().items.is_empty(),
        "the registry lacks the toy"
    );
}
