//! Tests of the workfile parser and the job multiset.

use super::*;
use proptest::prelude::*;

fn name(i: usize) -> &'static str {
    tasks::TASKS[i].0
}

#[test]
fn builtins_parse_with_re_aims_hit_totals() {
    let totals: Vec<(&str, u64)> =
        BUILTIN.iter().map(|(n, t)| (*n, Workfile::parse(t).unwrap().total_hits())).collect();
    assert_eq!(totals, [("fserver", 595), ("new_db", 570), ("compute", 820)]);
}

#[test]
fn good_file_with_comments_sizes_and_repeats() {
    let wf =
        Workfile::parse("# a mix\n\n10 add_int  # ints\nFILESIZE: 20k\n5 sieve\nPOOLSIZE 2m\n5 add_int\n")
            .unwrap();
    let named: Vec<(&str, u64)> = wf.entries.iter().map(|&(t, h)| (name(t), h)).collect();
    assert_eq!(named, [("add_int", 15), ("sieve", 5)]);
    assert_eq!((wf.filesize_bytes, wf.poolsize_bytes), (Some(20 << 10), Some(2 << 20)));
}

#[test]
fn malformed_lines_name_line_and_reason() {
    let e = Workfile::parse("10 add_int\nten sieve\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.reason.contains("'ten' is not a number of hits"), "{e}");
    let e = Workfile::parse("# c\n10\n").unwrap_err();
    assert_eq!((e.line, e.to_string().contains("names no task")), (2, true), "{e}");
    let e = Workfile::parse("1 add_int extra\n").unwrap_err();
    assert!(e.to_string().starts_with("line 1: ") && e.reason.contains("more than two words"), "{e}");
    let e = Workfile::parse("FILESIZE lots\n").unwrap_err();
    assert!(e.reason.contains("'lots' is not a size"), "{e}");
    let e = Workfile::parse("# nothing\n0 add_int\n").unwrap_err();
    assert!(e.reason.contains("no task with hits"), "{e}");
}

#[test]
fn unknown_task_lists_the_valid_ones() {
    let e = Workfile::parse("1 add_int\n3 shell_rtns_1\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.reason.contains("unknown task 'shell_rtns_1'"), "{e}");
    assert!(
        e.reason.contains("valid tasks: add_int, add_long") && e.reason.contains("sync_disk_update"),
        "{e}"
    );
}

#[test]
fn load_reports_the_file_and_suggests_builtins() {
    let e = load("/no/such/workfile").unwrap_err();
    assert!(e.contains("/no/such/workfile") && e.contains("fserver, new_db, compute"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("w");
    std::fs::write(&p, "1 add_int\n2 nosuch\n").unwrap();
    let e = load(p.to_str().unwrap()).unwrap_err();
    assert!(e.contains("line 2: unknown task 'nosuch'"), "{e}");
}

#[test]
fn job_counts_round_half_up_with_at_least_one() {
    // 100 jobs over 595 hits: 20 hits = 3.36 → 3, 30 = 5.04 → 5, 40 = 6.72 → 7, 10 = 1.68 → 2,
    // 5 = 0.84 → 1 (re-aim's workfile.fserver).
    let wf = Workfile::parse(FSERVER).unwrap();
    let counts = wf.job_counts(100);
    let of = |n: &str| counts.iter().find(|c| name(c.0) == n).unwrap().1;
    assert_eq!(
        (of("add_int"), of("disk_rd"), of("udp_test"), of("div_int"), of("sync_disk_cp")),
        (3, 5, 7, 2, 1)
    );
    assert_eq!(counts.iter().map(|c| c.1).sum::<u64>(), 101, "re-aim recounts the jobs per user");
    // A task far below half a job still runs once; a share of exactly .5 rounds up.
    let wf = Workfile::parse("1 add_int\n999 sieve\n").unwrap();
    assert_eq!(
        wf.job_counts(10),
        [(tasks::index_of("add_int").unwrap(), 1), (tasks::index_of("sieve").unwrap(), 10)]
    );
    let wf = Workfile::parse("1 add_int\n3 sieve\n").unwrap();
    assert_eq!(wf.job_counts(2).iter().map(|c| c.1).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn job_list_is_the_multiset_in_a_seeded_order() {
    let counts = Workfile::parse(COMPUTE).unwrap().job_counts(100);
    let a = job_list(&counts, 7);
    let mut sorted = a.clone();
    sorted.sort_unstable();
    let mut want: Vec<usize> = counts.iter().flat_map(|&(t, n)| std::iter::repeat_n(t, n as usize)).collect();
    want.sort_unstable();
    assert_eq!(sorted, want);
    assert_eq!(a, job_list(&counts, 7));
    assert_ne!(a, job_list(&counts, 8));
}

proptest! {
    #[test]
    fn parser_never_panics_and_errors_point_into_the_text(text in "[ -~\n]{0,200}") {
        if let Err(e) = Workfile::parse(&text) {
            prop_assert!(e.line >= 1 && e.line <= text.lines().count().max(1));
        }
    }

    #[test]
    fn every_task_with_hits_runs_at_least_once(hits in proptest::collection::vec(1u64..1000, 1..20), jobs in 1u64..500) {
        let text: String = hits.iter().enumerate().map(|(i, h)| format!("{h} {}\n", tasks::TASKS[i].0)).collect();
        let wf = Workfile::parse(&text).unwrap();
        let counts = wf.job_counts(jobs);
        prop_assert_eq!(counts.len(), hits.len());
        let total: u64 = hits.iter().sum();
        for (c, h) in counts.iter().zip(&hits) {
            let share = *h as f64 / total as f64 * jobs as f64;
            prop_assert!(c.1 >= 1 && (c.1 as f64 - share).abs() <= 1.0, "{} vs {}", c.1, share);
        }
    }
}
