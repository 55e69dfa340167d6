//! Tests of the compute engine: the case table and suites, the geometric mean, cells that run
//! and report time and score, the C kernels reproducing every Rust checksum (with gcc), and
//! impossible settings refused.

use super::*;
use crate::testutil::cell_ctx;
use crate::{Control, RealClock, Recorder, Totals};
use racehorse_core::Value;
use std::sync::Arc;
use std::time::Duration;

fn ctx(dir: &std::path::Path, opts: &[(&str, Value)]) -> CellContext {
    cell_ctx(&Compute, dir, 1, opts)
}

fn run(c: &CellContext) -> Result<Totals, EngineError> {
    let mut cell = Compute.prepare(c)?;
    let ctl = Control::simple(Duration::ZERO, Duration::from_secs(1), Arc::new(RealClock::default()));
    let rec = Recorder::new();
    cell.run(&ctl, &rec)?;
    Ok(rec.totals())
}

fn s(v: &str) -> Value {
    Value::Str(v.into())
}

#[test]
fn suites_have_the_issue_sizes_and_every_case_is_a_choice() {
    assert_eq!(cases_of("int").len(), 12);
    assert_eq!(cases_of("fp").len(), 6);
    assert_eq!(cases_of("all").len(), 19);
    for c in CASES {
        assert!(CASE_CHOICES.contains(&c.name), "{}", c.name);
        assert_eq!(cases_of(c.name).len(), 1);
        assert!(c.standard_reps >= 5 * c.quick_reps, "{}: standard is several times quick", c.name);
        assert!(c.reference_s.iter().all(|r| *r > 0.0));
    }
    assert_eq!(CASE_CHOICES.len(), CASES.len() + 3);
}

#[test]
fn geomean_of_scores() {
    assert_eq!(geomean(&[]), None);
    assert_eq!(geomean(&[1.0, 0.0]), None);
    assert!((geomean(&[1.0, 4.0]).unwrap() - 2.0).abs() < 1e-12);
    assert!((geomean(&[2.0, 8.0, 4.0]).unwrap() - 4.0).abs() < 1e-12);
}

#[test]
fn a_case_cell_reports_time_and_a_suite_cell_its_geomean() {
    let dir = tempfile::tempdir().unwrap();
    let t = run(&ctx(dir.path(), &[("case", s("nqueens"))])).unwrap();
    let secs = t.extra["time_s"];
    assert!(secs > 0.0 && t.extra["score"] > 0.0, "{:?}", t.extra);
    assert!((t.extra["score"] * secs - CASES[8].reference_s[0]).abs() < 1e-9, "score = reference / time");
    assert_eq!(t.extra["c_kernel"], 0.0);
    assert!(t.units > 0.0);
    // A suite cell of one repetition each: per-case times, no score (reps set), so no geomean.
    let t = run(&ctx(dir.path(), &[("case", s("int")), ("reps", Value::Int(1))])).unwrap();
    for c in cases_of("int") {
        assert!(t.extra[&format!("time_s_{}", c.name)] > 0.0, "{}", c.name);
    }
    assert!(!t.extra.contains_key("score_geomean"));
}

#[test]
fn telco_runs_as_a_cell() {
    let dir = tempfile::tempdir().unwrap();
    let t = run(&ctx(dir.path(), &[("case", s("telco"))])).unwrap();
    assert!(t.extra["time_s"] > 0.0);
}

