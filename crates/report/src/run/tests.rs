//! Tests of the one-run model's show-side parts (run order, repetitions, extras, ramps,
//! settings, failures) and of `show`'s text, on synthetic runs built in code.

use crate::model::Side;
use crate::run::report::{RampPoint, RunReport};
use crate::synth::{synthetic_side, Shape};
use crate::{run_report, show_text};
use racehorse_core::{CellStatus, Profile, ProfileEntry, Value, WorkUnit};

fn area(_: &str) -> String {
    "Test".into()
}

fn report(side: &Side) -> RunReport {
    run_report(side, 0.05, &area)
}

/// One workload, clients 1, 2 and 4 on one CPU, three repetitions: clients=1 ran beside a
/// busy process, clients=2 had a cold first repetition, clients=4 a figure below resolution.
fn run_with_caveats() -> Side {
    let shape = Shape { workloads: 1, clients: vec![1, 2, 4], cpus: vec![1], ..Shape::default() };
    let mut side = synthetic_side(7, "busy", &shape);
    side.run.exclusivity_json = r#"{"load1":1.1,"warnings":["process 99 (yes) uses 97% of a CPU"]}"#.into();
    for c in &mut side.cells {
        c.quality.outside_cpu_s = Some(0.05);
        match (c.spec.params.get("clients").and_then(|v| v.as_u64()), c.spec.rep) {
            (Some(1), _) => {
                c.quality.noisy = Some("other processes used 9.7 s of CPU".into());
                c.quality.outside_cpu_s = Some(9.7);
            }
            (Some(2), rep) => c.units = if rep == 1 { 119e9 } else { 198e9 + f64::from(rep) * 1e9 } * 10.0,
            (Some(4), 1) => {
                c.units = 1e13;
                c.quality.mark_below(racehorse_core::quality::THROUGHPUT, "window too short");
            }
            _ => {}
        }
    }
    side
}

/// The double-space separated fields of the first line naming `params`.
fn fields<'a>(text: &'a str, params: &str) -> Vec<&'a str> {
    let line = text.lines().find(|l| l.contains(params) && !l.starts_with('?')).unwrap_or("");
    line.split("  ").map(str::trim).filter(|f| !f.is_empty()).collect()
}

#[test]
fn show_marks_noisy_points_outliers_and_figures_below_resolution() {
    let text = show_text(&report(&run_with_caveats()), false);
    assert!(text.starts_with("run 7 'busy' — complete — "), "{text}");
    assert!(text.contains("the exclusivity check warned: process 99 (yes) uses 97% of a CPU"), "{text}");
    assert!(text.contains("median 0.5%, max 97.0% of one CPU over 9 windows"), "{text}");
    assert!(text.contains("\nw0 (throughput in MB/s, CPU per unit in ms/MB; medians over repetitions)\n"));
    assert!(
        text.contains("\nfixed: cpus=1\n#  parameters"),
        "fixed parameters once, above the table: {text}"
    );
    let noisy = fields(&text, "clients=1");
    assert_eq!(noisy[2], "3?", "the mark on n; the repetitions are listed under the table: {text}");
    assert!(text.contains("? noisy clients=1: rep #1: other processes used 9.7 s"), "{text}");
    assert_eq!(fields(&text, "clients=2").last(), Some(&"outlier #1"), "{text}");
    let below = fields(&text, "clients=4");
    assert_eq!(below[3..5], ["below res", "-"], "no spread of a figure below resolution: {text}");
    assert!(!text.contains("1000000") && !text.contains("1.00e"), "no absurd figure: {text}");
    assert!(text.contains("n? = noisy"), "the marks are explained: {text}");
}

#[test]
fn show_reps_marks_each_repetition() {
    let text = show_text(&report(&run_with_caveats()), true);
    assert!(text.contains("#1 ok noisy"), "{text}");
    assert!(text.contains("#1 ok outlier"), "{text}");
    let rep = text.lines().find(|l| l.contains("#1 ok") && l.contains("below res"));
    assert!(rep.is_some(), "the below-resolution repetition: {text}");
}

