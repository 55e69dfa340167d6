//! Snapshot tests of the human renderers: a fixed synthetic comparison and run report
//! rendered as text and markdown must match the files in `tests/snapshots/`. After an
//! intended change, regenerate with `UPDATE_SNAPSHOTS=1 cargo test -p racehorse-report`
//! and review the diff.

use racehorse_report::synth::{synthetic_side, Shape};
use racehorse_report::{compare, compare_markdown, compare_text, run_report, run_text, CompareOptions, View};
use std::path::PathBuf;

fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing; run with UPDATE_SNAPSHOTS=1", path.display()));
    if expected != actual {
        let first = expected.lines().zip(actual.lines()).position(|(a, b)| a != b);
        panic!(
            "{name} differs from its snapshot (first differing line {first:?}); \
             UPDATE_SNAPSHOTS=1 regenerates it.\n--- actual ---\n{actual}"
        );
    }
}

fn area(w: &str) -> String {
    if w == "w0" {
        "File server".into()
    } else {
        "Kernel functions".into()
    }
}

fn comparison() -> racehorse_report::Comparison {
    let base = synthetic_side(1, "base", &Shape { clients: vec![1, 4, 8], ..Shape::default() });
    let mut new = synthetic_side(
        2,
        "new",
        &Shape { clients: vec![1, 4, 8], speed: 1.3, cpu_cost: 0.75, seed: 5, ..Shape::default() },
    );
    new.cells[0].status = racehorse_core::CellStatus::Failed;
    compare(&base, &[new], &CompareOptions::default(), &area).expect("compare")
}

#[test]
fn compare_text_snapshot() {
    check("compare.txt", &compare_text(&comparison(), View::default()));
}

#[test]
fn compare_text_absolute_ci_snapshot() {
    check("compare-absolute-ci.txt", &compare_text(&comparison(), View { absolute: true, ci: true }));
}

#[test]
fn compare_markdown_snapshot() {
    check("compare.md", &compare_markdown(&comparison(), View::default()));
}

#[test]
fn run_text_snapshot() {
    let side = synthetic_side(3, "one", &Shape { clients: vec![1, 4], ..Shape::default() });
    check("run.txt", &run_text(&run_report(&side, 0.05, &area)));
}

/// One noisy point (a busy neighbour in the new run), one figure below resolution and one
/// cold first repetition: the marks, legends and counts of the issue "Verdicts you can trust".
fn caveats() -> racehorse_report::Comparison {
    let shape = Shape { workloads: 1, clients: vec![1, 4, 8], cpus: vec![1, 2], ..Shape::default() };
    let base = synthetic_side(1, "base", &shape);
    let mut new = synthetic_side(2, "new", &Shape { speed: 1.3, seed: 5, ..shape });
    new.run.exclusivity_json = r#"{"warnings":["process 4242 (stress) uses 99% of a CPU"]}"#.into();
    for c in &mut new.cells {
        c.quality.outside_cpu_s = Some(0.02);
        let clients = c.spec.params.get("clients").and_then(|v| v.as_u64());
        let cpus = c.spec.params.get("cpus").and_then(|v| v.as_u64());
        match (clients, cpus, c.spec.rep) {
            (Some(4), Some(1), _) => {
                c.quality.outside_cpu_s = Some(9.6);
                c.quality.noisy = Some("other processes used 9.6 s of CPU".into());
            }
            (Some(8), Some(1), 2) => c.quality.mark_below(racehorse_core::quality::CPU, "3 ticks"),
            (Some(8), Some(2), 1) => c.units *= 0.6,
            _ => {}
        }
    }
    compare(&base, &[new], &CompareOptions::default(), &area).expect("compare")
}

#[test]
fn compare_caveats_text_snapshot() {
    check("compare-caveats.txt", &compare_text(&caveats(), View::default()));
}
