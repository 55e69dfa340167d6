//! Tests of `compare --by`: slicing one run or several along a parameter, the base value,
//! the errors, and the hint when two runs share no point.

use super::*;
use crate::compare::comparison::{compare, CompareError};
use crate::compare::metric::CompareOptions;
use crate::synth::{synthetic_side, Shape};
use racehorse_core::Value;

/// A synthetic run whose cells carry `name` = one of `values`, by repetition block: the
/// points of each value are the same, and the later values are `speed` times faster.
fn run_with(id: i64, name: &str, values: &[&str], speed: f64) -> Side {
    let mut cells = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let shape = Shape { speed: speed.powi(i as i32), seed: 7 + i as u64, ..Shape::default() };
        for mut c in synthetic_side(id, "s", &shape).cells {
            c.spec.params.insert(name.into(), Value::Str((*v).into()));
            cells.push(c);
        }
    }
    Side { cells, ..synthetic_side(id, "s", &Shape::default()) }
}

fn area(_: &str) -> String {
    "Area".into()
}

#[test]
fn one_run_splits_along_a_parameter_and_matches_the_rest() {
    let side = run_with(7, "ipc", &["none", "mq"], 1.3);
    let by = By::parse("ipc").expect("parse");
    let (base, news) = split_run(&side, &by).expect("split");
    assert_eq!(base.scope.by, Some(("ipc".into(), "none".into())), "the first value that ran is the base");
    assert_eq!(news.len(), 1);
    assert_eq!(news[0].name(), "run 7 's' ipc=mq");
    assert!(base.cells.iter().all(|c| !c.spec.params.contains_key("ipc")), "the dimension is taken out");
    let c = compare(&base, &news, &CompareOptions::default(), &area).expect("matched on the rest");
    assert_eq!(c.verdicts[0].points, 16, "2 workloads x 4 clients x 2 cpus");
    let gain = c.tables[0].rows[0].sides[0].as_ref().and_then(|s| s.metrics[0].gain_pct).expect("gain");
    assert!((gain - 30.0).abs() < 3.0, "mq is 30% faster: {gain}");
    assert_eq!(c.env_diff[0][0].key, "by ipc", "the env diff names the dimension first");
    assert_eq!((c.env_diff[0][0].base.as_str(), c.env_diff[0][0].new.as_str()), ("none", "mq"));
}

#[test]
fn a_chosen_base_value_is_the_base() {
    let side = run_with(7, "ipc", &["none", "mq", "pipe"], 1.1);
    let (base, news) = split_run(&side, &By::parse("ipc=mq").expect("parse")).expect("split");
    assert_eq!(base.scope.by.as_ref().map(|b| b.1.as_str()), Some("mq"));
    let others: Vec<_> = news.iter().filter_map(|n| n.scope.by.as_ref().map(|b| b.1.clone())).collect();
    assert_eq!(others, vec!["none".to_string(), "pipe".to_string()], "the others in the order they ran");
}

#[test]
fn two_runs_differing_in_one_option_match_along_it() {
    let o0 = run_with(1, "cflags", &["-O0"], 1.0);
    let o3 = Side { cells: run_with(2, "cflags", &["-O3 -march=native"], 1.0).cells, ..o0.clone() };
    let o3 = Side { run: crate::synth::run_info(2, "o3"), ..o3 };
    let err =
        compare(&o0, std::slice::from_ref(&o3), &CompareOptions::default(), &area).expect_err("no match");
    let CompareError::NothingInCommon { hint, .. } = &err else { panic!("{err}") };
    assert!(hint.contains("--by cflags") && hint.contains("'-O3 -march=native'"), "{hint}");
    assert!(err.to_string().contains("They differ in cflags (base '-O0', new '-O3 -march=native')"), "{err}");
    let (base, news) = slice_sides(&o0, &[o3], &By::parse("cflags").expect("parse")).expect("slice");
    assert_eq!(news[0].name(), "run 2 'o3' cflags=-O3 -march=native");
    let c = compare(&base, &news, &CompareOptions::default(), &area).expect("matched along cflags");
    assert_eq!(c.verdicts[0].points, 16);
}