#[test]
fn quiet_runs_have_no_marks_legend_and_the_columns_stay() {
    let side = synthetic_side(1, "quiet", &Shape { workloads: 1, ..Shape::default() });
    let text = show_text(&report(&side), false);
    let head = text.lines().find(|l| l.starts_with("#  parameters")).expect("header");
    let names: Vec<&str> = head.split("  ").map(str::trim).filter(|f| !f.is_empty()).collect();
    assert_eq!(
        names,
        ["#", "parameters", "n", "tput MB/s", "cv %", "total", "kernel", "user", "wl cpu s", "harness %"],
        "one variant, no failure, no outlier: no variant, failed or note column"
    );
    assert!(!text.contains("n? = noisy") && !text.contains("? noisy"), "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())).count(), 8, "{text}");
}

/// Two variants interleaved by repetition; `fast` sets a knob, reports an extra and fails once.
fn two_variants() -> Side {
    let shape = Shape { workloads: 1, clients: vec![1, 2], cpus: vec![1], ..Shape::default() };
    let base = synthetic_side(2, "v", &shape);
    let fast = synthetic_side(2, "v", &Shape { speed: 2.0, ..shape });
    let mut cells = Vec::new();
    for (mut a, mut b) in base.cells.into_iter().zip(fast.cells) {
        a.workload_cpu.user_s = 1.0;
        a.workload_cpu.kernel_s = 0.5;
        a.harness_cpu_s = 0.01;
        b.spec.variant = "fast".into();
        b.settings.insert("sysctl vm.swappiness".into(), "10".into());
        b.extra.insert("latency_us".into(), f64::from(b.spec.rep));
        if b.spec.rep == 3 {
            b.extra.insert("latency_us".into(), 100.0);
            b.status = CellStatus::Failed;
            b.error = Some("engine exited with code 3".into());
        }
        cells.extend([a, b]);
    }
    Side { cells, ..base }
}

#[test]
fn the_model_keeps_run_order_repetitions_and_the_workloads_own_cpu() {
    let r = report(&two_variants());
    assert_eq!(r.tables.len(), 2, "one table per variant");
    let (base, fast) = (&r.tables[0], &r.tables[1]);
    assert_eq!((base.variant.as_str(), fast.variant.as_str()), ("default", "fast"));
    let firsts: Vec<usize> = base.rows.iter().chain(&fast.rows).map(|r| r.first_cell).collect();
    assert_eq!(firsts, [0, 2, 1, 3], "the position each point first ran at");
    let row = &fast.rows[0];
    assert_eq!((row.n, row.not_ok, row.reps.len()), (2, 1, 3));
    assert_eq!(row.reps[2].status, CellStatus::Failed);
    assert_eq!(row.extra("latency_us"), Some(1.5), "median of the ok repetitions only");
    assert_eq!((row.workload_cpu_s.map(|s| s.median), row.harness_cpu_pct), (Some(0.0), None));
    let b = &base.rows[0];
    assert_eq!(b.workload_cpu_s.map(|s| s.median), Some(1.5));
    assert!((b.harness_cpu_pct.expect("measured").median - 0.1).abs() < 1e-9, "0.01 s of a 10 s window");
    assert!(b.extras.is_empty());
    assert_eq!(r.variant_settings.len(), 1);
    assert_eq!(r.variant_settings[0].settings, [("sysctl vm.swappiness".to_string(), "10".to_string())]);
    assert_eq!(r.failures.len(), 2);
    assert_eq!(r.failures[0].label, "w0 clients=1 cpus=1 [fast] #3");
}

#[test]
fn show_puts_variants_side_by_side_in_run_order() {
    let text = show_text(&report(&two_variants()), true);
    assert!(text.contains("variant fast: sysctl vm.swappiness=10\n"), "{text}");
    let order: Vec<(&str, &str)> = text
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let f: Vec<&str> = l.split("  ").map(str::trim).filter(|f| !f.is_empty()).collect();
            (f[1], f[2])
        })
        .collect();
    assert_eq!(
        order,
        [("default", "clients=1"), ("fast", "clients=1"), ("default", "clients=2"), ("fast", "clients=2")]
    );
    assert_eq!(fields(&text, "2  fast").get(11), Some(&"1"), "failed column: {text}");
    assert!(text.contains("#3 engine exited with code 3"), "{text}");
    assert!(text.contains("failed w0 clients=2 cpus=1 [fast] #3: engine exited with code 3\n"), "{text}");
    let extras = text.lines().find(|l| l.starts_with("latency_us")).expect("extras row");
    let cols: Vec<&str> = extras.split_whitespace().collect();
    assert_eq!(cols, ["latency_us", "-", "1.500", "-", "1.500"], "{text}");
}

#[test]
fn show_lists_at_most_ten_failed_cells() {
    let mut side = synthetic_side(
        4,
        "f",
        &Shape { workloads: 1, clients: vec![1], cpus: vec![1], reps: 12, ..Shape::default() },
    );
    side.cells.iter_mut().for_each(|c| c.status = CellStatus::Interrupted);
    let r = report(&side);
    assert_eq!(r.failures.len(), 12);
    let text = show_text(&r, false);
    assert_eq!(text.lines().filter(|l| l.starts_with("interrupted w0")).count(), 10, "{text}");
    assert!(text.contains("fixed: clients=1 cpus=1\n#  n  tput MB/s"), "no parameters column: {text}");
    assert!(text.contains("harness %  failed\n"), "a failed column, no note column: {text}");
    assert_eq!(fields(&text, "1  0")[..4], ["1", "0", "-", "-"], "{text}");
}