#[test]
fn the_c_kernels_reproduce_every_rust_checksum() {
    let Some(gcc) = c_build::find_cc("gcc") else {
        eprintln!("SKIPPED: gcc is not installed, so the C kernels cannot be built here (CI has gcc)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for flags in ["-O2", "-O3 -march=native"] {
        let c = ctx(
            dir.path(),
            &[
                ("case", s("int")),
                ("reps", Value::Int(2)),
                ("cc", s(gcc.to_str().unwrap())),
                ("cflags", s(flags)),
            ],
        );
        let t = run(&c).unwrap_or_else(|e| panic!("{flags}: {e}"));
        assert!(t.extra["time_s_sort"] > 0.0, "{flags}");
    }
}

#[test]
fn the_floating_point_cases_run_in_c_with_a_compiler() {
    let Some(gcc) = c_build::find_cc("gcc") else {
        eprintln!("SKIPPED: gcc is not installed, so the C kernels cannot be built here (CI has gcc)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path(), &[("case", s("fp")), ("reps", Value::Int(1)), ("cc", s(gcc.to_str().unwrap()))]);
    let t = run(&c).unwrap();
    for case in cases_of("fp") {
        assert_eq!(t.extra[&format!("c_kernel_{}", case.name)], 1.0, "{}: {:?}", case.name, t.extra);
    }
    assert!(t.settings["cc version"].starts_with("gcc"), "{:?}", t.settings);
}

#[test]
fn bad_compilers_and_flags_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let e =
        Compute.validate(&ctx(dir.path(), &[("case", s("sort")), ("cc", s("/nonexistent/cc"))])).unwrap_err();
    assert!(matches!(e, EngineError::Usage(_)) && e.to_string().contains("/nonexistent/cc"), "{e}");
    if let Some(gcc) = c_build::find_cc("gcc") {
        let c = ctx(
            dir.path(),
            &[("case", s("sort")), ("cc", s(gcc.to_str().unwrap())), ("cflags", s("-fno-such-flag"))],
        );
        let e = Compute.prepare(&c).err().expect("a bad flag fails");
        assert!(e.to_string().contains("failed to compile"), "{e}");
    }
}

#[test]
fn a_fresh_process_job_runs_its_case_and_refuses_an_unknown_one() {
    let job = child::Job { case: "nqueens".into(), reps: 1, telco: None };
    let t = child::run_job(&job).expect("nqueens runs");
    assert!(t.cpu_s > 0.0 && t.wall_s >= t.cpu_s * 0.5, "{t:?}");
    let bad = child::Job { case: "nosuch".into(), reps: 1, telco: None };
    assert_eq!(child::run_job(&bad).expect_err("unknown"), "compute has no case 'nosuch'");
    let unprepared = child::Job { case: "telco".into(), reps: 1, telco: None };
    assert_eq!(child::run_job(&unprepared).expect_err("no input"), "telco was not prepared");
}

#[test]
fn telco_gives_the_same_bill_in_its_three_arithmetic_forms() {
    let Some(gcc) = c_build::find_cc("gcc") else {
        eprintln!("SKIPPED: gcc is not installed, so telco's C forms cannot be built here (CI has gcc)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for arith in ARITH_CHOICES {
        let c = ctx(
            dir.path(),
            &[
                ("case", s("telco")),
                ("reps", Value::Int(1)),
                ("arith", s(arith)),
                ("cc", s(gcc.to_str().unwrap())),
            ],
        );
        // Each run checks every pass's sums against the integer bill and the output's digest.
        let t = run(&c).unwrap_or_else(|e| panic!("{arith}: {e}"));
        let in_c = *arith != "rust-decimal";
        assert_eq!(t.extra["c_kernel"], f64::from(u8::from(in_c)), "{arith}");
        assert!(t.extra["batch_s"] > 0.0 && t.extra["cpu_ns_per_call"] > 0.0, "{arith}: {:?}", t.extra);
        assert_eq!(t.settings.contains_key("cc version"), in_c, "{arith}: {:?}", t.settings);
        if in_c {
            assert!(t.settings["cc version"].starts_with("gcc"), "{:?}", t.settings);
            assert_eq!(t.settings["cc"], gcc.display().to_string());
        }
    }
}

#[test]
fn every_arith_choice_names_its_form() {
    for choice in ARITH_CHOICES {
        assert_eq!(Arith::of(choice).name(), *choice);
    }
    assert_eq!(Arith::of("c-double").c_case(), Some("telco-double"));
    assert_eq!(Arith::of("rust-decimal").c_case(), None);
}

#[test]
fn telco_c_forms_need_a_compiler_that_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let e =
        Compute.validate(&ctx(dir.path(), &[("case", s("telco")), ("arith", s("c-double"))])).unwrap_err();
    assert!(matches!(e, EngineError::Usage(_)) && e.to_string().contains("--cc gcc"), "{e}");
    // Without telco in the cell the form does not matter.
    Compute.validate(&ctx(dir.path(), &[("case", s("sort")), ("arith", s("c-double"))])).unwrap();
    let Some(gcc) = c_build::find_cc("gcc") else {
        eprintln!("SKIPPED: gcc is not installed, so the _Decimal64 refusal cannot be shown (CI has gcc)");
        return;
    };
    let c = ctx(
        dir.path(),
        &[
            ("case", s("telco")),
            ("arith", s("c-decimal64")),
            ("cc", s(gcc.to_str().unwrap())),
            ("cflags", s("-std=c89 -pedantic-errors")),
        ],
    );
    let e = Compute.validate(&c).unwrap_err();
    assert!(matches!(e, EngineError::Usage(_)) && e.to_string().contains("_Decimal64"), "{e}");
}

#[test]
fn a_cell_names_a_compiler_only_when_a_c_kernel_runs() {
    let params = |pairs: &[(&str, &str)]| -> racehorse_core::Params {
        pairs.iter().map(|(k, v)| (k.to_string(), s(v))).collect()
    };
    let kept = |p: &[(&str, &str)]| {
        let mut p = params(p);
        Compute.drop_unused(&mut p);
        let mut keys: Vec<String> = p.into_keys().collect();
        keys.sort();
        keys.join(",")
    };
    let base = [("arith", "rust-decimal"), ("cc", "gcc"), ("cflags", "-O2")];
    let with = |case: &'static str, arith: &'static str| {
        kept(&[("case", case), ("cc", "gcc"), ("cflags", "-O2"), ("arith", arith)])
    };
    assert_eq!(kept(&[&[("case", "telco")][..], &base[..]].concat()), "arith,case", "telco in Rust");
    assert_eq!(with("telco", "c-double"), "arith,case,cc,cflags");
    assert_eq!(with("sort", "rust-decimal"), "case,cc,cflags", "no telco: no arith");
    assert_eq!(with("all", "rust-decimal"), "arith,case,cc,cflags", "the integer cases run in C");
    assert_eq!(kept(&[("case", "int"), ("cc", ""), ("cflags", "-O2")]), "case", "no compiler given");
}