#[test]
fn bad_dimensions_are_explained() {
    let side = run_with(7, "ipc", &["none", "mq"], 1.0);
    let e = split_run(&side, &By::parse("cflags").expect("parse")).expect_err("no such parameter");
    assert!(
        e.to_string().contains("no parameter 'cflags'; its parameters are: clients, cpus, ipc, workload"),
        "{e}"
    );
    let e = split_run(&side, &By::parse("ipc=shm").expect("parse")).expect_err("no such value");
    assert!(e.to_string().contains("no cells with ipc=shm; its values of ipc are: none, mq"), "{e}");
    let e =
        slice_sides(&side, std::slice::from_ref(&side), &By::parse("ipc").expect("parse")).expect_err("two");
    assert!(e.to_string().contains("--by ipc=VALUE"), "{e}");
    let one = run_with(8, "ipc", &["none"], 1.0);
    let e = split_run(&one, &By::parse("ipc").expect("parse")).expect_err("one value");
    assert!(e.to_string().contains("only one value of ipc (none)"), "{e}");
    assert!(By::parse("=x").is_err());
    assert_eq!(By::parse("variant"), Err(DimensionError::Variant), "variants have their own syntax");
    assert_eq!(
        By::parse("cflags=-O3 -march=native"),
        Ok(By { name: "cflags".into(), base: Some("-O3 -march=native".into()) })
    );
}

#[test]
fn the_same_run_on_both_sides_leaves_out_the_base_slice() {
    let side = run_with(7, "ipc", &["none", "mq"], 1.0);
    let (base, news) =
        slice_sides(&side, std::slice::from_ref(&side), &By::parse("ipc=none").expect("parse"))
            .expect("slice");
    assert_eq!(base.scope.by.as_ref().map(|b| b.1.as_str()), Some("none"));
    assert_eq!(news.len(), 1, "only mq: none against itself is left out");
}

/// A run of one synthetic workload per engine name, the later engines `speed` times faster,
/// every cell with the same parameters.
fn engines(id: i64, names: &[&str], speed: f64) -> Side {
    let mut cells = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let shape =
            Shape { workloads: 1, speed: speed.powi(i as i32), seed: 11 + i as u64, ..Shape::default() };
        for mut c in synthetic_side(id, "s", &shape).cells {
            c.spec.workload = (*name).into();
            cells.push(c);
        }
    }
    Side { cells, ..synthetic_side(id, "s", &Shape::default()) }
}

#[test]
fn two_engines_of_one_run_compare_point_for_point_along_workload() {
    let side = engines(9, &["diskio", "fio"], 1.25);
    let (base, news) = split_run(&side, &By::parse("workload=fio").expect("parse")).expect("split");
    assert_eq!(base.scope.by, Some(("workload".into(), "fio".into())), "the chosen engine is the base");
    assert_eq!(news.len(), 1);
    assert_eq!(news[0].name(), "run 9 's' workload=diskio");
    let names: BTreeSet<&str> =
        base.cells.iter().chain(&news[0].cells).map(|c| c.spec.workload.as_str()).collect();
    assert_eq!(names, BTreeSet::from(["fio/diskio"]), "both slices' cells carry one common name");
    assert!(base.cells.iter().all(|c| !c.spec.params.contains_key("workload")), "no parameter is added");
    let c = compare(&base, &news, &CompareOptions::default(), &area).expect("matched on the parameters");
    assert_eq!(c.verdicts[0].points, 8, "4 clients x 2 cpus");
    let gain = c.tables[0].rows[0].sides[0].as_ref().and_then(|s| s.metrics[0].gain_pct).expect("gain");
    assert!((gain + 20.0).abs() < 3.0, "diskio runs at 1/1.25 of fio's throughput: {gain}");
    let e = split_run(&side, &By::parse("workload=dbench").expect("parse")).expect_err("no such engine");
    assert!(
        e.to_string().contains("no cells with workload=dbench; its values of workload are: diskio, fio"),
        "{e}"
    );
}

#[test]
fn two_runs_of_different_engines_compare_along_workload() {
    let d = engines(1, &["diskio"], 1.0);
    let f = Side { cells: engines(2, &["fio"], 1.0).cells, run: crate::synth::run_info(2, "f"), ..d.clone() };
    let err = compare(&d, std::slice::from_ref(&f), &CompareOptions::default(), &area).expect_err("no match");
    let CompareError::NothingInCommon { hint, .. } = &err else { panic!("{err}") };
    assert!(hint.contains("workload (base 'diskio', new 'fio')") && hint.contains("--by workload"), "{hint}");
    let (base, news) = slice_sides(&d, &[f], &By::parse("workload").expect("parse")).expect("slice");
    assert_eq!(news.len(), 1);
    assert!(base.cells.iter().chain(&news[0].cells).all(|c| c.spec.workload == "diskio/fio"));
    let c = compare(&base, &news, &CompareOptions::default(), &area).expect("matched");
    assert_eq!(c.verdicts[0].points, 8);
}