/// A mix-like run: jobs counted per user, 1 to 3 users, two variants.
fn ramp_run() -> Side {
    let shape = Shape { workloads: 1, clients: vec![1, 2, 3], cpus: vec![2], ..Shape::default() };
    let mut cells = Vec::new();
    for (variant, speed) in [("default", 1.0), ("fast", 1.5)] {
        for mut c in synthetic_side(2, "mix", &Shape { speed, noise: 0.0, ..shape.clone() }).cells {
            let users = c.spec.params.remove("clients").expect("clients");
            c.spec.params.insert("users".into(), users.clone());
            c.spec.workload = "mix".into();
            c.spec.variant = variant.into();
            c.unit = WorkUnit::Jobs;
            // 1 and 2 users scale; 3 users fall back to the throughput of 1.
            let n = users.as_f64().expect("users");
            c.units = if n < 3.0 { 10.0 * n } else { 10.0 } * speed;
            c.extra.insert("jpm_per_user".into(), 60.0 / n);
            cells.push(c);
        }
    }
    Side { cells, ..synthetic_side(2, "mix", &shape) }
}

#[test]
fn ramps_find_the_peak_and_the_highest_load() {
    let r = report(&ramp_run());
    let ramp = &r.tables[0].ramps[0];
    assert_eq!(ramp.label, "cpus=2");
    assert_eq!(ramp.peak(), Some(RampPoint { users: 2, units_per_s: 2.0 }), "20 jobs in 10 s");
    assert_eq!((ramp.reached_users(), ramp.points.len()), (3, 3));
    let text = show_text(&r, false);
    assert!(text.contains("mix (throughput in jobs/min, CPU per unit in ms/job"), "{text}");
    assert!(
        text.contains("ramp [default] cpus=2: peak 120.0 jobs/min at 2 users (60.00 jobs/min per user); 3 loads up to 3 users\n"),
        "{text}"
    );
    assert!(text.contains("ramp [fast] cpus=2: peak 180.0 jobs/min"), "{text}");
    assert!(text.contains("jpm_per_user"), "{text}");
    let others = report(&run_with_caveats());
    assert!(others.tables.iter().all(|t| t.ramps.is_empty()), "ramps only where jobs are counted");
}

#[test]
fn extras_show_the_first_ten_rows_and_units_split_tables() {
    let shape =
        Shape { workloads: 1, clients: (1..=24).collect(), cpus: vec![1], reps: 2, ..Shape::default() };
    let mut side = synthetic_side(3, "micro", &shape);
    for c in &mut side.cells {
        let n = c.spec.params["clients"].as_u64().expect("clients");
        c.extra.insert("mb_per_s".into(), n as f64);
        if n % 2 == 0 {
            c.unit = WorkUnit::Ops;
        }
    }
    let text = show_text(&report(&side), false);
    assert!(text.contains("w0 (throughput in MB/s") && text.contains("w0 (throughput in ops/s"), "{text}");
    assert_eq!(text.matches("(figures of the first 10 rows)\n").count(), 2, "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("mb_per_s")).collect();
    assert_eq!(rows[0].split_whitespace().count(), 11, "{text}");
    assert!(rows[0].ends_with("19.00") && rows[1].ends_with("20.00"), "{text}");
}

/// `report RUN --format text` and `show RUN` go through one document: the report's text is
/// `show`'s under a title, with the areas, what CPU per unit is and the environment after it.
#[test]
fn the_reports_text_is_shows_under_a_title_with_areas_and_environment() {
    for side in [run_with_caveats(), two_variants(), ramp_run()] {
        let r = report(&side);
        let (show, text) = (show_text(&r, false), crate::run_text(&r));
        let title = format!("racehorse report: {}\n", r.side.name);
        let under = format!("{}\n", "=".repeat(title.chars().count() - 1));
        let body = text.strip_prefix(&title).and_then(|t| t.strip_prefix(&under)).expect("a title");
        assert_eq!(&body[..show.len()], show, "show's document first: {text}");
        let rest = &body[show.len()..];
        assert!(rest.starts_with("\nBy area\nMedians; a range spans"), "then the areas: {text}");
        assert!(rest.contains("\nCPU per unit of work is system-wide CPU"), "{text}");
        assert!(rest.contains("\nEnvironment\nkey "), "and the environment: {text}");
    }
}

#[test]
fn summed_phases_are_in_the_report_but_show_lists_what_ran() {
    let mut side =
        synthetic_side(5, "disk", &Shape { workloads: 1, clients: vec![1, 2], ..Shape::default() });
    for c in &mut side.cells {
        let phase = if c.spec.params.remove("cpus") == Some(Value::Int(1)) { "write" } else { "read" };
        c.spec.params.insert("phase".into(), Value::Str(phase.into()));
    }
    let r = report(&side);
    let summed: Vec<bool> = r.tables[0].rows.iter().map(|r| r.summed).collect();
    assert_eq!(summed, [false, false, true, false, false, true], "{:?}", r.tables[0].rows);
    assert!(crate::run_text(&r).contains("overall"));
    let report = crate::run_text(&r);
    assert!(report.contains("overall: the phases of each repetition summed"), "{report}");
    assert!(report.contains("5  clients=1 phase=overall  3"), "numbered after the measured points: {report}");
    let text = show_text(&r, false);
    assert!(!text.contains("overall"), "{text}");
    let phases: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert_eq!(phases, ["phase=write", "phase=read", "phase=write", "phase=read"], "run order: {text}");
}

#[test]
fn profiled_points_list_their_images_and_symbols() {
    let mut side = synthetic_side(
        6,
        "p",
        &Shape { workloads: 1, clients: vec![1, 2], cpus: vec![1], ..Shape::default() },
    );
    let entry = |image: &str, symbol: Option<&str>, pct: f64| ProfileEntry {
        image: image.into(),
        symbol: symbol.map(str::to_string),
        share_pct: pct,
    };
    for c in side.cells.iter_mut().filter(|c| c.spec.params["clients"] == Value::Int(2)) {
        c.profile = Some(Profile {
            event: "cpu-clock".into(),
            samples: 100,
            images: vec![entry("[kernel.kallsyms]", None, 70.0), entry("app", None, 30.0)],
            symbols: vec![entry("[kernel.kallsyms]", Some("copy_user"), 35.0)],
            ..Profile::default()
        });
    }
    let r = report(&side);
    assert_eq!(r.tables[0].rows[1].profile.as_ref().map(|p| p.windows), Some(3));
    let text = show_text(&r, false);
    assert!(text.contains("profile of #2: 300 samples of cpu-clock in 3 window(s)"), "{text}");
    assert!(text.contains("copy_user  ([kernel.kallsyms])") && !text.contains("profile of #1"), "{text}");
}

#[test]
fn show_escapes_control_characters_in_labels_and_errors() {
    let mut side = two_variants();
    side.run.label = "evil\x1b[2J\nlabel".into();
    for c in &mut side.cells {
        c.spec.variant = c.spec.variant.replace("fast", "fa\x07st");
        if let Some(e) = &mut c.error {
            *e = "line one\nfake row\x1b[31m".into();
        }
    }
    let text = show_text(&report(&side), true);
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(text.starts_with("run 2 'evil\\x1b[2J\\nlabel' — "), "{text}");
    assert!(text.contains("fa\\x07st") && text.contains("line one\\nfake row\\x1b[31m"), "{text}");
}

#[test]
fn show_lists_latency_percentiles_per_point_and_operation() {
    let mut side = synthetic_side(
        3,
        "lat",
        &Shape { workloads: 1, clients: vec![1, 2], cpus: vec![1], ..Shape::default() },
    );
    for c in &mut side.cells {
        let mut h = racehorse_core::LatencyHistogram::new();
        (0..100).for_each(|i| h.record(if i < 99 { 10_000 } else { 2_000_000 }));
        c.latencies = vec![racehorse_core::OpStats { op: "read".into(), latency: h }];
    }
    let r = report(&side);
    let plain = crate::show_text_with(&r, Default::default());
    assert!(plain.contains("latency percentiles of 1 operation(s) are stored: show --latency"), "{plain}");
    let opts = crate::ShowOptions { reps: false, latency: true };
    let text = crate::show_text_with(&r, opts);
    assert!(text.contains("#  operation  count     p50     p90     p99     max"), "{text}");
    assert!(text.contains("1  read         300  10.0µs  10.0µs  10.0µs  2.00ms\n2  read"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&crate::run::json::show_json(&r)).expect("json");
    assert_eq!(json["format"], "racehorse-show");
    let point = &json["tables"][0]["points"][0];
    assert_eq!(point["params"], serde_json::json!({"clients": 1}), "varying parameters only");
    assert_eq!(json["tables"][0]["fixed"], serde_json::json!({"cpus": 1}));
    assert_eq!(point["latencies"][0]["count"], 300);
    assert_eq!(point["n"], 3);
    assert!(point["throughput_per_s"]["median"].as_f64().is_some_and(|t| t > 4e7), "{point}");
}
